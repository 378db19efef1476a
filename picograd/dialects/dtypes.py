"""Element types every stage understands, and their numpy twins.

IR element types are xDSL builtin types: `f32`, `i32`, `i1` (bool) and friends. Signless
integers are read as signed, `ui8` (`ui16`, `ui32`, `ui64`) as unsigned, as in MLIR's
`arith`.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
    VectorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

ui8 = IntegerType(8, Signedness.UNSIGNED)
ui16 = IntegerType(16, Signedness.UNSIGNED)
ui32 = IntegerType(32, Signedness.UNSIGNED)
ui64 = IntegerType(64, Signedness.UNSIGNED)
index = IndexType()

# IR element type -> numpy dtype. The order is the order of the error message.
_TO_NUMPY: dict[Attribute, np.dtype] = {
    f16: np.dtype(np.float16),
    f32: np.dtype(np.float32),
    f64: np.dtype(np.float64),
    i1: np.dtype(np.bool_),
    i8: np.dtype(np.int8),
    ui8: np.dtype(np.uint8),
    i16: np.dtype(np.int16),
    i32: np.dtype(np.int32),
    i64: np.dtype(np.int64),
    ui16: np.dtype(np.uint16),
    ui32: np.dtype(np.uint32),
    ui64: np.dtype(np.uint64),
    bf16: np.dtype(ml_dtypes.bfloat16),
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}

ELEMENT_TYPES = tuple(_TO_NUMPY)


def to_numpy_dtype(t: Attribute) -> np.dtype:
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    return _TO_NUMPY[t]


def from_numpy_dtype(d: np.dtype | type) -> Attribute:
    return _FROM_NUMPY[np.dtype(d)]


def lane_type(t: Attribute) -> Attribute:
    """The element type of each lane of `t`: itself for a scalar, `f32` for `vector<16xf32>`."""
    return t.element_type if isinstance(t, VectorType) else t


def is_float(t: Attribute) -> bool:
    """A float scalar, or a vector of floats."""
    return isinstance(lane_type(t), Float16Type | Float32Type | Float64Type | BFloat16Type)


def is_bool(t: Attribute) -> bool:
    return t == i1


def is_int(t: Attribute) -> bool:
    """Integer but not bool (index counts as an integer)."""
    return (isinstance(t, IntegerType) and t != i1) or isinstance(t, IndexType)


def is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def bit_width(t: Attribute) -> int:
    """The width of `t` in bits (`i1` is 1; `index` is 64)."""
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, IntegerType):
        return t.width.data
    return to_numpy_dtype(t).itemsize * 8


def check_element_type(t: Attribute, where: str) -> None:
    if t not in _TO_NUMPY:
        names = ", ".join(str(x) for x in _TO_NUMPY)
        raise VerifyException(f"{where}: element type {t} is not one of {names}")
