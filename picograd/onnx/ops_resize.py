"""Resize (opset 10-19) and Upsample (opset 7-9).

Resize is separable: each resized axis is one gather of the input along that axis followed
by a weighted sum over the gathered taps. Which input positions an output position reads,
and with what weights, depends only on the shapes, the scales and the attributes, so they
are computed here in numpy on the host (following the ONNX reference's vectorized
`_interpolate_1d_along_axis`) and the device sees an `index_select` and a multiply-sum per
axis. Nearest mode needs no weights: one tap, a pure gather (exact for every dtype).

The host arithmetic is onnxruntime's (float32 coordinates, float32 output sizes), so that
a nearest pick at a tie which rounding decides is its pick; where onnxruntime departs from
the ONNX definition (align_corners / tf_crop_and_resize with a fractional output width)
the reference is followed (tests/e2e/test_onnx_resize.py says which is which).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from picograd.frontend import where
from picograd.frontend.tensor import Tensor
from picograd.onnx.registry import NodeContext, Value, op

_COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                     "align_corners", "asymmetric", "tf_crop_and_resize")
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
_POLICIES = ("stretch", "not_larger", "not_smaller")
# onnxruntime's "simple" nearest of Upsample and opset-10 Resize: floor when upsampling,
# ceil when downsampling
_SIMPLE = "simple"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _check_resize(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    """Why the node cannot be translated (an attribute value outside the spec's, or one
    onnxruntime rejects too), or None."""
    mode = _text(attrs.get("mode", "nearest"))
    if mode not in ("nearest", "linear", "cubic") or (node.op_type == "Upsample"
                                                      and mode == "cubic"):
        return f"mode {mode!r}"
    choices = (("coordinate_transformation_mode", "half_pixel", _COORDINATE_MODES),
               ("nearest_mode", "round_prefer_floor", _NEAREST_MODES),
               ("keep_aspect_ratio_policy", "stretch", _POLICIES))
    for name, default, allowed in choices:
        value = _text(attrs.get(name, default))
        if value not in allowed:
            return f"{name} {value!r}"
    if attrs.get("antialias", 0) and mode == "nearest":
        return "antialias with mode 'nearest'"
    return None


# ── taps and weights, on the host ───────────────────────────────────────────

def _source_coords(mode: str, n_out: int, scale: float, n_in: int,
                   roi: tuple[float, float], f: type = np.float32
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """Each output position's coordinate in the input, and (tf_crop_and_resize only) which
    output positions fall outside the input and take the extrapolation value.

    Computed as onnxruntime computes them, in float32 (`f`; float64 for a float64 input,
    which onnxruntime has no kernel for, as the reference), so that a nearest pick at a
    tie the arithmetic rounds either way is its pick. align_corners and
    tf_crop_and_resize divide by the unrounded output width scale * n_in, as the ONNX
    reference (onnx/onnx#2462: intended; onnxruntime divides by the rounded size, the same
    when scale * n_in is whole); pytorch_half_pixel maps a single output position to 0
    (the spec's and onnxruntime's; the reference's -0.5 differs only for cubic)."""
    y, s, n = np.arange(n_out, dtype=f), f(scale), f(n_in)
    width = s * n  # the unrounded output width
    if abs(width - n_out) <= 1e-5 * n_out:
        # whole up to float32 rounding (a scale of 3/7 for 7 -> 3): the size itself, or a
        # floor pick on align_corners would land one below onnxruntime's
        width = f(n_out)
    half = f(0.5)
    outside = None
    if mode == "align_corners":
        x = np.zeros(n_out, f) if width == 1 else y * (n - 1) / (width - 1)
    elif mode == "asymmetric":
        x = y / s
    elif mode == "tf_crop_and_resize":
        lo, hi = f(roi[0]), f(roi[1])
        x = (np.full(n_out, 0.5 * (float(lo) + float(hi)) * (n_in - 1), f) if width == 1
             else lo * (n - 1) + y * (hi - lo) * (n - 1) / (width - 1))
        outside = (x < 0) | (x > n - 1)
    elif mode == "pytorch_half_pixel":
        x = np.zeros(n_out, f) if n_out == 1 else (y + half) / s - half
    elif mode == "half_pixel":
        x = (y + half) / s - half
    else:  # half_pixel_symmetric: the rounding of the output size is shared by both ends
        offset = n / 2 * (1 - f(n_out) / width)
        # onnxruntime adds offset + (y + 0.5) / scale - 0.5 in float64, then rounds
        x = (float(offset) + (y.astype(np.float64) + 0.5) / float(s) - 0.5).astype(f)
    return x.astype(np.float64), outside


def _nearest_taps(x: np.ndarray, scale: float, n_in: int, nearest: str) -> np.ndarray:
    if nearest == _SIMPLE:
        picked = np.ceil(x) if scale < 1 else np.floor(x)
    elif nearest == "floor":
        picked = np.floor(x)
    elif nearest == "ceil":
        picked = np.ceil(x)
    elif nearest == "round_prefer_ceil":
        picked = np.floor(x + 0.5)
    else:  # round_prefer_floor
        picked = np.ceil(x - 0.5)
    return np.clip(picked, 0, n_in - 1).astype(np.int64)


def _cubic(a: float) -> Callable[[np.ndarray], np.ndarray]:
    def kernel(d: np.ndarray) -> np.ndarray:
        d = np.abs(d)
        near = ((a + 2) * d - (a + 3)) * d * d + 1
        far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
        return np.where(d <= 1, near, np.where(d < 2, far, 0.0))
    return kernel


def _linear(d: np.ndarray) -> np.ndarray:
    return np.clip(1 - np.abs(d), 0, None)


def _filter_taps(x: np.ndarray, scale: float, n_in: int, kernel: Callable, support: int,
                 antialias: bool, exclude_outside: bool) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), each (n_out, taps): the input positions each output reads (edge
    positions repeat past the border) and their weights. `support` is the kernel's
    half-width (1 linear, 2 cubic); antialias widens it by 1/scale when downsampling."""
    stretch = min(scale, 1.0) if antialias else 1.0
    floor = np.floor(x).astype(np.int64)
    # the reference prefers the left neighbour: an integer coordinate is ratio 1 of the
    # position before it
    exact = x == floor
    base = np.where(exact, floor - 1, floor)
    first = int(np.floor(-support / stretch) + 1)
    offsets = np.arange(first, 1 - first + 1)  # taps base+first .. base+1-first
    taps = base[:, None] + offsets[None, :]
    weights = kernel((taps - x[:, None]) * stretch)
    if antialias:
        weights = weights / weights.sum(axis=1, keepdims=True)
    if exclude_outside:
        weights = np.where((taps < 0) | (taps >= n_in), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    return np.clip(taps, 0, n_in - 1), weights


# ── the output's shape ──────────────────────────────────────────────────────

@dataclass(frozen=True)
class _Settings:
    """The node's attributes, read once (opset 10 and Upsample fix the coordinate mode to
    asymmetric and the nearest rule to "simple")."""

    mode: str
    coords: str
    nearest: str
    policy: str
    cubic_a: float
    exclude_outside: bool
    antialias: bool
    extrapolation: float

    @staticmethod
    def read(ctx: NodeContext, opset_defaults: bool) -> _Settings:
        return _Settings(
            mode=_text(ctx.attr("mode", "nearest")),
            coords=("asymmetric" if opset_defaults
                    else _text(ctx.attr("coordinate_transformation_mode", "half_pixel"))),
            nearest=(_SIMPLE if opset_defaults
                     else _text(ctx.attr("nearest_mode", "round_prefer_floor"))),
            policy=_text(ctx.attr("keep_aspect_ratio_policy", "stretch")),
            cubic_a=float(ctx.attr("cubic_coeff_a", -0.75)),
            exclude_outside=bool(ctx.attr("exclude_outside", 0)),
            antialias=bool(ctx.attr("antialias", 0)),
            extrapolation=float(ctx.attr("extrapolation_value", 0.0)))


def _from_sizes(in_shape: list[int], axes: list[int], sizes: list[int], policy: str
                ) -> tuple[list[float], list[int]]:
    """(scales, output shape) of a sizes input: each axis stretched to its size, or (a
    keep_aspect_ratio_policy) all axes by their smallest / largest ratio, rounded half up.
    The ratios are float32 divisions, as onnxruntime computes them."""
    scale, out_shape = [1.0] * len(in_shape), list(in_shape)
    ratios = {a: float(np.float32(s) / np.float32(in_shape[a]))
              for a, s in zip(axes, sizes, strict=True)}
    if policy != "stretch":
        common = (min if policy == "not_larger" else max)(ratios.values())
        return ([common if a in ratios else 1.0 for a in range(len(in_shape))],
                [int(np.floor(np.float32(common) * np.float32(n) + np.float32(0.5)))
                 if a in ratios else n for a, n in enumerate(in_shape)])
    for a, s in zip(axes, sizes, strict=True):
        scale[a], out_shape[a] = ratios[a], s
    return scale, out_shape


def _from_scales(ctx: NodeContext, in_shape: list[int], axes: list[int],
                 scales: list[float]) -> tuple[list[float], list[int]]:
    """(scales, output shape) of a scales input: each size is floor(scale * size), the
    product in float32 as onnxruntime computes it (0.7 * 10 is 7, not 6.99999988)."""
    scale, out_shape = [1.0] * len(in_shape), list(in_shape)
    for a, s in zip(axes, scales, strict=True):
        if not s > 0:
            raise ctx.unsupported(f"scale {s} (scales must be positive)")
        scale[a], out_shape[a] = s, int(np.float32(s) * np.float32(in_shape[a]))
    return scale, out_shape


def _geometry(ctx: NodeContext, in_shape: list[int], axes: list[int],
              scales: list[float] | None, sizes: list[int] | None, policy: str
              ) -> tuple[list[float], list[int]]:
    """(per-axis scales, output shape) from exactly one of scales and sizes."""
    if (scales is None) == (sizes is None):
        raise ctx.unsupported("exactly one of scales and sizes must be given")
    given = sizes if sizes is not None else scales
    assert given is not None
    if len(given) != len(axes):
        raise ctx.unsupported(f"{len(given)} {'sizes' if sizes else 'scales'} for "
                              f"{len(axes)} axes")
    if sizes is not None:
        if any(s < 0 for s in sizes):
            raise ctx.unsupported(f"negative sizes {sizes}")
        return _from_sizes(in_shape, axes, sizes, policy)
    assert scales is not None
    return _from_scales(ctx, in_shape, axes, scales)


def _axis_rois(roi: list[float] | None, axes: list[int], rank: int
               ) -> list[tuple[float, float]]:
    """(start, end) of each axis' region of interest (0, 1 where the roi does not say)."""
    full = [(0.0, 1.0)] * rank
    if roi:
        for i, a in enumerate(axes):
            full[a] = (roi[i], roi[len(axes) + i])
    return full


# ── the device side ─────────────────────────────────────────────────────────

def _gather_axis(ctx: NodeContext, t: Tensor, axis: int, idx: np.ndarray) -> Tensor:
    """`t` at positions `idx` (any shape) along `axis`; idx's dims replace that axis."""
    picked = t.index_select(axis, ctx.t(idx.reshape(-1).astype(np.int64)))
    return picked.reshape(tuple(t.shape[:axis]) + idx.shape + tuple(t.shape[axis + 1:]))


def _along(arr: np.ndarray, axis: int, rank: int) -> np.ndarray:
    """A host array whose dims lie along `axis`, `axis + 1`, ... of a rank-`rank` tensor
    (ones elsewhere, so that it broadcasts)."""
    return arr.reshape((1,) * axis + arr.shape + (1,) * (rank - axis - arr.ndim))


def _filter_axis(ctx: NodeContext, work: Tensor, axis: int, src: np.ndarray, scale: float,
                 st: _Settings) -> Tensor:
    """Linear or cubic interpolation along `axis`: gather the taps (a new axis after
    `axis`), weight them and sum the taps axis away."""
    kernel, support = (_linear, 1) if st.mode == "linear" else (_cubic(st.cubic_a), 2)
    n_in = work.shape[axis]
    idx, w = _filter_taps(src, scale, n_in, kernel, support, st.antialias,
                          st.exclude_outside)
    taps = _gather_axis(ctx, work, axis, idx)  # rank + 1 dims: (..., n_out, taps, ...)
    weights = ctx.t(_along(w.astype(np.dtype(work.dtype.np)), axis, work.ndim + 1))
    return (taps * weights).sum(axis + 1)


def _resize_axis(ctx: NodeContext, work: Tensor, axis: int, n_out: int, scale: float,
                 roi: tuple[float, float], st: _Settings) -> Tensor:
    """`work` resized along one axis to `n_out` positions."""
    n_in = work.shape[axis]
    if n_out == 0 or n_in == 0:
        raise ctx.unsupported(f"resizing axis {axis} from {n_in} to {n_out} (empty)")
    f = np.float64 if work.dtype.name == "float64" else np.float32
    src, outside = _source_coords(st.coords, n_out, scale, n_in, roi, f)
    if st.mode == "nearest":
        work = _gather_axis(ctx, work, axis, _nearest_taps(src, scale, n_in, st.nearest))
    else:
        work = _filter_axis(ctx, work, axis, src, scale, st)
    if outside is not None and outside.any():
        fill = np.asarray(st.extrapolation, dtype=np.dtype(work.dtype.np))
        work = where(ctx.t(_along(outside, axis, work.ndim)), ctx.t(fill), work)
    return work


def _untouched(scale: float, n_in: int, n_out: int, roi: tuple[float, float],
               coords: str) -> bool:
    """Whether resizing an axis would give it back unchanged (skipped, as the reference)."""
    return bool(np.isclose(scale, 1.0) and n_out == n_in and (
        coords != "tf_crop_and_resize" or np.allclose(roi, (0.0, 1.0))))


def _resize(ctx: NodeContext, x: Tensor, scales: list[float] | None,
            sizes: list[int] | None, roi: list[float] | None, axes: list[int] | None,
            opset_defaults: bool) -> Tensor:
    """Resize `x`: one gather (and, for linear / cubic, a weighted sum) per resized axis.
    Linear and cubic compute in float32 (float64 input: float64), as onnxruntime."""
    rank = x.ndim
    axes = list(range(rank)) if axes is None else [a + rank if a < 0 else a for a in axes]
    if sorted(set(axes)) != sorted(axes) or any(not 0 <= a < rank for a in axes):
        raise ctx.unsupported(f"axes {axes} for a rank-{rank} input")
    st = _Settings.read(ctx, opset_defaults)
    scale, out_shape = _geometry(ctx, list(x.shape), axes, scales, sizes, st.policy)
    rois = _axis_rois(roi, axes, rank)
    dt = x.dtype
    if st.mode != "nearest" and not dt.is_float:
        raise ctx.unsupported(f"mode {st.mode!r} on {dt.name} input (float inputs only)")
    work = x if st.mode == "nearest" or dt.name == "float64" else x.cast("float32")
    for a in axes:
        if not _untouched(scale[a], x.shape[a], out_shape[a], rois[a], st.coords):
            work = _resize_axis(ctx, work, a, out_shape[a], scale[a], rois[a], st)
    return work if work.dtype == dt else work.cast(dt)


def _floats(ctx: NodeContext, v: Value | None) -> list[float] | None:
    if v is None:
        return None
    arr = ctx.host(v).reshape(-1)
    return None if arr.size == 0 else [float(s) for s in arr]


@op("Resize", attrs=("mode", "coordinate_transformation_mode", "cubic_coeff_a",
                     "exclude_outside", "extrapolation_value", "nearest_mode", "antialias",
                     "axes", "keep_aspect_ratio_policy"), min_opset=10, check=_check_resize)
def _resize_op(ctx: NodeContext, x: Value, *rest: Value | None) -> Tensor:
    """Opset 10: (X, scales) with the asymmetric, "simple" nearest rule of Upsample; from
    opset 11: (X, roi, scales, sizes), one of scales and sizes given."""
    if ctx.opset < 11:
        return _resize(ctx, ctx.t(x), _floats(ctx, rest[0]), None, None, None, True)
    roi, scales, sizes = (list(rest) + [None] * 3)[:3]
    size_list = None if sizes is None or ctx.host(sizes).size == 0 else ctx.ints(sizes)
    axes = ctx.attr("axes")
    return _resize(ctx, ctx.t(x), _floats(ctx, scales), size_list, _floats(ctx, roi),
                   None if axes is None else list(axes), False)


@op("Upsample", attrs=("mode", "scales"), min_opset=7, check=_check_resize)
def _upsample(ctx: NodeContext, x: Value, scales: Value | None = None) -> Tensor:
    """Resize with scales (an attribute up to opset 8, an input from 9), asymmetric."""
    given = ctx.attr("scales") if scales is None else ctx.host(scales)
    return _resize(ctx, ctx.t(x), [float(s) for s in np.asarray(given).reshape(-1)], None,
                   None, None, True)
