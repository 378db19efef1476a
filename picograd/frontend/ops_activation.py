"""Activation functions built from the primitives (torch's names and semantics).

    sigmoid leaky_relu(negative_slope) elu(alpha) gelu(approximate) silu mish
    softplus(beta, threshold) hardswish hardsigmoid relu6

(`relu` is a primitive-level op, in ops_elementwise.py.) As in ops_math.py, every op is a
composition of existing ops, so autograd differentiates it through its decomposition, with
torch's gradients at the kinks and no inf or NaN in a branch that `where` discards; float
functions return the input's float dtype and float32 for integer and bool inputs.
"""

from __future__ import annotations

import math
from typing import Self

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
        pos = self > 0
        neg = pos.where(0.0, self)  # exp of it never overflows
        return pos.where(self, (neg.exp() - 1.0) * alpha)

    def gelu(self, approximate: str = "none") -> Self:
        """x * Phi(x) with the exact erf form, or torch's tanh form (approximate='tanh')."""
        x = self._f()
        if approximate == "tanh":
            inner = (x + x * x * x * 0.044715) * math.sqrt(2 / math.pi)
            return x * 0.5 * (1.0 + inner.tanh())
        if approximate != "none":
            raise shape_error("gelu", f"approximate must be 'none' or 'tanh', got "
                                      f"{approximate!r}")
        return x * 0.5 * (1.0 + (x * (1 / math.sqrt(2))).erf())

    def silu(self) -> Self:
        return self * self.sigmoid()

    def softplus(self, beta: float = 1.0, threshold: float = 20.0) -> Self:
        """log(1 + exp(beta x)) / beta; x itself where beta x > threshold (torch's rule)."""
        bx = self._f() * beta
        linear = bx > threshold
        safe = linear.where(0.0, bx)
        return linear.where(self._f(), (safe.exp() + 1.0).log() * (1 / beta))

    def mish(self) -> Self:
        return self * self.softplus().tanh()

    def hardswish(self) -> Self:
        x = self._f()
        return (x <= -3.0).where(0.0, (x >= 3.0).where(x, x * (x + 3.0) * (1 / 6)))

    def hardsigmoid(self) -> Self:
        x = self._f()
        return (x <= -3.0).where(0.0, (x >= 3.0).where(1.0, x * (1 / 6) + 0.5))

    def relu6(self) -> Self:
        return (self <= 0).where(0, (self >= 6).where(6, self))
