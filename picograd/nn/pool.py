"""2-D pooling (NCHW, torch's semantics), as compositions of Tensor ops, so autograd, fusion
and every device apply to them unchanged.

    max_pool2d(x, kernel_size, stride=None, padding=0)     pads with the dtype's lowest value
    avg_pool2d(x, kernel_size, stride=None, padding=0)     counts the padding (torch's default)
    MaxPool2d / AvgPool2d                                   the layers

Sizes are an int or an (h, w) pair (checked as conv.py checks them); `stride=None` means the
kernel size.
"""

from __future__ import annotations

from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import shape_error
from picograd.frontend.random import iota
from picograd.frontend.tensor import Tensor
from picograd.nn.conv import Size, _check_4d, _out_size, _pair
from picograd.nn.module import Module


def _pool_windows(op: str, x: Tensor, kernel_size: Size, stride: Size | None, padding: Size,
                  fill: float | int) -> list[Tensor]:
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
    """The maximum of each window (padding is the dtype's lowest value, -inf for floats, as
    torch pads; a NaN in a window is its maximum): an elementwise `maximum` of the kh*kw
    taps, fused into one kernel.

    Its gradient: for windows that tile the input (stride = kernel, no padding: the usual
    pool), torch's rule, all of it to one element of each window, the last NaN if there is
    one, else the first maximum in row-major order (`_tiled_max_pool`, one kernel).
    Otherwise the gradient of the `maximum` chain: tied elements share it (halved at each
    tied `maximum`), where torch gives it all to one."""
    op = "max_pool2d"
    _check_4d(op, x)
    k = _pair(op, "kernel_size", kernel_size, 1)
    if (stride is None or _pair(op, "stride", stride, 1) == k) and _pair(
            op, "padding", padding, 0) == (0, 0):
        _out_size(op, x, k, k, (0, 0), (1, 1))  # the input holds a window
        return _tiled_max_pool(x, k)
    # an int tensor cannot hold -inf: its lowest value never wins over a real element either
    taps = _pool_windows(op, x, kernel_size, stride, padding, x.dtype.min)
    out = taps[0]
    for tap in taps[1:]:
        out = out.maximum(tap)
    return out


def _tiled_max_pool(x: Tensor, k: tuple[int, int]) -> Tensor:
    """max_pool2d with stride = kernel and no padding. The input, rows and columns past the
    last whole window dropped, is viewed as (N, C, OH, kh, OW, kw), so tap (i, j) is
    `[:, :, :, i, :, j]` and the input gradient is computed in that layout: which element of
    each window takes its gradient (one kernel over the windows), then the gradient over
    (N, C, OH, kh, OW, kw), with no index division, which its readers index as (N, C, H,
    W)."""
    n, c, h, w = x.shape
    (kh, kw), oh, ow = k, h // k[0], w // k[1]
    with no_grad():
        tiles = x[:, :, :oh * kh, :ow * kw].reshape(n, c, oh, kh, ow, kw)
        taps = [tiles[:, :, :, i, :, j] for i in range(kh) for j in range(kw)]
        out = taps[0]
        for tap in taps[1:]:
            out = out.maximum(tap)

    def gradient(g: Tensor) -> tuple[Tensor]:
        # torch's scan picks one element per window: the last NaN if there is one, else the
        # first element equal to the maximum (no element of a window with a NaN equals its
        # maximum, NaN). The pick is computed per window (a buffer: each element of the
        # window reads it), then each element of the (N, C, OH, kh, OW, kw) view compares it
        # with its own position in the window.
        first_max = nan_last = None
        for t in range(len(taps) - 1, -1, -1):
            hit = taps[t] == out
            first_max = hit.where(float(t), -1.0 if first_max is None else first_max)
        for t, tap in enumerate(taps):
            nan_last = (tap != tap).where(float(t), -1.0 if nan_last is None else nan_last)
        assert first_max is not None and nan_last is not None
        pick = (nan_last >= 0).where(nan_last, first_max)
        window, full = (n, c, oh, 1, ow, 1), (n, c, oh, kh, ow, kw)
        position = (iota(Tensor, full, 3, x.device) * kw
                    + iota(Tensor, full, 5, x.device)).cast(pick.dtype)
        chosen = pick.reshape(window).expand(full) == position
        dx = chosen.where(g.reshape(window).expand(full), 0.0).reshape(n, c, oh * kh, ow * kw)
        return (dx.pad(((0, 0), (0, 0), (0, h - oh * kh), (0, w - ow * kw))),)

    return out._with_gradient((x,), gradient)


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
