"""More elementwise math (torch's names and semantics), composed from the primitives.

    atan asin acos atan2 (arctan2)             atan: a rational fit after range reduction
    sinh cosh asinh acosh atanh                 overflow-free forms (exp(|x| / 2) squared)
    expm1 log1p log10 logaddexp logaddexp2      expm1 / log1p by Kahan's exact-rounding trick
    erfc erfinv                                 erfc by a Chebyshev fit beyond 0.85, erfinv
                                                by M. Giles' single-precision approximation
    copysign fmod hypot xlogy square frac fix sgn deg2rad rad2deg nan_to_num
    div(other, rounding_mode=None | "trunc" | "floor")
    isclose allclose isposinf isneginf isreal   bool results, no gradient
    abs(t)                                      `__abs__`

Every function computes its value without a graph and gives torch's gradient formula
(`_with_gradient`), so the value can use range reductions and special-value selects whose
own derivatives would be wrong or NaN, and the gradient is exactly what torch's autograd
formula gives (NaN where torch's is NaN: asin'(1) is inf, acosh'(0.5) NaN). Domain errors
give NaN as torch (asin(2), log1p(-2), atanh(1.5)); the poles give ±inf (atanh(±1),
log1p(-1)). Float functions of integer or bool tensors compute in float32, as torch.

    x = pg.Tensor([-1.0, 0.0, 0.5])
    x.asin().numpy(), x.atan2(pg.Tensor([1.0, -1.0, 0.0])).numpy()
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, Self, TypeVar

import numpy as np

from picograd.dialects.pg import BinaryKind
from picograd.frontend.dtype import bool_, float16, float32, int32
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.ops_division import DivisionOps
from picograd.frontend.ops_elementwise import Operand

_PI = math.pi
_LN2 = math.log(2.0)
_TAN_PI_8 = math.sqrt(2.0) - 1.0
_TAN_3PI_8 = math.sqrt(2.0) + 1.0
# atan(t) = t + t * z * P(z), z = t^2, for |t| <= tan(pi/8) (Cephes' single-precision fit)
_ATAN_P = (-3.33329491539e-1, 1.99777106478e-1, -1.38776856032e-1, 8.05374449538e-2)
# erfc(z) = t * exp(-z^2 + P(t)), t = 1 / (1 + z/2), z >= 0: the Chebyshev fit of Numerical
# Recipes' erfcc (fractional error below 1.2e-7 everywhere)
_ERFC_P = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
           -1.13520398, 1.48851587, -0.82215223, 0.17087277)
# erfinv(x) = x * P(w), w = -log(1 - x^2): M. Giles, "Approximating the erfinv function"
_ERFINV_CENTRAL = (1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087,
                   -4.39150654e-06, -3.5233877e-06, 3.43273939e-07, 2.81022636e-08)
_ERFINV_TAIL = (2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773,
                -0.00367342844, 0.00134934322, 0.000100950558, -0.000200214257)
# expm1(t) = t + t^2 * P(t) (1/2!, 1/3!, ... 1/11!); atanh(s) = s * Q(s^2) (1, 1/3, 1/5, ...)
_EXPM1_SERIES = tuple(1 / math.factorial(n) for n in range(2, 12))
_ATANH_SERIES = tuple(1 / (2 * n + 1) for n in range(8))
_BIG = 1e10  # beyond it x^2 + 1 is x^2 in float32: asinh, acosh are log(2|x|)
_F = TypeVar("_F", bound=Callable[..., Any])


def _in_float32(method: _F) -> _F:
    """A float16 tensor's function computed in float32 and rounded once, as torch's float16
    kernels do (the range reductions and fits here are float32's)."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any) -> Any:
        if self.dtype is float16:
            return method(self.cast(float32), *args).cast(float16)
        return method(self, *args)

    return wrapper  # type: ignore[return-value]


class SpecialOps(DivisionOps):
    __slots__ = ()

    def _float_pair(self, op: str, other: Operand, ints: bool = True) -> tuple[Self, Self]:
        """`self` and `other` broadcast to one shape and promoted (torch's result_type),
        integer and bool results taken to float32 (refused with a DTypeError unless `ints`,
        as torch's kernels that have no integer form)."""
        x, y = self._operands(op, other)
        if not ints and not x.dtype.is_float:
            raise dtype_error(op, f"needs float operands, got {x.dtype.name}")
        return x._f(), y._f()

    def _binary_in_float32(self, op: str, y: Self) -> Self | None:
        """A float16 pair's `op` computed in float32 and rounded once (None otherwise)."""
        if self.dtype is not float16:
            return None
        return getattr(self.cast(float32), op)(y.cast(float32)).cast(float16)

    # ── inverse trigonometry ────────────────────────────────────────────────

    def _atan_value(self) -> Self:
        """atan of a float tensor (no gradient): |x| is reduced to [0, tan(pi/8)] by
        atan(t) = pi/2 - atan(1/t) and pi/4 + atan((t - 1) / (t + 1)), then a rational fit."""
        x = self._detached()
        t = x.abs()
        large, middle = t > _TAN_3PI_8, t > _TAN_PI_8
        base = large.where(_PI / 2, middle.where(_PI / 4, 0.0))
        safe = large.where(t, 1.0)  # no 1/0 in the discarded branch
        r = large.where(-1.0 / safe, middle.where((t - 1.0) / (t + 1.0), t))
        z = r * r
        a = base + (r + r * z * z._poly(_ATAN_P))
        a = (t == math.inf).where(_PI / 2, a)
        return x._signbit().where(-a, a).cast(x.dtype)  # atan(-0.0) is -0.0

    @_in_float32
    def atan(self) -> Self:
        x = self._f()
        with no_grad():
            value = x._atan_value()
        return value._with_gradient((x,), lambda g: (g / (x * x + 1.0),))

    def arctan(self) -> Self:
        return self.atan()

    def _atan2_value(self, x: Self) -> Self:
        """C's atan2(y=self, x) for float tensors of one shape (no gradient): atan of
        min(|x|, |y|) / max(|x|, |y|) in [0, 1], reflected into the quadrant by the signs
        (of -0.0 too: atan2(0, -0.0) is pi); 0 / 0 is taken as 0 and inf / inf as 1."""
        y = self._detached()
        ax, ay = x.abs(), y.abs()
        lo, hi = ax.minimum(ay), ax.maximum(ay)
        both_inf = lo == math.inf
        r = (hi == 0).where(0.0, lo / (hi == 0).where(1.0, hi))
        r = both_inf.where(1.0, r)
        a = r._atan_value()
        a = (ay > ax).where(_PI / 2 - a, a)
        a = x._signbit().where(_PI - a, a)
        a = y._signbit().where(-a, a)
        return (x.isnan() | y.isnan()).where(math.nan, a).cast(y.dtype)

    def atan2(self, other: Operand) -> Self:
        """The angle of the point (other, self), in [-pi, pi]; torch's gradients
        other / (self^2 + other^2) and -self / (self^2 + other^2)."""
        y, x = self._float_pair("atan2", other)
        half = y._binary_in_float32("atan2", x)
        if half is not None:
            return half
        with no_grad():
            value = y._atan2_value(x._detached())

        def rule(g: Self) -> tuple[Self, Self]:
            recip = (x * x + y * y).reciprocal()
            recip = (recip == math.inf).where(0.0, recip)  # torch's 0 at the origin
            return g * x * recip, g * -y * recip

        return value._with_gradient((y, x), rule)

    def arctan2(self, other: Operand) -> Self:
        return self.atan2(other)

    def _unit_root(self) -> Self:
        """sqrt(1 - x^2) as sqrt((1 - x)(1 + x)), which keeps its precision near |x| = 1."""
        return ((1.0 - self) * (1.0 + self)).sqrt()

    @_in_float32
    def asin(self) -> Self:
        x = self._f()
        with no_grad():
            value = x._detached()._atan2_value(x._detached()._unit_root())
        return value._with_gradient((x,), lambda g: (g * (1.0 - x * x).rsqrt(),))

    def arcsin(self) -> Self:
        return self.asin()

    @_in_float32
    def acos(self) -> Self:
        x = self._f()
        with no_grad():
            value = x._detached()._unit_root()._atan2_value(x._detached())
        return value._with_gradient((x,), lambda g: (-g * (1.0 - x * x).rsqrt(),))

    def arccos(self) -> Self:
        return self.acos()

    # ── hyperbolic ──────────────────────────────────────────────────────────

    def _half_exp_sq(self) -> Self:
        """exp(|x|) / 2 as (exp(|x|/2) / 2) * exp(|x|/2): finite up to |x| = 89.4, where
        exp(|x|) itself overflows float32 at 88.7."""
        h = (self.abs() * 0.5).exp()
        return h * 0.5 * h

    @_in_float32
    def sinh(self) -> Self:
        x = self._f()
        with no_grad():
            v = x._detached()
            small = (v.expm1() - (-v).expm1()) * 0.5
            big = v._half_exp_sq()
            value = (v.abs() > 9.0).where(v._signbit().where(-big, big), small)
        return value._with_gradient((x,), lambda g: (g * x.cosh(),))

    @_in_float32
    def cosh(self) -> Self:
        x = self._f()
        with no_grad():
            v = x._detached()
            e = v.abs().minimum(9.0).exp()
            value = (v.abs() > 9.0).where(v._half_exp_sq(), (e + 1.0 / e) * 0.5)
        return value._with_gradient((x,), lambda g: (g * x.sinh(),))

    @_in_float32
    def asinh(self) -> Self:
        """sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), log(2|x|) for huge |x|."""
        x = self._f()
        with no_grad():
            v = x._detached()
            t = v.abs()
            mid = (t > _BIG).where(0.0, t)
            near = (mid + mid * mid / (1.0 + (mid * mid + 1.0).sqrt())).log1p()
            a = (t > _BIG).where(t.log() + _LN2, near)
            value = v._signbit().where(-a, a)
        return value._with_gradient((x,), lambda g: (g * (x * x + 1.0).rsqrt(),))

    def arcsinh(self) -> Self:
        return self.asinh()

    @_in_float32
    def acosh(self) -> Self:
        """log1p(t + sqrt(2t + t^2)) with t = x - 1 (exact near 1), log(2x) for huge x;
        NaN below 1."""
        x = self._f()
        with no_grad():
            v = x._detached()
            t = (v > _BIG).where(0.0, v - 1.0)
            near = (t + (t * 2.0 + t * t).sqrt()).log1p()
            value = (v > _BIG).where(v.log() + _LN2, near)
            value = (v < 1.0).where(math.nan, value)
        return value._with_gradient((x,), lambda g: (g * (x * x - 1.0).rsqrt(),))

    def arccosh(self) -> Self:
        return self.acosh()

    @_in_float32
    def atanh(self) -> Self:
        """(log1p(x) - log1p(-x)) / 2 (1 + x and 1 - x are exact near ±1): ±inf at ±1, NaN
        beyond."""
        x = self._f()
        with no_grad():
            v = x._detached()
            value = (v.log1p() - (-v).log1p()) * 0.5
        return value._with_gradient((x,), lambda g: (g / (1.0 - x * x),))

    def arctanh(self) -> Self:
        return self.atanh()

    # ── exponentials and logarithms ─────────────────────────────────────────

    @_in_float32
    def expm1(self) -> Self:
        """exp(x) - 1 without cancellation near 0: its Taylor series for |x| < 1/2 (exp - 1
        beyond, where at most a bit is lost); torch's gradient, result + 1."""
        x = self._f()
        with no_grad():
            v = x._detached()
            near = v.abs() < 0.5
            t = near.where(v, 0.0)
            series = t + t * t * t._poly(_EXPM1_SERIES)
            value = near.where(series, v.exp() - 1.0)
            value = (v == 0).where(v, value)  # -0.0 stays -0.0
        return value._with_gradient((x,), lambda g: (g * (value + 1.0),))

    @_in_float32
    def log1p(self) -> Self:
        """log(1 + x) without cancellation near 0: 2 atanh(s) = 2 (s + s^3/3 + ...) with
        s = x / (2 + x) for -0.3 < x < 0.4, log(1 + x) beyond (a device's log need only be
        accurate in absolute terms near 1: WGSL's is)."""
        x = self._f()
        with no_grad():
            v = x._detached()
            near = (v > -0.3) & (v < 0.4)
            t = near.where(v, 0.0)
            s = t / (t + 2.0)
            series = s * (s * s)._poly(_ATANH_SERIES) * 2.0
            value = near.where(series, (v + 1.0).log())
        return value._with_gradient((x,), lambda g: (g / (x + 1.0),))

    @_in_float32
    def log10(self) -> Self:
        """log(x) / ln 10; near 1 through log1p(x - 1) (x - 1 is exact there)."""
        x = self._f()
        with no_grad():
            v = x._detached()
            near = (v - 1.0).abs() < 0.3
            value = near.where((v - 1.0).log1p(), v.log()) * (1.0 / math.log(10.0))
        return value._with_gradient((x,), lambda g: (g / (x * math.log(10.0)),))

    def logaddexp(self, other: Operand) -> Self:
        """log(exp(x) + exp(y)) = max + log1p(exp(-|x - y|)); x where both are the same
        infinity (torch's rule, so -inf, -inf is -inf); torch's gradients 1 / (1 + exp(y - x))
        and 1 / (1 + exp(x - y))."""
        x, y = self._float_pair("logaddexp", other, ints=False)
        half = x._binary_in_float32("logaddexp", y)
        if half is not None:
            return half
        with no_grad():
            a, b = x._detached(), y._detached()
            m = a.maximum(b)
            value = ((a == b) & a.isinf()).where(a, m + (-(a - b).abs()).exp().log1p())
        return value._with_gradient((x, y), lambda g: (g / ((y - x).exp() + 1.0),
                                                       g / ((x - y).exp() + 1.0)))

    def logaddexp2(self, other: Operand) -> Self:
        x, y = self._float_pair("logaddexp2", other, ints=False)
        half = x._binary_in_float32("logaddexp2", y)
        if half is not None:
            return half
        with no_grad():
            a, b = x._detached(), y._detached()
            m = a.maximum(b)
            tail = (-(a - b).abs()).exp2().log1p() * (1.0 / _LN2)
            value = ((a == b) & a.isinf()).where(a, m + tail)
        return value._with_gradient((x, y), lambda g: (g / ((y - x).exp2() + 1.0),
                                                       g / ((x - y).exp2() + 1.0)))

    @_in_float32
    def erfc(self) -> Self:
        """1 - erf(x), accurate in the tail (erfc(5) is 1.5e-12, not 0): 1 - erf below
        0.85, the Chebyshev fit t * exp(-z^2 + P(t)) (2 - it for x < -0.85) beyond."""
        x = self._f()
        with no_grad():
            v = x._detached()
            z = v.abs()
            t = 1.0 / (z * 0.5 + 1.0)
            tail = t * (t._poly(_ERFC_P) - z * z).exp()
            tail = v._signbit().where(2.0 - tail, tail)
            value = (z < 0.85).where(1.0 - v.erf(), tail)
            value = v.isnan().where(math.nan, value)
        return value._with_gradient((x,), lambda g: (
            g * (x * x * -1.0).exp() * (-2.0 / math.sqrt(_PI)),))

    @_in_float32
    def erfinv(self) -> Self:
        """The inverse of erf on (-1, 1): ±inf at ±1, NaN beyond (M. Giles' approximation);
        torch's gradient, sqrt(pi) / 2 * exp(erfinv(x)^2)."""
        x = self._f()
        with no_grad():
            v = x._detached()
            w = -((1.0 - v) * (1.0 + v)).log()
            central = (w - 2.5)._poly(_ERFINV_CENTRAL)
            tail = ((w.minimum(1e30)).sqrt() - 3.0)._poly(_ERFINV_TAIL)
            value = v * (w < 5.0).where(central, tail)
            value = (v.abs() == 1.0).where(v * math.inf, value)
        return value._with_gradient((x,), lambda g: (
            g * (value * value).exp() * (math.sqrt(_PI) / 2),))

    def xlogy(self, other: Operand) -> Self:
        """x * log(y), 0 where x == 0 unless y is NaN; torch's gradients log(y) (0 where
        x == 0 and y <= 0) and x / y."""
        x, y = self._float_pair("xlogy", other)
        half = x._binary_in_float32("xlogy", y)
        if half is not None:
            return half
        with no_grad():
            a, b = x._detached(), y._detached()
            value = ((a == 0) & ~b.isnan()).where(0.0, a * b.log())
        return value._with_gradient((x, y), lambda g: (
            ((x == 0) & (y <= 0)).where(0.0, g * y.log()), g * x / y))

    # ── signs and parts ─────────────────────────────────────────────────────

    def __abs__(self) -> Self:
        return self.abs()

    def absolute(self) -> Self:
        return self.abs()

    def sgn(self) -> Self:
        return self.sign()

    def fix(self) -> Self:
        if self.dtype.is_bool:
            raise dtype_error("fix", "needs a number tensor, got bool")
        return self.trunc()

    def frac(self) -> Self:
        """x - trunc(x) with the sign of x (gradient 1, as torch); floats only, as torch."""
        if not self.dtype.is_float:
            raise dtype_error("frac", f"needs a float tensor, got {self.dtype.name}")
        return self - self.trunc()._detached()

    def square(self) -> Self:
        return self.pow(2)

    def negative(self) -> Self:
        return -self

    def positive(self) -> Self:
        return self

    def deg2rad(self) -> Self:
        return self._f() * (_PI / 180.0)

    def rad2deg(self) -> Self:
        return self._f() * (180.0 / _PI)

    def copysign(self, other: Operand) -> Self:
        """|x| with the sign bit of `other` (-0.0 and NaN signs too); float result; torch's
        gradients, result / x (0 where x == 0) and 0 for `other`."""
        x, y = self._float_pair("copysign", other)
        with no_grad():
            a = x._detached().abs()
            value = y._signbit().where(-a, a)
        return value._with_gradient((x, y), lambda g: (
            g * (x == 0).where(0.0, value / (x == 0).where(1.0, x)),
            y._const(0.0, y.shape, y.dtype)))

    def fmod(self, other: Operand) -> Self:
        """C's fmod: x - trunc(x / y) * y, the sign of x; an integer zero divisor raises
        ZeroDivisorError. torch's gradients: 1 and -trunc(x / y)."""
        x, y = self._division_operands("fmod", other)
        if not x.dtype.is_float:
            return x._make("binary", (x, y), BinaryKind.MOD, x.shape)
        with no_grad():
            value = x._detached()._fmod(y._detached())
        return value._with_gradient((x, y), lambda g: (
            g, -g * x._detached().div(y._detached(), rounding_mode="trunc")))

    def hypot(self, other: Operand) -> Self:
        """sqrt(x^2 + y^2) without overflow: max * sqrt(1 + (min / max)^2); inf where
        either is infinite (NaN or not, as C). torch's gradients x / r and y / r."""
        x, y = self._float_pair("hypot", other, ints=False)
        half = x._binary_in_float32("hypot", y)
        if half is not None:
            return half
        with no_grad():
            ax, ay = x._detached().abs(), y._detached().abs()
            hi, lo = ax.maximum(ay), ax.minimum(ay)
            q = lo / (hi == 0).where(1.0, hi)
            value = hi * (q * q + 1.0).sqrt()
            value = (x.isnan() | y.isnan()).where(math.nan, value)
            value = ((ax == math.inf) | (ay == math.inf)).where(math.inf, value)

        return value._with_gradient((x, y), lambda g: (g * x / value, g * y / value))

    def div(self, other: Operand, reverse: bool = False, *,
            rounding_mode: str | None = None) -> Self:
        """True division; rounding_mode="trunc" rounds the quotient toward zero, "floor"
        down (`floor_divide`); integers then stay integers (a zero divisor raises
        ZeroDivisorError). The rounded forms have zero gradient, as torch."""
        if rounding_mode is None:
            return super().div(other, reverse)
        if rounding_mode not in ("trunc", "floor"):
            raise shape_error("div", f"rounding_mode must be None, 'trunc' or 'floor', got "
                                     f"{rounding_mode!r}")
        x, y = self._operands("div", other)
        x, y = (y, x) if reverse else (x, y)
        if rounding_mode == "floor":
            return x.floor_divide(y)
        x, y = x._division_operands("div", y)
        if not x.dtype.is_float:
            return x._make("binary", (x, y), BinaryKind.DIV, x.shape)  # C: toward zero
        return x._zero_grad((x._detached() / y._detached()).trunc())

    def true_divide(self, other: Operand) -> Self:
        return self.div(other)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None,
                   neginf: float | None = None) -> Self:
        """NaN, inf and -inf replaced (by default with 0 and the dtype's largest and
        smallest finite values); the gradient flows only at finite elements, as torch's."""
        if not self.dtype.is_float:
            return self
        finfo = np.finfo(self.dtype.np)
        hi = float(finfo.max) if posinf is None else posinf
        lo = float(finfo.min) if neginf is None else neginf
        x = self._detached()
        fill = x.isnan().where(nan, (x > 0).where(hi, lo)).cast(self.dtype)
        return self.isfinite().where(self, fill)

    # ── comparisons ─────────────────────────────────────────────────────────

    def isclose(self, other: Operand, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False) -> Self:
        """|x - y| <= atol + rtol * |y| elementwise, or equal (so equal infinities are
        close); NaNs close to each other only with equal_nan. Bool, no gradient."""
        if rtol < 0 or atol < 0:
            raise shape_error("isclose", f"rtol and atol must be >= 0, got {rtol}, {atol}")
        x, y = self._operands("isclose", other)
        x, y = x._detached(), y._detached()
        if x.dtype.is_bool:
            return x == y
        close = x == y
        if x.dtype.is_float:
            close = close | ((x - y).abs() <= (y.abs() * rtol + atol))
            close = close & x.isfinite() & y.isfinite() | (x == y)
            if equal_nan:
                close = close | (x.isnan() & y.isnan())
        else:
            diff = (x.cast(int32) - y.cast(int32)).abs().float()
            close = close | (diff <= y.float().abs() * rtol + atol)
        return close

    def allclose(self, other: Operand, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        close = self.isclose(other, rtol, atol, equal_nan)
        return bool(close.all().item())  # type: ignore[attr-defined]  # (Tensor's)

    def isposinf(self) -> Self:
        x = self._detached()
        return x == math.inf if x.dtype.is_float else x._const(False, x.shape, bool_)

    def isneginf(self) -> Self:
        x = self._detached()
        return x == -math.inf if x.dtype.is_float else x._const(False, x.shape, bool_)

    def isreal(self) -> Self:
        """True everywhere: picograd's tensors are real."""
        return self._const(True, self.shape, bool_)

    def is_floating_point(self) -> bool:
        return self.dtype.is_float

    def is_complex(self) -> bool:
        return False

    def is_nonzero(self) -> bool:
        if self.numel() != 1:
            raise shape_error("is_nonzero", f"needs a tensor of one element, got shape "
                                            f"{self.shape}")
        return bool(self.item())  # type: ignore[attr-defined]
