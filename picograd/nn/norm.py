"""Normalisation layers and embeddings (torch's semantics), as compositions of Tensor ops.

    batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5)
    layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5)
    group_norm(x, num_groups, weight=None, bias=None, eps=1e-5)
    rms_norm(x, normalized_shape, weight=None, eps=None)      eps None: finfo(float32).eps
    embedding(indices, weight)                                 int32 indices
    BatchNorm1d / BatchNorm2d / LayerNorm / GroupNorm / RMSNorm / Embedding   the layers

Batch norm in training normalises with the batch's biased variance and moves the running
variance towards the unbiased one (as torch). `batch_norm` updates `running_mean` and
`running_var` in place, as torch's does, by pointing the tensors at the new (lazy) values;
`momentum=None` means a cumulative average, which needs `num_batches_tracked` (the layers
pass theirs). The new values are queued with the tensors `backward()` was called on, so the
next `Optimizer.step()` realizes them in the same graph as the step; a running statistic that
is still pending when the next training batch arrives (no step in between) is realized then,
so the graph behind it never grows beyond one batch. The layers' state dicts have torch's
names: weight, bias, running_mean, running_var, num_batches_tracked (int32 here, int64 in
torch; loading torch's converts it).

`Embedding` loads the rows its indices name (a gather: O(indices x dim) work, whatever the
vocabulary); its gradient adds each row's gradient back at its index. Realized indices out of
range raise IndexRangeError, as torch's IndexError (computed ones when the result is read).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from picograd.frontend import autograd
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.realize import realize, realize_later
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module

Shape = int | Sequence[int]


def _shape(op: str, normalized_shape: Shape) -> tuple[int, ...]:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or not all(isinstance(d, int) and d > 0 for d in shape):
        raise shape_error(op, f"normalized_shape must be positive ints, got {normalized_shape!r}")
    return shape


def _check_float(op: str, x: Tensor) -> None:
    if not isinstance(x, Tensor):
        raise shape_error(op, f"expected a Tensor, got {type(x).__name__}")
    if not x.dtype.is_float:
        raise dtype_error(op, f"needs a float32 input, got {x.dtype.name}")


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    y = y if weight is None else y * weight
    return y if bias is None else y + bias


def _per_channel(t: Tensor, ndim: int) -> Tensor:
    """A (C,) tensor shaped (C, 1, ...) to broadcast over dims 1.. of an ndim-D input."""
    return t.reshape((t.shape[0],) + (1,) * (ndim - 2))


# ── functional ───────────────────────────────────────────────────────────────


def batch_norm(x: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float | None = 0.1, eps: float = 1e-5,
               num_batches_tracked: Tensor | None = None) -> Tensor:
    """Normalise each channel (dim 1) of an (N, C, ...) input: with the batch's statistics
    in training (updating the running ones in place when given) or without running
    statistics, else with the running ones."""
    _check_float("batch_norm", x)
    if x.ndim < 2:
        raise shape_error("batch_norm", f"needs an (N, C, ...) input, got shape {x.shape}")
    c = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.shape != (c,):
            raise shape_error("batch_norm", f"{name} of shape {t.shape} does not match the "
                                            f"{c} channels of the input {x.shape}")
    axes = (0, *range(2, x.ndim))
    if training or running_mean is None or running_var is None:
        count = x.numel() // c
        if training and count <= 1:
            raise shape_error("batch_norm", f"expected more than 1 value per channel when "
                                            f"training, got input of shape {x.shape}")
        mean = x.mean(axes, keepdim=True)
        var = x.var(axes, correction=0, keepdim=True)
        if training and running_mean is not None and running_var is not None:
            _update_running(running_mean, running_var, num_batches_tracked, mean, var, count,
                            momentum)
    else:
        mean, var = _per_channel(running_mean, x.ndim), _per_channel(running_var, x.ndim)
    y = (x - mean) / (var + eps).sqrt()
    return _affine(y, None if weight is None else _per_channel(weight, x.ndim),
                   None if bias is None else _per_channel(bias, x.ndim))


def _update_running(running_mean: Tensor, running_var: Tensor, tracked: Tensor | None,
                    mean: Tensor, var: Tensor, count: int, momentum: float | None) -> None:
    pending = [t for t in (running_mean, running_var, tracked)
               if t is not None and not t._node.realized]
    if pending:  # no optimiser step since the last batch: cut the chain of batches here
        realize(*pending)
    with autograd.no_grad():
        if tracked is not None:
            _write_later(tracked, tracked + 1)
        if momentum is None:
            if tracked is None:
                raise shape_error("batch_norm", "momentum=None (a cumulative average) needs "
                                                "num_batches_tracked")
            factor: Tensor | float = 1.0 / tracked.cast("float32")
        else:
            factor = momentum
        batch_mean = mean.detach().reshape(-1)
        batch_var = var.detach().reshape(-1) * (count / max(count - 1, 1))
        new_mean = running_mean * (1.0 - factor) + batch_mean * factor
        new_var = running_var * (1.0 - factor) + batch_var * factor
    _write_later(running_mean, new_mean)
    _write_later(running_var, new_var)


def _write_later(buffer: Tensor, value: Tensor) -> None:
    """Point `buffer` at `value` now (reads see the new statistics at once) and have the next
    optimiser step write it back into the buffer's own leaf (see autograd.pending_writes)."""
    leaf = buffer._node
    buffer._node = value._node
    if leaf.realized and all(b is not buffer for _, b in autograd.pending_writes):
        autograd.pending_writes.append((leaf, buffer))
    autograd.pending_roots.append(buffer)


def layer_norm(x: Tensor, normalized_shape: Shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last len(normalized_shape) dims (biased variance)."""
    _check_float("layer_norm", x)
    shape = _shape("layer_norm", normalized_shape)
    if x.shape[x.ndim - len(shape):] != shape or x.ndim < len(shape):
        raise shape_error("layer_norm", f"input of shape {x.shape} does not end with the "
                                        f"normalized_shape {shape}")
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mean = x.mean(axes, keepdim=True)
    y = (x - mean) / (x.var(axes, correction=0, keepdim=True) + eps).sqrt()
    return _affine(y, weight, bias)


def group_norm(x: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each group of num_channels / num_groups channels of an (N, C, ...) input
    over its channels and spatial dims; the affine transform is per channel."""
    _check_float("group_norm", x)
    if x.ndim < 2 or num_groups <= 0 or x.shape[1] % num_groups:
        raise shape_error("group_norm", f"needs an (N, C, ...) input with C divisible by "
                                        f"num_groups={num_groups}, got shape {x.shape}")
    g = x.reshape(x.shape[0], num_groups, -1)
    mean = g.mean(2, keepdim=True)
    y = ((g - mean) / (g.var(2, correction=0, keepdim=True) + eps).sqrt()).reshape(x.shape)
    return _affine(y, None if weight is None else _per_channel(weight, x.ndim),
                   None if bias is None else _per_channel(bias, x.ndim))


def rms_norm(x: Tensor, normalized_shape: Shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the last len(normalized_shape) dims, times weight."""
    _check_float("rms_norm", x)
    shape = _shape("rms_norm", normalized_shape)
    if x.shape[x.ndim - len(shape):] != shape or x.ndim < len(shape):
        raise shape_error("rms_norm", f"input of shape {x.shape} does not end with the "
                                      f"normalized_shape {shape}")
    eps = float(np.finfo(np.float32).eps) if eps is None else eps
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = x / ((x * x).mean(axes, keepdim=True) + eps).sqrt()
    return _affine(y, weight, None)


def embedding(indices: Tensor, weight: Tensor) -> Tensor:
    """Rows of `weight` (num_embeddings, dim) picked by int32 `indices`: shape
    indices.shape + (dim,)."""
    if not isinstance(indices, Tensor) or indices.dtype.is_float or indices.dtype.is_bool:
        got = indices.dtype.name if isinstance(indices, Tensor) else type(indices).__name__
        raise dtype_error("embedding", f"indices must be an int32 tensor, got {got}")
    if weight.ndim != 2:
        raise shape_error("embedding", f"weight must be (num_embeddings, dim), got "
                                       f"{weight.shape}")
    return weight._take(0, indices, negative=False, op="embedding")


# ── layers ───────────────────────────────────────────────────────────────────


def _param(values: np.ndarray, device: str) -> Tensor:
    return Tensor(values.astype(np.float32), device=device, requires_grad=True)


class _BatchNorm(Module):
    _dims: tuple[int, ...] = ()  # the input ranks the layer accepts

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: str = "CPU"):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = _param(np.ones(num_features), device) if affine else None
        self.bias = _param(np.zeros(num_features), device) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean",
                                 Tensor(np.zeros(num_features, np.float32), device=device))
            self.register_buffer("running_var",
                                 Tensor(np.ones(num_features, np.float32), device=device))
            self.register_buffer("num_batches_tracked",
                                 Tensor(np.zeros((), np.int32), device=device))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def forward(self, x: Tensor) -> Tensor:
        name = type(self).__name__
        if not isinstance(x, Tensor) or x.ndim not in self._dims:
            shape = x.shape if isinstance(x, Tensor) else type(x).__name__
            raise shape_error(name, f"expected a {' or '.join(f'{d}-D' for d in self._dims)} "
                                    f"input, got {shape}")
        if x.shape[1] != self.num_features:
            raise shape_error(name, f"input of shape {x.shape} has {x.shape[1]} channels, the "
                                    f"layer {self.num_features}")
        return batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                          self.training, self.momentum, self.eps, self.num_batches_tracked)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm of (N, C) or (N, C, L) inputs."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm of (N, C, H, W) inputs."""

    _dims = (4,)


class LayerNorm(Module):
    def __init__(self, normalized_shape: Shape, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: str = "CPU"):
        super().__init__()
        self.normalized_shape = _shape("LayerNorm", normalized_shape)
        self.eps = eps
        affine = elementwise_affine
        self.weight = _param(np.ones(self.normalized_shape), device) if affine else None
        self.bias = (_param(np.zeros(self.normalized_shape), device) if affine and bias
                     else None)

    def forward(self, x: Tensor) -> Tensor:
        return layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, affine={self.weight is not None}"


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: str = "CPU"):
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups:
            raise shape_error("GroupNorm", f"num_channels={num_channels} must be divisible by "
                                           f"num_groups={num_groups}")
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.weight = _param(np.ones(num_channels), device) if affine else None
        self.bias = _param(np.zeros(num_channels), device) if affine else None

    def forward(self, x: Tensor) -> Tensor:
        if isinstance(x, Tensor) and x.ndim >= 2 and x.shape[1] != self.num_channels:
            raise shape_error("GroupNorm", f"input of shape {x.shape} has {x.shape[1]} "
                                           f"channels, the layer {self.num_channels}")
        return group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}"


class RMSNorm(Module):
    def __init__(self, normalized_shape: Shape, eps: float | None = None,
                 elementwise_affine: bool = True, device: str = "CPU"):
        super().__init__()
        self.normalized_shape = _shape("RMSNorm", normalized_shape)
        self.eps = eps
        self.weight = (_param(np.ones(self.normalized_shape), device) if elementwise_affine
                       else None)

    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


class Embedding(Module):
    """A lookup table of `num_embeddings` rows of size `embedding_dim`, drawn from N(0, 1)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, device: str = "CPU"):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Tensor.randn(num_embeddings, embedding_dim, device=device)
        realize_later(self.weight)  # computed by the next realize, unless loaded first
        self.weight.requires_grad_()

    def forward(self, indices: Tensor) -> Tensor:
        return embedding(indices, self.weight)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"
