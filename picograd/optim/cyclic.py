"""The cyclical schedulers of `torch.optim.lr_scheduler`: OneCycleLR (Smith & Topin's
super-convergence policy) and CyclicLR (Smith's triangular cycles), both with momentum
cycled opposite the lr (SGD's `momentum`, or Adam's `betas[0]`).

    sched = pg.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=1000)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from picograd.optim.optimizer import Optimizer
from picograd.optim.scheduler_base import LRScheduler, per_group, scheduler_error


def _uses_betas(name: str, optimizer: Optimizer) -> bool:
    """Whether the momentum to cycle is `betas[0]` (Adam) rather than `momentum` (SGD)."""
    defaults = optimizer.defaults
    if "momentum" not in defaults and "betas" not in defaults:
        raise scheduler_error(name, "optimizer must support momentum or beta1 with "
                                    "`cycle_momentum` enabled")
    return "betas" in defaults


def _set_momentum(group: dict[str, Any], momentum: float, betas: bool) -> None:
    if betas:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2 * (math.cos(math.pi * pct) + 1)


def _linear(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


@dataclass(frozen=True)
class _Phase:
    end_step: float
    start_lr: str  # group keys
    end_lr: str
    start_momentum: str
    end_momentum: str


class OneCycleLR(LRScheduler):
    """lr rises from max_lr / div_factor to max_lr over `pct_start` of the steps, then falls
    to that / final_div_factor (three_phase: back to the start first); the momentum moves
    the other way between max_momentum and base_momentum."""

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1):
        name = "OneCycleLR"
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise scheduler_error(name, "give total_steps, or epochs and steps_per_epoch")
            total_steps = epochs * steps_per_epoch
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise scheduler_error(name, f"total_steps must be a positive int, got {total_steps}")
        if not 0 <= pct_start <= 1:
            raise scheduler_error(name, f"pct_start must be in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise scheduler_error(name, f"anneal_strategy must be 'cos' or 'linear', got "
                                        f"{anneal_strategy!r}")
        self.total_steps = total_steps
        self._anneal: Callable[[float, float, float], float] = (
            _cos if anneal_strategy == "cos" else _linear)
        up = float(pct_start * total_steps) - 1
        self._phases = ([_Phase(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                         _Phase(2 * up, "max_lr", "initial_lr", "base_momentum",
                                "max_momentum"),
                         _Phase(total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                                "max_momentum")]
                        if three_phase else
                        [_Phase(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                         _Phase(total_steps - 1, "max_lr", "min_lr", "base_momentum",
                                "max_momentum")])
        groups = optimizer.param_groups
        if last_epoch == -1:
            for group, top in zip(groups, per_group(name, optimizer, max_lr, "max_lr"),
                                  strict=True):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._betas = _uses_betas(name, optimizer)
            if last_epoch == -1:
                for group, low, high in zip(
                        groups, per_group(name, optimizer, base_momentum, "base_momentum"),
                        per_group(name, optimizer, max_momentum, "max_momentum"), strict=True):
                    _set_momentum(group, high, self._betas)
                    group["base_momentum"], group["max_momentum"] = low, high
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise scheduler_error("OneCycleLR", f"tried to step {step} times, more than the "
                                                f"total_steps {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._phases):
                if step <= phase.end_step or i == len(self._phases) - 1:
                    pct = (step - start) / (phase.end_step - start)
                    lrs.append(self._anneal(group[phase.start_lr], group[phase.end_lr], pct))
                    if self.cycle_momentum:
                        _set_momentum(group, self._anneal(group[phase.start_momentum],
                                                          group[phase.end_momentum], pct),
                                      self._betas)
                    break
                start = phase.end_step
        return lrs

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in super().state_dict().items() if k != "_anneal"}


class CyclicLR(LRScheduler):
    """lr cycles between base_lr and max_lr (up for `step_size_up` steps, down for
    `step_size_down`), the height scaled per cycle ("triangular", "triangular2") or per
    step ("exp_range", gamma ** step), or by `scale_fn`; momentum cycles the other way."""

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float],
                 max_lr: float | list[float], step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.8,
                 max_momentum: float | list[float] = 0.9, last_epoch: int = -1):
        name = "CyclicLR"
        bases = per_group(name, optimizer, base_lr, "base_lr")
        if last_epoch == -1:
            for group, lr in zip(optimizer.param_groups, bases, strict=True):
                group["lr"] = lr
        self.max_lrs = per_group(name, optimizer, max_lr, "max_lr")
        down = step_size_up if step_size_down is None else step_size_down
        self.total_size = float(step_size_up + down)
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise scheduler_error(name, f"mode must be triangular, triangular2 or exp_range, "
                                        f"got {mode!r}")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = (scale_mode if scale_fn is not None
                           else "iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._betas = _uses_betas(name, optimizer)
            self.base_momentums = per_group(name, optimizer, base_momentum, "base_momentum")
            self.max_momentums = per_group(name, optimizer, max_momentum, "max_momentum")
            if last_epoch == -1:
                for group, high in zip(optimizer.param_groups, self.max_momentums,
                                       strict=True):
                    _set_momentum(group, high, self._betas)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = bases

    def scale_fn(self, x: float) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [b + (top - b) * factor * scale
               for b, top in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums, strict=True):
                _set_momentum(group, high - (high - low) * factor * scale, self._betas)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in super().state_dict().items() if k != "_scale_fn_custom"}
