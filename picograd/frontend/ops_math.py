"""Elementwise math built from the primitives (torch's names and semantics).

    abs sign reciprocal rsqrt exp2 log2 cos tan tanh erf
    floor ceil trunc round                   zero gradient (as torch); ints are returned as is
    pow(exponent) / ** / rpow                tensor or scalar exponent
    clamp(min, max) / clip, lerp(end, weight)
    isnan isinf isfinite                     bool results
    logsumexp(dim, keepdim) softmax(dim) log_softmax(dim)
    bitwise_and/or/xor/not, & | ^ ~         integers and bools only
    << >>                                    integer tensors, by a python int or a tensor
    bitcast(dtype)                           the same bits as another dtype of one size
    remainder / %, floor_divide / //         floor semantics (the result has the divisor's sign)

Every op is a composition of existing ops, so autograd differentiates it through its
decomposition; the compositions are chosen so the gradients are torch's, including at the
kinks (where torch picks a side, `where` on the same comparison picks it too) and so no
branch that `where` discards can produce an inf or NaN that would poison the gradient.

Float functions return the input's float dtype (float16 stays float16) and float32 for
integer and bool inputs. The activations (sigmoid, gelu, silu, ...) are in ops_activation.py.

Accuracy notes (float32):
- `erf` is a piecewise fit: x + x*P(x^2) for |x| < 0.85, else sign(x) * (1 - exp(Q(|x|)))
  with |x| clamped to 4 (beyond it erf is 1 in float32); max error about 7.5e-8.
- `tanh` uses exp(-2|x|) (never overflows) and an odd Taylor polynomial for |x| < 1/4,
  where 1 - exp(-2|x|) would cancel.
- `round` rounds half to even, as torch. floor/ceil/trunc/round convert through int32 for
  |x| < 2**23; larger floats are already integers and are kept (so are inf and NaN).
- `pow` with an integer-valued scalar exponent is repeated multiplication (exact; int
  tensors keep their dtype); otherwise exp2(y * log2|x|) with torch's sign for negative bases with
  integer exponents (NaN for a negative base with a fractional exponent), x**0 = 1 and
  0**y = 0 / 1 / inf for y > 0 / y = 0 / y < 0. At a zero base the gradient with respect to
  the base is 0 (torch's is inf for 0 < y < 1 and 1 for y = 1 with a tensor exponent), and
  with respect to a tensor exponent at a negative base it is r * log|x| (torch's is NaN).
  integer ** integer tensors compute in float32 and round, so results beyond 2**24 are not
  exact.
- `x << n`, `x >> n` (any integer dtype; `>>` is arithmetic for signed types, logical for
  uint8): n is a python int >= 0 or an integer tensor. Amounts outside [0, bit width) give 0
  for `<<` and the sign fill (0 or -1) for `>>`, as torch; the IR shift itself takes the
  amount modulo the width (pg.BinaryKind.SHL), so only a tensor amount pays for the check.
- `bitcast(dtype)` reinterprets the bits (torch's `view(dtype)`; same item size, no grad).
- float `%` is x - y*floor(x/y), corrected by one y where the rounding of x/y put the result
  outside [0, y) (or (y, 0]); an infinite y gives x, or y where x has the other sign (fmod,
  corrected, as torch). It equals torch's (exact fmod-based) result when y*floor(x/y) is
  exact in float32 (divisors with few significant bits, like 0.75 or 3, and quotients below
  2**24); otherwise the product's rounding can, next to an exact multiple of y, give 0 where
  torch gives y (e.g. 35 % -0.7: 0 here, -0.6999994 in torch). Gradients: 1 for x and
  -floor(x/y) for y, as torch. `//` for floats is (x - x % y) / y rounded to an integer,
  torch's definition, with a zero gradient (torch defines none).
"""

from __future__ import annotations

import math
from typing import Self

from picograd.dialects.pg import BinaryKind, UnaryKind
from picograd.frontend.base import TensorBase
from picograd.frontend.dtype import (
    bool_,
    dtype_of_scalar,
    float32,
    int32,
    result_type,
    to_dtype,
)
from picograd.frontend.grad_mode import is_grad_enabled
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.ops_elementwise import Operand
from picograd.frontend.ops_reduce import ReduceOps
from picograd.frontend.variable import SymbolicInt

_INEXACT = 2.0 ** 23  # float32 values at least this large are integers

# erf(x) = x + x * P(x^2) for |x| < _ERF_SPLIT (P's coefficients from x^0 up)
_ERF_SPLIT = 0.85
_ERF_SMALL = (1.283791661e-01, -3.761259019e-01, 1.128288880e-01, -2.680862509e-02,
              5.060170311e-03, -6.363367429e-04)
# erf(t) = 1 - exp(Q(t)) for _ERF_SPLIT <= t <= 4 (a fit of log(erfc(t)))
_ERF_LARGE = (2.920461993e-04, -1.130122423e+00, -6.320108771e-01, -1.099105328e-01,
              2.632724307e-02, -4.727377091e-03, 5.900996039e-04, -4.528219142e-05,
              1.598865083e-06)
# tanh(x) = x * T(x^2) for |x| < 1/4 (the Taylor series up to x^9)
_TANH_SMALL = (1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835)
_MAX_INT_POWER = 1 << 16  # larger integer scalar exponents take the exp2/log2 path


class MathOps(ReduceOps):
    __slots__ = ()

    # ── helpers ─────────────────────────────────────────────────────────────

    def _f(self) -> Self:
        """This tensor in a float dtype: its own, float32 (the default) for ints and bools."""
        return self if self.dtype.is_float else self.cast(float32)

    def _detached(self) -> Self:
        """The same values, cut from the autograd graph (as Tensor.detach)."""
        return type(self)._from_node(self._node)

    def _zero_grad(self, value: Self) -> Self:
        """`value` (computed without grad) tied to `self` with a zero gradient, so the result
        requires grad like torch's floor/round/sign results do."""
        if not (self.requires_grad and is_grad_enabled()):
            return value
        never = self._const(False, value.shape, bool_)
        return never.where(self._broadcast_to(value.shape), value)

    def _poly(self, coeffs: tuple[float, ...]) -> Self:
        """sum(coeffs[i] * self**i) by Horner's rule, in this (float) tensor's dtype."""
        r = self._const(coeffs[-1], self.shape, self.dtype)
        for c in coeffs[-2::-1]:
            r = r * self + c
        return r

    def _int_only(self, op: str, *others: Operand) -> None:
        for o in (self, *others):
            dt = o.dtype if isinstance(o, TensorBase) else dtype_of_scalar(o)
            if dt.is_float:
                raise dtype_error(op, f"needs integer or bool operands, got {dt.name}")

    # ── simple functions ────────────────────────────────────────────────────

    def abs(self) -> Self:
        """|x|; the gradient at 0 is 0 (max(x, -x) shares it between +x and -x)."""
        if self.dtype.is_bool:
            return self
        return self.maximum(-self)

    def sign(self) -> Self:
        """-1, 0 or 1 (0 for NaN, as torch); zero gradient."""
        if self.dtype.is_bool:
            return self
        x = self._detached()
        return self._zero_grad((x > 0).cast(x.dtype) - (x < 0).cast(x.dtype))

    def reciprocal(self) -> Self:
        return self._unary(UnaryKind.RECIP)

    def rsqrt(self) -> Self:
        return self.sqrt().reciprocal()

    def exp2(self) -> Self:
        return self._unary(UnaryKind.EXP2)

    def log2(self) -> Self:
        return self._unary(UnaryKind.LOG2)

    def cos(self) -> Self:
        """1 - 2 sin(x/2)^2: accurate to about 1e-7 absolute (sin(pi/2 - x) would lose the
        rounding error of pi/2 - x)."""
        s = (self._f() * 0.5).sin()
        return 1.0 - 2.0 * s * s

    def tan(self) -> Self:
        return self.sin() / self.cos()

    def _neg_abs(self) -> tuple[Self, Self]:
        """(x >= 0, -|x|) with -|x| built by `where`, so its gradient is -sign(x) with -1 at
        0 (smooth functions of it then get the right gradient at 0)."""
        x = self._f()
        pos = x >= 0
        return pos, pos.where(-x, x)

    def tanh(self) -> Self:
        pos, na = self._neg_abs()
        t = (na * 2.0).exp()  # in (0, 1]: never overflows
        big = (1.0 - t) / (1.0 + t)
        x = self._f()
        small = x * (x * x)._poly(_TANH_SMALL)
        return (na > -0.25).where(small, pos.where(big, -big))

    def erf(self) -> Self:
        x = self._f()
        pos, na = x._neg_abs()
        s = x * x
        small = x + x * s._poly(_ERF_SMALL)
        t = (-na).minimum(4.0)
        large = 1.0 - t._poly(_ERF_LARGE).exp()
        return (na > -_ERF_SPLIT).where(small, pos.where(large, -large))

    # ── rounding (zero gradient) ────────────────────────────────────────────

    def _rounded(self, mode: str) -> Self:
        if not self.dtype.is_float:
            return self
        x = self._detached()
        ft = x.dtype
        # Floats at least 2**mantissa_bits apart are integers already; this also keeps the
        # constant inside float16's range (65504).
        exact = x.abs() < (2.0**10 if ft.itemsize == 2 else _INEXACT)  # False for inf, NaN
        i = exact.where(x, 0.0).cast(int32)  # truncated toward zero
        if mode == "floor":
            i = i - (i.cast(ft) > x).cast(int32)
        elif mode == "ceil":
            i = i + (i.cast(ft) < x).cast(int32)
        elif mode == "round":
            f = i - (i.cast(ft) > x).cast(int32)  # floor
            d = x - f.cast(ft)  # exact: in [0, 1)
            odd = (f.bitwise_and(1)) == 1
            up = (d > 0.5) | ((d == 0.5) & odd)
            i = f + up.cast(int32)
        return self._zero_grad(exact.where(i.cast(ft), x))

    def floor(self) -> Self:
        return self._rounded("floor")

    def ceil(self) -> Self:
        return self._rounded("ceil")

    def trunc(self) -> Self:
        return self._rounded("trunc")

    def round(self) -> Self:
        """Round to the nearest integer, halves to even (torch's rule)."""
        return self._rounded("round")

    # ── pow ─────────────────────────────────────────────────────────────────

    def _int_power(self, n: int) -> Self:
        """self ** n for an int n >= 1 by repeated squaring."""
        result: Self | None = None
        base = self
        while True:
            if n & 1:
                result = base if result is None else result * base
            n >>= 1
            if not n:
                break
            base = base * base
        assert result is not None
        return result

    def pow(self, exponent: Operand) -> Self:
        """self ** exponent (see the module docstring for the exponent forms)."""
        if isinstance(exponent, SymbolicInt):  # read at run time: a 0-d int32 tensor
            return self._pow_tensor(self._symbolic(exponent))
        if not isinstance(exponent, TensorBase):
            dtype_of_scalar(exponent)  # rejects non-scalars
            e = float(exponent)
            if e.is_integer() and abs(e) <= _MAX_INT_POWER:
                n = int(e)
                out_dtype = result_type([self.dtype], [], [dtype_of_scalar(exponent)])
                x = self.cast(int32) if self.dtype.is_bool else self
                x = x.cast(out_dtype) if out_dtype.is_float else x
                if n == 0:
                    return x._zero_grad(x._const(1, x.shape, x.dtype))
                if n < 0 and not x.dtype.is_float:
                    raise dtype_error("pow", "integers to negative integer powers are not "
                                             "allowed")
                p = x._int_power(abs(n))
                return p if n > 0 else p.reciprocal()
            weak = result_type([self.dtype], [], [dtype_of_scalar(exponent)])
            exponent = self._const(exponent, self.shape, weak)
        return self._pow_tensor(exponent)

    def _pow_tensor(self, exponent: TensorBase) -> Self:
        x, y = self._operands("pow", exponent)
        int_dtype = None if x.dtype.is_float else int32 if x.dtype.is_bool else x.dtype
        x, y = x._f(), y._f()
        zero = x == 0
        mag = zero.where(1.0, x.abs())  # safe: log2 of it is finite
        r = (y * mag.log2()).exp2()
        y_int = y._detached().round() == y._detached()
        y_odd = y_int & ((y._detached() * 0.5).round() != y._detached() * 0.5)
        neg = x < 0
        r = neg.where(y_int.where(y_odd.where(-r, r), math.nan), r)
        at_zero = (y > 0).where(0.0, (y == 0).where(1.0, math.inf))
        r = zero.where(x._zero_grad(at_zero), r)
        # x ** 0 = 1 and 1 ** y = 1 also for inf / NaN (the formula gives NaN there)
        r = (((y == 0) & ~x.isfinite()) | ((x == 1) & y.isnan())).where(1.0, r)
        return r if int_dtype is None else r.round().cast(int_dtype)

    def __pow__(self, exponent: Operand) -> Self:
        return self.pow(exponent)

    def __rpow__(self, base: Operand) -> Self:
        weak = result_type([self.dtype], [], [dtype_of_scalar(base)])  # the scalar is weak
        b = self._const(base, self.shape, weak)  # type: ignore[arg-type]
        return b._pow_tensor(self)

    # ── clamp, lerp ─────────────────────────────────────────────────────────

    def clamp(self, min: Operand | None = None, max: Operand | None = None) -> Self:
        """min(max(x, min), max); the gradient flows where min <= x <= max (torch's rule,
        inclusive at the bounds); where min > max the result is max."""
        if min is None and max is None:
            raise shape_error("clamp", "at least one of min and max must be given")
        r = self
        if min is not None:
            r = (r < min).where(min, r)
        if max is not None:
            r = (r > max).where(max, r)
        return r

    def clip(self, min: Operand | None = None, max: Operand | None = None) -> Self:
        return self.clamp(min, max)

    def clamp_min(self, min: Operand) -> Self:
        return self.clamp(min, None)

    def clamp_max(self, max: Operand) -> Self:
        return self.clamp(None, max)

    def lerp(self, end: Operand, weight: Operand) -> Self:
        """self + weight * (end - self), computed as torch does for precision at both ends."""
        if not self.dtype.is_float:
            raise dtype_error("lerp", f"needs a float tensor, got {self.dtype.name}")
        start, e, w = self._operands("lerp", end, weight)
        diff = e - start
        return (w.abs() < 0.5).where(start + w * diff, e - diff * (1.0 - w))

    # ── classification ──────────────────────────────────────────────────────

    def isnan(self) -> Self:
        x = self._detached()
        return x != x

    def isinf(self) -> Self:
        x = self._detached()
        if not x.dtype.is_float:
            return x._const(False, x.shape, bool_)
        return x.abs() == math.inf

    def isfinite(self) -> Self:
        x = self._detached()
        if not x.dtype.is_float:
            return x._const(True, x.shape, bool_)
        return x.abs() < math.inf

    # ── softmax family (picograd.nn.functional calls these) ─────────────────

    def logsumexp(self, dim: int = -1, keepdim: bool = False) -> Self:
        """log(sum(exp(x))) along `dim`, shifted by the (constant) max for stability."""
        x = self._f()
        m = x.max(dim, keepdim=True)._detached()
        out = (x - m).exp().sum(dim, keepdim=True).log() + m
        return out if keepdim else out.squeeze(dim)

    def softmax(self, dim: int = -1) -> Self:
        x = self._f()
        e = (x - x.max(dim, keepdim=True)._detached()).exp()
        return e / e.sum(dim, keepdim=True)

    def log_softmax(self, dim: int = -1) -> Self:
        x = self._f()
        return x - x.logsumexp(dim, keepdim=True)

    # ── bitwise (int32 / bool) ──────────────────────────────────────────────

    def _bitwise(self, op: str, kind: BinaryKind, other: Operand, reverse: bool) -> Self:
        self._int_only(op, other)
        return self._binary(kind, other, reverse)

    def bitwise_and(self, other: Operand) -> Self:
        return self._bitwise("bitwise_and", BinaryKind.AND, other, False)

    def bitwise_or(self, other: Operand) -> Self:
        return self._bitwise("bitwise_or", BinaryKind.OR, other, False)

    def bitwise_xor(self, other: Operand) -> Self:
        return self._bitwise("bitwise_xor", BinaryKind.XOR, other, False)

    def bitwise_not(self) -> Self:
        self._int_only("bitwise_not")
        return self._make("unary", (self,), UnaryKind.NOT, self.shape)

    def __and__(self, other: Operand) -> Self:
        return self.bitwise_and(other)

    def __rand__(self, other: Operand) -> Self:
        return self._bitwise("bitwise_and", BinaryKind.AND, other, True)

    def __or__(self, other: Operand) -> Self:
        return self.bitwise_or(other)

    def __ror__(self, other: Operand) -> Self:
        return self._bitwise("bitwise_or", BinaryKind.OR, other, True)

    def __xor__(self, other: Operand) -> Self:
        return self.bitwise_xor(other)

    def __rxor__(self, other: Operand) -> Self:
        return self._bitwise("bitwise_xor", BinaryKind.XOR, other, True)

    def __invert__(self) -> Self:
        return self.bitwise_not()

    def _shift_amount(self, op: str, n: Operand, reverse: bool = False) -> tuple[Self, Self]:
        """`self` and `n` (a python int or an integer tensor; the amount, or with `reverse`
        the value shifted by `self`) as two tensors of one integer dtype and shape, the dtype
        promoted as torch does (a python int takes self's)."""
        for o in (self, n):
            dt = o.dtype if isinstance(o, TensorBase) else dtype_of_scalar(o)
            if dt.is_float or dt.is_bool:
                raise dtype_error(op, f"shifts need integer operands, got {dt.name}")
        if isinstance(n, TensorBase):
            x, y = self._operands(op, n)
            return x, y
        if not reverse and n < 0:  # type: ignore[operator]  # torch accepts it: a mistake
            raise dtype_error(op, f"the shift amount must be a python int >= 0, got {n!r}")
        return self, self._const(int(n), self.shape, self.dtype)  # type: ignore[arg-type]

    def _shift(self, op: str, kind: BinaryKind, x: Self, n: Self) -> Self:
        """x << n or x >> n with torch's result for any amount: the IR shift takes amounts
        modulo the width, torch gives 0 (or the sign for a signed >>) outside [0, width)."""
        width = x.dtype.itemsize * 8
        shifted = x._make("binary", (x, n), kind, x.shape)
        # a python amount is known now, so only a tensor amount pays for the check
        known = n._node.op == "const"
        if known and 0 <= int(n._node.arg) < width:  # type: ignore[arg-type]
            return shifted
        if kind == BinaryKind.SHR and x.dtype.is_signed:
            fill = x._make("binary", (x, x._const(width - 1, x.shape, x.dtype)), kind, x.shape)
        else:
            fill = x._const(0, x.shape, x.dtype)
        if known:
            return fill
        return ((n < 0) | (n >= width)).where(fill, shifted)

    def __lshift__(self, n: Operand) -> Self:
        x, y = self._shift_amount("<<", n)
        return x._shift("<<", BinaryKind.SHL, x, y)

    def __rshift__(self, n: Operand) -> Self:
        x, y = self._shift_amount(">>", n)
        return x._shift(">>", BinaryKind.SHR, x, y)

    def __rlshift__(self, n: Operand) -> Self:
        y, x = self._shift_amount("<<", n, True)  # n is a python int: a tensor's << wins
        return x._shift("<<", BinaryKind.SHL, x, y)

    def __rrshift__(self, n: Operand) -> Self:
        y, x = self._shift_amount(">>", n, True)
        return x._shift(">>", BinaryKind.SHR, x, y)

    def bitcast(self, dtype: object) -> Self:
        """The same bits read as `dtype` (torch's `view(dtype)`), which must have this
        dtype's item size; it has no gradient, so a tensor that requires grad is refused."""
        dt = to_dtype(dtype)
        if dt.itemsize != self.dtype.itemsize or dt.is_bool or self.dtype.is_bool:
            raise dtype_error("bitcast", f"cannot reinterpret {self.dtype.name} as {dt.name}: "
                                         "the item sizes differ (or one is bool)")
        if self.requires_grad and is_grad_enabled() and dt is not self.dtype:
            raise dtype_error("bitcast", f"a {self.dtype.name} tensor that requires grad "
                                         f"cannot be reinterpreted as {dt.name} (no gradient)")
        if dt is self.dtype:
            return self
        return self._make("bitcast", (self,), None, self.shape, dt)

    # ── floor division and remainder ────────────────────────────────────────

    def remainder(self, other: Operand) -> Self:
        """x - y * floor(x / y): the result has the sign of the divisor (torch's `%`)."""
        x, y = self._operands("remainder", other)
        if x.dtype.is_bool:
            x, y = x.cast(int32), y.cast(int32)
        if not x.dtype.is_float:
            r = x._make("binary", (x, y), BinaryKind.MOD, x.shape)  # C: sign of x
            wrong = (r != 0) & ((r < 0) != (y < 0))
            return wrong.where(r + y, r)
        r = x - y * (x / y).floor()
        # x / y rounded across an integer: the result is just outside [0, y) / (y, 0]
        below = (y > 0).where(r < 0, r > 0)
        r = below.where(r + y, r)
        over = (y > 0).where(r >= y, r <= y)
        r = over.where(r - y, r)
        # an infinite divisor: x itself, or y where x has the other sign (fmod, corrected)
        opposite = (x != 0) & ((x < 0) != (y < 0))
        return (y.abs() == math.inf).where(opposite.where(y, x) + x * 0.0, r)  # inf % inf: NaN

    def floor_divide(self, other: Operand) -> Self:
        """floor(x / y); for floats (x - x % y) / y rounded, as torch. Zero gradient."""
        x, y = self._operands("floor_divide", other)
        if x.dtype.is_bool:
            x, y = x.cast(int32), y.cast(int32)
        if not x.dtype.is_float:
            q = x._make("binary", (x, y), BinaryKind.DIV, x.shape)  # C: toward zero
            r = x._make("binary", (x, y), BinaryKind.MOD, x.shape)
            return ((r != 0) & ((r < 0) != (y < 0))).where(q - 1, q)
        xd, yd = x._detached(), y._detached()
        q = ((xd - xd.remainder(yd)) / yd).round()
        q = (yd == 0).where(xd / yd, q)
        opposite = (xd != 0) & ((xd < 0) != (yd < 0))
        q = (yd.abs() == math.inf).where(opposite.where(-1.0, 0.0) + xd * 0.0, q)
        return self._zero_grad(q)

    def __mod__(self, other: Operand) -> Self:
        return self.remainder(other)

    def __rmod__(self, other: Operand) -> Self:
        x, y = self._operands("remainder", other)
        return y.remainder(x)

    def __floordiv__(self, other: Operand) -> Self:
        return self.floor_divide(other)

    def __rfloordiv__(self, other: Operand) -> Self:
        x, y = self._operands("floor_divide", other)
        return y.floor_divide(x)
