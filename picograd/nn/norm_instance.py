"""Instance norm, local response norm and BatchNorm3d (torch's semantics, names and state
dict layout), next to norm.py's batch/layer/group norms:

    instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5)
    local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0)
    InstanceNorm1d/2d/3d(num_features, eps, momentum, affine=False,
                         track_running_stats=False), LocalResponseNorm, BatchNorm3d

Instance norm normalises each (sample, channel) over its spatial dims. With running stats,
training moves them towards the batch's mean of the instances' mean and unbiased variance
(as torch, through norm.py's in-place update). Example:

    y = InstanceNorm2d(3, affine=True)(x)      # x (N, 3, H, W)
"""

from __future__ import annotations

import numpy as np

from picograd.frontend.lazy import shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module
from picograd.nn.norm import _BatchNorm, _check_float, _per_channel, _update_running
from picograd.nn.windows import windows


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float | None = 0.1, eps: float = 1e-5,
                  num_batches_tracked: Tensor | None = None) -> Tensor:
    """(x - mean) / sqrt(var + eps) per sample and channel over the spatial dims (biased
    variance), or with the running statistics when not `use_input_stats`."""
    op = "instance_norm"
    _check_float(op, input)
    x = input
    if x.ndim < 3:
        raise shape_error(op, f"needs an (N, C, ...) input with spatial dims, got {x.shape}")
    c = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.shape != (c,):
            raise shape_error(op, f"{name} of shape {t.shape} does not match the {c} channels "
                                  f"of the input {x.shape}")
    axes = tuple(range(2, x.ndim))
    if use_input_stats:
        count = int(np.prod(x.shape[2:]))
        if count <= 1:
            raise shape_error(op, f"expected more than 1 spatial element, got input of shape "
                                  f"{x.shape}")
        mean = x.mean(axes, keepdim=True)
        var = x.var(axes, correction=0, keepdim=True)
        if running_mean is not None and running_var is not None:
            _update_running(running_mean, running_var, num_batches_tracked,
                            mean.mean(0).reshape(-1), var.mean(0).reshape(-1), count, momentum)
    elif running_mean is None or running_var is None:
        raise shape_error(op, "use_input_stats=False needs running_mean and running_var")
    else:
        mean, var = _per_channel(running_mean, x.ndim), _per_channel(running_var, x.ndim)
    y = (x - mean) / (var + eps).sqrt()
    if weight is not None:
        y = y * _per_channel(weight, x.ndim)
    return y if bias is None else y + _per_channel(bias, x.ndim)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x**2 over `size` neighbouring channels) ** beta, the window
    padded with zeros (size // 2 before, (size - 1) // 2 after) and divided by `size`."""
    op = "local_response_norm"
    _check_float(op, input)
    if input.ndim < 3:
        raise shape_error(op, f"needs an input of 3 or more dims, got {input.shape}")
    if not isinstance(size, int) or size < 1:
        raise shape_error(op, f"size must be a positive int, got {size!r}")
    c = input.shape[1]
    squares = (input * input).movedim(1, -1)
    squares = squares.pad(((0, 0),) * (squares.ndim - 1) + ((size // 2, (size - 1) // 2),))
    sums = windows(squares, (size,), (1,), (1,), (c,)).sum(-1).movedim(-1, 1)
    return input / (sums * (alpha / size) + k).pow(beta)


class _InstanceNorm(_BatchNorm):
    _n = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False,
                 device: str = "CPU"):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device)

    def forward(self, x: Tensor) -> Tensor:
        name = type(self).__name__
        n = self._n
        if not isinstance(x, Tensor) or x.ndim not in (n + 1, n + 2):
            shape = x.shape if isinstance(x, Tensor) else type(x).__name__
            raise shape_error(name, f"expected a {n + 1}-D or {n + 2}-D input, got {shape}")
        batched = x.ndim == n + 2
        x = x if batched else x.unsqueeze(0)
        if x.shape[1] != self.num_features and self.affine:
            raise shape_error(name, f"input of shape {x.shape} has {x.shape[1]} channels, the "
                                    f"layer {self.num_features}")
        use_input_stats = self.training or not self.track_running_stats
        y = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                          use_input_stats, self.momentum, self.eps, self.num_batches_tracked)
        return y if batched else y.squeeze(0)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance norm of (N, C, L) or (C, L) inputs."""

    _n = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance norm of (N, C, H, W) or (C, H, W) inputs."""

    _n = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance norm of (N, C, D, H, W) or (C, D, H, W) inputs."""

    _n = 3


class BatchNorm3d(_BatchNorm):
    """Batch norm of (N, C, D, H, W) inputs."""

    _dims = (5,)


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x: Tensor) -> Tensor:
        return local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ = ["BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
           "LocalResponseNorm", "instance_norm", "local_response_norm"]
