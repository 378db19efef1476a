"""The schedulers of `torch.optim.lr_scheduler` that are not a function of the epoch:
ReduceLROnPlateau (driven by a metric), SequentialLR and ChainedScheduler (driving others).

    sched = pg.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2)
    sched.step(validation_loss)
    warm_then_decay = SequentialLR(opt, [LinearLR(opt, 0.1, total_iters=5),
                                         ExponentialLR(opt, 0.9)], milestones=[5])
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

from picograd.optim.optimizer import Optimizer
from picograd.optim.scheduler_base import LRScheduler, per_group, scheduler_error


class ReduceLROnPlateau(LRScheduler):
    """lr *= factor (not below min_lr) when the metric has not improved (by `threshold`,
    relative or absolute) for more than `patience` steps; then waits `cooldown` steps."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0.0, eps: float = 1e-8):
        name = "ReduceLROnPlateau"
        if factor >= 1.0:
            raise scheduler_error(name, f"factor should be < 1.0, got {factor}")
        if mode not in ("min", "max"):
            raise scheduler_error(name, f"mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise scheduler_error(name, f"threshold_mode must be 'rel' or 'abs', got "
                                        f"{threshold_mode!r}")
        self.optimizer = optimizer
        self.min_lrs = per_group(name, optimizer, min_lr, "min_lr")
        self.factor, self.patience, self.cooldown, self.eps = factor, patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = self._lrs

    def is_better(self, a: float, best: float) -> bool:
        rel = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < (best * (1 - self.threshold) if rel else best - self.threshold)
        return a > (best * (1 + self.threshold) if rel else best + self.threshold)

    def step(self, metrics: Any = None, epoch: int | None = None) -> None:  # type: ignore[override]
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, low in zip(self.optimizer.param_groups, self.min_lrs, strict=True):
                new = max(group["lr"] * self.factor, low)
                if group["lr"] - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._lrs

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0


def _undo_initial_step(scheduler: LRScheduler) -> None:
    if isinstance(scheduler, SequentialLR):
        for inner in scheduler._schedulers:
            _undo_initial_step(inner)
    else:
        scheduler.last_epoch -= 1


class SequentialLR(LRScheduler):
    """Runs `schedulers[i]` from `milestones[i - 1]` on (each restarted at its milestone)."""

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler],
                 milestones: Sequence[int], last_epoch: int = -1):
        name = "SequentialLR"
        if not schedulers:
            raise scheduler_error(name, "expects at least one scheduler")
        if any(s.optimizer is not optimizer for s in schedulers):
            raise scheduler_error(name, "every scheduler must drive the optimizer given")
        if len(milestones) != len(schedulers) - 1:
            raise scheduler_error(name, f"expects {len(schedulers) - 1} milestones for "
                                        f"{len(schedulers)} schedulers, got {len(milestones)}")
        self.optimizer = optimizer
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:
            _undo_initial_step(scheduler)
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self, epoch: int | None = None) -> None:
        self.last_epoch += 1
        index = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler.step(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        own = {k: v for k, v in vars(self).items() if k not in ("optimizer", "_schedulers")}
        own["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return own

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        vars(self).update(state)
        for scheduler, saved in zip(self._schedulers, inner, strict=True):
            scheduler.load_state_dict(saved)


class ChainedScheduler(LRScheduler):
    """Steps every scheduler at once (their chainable factors multiply)."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None):
        if not schedulers:
            raise scheduler_error("ChainedScheduler", "expects at least one scheduler")
        self.optimizer = optimizer if optimizer is not None else schedulers[0].optimizer
        if any(s.optimizer is not self.optimizer for s in schedulers):
            raise scheduler_error("ChainedScheduler", "every scheduler must drive the same "
                                                      "optimizer")
        self._schedulers = list(schedulers)
        self._last_lr = self._lrs

    def step(self, epoch: int | None = None) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._lrs

    def state_dict(self) -> dict[str, Any]:
        own = {k: v for k, v in vars(self).items() if k not in ("optimizer", "_schedulers")}
        own["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return own

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        vars(self).update(state)
        for scheduler, saved in zip(self._schedulers, inner, strict=True):
            scheduler.load_state_dict(saved)
