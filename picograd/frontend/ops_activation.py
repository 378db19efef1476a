"""Activation functions built from the primitives (torch's names and semantics).

    sigmoid leaky_relu(negative_slope) elu(alpha) gelu(approximate) silu mish
    softplus(beta, threshold) hardswish hardsigmoid relu6
    celu(alpha) selu hardtanh(min_val, max_val) softsign softmin(dim) logsigmoid glu(dim)
    hardshrink(lambd) softshrink(lambd) tanhshrink threshold(threshold, value)
    rrelu(lower, upper, training) prelu(weight) swish quick_gelu

(`relu` is a primitive-level op, in ops_elementwise.py.) As in ops_math.py, every op is a
composition of existing ops, so autograd differentiates it through its decomposition, with
torch's gradients at the kinks and no inf or NaN in a branch that `where` discards; float
functions return the input's float dtype and float32 for integer and bool inputs. The values
and gradients at ±inf, NaN, ±0.0 and large |x| are torch's (tests/e2e/test_math_edges.py):
hardswish and hardsigmoid, whose decompositions would get them wrong there (inf * 0 in a
discarded branch's gradient), and silu (the sign of a zero gradient) give torch's gradient
formula instead (`_with_gradient`), and gelu (torch's cdf + x * pdf: through the
decomposition of erf its backward was ten times the nodes).
`gelu(inf)` is inf; torch's vectorised CPU kernel gives NaN there (its scalar one, inf).
"""

from __future__ import annotations

import math
from typing import Self

from picograd.frontend import random
from picograd.frontend.base import TensorBase, normalize_axis
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.ops_math import MathOps

# selu's constants (Klambauer et al., as torch)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class ActivationOps(MathOps):
    __slots__ = ()

    def sigmoid(self) -> Self:
        pos, na = self._neg_abs()
        z = na.exp()
        d = 1.0 + z
        return pos.where(1.0 / d, z / d)

    def leaky_relu(self, negative_slope: float = 0.01) -> Self:
        return (self > 0).where(self, self * negative_slope)

    def elu(self, alpha: float = 1.0) -> Self:
        """x for x > 0, alpha * (exp(x) - 1) elsewhere, with torch's sides: 0 takes the
        exponential's (gradient alpha), NaN the identity's (gradient 1), -0.0 stays -0.0."""
        low = self <= 0
        neg = low.where(self, 0.0)  # exp of it never overflows
        with no_grad():  # expm1: exact near 0 and keeps -0.0's sign (SpecialOps')
            value = neg.expm1()  # type: ignore[attr-defined]
        em1 = value._with_gradient((neg,), lambda g: (g * neg.exp(),))  # torch's: not em1 + 1
        return low.where(em1 * alpha, self)

    def gelu(self, approximate: str = "none") -> Self:
        """x * Phi(x) with the exact erf form, or torch's tanh form (approximate='tanh')."""
        x = self._f()
        if approximate == "tanh":
            inner = (x + x * x * x * 0.044715) * math.sqrt(2 / math.pi)
            return x * 0.5 * (1.0 + inner.tanh())
        if approximate != "none":
            raise shape_error("gelu", f"approximate must be 'none' or 'tanh', got "
                                      f"{approximate!r}")
        with no_grad():
            cdf = 0.5 * (1.0 + (x * (1 / math.sqrt(2))).erf())
            value = x * cdf

        def rule(g: Self) -> tuple[Self]:
            # torch's formula, cdf + x * pdf (differentiating through erf's decomposition built
            # about 80 nodes for the 8 of this)
            pdf = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
            return (g * (cdf + x * pdf),)

        return value._with_gradient((x,), rule)

    def silu(self) -> Self:
        """x * sigmoid(x), with torch's gradient formula s * (1 + x * (1 - s)) (whose zero
        below -100 is -0.0, as torch's)."""
        x = self._f()
        with no_grad():
            s = x.sigmoid()
            value = x * s
        return value._with_gradient((x,), lambda g: (g * (s * (1.0 + x * (1.0 - s))),))

    def softplus(self, beta: float = 1.0, threshold: float = 20.0) -> Self:
        """log(1 + exp(beta x)) / beta; x itself where beta x > threshold (torch's rule)."""
        bx = self._f() * beta
        linear = bx > threshold
        safe = linear.where(0.0, bx)
        soft = safe.exp().log1p()  # type: ignore[attr-defined]  # (SpecialOps': exact for tiny exp)
        return linear.where(self._f(), soft * (1 / beta))

    def mish(self) -> Self:
        return self * self.softplus().tanh()

    def hardswish(self) -> Self:
        """x * clamp(x + 3, 0, 6) / 6 as torch computes it (-0.0 below -3, NaN at -inf), with
        torch's gradient: 0 up to -3, x / 3 + 1/2 between -3 and 3, 1 from 3 on (and at
        NaN)."""
        x = self._f()
        with no_grad():
            value = x * (x + 3.0).clamp(0.0, 6.0) / 6.0
        return value._with_gradient((x,), lambda g: (
            g * (x <= -3.0).where(0.0, (x < 3.0).where(x / 3.0 + 0.5, 1.0)),))

    def hardsigmoid(self) -> Self:
        """clamp(x / 6 + 1/2, 0, 1); the gradient is 1/6 strictly between -3 and 3, else 0
        (NaN included), as torch's."""
        x = self._f()
        with no_grad():
            value = (x <= -3.0).where(0.0, (x >= 3.0).where(1.0, x * (1 / 6) + 0.5))
        return value._with_gradient((x,), lambda g: (
            ((x > -3.0) & (x < 3.0)).where(g * (1 / 6), 0.0),))

    def relu6(self) -> Self:
        """clamp(x, 0, 6) (torch's hardtanh): the gradient flows strictly between 0 and 6,
        not at NaN."""
        inside = (self > 0) & (self < 6)
        return inside.where(self, self._detached().clamp(0, 6))

    # ── more of torch.nn.functional's activations ───────────────────────────

    def _refuse(self, op: str, ints: bool = True, uint8_too: bool = False) -> None:
        """The DTypeError of torch's kernels that have no bool form (nor an integer one
        unless `ints`; `uint8_too`: nor a uint8 one)."""
        dt = self.dtype
        if dt.is_bool or (not ints and not dt.is_float) or (uint8_too and dt.name == "uint8"):
            raise dtype_error(op, f"not defined for {dt.name} tensors")

    def celu(self, alpha: float = 1.0) -> Self:
        """max(0, x) + min(0, alpha (exp(x / alpha) - 1)): elu of x / alpha, scaled back."""
        self._refuse("celu", ints=False)
        if alpha == 0:
            raise shape_error("celu", "alpha must not be 0")
        return (self._f() * (1.0 / alpha)).elu(1.0) * alpha

    def selu(self) -> Self:
        self._refuse("selu", ints=False)
        return self._f().elu(_SELU_ALPHA) * _SELU_SCALE

    def hardtanh(self, min_val: float = -1.0, max_val: float = 1.0) -> Self:
        """clamp(x, min_val, max_val); the gradient flows strictly inside, not at NaN (as
        relu6, and torch's vectorised kernel; its scalar one, for a short tail, passes it)."""
        self._refuse("hardtanh", uint8_too=True)
        if min_val > max_val:
            raise shape_error("hardtanh", f"min_val {min_val} must not exceed max_val "
                                          f"{max_val}")
        if not self.dtype.is_float:  # an integer tensor stays one (bounds truncated, as torch)
            return self.clamp(int(min_val), int(max_val))
        inside = (self > min_val) & (self < max_val)
        return inside.where(self, self._detached().clamp(min_val, max_val))

    def softsign(self) -> Self:
        """x / (1 + |x|), with torch's gradient as its autograd computes it, 1 / d - |x| / d / d
        for d = 1 + |x| (0 for huge |x| where 1 / d^2 would overflow d^2; NaN at ±inf)."""
        self._refuse("softsign")
        if not self.dtype.is_float:  # torch's 1 + |x| in the integer dtype (it wraps)
            return self / (self.abs() + 1)
        x = self._f()
        with no_grad():
            value = x / (x.abs() + 1.0)

        def rule(g: Self) -> tuple[Self]:
            d = x.abs() + 1.0
            return (g * (1.0 / d - x.abs() / d / d),)

        return value._with_gradient((x,), rule)

    def softmin(self, dim: int = -1) -> Self:
        return (-self._f()).softmax(dim)

    def logsigmoid(self) -> Self:
        """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)) (never overflows); torch's
        gradient, sigmoid(-x)."""
        self._refuse("logsigmoid", ints=False)
        x = self._f()
        with no_grad():
            v = x._detached()
            value = v.minimum(0.0) - (-v.abs()).exp().log1p()  # type: ignore[attr-defined]
        return value._with_gradient((x,), lambda g: (g * (-x).sigmoid(),))

    def glu(self, dim: int = -1) -> Self:
        """a * sigmoid(b) for the two halves a, b of `dim` (its size must be even)."""
        if self.ndim == 0:
            raise shape_error("glu", "needs at least 1 dim, got a 0-d tensor")
        d = normalize_axis("glu", dim, self.ndim, self.shape)
        n = self.shape[d]
        if n % 2:
            raise shape_error("glu", f"dim {dim} must have an even size, got {n}")
        x = self._f()
        return x._narrow(d, 0, n // 2) * x._narrow(d, n // 2, n // 2).sigmoid()  # type: ignore[attr-defined]

    def hardshrink(self, lambd: float = 0.5) -> Self:
        """0 where -lambd <= x <= lambd, x elsewhere (NaN stays NaN)."""
        self._refuse("hardshrink", ints=False)
        inside = (self >= -lambd) & (self <= lambd)
        return inside.where(0.0, self)

    def softshrink(self, lambd: float = 0.5) -> Self:
        """x - lambd above lambd, x + lambd below -lambd, 0 between."""
        self._refuse("softshrink", ints=False)
        if lambd < 0:
            raise shape_error("softshrink", f"lambd must be >= 0, got {lambd}")
        x = self._f()
        # between: +0.0 (torch's vectorised kernel; its scalar one, for short tensors, keeps
        # -0.0), NaN stays NaN
        return (x > lambd).where(x - lambd, (x < -lambd).where(x + lambd, x.isnan().where(
            x, 0.0)))

    def tanhshrink(self) -> Self:
        """x - tanh(x), as torch computes it (so near 0 it cancels as torch's does)."""
        self._refuse("tanhshrink")
        return self._f() - self._f().tanh()

    def threshold(self, threshold: float, value: float) -> Self:
        """x where x > threshold, else `value` (NaN stays NaN); gradient 1 where x is kept.
        An integer tensor stays integer (`value` truncated, as torch)."""
        self._refuse("threshold", uint8_too=True)
        fill = value if self.dtype.is_float else int(value)
        return (self <= threshold).where(self._const(fill, self.shape, self.dtype), self)

    def rrelu(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
              training: bool = False) -> Self:
        """leaky_relu with slope (lower + upper) / 2; in training a slope drawn from
        U(lower, upper) per element (the device's generator, `manual_seed`)."""
        if not lower <= upper:
            raise shape_error("rrelu", f"needs lower <= upper, got {lower}, {upper}")
        x = self._f()
        if not training:
            return x.leaky_relu((lower + upper) / 2)
        u = random.rand(type(self), x.shape, x.device, x.dtype)
        slope = u * (upper - lower) + lower
        return (x >= 0).where(x, x * slope)

    def prelu(self, weight: TensorBase) -> Self:
        """x where x > 0, weight * x elsewhere; weight has one entry or one per channel (dim
        1; inputs of fewer dims have one channel)."""
        channels = self.shape[1] if self.ndim >= 2 else 1
        if weight.numel() not in (1, channels) or weight.ndim > 1:
            raise shape_error("prelu", f"weight of shape {weight.shape} must have 1 or "
                                       f"{channels} entries (channels of input {self.shape})")
        w = weight.reshape(-1)  # type: ignore[attr-defined]
        if w.shape[0] > 1:
            w = w.reshape(channels, *([1] * (self.ndim - 2)))
        elif self.ndim:
            w = w.reshape(())
        return (self > 0).where(self, self * w)

    def swish(self) -> Self:
        return self.silu()

    def quick_gelu(self) -> Self:
        """x * sigmoid(1.702 x) (the GELU approximation of OpenAI's CLIP)."""
        x = self._f()
        return x * (x * 1.702).sigmoid()
