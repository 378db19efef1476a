"""The vector half of `convert-loop-to-uop{vectorize=true}`: emitting one upcast range's
lanes as vectors, as `picograd/passes/loop/lane_vectors.py` planned them.

`VectorLanes` is a base of the pass's linearizer. While `vector_lanes` is set, the lane
index maps to an `Affine` form (`base + stride * lane`) instead of a value:

* index arithmetic on it computes the base and tracks the stride;
* a load with stride 1 is a `pg_uop.vload` (stride 2: `step(2)`), with stride 0 one
  scalar load; a store with
  stride 1 is a `pg_uop.vstore` (a uniform value broadcast), with stride 0 a scalar store;
* `binary` / `unary` ops with a vector operand become the same ops on vectors, their
  uniform operands broadcast.

Everything else (uniform values, accumulators, loops) is the linearizer's.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import VectorType
from xdsl.ir import Operation, SSAValue

from picograd.dialects import pg_loop, pg_uop
from picograd.dialects.flat_vectors import vector_of
from picograd.dialects.pg import BinaryKind
from picograd.passes.loop.lane_vectors import Affine


class VectorLanes:
    """Vector-lane emission for a linearizer that places ops with `_place`."""

    values: dict[SSAValue, Any]  # pg_loop value -> pg_uop value, or a lane index's Affine
    vector_lanes: int  # the lane count while lanes are emitted as vectors, else 0

    def _place(self, op: Operation, old: Operation | None = None, pure: bool = False
               ) -> Operation:
        raise NotImplementedError  # the linearizer's

    def _lane_op(self, op: Operation) -> bool:
        """Emit `op` if it takes a lane index or a vector (`lane_plan` said how); False for
        an op of uniform values, emitted as usual."""
        v = self.values
        match op:
            case pg_loop.IndexOp() if any(isinstance(v[x], Affine) for x in op.operands):
                self._affine_index(op)
            case pg_loop.LoadOp() if isinstance(v[op.index], Affine):
                self._lane_load(op)
            case pg_loop.StoreOp() if isinstance(v[op.index], Affine):
                self._lane_store(op)
            case pg_uop.BinaryOp() | pg_uop.UnaryOp() if any(
                    isinstance(v[x].type, VectorType) for x in op.operands):
                lanes = [self._vector(v[x]) for x in op.operands]
                new = (pg_uop.BinaryOp(op.kind.data, *lanes) if isinstance(op, pg_uop.BinaryOp)
                       else pg_uop.UnaryOp(op.kind.data, *lanes))
                self._place(new, op, pure=True)
            case _:
                return False
        return True

    def _vector(self, value: SSAValue) -> SSAValue:
        """`value` as a vector of the current lanes (a uniform scalar broadcast)."""
        if isinstance(value.type, VectorType):
            return value
        return self._place(pg_uop.BroadcastOp(value, self.vector_lanes), pure=True).results[0]

    def _affine_index(self, op: pg_loop.IndexOp) -> None:
        """Index arithmetic on a lane index: the base computed, the stride tracked (see
        `lane_vectors`: only add, sub and products with a constant reach here)."""
        def affine(x: SSAValue) -> Affine:
            value = self.values[x]
            return value if isinstance(value, Affine) else Affine(value, 0)

        a, b = affine(op.lhs), affine(op.rhs)
        kind = op.kind.data
        base = self._place(pg_uop.BinaryOp(kind, a.base, b.base), pure=True)
        if kind == BinaryKind.MUL:  # one side is a uniform constant
            factor = (op.lhs if isinstance(self.values[op.rhs], Affine) else op.rhs).owner
            assert isinstance(factor, pg_loop.ConstOp)
            stride = (a.stride + b.stride) * factor.value.data
        else:
            stride = a.stride + b.stride if kind == BinaryKind.ADD else a.stride - b.stride
        self.values[op.result] = Affine(base.results[0], stride)

    def _lane_load(self, op: pg_loop.LoadOp) -> None:
        index = self.values[op.index]
        buffer = self.values[op.buffer]
        if index.stride == 0:  # the same element for every lane
            self._place(pg_uop.LoadOp(buffer, index.base), op)
            return
        self._place(pg_uop.VLoadOp(buffer, index.base,
                                   vector_of(op.result.type, self.vector_lanes), index.stride),
                    op)

    def _lane_store(self, op: pg_loop.StoreOp) -> None:
        index = self.values[op.index]
        buffer, value = self.values[op.buffer], self.values[op.value]
        if index.stride == 0:  # a uniform value to one place
            self._place(pg_uop.StoreOp(value, buffer, index.base))
            return
        self._place(pg_uop.VStoreOp(self._vector(value), buffer, index.base))
