"""The loop actions that reorder a reduction: `split_reduce`, `chunk_reduce`, `block_reduce`.

    split_reduce(kernel, n, factor)      reduce `n` -> `factor` partial reductions in lanes
    chunk_reduce(kernel, n, size)        reduce `n` -> a reduce of partial reductions over
                                         consecutive chunks of `size` iterations
    block_reduce(kernel, n, size, axis)  reduce `n` in blocks of `size` iterations, the
                                         blocks an ordered loop directly in range `axis`

All combine the same values in another order, so a float sum rounds differently (as any
vectorised, parallel or blocked sum does); integer sums give the same values.

`chunk_reduce` is for accuracy. A float sum kept in one accumulator loses about one rounding
per term relative to its running total: 2**25 ones sum to 2**24 in float32, where adding 1
no longer changes the total. Summed in chunks, each partial is small next to its terms and
the total sees one term per chunk, so the error grows with `size + n / size` instead of `n`
(docs/design.md, "Float sums: accumulation and error bound"):

    %s = pg_loop.reduce sum %r = 0 to 4096      %s = pg_loop.reduce sum %r_c = 0 to 64 : f32 {
        : f32 { ...body(%r)... }                   %p = pg_loop.reduce sum %r_in = 0 to 64 {
                                                     %r = %r_c * 64 + %r_in ; ...body(%r)...
                                                   }
                                                   pg_loop.yield %p : f32
                                                 }

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

from xdsl.ir import Operation, SSAValue

from picograd.dialects import pg_loop as L
from picograd.dialects import pg_uop
from picograd.dialects.dtypes import is_bool
from picograd.dialects.pg import BinaryKind, CmpKind, RangeKind, ReduceKind
from picograd.passes.loop.loop_nest import (
    INDEPENDENT,
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
    _nest(red, lanes, blocks, blocks.index, lanes.index, factor)


# ── chunk_reduce ───────────────────────────────────────────────────────────


def chunk_reduce_problem(red: L.ReduceOp, size: int) -> str | None:
    """Why reduce `red` cannot be summed in chunks of `size`, or None when it can."""
    length = red.end.data - red.start.data
    if red.kind.data != ReduceKind.SUM:
        return "only a sum gains accuracy in chunks"
    if red.range_kind.data != RangeKind.REDUCE:
        return f"it is a reduce over {red.range_kind.data.value} lanes"
    if not 2 <= size < length or length % size:
        return f"size {size} must divide the reduce's {length} iterations, from 2 to below it"
    return None


def chunk_reduce(kernel: L.KernelOp, n: int, size: int) -> None:
    """Reduce `n` over `[s, e)` becomes a reduce over `(e - s) // size` chunks `c` of
    partial reductions over `size` iterations `i`, the index being `s + c * size + i`: each
    chunk sums consecutive iterations, then the chunks' sums are added in order."""
    action = f"chunk_reduce({n}, {size})"
    red = reduce_at(kernel, n, action)
    if (problem := chunk_reduce_problem(red, size)) is not None:
        raise ScheduleError(f"@{kernel.sym_name.data}: {action}: {problem}")
    kind, t, start = red.kind.data, red.result.type, red.start.data
    chunks = L.ReduceOp(kind, 0, (red.end.data - start) // size, t)
    part = L.ReduceOp(kind, 0, size, t)
    name = red.index.name_hint or "r"
    chunks.index.name_hint, part.index.name_hint = f"{name}_c", f"{name}_in"
    _nest(red, chunks, part, chunks.index, part.index, size)


def _nest(red: L.ReduceOp, outer: L.ReduceOp, inner: L.ReduceOp, block: SSAValue,
          lane: SSAValue, factor: int) -> None:
    """Put `outer` in `red`'s place holding `inner`, which takes `red`'s body, its index
    rebuilt as `start + block * factor + lane` (`block`, `lane`: the two new indices)."""
    _move_body(red, inner)
    rebuild_index(red.index, block, lane, factor, red.start.data, inner.body.block)
    outer.body.block.add_ops([inner, L.YieldOp(inner.result)])
    _replace(red, outer)


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
