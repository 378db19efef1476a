"""`torch.nn.utils`' gradient and parameter helpers: clip_grad_norm_, clip_grad_value_,
parameters_to_vector, vector_to_parameters.

    loss.backward()
    total = pg.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()           # the clipped gradients are realized with the step: one graph

Clipping rewrites each `p.grad` lazily (the norm and the scale are part of the step's
graph); only `error_if_nonfinite=True` realizes the norm at once (to raise before the step),
as torch's check synchronises too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from picograd.errors import NonFiniteNormError, user_location
from picograd.frontend.autograd import no_grad
from picograd.frontend.ops_shape import cat
from picograd.frontend.tensor import Tensor


def _as_list(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _norm(t: Tensor, norm_type: float) -> Tensor:
    if math.isinf(norm_type):
        return t.abs().max() if norm_type > 0 else t.abs().min()
    if norm_type == 0:
        return (t != 0).float().sum()
    return (t.abs() ** norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(tensors: Iterable[Tensor], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False) -> Tensor:
    """The `norm_type` norm of all `tensors` together (the norm of their norms), a 0-d
    float32 tensor; 0 for no tensors."""
    items = list(tensors)
    if not items:
        return Tensor(np.float32(0.0))
    norm_type = float(norm_type)
    with no_grad():
        norms = [_norm(t.float().reshape(-1), norm_type).reshape((1,)) for t in items]
        total = _norm(cat(norms) if len(norms) > 1 else norms[0], norm_type)
    if error_if_nonfinite:
        value = float(total.item())
        if not math.isfinite(value):
            raise NonFiniteNormError(
                f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is "
                f"{value}, so they cannot be clipped; set error_if_nonfinite=False to clip "
                f"anyway\n  at {user_location()}")
    return total


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients so that their total `norm_type` norm is at most `max_norm`
    (by max_norm / (norm + 1e-6), never up); returns the total norm before clipping.
    NonFiniteNormError (a RuntimeError) for a NaN or infinite norm if `error_if_nonfinite`.
    `foreach` is accepted and changes nothing (one fused graph either way)."""
    params = [p for p in _as_list(parameters) if p.grad is not None]
    total = get_total_norm([p.grad for p in params if p.grad is not None], norm_type,
                           error_if_nonfinite)
    with no_grad():
        scale = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
        for p in params:
            assert p.grad is not None
            p.grad = (p.grad * scale).cast(p.grad.dtype)
    return total


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient into [-clip_value, clip_value]."""
    value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad = p.grad.clamp(-value, value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and joined into one 1-D tensor."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D `vec` into the parameters (in place)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected a Tensor, got {type(vec).__name__}")
    offset = 0
    with no_grad():
        for p in parameters:
            n = math.prod(p.shape)
            p.assign(vec[offset:offset + n].reshape(p.shape).cast(p.dtype))
            offset += n
