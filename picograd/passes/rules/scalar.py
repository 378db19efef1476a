"""Exact scalar semantics for constant folding, matching the interpreters bit for bit.

Floats are computed by numpy in the element's own dtype (float32 rounding, NaN, inf, -0.0
as the interpreters and the CPU do). Integers are computed on Python ints and wrapped to the
type's width (two's complement), with C semantics: division truncates toward zero, the
remainder has the sign of the dividend. Bools are 0/1. `index` is a 64-bit signed integer.

Every function returns None where folding would be wrong or undefined (integer division by
zero or `INT_MIN / -1`, a float-to-int cast of NaN/inf/out-of-range values, `neg` of a
bool), leaving the op for run time. Results are plain Python numbers for `scalar_attr`.
"""

from __future__ import annotations

import math

# numpy is the reference for float rounding; it is only used here, to fold constants.
import numpy as np
from xdsl.dialects.builtin import IndexType, IntegerType
from xdsl.ir import Attribute

from picograd.dialects.dtypes import is_bool, is_float, is_int, is_unsigned, to_numpy_dtype
from picograd.dialects.pg import BinaryKind, CmpKind, UnaryKind

Number = float | int


def width(t: Attribute) -> int:
    return 64 if isinstance(t, IndexType) else t.width.data  # type: ignore[attr-defined]


def wrap(value: int, t: Attribute) -> int:
    """`value` reduced to the range of integer type `t` (two's complement wrap-around)."""
    if is_bool(t):
        return value & 1
    bits = width(t)
    value &= (1 << bits) - 1
    if not is_unsigned(t) and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def normalize(value: Number, t: Attribute) -> Number:
    """The value an element of type `t` holding `value` really has."""
    if is_float(t):
        return float(np.asarray(value, dtype=to_numpy_dtype(t)))
    if is_bool(t):
        return int(value != 0)
    return wrap(int(value), t)


def _float_call(fn: object, *args: Number, t: Attribute) -> float:
    dtype = to_numpy_dtype(t)
    arrays = [np.asarray([a], dtype=dtype) for a in args]
    with np.errstate(all="ignore"):
        return float(fn(*arrays)[0])  # type: ignore[operator]


_FLOAT_UNARY = {
    UnaryKind.NEG: np.negative, UnaryKind.EXP: np.exp, UnaryKind.LOG: np.log,
    UnaryKind.SQRT: np.sqrt, UnaryKind.SIN: np.sin, UnaryKind.RECIP: np.reciprocal,
    UnaryKind.EXP2: np.exp2, UnaryKind.LOG2: np.log2,
}
_FLOAT_BINARY = {
    BinaryKind.ADD: np.add, BinaryKind.SUB: np.subtract, BinaryKind.MUL: np.multiply,
    BinaryKind.DIV: np.divide, BinaryKind.MAX: np.maximum, BinaryKind.MIN: np.minimum,
}


def unary(kind: UnaryKind, a: Number, t: Attribute) -> Number | None:
    a = normalize(a, t)
    if is_float(t):
        fn = _FLOAT_UNARY.get(kind)
        return None if fn is None else _float_call(fn, a, t=t)
    if is_bool(t):
        return 1 - int(a) if kind == UnaryKind.NOT else None
    if kind == UnaryKind.NEG:
        return wrap(-int(a), t)
    return wrap(~int(a), t) if kind == UnaryKind.NOT else None


def _int_div(a: int, b: int, t: Attribute) -> int | None:
    """C `a / b`, or None where C leaves it undefined."""
    if b == 0:
        return None
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return None if wrap(q, t) != q else q


def _bits(t: Attribute) -> int:
    return t.width.data if isinstance(t, IntegerType) else 64  # index is 64-bit


def _int_binary(kind: BinaryKind, a: int, b: int, t: Attribute) -> int | None:
    if kind in (BinaryKind.DIV, BinaryKind.MOD):
        q = _int_div(a, b, t)
        return None if q is None else (q if kind == BinaryKind.DIV else a - b * q)
    results = {
        BinaryKind.ADD: lambda: a + b, BinaryKind.SUB: lambda: a - b,
        BinaryKind.MUL: lambda: a * b, BinaryKind.MAX: lambda: max(a, b),
        BinaryKind.MIN: lambda: min(a, b), BinaryKind.AND: lambda: a & b,
        BinaryKind.OR: lambda: a | b, BinaryKind.XOR: lambda: a ^ b,
        # amounts modulo the width; `a` is normalized (unsigned types non-negative), so >>
        # is arithmetic for signed types and logical for unsigned ones
        BinaryKind.SHL: lambda: a << (b & (_bits(t) - 1)),
        BinaryKind.SHR: lambda: a >> (b & (_bits(t) - 1)),
    }
    return wrap(results[kind](), t)


def binary(kind: BinaryKind, a: Number, b: Number, t: Attribute) -> Number | None:
    a, b = normalize(a, t), normalize(b, t)
    if is_float(t):
        fn = _FLOAT_BINARY.get(kind)
        return None if fn is None else _float_call(fn, a, b, t=t)
    return _int_binary(kind, int(a), int(b), t)


def compare(kind: CmpKind, a: Number, b: Number, t: Attribute) -> int:
    """The comparison of two values of type `t` as 0/1 (IEEE: NaN compares unequal)."""
    a, b = normalize(a, t), normalize(b, t)
    results = {
        CmpKind.LT: a < b, CmpKind.LE: a <= b, CmpKind.GT: a > b,
        CmpKind.GE: a >= b, CmpKind.EQ: a == b, CmpKind.NE: a != b,
    }
    return int(results[kind])


def cast(a: Number, src: Attribute, dst: Attribute) -> Number | None:
    """C conversion of `a` from `src` to `dst` (to bool is `!= 0`; float to int truncates)."""
    a = normalize(a, src)
    if is_bool(dst):
        return int(a != 0)
    if is_float(dst):
        source = np.asarray(a, dtype=to_numpy_dtype(src))
        with np.errstate(all="ignore"):
            return float(source.astype(to_numpy_dtype(dst)))
    if is_float(src):
        if not math.isfinite(a):
            return None
        result = math.trunc(a)
        return result if wrap(result, dst) == result else None
    return wrap(int(a), dst)


# Each type's exactly representable integer range (floats: the contiguous range).
def _exact_range(t: Attribute) -> tuple[int, int]:
    if is_bool(t):
        return 0, 1
    if is_float(t):
        digits = np.finfo(to_numpy_dtype(t)).nmant + 1
        return -(2**digits), 2**digits
    bits = width(t)
    if is_unsigned(t):
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def is_lossless(src: Attribute, dst: Attribute) -> bool:
    """Every value of `src` converts to `dst` exactly (so a later cast can skip `dst`)."""
    if src == dst or is_bool(src):
        return True
    if is_float(src):
        # A wider float keeps every value, sign of zero, inf and NaN.
        return is_float(dst) and np.finfo(to_numpy_dtype(dst)).bits >= np.finfo(
            to_numpy_dtype(src)).bits
    if not is_int(src) or is_bool(dst):
        return False
    lo, hi = _exact_range(src)
    dst_lo, dst_hi = _exact_range(dst)
    return dst_lo <= lo and hi <= dst_hi
