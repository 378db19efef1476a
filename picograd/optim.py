"""Optimisers (SGD, Adam, AdamW) and learning-rate schedulers (StepLR, CosineAnnealingLR).

`step()` builds every parameter's update lazily (under `no_grad`) and realizes, in one
graph, the new parameters, the optimiser's state and the tensors `backward()` was called on
since the last step — so a training step is one compiled program (forward, backward and
update fused where the scheduler allows), compiled once and reused for every later step.
Values that change from step to step (the learning rate, Adam's bias corrections) enter the
graph as 0-d input tensors, never as constants, so the graph's structure — the compile cache
key — stays the same.

The update formulas are torch's (`torch.optim.SGD`, `Adam`, `AdamW` with default flags).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from picograd.frontend import autograd
from picograd.frontend.autograd import no_grad
from picograd.frontend.realize import realize
from picograd.frontend.tensor import Tensor


def _scalar(value: float, like: Tensor) -> Tensor:
    """A 0-d float32 input tensor (a buffer leaf: its value is not part of the graph key)."""
    return Tensor(np.float32(value), device=like.device)


class Optimizer:
    """Holds the parameters and one hyper-parameter group (`param_groups[0]`, as torch)."""

    def __init__(self, params: Iterable[Tensor], defaults: dict[str, Any]):
        self.params = [p for p in params]
        if not self.params:
            raise ValueError("the optimizer got an empty parameter list")
        self.param_groups = [{"params": self.params, **defaults}]
        self.state: dict[int, dict[str, Tensor]] = {}
        self.steps = 0

    @property
    def lr(self) -> float:
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        self.param_groups[0]["lr"] = value

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor]) -> Tensor:
        raise NotImplementedError

    def step(self) -> None:
        """Update every parameter that has a gradient, realizing everything in one graph."""
        self.steps += 1
        with no_grad():
            updated: list[tuple[Tensor, Tensor]] = []
            for p in self.params:
                if p.grad is None:
                    continue
                state = self.state.setdefault(id(p), {})
                updated.append((p, self._update(p, p.grad, state)))
            states = [t for s in self.state.values() for t in s.values()]
            roots, autograd.pending_roots[:] = list(autograd.pending_roots), []
            realize(*roots, *(new for _, new in updated), *states)
        for p, new in updated:
            p._node = new._node
            p.grad = p.grad.detach()  # the gradient graph no longer records anything


class SGD(Optimizer):
    """p -= lr * (g + weight_decay * p), with optional (Nesterov) momentum."""

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum needs a momentum and zero dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov})

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor]) -> Tensor:
        group = self.param_groups[0]
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        momentum = group["momentum"]
        if momentum:
            if "momentum_buffer" not in state:
                buf = g  # torch starts the buffer at the first gradient
            else:
                buf = state["momentum_buffer"] * momentum + g * (1 - group["dampening"])
            state["momentum_buffer"] = buf
            g = g + buf * momentum if group["nesterov"] else buf
        return p - g * _scalar(self.lr, p)


class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction; L2 weight decay added to the gradient."""

    decoupled = False

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor]) -> Tensor:
        group = self.param_groups[0]
        b1, b2 = group["betas"]
        wd = group["weight_decay"]
        if wd and not self.decoupled:
            g = g + p * wd
        if "exp_avg" not in state:
            state["exp_avg"] = Tensor.zeros(p.shape, device=p.device)
            state["exp_avg_sq"] = Tensor.zeros(p.shape, device=p.device)
        m = state["exp_avg"] * b1 + g * (1 - b1)
        v = state["exp_avg_sq"] * b2 + g * g * (1 - b2)
        state["exp_avg"], state["exp_avg_sq"] = m, v
        t = self.steps
        step_size = self.lr / (1 - b1**t)
        denominator_scale = 1 / math.sqrt(1 - b2**t)
        if wd and self.decoupled:
            p = p * _scalar(1 - self.lr * wd, p)
        update = m / ((v.sqrt() * _scalar(denominator_scale, p)) + group["eps"])
        return p - update * _scalar(step_size, p)


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step."""

    decoupled = True

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)


class StepLR:
    """Multiply the learning rate by `gamma` every `step_size` calls of `step()`."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1):
        self.optimizer, self.step_size, self.gamma = optimizer, step_size, gamma
        self.base_lr = optimizer.lr
        self.last_epoch = 0

    def step(self) -> None:
        self.last_epoch += 1
        self.optimizer.lr = self.base_lr * self.gamma ** (self.last_epoch // self.step_size)

    def get_last_lr(self) -> list[float]:
        return [self.optimizer.lr]


class CosineAnnealingLR:
    """Anneal the learning rate from its initial value to `eta_min` over `T_max` steps."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0):
        self.optimizer, self.T_max, self.eta_min = optimizer, T_max, eta_min
        self.base_lr = optimizer.lr
        self.last_epoch = 0

    def step(self) -> None:
        self.last_epoch += 1
        cos = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        self.optimizer.lr = self.eta_min + (self.base_lr - self.eta_min) * cos

    def get_last_lr(self) -> list[float]:
        return [self.optimizer.lr]
