"""The element walk of `convert-sched-to-loop`: the scalar value of a stored tensor at an
output index, computed by walking back through a kernel's `pg_tensor` ops (see that pass's
docstring for the rules: views as index arithmetic, pads as masks, gathers as indexed loads,
reduces as `pg_loop.reduce`s hoisted to the outermost scope that can compute them).

    NestScopes(block)                   the scopes of one loop nest (cut back, restored)
    KernelLowering(buffers, scopes)     .element(value, idx, mask) -> the scalar SSA value
    alu(op, args)                       the scalar pg_uop twin of an elementwise pg_tensor op
"""

from __future__ import annotations

from collections.abc import Hashable
from math import prod

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_loop as L
from picograd.dialects import pg_sched as S
from picograd.dialects import pg_tensor as T
from picograd.dialects import pg_uop as U
from picograd.dialects.dtypes import is_float
from picograd.dialects.pg import BinaryKind, CmpKind, ReduceKind
from picograd.dialects.pg_tensor import dtype_of, shape_of
from picograd.interpreter.alu import reduce_identity
from picograd.passes.loop.views import Index, IndexMath, Scopes, source_index

_VIEWS = (T.ReshapeOp, T.PermuteOp, T.ExpandOp, T.SliceOp, T.FlipOp)  # pad is handled apart


def _is_view_of_load(value: SSAValue) -> bool:
    """Whether `value` is a loaded tensor seen through pad-free views."""
    while isinstance(value.owner, _VIEWS):
        value = value.owner.operands[0]
    return isinstance(value.owner, S.LoadOp)


class NestScopes(Scopes):
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


class KernelLowering:
    """Emits the scalar computation of one store's value at an output index."""

    def __init__(self, buffers: dict[SSAValue, SSAValue], scopes: NestScopes):
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
            return self.add(alu(op, [self.element(x, idx, mask) for x in op.operands]))
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


def alu(op: Operation, args: list[SSAValue]) -> Operation:
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
