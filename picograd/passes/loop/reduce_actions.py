"""The loop actions that reorder a reduction: `split_reduce` and `block_reduce`.

    split_reduce(kernel, n, factor)      reduce `n` -> `factor` partial reductions in lanes
    block_reduce(kernel, n, size, axis)  reduce `n` in blocks of `size` iterations, the
                                         blocks an ordered loop directly in range `axis`

Both combine the same values in another order, so a float sum rounds differently (as any
vectorised, parallel or blocked sum does); integer sums give the same values.

`block_reduce` is cache blocking. A matmul tile reads a K x cols panel of B for every row
tile; when the panel is larger than the cache, each row tile streams it from memory again.
Blocking K moves the loop over K blocks out, around the row tiles, so one block of the
panel stays in cache while every row tile passes; each block adds its partial sums to
the output that the earlier blocks stored:

    pg_loop.range %j = 0 to 32 global {            pg_loop.range %j = 0 to 32 global {
      pg_loop.range %i = 0 to 512 global {            pg_loop.range %r_block = 0 to 8 loop {
        %s = pg_loop.reduce sum %r = 0 to 2048          pg_loop.range %i = 0 to 512 global {
        pg_loop.store %s, %out[%x]                        %s = pg_loop.reduce sum %r_in = 0 to 256
      }                                                     (%r = %r_block * 256 + %r_in)
    }                                                     %p = pg_loop.load %out[%x] if %r_block > 0
                                                          pg_loop.store %p + %s, %out[%x]
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Block, Operation, SSAValue

from picograd.dialects import pg_loop as L
from picograd.dialects import pg_uop
from picograd.dialects.dtypes import is_bool
from picograd.dialects.pg import BinaryKind, CmpKind, RangeKind, ReduceKind
from picograd.passes.loop.loop_nest import (
    INDEPENDENT,
    PURE,
    ScheduleError,
    axis_range,
    rebuild_index,
    reduce_at,
)

# ── split_reduce ───────────────────────────────────────────────────────────


def split_reduce_problem(red: L.ReduceOp, factor: int) -> str | None:
    """Why reduce `red` cannot become `factor` partial reductions, or None when it can."""
    size = red.end.data - red.start.data
    if factor < 2:
        return f"factor {factor} is below 2"
    if size % factor:
        return f"factor {factor} does not divide the reduce's {size} iterations"
    if red.range_kind.data != RangeKind.REDUCE:
        return f"it is a reduce over {red.range_kind.data.value} lanes already"
    return None


def split_reduce(kernel: L.KernelOp, n: int, factor: int) -> None:
    """Reduce `n` over `[s, e)` becomes a reduce over `factor` upcast lanes `l` of partial
    reductions over `(e - s) // factor` blocks `b`, the index being `s + b * factor + l`:
    lane `l` combines iterations `l, l + factor, ...` and the lanes' results are combined
    in lane order. Lanes side by side read consecutive elements (one vector load)."""
    action = f"split_reduce({n}, {factor})"
    red = reduce_at(kernel, n, action)
    if (problem := split_reduce_problem(red, factor)) is not None:
        raise ScheduleError(f"@{kernel.sym_name.data}: {action}: {problem}")
    kind, t, start = red.kind.data, red.result.type, red.start.data
    lanes = L.ReduceOp(kind, 0, factor, t, range_kind=RangeKind.UPCAST)
    blocks = L.ReduceOp(kind, 0, (red.end.data - start) // factor, t)
    name = red.index.name_hint or "r"
    lanes.index.name_hint, blocks.index.name_hint = f"{name}_lane", f"{name}_o"
    _move_body(red, blocks)
    rebuild_index(red.index, blocks.index, lanes.index, factor, start, blocks.body.block)
    lanes.body.block.add_ops([blocks, L.YieldOp(blocks.result)])
    _replace(red, lanes)


def _move_body(red: L.ReduceOp, into: L.ReduceOp) -> None:
    for op in list(red.body.block.ops):
        op.detach()
        into.body.block.add_op(op)


def _replace(red: L.ReduceOp, by: L.ReduceOp) -> None:
    """Put `by` in `red`'s place, its result in the place of `red`'s."""
    parent = red.parent_block()
    assert parent is not None
    parent.insert_op_before(by, red)
    red.result.replace_all_uses_with(by.result)
    by.result.name_hint = red.result.name_hint
    red.detach()
    red.erase()


# ── block_reduce ───────────────────────────────────────────────────────────


def block_reduce_problem(red: L.ReduceOp, size: int, around: L.RangeOp) -> str | None:
    """Why reduce `red` cannot be computed in blocks of `size` iterations looped directly in
    range `around`, or None when it can. It must be a sum, its value stored as it is, and
    range `around` must do nothing else: no other store, no other reduce, no read of the
    stored buffer. The ranges between `around` and the reduce must be independent, and
    their iterations must store distinct elements (`distinct_stores`): each element then
    gets its blocks in order."""
    length = red.end.data - red.start.data
    if red.kind.data != ReduceKind.SUM or is_bool(red.result.type):
        return "only a sum of numbers adds up by blocks"
    if red.range_kind.data != RangeKind.REDUCE:
        return f"it is a reduce over {red.range_kind.data.value} lanes"
    if not 1 <= size < length or length % size:
        return f"size {size} must divide the reduce's {length} iterations, below {length}"
    between = _ranges_between(red, around)
    if between is None:
        return "the axis does not hold the reduce, or another reduce holds it"
    ordered = next((r for r in between if r.kind.data not in INDEPENDENT), None)
    if ordered is not None:
        return f"a {ordered.kind.data.value} range between them runs in order"
    store = _only_store(red)
    if store is None:
        return "its value is not stored as it is, in the reduce's block"
    for op in around.body.walk():
        if isinstance(op, L.StoreOp) and op is not store:
            return "the axis holds another store"
        if isinstance(op, L.ReduceOp) and op is not red and not red.is_ancestor(op):
            return "the axis holds another reduce"
        if isinstance(op, L.LoadOp) and op.buffer == store.buffer:
            return "the axis reads the buffer the reduce is stored to"
    if not distinct_stores(store.index, between):
        return "its store's index is not one element per iteration of the ranges between"
    return None


def _ranges_between(red: L.ReduceOp, around: L.RangeOp) -> list[L.RangeOp] | None:
    """The ranges holding `red` inside `around`, or None when `around` does not hold it
    or a reduce does."""
    between: list[L.RangeOp] = []
    parent = red.parent_op()
    while parent is not around:
        if not isinstance(parent, L.RangeOp):
            return None
        between.append(parent)
        parent = parent.parent_op()
    return between


def _only_store(red: L.ReduceOp) -> L.StoreOp | None:
    uses = list(red.result.uses)
    if len(uses) != 1:
        return None
    store = uses[0].operation
    if (not isinstance(store, L.StoreOp) or store.value != red.result
            or store.parent_block() is not red.parent_block()):
        return None
    return store


def distinct_stores(index: SSAValue, ranges: list[L.RangeOp]) -> bool:
    """Whether `index` takes a different value in every iteration of `ranges` (the other
    indices held): it is `sum(c * i) + rest`, `rest` free of their indices, and each
    coefficient exceeds what the smaller ones can add up to (a mixed-radix layout, as a
    row-major store is)."""
    sizes = {r.index: r.end.data - r.start.data for r in ranges}
    terms = _affine(index, sizes)
    if terms is None:
        return False
    reach = 0
    for step, size in sorted((abs(terms.get(i, 0)), n) for i, n in sizes.items() if n > 1):
        if step <= reach:
            return False
        reach += step * (size - 1)
    return True


def _affine(value: SSAValue, indices: dict[SSAValue, int]) -> dict[SSAValue, int] | None:
    """`value` as coefficients of `indices` (the rest free of them), or None when it is not
    a sum of constant multiples of them."""
    if value in indices:
        return {value: 1}
    if _free_of(value, indices):
        return {}
    op = value.owner
    if not isinstance(op, L.IndexOp):
        return None
    kind = op.kind.data
    if kind in (BinaryKind.ADD, BinaryKind.SUB):
        lhs, rhs = _affine(op.lhs, indices), _affine(op.rhs, indices)
        if lhs is None or rhs is None:
            return None
        sign = 1 if kind == BinaryKind.ADD else -1
        return {i: lhs.get(i, 0) + sign * rhs.get(i, 0) for i in lhs.keys() | rhs.keys()}
    if kind == BinaryKind.MUL:
        for scaled, factor in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            const = factor.owner
            if isinstance(const, L.ConstOp) and (terms := _affine(scaled, indices)) is not None:
                return {i: c * const.value.data for i, c in terms.items()}
    return None


def _free_of(value: SSAValue, indices: dict[SSAValue, int]) -> bool:
    """Whether `value` is computed from constants and other ranges' indices only."""
    if value in indices:
        return False
    op = value.owner
    if isinstance(op, L.ConstOp):
        return True
    if isinstance(op, L.IndexOp):
        return _free_of(op.lhs, indices) and _free_of(op.rhs, indices)
    return not isinstance(op, Operation)  # a block argument: another range's index


def block_reduce(kernel: L.KernelOp, n: int, size: int, axis: int) -> None:
    """Reduce `n` (a sum over `[s, e)`) becomes a sum over one block of `size` iterations,
    `s + block * size + lane`, in an ordered `loop` range over the `(e - s) // size` blocks
    that now holds the whole body of range `axis`; the store adds each block's sum to what
    the earlier blocks stored (a masked load, none for the first block). See the module
    docstring; `block_reduce_problem` says when it applies."""
    action = f"block_reduce({n}, {size}, {axis})"
    red = reduce_at(kernel, n, action)
    around = axis_range(kernel, axis, action)
    if (problem := block_reduce_problem(red, size, around)) is not None:
        raise ScheduleError(f"@{kernel.sym_name.data}: {action}: {problem}")
    store = _only_store(red)
    assert store is not None
    start, length, t = red.start.data, red.end.data - red.start.data, red.result.type
    blocks = L.RangeOp(0, length // size, RangeKind.LOOP)
    name = red.index.name_hint or "r"
    blocks.index.name_hint = f"{name}_block"
    for op in list(around.body.block.ops):
        op.detach()
        blocks.body.block.add_op(op)
    around.body.block.add_op(blocks)
    part = L.ReduceOp(red.kind.data, 0, size, t)
    part.index.name_hint = f"{name}_in"
    _move_body(red, part)
    rebuild_index(red.index, blocks.index, part.index, size, start, part.body.block)
    _replace(red, part)
    parent = store.parent_block()
    assert parent is not None
    zero = L.ConstOp(0)
    later = L.CmpOp(CmpKind.GT, blocks.index, zero.result)
    earlier = L.LoadOp(store.buffer, store.index, later.result, 0)
    total = pg_uop.BinaryOp(BinaryKind.ADD, earlier.result, part.result)
    for op in (zero, later, earlier, total):
        parent.insert_op_before(op, store)
    store.operands = [total.result, store.buffer, store.index]


# ── stash ──────────────────────────────────────────────────────────────────


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
