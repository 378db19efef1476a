"""The schedules a BEAM search tries: neighbours of a schedule, and a cheap filter.

    neighbours(actions, kernel) -> list[tuple[Action, ...]]   one step away from `actions`
    fixed(action) -> bool                                      never changed by the search
    plausible(kernel, lanes, registers, budget) -> bool        worth compiling at all
    emitted(kernel) -> int                                     ops its lowering emits

A schedule is a list of `pg_loop` actions (`picograd.passes.loop.schedule`) applied to a
kernel as the pipeline's stage before the schedule left it. One step away is:

* the factor of one `split`, `split_reduce` or `block_reduce` changed (halved, doubled,
  or one of `SPLIT_FACTORS`): a 4 x 64 register tile becomes 6 x 64 or 4 x 32;
* one of those actions, or an `interchange`, dropped;
* one action appended: a split of any range into upcast lanes or an ordered loop, an
  interchange, a reduce split into lanes or blocked around a range.

`chunk_reduce`, `stash`, `collapse` and `unflatten` are `fixed`: chunks are there for a
float sum's accuracy (docs/design.md, "Float sums"), the others are exact and never slower.
Every action checks its own legality when applied (`ScheduleError`), so a neighbour that
does not apply is dropped by whoever applies it; each candidate is the same computation
(`split`, `interchange` exact, the reduce actions a reordered sum within the accumulation
tolerance).
"""

from __future__ import annotations

from xdsl.ir import Operation

from picograd.dialects import pg_loop as L
from picograd.dialects.pg import RangeKind
from picograd.passes.loop.schedule import Action, axes, reduces

SPLIT_FACTORS = (2, 3, 4, 6, 8, 16, 32, 64)
REDUCE_FACTORS = (4, 8, 16)
BLOCK_SIZES = (64, 128, 256, 512)
FIXED_OPS = frozenset({"chunk_reduce", "stash", "collapse", "unflatten"})
# The most upcast lanes around one statement: past it a kernel's body, copied once per
# lane, costs more to compile than the lanes could save.
MAX_LANES = 512
MIN_EMITTED = 2048  # the smallest op budget of the cheap filter


def fixed(action: Action) -> bool:
    """Whether the search keeps `action` as the heuristic chose it."""
    return action.op in FIXED_OPS


def _refactored(action: Action) -> list[Action]:
    """`action` with each other factor worth trying."""
    if action.op == "split":
        choices = {action.factor // 2, action.factor * 2, *SPLIT_FACTORS}
    elif action.op == "split_reduce":
        choices = {action.factor // 2, action.factor * 2, *REDUCE_FACTORS}
    elif action.op == "block_reduce":
        choices = {action.factor // 2, action.factor * 2, *BLOCK_SIZES}
    else:
        return []
    return [Action(action.op, action.axis, f, action.kind, action.at)
            for f in sorted(choices) if f > 1 and f != action.factor]


def _appended(kernel: L.KernelOp) -> list[Action]:
    """Single actions on `kernel` as it is (already scheduled) worth trying after it."""
    out: list[Action] = []
    for axis, r in enumerate(axes(kernel)):
        size = r.end.data - r.start.data
        kind = r.kind.data
        if kind == RangeKind.GLOBAL:
            out += [Action("split", axis, f, RangeKind.UPCAST) for f in (4, 8, 16) if f < size]
            out += [Action("split", axis, f, RangeKind.LOOP) for f in (4, 16) if f < size]
        if kind in (RangeKind.GLOBAL, RangeKind.UPCAST):
            out.append(Action("interchange", axis))
    for n, red in enumerate(reduces(kernel)):
        size = red.end.data - red.start.data
        if red.range_kind.data != RangeKind.REDUCE:
            continue
        out += [Action("split_reduce", n, f) for f in REDUCE_FACTORS if size % f == 0
                and size >= 4 * f]
        out += [Action("block_reduce", n, b, at=a) for b in (128, 256)
                for a in range(len(axes(kernel))) if size % b == 0 and size > b]
    return out


def neighbours(actions: tuple[Action, ...], scheduled: L.KernelOp
               ) -> list[tuple[Action, ...]]:
    """The schedules one step from `actions` (see the module docstring); `scheduled` is the
    kernel with `actions` applied, which the appended actions are read from."""
    out: list[tuple[Action, ...]] = []
    for i, action in enumerate(actions):
        if fixed(action):
            continue
        out += [(*actions[:i], changed, *actions[i + 1:]) for changed in _refactored(action)]
        out.append((*actions[:i], *actions[i + 1:]))
    out += [(*actions, extra) for extra in _appended(scheduled)]
    seen: set[str] = set()
    unique = []
    for candidate in out:
        text = "; ".join(map(str, candidate))
        if text not in seen:
            seen.add(text)
            unique.append(candidate)
    return unique


def _lanes_around(op: Operation, with_reduces: bool) -> int:
    """The product of the upcast ranges around `op` (and of the upcast reduces, when
    `with_reduces`): how many copies of it the lowering emits."""
    lanes, parent = 1, op.parent_op()
    while isinstance(parent, L.RangeOp | L.ReduceOp):
        kind = parent.kind.data if isinstance(parent, L.RangeOp) else (
            parent.range_kind.data if with_reduces else None)
        if kind == RangeKind.UPCAST:
            lanes *= parent.end.data - parent.start.data
        parent = parent.parent_op()
    return lanes


def emitted(kernel: L.KernelOp) -> int:
    """The ops `convert-loop-to-uop` will emit for `kernel`: each op once per lane of the
    upcast ranges and upcast reduces around it (what compile time grows with)."""
    return sum(_lanes_around(op, True) for op in kernel.walk())


def plausible(kernel: L.KernelOp, vector_lanes: int, registers: int, budget: int) -> bool:
    """The cheap filter: False for a scheduled kernel not worth compiling: one that emits
    more than `budget` ops (`emitted`: the search passes 1.5x the heuristic's kernel, at
    least `MIN_EMITTED`; a body copied per lane costs compile time faster than it saves
    run time), more upcast lanes around one statement than `MAX_LANES`, or a register tile
    (upcast lanes around a reduce) of more accumulator vectors (`vector_lanes` lanes each)
    than the `registers` less two (a row of B and a broadcast): every accumulator past
    them spills to memory."""
    if emitted(kernel) > budget:
        return False
    for op in kernel.walk():
        if not isinstance(op, L.StoreOp | L.ReduceOp):
            continue
        lanes = _lanes_around(op, False)
        if lanes > MAX_LANES:
            return False
        if isinstance(op, L.ReduceOp) and -(-lanes // max(vector_lanes, 1)) > registers - 2:
            return False
    return True
