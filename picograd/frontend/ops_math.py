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

Every op is a composition of existing ops, so autograd differentiates it through its
decomposition; the compositions are chosen so the gradients are torch's, including at the
kinks (where torch picks a side, `where` on the same comparison picks it too) and so no
branch that `where` discards can produce an inf or NaN that would poison the gradient.
`pow`, `lerp` and `logsumexp`, whose decompositions cannot give torch's gradients at 0, inf
and NaN, compute their value without gradient and give torch's gradient formula
(`_with_gradient`).

Float functions return the input's float dtype (float16 stays float16) and float32 for
integer and bool inputs. The activations (sigmoid, gelu, silu, ...) are in ops_activation.py.

Accuracy notes (float32):
- `erf` is a piecewise fit: x + x*P(x^2) for |x| < 0.85, else sign(x) * (1 - exp(Q(|x|)))
  with |x| clamped to 4 (beyond it erf is 1 in float32); max error about 7.5e-8.
- `tanh` uses exp(-2|x|) (never overflows) and an odd Taylor polynomial for |x| < 1/4,
  where 1 - exp(-2|x|) would cancel.
- `round` rounds half to even, as torch. floor/ceil/trunc/round convert through int32 for
  |x| < 2**23; larger floats are already integers and are kept (so are inf and NaN).
- `pow` computes what torch's kernels compute. A scalar exponent: x ** 0 = 1 (NaN too),
  ** 0.5 and ** -0.5 are sqrt and rsqrt (so (-inf) ** 0.5 is NaN and (-0.0) ** 0.5 is -0.0,
  as torch), integer-valued exponents repeated multiplication (exact; int tensors keep their
  dtype; negative ones the reciprocal of the product). Every other case, tensor exponents
  included, is C's pow: |x| ** y as exp2(y * log2|x|) (so about 1e-6 relative, not correctly
  rounded), with C's special values spelled out: x ** ±0 = 1 and 1 ** y = 1 even for NaN,
  (-1) ** ±inf = 1, 0 and inf bases give 0 or inf by the sign of y (-0.0 and -inf keep
  their sign for odd integer y; (-inf) ** 0.3 is inf), infinite y gives 0 or inf by
  |x| < 1, a finite negative base with a non-integer y gives NaN. The gradients are torch's
  formulas, given directly (`_with_gradient`): y * x ** (y - 1) for the base (0 where
  y == 0), result * log(x) for a tensor exponent (0 where x == 0 and y >= 0; NaN for a
  negative base). integer ** integer tensors multiply in the dtype, square-and-multiply
  over the exponent's bits, so they are exact and wrap as torch's integer kernel does; a
  negative integer exponent gives 0, 1 for base 1 and ±1 for base -1 (torch's integer
  kernel: 0 ** -8 is 0, not a saturated inf).
- Special values (±inf, NaN, signed zeros, |x| = 1e6) give torch's results and gradients
  (tests/e2e/test_math_edges.py): abs(±0.0) is +0.0; the rounding functions keep the sign
  of a zero result (round(-0.4) is -0.0); tanh and erf evaluate their small-|x| polynomial
  only where it is used; clamp passes no gradient at NaN; logsumexp and log_softmax follow
  torch's formulas (see them).
- `x << n`, `x >> n` (any integer dtype; `>>` is arithmetic for signed types, logical for
  uint8): n is a python int >= 0 or an integer tensor. Amounts outside [0, bit width) give 0
  for `<<` and the sign fill (0 or -1) for `>>`, as torch; the IR shift itself takes the
  amount modulo the width (pg.BinaryKind.SHL), so only a tensor amount pays for the check.
- `bitcast(dtype)` reinterprets the bits (torch's `view(dtype)`; same item size, no grad).

Floor division and remainder (`%`, `//`) are in ops_division.py.
"""

from __future__ import annotations

import math
from typing import Self

from picograd.dialects.pg import BinaryKind, UnaryKind
from picograd.frontend.base import TensorBase, normalize_axis
from picograd.frontend.dtype import (
    DType,
    bool_,
    dtype_of_scalar,
    float32,
    int8,
    int16,
    int32,
    int64,
    result_type,
    to_dtype,
    uint8,
)
from picograd.frontend.grad_mode import is_grad_enabled, no_grad
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.ops_elementwise import Operand
from picograd.frontend.ops_reduce import ReduceOps
from picograd.frontend.variable import SymbolicInt

# the signed integer of each float width: its sign is the float's sign bit
_SIGNED_OF_SIZE = {1: int8, 2: int16, 4: int32, 8: int64}

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


def _is_nan(bound: Operand) -> Operand:
    """Whether a clamp bound is NaN: a bool (python) or a bool tensor."""
    if isinstance(bound, TensorBase):
        return bound != bound  # type: ignore[operator]
    return isinstance(bound, float) and math.isnan(bound)


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

    def _signbit(self) -> Self:
        """Whether each float's sign bit is set (true for -0.0, unlike `x < 0`); no gradient."""
        x = self._detached()
        return x.bitcast(_SIGNED_OF_SIZE[x.dtype.itemsize]) < 0

    def _signed_zero(self) -> Self:
        """0.0 with each element's sign (C's copysign(0, x)); no gradient."""
        return self._signbit().where(-0.0, 0.0).cast(self.dtype)

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
        """|x|, +0.0 for both zeros; the gradient at 0 is 0 (max(x, -x) shares it between +x
        and -x, and the zero is a constant)."""
        if self.dtype.is_bool or self.dtype is uint8:  # -x of a uint8 wraps: 7 -> 249
            return self
        if self.dtype.storage_only:  # float8, as torch has it: the sign bit cleared
            return (self.bitcast(uint8) & 0x7F).bitcast(self.dtype)
        m = self.maximum(-self)
        # max(0.0, -0.0) may be either zero; a select, as `+ 0.0` is folded away on WEBGPU
        return (m == 0).where(0.0, m) if self.dtype.is_float else m

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
        """sin / cos; float16 computes in float32 and rounds once, as torch (near a pole the
        rounding of a float16 cos is magnified: tan(1.625) was -18.27, torch -18.44)."""
        if self.dtype.itemsize == 2 and self.dtype.is_float:
            x = self.cast(float32)
            return (x.sin() / x.cos()).cast(self.dtype)
        return self.sin() / self.cos()

    def _neg_abs(self) -> tuple[Self, Self]:
        """(x >= 0, -|x|) with -|x| built by `where`, so its gradient is -sign(x) with -1 at
        0 (smooth functions of it then get the right gradient at 0)."""
        x = self._f()
        pos = x >= 0
        return pos, pos.where(-x, x)

    def _near_zero(self, na: Self, split: float) -> tuple[Self, Self]:
        """(|x| < split, x there and 0 elsewhere): a polynomial in x is only evaluated where it
        is used, so large inputs (1e6**9 overflows) give no inf whose zero-weighted
        gradient would be NaN."""
        near = na > -split
        return near, near.where(self._f(), 0.0)

    def tanh(self) -> Self:
        pos, na = self._neg_abs()
        t = (na * 2.0).exp()  # in (0, 1]: never overflows
        big = (1.0 - t) / (1.0 + t)
        near, x = self._near_zero(na, 0.25)
        small = x * (x * x)._poly(_TANH_SMALL)
        return near.where(small, pos.where(big, -big))

    def erf(self) -> Self:
        pos, na = self._neg_abs()
        near, x = self._near_zero(na, _ERF_SPLIT)
        small = x + x * (x * x)._poly(_ERF_SMALL)
        t = (-na).minimum(4.0)
        large = 1.0 - t._poly(_ERF_LARGE).exp()
        return near.where(small, pos.where(large, -large))

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
        r = i.cast(ft)
        r = (r == 0).where(x._signed_zero(), r)  # -0.5 rounds to -0.0, as torch
        return self._zero_grad(exact.where(r, x))

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

    def _int_power_by_bits(self, e: Self) -> Self:
        """self ** e for an int tensor e >= 0 of this dtype, exact and wrapping as torch's
        integer kernel (products in the dtype): square-and-multiply over every bit an
        exponent of the dtype can have, since an odd base's powers never settle."""
        bits = self.dtype.itemsize * 8 - (1 if self.dtype.np.kind == "i" else 0)
        result = self._const(1, self.shape, self.dtype)
        base = self
        for k in range(bits):
            result = ((e >> k) & 1 == 1).where(result * base, result)
            if k + 1 < bits:
                base = base * base
        return result

    def pow(self, exponent: Operand) -> Self:
        """self ** exponent (see the module docstring for the exponent forms)."""
        if isinstance(exponent, SymbolicInt):  # read at run time: a 0-d int32 tensor
            return self._pow_tensor(self._symbolic(exponent))
        if isinstance(exponent, TensorBase):
            return self._pow_tensor(exponent)
        out_dtype = result_type([self.dtype], [], [dtype_of_scalar(exponent)])  # scalars only
        e = float(exponent)
        if not out_dtype.is_float:
            return self._int_pow(int(e), out_dtype)
        x = self.cast(out_dtype)
        if e == 1:
            return x
        with no_grad():
            value = x._pow_scalar(e)
        if e == 0:  # torch's gradient is 0 there, whatever flows in
            return value._with_gradient((x,), lambda g: (x._const(0.0, x.shape, x.dtype),))
        return value._with_gradient((x,), lambda g: (g * (x.pow(e - 1) * e),))

    def _int_pow(self, n: int, dtype: DType) -> Self:
        """An integer (or bool) tensor to the power of a python int, in `dtype`."""
        x = self.cast(int32) if self.dtype.is_bool else self
        if abs(n) > _MAX_INT_POWER:
            return x._pow_tensor(x._const(n, x.shape, dtype))
        if n == 0:
            return x._const(1, x.shape, x.dtype)
        if n < 0:
            raise dtype_error("pow", "integers to negative integer powers are not allowed")
        return x._int_power(n)

    def _pow_scalar(self, e: float) -> Self:
        """A float tensor to the power of a python float, computed as torch's kernel does:
        1 for e == 0 (even at NaN), sqrt / rsqrt for e = 0.5 / -0.5 (so (-inf) ** 0.5 is NaN
        and (-0.0) ** 0.5 is -0.0, not C's inf and +0.0), products for integer e (their
        reciprocal for e < 0), C's pow otherwise."""
        if e == 0:
            return self._const(1.0, self.shape, self.dtype)
        if e == 0.5:
            return self.sqrt()
        if e == -0.5:
            return self.rsqrt()
        if e.is_integer() and abs(e) <= _MAX_INT_POWER:
            p = self._int_power(abs(int(e)))
            return p if e > 0 else p.reciprocal()
        return self._c_pow(self._const(e, self.shape, self.dtype))

    def _pow_tensor(self, exponent: TensorBase) -> Self:
        """self ** exponent elementwise (C's pow), with torch's gradients: exponent *
        self ** (exponent - 1) for the base (0 where the exponent is 0) and result * log(self)
        for the exponent (0 where the base is 0 and the exponent >= 0)."""
        x, y = self._operands("pow", exponent)
        if not x.dtype.is_float:
            int_dtype = int32 if x.dtype.is_bool else x.dtype
            x, y = x.cast(int_dtype), y.cast(int_dtype)
            r = x._int_power_by_bits(y.maximum(0))
            # a negative exponent: 0, but 1 for base 1 and +-1 for base -1 (torch's integer
            # kernel; 1 / x ** n in float32 would give inf, saturated, for base 0)
            odd = (y & 1) == 1
            unit = (x == 1).where(1, (x == -1).where(odd.where(-1, 1), 0)).cast(int_dtype)
            return (y < 0).where(unit, r)
        with no_grad():
            r = x._c_pow(y)

        def rule(g: Self) -> tuple[Self | None, Self | None]:
            dx = (y == 0).where(0.0, g * (y * x.pow(y - 1))) if x.requires_grad else None
            dy = g * ((x == 0) & (y >= 0)).where(0.0, r * x.log()) if y.requires_grad else None
            return dx, dy

        return r._with_gradient((x, y), rule)

    def _c_pow(self, y: Self) -> Self:
        """C's pow(x, y) for float tensors of one shape and dtype (no gradient):
        |x| ** y as exp2(y * log2|x|), with every special case spelled out rather than left
        to log2 and exp2 of 0 and inf (which WGSL does not define): x ** ±0 = 1 and
        1 ** y = 1 (NaN included), (-1) ** ±inf = 1; 0 and inf bases give 0 or inf by the
        sign of y; infinite y gives 0 or inf by |x| < 1; the sign of a negative base (-0.0
        and -inf too) for odd integer y; NaN for a finite negative base and a non-integer y."""
        x = self
        ax = x.abs()
        edge = (ax == 0) | (ax == math.inf)  # log2 is not used there
        r = (y * edge.where(1.0, ax).log2()).exp2()
        r = edge.where(((ax == math.inf) == (y > 0)).where(math.inf, 0.0), r)
        y_inf = y.abs() == math.inf
        r = y_inf.where(((ax > 1) == (y > 0)).where(math.inf, 0.0), r)
        y_int = y.round() == y  # false for NaN, true for ±inf
        y_odd = y_int & ((y * 0.5).round() != y * 0.5)
        r = (x._signbit() & y_odd).where(-r, r)
        # NaN spelled out too: WEBGPU's exp2/log2 need not keep it (Mesa's give 0, 1)
        undefined = ((x < 0) & (ax < math.inf) & ~y_int) | x.isnan() | y.isnan()
        r = undefined.where(math.nan, r)
        r = ((y == 0) | (x == 1) | ((ax == 1) & y_inf)).where(1.0, r)
        return r.cast(x.dtype)  # where(cond, inf, 0.0) of two scalars is float32: float16 stays

    def __pow__(self, exponent: Operand) -> Self:
        return self.pow(exponent)

    def __rpow__(self, base: Operand) -> Self:
        weak = result_type([self.dtype], [], [dtype_of_scalar(base)])  # the scalar is weak
        b = self._const(base, self.shape, weak)  # type: ignore[arg-type]
        return b._pow_tensor(self)

    # ── clamp, lerp ─────────────────────────────────────────────────────────

    def clamp(self, min: Operand | None = None, max: Operand | None = None) -> Self:
        """min(max(x, min), max); where min > max the result is max. The gradient flows to x
        where min <= x <= max (torch's rule: inclusive at the bounds, none at NaN), to a
        tensor bound where the result is that bound."""
        if min is None and max is None:
            raise shape_error("clamp", "at least one of min and max must be given")
        r = self._detached()
        inside = None
        if min is not None:
            r = ((r < min) | _is_nan(min)).where(min, r)  # a NaN bound gives NaN, as torch
            inside = self >= min
        if max is not None:
            r = ((r > max) | _is_nan(max)).where(max, r)
            inside = self <= max if inside is None else inside & (self <= max)
        assert inside is not None
        return inside.where(self, r)

    def clip(self, min: Operand | None = None, max: Operand | None = None) -> Self:
        return self.clamp(min, max)

    def clamp_min(self, min: Operand) -> Self:
        return self.clamp(min, None)

    def clamp_max(self, max: Operand) -> Self:
        return self.clamp(None, max)

    def lerp(self, end: Operand, weight: Operand) -> Self:
        """self + weight * (end - self), computed as torch's kernel does for precision at both
        ends (end + (weight - 1) * (end - self) from |weight| >= 0.5, which also gives its
        signed zeros), with torch's gradients: 1 - weight, weight and end - self (no NaN
        from inf * 0 at an infinite weight)."""
        if not self.dtype.is_float:
            raise dtype_error("lerp", f"needs a float tensor, got {self.dtype.name}")
        start, e, w = self._operands("lerp", end, weight)
        with no_grad():
            diff = e - start
            value = (w.abs() < 0.5).where(start + w * diff, e + (w - 1.0) * diff)
        return value._with_gradient((start, e, w), lambda g: (g * (1.0 - w), g * w,
                                                              g * (e - start)))

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
        """log(sum(exp(x))) along `dim`, as torch computes it: shifted by the max, taken as 0
        where it is infinite (so a row of -inf gives -inf and a row holding inf gives inf,
        not NaN); torch's gradient, exp(x - result) (NaN where the result is infinite)."""
        x = self._f()
        if x.shape and x.shape[normalize_axis("logsumexp", dim, x.ndim, x.shape)] == 0:
            return x.sum(dim, keepdim=keepdim) - math.inf  # log(0), as torch (a graph on x)
        with no_grad():
            m = x.max(dim, keepdim=True)
            m = (m.abs() == math.inf).where(0.0, m)
            value = (x - m).exp().sum(dim, keepdim=True).log() + m
        out = value._with_gradient((x,), lambda g: (g.expand(x.shape) * (x - value).exp(),))
        return out if keepdim else out.squeeze(dim)

    def softmax(self, dim: int = -1) -> Self:
        x = self._f()
        if x.numel() == 0:  # no max to shift by: nothing to compute
            return x
        with no_grad():
            e = (x - x.max(dim, keepdim=True)).exp()
            s = e / e.sum(dim, keepdim=True)
        # torch's formula, s * (g - sum(g * s)): 6 nodes, through the decomposition 13
        return s._with_gradient((x,), lambda g: (s * (g - (g * s).sum(dim, keepdim=True)),))

    def log_softmax(self, dim: int = -1) -> Self:
        """(x - max) - log(sum(exp(x - max))), as torch: NaN for a whole row holding inf or
        only -inf, and accurate at large |x| (x - logsumexp(x) would round logsumexp to the
        spacing of x: -1.125 for three equal 1e6, not -1.0986)."""
        x = self._f()
        if x.numel() == 0:  # no max to shift by: nothing to compute
            return x
        shifted = x - x.max(dim, keepdim=True)._detached()
        return shifted - shifted.exp().sum(dim, keepdim=True).log()

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
