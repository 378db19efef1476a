"""Per-coordinate adaptive optimisers with torch's formulas and defaults: RMSprop (`centered`,
`momentum`), Adagrad (`lr_decay`, `initial_accumulator_value`) and Adadelta.

    opt = pg.optim.RMSprop(model.parameters(), lr=1e-3, momentum=0.9, centered=True)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from picograd.frontend.tensor import Tensor
from picograd.optim.optimizer import (
    IMPLEMENTATION_FLAGS,
    HParamRule,
    Optimizer,
    flag,
    implementation_defaults,
    non_negative,
    unit_interval,
)


class RMSprop(Optimizer):
    """s = alpha * s + (1 - alpha) * g^2; p -= lr * g / (sqrt(s - mean(g)^2 if centered) + eps),
    through a momentum buffer when `momentum` > 0."""

    hparam_rules: ClassVar[dict[str, HParamRule]] = {
        "lr": non_negative, "alpha": non_negative, "eps": non_negative,
        "weight_decay": non_negative, "momentum": non_negative, "centered": flag,
        "maximize": flag, **IMPLEMENTATION_FLAGS}

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False):
        super().__init__(params, {
            "lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay,
            "momentum": momentum, "centered": centered, "maximize": maximize,
            **implementation_defaults(foreach, None, capturable, differentiable)})
        groups = self.param_groups
        self.state_names = ("square_avg",) + (
            ("momentum_buffer",) if any(g["momentum"] for g in groups) else ()) + (
            ("grad_avg",) if any(g["centered"] for g in groups) else ())

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor], group: dict[str, Any]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        alpha = group["alpha"]
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        square_avg = self._state(state, "square_avg", p) * alpha + g * g * (1 - alpha)
        new_state = {"square_avg": square_avg}
        if group["centered"]:
            grad_avg = self._state(state, "grad_avg", p) * alpha + g * (1 - alpha)
            new_state["grad_avg"] = grad_avg
            avg = (square_avg - grad_avg * grad_avg).sqrt() + group["eps"]
        else:
            avg = square_avg.sqrt() + group["eps"]
        lr = self._scalar("lr", p, group)
        if group["momentum"] > 0:
            buf = self._state(state, "momentum_buffer", p) * group["momentum"] + g / avg
            new_state["momentum_buffer"] = buf
            return p - buf * lr, new_state
        return p - g / avg * lr, new_state


class Adagrad(Optimizer):
    """sum += g^2; p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)."""

    hparam_rules: ClassVar[dict[str, HParamRule]] = {
        "lr": non_negative, "lr_decay": non_negative, "weight_decay": non_negative,
        "initial_accumulator_value": non_negative, "eps": non_negative, "maximize": flag,
        **IMPLEMENTATION_FLAGS}
    state_names = ("sum",)

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None):
        super().__init__(params, {
            "lr": lr, "lr_decay": lr_decay, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "eps": eps,
            "maximize": maximize, **implementation_defaults(foreach, fused, False,
                                                            differentiable)})

    def _scalar_values(self, group: dict[str, Any]) -> dict[str, float]:
        lr = group["lr"]
        return {"lr": lr, "step_size": lr / (1 + (self.steps - 1) * group["lr_decay"])}

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor], group: dict[str, Any]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        total = self._state(state, "sum", p, group["initial_accumulator_value"]) + g * g
        step = self._scalar("step_size", p, group)
        return p - g / (total.sqrt() + group["eps"]) * step, {"sum": total}


class Adadelta(Optimizer):
    """Zeiler's Adadelta: the step is g scaled by RMS(previous steps) / RMS(gradients)."""

    hparam_rules: ClassVar[dict[str, HParamRule]] = {
        "lr": non_negative, "rho": unit_interval, "eps": non_negative,
        "weight_decay": non_negative, "maximize": flag, **IMPLEMENTATION_FLAGS}
    state_names = ("square_avg", "acc_delta")

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0.0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False):
        super().__init__(params, {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize,
            **implementation_defaults(foreach, None, capturable, differentiable)})

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor], group: dict[str, Any]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        rho, eps = group["rho"], group["eps"]
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        square_avg = self._state(state, "square_avg", p) * rho + g * g * (1 - rho)
        acc_delta = self._state(state, "acc_delta", p)
        delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * g
        acc_delta = acc_delta * rho + delta * delta * (1 - rho)
        return (p - delta * self._scalar("lr", p, group),
                {"square_avg": square_avg, "acc_delta": acc_delta})
