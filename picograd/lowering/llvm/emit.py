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
    """Appends ops to the current block (`block` moves as control flow is built)."""

    def __init__(self, block: Block):
        self.block = block

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
    lt = llvm_type(t)
    attr = FloatAttr(float(value), lt) if is_float(t) else IntegerAttr(int(value), lt)  # type: ignore[arg-type]
    return emit.value(llvm.ConstantOp(attr, lt))


def splat(emit: Emitter, x: SSAValue, lanes: int) -> SSAValue:
    """A vector of `lanes` copies of `x`: inserted into lane 0, shuffled to every lane."""
    vector_type = VectorType(x.type, [lanes])
    first = emit.value(llvm.InsertElementOp(emit.value(llvm.UndefOp(vector_type)), x,
                                            const(emit, 0, i32)))
    mask = DenseArrayBase.from_list(i32, [0] * lanes)
    return emit.value(llvm.ShuffleVectorOp(first, first, mask, vector_type))
