"""2-D pooling (NCHW, torch's semantics), as compositions of Tensor ops, so autograd, fusion
and every device apply to them unchanged.

    max_pool2d(x, kernel_size, stride=None, padding=0)     pads with -inf
    avg_pool2d(x, kernel_size, stride=None, padding=0)     counts the padding (torch's default)
    MaxPool2d / AvgPool2d                                   the layers

Sizes are an int or an (h, w) pair (checked as conv.py checks them); `stride=None` means the
kernel size.
"""

from __future__ import annotations

import math

from picograd.frontend.lazy import shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn.conv import Size, _check_4d, _out_size, _pair
from picograd.nn.module import Module


def _pool_windows(op: str, x: Tensor, kernel_size: Size, stride: Size | None, padding: Size,
                  fill: float) -> list[Tensor]:
    """The kernel's taps: per (i, j), the (N, C, OH, OW) elements window (oh, ow) holds
    there, from the input padded with `fill`."""
    _check_4d(op, x)
    k = _pair(op, "kernel_size", kernel_size, 1)
    s = k if stride is None else _pair(op, "stride", stride, 1)
    p = _pair(op, "padding", padding, 0)
    if p[0] * 2 > k[0] or p[1] * 2 > k[1]:
        raise shape_error(op, f"padding {padding!r} must be at most half the kernel size "
                              f"{kernel_size!r}")
    oh, ow = _out_size(op, x, k, s, p, (1, 1))
    xp = x.pad(((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])), fill)
    return [xp[:, :, i:i + s[0] * (oh - 1) + 1:s[0], j:j + s[1] * (ow - 1) + 1:s[1]]
            for i in range(k[0]) for j in range(k[1])]


def max_pool2d(x: Tensor, kernel_size: Size, stride: Size | None = None,
               padding: Size = 0) -> Tensor:
    """The maximum of each window (padding is -inf): an elementwise `maximum` of the kh*kw
    taps, fused into one kernel. Its gradient goes to the maximum; tied elements share it
    (halved at each tied `maximum` of the chain), where torch gives it all to one."""
    taps = _pool_windows("max_pool2d", x, kernel_size, stride, padding, -math.inf)
    out = taps[0]
    for tap in taps[1:]:
        out = out.maximum(tap)
    return out


def avg_pool2d(x: Tensor, kernel_size: Size, stride: Size | None = None,
               padding: Size = 0) -> Tensor:
    """The mean of each window, padding zeros included (torch's count_include_pad=True)."""
    taps = _pool_windows("avg_pool2d", x, kernel_size, stride, padding, 0.0)
    out = taps[0]
    for tap in taps[1:]:
        out = out + tap
    return out * (1.0 / len(taps))


# ── layers ───────────────────────────────────────────────────────────────────


class _Pool2d(Module):
    """MaxPool2d and AvgPool2d: a window function applied with the layer's settings."""

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def extra_repr(self) -> str:
        stride = self.kernel_size if self.stride is None else self.stride
        return f"kernel_size={self.kernel_size}, stride={stride}, padding={self.padding}"


class MaxPool2d(_Pool2d):
    def forward(self, x: Tensor) -> Tensor:
        return max_pool2d(x, self.kernel_size, self.stride, self.padding)


class AvgPool2d(_Pool2d):
    def forward(self, x: Tensor) -> Tensor:
        return avg_pool2d(x, self.kernel_size, self.stride, self.padding)
