"""The epoch-indexed schedulers of `torch.optim.lr_scheduler`: StepLR, MultiStepLR,
ExponentialLR, ConstantLR, LinearLR, LambdaLR, MultiplicativeLR, PolynomialLR,
CosineAnnealingLR and CosineAnnealingWarmRestarts, in torch's chainable (recursive) forms
with closed forms for `step(epoch)`.

    sched = pg.optim.lr_scheduler.MultiStepLR(opt, milestones=[30, 80], gamma=0.1)
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Callable, Sequence

from picograd.optim.optimizer import Optimizer
from picograd.optim.scheduler_base import LRScheduler, per_group, scheduler_error


class StepLR(LRScheduler):
    """lr *= gamma every `step_size` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._lrs
        return [lr * self.gamma for lr in self._lrs]

    def _closed_form(self) -> list[float]:
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr *= gamma at each milestone (a milestone given twice multiplies twice)."""

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        times = self.milestones.get(self.last_epoch, 0)
        return [lr * self.gamma**times for lr in self._lrs]

    def _closed_form(self) -> list[float]:
        passed = bisect.bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [b * self.gamma**passed for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr *= gamma every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return self._lrs if self.last_epoch == 0 else [lr * self.gamma for lr in self._lrs]

    def _closed_form(self) -> list[float]:
        return [b * self.gamma**self.last_epoch for b in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = base * factor for the first `total_iters` epochs, then base."""

    def __init__(self, optimizer: Optimizer, factor: float = 1 / 3, total_iters: int = 5,
                 last_epoch: int = -1):
        if not 0 <= factor <= 1:
            raise scheduler_error("ConstantLR", f"factor must be in [0, 1], got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._lrs]
        if self.last_epoch != self.total_iters:
            return self._lrs
        return [lr / self.factor for lr in self._lrs]

    def _closed_form(self) -> list[float]:
        scale = self.factor if self.last_epoch < self.total_iters else 1.0
        return [b * scale for b in self.base_lrs]


class LinearLR(LRScheduler):
    """lr goes linearly from base * start_factor to base * end_factor over `total_iters`."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1):
        if not 0 < start_factor <= 1:
            raise scheduler_error("LinearLR", f"start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise scheduler_error("LinearLR", f"end_factor must be in [0, 1], got {end_factor}")
        self.start_factor, self.end_factor, self.total_iters = (start_factor, end_factor,
                                                                total_iters)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._lrs]
        if self.last_epoch > self.total_iters:
            return self._lrs
        span = self.end_factor - self.start_factor
        ratio = 1 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [lr * ratio for lr in self._lrs]

    def _closed_form(self) -> list[float]:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * done
        return [b * factor for b in self.base_lrs]


class LambdaLR(LRScheduler):
    """lr = base * lr_lambda(epoch) (one function, or one per group)."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1):
        self.lr_lambdas = per_group("LambdaLR", optimizer, lr_lambda, "lr_lambda")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [b * f(self.last_epoch) for b, f in zip(self.base_lrs, self.lr_lambdas,
                                                       strict=True)]


class MultiplicativeLR(LRScheduler):
    """lr *= lr_lambda(epoch) every epoch after the first."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1):
        self.lr_lambdas = per_group("MultiplicativeLR", optimizer, lr_lambda, "lr_lambda")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch <= 0:
            return self._lrs
        return [lr * f(self.last_epoch) for lr, f in zip(self._lrs, self.lr_lambdas,
                                                         strict=True)]


class PolynomialLR(LRScheduler):
    """lr = base * (1 - epoch / total_iters) ** power, then constant."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e = self.last_epoch
        if e == 0 or e > self.total_iters:
            return self._lrs
        factor = ((1 - e / self.total_iters) / (1 - (e - 1) / self.total_iters)) ** self.power
        return [lr * factor for lr in self._lrs]

    def _closed_form(self) -> list[float]:
        left = 1 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [b * left**self.power for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine from base to `eta_min` over `T_max` epochs (and back up, SGDR without restarts),
    in torch's recursive form."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e, t_max, low = self.last_epoch, self.T_max, self.eta_min
        if e == 0:
            return self._lrs
        if self._step_count == 1 and e > 0:
            return self._closed_form()
        if (e - 1 - t_max) % (2 * t_max) == 0:
            return [lr + (b - low) * (1 - math.cos(math.pi / t_max)) / 2
                    for lr, b in zip(self._lrs, self.base_lrs, strict=True)]
        ratio = (1 + math.cos(math.pi * e / t_max)) / (1 + math.cos(math.pi * (e - 1) / t_max))
        return [ratio * (lr - low) + low for lr in self._lrs]

    def _closed_form(self) -> list[float]:
        cos = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (b - self.eta_min) * cos for b in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine from base to `eta_min` over T_i epochs, restarting; T_i starts at `T_0` and is
    multiplied by `T_mult` at each restart (SGDR)."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise scheduler_error("CosineAnnealingWarmRestarts",
                                  f"T_0 must be a positive int, got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise scheduler_error("CosineAnnealingWarmRestarts",
                         f"T_mult must be an int >= 1, got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        cos = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (b - self.eta_min) * cos for b in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:  # type: ignore[override]
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult**n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self._step_count = getattr(self, "_step_count", 0) + 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
            group["lr"] = lr
        self._last_lr = self._lrs
