"""The primitives every part of the LLVM lowering builds with: the LLVM type of a picograd
type, constants, splats and intrinsic name suffixes (over either builder of `builder.py`)."""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, IntegerType, VectorType, i32, i64
from xdsl.ir import Attribute

from picograd.dialects.dtypes import is_float
from picograd.lowering.llvm.builder import LlvmBuilder, Value


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


def const(b: LlvmBuilder, value: float | int, t: Attribute) -> Value:
    """The constant `value` of scalar type `t` (once per function, at the top of its entry
    block, which dominates every block: each kernel uses the same few hundreds of times)."""
    lt = llvm_type(t)
    return b.constant(float(value) if is_float(t) else int(value), lt)


def splat(b: LlvmBuilder, x: Value, lanes: int) -> Value:
    """A vector of `lanes` copies of `x`: inserted into lane 0, shuffled to every lane (once
    per function, at the top of the entry block, when `x` is a constant)."""
    hoisted = id(x) in b.constant_values
    if hoisted and (known := b.splats.get((id(x), lanes))) is not None:
        return known
    vector_type = VectorType(b.type_of(x), [lanes])
    zero = const(b, 0, i32)
    first = b.insert_element(b.undef(vector_type, hoist=hoisted), x, zero, hoist=hoisted)
    value = b.shuffle_vector(first, first, [0] * lanes, vector_type, hoist=hoisted)
    if hoisted:
        b.splats[(id(x), lanes)] = value
    return value
