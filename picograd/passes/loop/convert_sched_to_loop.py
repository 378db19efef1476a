"""`convert-sched-to-loop`: turn each `pg_sched.kernel` into loops over its output.

Input: stage 2 (`pg_sched` kernels holding `pg_tensor` ops, plus the `@main` schedule).
Output: stage 3. Each `pg_sched.kernel @kN` becomes a `pg_loop.kernel @kN` with the same
arguments. For every `pg_sched.store` the stored tensor's shape becomes nested
`pg_loop.range ... global` (outermost = dim 0; size-1 dims get no range and index 0), and
the element at the current output position is computed by walking back through the ops:

* elementwise `pg_tensor` ops become the `pg_uop` ALU op of the same kind (a tensor
  constant becomes a scalar `pg_uop.const`, an iota the cast of its axis' index);
* views become index arithmetic (see `views.py`); a `pad` masks: the loads under it take the
  mask so they never read out of bounds, and the element is
  `pg_uop.where(mask, inner, pad value)` (or, for a pad directly over a view of a load, the
  load's `other` value);
* a `pg_tensor.gather` reads its index tensor's element, casts it to an index
  (`pg_uop.cast ... to index`) and asks for the table's element with that coordinate on
  its axis, under the mask `0 <= coordinate < size` (a masked load, or
  `pg_uop.where(mask, element, 0)` when the table is computed);
* a `pg_tensor.reduce` becomes one `pg_loop.reduce` of the same kind over the product of
  its reduced axes of size > 1 (split back into per-axis indices with div/mod), whose body
  computes the input element and yields it: one accumulation, left to right in the
  row-major order of the reduced axes as listed, as stage 1 defines it. With no axis of
  size > 1 the element itself is the result (`0.0 + x` for a float sum, so -0.0 gives +0.0
  as an accumulator that starts at 0.0 does). A reduce is emitted in the outermost loop
  whose index its result index depends on (never above the outermost output loop; in a
  kernel with no output loop, at its top, so `argmax`'s max runs once, not per element): a
  row-wise fused reduction (`kernel_grouping.py`) sits in the row loop, before the column
  loops or the reduce that asked for it, so it runs once per row; its index expressions are
  re-emitted there;
* a read of a `pg_sched.load`ed tensor is a `pg_loop.load` at the row-major offset.

A stored `pg_tensor.scatter_add` gets loops of its own: global ranges over the dims off its
axis, and inside them sequential `loop` ranges along the axis: one writing the base (left
out when the base is a load of the buffer stored to, as `convert-tensor-to-sched` makes it),
then one reading the index and adding each src element into the output element it names
(load, add, store; see `_lower_scatter_add`).

A stored `pg_tensor.attention` gets loops of its own too (`_lower_attention`): its rows are
split among global work items, and each computes a row's scores once into its row of the
kernel's scratch buffer (the argument before the output), then the row's max, weights, sum
and output from there.

The walk reuses what it already emitted for the same (value, index, mask) in the same or an
enclosing block, so a DAG stays a DAG. Index arithmetic is emitted plainly (trivial folds
only); `loop-simplify` cleans it up.

Guarantee: no `pg_sched.kernel`, `pg_sched.load`, `pg_sched.store` or `pg_tensor` op remains;
`@main` (alloc / launch / return) is untouched.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_loop as L
from picograd.dialects import pg_sched as S
from picograd.dialects import pg_tensor as T
from picograd.dialects import pg_uop as U
from picograd.dialects.dtypes import is_float
from picograd.dialects.pg import BinaryKind, BufferType, CmpKind, RangeKind, ReduceKind, UnaryKind
from picograd.dialects.pg_tensor import dtype_of, shape_of
from picograd.interpreter.alu import reduce_identity
from picograd.passes.loop.views import Index, IndexMath, Scopes, source_index

_VIEWS = (T.ReshapeOp, T.PermuteOp, T.ExpandOp, T.SliceOp, T.FlipOp)  # pad is handled apart


def _is_view_of_load(value: SSAValue) -> bool:
    """Whether `value` is a loaded tensor seen through pad-free views."""
    while isinstance(value.owner, _VIEWS):
        value = value.owner.operands[0]
    return isinstance(value.owner, S.LoadOp)


class _NestScopes(Scopes):
    """The scopes of one loop nest, which can be cut back to an enclosing loop: while cut,
    ops are added to that loop's body just before the op that opens the next scope (so they
    run before it), and lookups do not see the inner scopes."""

    def __init__(self, block: Block):
        super().__init__(block)
        self.anchors: list[Operation | None] = [None]  # where `add` inserts, per scope
        self.depth_of: dict[SSAValue, int] = {}  # a loop index -> the scope it indexes
        # output loops at the top of the nest: a reduce is never hoisted above the outermost
        # one (a CPU kernel's threads split it); with none it may go to the kernel's top
        self.output_loops = 1

    @property
    def depth(self) -> int:
        return len(self.anchors) - 1

    def push(self, block: Block, index: SSAValue | None = None) -> None:
        super().push(block)
        self.anchors.append(None)
        if index is not None:
            self.depth_of[index] = self.depth

    def pop(self) -> None:
        super().pop()
        self.anchors.pop()

    def add(self, op: Operation) -> Operation:
        block, _ = self._stack[-1]
        anchor = self.anchors[-1]
        if anchor is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, anchor)
        return op

    def cut(self, depth: int) -> tuple[list[tuple[Block, dict[Hashable, SSAValue]]],
                                        list[Operation | None]]:
        """Make scope `depth` the innermost; returns what `restore` needs."""
        saved = (self._stack[depth + 1:], self.anchors[depth:])
        opener = self._stack[depth + 1][0].parent_op()
        del self._stack[depth + 1:]
        self.anchors[depth:] = [opener]
        return saved

    def restore(self, saved: tuple[list[tuple[Block, dict[Hashable, SSAValue]]],
                                   list[Operation | None]]) -> None:
        inner, anchors = saved
        self._stack.extend(inner)
        self.anchors[-1:] = anchors  # the cut scope's own anchor, then the inner ones


class _KernelLowering:
    """Emits the scalar computation of one store's value at an output index."""

    def __init__(self, buffers: dict[SSAValue, SSAValue], scopes: _NestScopes):
        self.buffers = buffers  # pg_sched.kernel arguments -> pg_loop.kernel arguments
        self.scopes = scopes
        self.math = IndexMath(scopes)

    def add(self, op: Operation) -> SSAValue:
        return self.scopes.add(op).results[0]

    def element(self, value: SSAValue, idx: Index, mask: SSAValue | None,
                other: float | int | None = None) -> SSAValue:
        """The element of tensor `value` at `idx`. Loads read only where `mask` holds (None:
        always), giving `other` (default 0) elsewhere."""
        owner = value.owner
        key: Hashable = ("const", value) if isinstance(owner, T.ConstOp) else (
            "element", value, idx, mask, other)
        found = self.scopes.lookup(key)
        if found is None:
            found = self.scopes.remember(key, self._emit(value, idx, mask, other))
        return found

    def _emit(self, value: SSAValue, idx: Index, mask: SSAValue | None,
              other: float | int | None) -> SSAValue:
        op = value.owner
        if not isinstance(op, Operation):
            raise PassFailedException("convert-sched-to-loop: a kernel argument is used as a "
                                      "tensor; read buffers with pg_sched.load")
        if isinstance(op, S.LoadOp):
            offset = self.math.linear(idx, shape_of(op.result))
            buffer = self.buffers[op.buffer]
            if mask is None:
                return self.add(L.LoadOp(buffer, offset))
            return self.add(L.LoadOp(buffer, offset, mask, 0 if other is None else other))
        if isinstance(op, T.ConstOp):
            return self.add(U.ConstOp(op.scalar, dtype_of(op.result)))
        if isinstance(op, T.IotaOp):  # the index along its axis, as the element type
            return self.add(U.CastOp(idx[op.axis_index], dtype_of(op.result)))
        if isinstance(op, _VIEWS):
            src_idx, _ = source_index(op, idx, self.math)
            return self.element(op.input, src_idx, mask, other)
        if isinstance(op, T.PadOp):
            return self._pad(op, idx, mask)
        if isinstance(op, T.ContiguousOp):  # the kernel storing it computes its input
            return self.element(op.input, idx, mask, other)
        if isinstance(op, T.GatherOp):
            return self._gather(op, idx, mask)
        if isinstance(op, T.ReduceOp):
            return self._reduce(op, idx, mask)
        if isinstance(op, T.UnaryOp | T.BinaryOp | T.CmpOp | T.WhereOp | T.CastOp
                      | T.BitcastOp):
            return self.add(_alu(op, [self.element(x, idx, mask) for x in op.operands]))
        raise PassFailedException(f"convert-sched-to-loop: cannot lower {op.name} inside a "
                                  "pg_sched.kernel (expected pg_sched.load or pg_tensor ops)")

    def _pad(self, op: T.PadOp, idx: Index, mask: SSAValue | None) -> SSAValue:
        src_idx, pad_mask = source_index(op, idx, self.math)
        if pad_mask is None:
            return self.element(op.input, src_idx, mask)
        inner_mask = self.math.both(mask, pad_mask)
        if _is_view_of_load(op.input):
            return self.element(op.input, src_idx, inner_mask, op.scalar)
        inner = self.element(op.input, src_idx, inner_mask)
        fill = self.add(U.ConstOp(op.scalar, dtype_of(op.result)))
        return self.add(U.WhereOp(pad_mask, inner, fill))

    def _gather(self, op: T.GatherOp, idx: Index, mask: SSAValue | None) -> SSAValue:
        """The table's element at `idx` with the axis coordinate read from the index tensor;
        0 where that coordinate is outside the table (its loads are masked there, so they
        never read out of bounds)."""
        axis, n = op.axis_index, shape_of(op.table)[op.axis_index]
        at = self.add(U.CastOp(self.element(op.index, idx, mask), IndexType()))
        inside = self.math.both(self.math.cmp(CmpKind.GE, at, self.math.const(0)),
                                self.math.cmp(CmpKind.LT, at, self.math.const(n)))
        assert inside is not None
        src_idx = (*idx[:axis], at, *idx[axis + 1:])
        if _is_view_of_load(op.table):
            return self.element(op.table, src_idx, self.math.both(mask, inside))
        picked = self.element(op.table, src_idx, self.math.both(mask, inside))
        zero = self.add(U.ConstOp(0, dtype_of(op.result)))
        return self.add(U.WhereOp(inside, picked, zero))

    def _reduce(self, op: T.ReduceOp, idx: Index, mask: SSAValue | None) -> SSAValue:
        """The reduce's element at `idx`, emitted in the outermost scope that can compute it
        (see the module docstring)."""
        kept = [i for a, i in enumerate(idx) if a not in op.axis_list]
        needed = self._needed_depth([*kept, *([] if mask is None else [mask])])
        # not above the outermost output loop (a kernel without one: the top)
        floor = min(1, self.scopes.depth, self.scopes.output_loops)
        if needed is None or max(needed, floor) >= self.scopes.depth:
            return self._reduce_here(op, idx, mask)
        saved = self.scopes.cut(max(needed, floor))
        try:
            zero = self.math.const(0)
            outer = tuple(zero if a in op.axis_list else self._reemit(i)
                          for a, i in enumerate(idx))
            return self.element(op.result, outer, None if mask is None else self._reemit(mask))
        finally:
            self.scopes.restore(saved)

    def _needed_depth(self, values: list[SSAValue]) -> int | None:
        """The deepest scope whose loop index `values` depend on, or None when they are not
        plain index math (then the reduce stays where it is asked for)."""
        depth, stack = 0, list(values)
        while stack:
            value = stack.pop()
            owner = value.owner
            if value in self.scopes.depth_of:
                depth = max(depth, self.scopes.depth_of[value])
            elif isinstance(owner, L.IndexOp | L.CmpOp | L.AndOp):
                stack.extend(owner.operands)
            elif not isinstance(owner, L.ConstOp):
                return None
        return depth

    def _reemit(self, value: SSAValue) -> SSAValue:
        """`value` (index math over loop indices visible in the current scopes) computed in
        the current scopes: the same value when it is visible, else a copy."""
        owner = value.owner
        if value in self.scopes.depth_of:
            return value
        if isinstance(owner, L.ConstOp):
            return self.math.const(owner.value.data)
        if isinstance(owner, L.IndexOp):
            return self.math.binary(owner.kind.data, self._reemit(owner.lhs),
                                    self._reemit(owner.rhs))
        if isinstance(owner, L.CmpOp):
            return self.math.cmp(owner.kind.data, self._reemit(owner.lhs),
                                 self._reemit(owner.rhs))
        assert isinstance(owner, L.AndOp), "checked by _needed_depth"
        both = self.math.both(self._reemit(owner.lhs), self._reemit(owner.rhs))
        assert both is not None
        return both

    def _reduce_here(self, op: T.ReduceOp, idx: Index, mask: SSAValue | None) -> SSAValue:
        """One `pg_loop.reduce` over all reduced elements, in the row-major order of the
        reduced axes (as listed), so that a float sum accumulates in the order stage 1 does."""
        shape = shape_of(op.input)
        src_idx = list(idx)
        for a in op.axis_list:
            src_idx[a] = self.math.const(0)
        axes = [a for a in op.axis_list if shape[a] > 1]
        t = dtype_of(op.result)
        if any(shape[a] == 0 for a in op.axis_list):  # nothing to reduce: the identity
            return self.add(U.ConstOp(reduce_identity(op.kind.data, t).item(), t))
        if not axes:
            value = self.element(op.input, tuple(src_idx), mask)
            if op.kind.data == ReduceKind.SUM and is_float(t):
                # The accumulator starts at 0.0, and 0.0 + -0.0 is +0.0: keep the add.
                zero = self.add(U.ConstOp(0.0, t))
                return self.add(U.BinaryOp(BinaryKind.ADD, zero, value))
            return value  # max/min/prod from their identity give the element itself
        sizes = [shape[a] for a in axes]
        loop = L.ReduceOp(op.kind.data, 0, prod(sizes), t)
        loop.index.name_hint = f"r{axes[0]}"
        self.scopes.add(loop)
        self.scopes.push(loop.body.block, loop.index)
        for a, i in zip(axes, self.math.delinear(loop.index, sizes), strict=True):
            src_idx[a] = i
        self.scopes.add(L.YieldOp(self.element(op.input, tuple(src_idx), mask)))
        self.scopes.pop()
        return loop.result


def _alu(op: Operation, args: list[SSAValue]) -> Operation:
    """The scalar `pg_uop` twin of an elementwise `pg_tensor` op, on scalar operands."""
    if isinstance(op, T.UnaryOp):
        return U.UnaryOp(op.kind.data, args[0])
    if isinstance(op, T.BinaryOp):
        return U.BinaryOp(op.kind.data, args[0], args[1])
    if isinstance(op, T.CmpOp):
        return U.CmpOp(op.kind.data, args[0], args[1])
    if isinstance(op, T.WhereOp):
        return U.WhereOp(args[0], args[1], args[2])
    if isinstance(op, T.BitcastOp):
        return U.BitcastOp(args[0], dtype_of(op.result))
    assert isinstance(op, T.CastOp), op.name
    return U.CastOp(args[0], dtype_of(op.result))


def _global_nest(shape: tuple[int, ...], kernel_block: Block, skip: int | None = None
                 ) -> tuple[Block, _NestScopes, dict[int, SSAValue]]:
    """Nested global ranges over the dims of `shape` of size > 1 (but `skip`), outermost
    first, appended to `kernel_block`: the innermost body, its scopes and each dim's index."""
    block = kernel_block
    scopes = _NestScopes(block)
    loop_index: dict[int, SSAValue] = {}
    for d, n in enumerate(shape):
        if d != skip and n != 1:
            loop = L.RangeOp(0, n, RangeKind.GLOBAL)
            loop.index.name_hint = f"i{d}"
            block.add_op(loop)
            block = loop.body.block
            scopes.push(block, loop.index)
            loop_index[d] = loop.index
    scopes.output_loops = len(loop_index)
    return block, scopes, loop_index


def _lower_scatter_add(op: T.ScatterAddOp, out: SSAValue, kernel_block: Block,
                       buffers: dict[SSAValue, SSAValue]) -> None:
    """Append the loops of a scatter_add stored to `out`: global ranges over the dims off
    its axis, and in them two sequential loops along the axis, one writing the base's
    column, then one adding each src element at the row its index names (read, add, write
    back; an out-of-range index writes back an unchanged element). A work item owns whole
    columns, so no two of them touch one element, and the additions into an element happen
    in the index's order."""
    shape, axis = shape_of(op.result), op.axis_index
    n, m = shape[axis], shape_of(op.index)[axis]
    _, scopes, loop_index = _global_nest(shape, kernel_block, skip=axis)
    lowering = _KernelLowering(buffers, scopes)
    math = lowering.math

    def at(along: SSAValue) -> Index:
        return tuple(along if d == axis else loop_index[d] if d in loop_index else
                     math.const(0) for d in range(len(shape)))

    base = op.base.owner
    in_place = isinstance(base, S.LoadOp) and buffers[base.buffer] is out
    for size, name, add in ((0 if in_place else n, "i", False), (m if n else 0, "k", True)):
        if size == 0:
            continue
        loop = L.RangeOp(0, size, RangeKind.LOOP)
        loop.index.name_hint = f"{name}{axis}"
        scopes.add(loop)
        scopes.push(loop.body.block, loop.index)
        if not add:
            idx = at(loop.index)
            value = lowering.element(op.base, idx, None)
            scopes.add(L.StoreOp(value, out, math.linear(idx, shape)))
        else:
            src_idx = at(loop.index)
            row = lowering.add(U.CastOp(lowering.element(op.index, src_idx, None), IndexType()))
            inside = math.both(math.cmp(CmpKind.GE, row, math.const(0)),
                               math.cmp(CmpKind.LT, row, math.const(n)))
            assert inside is not None
            clamped = math.binary(BinaryKind.MIN, math.binary(BinaryKind.MAX, row,
                                                              math.const(0)), math.const(n - 1))
            offset = math.linear(at(clamped), shape)
            old = lowering.add(L.LoadOp(out, offset))
            added = lowering.add(U.BinaryOp(BinaryKind.ADD, old,
                                            lowering.element(op.src, src_idx, None)))
            scopes.add(L.StoreOp(lowering.add(U.WhereOp(inside, added, old)), out, offset))
        scopes.pop()


def _lanes(n: int) -> int:
    """The vector lanes an attention loop over n elements takes: the largest power of two
    up to 32 that divides n (1: none). With a tile of 4 rows that is 8 AVX-512 or 16 AVX2
    registers of accumulators: independent chains of multiply-adds."""
    return next((w for w in (32, 16, 8, 4, 2) if n % w == 0), 1)


class _AttentionRows:
    """Emits the loops of one attention kernel (see `_lower_attention`)."""

    def __init__(self, op: T.AttentionOp, lowering: _KernelLowering, scratch: SSAValue):
        self.op, self.lowering, self.scratch = op, lowering, scratch
        self.math = lowering.math
        self.t = dtype_of(op.result)
        self.opened: list[bool] = []  # per open scope: whether it is a range of its own

    def open(self, loop: L.RangeOp | L.ReduceOp, name: str) -> L.RangeOp | L.ReduceOp:
        loop.index.name_hint = name
        self.lowering.scopes.add(loop)
        self.lowering.scopes.push(loop.body.block, loop.index)
        self.opened.append(True)
        return loop

    def loop(self, n: int, name: str, kind: RangeKind = RangeKind.LOOP) -> SSAValue:
        """An index over [0, n): a range of `kind` (none when n is 1), its body now open
        until the matching `close`."""
        if n == 1:
            self.opened.append(False)
            return self.math.const(0)
        return self.open(L.RangeOp(0, n, kind), name).index

    def reduce(self, kind: ReduceKind, n: int, name: str) -> L.ReduceOp:
        loop = self.open(L.ReduceOp(kind, 0, n, self.t), name)
        assert isinstance(loop, L.ReduceOp)
        return loop

    def close(self, value: SSAValue | None = None) -> None:
        if value is not None:
            self.lowering.scopes.add(L.YieldOp(value))
        if self.opened.pop():
            self.lowering.scopes.pop()

    def blocks(self, n: int, name: str) -> SSAValue:
        """The start of a block of `_lanes(n)` elements, in a sequential loop over them."""
        return self.math.mul(self.loop(n // _lanes(n), f"{name}_o"), _lanes(n))

    def lane(self, n: int, start: SSAValue, name: str) -> SSAValue:
        """`start` plus the lane index of an upcast range over `_lanes(n)` vector lanes."""
        return self.math.add(start, self.loop(_lanes(n), f"{name}_lane", RangeKind.UPCAST))

    def lanes(self, n: int, name: str) -> SSAValue:
        """An index over [0, n): blocks of vector lanes (two ranges to close)."""
        return self.lane(n, self.blocks(n, name), name)

    def const(self, value: float) -> SSAValue:
        return self.lowering.add(U.ConstOp(value, self.t))

    def alu(self, kind: BinaryKind, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.lowering.add(U.BinaryOp(kind, a, b))

    def read(self, base: SSAValue, j: SSAValue) -> SSAValue:
        return self.lowering.add(L.LoadOp(self.scratch, self.math.add(base, j)))

    def write(self, value: SSAValue, base: SSAValue, j: SSAValue) -> None:
        self.lowering.scopes.add(L.StoreOp(value, self.scratch, self.math.add(base, j)))


def _lower_attention(op: T.AttentionOp, out: SSAValue, scratch: SSAValue, kernel_block: Block,
                     buffers: dict[SSAValue, SSAValue]) -> None:
    """Append the loops of an attention stored to `out`. Its rows go in tiles of `tile`
    queries of one head (`pg_sched.attention_tile`), split evenly among global work items,
    as many as `scratch` has tiles of rows for; a work item takes its tiles one after
    another, in its `tile` rows of `scratch` (S scores each):

        scores   x[t, j] = scale * sum_e q[t, e] k[j, e] + bias[t, j]   (t in the tile)
        per row  m = max_j x[j];  x[j] = exp(x[j] - (m == -inf ? 0 : m))
                 l = sum_j x[j];  x[j] = x[j] / (l == 0 ? 1 : l)
        output   out[t, d] = sum_j x[t, j] v[j, d]

    The scores and the output are register tiles (the tile's rows x vector lanes along j,
    resp. d: the multiply-adds of the rows interleave, and k's and v's loads are shared
    by the rows); they are contiguous where k is stored transposed and v as is. A -inf
    score gets weight exp(-inf) = 0, and a row of them weights 0 and output 0 (torch's safe
    softmax). Each score is computed once, and only the tile's rows are ever in memory."""
    q, v = shape_of(op.query), shape_of(op.value)
    lead, (big_l, e_size), (big_s, ev) = q[:-2], q[-2:], v[-2:]
    rows = prod(lead) * big_l
    tile = S.attention_tile(big_l)
    assert isinstance(scratch.type, BufferType)
    items = scratch.type.size.data // (tile * max(big_s, 1))
    assert items and (rows // tile) % items == 0, "convert-tensor-to-sched sized it"
    scopes = _NestScopes(kernel_block)
    scopes.output_loops = 0
    lowering = _KernelLowering(buffers, scopes)
    math = lowering.math
    emit = _AttentionRows(op, lowering, scratch)
    item = math.const(0)
    if items > 1:
        loop = L.RangeOp(0, items, RangeKind.GLOBAL)
        loop.index.name_hint = "w"
        kernel_block.add_op(loop)
        scopes.push(loop.body.block, loop.index)
        scopes.output_loops = 1
        item = loop.index
    per_item = rows // tile // items
    group = math.add(math.mul(item, per_item), emit.loop(per_item, "g"))
    *at_lead, tile_at = math.delinear(group, (*lead, big_l // tile))

    def query(t: SSAValue) -> SSAValue:
        return math.add(math.mul(tile_at, tile), t)

    def base(t: SSAValue) -> SSAValue:
        return math.mul(math.add(math.mul(item, tile), t), big_s)

    j0 = emit.blocks(big_s, "j")  # scores, a tile's rows x lanes of j
    t = emit.loop(tile, "t", RangeKind.UPCAST)
    j = emit.lane(big_s, j0, "j")
    i = query(t)
    dot = emit.reduce(ReduceKind.SUM, e_size, "e")
    emit.close(emit.alu(BinaryKind.MUL,
                        lowering.element(op.query, (*at_lead, i, dot.index), None),
                        lowering.element(op.key, (*at_lead, j, dot.index), None)))
    scaled = emit.alu(BinaryKind.MUL, dot.result, emit.const(op.scale_value))
    emit.write(emit.alu(BinaryKind.ADD, scaled,
                        lowering.element(op.bias, (*at_lead, i, j), None)), base(t), j)
    for _ in range(3):
        emit.close()

    t = emit.loop(tile, "t")  # per row: softmax in place
    row = base(t)
    peak = emit.reduce(ReduceKind.MAX, big_s, "j")
    emit.close(emit.read(row, peak.index))
    none = lowering.add(U.CmpOp(CmpKind.EQ, peak.result, emit.const(-float("inf"))))
    shift = lowering.add(U.WhereOp(none, emit.const(0.0), peak.result))
    j = emit.lanes(big_s, "j")
    emit.write(lowering.add(U.UnaryOp(UnaryKind.EXP, emit.alu(BinaryKind.SUB,
                                                               emit.read(row, j), shift))),
               row, j)
    emit.close()
    emit.close()
    total = emit.reduce(ReduceKind.SUM, big_s, "j")
    emit.close(emit.read(row, total.index))
    empty = lowering.add(U.CmpOp(CmpKind.EQ, total.result, emit.const(0.0)))
    divisor = lowering.add(U.WhereOp(empty, emit.const(1.0), total.result))
    j = emit.lanes(big_s, "j")
    emit.write(emit.alu(BinaryKind.DIV, emit.read(row, j), divisor), row, j)
    for _ in range(3):
        emit.close()

    d0 = emit.blocks(ev, "d")  # output, a tile's rows x lanes of d
    t = emit.loop(tile, "t", RangeKind.UPCAST)
    d = emit.lane(ev, d0, "d")
    mix = emit.reduce(ReduceKind.SUM, big_s, "j")
    emit.close(emit.alu(BinaryKind.MUL, emit.read(base(t), mix.index),
                        lowering.element(op.value, (*at_lead, mix.index, d), None)))
    scopes.add(L.StoreOp(mix.result, out, math.linear((*at_lead, query(t), d),
                                                      shape_of(op.result))))
    for _ in range(4):  # d's lanes, the tile, d's blocks, the work item's tiles
        emit.close()


def _lower_store(store: S.StoreOp, kernel_block: Block,
                 buffers: dict[SSAValue, SSAValue], scratch: SSAValue | None) -> None:
    """Append the loop nest computing and writing `store`'s tensor to `kernel_block`."""
    if isinstance(store.value.owner, T.ScatterAddOp):
        _lower_scatter_add(store.value.owner, buffers[store.buffer], kernel_block, buffers)
        return
    if isinstance(store.value.owner, T.AttentionOp):
        assert scratch is not None, "convert-tensor-to-sched gives it a scratch buffer"
        _lower_attention(store.value.owner, buffers[store.buffer], scratch, kernel_block,
                         buffers)
        return
    shape = shape_of(store.value)
    block, scopes, loop_index = _global_nest(shape, kernel_block)
    lowering = _KernelLowering(buffers, scopes)
    math = lowering.math
    idx = tuple(loop_index[d] if d in loop_index else math.const(0) for d in range(len(shape)))
    value = lowering.element(store.value, idx, None)
    block.add_op(L.StoreOp(value, buffers[store.buffer], math.linear(idx, shape)))


def lower_kernel(kernel: S.KernelOp) -> L.KernelOp:
    """The `pg_loop.kernel` computing what `kernel` stores."""
    new = L.KernelOp(kernel.sym_name.data, [a.type for a in kernel.args])
    buffers: dict[SSAValue, SSAValue] = {}
    for old, arg in zip(kernel.args, new.args, strict=True):
        arg.name_hint = old.name_hint
        buffers[old] = arg
    # an attention kernel's scratch buffer comes just before its output (convert-tensor-
    # to-sched)
    attention = any(isinstance(op, T.AttentionOp) for op in kernel.body.block.ops)
    scratch = new.args[-2] if attention else None
    for op in kernel.body.block.ops:
        if isinstance(op, S.StoreOp):
            _lower_store(op, new.body.block, buffers, scratch)
    _erase_unused(new)
    return new


_CLEANED = (L.ConstOp, L.IndexOp, L.CmpOp, L.AndOp, U.ConstOp)


def _erase_unused(kernel: L.KernelOp) -> None:
    """Drop the index constants and expressions that ended up unused (e.g. the index 0 of a
    size-1 output dim that no load needs). Reverse order erases whole dead chains."""
    for op in list(kernel.walk(reverse=True)):
        if isinstance(op, _CLEANED) and not op.results[0].uses:
            op.detach()
            op.erase()


@dataclass(frozen=True)
class ConvertSchedToLoopPass(ModulePass):
    """Lower `pg_sched` kernels (stage 2) to `pg_loop` kernels (stage 3).

    Input dialects: builtin, func, pg_sched, pg_tensor. Output dialects: builtin, func,
    pg_sched (the `@main` schedule only), pg_loop, pg_uop (ALU ops). See the module
    docstring for the guarantee.
    """

    name = "convert-sched-to-loop"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        block = op.body.block
        for kernel in list(block.ops):
            if isinstance(kernel, S.KernelOp):
                block.insert_op_before(lower_kernel(kernel), kernel)
                block.erase_op(kernel)
