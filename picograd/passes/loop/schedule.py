"""Loop actions on one `pg_loop.kernel`: the steps a kernel's schedule is made of.

    split(kernel, axis, factor, kind)      range `axis` -> outer x inner (`factor`, `kind`)
    interchange(kernel, axis)              range `axis` moves inside the ranges it holds
    split_reduce(kernel, n, factor)        reduce `n` -> `factor` partial reductions
    chunk_reduce(kernel, n, size)          reduce `n` -> a sum of sums over chunks of `size`
    block_reduce(kernel, n, size, axis)    reduce `n` in blocks of `size`, the blocks a loop
                                           directly in range `axis` (cache blocking)
    collapse(kernel, axis)                 range `axis` and the one range it holds -> one
    unflatten(kernel, axis, size)          range `axis` -> two nested ranges (collapse's
                                           inverse), the inner one `size` long
    Action.parse("split(1, 64, upcast)")   one step, written as a kernel schedule writes it
    apply_schedule(kernel, actions)        the steps in order; the schedule is recorded

Ranges are named by their *axis*: the position of the `pg_loop.range` in a pre-order walk of
the kernel (outermost first, then in program order). Numbering is read afresh before each
action, so a schedule is a list of actions on the IR as the previous ones left it, as in
tinygrad's `apply_opt`. `pg_loop.reduce` ranges are not axes; they are numbered apart (the
position of the reduce in the same walk) for `split_reduce`, `chunk_reduce`, `block_reduce`
(`reduce_actions.py`) and `stash` (`stash_action.py`). The first three change the order a
reduction combines in (a float sum then rounds differently, as any vectorised, parallel or
blocked sum does). `split`, `interchange`, `collapse`, `unflatten` and `stash` are exact:
the same stores of the same values.

Legality: the iterations of a `global`, `local` or `upcast` range are independent (each is
a work item or a vector lane), so such a range may be split into independent parts or moved
inside the ranges it holds. `loop` and `unroll` ranges run in order: they may be split only
into ordered parts (`loop`, `unroll`) and are never moved inward. An action that does not
apply raises `ScheduleError` naming the kernel, the action and why.

A kernel that went through a schedule carries it as the `pg.schedule` string attribute
(`split(1, 64, upcast); interchange(1)`), which `DEBUG=3` prints, `PG_DUMP` keeps, and
`loop-schedule{kernel=k0 actions="..."}` replays with `opt-tool`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation, SSAValue

from picograd.dialects import pg_loop as L
from picograd.dialects.abi import SCHEDULE_ATTR
from picograd.dialects.pg import BinaryKind, RangeKind
from picograd.passes.loop.loop_nest import (
    INDEPENDENT,
    ORDERED,
    PURE,
    ScheduleError,
    axes,
    axis_range,
    prepend,
    rebuild_index,
    reduces,
)
from picograd.passes.loop.loop_simplify import loop_simplify_rules
from picograd.passes.loop.reduce_actions import (
    block_reduce,
    block_reduce_problem,
    chunk_reduce,
    chunk_reduce_problem,
    split_reduce,
    split_reduce_problem,
)
from picograd.passes.loop.stash_action import stash, stash_problem

# ── split ──────────────────────────────────────────────────────────────────


def split_problem(r: L.RangeOp, factor: int, kind: RangeKind) -> str | None:
    """Why range `r` cannot be split by `factor` into `kind` lanes, or None when it can."""
    size = r.end.data - r.start.data
    if factor < 1:
        return f"factor {factor} is not positive"
    if factor > size:
        return f"factor {factor} exceeds the range's {size} iterations"
    if kind == RangeKind.REDUCE:
        return "a reduce is not a loop range"
    if r.kind.data in ORDERED and kind not in ORDERED:
        return f"a {r.kind.data.value} range runs in order; its parts must be loop or unroll"
    return None


def split(kernel: L.KernelOp, axis: int, factor: int, kind: RangeKind) -> None:
    """Split range `axis` of `[s, e)` into an outer range over `(e - s) // factor` blocks
    (the range's kind) holding an inner `kind` range of `factor` iterations, the index being
    `s + outer * factor + inner`; the `(e - s) % factor` last iterations, if any, run in a
    copy of the original range right after it (the remainder)."""
    r = axis_range(kernel, axis, f"split({axis}, {factor}, {kind.value})")
    if (problem := split_problem(r, factor, kind)) is not None:
        raise ScheduleError(f"@{kernel.sym_name.data}: split({axis}, {factor}, "
                            f"{kind.value}): {problem}")
    start, end, outer_kind = r.start.data, r.end.data, r.kind.data
    blocks, rest = divmod(end - start, factor)
    parent = r.parent_block()
    assert parent is not None
    if rest:
        tail = L.RangeOp(end - rest, end, outer_kind, r.body.clone())
        tail.index.name_hint = r.index.name_hint
        parent.insert_op_after(tail, r)
    outer = L.RangeOp(0, blocks, outer_kind)
    inner = L.RangeOp(0, factor, kind)
    outer.body.block.add_op(inner)
    name = r.index.name_hint or "i"
    outer.index.name_hint, inner.index.name_hint = f"{name}_o", f"{name}_{kind.value}"
    body = inner.body.block
    for op in list(r.body.block.ops):
        op.detach()
        body.add_op(op)
    rebuild_index(r.index, outer.index, inner.index, factor, start, body)
    parent.insert_op_before(outer, r)
    r.detach()
    r.erase()


# ── interchange ────────────────────────────────────────────────────────────


def interchange_problem(r: L.RangeOp) -> str | None:
    """Why range `r` cannot move inside the ranges it holds, or None when it can."""
    if r.kind.data not in INDEPENDENT:
        return f"a {r.kind.data.value} range runs in order and stays where it is"
    ops = list(r.body.block.ops)
    if not any(isinstance(op, L.RangeOp) for op in ops):
        return "it holds no range"
    others = [op.name for op in ops if not isinstance(op, (L.RangeOp, *PURE))]
    if others:
        return f"it holds {others[0]} outside its inner ranges"
    return None


def interchange(kernel: L.KernelOp, axis: int) -> None:
    """Move range `axis` inside each range its body holds: `for i { p(i); for j A; for k B }`
    becomes `for j { for i { p(i); A } }; for k { for i { p(i); B } }` (its pure ops `p` are
    copied into each). Legal because the iterations of `i` are independent."""
    r = axis_range(kernel, axis, f"interchange({axis})")
    if (problem := interchange_problem(r)) is not None:
        raise ScheduleError(f"@{kernel.sym_name.data}: interchange({axis}): {problem}")
    interchange_range(r)


def interchange_range(r: L.RangeOp) -> list[L.RangeOp]:
    """`interchange` of range `r`, which `interchange_problem` allows; the copies of `r`,
    one inside each range it held."""
    parent = r.parent_block()
    assert parent is not None
    pure = [op for op in r.body.block.ops if not isinstance(op, L.RangeOp)]
    copies: list[L.RangeOp] = []
    for child in [op for op in r.body.block.ops if isinstance(op, L.RangeOp)]:
        moved = L.RangeOp(r.start.data, r.end.data, r.kind.data)
        copies.append(moved)
        moved.index.name_hint = r.index.name_hint
        mapping: dict[SSAValue, SSAValue] = {r.index: moved.index}
        for op in pure:
            moved.body.block.add_op(op.clone(value_mapper=mapping))
        for op in list(child.body.block.ops):
            op.detach()
            moved.body.block.add_op(op)
        _remap(moved.body.block.ops, mapping)
        child.body.block.add_op(moved)
        child.detach()
        parent.insert_op_before(child, r)
    r.detach()
    r.erase()
    return copies


def _remap(ops: Iterable[Operation], mapping: dict[SSAValue, SSAValue]) -> None:
    for top in ops:
        for op in top.walk():
            if any(v in mapping for v in op.operands):
                op.operands = [mapping.get(v, v) for v in op.operands]


# ── collapse ───────────────────────────────────────────────────────────────


def collapse_problem(r: L.RangeOp) -> str | None:
    """Why range `r` and the range it holds cannot become one range, or None when they can."""
    ops = list(r.body.block.ops)
    if len(ops) != 1 or not isinstance(ops[0], L.RangeOp):
        return "its body is not exactly one range"
    inner = ops[0]
    if r.kind.data not in INDEPENDENT or inner.kind.data != r.kind.data:
        return "only two independent ranges of one kind collapse"
    if r.start.data or inner.start.data:
        return "a range starts above 0"
    return None


def collapse(kernel: L.KernelOp, axis: int) -> None:
    """Range `axis` over `[0, a)` holding exactly one range over `[0, b)` of its kind become
    one range `j` over `[0, a * b)`, the indices `j // b` and `j % b` (the same iterations
    in the same order); then its index arithmetic is simplified (`loop-simplify`'s rules),
    which adds `(j // b) * b + j % b` back to `j` where the body flattened the two.
    Lets a matmul whose columns are an (h, w) grid take a register tile along them."""
    r = axis_range(kernel, axis, f"collapse({axis})")
    if (problem := collapse_problem(r)) is not None:
        raise ScheduleError(f"@{kernel.sym_name.data}: collapse({axis}): {problem}")
    collapse_range(r)


def collapse_range(r: L.RangeOp) -> L.RangeOp:
    """`collapse` of range `r` (which `collapse_problem` accepts): the merged range, its
    index arithmetic simplified (nothing outside it changes)."""
    inner = r.body.block.first_op
    assert isinstance(inner, L.RangeOp)
    b = inner.end.data
    merged = L.RangeOp(0, r.end.data * b, r.kind.data)
    merged.index.name_hint = f"{r.index.name_hint or 'i'}_{inner.index.name_hint or 'j'}"
    for op in list(inner.body.block.ops):
        op.detach()
        merged.body.block.add_op(op)
    size = L.ConstOp(b)
    high = L.IndexOp(BinaryKind.DIV, merged.index, size.result)
    low = L.IndexOp(BinaryKind.MOD, merged.index, size.result)
    high.result.name_hint, low.result.name_hint = r.index.name_hint, inner.index.name_hint
    r.index.replace_all_uses_with(high.result)
    inner.index.replace_all_uses_with(low.result)
    prepend(merged.body.block, [size, high, low])
    parent = r.parent_block()
    assert parent is not None
    parent.insert_op_before(merged, r)
    r.detach()
    r.erase()
    loop_simplify_rules.apply(merged)
    return merged


def unflatten_problem(r: L.RangeOp, size: int) -> str | None:
    """Why range `r` cannot become a range of ranges `size` long, or None when it can."""
    n = r.end.data - r.start.data
    if r.kind.data not in INDEPENDENT:
        return f"a {r.kind.data.value} range runs in order"
    if r.start.data:
        return "the range starts above 0"
    if not 1 < size < n or n % size:
        return f"size {size} must divide the range's {n} iterations, between 1 and {n} exclusive"
    return None


def unflatten(kernel: L.KernelOp, axis: int, size: int) -> None:
    """Range `axis` over `[0, a * size)` becomes a range over `[0, a)` holding one over
    `[0, size)` of its kind, the index `outer * size + inner` (the same iterations in the
    same order: collapse's inverse); then the kernel's index arithmetic is simplified
    (`loop-simplify`'s rules), so `j // size` and `j % size` become the two indices. A
    kernel that reads a (H, W) value as the (H/2, 2, W/2, 2) windows of a 2 x 2 pool then
    indexes it with no division."""
    r = axis_range(kernel, axis, f"unflatten({axis}, {size})")
    if (problem := unflatten_problem(r, size)) is not None:
        raise ScheduleError(f"@{kernel.sym_name.data}: unflatten({axis}, {size}): {problem}")
    split(kernel, axis, size, r.kind.data)
    loop_simplify_rules.apply(kernel)


# ── actions and schedules ──────────────────────────────────────────────────


@dataclass(frozen=True)
class Action:
    """One step of a schedule: `split(axis, factor, kind)`, `interchange(axis)`,
    `collapse(axis)`, `unflatten(axis, size)`, `split_reduce(n, factor)`,
    `chunk_reduce(n, size)` or `block_reduce(n, size, at)` (for the last three, `axis` is
    the reduce's number; `at` is the axis that gets the block loop)."""

    op: str
    axis: int
    factor: int = 0
    kind: RangeKind = RangeKind.UPCAST
    at: int = 0

    def __str__(self) -> str:
        if self.op == "split":
            return f"split({self.axis}, {self.factor}, {self.kind.value})"
        if self.op == "block_reduce":
            return f"block_reduce({self.axis}, {self.factor}, {self.at})"
        if self.op in ("split_reduce", "chunk_reduce", "unflatten"):
            return f"{self.op}({self.axis}, {self.factor})"
        if self.op == "stash":
            return f"stash({self.axis})"
        return f"{self.op}({self.axis})"

    def apply(self, kernel: L.KernelOp) -> None:
        if self.op == "split":
            split(kernel, self.axis, self.factor, self.kind)
        elif self.op == "split_reduce":
            split_reduce(kernel, self.axis, self.factor)
        elif self.op == "chunk_reduce":
            chunk_reduce(kernel, self.axis, self.factor)
        elif self.op == "block_reduce":
            block_reduce(kernel, self.axis, self.factor, self.at)
        elif self.op == "stash":
            stash(kernel, self.axis)
        elif self.op == "collapse":
            collapse(kernel, self.axis)
        elif self.op == "unflatten":
            unflatten(kernel, self.axis, self.factor)
        else:
            interchange(kernel, self.axis)

    @staticmethod
    def parse(text: str) -> Action:
        """`split(1, 64, upcast)`, `interchange(0)`, `collapse(0)`, `unflatten(2, 2)`,
        `split_reduce(0, 16)`, `chunk_reduce(0, 64)`, `block_reduce(0, 256, 0)` or
        `stash(1)`; ScheduleError if
        malformed."""
        m = re.fullmatch(r"\s*(split_reduce|chunk_reduce|block_reduce|split|interchange"
                         r"|collapse|unflatten"
                         r"|stash)\s*\(([^)]*)\)\s*", text)
        name = m.group(1) if m else ""
        args = [a.strip() for a in m.group(2).split(",")] if m else []
        try:
            if name == "split" and len(args) == 3:
                return Action("split", int(args[0]), int(args[1]), RangeKind(args[2]))
            if name in ("interchange", "collapse", "stash") and len(args) == 1:
                return Action(name, int(args[0]))
            if name in ("split_reduce", "chunk_reduce", "unflatten") and len(args) == 2:
                return Action(name, int(args[0]), int(args[1]))
            if name == "block_reduce" and len(args) == 3:
                return Action(name, int(args[0]), int(args[1]), at=int(args[2]))
        except ValueError:
            pass
        kinds = ", ".join(str(k.value) for k in RangeKind if k != RangeKind.REDUCE)
        raise ScheduleError(f"malformed action {text.strip()!r}: write split(axis, factor, "
                            f"kind) with kind one of {kinds}, interchange(axis), "
                            f"collapse(axis), unflatten(axis, size), "
                            f"split_reduce(reduce, factor), chunk_reduce(reduce, size), "
                            f"block_reduce(reduce, size, axis) "
                            f"or stash(reduce)")


def parse_schedule(text: str) -> list[Action]:
    """Actions separated by `;` (empty text: no action)."""
    return [Action.parse(part) for part in text.split(";") if part.strip()]


def format_schedule(actions: Sequence[Action]) -> str:
    return "; ".join(str(a) for a in actions)


def recorded_schedule(kernel: L.KernelOp) -> str:
    """The schedule a kernel went through ("" if none)."""
    attr = kernel.attributes.get(SCHEDULE_ATTR)
    return attr.data if isinstance(attr, StringAttr) else ""


def apply_schedule(kernel: L.KernelOp, actions: Sequence[Action]) -> None:
    """Apply `actions` in order and append them to the kernel's recorded schedule."""
    for action in actions:
        action.apply(kernel)
    record_schedule(kernel, actions)


def record_schedule(kernel: L.KernelOp, actions: Sequence[Action]) -> None:
    """Append `actions` (applied already) to the kernel's recorded schedule."""
    if actions:
        done = [s for s in (recorded_schedule(kernel), format_schedule(actions)) if s]
        kernel.attributes[SCHEDULE_ATTR] = StringAttr("; ".join(done))


# The actions and what they share (`loop_nest`, `reduce_actions`), from one place.
__all__ = [
    "INDEPENDENT", "ORDERED", "PURE", "Action", "ScheduleError", "apply_schedule", "axes",
    "block_reduce", "block_reduce_problem", "chunk_reduce", "chunk_reduce_problem",
    "collapse", "collapse_problem", "collapse_range",
    "format_schedule", "interchange", "interchange_problem", "parse_schedule",
    "record_schedule", "recorded_schedule", "reduces", "split", "split_problem",
    "split_reduce", "split_reduce_problem", "stash", "stash_problem", "unflatten",
    "unflatten_problem",
]
