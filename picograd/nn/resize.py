"""`interpolate` and the `Upsample` layer: torch's `F.interpolate` for (N, C, W),
(N, C, H, W) and (N, C, D, H, W) inputs, modes 'nearest' and 'nearest-exact' (also on
integer inputs: an index_select per axis), 'linear' (3-D), 'bilinear' and 'bicubic' (4-D),
'trilinear' (5-D) and 'area' (adaptive average pooling).

Resizing one axis is a linear map, so it is a matrix: row `o` of A (out x in) holds the
weights output `o` gives the input elements (a single 1 for nearest, two weights that sum to
1 for linear). The matrices are built on the host with numpy in float32, with torch's
source-index formulas (so the picked indices and weights are torch's to the bit), and

    out = A_h @ x @ A_w^T

is two small matmuls: exact, differentiable (the gradient is the transposed matrices'
product, which is what torch's backward accumulates) and cheap for the image sizes this is
for (work (H*OH*OW + H*W*OW) per plane).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from picograd.frontend.dtype import uint8
from picograd.frontend.lazy import dtype_error, shape_error, unimplemented_error
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module
from picograd.nn.pool_adaptive import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
)

_MODES = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "linear": (3,), "bilinear": (4,),
          "bicubic": (4,), "trilinear": (5,), "area": (3, 4, 5)}


def _source_scale(size: int, out: int, scale: float | None, align_corners: bool) -> np.float32:
    """torch's `area_pixel_compute_scale`: input units per output unit."""
    if align_corners:
        return np.float32((size - 1) / (out - 1) if out > 1 else 0.0)
    if scale is not None and scale > 0:
        return np.float32(1.0 / scale)
    return np.float32(size / out)


def _nearest_matrix(size: int, out: int, scale: float | None, exact: bool) -> np.ndarray:
    """One 1 per row: torch's 'nearest' reads floor(o * s), 'nearest-exact'
    floor((o + 0.5) * s), both clamped to the last input element. Like torch, 'nearest'
    copies when out == size and reads o // 2 when out == 2 * size, whatever the scale."""
    s = _source_scale(size, out, scale, False)
    o = np.arange(out, dtype=np.float32)
    src = np.floor((o + np.float32(0.5)) * s if exact else o * s).astype(np.int64)
    if not exact and out in (size, 2 * size):
        src = np.arange(out) // (out // size)
    matrix = np.zeros((out, size), np.float32)
    matrix[np.arange(out), np.minimum(src, size - 1)] = 1.0
    return matrix


def _linear_matrix(size: int, out: int, scale: float | None, align_corners: bool) -> np.ndarray:
    """Two weights per row: the source position (o + 0.5) * s - 0.5 (clamped at 0), or o * s
    with align_corners, splits between its floor and the next element (the last element
    where there is no next)."""
    s = _source_scale(size, out, scale, align_corners)
    o = np.arange(out, dtype=np.float32)
    src = o * s if align_corners else np.maximum((o + np.float32(0.5)) * s - np.float32(0.5),
                                                  np.float32(0))
    low = np.minimum(np.floor(src).astype(np.int64), size - 1)
    high = np.minimum(low + 1, size - 1)
    frac = np.clip(src - low.astype(np.float32), 0, 1).astype(np.float32)
    matrix = np.zeros((out, size), np.float32)
    rows = np.arange(out)
    np.add.at(matrix, (rows, low), np.float32(1) - frac)
    np.add.at(matrix, (rows, high), frac)
    return matrix


def _cubic_matrix(size: int, out: int, scale: float | None, align_corners: bool) -> np.ndarray:
    """Four weights per row, torch's cubic convolution (A = -0.75) around the source
    position (o + 0.5) * s - 0.5 (not clamped), or o * s with align_corners; indices past
    an edge read the edge element."""
    s = _source_scale(size, out, scale, align_corners)
    o = np.arange(out, dtype=np.float32)
    src = o * s if align_corners else (o + np.float32(0.5)) * s - np.float32(0.5)
    base = np.floor(src)
    t = (src - base).astype(np.float32)
    a = np.float32(-0.75)

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    matrix = np.zeros((out, size), np.float32)
    rows = np.arange(out)
    for k, w in enumerate(weights):
        np.add.at(matrix, (rows, np.clip(base.astype(np.int64) - 1 + k, 0, size - 1)),
                  w.astype(np.float32))
    return matrix


def _nearest_select(x: Tensor, sizes: Sequence[int], scales: Sequence[float | None],
                    exact: bool) -> Tensor:
    """Nearest resizing as an index_select per axis (exact for every dtype)."""
    for j, (n, out, scale) in enumerate(zip(x.shape[2:], sizes, scales, strict=True)):
        index = _nearest_matrix(n, out, scale, exact).argmax(1).astype(np.int32)
        x = x.index_select(2 + j, Tensor(index, device=x.device))
    return x


def _output_sizes(x: Tensor, size: int | Sequence[int] | None,
                  scale_factor: float | Sequence[float] | None
                  ) -> tuple[list[int], list[float | None]]:
    op, dims = "interpolate", x.ndim - 2
    if (size is None) == (scale_factor is None):
        raise shape_error(op, "exactly one of size and scale_factor must be given")
    if size is not None:
        sizes = [size] * dims if isinstance(size, int) else list(size)
        if len(sizes) != dims or not all(isinstance(n, int) and n > 0 for n in sizes):
            raise shape_error(op, f"size must be {dims} positive int(s) for an input of shape "
                                  f"{x.shape}, got {size!r}")
        return sizes, [None] * dims
    assert scale_factor is not None
    scales = [scale_factor] * dims if isinstance(scale_factor, int | float) else \
        list(scale_factor)
    if len(scales) != dims or not all(isinstance(f, int | float) and f > 0 for f in scales):
        raise shape_error(op, f"scale_factor must be {dims} positive number(s) for an input of "
                              f"shape {x.shape}, got {scale_factor!r}")
    sizes = [math.floor(n * float(f)) for n, f in zip(x.shape[2:], scales, strict=True)]
    if min(sizes) < 1:
        raise shape_error(op, f"scale_factor {scale_factor!r} makes the input of shape "
                              f"{x.shape} empty")
    return sizes, [float(f) for f in scales]


def interpolate(x: Tensor, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None) -> Tensor:
    """torch's `F.interpolate`: resize the spatial dims of x (N, C, *1 to 3 dims) to
    `size`, or by `scale_factor` (the output size is floor(in * factor), and the factor
    itself maps output to input positions unless `recompute_scale_factor`)."""
    op = "interpolate"
    if not isinstance(x, Tensor):
        raise shape_error(op, f"expected a Tensor, got {type(x).__name__}")
    if mode not in _MODES:
        raise shape_error(op, f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
    if x.ndim not in _MODES[mode]:
        want = " or ".join(f"{n}-D" for n in _MODES[mode])
        # torch's NotImplementedError ("Got 3D input, but bilinear mode needs 4D input")
        raise unimplemented_error(op, f"mode {mode!r} needs a {want} input, got shape "
                                      f"{x.shape}")
    if not (x.dtype.is_float or (x.dtype == uint8 and mode in ("nearest", "nearest-exact"))):
        raise dtype_error(op, f"mode {mode!r} needs a float input (or uint8 for the nearest "
                              f"modes, as torch), got {x.dtype.name}")
    if align_corners is not None and mode not in ("linear", "bilinear", "bicubic",
                                                  "trilinear"):
        raise shape_error(op, f"align_corners only applies to linear and cubic modes, not "
                              f"{mode!r}")
    sizes, scales = _output_sizes(x, size, scale_factor)
    if mode == "area":  # torch's area mode: adaptive average pooling to the output size
        return _AREA[x.ndim](x, sizes)
    if recompute_scale_factor:
        scales = [None] * len(scales)
    if not x.dtype.is_float:  # nearest on integers: the picked elements, exactly
        return _nearest_select(x, sizes, scales, mode == "nearest-exact")
    matrices = [_matrix(mode, n, out, scale, bool(align_corners))
                for n, out, scale in zip(x.shape[2:], sizes, scales, strict=True)]
    y = x @ Tensor(matrices[-1].T.copy(), device=x.device)  # the last axis
    if x.ndim == 4:
        y = Tensor(matrices[0], device=x.device) @ y
    elif x.ndim == 5:  # depth and height: each a matmul over its axis moved last
        for axis in (2, 3):
            moved = y.movedim(axis, -1) @ Tensor(matrices[axis - 2].T.copy(), device=x.device)
            y = moved.movedim(-1, axis)
    return y


def _matrix(mode: str, n: int, out: int, scale: float | None, align_corners: bool
            ) -> np.ndarray:
    if mode == "bicubic":
        return _cubic_matrix(n, out, scale, align_corners)
    if mode in ("linear", "bilinear", "trilinear"):
        return _linear_matrix(n, out, scale, align_corners)
    return _nearest_matrix(n, out, scale, mode == "nearest-exact")


_AREA = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}


class Upsample(Module):
    """torch's `nn.Upsample`: `interpolate` with the layer's settings."""

    def __init__(self, size: int | Sequence[int] | None = None,
                 scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, x: Tensor) -> Tensor:
        return interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"size={self.size}" if self.scale_factor is None else \
            f"scale_factor={self.scale_factor}"
        return f"{what}, mode={self.mode!r}"


# ── pixel shuffle ────────────────────────────────────────────────────────────


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r): torch's sub-pixel rearrangement (a view)."""
    r, op = upscale_factor, "pixel_shuffle"
    if not isinstance(r, int) or r < 1 or input.ndim < 3 or input.shape[-3] % (r * r):
        raise shape_error(op, f"needs an input (*, C*{r}*{r}, H, W) and a positive int "
                              f"factor, got {input.shape} and {upscale_factor!r}")
    *lead, c, h, w = input.shape
    k = len(lead)
    split = input.reshape(*lead, c // (r * r), r, r, h, w)
    order = (*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return split.permute(order).reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W): pixel_shuffle's inverse."""
    r, op = downscale_factor, "pixel_unshuffle"
    if not isinstance(r, int) or r < 1 or input.ndim < 3 or input.shape[-1] % r or \
            input.shape[-2] % r:
        raise shape_error(op, f"needs an input (*, C, H*{r}, W*{r}) and a positive int "
                              f"factor, got {input.shape} and {downscale_factor!r}")
    *lead, c, h, w = input.shape
    k = len(lead)
    split = input.reshape(*lead, c, h // r, r, w // r, r)
    order = (*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return split.permute(order).reshape(*lead, c * r * r, h // r, w // r)


class PixelShuffle(Module):
    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
