"""GradScaler, as `torch.amp.GradScaler`: scale the loss so float16 gradients do not
underflow, unscale them before the step, skip a step whose gradients hold inf or NaN, and
adapt the scale (back off on overflow, grow after `growth_interval` clean steps).

    scaler = pg.optim.GradScaler("cpu")
    with pg.autocast("cpu", dtype=pg.float16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)                          # optional: clip the true gradients here
    pg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)                              # skipped if a gradient is inf or NaN
    scaler.update()

The scale and its reciprocal are 0-d buffers (a new scale does not recompile anything);
`unscale_` realizes the unscaled gradients with their inf/NaN check, and `step` reads that
one flag (a sync, as torch's `step` has).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from picograd.errors import OptimizerError, user_location
from picograd.frontend.autograd import no_grad
from picograd.frontend.realize import realize
from picograd.frontend.tensor import Tensor
from picograd.optim.optimizer import Optimizer


def _error(message: str) -> OptimizerError:
    return OptimizerError(f"GradScaler: {message}\n  at {user_location()}")


class GradScaler:
    """torch's GradScaler: scale, unscale_, step, update, get_scale, state_dict."""

    def __init__(self, device: str = "cpu", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        if growth_factor <= 1.0:
            raise _error(f"growth_factor must be > 1, got {growth_factor}")
        if not 0 < backoff_factor < 1:
            raise _error(f"backoff_factor must be in (0, 1), got {backoff_factor}")
        if not isinstance(growth_interval, int) or growth_interval <= 0:
            raise _error(f"growth_interval must be a positive int, got {growth_interval}")
        self.device = device
        self._enabled = enabled
        self._scale = float(np.float32(init_scale))
        self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._buffers: dict[tuple[str, str], Tensor] = {}  # (name, device) -> 0-d buffer
        self._found_inf: dict[int, bool] = {}  # id(optimizer) -> unscaled, found inf/NaN
        self._stepped: set[int] = set()

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def _values(self) -> dict[str, float]:
        return {"scale": self._scale, "inverse": float(np.float32(1 / np.float64(self._scale)))}

    def _buffer(self, name: str, like: Tensor) -> Tensor:
        key = (name, like.device)
        if key not in self._buffers:
            self._buffers[key] = Tensor(np.float32(self._values()[name]), device=like.device)
        return self._buffers[key]

    def _write_buffers(self) -> None:
        values = self._values()
        for (name, _), t in self._buffers.items():
            buffer = t._node.buffer
            assert buffer is not None
            buffer[...] = values[name]

    def scale(self, outputs: Any) -> Any:
        """`outputs` (a tensor, or a list / tuple of them) multiplied by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._buffer("scale", outputs).cast(outputs.dtype)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, Iterable):
            return (self.scale(o) for o in outputs)
        raise TypeError(f"GradScaler.scale: outputs must be a Tensor or an iterable of them, "
                        f"got {type(outputs).__name__}")

    def unscale_(self, optimizer: Optimizer) -> None:
        """Divide `optimizer`'s gradients by the scale (in place) and note whether any is
        inf or NaN. OptimizerError if called twice before `update()` (torch's
        RuntimeError)."""
        if not self._enabled:
            return
        key = id(optimizer)
        if key in self._found_inf:
            raise _error("unscale_() has already been called on this optimizer since the "
                         "last update()")
        params = [p for p in optimizer.params if p.grad is not None]
        if not params:
            self._found_inf[key] = False
            return
        with no_grad():
            new_grads = []
            bad: Tensor | None = None
            for p in params:
                assert p.grad is not None
                g = (p.grad.float() * self._buffer("inverse", p)).cast(p.grad.dtype)
                count = (~g.isfinite()).float().sum()
                bad = count if bad is None else bad + count
                new_grads.append(g)
            assert bad is not None
            realize(bad, *new_grads)
        for p, g in zip(params, new_grads, strict=True):
            p.grad = g
        self._found_inf[key] = bool(bad.item() > 0)

    def step(self, optimizer: Optimizer, *args: Any, **kwargs: Any) -> Any:
        """`optimizer.step()` unless its (unscaled) gradients hold inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        key = id(optimizer)
        if key in self._stepped:
            raise _error("step() has already been called since the last update()")
        if key not in self._found_inf:
            self.unscale_(optimizer)
        self._stepped.add(key)
        if self._found_inf[key]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | None = None) -> None:
        """Back the scale off if any optimizer's gradients overflowed since the last update,
        else count a clean step and grow it every `growth_interval` of them."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(np.float32(new_scale))
        else:
            if not self._found_inf:
                raise _error("no inf checks were recorded prior to update()")
            if any(self._found_inf.values()):
                self._scale = float(np.float32(self._scale * self._backoff_factor))
                self._growth_tracker = 0
            elif self._growth_tracker + 1 == self._growth_interval:
                grown = float(np.float32(self._scale * self._growth_factor))
                if math.isfinite(grown):
                    self._scale = grown
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
        self._write_buffers()
        self._found_inf.clear()
        self._stepped.clear()

    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if not state_dict:
            raise _error("the state dict is empty (saved from a disabled GradScaler?)")
        self._scale = float(np.float32(float(state_dict["scale"])))
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
        self._write_buffers()
