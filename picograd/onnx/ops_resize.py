"""Resize (opset 10-19) and Upsample (opset 7-9).

Resize is separable: each resized axis is one gather of the input along that axis followed
by a weighted sum over the gathered taps. Which input positions an output position reads,
and with what weights, depends only on the shapes, the scales and the attributes, so they
are computed here in numpy on the host (following the ONNX reference's vectorized
`_interpolate_1d_along_axis`) and the device sees an `index_select` and a multiply-sum per
axis. Nearest mode needs no weights: one tap, a pure gather (exact for every dtype).
"""

from __future__ import annotations

from collections.abc import Callable
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
    mode = _text(attrs.get("mode", "nearest"))
    if mode not in ("nearest", "linear", "cubic") or (node.op_type == "Upsample"
                                                      and mode == "cubic"):
        return f"mode {mode!r}"
    if _text(attrs.get("coordinate_transformation_mode", "half_pixel")) not in _COORDINATE_MODES:
        return f"coordinate_transformation_mode {attrs['coordinate_transformation_mode']!r}"
    if _text(attrs.get("nearest_mode", "round_prefer_floor")) not in _NEAREST_MODES:
        return f"nearest_mode {attrs['nearest_mode']!r}"
    if _text(attrs.get("keep_aspect_ratio_policy", "stretch")) not in _POLICIES:
        return f"keep_aspect_ratio_policy {attrs['keep_aspect_ratio_policy']!r}"
    if attrs.get("antialias", 0) and mode == "nearest":
        return "antialias with mode 'nearest'"
    return None


# ── taps and weights, on the host ───────────────────────────────────────────

def _source_coords(mode: str, y: np.ndarray, scale: float, n_in: int, n_out: int,
                   roi: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Each output position's coordinate in the input, and (tf_crop_and_resize only) which
    output positions fall outside the input and take the extrapolation value."""
    width = scale * n_in  # the unrounded output width
    outside = None
    if mode == "align_corners":
        x = np.zeros(n_out) if width == 1 else y * (n_in - 1) / (width - 1)
    elif mode == "asymmetric":
        x = y / scale
    elif mode == "tf_crop_and_resize":
        lo, hi = roi if roi is not None else (0.0, 1.0)
        x = (np.full(n_out, (hi - lo) * (n_in - 1) / 2) if width == 1
             else y * (hi - lo) * (n_in - 1) / (width - 1))
        x = x + lo * (n_in - 1)
        outside = (x < 0) | (x > n_in - 1)
    elif mode == "pytorch_half_pixel":
        x = np.full(n_out, -0.5) if width == 1 else (y + 0.5) / scale - 0.5
    elif mode == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    else:  # half_pixel_symmetric: the rounding of the output size is shared by both ends
        offset = n_in / 2 * (1 - n_out / width)
        x = offset + (y + 0.5) / scale - 0.5
    return x, outside


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


# ── the device side ─────────────────────────────────────────────────────────

def _gather_axis(ctx: NodeContext, t: Tensor, axis: int, idx: np.ndarray) -> Tensor:
    """`t` at positions `idx` (any shape) along `axis`; idx's dims replace that axis."""
    picked = t.index_select(axis, ctx.t(idx.reshape(-1).astype(np.int64)))
    return picked.reshape(tuple(t.shape[:axis]) + idx.shape + tuple(t.shape[axis + 1:]))


def _along(arr: np.ndarray, axis: int, rank: int) -> np.ndarray:
    """A host array whose leading dims lie along `axis` of a rank-`rank` tensor."""
    return arr.reshape((1,) * axis + arr.shape + (1,) * (rank - axis - 1))


def _resize(ctx: NodeContext, x: Tensor, scales: list[float] | None,
            sizes: list[int] | None, roi: list[float] | None, axes: list[int] | None,
            opset_defaults: bool) -> Tensor:
    rank = x.ndim
    axes = list(range(rank)) if axes is None else [a + rank if a < 0 else a for a in axes]
    mode = _text(ctx.attr("mode", "nearest"))
    coords = ("asymmetric" if opset_defaults
              else _text(ctx.attr("coordinate_transformation_mode", "half_pixel")))
    nearest = _SIMPLE if opset_defaults else _text(ctx.attr("nearest_mode",
                                                            "round_prefer_floor"))
    policy = _text(ctx.attr("keep_aspect_ratio_policy", "stretch"))
    in_shape = list(x.shape)
    scale = [1.0] * rank
    out_shape = list(in_shape)
    if sizes is not None:
        if len(sizes) != len(axes):
            raise ctx.unsupported(f"{len(sizes)} sizes for {len(axes)} axes")
        for a, s in zip(axes, sizes, strict=True):
            scale[a], out_shape[a] = s / in_shape[a], s
        if policy != "stretch":
            pick = min if policy == "not_larger" else max
            common = pick(scale[a] for a in axes)
            for a in axes:
                scale[a], out_shape[a] = common, int(common * in_shape[a] + 0.5)
    elif scales is not None:
        if len(scales) != len(axes):
            raise ctx.unsupported(f"{len(scales)} scales for {len(axes)} axes")
        for a, s in zip(axes, scales, strict=True):
            if s <= 0:
                raise ctx.unsupported(f"scale {s} (scales must be positive)")
            scale[a], out_shape[a] = s, int(s * in_shape[a])
    else:
        raise ctx.unsupported("neither scales nor sizes is given")
    full_roi: list[float] = [0.0] * rank + [1.0] * rank
    if roi is not None and len(roi) > 0:
        for i, a in enumerate(axes):
            full_roi[a], full_roi[rank + a] = roi[i], roi[len(axes) + i]
    dt = x.dtype
    integer = not dt.is_float
    if mode != "nearest" and (integer or dt.is_bool):
        raise ctx.unsupported(f"mode {mode!r} on {dt.name} input (float inputs only)")
    work = x if mode == "nearest" or dt.name == "float64" else x.cast("float32")
    wdt = np.float64 if dt.name == "float64" else np.float32
    extrapolation = float(ctx.attr("extrapolation_value", 0.0))
    for a in axes:
        n_in, n_out = in_shape[a], out_shape[a]
        axis_roi = (full_roi[a], full_roi[rank + a])
        untouched = np.isclose(scale[a], 1.0) and n_out == n_in and (
            coords != "tf_crop_and_resize" or np.allclose(axis_roi, (0.0, 1.0)))
        if untouched:
            continue
        if n_out == 0 or n_in == 0:
            raise ctx.unsupported(f"resizing axis {a} from {n_in} to {n_out} (empty)")
        y = np.arange(n_out, dtype=np.float64)
        src, outside = _source_coords(coords, y, scale[a], n_in, n_out, axis_roi)
        if mode == "nearest":
            work = _gather_axis(ctx, work, a, _nearest_taps(src, scale[a], n_in, nearest))
        else:
            kernel, support = ((_linear, 1) if mode == "linear"
                               else (_cubic(float(ctx.attr("cubic_coeff_a", -0.75))), 2))
            idx, w = _filter_taps(src, scale[a], n_in, kernel, support,
                                  bool(ctx.attr("antialias", 0)),
                                  bool(ctx.attr("exclude_outside", 0)))
            taps = _gather_axis(ctx, work, a, idx)
            work = (taps * ctx.t(_along(w.astype(wdt), a, rank + 1))).sum(a + 1)
        if outside is not None and outside.any():
            fill = np.asarray(extrapolation, dtype=np.dtype(work.dtype.np))
            work = where(ctx.t(_along(outside, a, rank)), ctx.t(fill), work)
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
