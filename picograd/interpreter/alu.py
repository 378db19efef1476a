"""Elementwise reference semantics shared by every stage's interpreter.

One function per op family (`unary`, `binary`, `compare`, `select`, `cast`, and the
reduction helpers), each taking the IR element type `t` of its operands. They work alike on
numpy arrays (`pg_tensor`) and numpy scalars (`pg_loop`/`pg_uop` values), and always give
results of exactly `t`'s numpy dtype, so float32 math rounds as float32 (`np.exp` on a
float32 gives a float32).

Semantics are C's, as the CPU targets compute them (docs/design.md, "Kernel ABI"):

* integers wrap around (two's complement); `div` truncates toward zero and `mod` has the
  sign of the dividend; an integer division by zero raises `InterpretationError`; shifts
  take the amount modulo the bit width, `shr` is arithmetic on signed types, logical on ui8;
* `bitcast` reinterprets the bits (numpy's `.view`);
* float `max`/`min` propagate NaN like `np.maximum`/`np.minimum`;
* casts: anything to bool is `x != 0`; int to int wraps; float to int truncates toward zero
  and saturates at the int32 range (int64's for 64-bit types and uint32; uint64 from 2**63
  on as x - 2**63 with the top bit set), NaN -> 0, narrower types
  taking the low bits of that int32 (docs/design.md, "Float to int casts").

Values of type `index` are Python ints, wrapped to 64 bits like the CPU's `i64`. Callers
run under `np.errstate(all="ignore")` (see `picograd.interpreter.run`): overflow, inf and
NaN are the semantics, not something to warn about.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute
from xdsl.utils.exceptions import InterpretationError

from picograd.dialects.dtypes import is_bool, is_float, to_numpy_dtype
from picograd.dialects.pg import BinaryKind, CmpKind, ReduceKind, UnaryKind

Value = Any  # a numpy array, a numpy scalar, or a Python int (`index`)

_B, _U = BinaryKind, UnaryKind


def is_index(t: Attribute) -> bool:
    return isinstance(t, IndexType)


def wrap_index(v: int) -> int:
    """`v` as a 64-bit two's complement integer (the CPU's `index`)."""
    return ((v + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def scalar(value: float | int, t: Attribute) -> Value:
    """The run-time value of the constant `value` of element type `t`."""
    if is_index(t):
        return int(value)
    # Through a 0-d array: out-of-range values wrap (ints) or round to inf (floats) as in C
    # instead of raising OverflowError the way `np.int8(200)` does.
    return np.asarray(value).astype(to_numpy_dtype(t))[()]


# ── integer division, C style ────────────────────────────────────────────────


def _check_divisor(b: Value) -> None:
    if np.any(np.equal(b, 0)):
        raise InterpretationError("integer division by zero (undefined in C)")


def _c_mod(a: Value, b: Value) -> Value:
    _check_divisor(b)
    return np.fmod(a, b)  # fmod on integers: the remainder has the sign of the dividend


def _c_div(a: Value, b: Value) -> Value:
    # a - fmod(a, b) is an exact multiple of b, so floor division of it is exact and equals
    # the quotient truncated toward zero.
    return (a - _c_mod(a, b)) // b


def _shift(fn: np.ufunc) -> _Fn2:
    """A shift by `b` modulo the bit width (pg.BinaryKind.SHL/SHR): numpy's own shifts give
    0 (or the sign) for amounts >= the width instead."""

    def apply(a: Value, b: Value) -> Value:
        dtype = np.asarray(a).dtype
        amount = np.bitwise_and(b, dtype.itemsize * 8 - 1).astype(dtype)
        return fn(a, amount)

    return apply


def _index_div(a: int, b: int) -> int:
    _check_divisor(b)
    q = abs(a) // abs(b)
    return wrap_index(q if (a < 0) == (b < 0) else -q)


def _index_mod(a: int, b: int) -> int:
    return wrap_index(a - b * _index_div(a, b))


# ── tables ───────────────────────────────────────────────────────────────────

_FLOAT_UNARY: dict[UnaryKind, Callable[[Value], Value]] = {
    _U.NEG: np.negative, _U.EXP: np.exp, _U.LOG: np.log, _U.SQRT: np.sqrt, _U.SIN: np.sin,
    _U.RECIP: np.reciprocal, _U.EXP2: np.exp2, _U.LOG2: np.log2,
}
_INT_UNARY: dict[UnaryKind, Callable[[Value], Value]] = {_U.NEG: np.negative, _U.NOT: np.invert}
_BOOL_UNARY: dict[UnaryKind, Callable[[Value], Value]] = {_U.NOT: np.logical_not}
_INDEX_UNARY: dict[UnaryKind, Callable[[int], int]] = {
    _U.NEG: lambda a: wrap_index(-a), _U.NOT: lambda a: ~a,
}

_Fn2 = Callable[[Value, Value], Value]
_COMMON: dict[BinaryKind, _Fn2] = {
    _B.ADD: np.add, _B.SUB: np.subtract, _B.MUL: np.multiply, _B.MAX: np.maximum,
    _B.MIN: np.minimum,
}


def _second_of_equal_zeros(fn: np.ufunc) -> _Fn2:
    """numpy's float16 maximum/minimum keep the FIRST of two equal zeros (+0, -0), its
    float32/64 ones the second, which is what compare + select on every target gives. float16
    therefore goes through float32, which is exact for a max or min."""

    def apply(a: Value, b: Value) -> Value:
        if getattr(a, "dtype", None) == np.float16:
            return fn(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
        return fn(a, b)

    return apply


_FLOAT_BINARY: dict[BinaryKind, _Fn2] = {
    **_COMMON, _B.DIV: np.divide, _B.MAX: _second_of_equal_zeros(np.maximum),
    _B.MIN: _second_of_equal_zeros(np.minimum),
}
_INT_BINARY: dict[BinaryKind, _Fn2] = {
    **_COMMON, _B.DIV: _c_div, _B.MOD: _c_mod, _B.AND: np.bitwise_and, _B.OR: np.bitwise_or,
    _B.XOR: np.bitwise_xor, _B.SHL: _shift(np.left_shift), _B.SHR: _shift(np.right_shift),
}
_BOOL_BINARY: dict[BinaryKind, _Fn2] = {
    _B.AND: np.logical_and, _B.OR: np.logical_or, _B.XOR: np.logical_xor,
    _B.MAX: np.logical_or, _B.MIN: np.logical_and,
}
_INDEX_BINARY: dict[BinaryKind, Callable[[int, int], int]] = {
    _B.ADD: lambda a, b: wrap_index(a + b), _B.SUB: lambda a, b: wrap_index(a - b),
    _B.MUL: lambda a, b: wrap_index(a * b), _B.DIV: _index_div, _B.MOD: _index_mod,
    _B.MAX: max, _B.MIN: min, _B.AND: lambda a, b: a & b, _B.OR: lambda a, b: a | b,
    _B.XOR: lambda a, b: a ^ b, _B.SHL: lambda a, b: wrap_index(a << (b & 63)),
    _B.SHR: lambda a, b: a >> (b & 63),
}

_COMPARE: dict[CmpKind, _Fn2] = {
    CmpKind.LT: np.less, CmpKind.LE: np.less_equal, CmpKind.GT: np.greater,
    CmpKind.GE: np.greater_equal, CmpKind.EQ: np.equal, CmpKind.NE: np.not_equal,
}

# Reductions combine with a binary op of the element type; on bools sum/max are "any" and
# prod/min are "all".
_REDUCE_BINARY = {ReduceKind.SUM: _B.ADD, ReduceKind.PROD: _B.MUL, ReduceKind.MAX: _B.MAX,
                  ReduceKind.MIN: _B.MIN}
_BOOL_REDUCE = {ReduceKind.SUM: np.logical_or, ReduceKind.PROD: np.logical_and,
                ReduceKind.MAX: np.logical_or, ReduceKind.MIN: np.logical_and}


def _lookup(table: dict[Any, Any], kind: Any, t: Attribute, what: str) -> Any:
    fn = table.get(kind)
    if fn is None:
        raise InterpretationError(f"{what} '{kind}' is not defined on {t}")
    return fn


# ── the ops ──────────────────────────────────────────────────────────────────


def unary(kind: UnaryKind, x: Value, t: Attribute) -> Value:
    if is_index(t):
        return _lookup(_INDEX_UNARY, kind, t, "unary")(x)
    table = _FLOAT_UNARY if is_float(t) else _BOOL_UNARY if is_bool(t) else _INT_UNARY
    return _lookup(table, kind, t, "unary")(x)


def binary(kind: BinaryKind, a: Value, b: Value, t: Attribute) -> Value:
    if is_index(t):
        return _lookup(_INDEX_BINARY, kind, t, "binary")(a, b)
    table = _FLOAT_BINARY if is_float(t) else _BOOL_BINARY if is_bool(t) else _INT_BINARY
    return _lookup(table, kind, t, "binary")(a, b)


def compare(kind: CmpKind, a: Value, b: Value) -> Value:
    """`a kind b` as bool (IEEE: every comparison with NaN is false except `ne`)."""
    return _COMPARE[kind](a, b)


def select(cond: Value, a: Value, b: Value) -> Value:
    if isinstance(cond, np.ndarray):
        return np.where(cond, a, b)
    return a if cond else b


def cast(x: Value, src: Attribute, dst: Attribute) -> Value:
    """C conversion of `x` from `src` to `dst`; float to int saturates (see the module
    docstring)."""
    if is_bool(dst):
        return np.not_equal(x, 0)
    if is_float(src) and not is_float(dst):
        if not is_index(dst) and to_numpy_dtype(dst) == np.uint64:
            return _saturated_u64(x)
        # uint32 goes through int64 (3e9 fits, -1.0 wraps), as the targets do
        wide = is_index(dst) or to_numpy_dtype(dst).itemsize == 8 or to_numpy_dtype(
            dst) == np.uint32
        x = _saturated(x, 64 if wide else 32)
    if is_index(dst):
        return int(np.asarray(x).astype(np.int64))
    dtype = to_numpy_dtype(dst)
    if is_index(src):
        return np.asarray(x, dtype=np.int64).astype(dtype)[()]
    return x.astype(dtype)  # numpy arrays and numpy scalars alike; int->int wraps


def _saturated(x: Value, bits: int) -> Value:
    """Floats `x` truncated toward zero into int32 (`bits` 32) or int64, saturating at the
    ends, NaN -> 0 (numpy's own conversion gives INT_MIN for all three on x86)."""
    wide = np.dtype(f"int{bits}")
    info = np.iinfo(wide)
    limit = 2.0 ** (bits - 1)  # exact as a float64; info.max is not
    x = np.asarray(x, dtype=np.float64)  # every float16/32 value, exactly
    above, below = x >= limit, x < -limit
    inside = np.where(above | below | np.isnan(x), 0, x).astype(wide)
    return np.where(above, info.max, np.where(below, info.min, inside)).astype(wide)[()]


def _saturated_u64(x: Value) -> Value:
    """Floats `x` into uint64 as the targets convert: from 2**63 on, x - 2**63 saturated
    into int64 with the top bit put back; below, through int64 (negative values wrap)."""
    f = np.asarray(x, dtype=np.float64)
    high = _saturated(np.where(f >= 2.0**63, f - 2.0**63, 0.0), 64)
    low = _saturated(np.where(f >= 2.0**63, 0.0, f), 64)
    out = np.where(f >= 2.0**63, np.asarray(high).view(np.uint64) ^ np.uint64(1 << 63),
                   np.asarray(low).view(np.uint64))
    return out.astype(np.uint64)[()]


def bitcast(x: Value, dst: Attribute) -> Value:
    """The bits of `x` read as `dst` (of the same width; numpy's `.view`)."""
    viewed = np.asarray(x).view(to_numpy_dtype(dst))
    return viewed[()] if np.ndim(x) == 0 else viewed  # a scalar stays a numpy scalar


def reduce_identity(kind: ReduceKind, t: Attribute) -> Value:
    """The value a `kind` reduction starts from: 0, 1, or the lowest/highest value of `t`."""
    if kind in (ReduceKind.SUM, ReduceKind.PROD):
        return scalar(int(kind == ReduceKind.PROD), t)
    lowest = kind == ReduceKind.MAX
    if is_float(t):
        return scalar(-np.inf if lowest else np.inf, t)
    if is_bool(t):
        return scalar(not lowest, t)
    info = np.iinfo(np.int64 if is_index(t) else to_numpy_dtype(t))
    return scalar(int(info.min if lowest else info.max), t)


def reduce_combine(kind: ReduceKind, acc: Value, x: Value, t: Attribute) -> Value:
    """One step of a `kind` reduction: `acc (op) x`."""
    if is_bool(t):
        return _BOOL_REDUCE[kind](acc, x)
    return binary(_REDUCE_BINARY[kind], acc, x, t)


def reduce_last_axis(kind: ReduceKind, x: np.ndarray, t: Attribute) -> np.ndarray:
    """Reduce the last axis of `x`, combining strictly left to right from the identity.

    The order is that of a sequential loop (`pg_loop.reduce`, a `pg_uop` accumulator), so
    float sums round exactly as the compiled kernels do; numpy's own `sum` is pairwise and
    would differ in the last bits. `ufunc.accumulate` is sequential by definition.
    """
    start = np.full((*x.shape[:-1], 1), reduce_identity(kind, t), dtype=x.dtype)
    seq = np.concatenate([start, x], axis=-1)
    if is_bool(t):
        fn: np.ufunc = _BOOL_REDUCE[kind]
    elif kind in (ReduceKind.SUM, ReduceKind.PROD):
        fn = np.add if kind == ReduceKind.SUM else np.multiply
    else:
        fn = np.maximum if kind == ReduceKind.MAX else np.minimum
        if x.dtype == np.float16:  # see _second_of_equal_zeros
            return fn.accumulate(seq.astype(np.float32), axis=-1)[..., -1].astype(np.float16)
    return fn.accumulate(seq, axis=-1, dtype=x.dtype)[..., -1]


# ── fused multiply-add ───────────────────────────────────────────────────────


def fused_multiply_add(a: Value, b: Value, c: Value) -> Value:
    """`a * b + c` rounded once to the operands' float type (IEEE fusedMultiplyAdd).

    float16 and float32: the product is exact in float64, and the sum is rounded to odd in
    float64 (the nearest float64 with the exact sum's truncation and an odd last bit where
    it is inexact), which then rounds to the narrow type as the exact sum would (53 bits >=
    2 * 24 + 2). float64: exact rational arithmetic per element."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if a.dtype == np.float64:
        return _fma_exact_f64(a, b, c)
    with np.errstate(invalid="ignore", over="ignore"):
        p = a.astype(np.float64) * b.astype(np.float64)  # exact: at most 2 * 24 bits
        c64 = c.astype(np.float64)
        s = p + c64
        back = s - p
        error = (p - (s - back)) + (c64 - back)  # p + c == s + error exactly (TwoSum)
    bits = s.view(np.int64)
    inexact = np.isfinite(s) & (error != 0) & (bits & 1 == 0)
    # the odd neighbour lies toward the exact sum: one more ulp of magnitude when the error
    # has the sum's sign, one less otherwise (a float's bits count its magnitude's ulps)
    step = np.where(np.signbit(error) == np.signbit(s), 1, -1)
    odd = np.where(inexact, bits + step, bits).view(np.float64)
    with np.errstate(over="ignore"):  # past the narrow type's range: inf, as IEEE rounds
        result = odd.astype(a.dtype)
    return result if result.shape else result[()]


def _fma_exact_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> Value:
    def one(x: float, y: float, z: float) -> float:
        if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(z)):
            return x * y + z  # inf and NaN: as the unfused expression (no rounding involved)
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        if exact == 0:
            return x * y + z  # the sign of an exact zero as IEEE gives it
        try:
            return float(exact)  # rounds to nearest even
        except OverflowError:
            return float("inf") if exact > 0 else float("-inf")

    result = np.vectorize(one, otypes=[np.float64])(a, b, c)
    return result if result.shape else result[()]
