"""The functional forms the layers build on: `linear` and `dropout`.

`picograd.nn.functional` re-exports them; `Linear`, `Dropout` and `MultiheadAttention` import
them from here, so that `functional` can import every layer module without a circle.
"""

from __future__ import annotations

from picograd.frontend.autocast import lower_precision
from picograd.frontend.dtype import DType, float32
from picograd.frontend.lazy import shape_error
from picograd.frontend.tensor import Tensor


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    x, weight, bias = lower_precision("linear", x, weight, bias)  # inside pg.autocast
    y = x @ weight.transpose(0, 1)
    return y if bias is None else y + bias


def _rand_dtype(x: Tensor) -> DType:
    return x.dtype if x.dtype.is_float else float32


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """In training, zero each element with probability p and scale the rest by 1/(1-p)."""
    if not 0 <= p <= 1:
        raise shape_error("dropout", f"p must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    # The mask is drawn on the device, so it fuses into the step's graph (keys are inputs:
    # no recompile per step).
    keep = Tensor.rand(*x.shape, device=x.device, dtype=_rand_dtype(x)) >= p
    return keep.where(x * (1 / (1 - p) if p < 1 else 0.0), 0.0)
