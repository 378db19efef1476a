"""Activation functions built from the primitives (torch's names and semantics).

    sigmoid leaky_relu(negative_slope) elu(alpha) gelu(approximate) silu mish
    softplus(beta, threshold) hardswish hardsigmoid relu6

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

from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import shape_error
from picograd.frontend.ops_math import MathOps


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
        em1 = (neg == 0).where(neg, neg.exp() - 1.0)  # expm1 keeps the zero's sign
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
        return linear.where(self._f(), (safe.exp() + 1.0).log() * (1 / beta))

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
