"""The loop action `stash(n)`: what a reduce combines and the range after it computes again,
computed once.

    stash(kernel, n)    a new range before reduce `n` computes the shared value once and
                        stores it where the range after the reduce stores; both read it back

Softmax sums `exp(x - max)` and then stores `exp(x - max) / sum`: after `stash`, the exps
are computed once per row (its 4 KiB stay in L1 between the three loops). Exact: the same
ops on the same values, read back as stored. `stash_problem` says when it applies.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Block, Operation, SSAValue

from picograd.dialects import pg_loop as L
from picograd.dialects import pg_uop
from picograd.dialects.pg import RangeKind
from picograd.passes.loop.loop_nest import INDEPENDENT, PURE, ScheduleError, reduce_at
from picograd.passes.loop.reduce_actions import distinct_stores


@dataclass(frozen=True)
class _Stash:
    """What `stash` rewrites: the reduce, the range after it, the store there and the value
    of that range's body that repeats what the reduce yields."""

    red: L.ReduceOp
    later: L.RangeOp
    store: L.StoreOp
    value: SSAValue


def stash_problem(red: L.ReduceOp) -> str | None:
    """Why the values reduce `red` combines cannot be stashed, or None when they can."""
    found = _stash_parts(red)
    return found if isinstance(found, str) else None


def _stash_parts(red: L.ReduceOp) -> _Stash | str:
    if red.range_kind.data != RangeKind.REDUCE:
        return f"it is a reduce over {red.range_kind.data.value} lanes"
    yielded = red.body.block.last_op
    assert isinstance(yielded, L.YieldOp)
    if not isinstance(yielded.value.owner, (pg_uop.UnaryOp, pg_uop.BinaryOp)):
        return "it combines loaded values as they are: nothing to compute once"
    later = red.next_op
    while later is not None and isinstance(later, PURE):
        later = later.next_op
    if (not isinstance(later, L.RangeOp) or later.kind.data not in INDEPENDENT
            or (later.start.data, later.end.data) != (red.start.data, red.end.data)):
        return "no independent range over the reduce's iterations follows it"
    body = list(later.body.block.ops)
    stores = [op for op in body if isinstance(op, L.StoreOp)]
    if (len(stores) != 1 or any(isinstance(op, L.RangeOp | L.ReduceOp) for op in body)
            or not all(isinstance(op, (*PURE, L.LoadOp, L.StoreOp)) for op in body)):
        return "the range after it is not one store of values it computes"
    store = stores[0]
    value = next((v for op in body for v in op.results
                  if _same(v, yielded.value, {later.index: red.index})), None)
    if value is None:
        return "the range after it does not compute the value the reduce combines"
    if store.buffer.type.element_type != value.type:  # type: ignore[attr-defined]
        return "the range stores another type than the reduce combines"
    if not distinct_stores(store.index, [later]):
        return "the range after it does not store one element per iteration"
    if (problem := _buffer_problem(red, store)) is not None:
        return problem
    first_use = min((body.index(use.operation) for use in value.uses), default=len(body))
    if any(body.index(op) >= first_use for op in _slice([store.index], later)):
        return "the range's store index is computed after the value is used"
    return _Stash(red, later, store, value)


def _buffer_problem(red: L.ReduceOp, store: L.StoreOp) -> str | None:
    """The stash lives in the stored buffer: nothing else in the reduce's block may read or
    write it."""
    block = red.parent_block()
    assert block is not None
    for op in block.walk():
        if isinstance(op, L.LoadOp) and op.buffer == store.buffer:
            return "the stored buffer is read in the reduce's block"
        if isinstance(op, L.StoreOp) and op is not store and op.buffer == store.buffer:
            return "the stored buffer is stored to elsewhere in the reduce's block"
    return None


def _same(a: SSAValue, b: SSAValue, mapping: dict[SSAValue, SSAValue]) -> bool:
    """Whether `a` computes what `b` does, `mapping` taking `a`'s side's indices to `b`'s."""
    if a == b or mapping.get(a) == b:
        return True
    x, y = a.owner, b.owner
    if (not isinstance(x, Operation) or not isinstance(y, Operation) or x.name != y.name
            or x.regions or y.regions or x.properties != y.properties
            or x.attributes != y.attributes or len(x.operands) != len(y.operands)
            or a.type != b.type or not isinstance(x, (*PURE, L.LoadOp))):
        return False
    return all(_same(u, v, mapping) for u, v in zip(x.operands, y.operands, strict=True))


def _slice(values: list[SSAValue], r: L.RangeOp) -> list[Operation]:
    """The ops of `r`'s body that `values` are computed from, in program order."""
    body = r.body.block
    needed: set[Operation] = set()
    work = list(values)
    while work:
        op = work.pop().owner
        if isinstance(op, Operation) and op.parent_block() is body and op not in needed:
            needed.add(op)
            work.extend(op.operands)
    return [op for op in body.ops if op in needed]


def _clone_slice(values: list[SSAValue], r: L.RangeOp, index: SSAValue, before: Operation
                 ) -> list[SSAValue]:
    """`values` (computed in `r`'s body) computed again before `before`, `index` in place of
    `r`'s index; returns the copies."""
    mapping: dict[SSAValue, SSAValue] = {r.index: index}
    block = before.parent_block()
    assert block is not None
    for op in _slice(values, r):
        block.insert_op_before(op.clone(value_mapper=mapping), before)
    return [mapping.get(v, v) for v in values]


def stash(kernel: L.KernelOp, n: int) -> None:
    """Reduce `n` combines a value (`exp(x - max)`) that the range right after it computes
    again (softmax's output loop): a new range before the reduce computes it once per
    iteration and stores it where that range stores; the reduce and that range read it
    back. The same values are combined and stored (no rounding changes); the buffer holds
    them only until that range overwrites each element with its own result."""
    action = f"stash({n})"
    red = reduce_at(kernel, n, action)
    parts = _stash_parts(red)
    if isinstance(parts, str):
        raise ScheduleError(f"@{kernel.sym_name.data}: {action}: {parts}")
    later, store, value = parts.later, parts.store, parts.value
    block = red.parent_block()
    assert block is not None
    early = L.RangeOp(later.start.data, later.end.data, later.kind.data)
    early.index.name_hint = later.index.name_hint
    block.insert_op_before(early, red)
    anchor = L.YieldOp(value)  # a placeholder to clone before, erased below
    early.body.block.add_op(anchor)
    computed, place = _clone_slice([value, store.index], later, early.index, anchor)
    early.body.block.insert_op_before(L.StoreOp(computed, store.buffer, place), anchor)
    anchor.detach()
    anchor.erase()
    yielded = red.body.block.last_op
    assert isinstance(yielded, L.YieldOp)
    (at,) = _clone_slice([store.index], later, red.index, yielded)
    reread = L.LoadOp(store.buffer, at)
    red.body.block.insert_op_before(reread, yielded)
    yielded.operands = [reread.result]
    first_use = min((use.operation for use in value.uses),
                    key=lambda op: list(later.body.block.ops).index(op))
    again = L.LoadOp(store.buffer, store.index)
    later.body.block.insert_op_before(again, first_use)
    value.replace_all_uses_with(again.result)
    for body in (red.body.block, later.body.block):
        _erase_dead(body)


def _erase_dead(block: Block) -> None:
    """Erase the pure ops and loads of `block` whose results nothing uses."""
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.ops)):
            if isinstance(op, (*PURE, L.LoadOp)) and not any(r.uses for r in op.results):
                op.detach()
                op.erase()
                changed = True
