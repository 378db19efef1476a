"""1-, 2- and 3-D max, average and power-average pooling (torch's semantics and argument
names), each a reduce over a windows view (windows.py), so autograd, fusion and every device
apply to them unchanged; inputs are (N, C, *spatial) or unbatched (C, *spatial).

    max_pool{1,2,3}d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                     return_indices=False)     (values, flat spatial indices) with indices
    avg_pool{1,2,3}d(x, kernel_size, stride=None, padding=0, ceil_mode=False,
                     count_include_pad=True, divisor_override=None)   (no override in 1-D)
    lp_pool{1,2,3}d(x, norm_type, kernel_size, stride=None, ceil_mode=False)
    MaxPool{1,2,3}d, AvgPool{1,2,3}d, LPPool{1,2,3}d        the layers

`stride=None` means the kernel size. Adaptive pooling and max_unpool are in
pool_adaptive.py. Example:

    y, idx = max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import shape_error
from picograd.frontend.random import iota
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module
from picograd.nn.windows import Size, check_spatial, ntuple, pool_out_size, windows

Pooled = Tensor | tuple[Tensor, Tensor]


class _Window:
    """A pool's checked settings for an input of spatial shape `size`."""

    def __init__(self, op: str, size: Sequence[int], kernel_size: Size, stride: Size | None,
                 padding: Size, dilation: Size, ceil_mode: bool):
        n = len(size)
        self.kernel = ntuple(op, "kernel_size", kernel_size, n, 1)
        no_stride = stride is None or (isinstance(stride, list | tuple) and not stride)
        self.stride = self.kernel if no_stride else ntuple(op, "stride", stride, n, 1)
        self.padding = ntuple(op, "padding", padding, n, 0)
        self.dilation = ntuple(op, "dilation", dilation, n, 1)
        if any(2 * p > k for p, k in zip(self.padding, self.kernel, strict=True)):
            raise shape_error(op, f"padding {padding!r} must be at most half the kernel size "
                                  f"{kernel_size!r}")
        self.size = tuple(size)
        self.out = tuple(pool_out_size(op, length, k, s, p, d, ceil_mode) for length, k, s, p, d
                         in zip(size, self.kernel, self.stride, self.padding, self.dilation,
                                strict=True))

    def view(self, x: Tensor, fill: float | int) -> Tensor:
        """x (N, C, *size) padded with `fill` as its windows (N, C, *out, *kernel)."""
        pads = [(0, 0), (0, 0)]
        for length, o, k, s, p, d in zip(self.size, self.out, self.kernel, self.stride,
                                         self.padding, self.dilation, strict=True):
            need = (o - 1) * s + (k - 1) * d + 1  # ceil mode may read past the padding
            pads.append((p, max(p, need - length - p)))
        xp = x.pad(tuple(pads), fill)
        if self.stride == self.kernel and self.dilation == (1,) * len(self.kernel):
            return _tiles(xp, self.kernel, self.out)
        return windows(xp, self.kernel, self.stride, self.dilation, self.out)

    def starts(self) -> list[np.ndarray]:
        return [np.arange(o) * s - p for o, s, p in zip(self.out, self.stride, self.padding,
                                                         strict=True)]

    def inside(self) -> list[np.ndarray] | None:
        """Per dim, which taps (out, kernel) of each window lie in the input; None when all
        do (no padding, no ceil-mode overhang)."""
        masks = [(start[:, None] + np.arange(k)[None, :] * d >= 0)
                 & (start[:, None] + np.arange(k)[None, :] * d < length)
                 for start, k, d, length in zip(self.starts(), self.kernel, self.dilation,
                                                self.size, strict=True)]
        return None if all(m.all() for m in masks) else masks


def inside_mask(masks: Sequence[np.ndarray], lead: int, device: str) -> Tensor:
    """The per-dim (out, kernel) masks as one bool tensor broadcasting to a windows view
    (*lead, *out, *kernel)."""
    n = len(masks)
    total: Tensor | None = None
    for j, m in enumerate(masks):
        shape = [1] * (lead + 2 * n)
        shape[lead + j], shape[lead + n + j] = m.shape
        part = Tensor(m.reshape(shape), device=device)
        total = part if total is None else total & part
    assert total is not None
    return total


def _tiles(x: Tensor, kernel: Sequence[int], out: Sequence[int]) -> Tensor:
    """Windows that tile x (stride = kernel, no dilation): a crop, reshape and permute."""
    n = len(kernel)
    crop = x[(slice(None), slice(None), *(slice(0, o * k) for o, k in
                                          zip(out, kernel, strict=True)))]
    split = crop.reshape(*x.shape[:2], *(v for o, k in zip(out, kernel, strict=True)
                                         for v in (o, k)))
    order = (0, 1, *(2 + 2 * j for j in range(n)), *(3 + 2 * j for j in range(n)))
    return split.permute(order)


def batched_input(op: str, x: Any, n: int) -> tuple[Tensor, bool]:
    check_spatial(op, x, n)
    return (x, True) if x.ndim == n + 2 else (x.unsqueeze(0), False)


def unbatch(result: Pooled, batched: bool) -> Pooled:
    if batched:
        return result
    if isinstance(result, tuple):
        return result[0].squeeze(0), result[1].squeeze(0)
    return result.squeeze(0)


# ── the maximum of each window ───────────────────────────────────────────────


def window_max(view: Tensor, n: int, starts: Sequence[np.ndarray], dilation: Sequence[int],
               size: Sequence[int], mask: Tensor | None = None,
               return_indices: bool = False) -> Pooled:
    """The maximum over the last `n` (kernel) axes of `view` (N, C, *out, *kernel), with
    torch's gradient: all of it to one element per window, the last NaN if there is one,
    else the first maximum in row-major order. `mask` (broadcast to the view) drops the
    elements outside a window; with `return_indices`, also the picked element's flat
    index into the input of spatial shape `size`, window o of dim j starting at
    `starts[j][o]` with taps `dilation[j]` apart. Padding is never picked: a window of
    only -inf (or of the lowest int) picks its first element inside the input, as torch."""
    kernel = view.shape[-n:]
    axes = tuple(range(view.ndim - n, view.ndim))
    taps = math.prod(kernel)
    position: Any = 0  # each element's row-major position in its window
    for j in range(n):
        position = position + iota(Tensor, view.shape, view.ndim - n + j, view.device) * \
            math.prod(kernel[j + 1:])
    low = view.dtype.min  # an int tensor cannot hold -inf, and its lowest value never wins
    with no_grad():
        candidates = view if mask is None else mask.where(view, low)
        best = candidates.max(axes)  # the result (a reshape of it would be another kernel)
        top = candidates.max(axes, keepdim=True)  # what the pick compares with
        hit = candidates == top if mask is None else mask & (candidates == top)
        # one reduce picks: a NaN scores taps + its position (the last wins), a maximum
        # taps - 1 - its position (the first wins), anything else -1
        nan = candidates != candidates
        score = nan.where(position + taps, hit.where(taps - 1 - position, -1))
        score = score.max(axes, keepdim=True)
        pick = (score >= taps).where(score - taps, taps - 1 - score)
    out_shape = best.shape

    def gradient(g: Tensor) -> tuple[Tensor]:
        return ((position == pick).where(g.reshape(top.shape), 0.0),)

    values = best._with_gradient((view,), gradient)
    if not return_indices:
        return values
    with no_grad():
        flat: Any = 0
        lead = view.ndim - 2 * n
        for j in range(n):
            shape = [1] * (lead + n)
            shape[lead + j] = len(starts[j])
            start = Tensor(np.asarray(starts[j], np.int32).reshape(shape), device=view.device)
            tap = (pick.reshape(out_shape) // math.prod(kernel[j + 1:])) % kernel[j]
            flat = flat * size[j] + start + tap * dilation[j]
    return values, flat


def _max_pool(op: str, n: int, x: Tensor, kernel_size: Size, stride: Size | None,
              padding: Size, dilation: Size, ceil_mode: bool, return_indices: bool) -> Pooled:
    x, batched = batched_input(op, x, n)
    w = _Window(op, x.shape[2:], kernel_size, stride, padding, dilation, ceil_mode)
    inside = w.inside()
    mask = None if inside is None else inside_mask(inside, 2, x.device)
    result = window_max(w.view(x, x.dtype.min), n, w.starts(), w.dilation, w.size, mask,
                        return_indices)
    return unbatch(result, batched)


def max_pool1d(input: Tensor, kernel_size: Size, stride: Size | None = None,
               padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Pooled:
    """The maximum of each window of (N, C, L); see `window_max` for the gradient."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def max_pool2d(input: Tensor, kernel_size: Size, stride: Size | None = None,
               padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Pooled:
    """The maximum of each window of (N, C, H, W), padding the dtype's lowest value (-inf
    for floats); a NaN in a window is its maximum; see `window_max` for the gradient."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def max_pool3d(input: Tensor, kernel_size: Size, stride: Size | None = None,
               padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Pooled:
    """The maximum of each window of (N, C, D, H, W); see `window_max` for the gradient."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


# ── the mean of each window ──────────────────────────────────────────────────


def _window_counts(w: _Window, count_include_pad: bool) -> np.ndarray:
    """torch's divisor per output position: the window's elements inside the input, or
    inside the padded input when the padding counts (never the ceil-mode overhang)."""
    total = np.ones((), np.float64)
    for length, start, k, p in zip(w.size, w.starts(), w.kernel, w.padding, strict=True):
        end = np.minimum(start + k, length + p)
        inside = np.minimum(end, length) - np.maximum(start, 0)
        count = end - start if count_include_pad else inside
        total = np.multiply.outer(total, count.astype(np.float64))
    return total.astype(np.float32)


def _avg_pool(op: str, n: int, x: Tensor, kernel_size: Size, stride: Size | None,
              padding: Size, ceil_mode: bool, count_include_pad: bool,
              divisor_override: int | None) -> Tensor:
    x, batched = batched_input(op, x, n)
    w = _Window(op, x.shape[2:], kernel_size, stride, padding, 1, ceil_mode)
    view = w.view(x, 0.0)
    sums = view.sum(tuple(range(2 + n, 2 + 2 * n)))
    if divisor_override is not None:
        if not isinstance(divisor_override, int) or divisor_override == 0:
            raise shape_error(op, f"divisor_override must be a non-zero int, got "
                                  f"{divisor_override!r}")
        out = sums / float(divisor_override)
    else:
        out = sums / Tensor(_window_counts(w, count_include_pad), device=x.device)
    result = unbatch(out, batched)
    assert isinstance(result, Tensor)
    return result


def avg_pool1d(input: Tensor, kernel_size: Size, stride: Size | None = None,
               padding: Size = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each window of (N, C, L); padding zeros count unless
    count_include_pad=False."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None)


def avg_pool2d(input: Tensor, kernel_size: Size, stride: Size | None = None,
               padding: Size = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window of (N, C, H, W) (torch's divisor rules)."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input: Tensor, kernel_size: Size, stride: Size | None = None,
               padding: Size = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window of (N, C, D, H, W) (torch's divisor rules)."""
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def _lp_pool(op: str, n: int, x: Tensor, norm_type: float, kernel_size: Size,
             stride: Size | None, ceil_mode: bool) -> Tensor:
    """torch's lp_pool: (sum of x**p over the window) ** (1/p), from the average."""
    x, batched = batched_input(op, x, n)
    k = ntuple(op, "kernel_size", kernel_size, n, 1)
    mean = _avg_pool(op, n, x.pow(norm_type), k, stride, 0, ceil_mode, True, None)
    out = (mean.sign() * mean.abs().relu() * float(math.prod(k))).pow(1.0 / norm_type)
    result = unbatch(out, batched)
    assert isinstance(result, Tensor)
    return result


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Size, stride: Size | None = None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Size, stride: Size | None = None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Size, stride: Size | None = None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


# ── layers ───────────────────────────────────────────────────────────────────


class _MaxPool(Module):
    _pool: Any

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 dilation: Size = 1, return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size, self.padding, self.dilation = kernel_size, padding, dilation
        self.stride = kernel_size if stride is None else stride
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, x: Tensor) -> Pooled:
        return type(self)._pool(x, self.kernel_size, self.stride, self.padding, self.dilation,
                                self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPool):
    _pool = staticmethod(max_pool1d)


class MaxPool2d(_MaxPool):
    _pool = staticmethod(max_pool2d)


class MaxPool3d(_MaxPool):
    _pool = staticmethod(max_pool3d)


class _AvgPool(Module):
    _pool: Any

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None):
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = kernel_size if stride is None else stride
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, x: Tensor) -> Tensor:
        return type(self)._pool(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPool):
    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)

    def forward(self, x: Tensor) -> Tensor:
        return avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)

    def extra_repr(self) -> str:  # torch's AvgPool1d shows its sizes as 1-tuples
        sizes = [ntuple("AvgPool1d", name, value, 1, 0) for name, value in
                 (("kernel_size", self.kernel_size), ("stride", self.stride),
                  ("padding", self.padding))]
        return f"kernel_size={sizes[0]}, stride={sizes[1]}, padding={sizes[2]}"


class AvgPool2d(_AvgPool):
    _pool = staticmethod(avg_pool2d)


class AvgPool3d(_AvgPool):
    _pool = staticmethod(avg_pool3d)


class _LPPool(Module):
    _pool: Any

    def __init__(self, norm_type: float, kernel_size: Size, stride: Size | None = None,
                 ceil_mode: bool = False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, x: Tensor) -> Tensor:
        return type(self)._pool(x, self.norm_type, self.kernel_size, self.stride,
                                self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    _pool = staticmethod(lp_pool1d)


class LPPool2d(_LPPool):
    _pool = staticmethod(lp_pool2d)


class LPPool3d(_LPPool):
    _pool = staticmethod(lp_pool3d)
