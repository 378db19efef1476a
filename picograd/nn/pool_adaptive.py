"""Adaptive pooling and max-unpooling in 1, 2 and 3 D (torch's semantics and argument names):

    adaptive_avg_pool{1,2,3}d(x, output_size)
    adaptive_max_pool{1,2,3}d(x, output_size, return_indices=False)
    max_unpool{1,2,3}d(x, indices, kernel_size, stride=None, padding=0, output_size=None)
    AdaptiveAvgPool{1,2,3}d, AdaptiveMaxPool{1,2,3}d, MaxUnpool{1,2,3}d   the layers

Output o of a dim of size L pooled to O covers [floor(o*L/O), ceil((o+1)*L/O)). Windows of
the widest such size start at every element (one windows view, stride 1); each output
picks its start (index_select) and masks the elements past its end, then reduces. Example:

    y = adaptive_avg_pool2d(x, (1, 1))          # (N, C, 1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from picograd.frontend.lazy import shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module
from picograd.nn.pool import Pooled, batched_input, inside_mask, unbatch, window_max
from picograd.nn.windows import Size, ntuple, windows

OutputSize = int | None | Sequence[int | None]


def _bounds(op: str, size: Sequence[int], output_size: OutputSize
            ) -> list[tuple[np.ndarray, np.ndarray]]:
    n = len(size)
    wanted = list(output_size) if isinstance(output_size, list | tuple) else [output_size] * n
    if len(wanted) == 1 and n > 1:
        wanted = wanted * n
    if len(wanted) != n:
        raise shape_error(op, f"output_size must be an int or {n} ints, got {output_size!r}")
    bounds = []
    for length, o in zip(size, wanted, strict=True):
        o = length if o is None else o
        if not isinstance(o, int) or isinstance(o, bool) or o < 1:
            raise shape_error(op, f"output_size must hold positive ints, got {output_size!r}")
        if length < 1:
            raise shape_error(op, f"cannot pool an empty input of spatial shape {tuple(size)}")
        index = np.arange(o)
        bounds.append(((index * length) // o, -((-(index + 1) * length) // o)))
    return bounds


def _adaptive_windows(x: Tensor, bounds: list[tuple[np.ndarray, np.ndarray]], fill: float
                      ) -> tuple[Tensor, list[np.ndarray], list[np.ndarray]]:
    """x (N, C, *size) as (N, C, *out, *widest): each output's window from its start, and
    per dim the (out, widest) mask of the taps inside it and the starts."""
    n = len(bounds)
    widest = [int((end - start).max()) for start, end in bounds]
    x = x.pad(((0, 0), (0, 0), *((0, k - 1) for k in widest)), fill)
    view = windows(x, widest, (1,) * n, (1,) * n, [s - k + 1 for s, k in
                                                   zip(x.shape[2:], widest, strict=True)])
    for j, (start, _) in enumerate(bounds):
        view = view.index_select(2 + j, Tensor(start.astype(np.int32), device=x.device))
    masks = [np.arange(k)[None, :] < (end - start)[:, None]
             for k, (start, end) in zip(widest, bounds, strict=True)]
    return view, masks, [start for start, _ in bounds]


def _adaptive_avg(op: str, n: int, x: Tensor, output_size: OutputSize) -> Tensor:
    x, batched = batched_input(op, x, n)
    bounds = _bounds(op, x.shape[2:], output_size)
    view, masks, _ = _adaptive_windows(x, bounds, 0.0)
    mask = inside_mask(masks, 2, x.device)
    sums = mask.where(view, 0.0).sum(tuple(range(2 + n, 2 + 2 * n)))
    counts = np.ones((), np.float64)
    for start, end in bounds:
        counts = np.multiply.outer(counts, (end - start).astype(np.float64))
    result = unbatch(sums / Tensor(counts.astype(np.float32), device=x.device), batched)
    assert isinstance(result, Tensor)
    return result


def _adaptive_max(op: str, n: int, x: Tensor, output_size: OutputSize,
                  return_indices: bool) -> Pooled:
    x, batched = batched_input(op, x, n)
    size = x.shape[2:]
    bounds = _bounds(op, size, output_size)
    view, masks, starts = _adaptive_windows(x, bounds, x.dtype.min)
    mask = inside_mask(masks, 2, x.device)
    result = window_max(view, n, starts, (1,) * n, size, mask, return_indices)
    return unbatch(result, batched)


def adaptive_avg_pool1d(input: Tensor, output_size: OutputSize) -> Tensor:
    return _adaptive_avg("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size: OutputSize) -> Tensor:
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


def adaptive_avg_pool3d(input: Tensor, output_size: OutputSize) -> Tensor:
    return _adaptive_avg("adaptive_avg_pool3d", 3, input, output_size)


def adaptive_max_pool1d(input: Tensor, output_size: OutputSize,
                        return_indices: bool = False) -> Pooled:
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size: OutputSize,
                        return_indices: bool = False) -> Pooled:
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size: OutputSize,
                        return_indices: bool = False) -> Pooled:
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size, return_indices)


# ── max_unpool ───────────────────────────────────────────────────────────────


def _max_unpool(op: str, n: int, x: Tensor, indices: Tensor, kernel_size: Size,
                stride: Size | None, padding: Size, output_size: Sequence[int] | None
                ) -> Tensor:
    """Zeros of the pooled input's shape with each value of x at its index (max_pool's
    return_indices): a scatter along the flattened spatial dims."""
    x, batched = batched_input(op, x, n)
    if not batched:
        indices = indices.unsqueeze(0)
    if indices.shape != x.shape or indices.dtype.is_float:
        raise shape_error(op, f"indices must be integers of the input's shape {x.shape}, got "
                              f"{indices.shape} {indices.dtype.name}")
    k = ntuple(op, "kernel_size", kernel_size, n, 1)
    s = k if stride is None else ntuple(op, "stride", stride, n, 1)
    p = ntuple(op, "padding", padding, n, 0)
    default = tuple((i - 1) * st - 2 * pd + kk for i, st, pd, kk in
                    zip(x.shape[2:], s, p, k, strict=True))
    if output_size is None:
        out = default
    else:
        out = tuple(output_size)[-n:]
        if len(out) != n or any(not d - st < o < d + st for o, d, st in
                                zip(out, default, s, strict=True)):
            raise shape_error(op, f"output_size {tuple(output_size)} is not reachable: it "
                                  f"must be within the stride of {default}")
    nb, c = x.shape[:2]
    total = int(np.prod(out))
    flat_x, flat_i = x.reshape(nb, c, -1), indices.reshape(nb, c, -1)
    zeros = Tensor.zeros(nb, c, total, dtype=x.dtype, device=x.device)
    result = zeros.scatter(2, flat_i, flat_x).reshape(nb, c, *out)
    return result if batched else result.squeeze(0)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Size, stride: Size | None = None,
                 padding: Size = 0, output_size: Sequence[int] | None = None) -> Tensor:
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding,
                       output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Size, stride: Size | None = None,
                 padding: Size = 0, output_size: Sequence[int] | None = None) -> Tensor:
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding,
                       output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Size, stride: Size | None = None,
                 padding: Size = 0, output_size: Sequence[int] | None = None) -> Tensor:
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding,
                       output_size)


# ── layers ───────────────────────────────────────────────────────────────────


class _AdaptiveAvgPool(Module):
    _pool: Any

    def __init__(self, output_size: OutputSize):
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return type(self)._pool(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPool):
    _pool = staticmethod(adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPool):
    _pool = staticmethod(adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPool):
    _pool = staticmethod(adaptive_avg_pool3d)


class _AdaptiveMaxPool(Module):
    _pool: Any

    def __init__(self, output_size: OutputSize, return_indices: bool = False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, x: Tensor) -> Pooled:
        return type(self)._pool(x, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    _pool = staticmethod(adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    _pool = staticmethod(adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    _pool = staticmethod(adaptive_max_pool3d)


class _MaxUnpool(Module):
    _pool: Any
    _n = 1

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0):
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = kernel_size if stride is None else stride

    def forward(self, x: Tensor, indices: Tensor,
                output_size: Sequence[int] | None = None) -> Tensor:
        return type(self)._pool(x, indices, self.kernel_size, self.stride, self.padding,
                                output_size)

    def extra_repr(self) -> str:  # torch shows the sizes as tuples
        name, n = type(self).__name__, self._n
        k = ntuple(name, "kernel_size", self.kernel_size, n, 1)
        s = ntuple(name, "stride", self.stride, n, 1)
        p = ntuple(name, "padding", self.padding, n, 0)
        return f"kernel_size={k}, stride={s}, padding={p}"


class MaxUnpool1d(_MaxUnpool):
    _pool = staticmethod(max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    _pool = staticmethod(max_unpool2d)
    _n = 2


class MaxUnpool3d(_MaxUnpool):
    _pool = staticmethod(max_unpool3d)
    _n = 3
