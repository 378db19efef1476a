"""SGD: p -= lr * (g + weight_decay * p), with optional (Nesterov) momentum; torch's formula.

    opt = pg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from picograd.frontend.tensor import Tensor
from picograd.optim.optimizer import (
    IMPLEMENTATION_FLAGS,
    HParamRule,
    Optimizer,
    finite,
    flag,
    implementation_defaults,
    non_negative,
)


class SGD(Optimizer):
    """p -= lr * (g + weight_decay * p), with optional (Nesterov) momentum."""

    hparam_rules: ClassVar[dict[str, HParamRule]] = {
        "lr": non_negative, "momentum": non_negative, "dampening": finite,
        "weight_decay": non_negative, "nesterov": flag, "maximize": flag,
        **IMPLEMENTATION_FLAGS}
    state_names = ("momentum_buffer",)
    counts_steps = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None):
        super().__init__(params, {
            "lr": lr, "momentum": momentum, "dampening": dampening,
            "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
            **implementation_defaults(foreach, fused, False, differentiable)})

    def _hparam_conflicts(self, hparams: dict[str, Any]) -> list[str]:
        if hparams["nesterov"] and (hparams["momentum"] <= 0 or hparams["dampening"] != 0):
            return [f"nesterov needs a momentum > 0 and dampening 0, got momentum "
                    f"{hparams['momentum']!r} and dampening {hparams['dampening']!r}"]
        return []

    def _scalar_values(self, group: dict[str, Any]) -> dict[str, float]:
        # momentum is a buffer too: OneCycleLR and CyclicLR change it every step
        return {"lr": group["lr"], "momentum": group["momentum"]}

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor], group: dict[str, Any]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        new_state: dict[str, Tensor] = {}
        if group["momentum"]:
            momentum = self._scalar("momentum", p, group)
            if "momentum_buffer" not in state:
                buf = g  # torch starts the buffer at the first gradient
            else:
                buf = state["momentum_buffer"] * momentum + g * (1 - group["dampening"])
            new_state["momentum_buffer"] = buf
            g = g + buf * momentum if group["nesterov"] else buf
        return p - g * self._scalar("lr", p, group), new_state
