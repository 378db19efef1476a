"""Memory planning: the intermediate buffers of a launch plan share memory by lifetime.

    plan = MemoryPlan(num_inputs, allocs, launch_slots, results)
    plan.peak_bytes                      (bytes of all intermediates, bytes after planning)
    plan.host_buffers(arena)             one numpy array per alloc slot (CPU runtimes)
    plan.device_buffers(pool)            one device buffer per alloc slot (GPU runtimes)

A slot of `@main` is an input, an intermediate or a result. Inputs belong to the caller and
results escape to it, so both keep memory of their own. An intermediate lives from the first
launch that touches it to the last one (inclusive: a kernel that reads `a` and writes `b` needs
both at once), so two intermediates whose lifetimes do not overlap may occupy the same bytes.
Launches run in program order on every runtime (CPU calls are synchronous, CUDA and WebGPU
queue them in order), which is what makes reuse safe.

* CPU: every intermediate gets an offset in one arena (`plan_offsets`: greedy best fit,
  largest first, each at the lowest `ALIGNMENT`-aligned offset where it overlaps no buffer
  placed before it with an overlapping lifetime). A run takes the arena from the device's
  pool (`pool.py`: one array, not one per buffer), views it and gives it back when it ends,
  so the next run of the program reuses it; two runs at once get two arenas.
* GPU: a runtime hands out whole buffers, not offsets into one, so intermediates are grouped
  instead (`plan_groups`): an intermediate reuses the buffer of a group whose members are all
  dead and whose elements have its byte width, best fit first; the group's buffer is as large
  as its largest member. Kernels only see the elements they index, so a larger buffer is fine.

PG_MEMORY_PLAN=0 turns planning off (every slot gets its own buffer), for comparisons.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from picograd import flags
from picograd.runtimes.pool import BufferPool

ALIGNMENT = 64  # bytes: a cache line, and more than any vector load needs
_NEVER = -1  # the lifetime of an intermediate that no launch touches


def planning_enabled() -> bool:
    return flags.memory_plan_enabled()


def _align(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


@dataclass(frozen=True)
class Lifetime:
    """The launches (indices, inclusive) between which a buffer must hold its value."""

    first: int
    last: int

    def overlaps(self, other: Lifetime) -> bool:
        return self.first <= other.last and other.first <= self.last


def lifetimes(slots: Sequence[int], launch_slots: Sequence[Sequence[int]]
              ) -> dict[int, Lifetime]:
    """The lifetime of each of `slots` in a launch sequence (argument slots per launch)."""
    wanted = set(slots)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, args in enumerate(launch_slots):
        for s in args:
            if s in wanted:
                first.setdefault(s, i)
                last[s] = i
    return {s: Lifetime(first.get(s, _NEVER), last.get(s, _NEVER)) for s in slots}


def plan_offsets(sizes: dict[int, int], lives: dict[int, Lifetime]) -> tuple[dict[int, int], int]:
    """Arena offsets (bytes, `ALIGNMENT`-aligned) for buffers of `sizes` bytes, and the arena
    size: buffers with overlapping lifetimes never overlap in memory."""
    order = sorted(sizes, key=lambda s: (-sizes[s], lives[s].first, s))
    # the placed buffers as columns (numpy: a long sequence's plan places thousands of
    # buffers, and each placement looks at every one placed before it)
    n = len(order)
    firsts, lasts = np.empty(n, np.int64), np.empty(n, np.int64)
    starts, ends = np.empty(n, np.int64), np.empty(n, np.int64)
    offsets: dict[int, int] = {}
    arena = 0
    for k, s in enumerate(order):
        size, life = _align(sizes[s]), lives[s]
        # Lifetime.overlaps, for every placed buffer at once
        hit = (firsts[:k] <= life.last) & (lasts[:k] >= life.first)
        o_busy, e_busy = starts[:k][hit], ends[:k][hit]
        by_start = np.lexsort((e_busy, o_busy))
        offset = 0
        for o, e in zip(o_busy[by_start].tolist(), e_busy[by_start].tolist(), strict=True):
            if offset + size <= o:  # the lowest gap that fits: busy ranges sorted by start
                break
            offset = max(offset, e)
        offsets[s] = offset
        firsts[k], lasts[k], starts[k], ends[k] = life.first, life.last, offset, offset + size
        arena = max(arena, offset + size)
    return offsets, arena


@dataclass
class _Group:
    itemsize: int
    size: int  # elements: the largest member
    dtype: np.dtype  # of the largest member (what the buffer is allocated as)
    last: int  # the last launch of the members so far


def plan_groups(slots: dict[int, tuple[int, np.dtype]], lives: dict[int, Lifetime]
                ) -> tuple[dict[int, int], list[tuple[int, np.dtype]]]:
    """Buffer sharing without offsets: the group of each slot ((size, dtype) per slot) and
    (size, dtype) per group. A slot joins a dead group of its element width, best fit."""
    groups: list[_Group] = []
    member: dict[int, int] = {}
    for s in sorted(slots, key=lambda s: (lives[s].first, s)):
        size, dtype = slots[s]
        life = lives[s]
        free = [g for g, group in enumerate(groups)
                if group.itemsize == dtype.itemsize and group.last < life.first]
        fits = [g for g in free if groups[g].size >= size]
        if fits:
            g = min(fits, key=lambda g: groups[g].size)
        elif free:  # grow the largest dead group rather than allocate another
            g = max(free, key=lambda g: groups[g].size)
        else:
            g = len(groups)
            groups.append(_Group(dtype.itemsize, size, dtype, life.last))
        group = groups[g]
        if size > group.size:
            group.size, group.dtype = size, dtype
        group.last = max(group.last, life.last)
        member[s] = g
    return member, [(g.size, g.dtype) for g in groups]


def distinct(buffers: Sequence[Any]) -> list[Any]:
    """`buffers` without repeats (by identity): slots sharing a buffer free it once."""
    return list({id(b): b for b in buffers}.values())


class MemoryPlan:
    """Where each `pg_sched.alloc` slot of a program lives. Slots number inputs first, then
    allocs; `launch_slots` holds the argument slots of each launch in order."""

    def __init__(self, num_inputs: int, allocs: Sequence[tuple[int, np.dtype]],
                 launch_slots: Sequence[Sequence[int]], results: Sequence[int],
                 enabled: bool | None = None):
        self.allocs = tuple((size, np.dtype(dtype)) for size, dtype in allocs)
        escaping = set(results)
        planned = [num_inputs + i for i in range(len(self.allocs))
                   if num_inputs + i not in escaping]
        self.enabled = planning_enabled() if enabled is None else enabled
        if not self.enabled:
            planned = []
        self._num_inputs = num_inputs
        lives = lifetimes(planned, launch_slots)
        nbytes = {s: self._spec(s)[0] * self._spec(s)[1].itemsize for s in planned}
        self.before_bytes = sum(nbytes.values())
        offsets, self.arena_bytes = plan_offsets(nbytes, lives)
        # (alloc index, byte offset) of each planned slot; the rest get their own arrays
        self._views = {s - num_inputs: offsets[s] for s in planned}
        member, self.groups = plan_groups({s: self._spec(s) for s in planned}, lives)
        self._members = {s - num_inputs: g for s, g in member.items()}
        self.group_bytes = sum(size * dtype.itemsize for size, dtype in self.groups)

    def _spec(self, slot: int) -> tuple[int, np.dtype]:
        return self.allocs[slot - self._num_inputs]

    @property
    def peak_bytes(self) -> tuple[int, int]:
        """(bytes of all intermediates unplanned, bytes of the arena that holds them)."""
        return self.before_bytes, self.arena_bytes

    @property
    def arena_request(self) -> int:
        """Bytes of the arena a CPU run takes (with room to align it); 0 when none."""
        return self.arena_bytes + ALIGNMENT if self._views else 0

    def host_buffers(self, arena: np.ndarray | None = None) -> list[np.ndarray]:
        """One flat array per alloc slot: fresh arrays for results, views of `arena` (a
        uint8 array of `arena_request` bytes, from the device's pool; a new one when None)
        for intermediates."""
        if not self._views:
            return [np.empty(size, dtype) for size, dtype in self.allocs]
        raw = np.empty(self.arena_request, np.uint8) if arena is None else arena
        assert raw.nbytes >= self.arena_request
        base = -raw.ctypes.data % ALIGNMENT
        out: list[np.ndarray] = []
        for i, (size, dtype) in enumerate(self.allocs):
            offset = self._views.get(i)
            if offset is None:
                out.append(np.empty(size, dtype))
            else:
                out.append(np.ndarray((size,), dtype, raw, base + offset))
        return out

    def device_buffers(self, pool: BufferPool) -> list[Any]:
        """One device buffer per alloc slot from `pool`, intermediates of one group sharing
        theirs. On failure gives back what it took; the caller gives back
        `distinct(buffers)`."""
        taken: list[Any] = []
        try:
            shared = []
            for size, dtype in self.groups:
                shared.append(pool.take(size, dtype))
                taken.append(shared[-1])
            out: list[Any] = []
            for i, (size, dtype) in enumerate(self.allocs):
                g = self._members.get(i)
                if g is None:
                    out.append(pool.take(size, dtype))
                    taken.append(out[-1])
                else:
                    out.append(shared[g])
            return out
        except BaseException:
            for buffer in taken:
                pool.give(buffer)
            raise
