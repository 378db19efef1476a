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

A stored `pg_tensor.attention` gets loops of its own too (`attention_loops.py`): its rows are
split among global work items, and each computes a row's scores once into its row of the
kernel's scratch buffer (the argument before the output), then the row's max, weights, sum
and output from there.

The walk reuses what it already emitted for the same (value, index, mask) in the same or an
enclosing block, so a DAG stays a DAG. Index arithmetic is emitted plainly (trivial folds
only); `loop-simplify` cleans it up.

Guarantee: no `pg_sched.kernel`, `pg_sched.load`, `pg_sched.store` or `pg_tensor` op remains;
`@main` (alloc / launch / return) is untouched.

The element walk is `element_lowering.py`, the attention loops `attention_loops.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass

from picograd.dialects import pg_loop as L
from picograd.dialects import pg_sched as S
from picograd.dialects import pg_tensor as T
from picograd.dialects import pg_uop as U
from picograd.dialects.pg import BinaryKind, CmpKind, RangeKind
from picograd.dialects.pg_tensor import shape_of
from picograd.passes.loop.attention_loops import lower_attention
from picograd.passes.loop.element_lowering import KernelLowering, NestScopes
from picograd.passes.loop.views import Index


def _global_nest(shape: tuple[int, ...], kernel_block: Block, skip: int | None = None
                 ) -> tuple[Block, NestScopes, dict[int, SSAValue]]:
    """Nested global ranges over the dims of `shape` of size > 1 (but `skip`), outermost
    first, appended to `kernel_block`: the innermost body, its scopes and each dim's index."""
    block = kernel_block
    scopes = NestScopes(block)
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
    lowering = KernelLowering(buffers, scopes)
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


def _lower_store(store: S.StoreOp, kernel_block: Block,
                 buffers: dict[SSAValue, SSAValue], scratch: SSAValue | None) -> None:
    """Append the loop nest computing and writing `store`'s tensor to `kernel_block`."""
    if isinstance(store.value.owner, T.ScatterAddOp):
        _lower_scatter_add(store.value.owner, buffers[store.buffer], kernel_block, buffers)
        return
    if isinstance(store.value.owner, T.AttentionOp):
        assert scratch is not None, "convert-tensor-to-sched gives it a scratch buffer"
        lower_attention(store.value.owner, buffers[store.buffer], scratch, kernel_block,
                         buffers)
        return
    shape = shape_of(store.value)
    block, scopes, loop_index = _global_nest(shape, kernel_block)
    lowering = KernelLowering(buffers, scopes)
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
