"""The base of the learning-rate schedulers (`LRScheduler`), as torch's: it records each
group's `initial_lr`, keeps `last_epoch` and takes epoch 0's step at construction.

    class Halving(LRScheduler):
        def get_lr(self):
            return [lr / 2 for lr in self._lrs]
"""

from __future__ import annotations

from typing import Any

from picograd.errors import OptimizerError, user_location
from picograd.optim.optimizer import Optimizer


def scheduler_error(name: str, message: str) -> OptimizerError:
    return OptimizerError(f"{name}: {message}\n  at {user_location()}")


def per_group(name: str, optimizer: Optimizer, value: Any, what: str) -> list[Any]:
    """`value` for each group: a list or tuple of one per group, or one for all."""
    groups = optimizer.param_groups
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise scheduler_error(name, f"expected {len(groups)} values of {what}, got "
                                        f"{len(value)}")
        return list(value)
    return [value] * len(groups)


class LRScheduler:
    """The base: `base_lrs` (each group's `initial_lr`), `last_epoch`, `step()`,
    `get_last_lr()`, `state_dict()` / `load_state_dict()`."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError("param 'initial_lr' is not specified in param_groups when "
                               "resuming an optimizer (last_epoch != -1)")
        self.base_lrs: list[float] = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self.step()

    def get_lr(self) -> list[float]:
        """The groups' lrs for `last_epoch`, from their current ones (chainable)."""
        raise NotImplementedError

    def _closed_form(self) -> list[float] | None:
        """The lrs for `last_epoch` from `base_lrs` alone, for `step(epoch)`; None if this
        scheduler has no closed form."""
        return None

    @property
    def _lrs(self) -> list[float]:
        return [g["lr"] for g in self.optimizer.param_groups]

    def step(self, epoch: int | None = None) -> None:
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = self._closed_form()
            values = closed if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = self._lrs

    def get_last_lr(self) -> list[float]:
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if k not in ("optimizer", "lr_lambdas")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        vars(self).update(state_dict)


