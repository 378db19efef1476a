"""The primitives every part of the LLVM lowering builds with: an op appender, the LLVM
type of a picograd type, constants, splats and intrinsic name suffixes."""

from __future__ import annotations

from typing import TypeVar

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from picograd.dialects.dtypes import is_float

OpT = TypeVar("OpT", bound=Operation)


class Emitter:
    """Appends ops to the current block (`block` moves as control flow is built). Constants
    and splats of constants are made once per function, at the top of its entry block (which
    dominates every block): each kernel uses the same few hundreds of times."""

    def __init__(self, block: Block):
        self.block = block
        self.entry = block
        self._hoisted: Operation | None = None  # the last op placed at the entry's top
        self.constants: dict[tuple[Attribute, Attribute], SSAValue] = {}
        self.constant_values: set[SSAValue] = set()
        self.splats: dict[tuple[SSAValue, int], SSAValue] = {}

    def hoist(self, op: Operation) -> SSAValue:
        """Place `op` (whose operands are hoisted ones) at the top of the entry block."""
        if self._hoisted is not None:
            self.entry.insert_op_after(op, self._hoisted)
        elif self.entry.first_op is not None:
            self.entry.insert_op_before(op, self.entry.first_op)
        else:
            self.entry.add_op(op)
        self._hoisted = op
        return op.results[0]

    def __call__(self, op: OpT) -> OpT:
        self.block.add_op(op)
        return op

    def value(self, op: Operation) -> SSAValue:
        """Append a single-result op and return its result."""
        self.block.add_op(op)
        return op.results[0]


def llvm_type(t: Attribute) -> Attribute:
    """The LLVM value type of a picograd scalar type: index -> i64, ui8 -> i8 (signless)."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, IntegerType):
        return IntegerType(t.width.data)
    return t


def suffix(t: Attribute) -> str:
    """An intrinsic's type suffix: `f32`, `i64`, `v16f32`."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{suffix(t.element_type)}"
    lt = llvm_type(t)
    return f"i{lt.width.data}" if isinstance(lt, IntegerType) else str(lt)


def const(emit: Emitter, value: float | int, t: Attribute) -> SSAValue:
    """The constant `value` of scalar type `t` (one per function, see `Emitter`)."""
    lt = llvm_type(t)
    attr = FloatAttr(float(value), lt) if is_float(t) else IntegerAttr(int(value), lt)  # type: ignore[arg-type]
    key = (attr, lt)  # float attributes compare by bits: -0.0 is not 0.0
    if (known := emit.constants.get(key)) is None:
        known = emit.constants[key] = emit.hoist(llvm.ConstantOp(attr, lt))
        emit.constant_values.add(known)
    return known


def splat(emit: Emitter, x: SSAValue, lanes: int) -> SSAValue:
    """A vector of `lanes` copies of `x`: inserted into lane 0, shuffled to every lane (once
    per function when `x` is a constant)."""
    hoisted = x in emit.constant_values
    if hoisted and (known := emit.splats.get((x, lanes))) is not None:
        return known
    place = emit.hoist if hoisted else emit.value
    vector_type = VectorType(x.type, [lanes])
    zero = const(emit, 0, i32)
    first = place(llvm.InsertElementOp(place(llvm.UndefOp(vector_type)), x, zero))
    mask = DenseArrayBase.from_list(i32, [0] * lanes)
    value = place(llvm.ShuffleVectorOp(first, first, mask, vector_type))
    if hoisted:
        emit.splats[(x, lanes)] = value
    return value
