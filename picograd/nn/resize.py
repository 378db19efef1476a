"""`interpolate` and the `Upsample` layer: torch's `F.interpolate` for (N, C, W) and
(N, C, H, W) inputs, modes 'nearest', 'nearest-exact', 'linear' (3-D) and 'bilinear' (4-D).

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

from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module

_MODES = {"nearest": (3, 4), "nearest-exact": (3, 4), "linear": (3,), "bilinear": (4,)}


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
    """torch's `F.interpolate`: resize the spatial dims of x (N, C, W) or (N, C, H, W) to
    `size`, or by `scale_factor` (the output size is floor(in * factor), and the factor
    itself maps output to input positions unless `recompute_scale_factor`)."""
    op = "interpolate"
    if not isinstance(x, Tensor):
        raise shape_error(op, f"expected a Tensor, got {type(x).__name__}")
    if mode not in _MODES:
        raise shape_error(op, f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
    if x.ndim not in _MODES[mode]:
        want = " or ".join(f"{n}-D" for n in _MODES[mode])
        raise shape_error(op, f"mode {mode!r} needs a {want} input, got shape {x.shape}")
    if not x.dtype.is_float:
        raise dtype_error(op, f"needs a float input, got {x.dtype.name}")
    linear = mode in ("linear", "bilinear")
    if align_corners is not None and not linear:
        raise shape_error(op, f"align_corners only applies to linear modes, not {mode!r}")
    sizes, scales = _output_sizes(x, size, scale_factor)
    if recompute_scale_factor:
        scales = [None] * len(scales)
    matrices = []
    for n, out, scale in zip(x.shape[2:], sizes, scales, strict=True):
        if linear:
            matrices.append(_linear_matrix(n, out, scale, bool(align_corners)))
        else:
            matrices.append(_nearest_matrix(n, out, scale, mode == "nearest-exact"))
    y = x @ Tensor(matrices[-1].T.copy(), device=x.device)  # the last axis
    if x.ndim == 4:
        y = Tensor(matrices[0], device=x.device) @ y
    return y


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
