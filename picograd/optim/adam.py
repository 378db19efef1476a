"""The Adam family, with torch's formulas and defaults: Adam and AdamW (`amsgrad`), Adamax,
NAdam and RAdam (both with `decoupled_weight_decay`).

    opt = pg.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, amsgrad=True)

Step-dependent factors (bias corrections, NAdam's momentum schedule, RAdam's rectification)
are per-step 0-d buffers, so every step runs the same compiled graph; RAdam's switch from
its plain to its rectified update (at the step where rho_t first exceeds 5) is a pair of
such factors, one of them 0, rather than a branch in the graph.
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

_ADAM_RULES: dict[str, HParamRule] = {
    "lr": non_negative, "betas": betas, "eps": non_negative, "weight_decay": non_negative,
    "maximize": flag, **IMPLEMENTATION_FLAGS}


def _beta1(group: dict[str, Any]) -> dict[str, float]:
    """betas[0] as per-step buffers: OneCycleLR and CyclicLR change it every step."""
    b1 = group["betas"][0]
    return {"beta1": b1, "one_minus_beta1": 1 - b1}


def _moments(opt: Optimizer, p: Tensor, g: Tensor, state: dict[str, Tensor],
             group: dict[str, Any]) -> tuple[Tensor, Tensor]:
    """Adam's running mean of the gradient and of its square."""
    b2 = group["betas"][1]
    m = (opt._state(state, "exp_avg", p) * opt._scalar("beta1", p, group)
         + g * opt._scalar("one_minus_beta1", p, group))
    v = opt._state(state, "exp_avg_sq", p) * b2 + g * g * (1 - b2)
    return m, v


class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction; L2 weight decay added to the gradient;
    `amsgrad` keeps the running maximum of the second moment (Reddi et al.)."""

    decoupled = False
    hparam_rules: ClassVar[dict[str, HParamRule]] = {**_ADAM_RULES, "amsgrad": flag}

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None):
        super().__init__(params, {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "amsgrad": amsgrad, "maximize": maximize,
            **implementation_defaults(foreach, fused, capturable, differentiable)})
        self.state_names = ("exp_avg", "exp_avg_sq") + (
            ("max_exp_avg_sq",) if any(g["amsgrad"] for g in self.param_groups) else ())

    def _scalar_values(self, group: dict[str, Any]) -> dict[str, float]:
        b1, b2 = group["betas"]
        t, lr = self.steps, group["lr"]
        return {"lr": lr, "step_size": lr / (1 - b1**t),
                "denominator_scale": 1 / math.sqrt(1 - b2**t),
                "decay": 1 - lr * group["weight_decay"], **_beta1(group)}

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor], group: dict[str, Any]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        wd = group["weight_decay"]
        if wd and not self.decoupled:
            g = g + p * wd
        m, v = _moments(self, p, g, state, group)
        new_state = {"exp_avg": m, "exp_avg_sq": v}
        if group["amsgrad"]:
            v = self._state(state, "max_exp_avg_sq", p).maximum(v)
            new_state["max_exp_avg_sq"] = v
        if wd and self.decoupled:
            p = p * self._scalar("decay", p, group)
        denominator = v.sqrt() * self._scalar("denominator_scale", p, group) + group["eps"]
        return p - m / denominator * self._scalar("step_size", p, group), new_state


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step."""

    decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused)


class Adamax(Optimizer):
    """Adam with the infinity norm: u = max(b2 * u, |g| + eps), p -= lr / (1 - b1^t) * m / u."""

    hparam_rules: ClassVar[dict[str, HParamRule]] = _ADAM_RULES
    state_names = ("exp_avg", "exp_inf")

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        super().__init__(params, {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize,
            **implementation_defaults(foreach, None, capturable, differentiable)})

    def _scalar_values(self, group: dict[str, Any]) -> dict[str, float]:
        b1, _ = group["betas"]
        return {"lr": group["lr"], "step_size": group["lr"] / (1 - b1**self.steps)}

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor], group: dict[str, Any]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        b1, b2 = group["betas"]
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        m = self._state(state, "exp_avg", p) * b1 + g * (1 - b1)
        u = (self._state(state, "exp_inf", p) * b2).maximum(g.abs() + group["eps"])
        return p - m / u * self._scalar("step_size", p, group), {"exp_avg": m, "exp_inf": u}


class NAdam(Optimizer):
    """Adam with Nesterov momentum (Dozat) and torch's momentum schedule
    mu_t = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))."""

    hparam_rules: ClassVar[dict[str, HParamRule]] = {
        **_ADAM_RULES, "momentum_decay": non_negative, "decoupled_weight_decay": flag}
    state_names = ("exp_avg", "exp_avg_sq")
    _HOST_STATE_NAMES = frozenset({"mu_product"})

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        super().__init__(params, {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            **implementation_defaults(foreach, None, capturable, differentiable)})
        # per group: the product of mu_1 .. mu_t (torch's per-parameter `mu_product`) and
        # its t; kept in step with `steps`, recomputed when `steps` was set from outside
        self._mu_products: dict[int, tuple[int, float]] = {}

    def _mu(self, group: dict[str, Any], t: int) -> float:
        b1, _ = group["betas"]
        return b1 * (1 - 0.5 * 0.96 ** (t * group["momentum_decay"]))

    def mu_product(self, group: dict[str, Any]) -> float:
        index = self._group_index(group)
        t, product = self._mu_products.get(index, (0, 1.0))
        if t == self.steps - 1:
            product *= self._mu(group, self.steps)
        elif t != self.steps:
            product = math.prod(self._mu(group, i) for i in range(1, self.steps + 1))
        self._mu_products[index] = (self.steps, product)
        return product

    def _host_state(self, group: dict[str, Any]) -> dict[str, float]:
        return {"mu_product": self.mu_product(group)}

    def _load_host_state(self, group: dict[str, Any], state: dict[str, float]) -> None:
        self._mu_products[self._group_index(group)] = (self.steps, state["mu_product"])

    def _scalar_values(self, group: dict[str, Any]) -> dict[str, float]:
        _, b2 = group["betas"]
        t, lr = self.steps, group["lr"]
        mu, mu_next = self._mu(group, t), self._mu(group, t + 1)
        product = self.mu_product(group)
        return {"lr": lr, "grad_step": lr * (1 - mu) / (1 - product),
                "momentum_step": lr * mu_next / (1 - product * mu_next),
                "denominator_scale": 1 / math.sqrt(1 - b2**t),
                "decay": 1 - lr * group["weight_decay"], **_beta1(group)}

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor], group: dict[str, Any]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        wd = group["weight_decay"]
        if wd and group["decoupled_weight_decay"]:
            p = p * self._scalar("decay", p, group)
        elif wd:
            g = g + p * wd
        m, v = _moments(self, p, g, state, group)
        denominator = v.sqrt() * self._scalar("denominator_scale", p, group) + group["eps"]
        p = p - g / denominator * self._scalar("grad_step", p, group)
        p = p - m / denominator * self._scalar("momentum_step", p, group)
        return p, {"exp_avg": m, "exp_avg_sq": v}


class RAdam(Optimizer):
    """Rectified Adam (Liu et al.): plain momentum SGD while the second moment's variance
    is not yet tractable (rho_t <= 5), then Adam with the rectification factor."""

    hparam_rules: ClassVar[dict[str, HParamRule]] = {
        **_ADAM_RULES, "decoupled_weight_decay": flag}
    state_names = ("exp_avg", "exp_avg_sq")

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False):
        super().__init__(params, {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
            **implementation_defaults(foreach, None, capturable, differentiable)})

    def _scalar_values(self, group: dict[str, Any]) -> dict[str, float]:
        b1, b2 = group["betas"]
        t, lr = self.steps, group["lr"]
        correction1, correction2 = 1 - b1**t, 1 - b2**t
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * t * b2**t / correction2
        plain = adaptive = 0.0
        if rho_t > 5:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = lr / correction1 * rect * math.sqrt(correction2)
        else:
            plain = lr / correction1
        return {"lr": lr, "plain_step": plain, "adaptive_step": adaptive,
                "decay": 1 - lr * group["weight_decay"], **_beta1(group)}

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor], group: dict[str, Any]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        wd = group["weight_decay"]
        if wd and group["decoupled_weight_decay"]:
            p = p * self._scalar("decay", p, group)
        elif wd:
            g = g + p * wd
        m, v = _moments(self, p, g, state, group)
        scale = (self._scalar("plain_step", p, group)
                 + self._scalar("adaptive_step", p, group) / (v.sqrt() + group["eps"]))
        return p - m * scale, {"exp_avg": m, "exp_avg_sq": v}
