"""Run a large CPU kernel on every core: its outermost global range in contiguous chunks.

    host_kernel(function, outer) -> Kernel        outer: (trip, work) or None

A CPU kernel (LLVM or C) is a C function `void k(void* p0, ..., int64_t start, int64_t
end)`; `start`/`end` bound the iterations of its outermost global range when the lowering
found that range splittable (`picograd/lowering/outer_range.py`, which also estimates the
kernel's `work`, its dynamic op count in lanes). ctypes releases the GIL for the length of a
foreign call, so chunks of one kernel run on persistent pool threads really run at once.

Policy: a kernel is split when it is splittable, `work >= MIN_WORK` (handing chunks to
sleeping pool threads and waiting for them costs ~20-100 us, which a kernel of fewer ops
than that does not win back) and more than one thread is allowed; it is cut into
`min(threads, trip)` near-equal contiguous chunks, one per pool thread, and the call
returns when all are done. Every other kernel is one call with `(0, trip)` on the caller.

Each pool thread keeps to its own CPU and, after a chunk, waits busily (yielding the CPU to
anything else that wants it) `SPIN_S` for the next one before it sleeps; `spin_wait.py`
has the measurements behind both: threads woken per chunk, or left to the scheduler, often
ran on one CPU. The caller waits the same way, so it runs no chunk itself (it may share a
CPU with a pool thread). A kernel that finds the pool busy with another Python thread's
kernel runs whole on its caller.

`PG_THREADS=N` caps the threads (default: the CPU count); `PG_THREADS=1` turns splitting
off. It is read when a kernel is loaded (cached programs keep their choice).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable

from picograd import flags
from picograd.runtimes import spin_wait
from picograd.runtimes.base import Kernel

# The trailing (start, end) of every kernel, declared `int64_t`, pass through ctypes as
# `void*`: on the 64-bit hosts picograd runs on both travel in the same integer register or
# stack slot, and ctypes converts a Python int to `void*` ~3x faster than to `int64_t`
# (~0.1 us per launch, which a tiny realize notices).
KERNEL_ARGS = (ctypes.c_void_p, ctypes.c_void_p)

# Dynamic ops below which a kernel stays one call. Measured (2-core x86, -O3 / -O2 code):
# a split costs ~20 us of hand-off and wait; kernels retire ~10-40 ops per ns, so 4M ops
# is >= ~100-400 us of work, where the hand-off is a small share.
MIN_WORK = 1 << 22

# The name prefix of the pool's threads (which only run kernels: they hold no lock that a
# forked compiler process could need).
POOL_THREADS = "picograd-cpu"

# How long a pool thread waits busily for its next chunk after one, and the caller for the
# chunks, before sleeping (`spin_wait.py` says why). A CNN step launches its next large
# kernel well within this; an idle program stops after it.
SPIN_S = 1e-3

_GEN, _DONE = 0, 8  # int64 cells of a worker: 64 bytes apart, each its own cache line


def _pinned_cpu(index: int) -> int | None:
    """The CPU pool thread `index` keeps to (one each, round robin over the CPUs this process
    may use), None where the OS has no affinity call."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[index % len(cpus)]


class _Worker:
    """One pool thread, pinned to its own CPU: runs the chunk posted to it, then waits busily
    (`spin_wait.yield_until_changed`) `SPIN_S` for the next one before it sleeps on a
    condition (which `post` always notifies)."""

    def __init__(self, index: int) -> None:
        self._cells = (ctypes.c_int64 * 16)()
        self._job: tuple[Callable[..., None], tuple[int, ...]] | None = None
        self._error: BaseException | None = None
        self._wake = threading.Condition()
        self._budget = spin_wait.yields_for(SPIN_S)
        self._cpu = _pinned_cpu(index)
        threading.Thread(target=self._serve, name=f"{POOL_THREADS}-{index}", daemon=True).start()

    def _address(self, cell: int) -> int:
        return ctypes.addressof(self._cells) + 8 * cell

    def post(self, function: Callable[..., None], args: tuple[int, ...]) -> int:
        """Run `function(*args)` on this thread; the generation to `wait` for."""
        self._job = (function, args)
        with self._wake:
            generation = self._cells[_GEN] + 1
            self._cells[_GEN] = generation
            self._wake.notify_all()
        return generation

    def wait(self, generation: int) -> BaseException | None:
        """Return when the job of `generation` has run, with what it raised."""
        done = self._address(_DONE)
        if spin_wait.yield_until_changed(done, generation - 1, self._budget) != generation:
            with self._wake:
                while self._cells[_DONE] != generation:
                    self._wake.wait()
        error, self._error = self._error, None
        return error

    def _serve(self) -> None:
        if self._cpu is not None:
            with contextlib.suppress(OSError):  # a CPU taken away meanwhile: run unpinned
                os.sched_setaffinity(0, {self._cpu})
        seen = 0
        while True:
            if spin_wait.yield_until_changed(self._address(_GEN), seen, self._budget) == seen:
                with self._wake:
                    while self._cells[_GEN] == seen:
                        self._wake.wait()
            seen = self._cells[_GEN]
            assert self._job is not None
            function, args = self._job
            try:
                function(*args)
            except BaseException as error:  # re-raised on the caller's thread by `wait`
                self._error = error
            with self._wake:
                self._cells[_DONE] = seen
                self._wake.notify_all()


_workers: list[_Worker] = []
_workers_lock = threading.Lock()  # guards growing `_workers`
_team_lock = threading.Lock()  # held by the one split call that uses the workers


def _team(size: int) -> list[_Worker]:
    with _workers_lock:
        while len(_workers) < size:
            _workers.append(_Worker(len(_workers)))
        return _workers[:size]


def _forget_workers() -> None:
    """In a forked child: the pool threads stayed in the parent (a child that runs kernels,
    e.g. a data-loading process, starts its own)."""
    global _workers_lock, _team_lock
    _workers.clear()
    _workers_lock, _team_lock = threading.Lock(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def threads() -> int:
    """How many threads one kernel may use: `PG_THREADS`, else the CPU count."""
    text = flags.threads()
    try:
        wanted = int(text) if text else 0
    except ValueError:
        wanted = 0
    return wanted if wanted > 0 else (os.cpu_count() or 1)


def chunks(trip: int, parts: int) -> list[tuple[int, int]]:
    """`[0, trip)` as `parts` contiguous near-equal `(start, end)` chunks (none empty)."""
    parts = max(1, min(parts, trip))
    share, extra = divmod(trip, parts)
    bounds, at = [], 0
    for i in range(parts):
        n = share + (i < extra)
        bounds.append((at, at + n))
        at += n
    return bounds


def c_kernel(address: int, num_args: int, outer: tuple[int, int] | None) -> Kernel:
    """The launcher of the CPU kernel at `address` with `num_args` buffer arguments (see
    `host_kernel`)."""
    prototype = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * num_args, *KERNEL_ARGS)
    return host_kernel(prototype(address), outer)


def read_outer(address: int | None) -> tuple[int, int] | None:
    """(trip, work) from the exported `int64_t[2]` at `address`; None where there is none."""
    if not address:
        return None
    pair = (ctypes.c_int64 * 2).from_address(address)
    return int(pair[0]), int(pair[1])


def host_kernel(function: Callable[..., None], outer: tuple[int, int] | None,
                parts: int | None = None) -> Kernel:
    """The launcher of a loaded CPU kernel `function` (buffer addresses, then start and end):
    a callable taking only the buffer addresses. `outer` is (trip, work) of a splittable
    kernel, None for one that ignores `(start, end)`; `parts` overrides the policy (tests)."""
    trip = outer[0] if outer is not None else 0
    if parts is None:
        parts = threads() if outer is not None and outer[1] >= MIN_WORK else 1
    bounds = chunks(trip, parts) if trip > 0 else [(0, 0)]
    if len(bounds) == 1:
        start, end = bounds[0]

        def single(*addresses: int) -> None:
            function(*addresses, start, end)

        return single
    def split(*addresses: int) -> None:
        team_lock = _team_lock
        if not team_lock.acquire(blocking=False):  # another thread's kernel has the team
            function(*addresses, 0, trip)
            return
        try:
            team = _team(len(bounds))
            posted = [(worker, worker.post(function, (*addresses, a, b)))
                      for worker, (a, b) in zip(team, bounds, strict=True)]
            errors = [worker.wait(generation) for worker, generation in posted]
            if (error := next((e for e in errors if e is not None), None)) is not None:
                raise error  # after every chunk has finished
        finally:
            team_lock.release()

    return split
