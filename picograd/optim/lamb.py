"""LAMB (You et al., "Large Batch Optimization for Deep Learning", 2019): Adam's
bias-corrected step plus decoupled weight decay, scaled per parameter tensor by the trust
ratio ||p|| / ||step|| (1 where either norm is 0). torch has no LAMB; the test checks it
against the paper's formula in numpy.

    opt = pg.optim.LAMB(model.parameters(), lr=1e-3, weight_decay=0.01)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, ClassVar

from picograd.frontend.tensor import Tensor
from picograd.optim.optimizer import (
    IMPLEMENTATION_FLAGS,
    HParamRule,
    Optimizer,
    betas,
    flag,
    implementation_defaults,
    non_negative,
)


class LAMB(Optimizer):
    """r = m_hat / (sqrt(v_hat) + eps) + weight_decay * p; p -= lr * (||p|| / ||r||) * r."""

    hparam_rules: ClassVar[dict[str, HParamRule]] = {
        "lr": non_negative, "betas": betas, "eps": non_negative,
        "weight_decay": non_negative, "maximize": flag, **IMPLEMENTATION_FLAGS}
    state_names = ("exp_avg", "exp_avg_sq")

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-6,
                 weight_decay: float = 0.0, *, maximize: bool = False,
                 foreach: bool | None = None):
        super().__init__(params, {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, **implementation_defaults(foreach, None, False, False)})

    def _scalar_values(self, group: dict[str, Any]) -> dict[str, float]:
        b1, b2 = group["betas"]
        t = self.steps
        return {"lr": group["lr"], "mean_scale": 1 / (1 - b1**t),
                "denominator_scale": 1 / math.sqrt(1 - b2**t)}

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor], group: dict[str, Any]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        b1, b2 = group["betas"]
        m = self._state(state, "exp_avg", p) * b1 + g * (1 - b1)
        v = self._state(state, "exp_avg_sq", p) * b2 + g * g * (1 - b2)
        r = (m * self._scalar("mean_scale", p, group)
             / (v.sqrt() * self._scalar("denominator_scale", p, group) + group["eps"]))
        if group["weight_decay"]:
            r = r + p * group["weight_decay"]
        p_norm, r_norm = (p * p).sum().sqrt(), (r * r).sum().sqrt()
        trust = ((p_norm > 0) & (r_norm > 0)).where(p_norm / r_norm, 1.0)
        return p - r * (trust * self._scalar("lr", p, group)), {"exp_avg": m, "exp_avg_sq": v}
