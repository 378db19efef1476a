"""torch.nn.functional's other spellings of functions picograd has (re-exported by
functional.py):

    relu_ elu_ leaky_relu_ hardtanh_ selu_ celu_ threshold_ rrelu_
        the in-place activations: `in_place` writes the activation of the input's current
        value into the input tensor and returns it (the way `index_add_` and `x[i] = v`
        write: the tensor is pointed at the new value and autograd records the write, so a
        gradient flows through the old value). As in torch, a leaf that requires grad cannot
        be written while grad is enabled (AutogradError, a RuntimeError).
    max_pool{1,2,3}d_with_indices, adaptive_max_pool{1,2,3}d_with_indices
        the pools with return_indices=True: (values, indices); the `return_indices`
        argument is ignored, as torch's.

    y = pg.randn(3, 4) * 2
    F.relu_(y) is y                          # True
"""

from __future__ import annotations

from collections.abc import Callable

from picograd.frontend.lazy import argument_type_error
from picograd.frontend.tensor import Tensor
from picograd.nn.pool import (
    Pooled,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from picograd.nn.pool_adaptive import (
    OutputSize,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
)
from picograd.nn.windows import Size


def in_place(op: str, input: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    """Point `input` at fn(its current value) and return it: torch's in-place op. `fn` gets
    the old value as a tensor of its own, so the recorded gradient reaches the old graph
    (and not, in a circle, the tensor being written)."""
    if not isinstance(input, Tensor):
        raise argument_type_error(op, f"input must be a Tensor, got {type(input).__name__}")
    return input._in_place(op, fn(input._old()))


# ── in-place activations ─────────────────────────────────────────────────────


def relu_(input: Tensor) -> Tensor:
    return in_place("relu_", input, lambda x: x.relu())


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return in_place("elu_", input, lambda x: x.elu(alpha))


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return in_place("leaky_relu_", input, lambda x: x.leaky_relu(negative_slope))


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return in_place("hardtanh_", input, lambda x: x.hardtanh(min_val, max_val))


def selu_(input: Tensor) -> Tensor:
    return in_place("selu_", input, lambda x: x.selu())


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return in_place("celu_", input, lambda x: x.celu(alpha))


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return in_place("threshold_", input, lambda x: x.threshold(threshold, value))


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    return in_place("rrelu_", input, lambda x: x.rrelu(lower, upper, training))


# ── the pools' return_indices=True forms ─────────────────────────────────────


def _pair(result: Pooled) -> tuple[Tensor, Tensor]:
    assert isinstance(result, tuple)  # asked for with return_indices=True
    return result


def max_pool1d_with_indices(input: Tensor, kernel_size: Size, stride: Size | None = None,
                            padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return _pair(max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True))


def max_pool2d_with_indices(input: Tensor, kernel_size: Size, stride: Size | None = None,
                            padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return _pair(max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True))


def max_pool3d_with_indices(input: Tensor, kernel_size: Size, stride: Size | None = None,
                            padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return _pair(max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True))


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: OutputSize,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return _pair(adaptive_max_pool1d(input, output_size, True))


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: OutputSize,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return _pair(adaptive_max_pool2d(input, output_size, True))


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: OutputSize,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return _pair(adaptive_max_pool3d(input, output_size, True))
