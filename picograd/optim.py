"""Optimisers (SGD, Adam, AdamW) and learning-rate schedulers (StepLR, CosineAnnealingLR).

`step()` builds every parameter's update lazily (under `no_grad`) and realizes, in one
graph, the new parameters, the optimiser's state, the gradients and the tensors `backward()`
was called on since the last step — so a training step is one compiled program (forward,
backward and update fused where the scheduler allows), compiled once and reused for every
later step. Parameters and state are then updated in place (`Tensor.assign`): their nodes
keep their identity, which is what lets `picograd.jit` replay a step. (A pending tensor
built on a parameter before a step and realized after it sees the new value; the gradients
are realized by the step for that reason.)

Values that change from step to step (the learning rate, Adam's bias corrections) enter the
graph as 0-d buffers the optimiser owns and rewrites before each step (never as constants),
so the graph's structure — the compile cache key — stays the same; under `picograd.jit` the
same rewrite runs before each replayed step (`picograd.frontend.capture`), so `steps` counts and
an `lr` changed by a scheduler is honoured.

The update formulas are torch's (`torch.optim.SGD`, `Adam`, `AdamW` with default flags).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, TypeGuard

import numpy as np

from picograd.errors import OptimizerError, user_location
from picograd.frontend import autograd
from picograd.frontend.autograd import no_grad
from picograd.frontend.capture import on_host_state
from picograd.frontend.realize import realize
from picograd.frontend.tensor import Tensor

# ── what a loaded hyper-parameter may be: each rule gives None or what was expected ──


def _is_number(value: object) -> TypeGuard[float]:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _non_negative(value: object) -> str | None:
    return None if _is_number(value) and value >= 0 else "a finite number >= 0"


def _finite(value: object) -> str | None:
    return None if _is_number(value) else "a finite number"


def _flag(value: object) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def _betas(value: object) -> str | None:
    ok = (isinstance(value, (list, tuple)) and len(value) == 2  # JSON makes the tuple a list
          and all(_is_number(b) and 0 <= b < 1 for b in value))
    return None if ok else "a pair of numbers in [0, 1)"


HParamRule = Callable[[object], "str | None"]


class Optimizer:
    """Holds the parameters and one hyper-parameter group (`param_groups[0]`, as torch)."""

    # every hyper-parameter of `param_groups[0]` and what it may be (checked when loaded)
    hparam_rules: ClassVar[dict[str, HParamRule]] = {"lr": _non_negative}
    # the names of a parameter's state: it holds all of them or (never updated) none
    state_names: ClassVar[tuple[str, ...]] = ()

    def __init__(self, params: Iterable[Tensor], defaults: dict[str, Any]):
        """OptimizerError, as torch's ValueError, for no parameters or a hyper-parameter
        that `hparam_rules` refuses (the same rules a loaded checkpoint meets)."""
        self.params = [p for p in params]
        name = type(self).__name__
        if not self.params:
            raise OptimizerError(f"{name}: got an empty parameter list\n  at {user_location()}")
        problems = self.hparam_problems(defaults)
        if problems:
            raise OptimizerError(f"{name}: {'; '.join(problems)}\n  at {user_location()}")
        self.param_groups = [{"params": self.params, **defaults}]
        self.state: dict[int, dict[str, Tensor]] = {}
        self.steps = 0
        self._scalars: dict[tuple[str, str], Tensor] = {}  # (name, device) -> 0-d buffer

    @property
    def lr(self) -> float:
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        self.param_groups[0]["lr"] = value

    def hparam_problems(self, hparams: object) -> list[str]:
        """What keeps `hparams` (hyper-parameters read back from a checkpoint) from replacing
        `param_groups[0]`'s: missing or unknown names, values of the wrong type or range.
        Empty when they fit."""
        if not isinstance(hparams, dict):
            return [f"expected a JSON object of hyper-parameters, got {hparams!r}"]
        problems = [f"missing {name!r}" for name in self.hparam_rules if name not in hparams]
        problems += [f"unknown hyper-parameter {name!r} ({type(self).__name__} takes "
                     f"{', '.join(self.hparam_rules)})"
                     for name in hparams if name not in self.hparam_rules]
        for name, value in hparams.items():
            rule = self.hparam_rules.get(name)
            expected = rule(value) if rule is not None else None
            if expected is not None:
                problems.append(f"{name} is {value!r}, expected {expected}")
        return problems or self._hparam_conflicts(hparams)

    def _hparam_conflicts(self, hparams: dict[str, Any]) -> list[str]:
        """Problems of valid values together (SGD's Nesterov without momentum)."""
        return []

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    def _scalar_values(self) -> dict[str, float]:
        """The per-step scalars of the update, for the current `steps`."""
        return {"lr": self.lr}

    def _scalar(self, name: str, like: Tensor) -> Tensor:
        """The 0-d float32 buffer holding scalar `name` on `like`'s device (a buffer leaf:
        its value is not part of the graph key)."""
        key = (name, like.device)
        if key not in self._scalars:
            value = np.float32(self._scalar_values()[name])
            self._scalars[key] = Tensor(value, device=like.device)
        return self._scalars[key]

    def _advance(self) -> None:
        """Count a step and write this step's scalars into their buffers."""
        self.steps += 1
        values = self._scalar_values()
        for (name, _), t in self._scalars.items():
            buffer = t._node.buffer
            assert buffer is not None
            buffer[...] = values[name]

    def _state(self, state: dict[str, Tensor], name: str, like: Tensor) -> Tensor:
        """State `name` of a parameter: a zero buffer the first time."""
        if name not in state:
            state[name] = Tensor(np.zeros(like.shape, like.dtype.np), device=like.device)
        return state[name]

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        """The new parameter and the new values of its state (by name)."""
        raise NotImplementedError

    def step(self) -> None:
        """Update every parameter that has a gradient, realizing everything in one graph."""
        self._advance()
        on_host_state(self._advance)
        with no_grad():
            writes: list[tuple[Tensor, Tensor]] = []
            grads: list[Tensor] = []
            for p in self.params:
                if p.grad is None:
                    continue
                state = self.state.setdefault(id(p), {})
                new_p, new_state = self._update(p, p.grad, state)
                grads.append(p.grad)
                writes.append((p, new_p))
                writes.extend((self._state(state, k, p), v) for k, v in new_state.items())
            roots, autograd.pending_roots[:] = list(autograd.pending_roots), []
            buffer_writes, autograd.pending_writes[:] = list(autograd.pending_writes), []
            realize(*roots, *grads, *(new for _, new in writes))
            for target, new in writes:
                target.assign(new)
            for leaf, buffer in buffer_writes:  # e.g. BatchNorm's running statistics
                value = Tensor._from_node(buffer._node)
                buffer._node = leaf
                buffer.assign(value)
        for p in self.params:
            if p.grad is not None:
                p.grad = p.grad.detach()  # the gradient graph no longer records anything


class SGD(Optimizer):
    """p -= lr * (g + weight_decay * p), with optional (Nesterov) momentum."""

    hparam_rules: ClassVar[dict[str, HParamRule]] = {
        "lr": _non_negative, "momentum": _non_negative, "dampening": _finite,
        "weight_decay": _non_negative, "nesterov": _flag}
    state_names = ("momentum_buffer",)

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False):
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov})

    def _hparam_conflicts(self, hparams: dict[str, Any]) -> list[str]:
        if hparams["nesterov"] and (hparams["momentum"] <= 0 or hparams["dampening"] != 0):
            return [f"nesterov needs a momentum > 0 and dampening 0, got momentum "
                    f"{hparams['momentum']!r} and dampening {hparams['dampening']!r}"]
        return []

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        group = self.param_groups[0]
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        momentum = group["momentum"]
        new_state: dict[str, Tensor] = {}
        if momentum:
            if "momentum_buffer" not in state:
                buf = g  # torch starts the buffer at the first gradient
            else:
                buf = state["momentum_buffer"] * momentum + g * (1 - group["dampening"])
            new_state["momentum_buffer"] = buf
            g = g + buf * momentum if group["nesterov"] else buf
        return p - g * self._scalar("lr", p), new_state


class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction; L2 weight decay added to the gradient."""

    decoupled = False
    hparam_rules: ClassVar[dict[str, HParamRule]] = {
        "lr": _non_negative, "betas": _betas, "eps": _non_negative,
        "weight_decay": _non_negative}
    state_names = ("exp_avg", "exp_avg_sq")

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def _scalar_values(self) -> dict[str, float]:
        group = self.param_groups[0]
        b1, b2 = group["betas"]
        t = self.steps
        return {"lr": self.lr, "step_size": self.lr / (1 - b1**t),
                "denominator_scale": 1 / math.sqrt(1 - b2**t),
                "decay": 1 - self.lr * group["weight_decay"]}

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        group = self.param_groups[0]
        b1, b2 = group["betas"]
        wd = group["weight_decay"]
        if wd and not self.decoupled:
            g = g + p * wd
        m = self._state(state, "exp_avg", p) * b1 + g * (1 - b1)
        v = self._state(state, "exp_avg_sq", p) * b2 + g * g * (1 - b2)
        if wd and self.decoupled:
            p = p * self._scalar("decay", p)
        update = m / ((v.sqrt() * self._scalar("denominator_scale", p)) + group["eps"])
        return p - update * self._scalar("step_size", p), {"exp_avg": m, "exp_avg_sq": v}


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
