"""Image ONNX ops: GridSample, AffineGrid, Col2Im, CenterCropPad, NonMaxSuppression.

GridSample is a sum over its interpolation taps (1, 2 or 4 per spatial dim): each tap's
integer position is made valid by the padding mode, gathered from the flattened image and
weighted. The coordinate rules (denormalization, reflection, half-to-even rounding for
nearest, Keys' cubic with a = -0.75) are ONNX's reference's (torch's grid_sample).
NonMaxSuppression's output size depends on the scores, so it syncs: boxes and scores are
read back and the greedy selection runs on the host, as NonZero does (ops_scatter.py).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import onnx

from picograd.frontend import where
from picograd.frontend.tensor import Tensor
from picograd.onnx.registry import NodeContext, Value, op


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# ── GridSample ─────────────────────────────────────────────────────────────

# opset 16's names -> opset 20's
_MODES = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic",
          "nearest": "nearest"}
_PADDINGS = ("zeros", "border", "reflection")
_CUBIC_A = -0.75


def _check_grid_sample(node: onnx.NodeProto, attrs: dict[str, Any], opset: int
                       ) -> str | None:
    mode = _text(attrs.get("mode", "bilinear" if opset < 20 else "linear"))
    if mode not in _MODES:
        return f"mode {mode!r}"
    padding = _text(attrs.get("padding_mode", "zeros"))
    if padding not in _PADDINGS:
        return f"padding_mode {padding!r}"
    if _MODES[mode] == "cubic" and padding == "border":
        # the reference clamps the position, then each tap; onnxruntime (torch) clamps only
        # the taps: the two differ near the border
        return "cubic mode with border padding (onnxruntime and the ONNX reference differ)"
    return None


def _denormalize(n: Tensor, size: int, align: bool) -> Tensor:
    """A [-1, 1] coordinate as a pixel position: -1 and 1 are the corner pixels' centers
    (align_corners) or their outer edges."""
    if align:
        return (n + 1) / 2 * (size - 1)
    return ((n + 1) * size - 1) / 2


def _reflect(x: Tensor, lo: float, hi: float) -> Tensor:
    """x reflected by the near border until it lies in [lo, hi] (the reference's loop in
    closed form: n whole spans, then the remainder from the border the parity gives)."""
    span = hi - lo
    if span <= 0:
        return x * 0 + lo
    below, above = x < lo, x > hi
    dx = where(below, lo - x, where(above, x - hi, x * 0))
    n = (dx / span).trunc()
    r = dx - n * span
    even = (n.remainder(2) == 0)
    from_below = where(even, lo + r, hi - r)
    from_above = where(even, hi - r, lo + r)
    return where(below, from_below, where(above, from_above, x))


def _bounds(size: int, align: bool) -> tuple[float, float]:
    return (0.0, size - 1.0) if align else (-0.5, size - 0.5)


def _position(n: Tensor, size: int, align: bool, mode: str, padding: str) -> Tensor:
    """The sampled position along one axis, out-of-range ones moved by the padding mode
    (border: clamped into the image; reflection: reflected into the bounds)."""
    x = _denormalize(n, size, align)
    if mode == "nearest":
        x = x.round()  # half to even, as the reference (torch's) nearest
    lo, hi = _bounds(size, align)
    if padding == "border":
        # only positions outside the bounds move (for align_corners=0, [-0.5, 0) stays)
        x = where((x < lo) | (x > hi), x.clamp(0, size - 1), x)
    elif padding == "reflection":
        x = _reflect(x, lo, hi)
    else:
        # far outside, every tap is padding: clamped so the index casts stay in range
        x = x.clamp(-8.0, size + 8.0)
    return x


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """Keys' cubic convolution weights of the taps at -1, 0, 1, 2 for a fraction t."""
    a = _CUBIC_A

    def far(d: Tensor) -> Tensor:  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    def near(d: Tensor) -> Tensor:  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(x: Tensor, mode: str) -> list[tuple[Tensor, Tensor | None]]:
    """(integer position as a float tensor, weight) of each tap along one axis; nearest's
    single tap has no weight."""
    if mode == "nearest":
        return [(x, None)]
    x0 = x.floor()
    t = x - x0
    if mode == "linear":
        return [(x0, 1 - t), (x0 + 1, t)]
    return [(x0 + k, w) for k, w in zip((-1, 0, 1, 2), _cubic_weights(t), strict=True)]


def _pixel(i: Tensor, size: int, align: bool, padding: str) -> tuple[Tensor, Tensor | None]:
    """A tap's index into the axis (int64) and, for zeros padding, whether it is inside."""
    if padding == "reflection":
        lo, hi = _bounds(size, align)
        i = _reflect(i, lo, hi).trunc()
    inside = ((i >= 0) & (i <= size - 1)) if padding == "zeros" else None
    return i.clamp(0, size - 1).cast("int64"), inside


def _grid_sample_nd(x: Tensor, grid: Tensor, mode: str, padding: str, align: bool
                    ) -> Tensor:
    n, c, *dims = x.shape
    out = tuple(grid.shape[1:-1])
    p = int(np.prod(out, dtype=np.int64))
    k = len(dims)
    acc_dtype = "float64" if x.dtype.name == "float64" else "float32"
    # positions and weights in float32, as the reference computes them (float64 X still
    # sums in float64)
    coords = grid.cast("float32").reshape(n, 1, p, k)
    strides = [int(np.prod(dims[j + 1:], dtype=np.int64)) for j in range(k)]
    # a NaN or infinite coordinate has no pixel (onnxruntime reads an arbitrary one): it
    # samples as a finite 0 would, and its output is NaN
    finite = coords.isfinite()
    poison = where(finite, 0.0, float("nan")).cast(acc_dtype).sum(-1)  # (n, 1, p)
    coords = where(finite, coords, 0.0).cast("float32")
    per_axis = []
    for j, size in enumerate(dims):
        # the grid's last dim lists the coordinates innermost axis first (x, y, z)
        pos = _position(coords[:, :, :, k - 1 - j], size, align, mode, padding)
        per_axis.append([(*_pixel(i, size, align, padding), w) for i, w in _taps(pos, mode)])
    flat = x.cast(acc_dtype).reshape(n, c, -1)
    total: Tensor | None = None
    for combo in itertools.product(*per_axis):
        index: Tensor | None = None
        weight: Tensor | None = None
        for (idx, inside, w), stride in zip(combo, strides, strict=True):
            index = idx * stride if index is None else index + idx * stride
            for factor in (w, inside):
                if factor is not None:
                    factor = factor.cast(acc_dtype)
                    weight = factor if weight is None else weight * factor
        assert index is not None
        value = flat.gather(2, index.expand(n, c, p))
        term = value if weight is None else value * weight
        total = term if total is None else total + term
    assert total is not None
    return (total + poison).reshape(n, c, *out).cast(x.dtype)


@op("GridSample", attrs=("mode", "padding_mode", "align_corners"), min_opset=16,
    check=_check_grid_sample)
def _grid_sample(ctx: NodeContext, x: Value, grid: Value) -> Tensor:
    """X (N, C, *spatial) sampled at grid (N, *out, rank) of [-1, 1] coordinates."""
    t, g = ctx.t(x), ctx.t(grid)
    mode = _MODES[_text(ctx.attr("mode", "bilinear" if ctx.opset < 20 else "linear"))]
    if t.ndim < 3 or g.ndim != t.ndim or g.shape[-1] != t.ndim - 2:
        raise ctx.unsupported(f"X of shape {tuple(t.shape)} with grid {tuple(g.shape)}")
    if int(np.prod(t.shape)) == 0 or int(np.prod(g.shape)) == 0:
        raise ctx.unsupported("GridSample of an empty X or grid")
    if not (t.dtype.is_float and g.dtype.is_float):
        raise ctx.unsupported(f"GridSample of {t.dtype.name} X with a {g.dtype.name} grid "
                              "(float only)")
    return _grid_sample_nd(t, g, mode, _text(ctx.attr("padding_mode", "zeros")),
                           bool(ctx.attr("align_corners", 0)))


# ── NonMaxSuppression ──────────────────────────────────────────────────────

def _corners(boxes: np.ndarray, center: bool) -> tuple[np.ndarray, ...]:
    """(x_min, x_max, y_min, y_max) of (n, 4) boxes: [y1, x1, y2, x2] with the corners in
    either order, or with center_point_box [x_center, y_center, width, height]."""
    if center:
        xc, yc, w, h = (boxes[:, i] for i in range(4))
        return xc - w / 2, xc + w / 2, yc - h / 2, yc + h / 2
    y1, x1, y2, x2 = (boxes[:, i] for i in range(4))
    return (np.minimum(x1, x2), np.maximum(x1, x2), np.minimum(y1, y2), np.maximum(y1, y2))


def _suppresses(boxes: np.ndarray, center: bool, iou_threshold: Any) -> np.ndarray:
    """(n, n) bool: box j suppresses box i (IoU above the threshold), in the boxes' dtype as
    the reference computes it; boxes that do not overlap or have no area never do."""
    x0, x1, y0, y1 = _corners(boxes, center)
    ix = np.minimum(x1[:, None], x1[None]) - np.maximum(x0[:, None], x0[None])
    iy = np.minimum(y1[:, None], y1[None]) - np.maximum(y0[:, None], y0[None])
    inter = ix * iy
    area = (x1 - x0) * (y1 - y0)
    union = area[:, None] + area[None] - inter
    overlap = (ix > 0) & (iy > 0) & (inter > 0)
    valid = (area[:, None] > 0) & (area[None] > 0) & (union > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / np.where(union > 0, union, 1)
    return overlap & valid & (iou > iou_threshold)


def _select(scores: np.ndarray, suppress: np.ndarray, limit: int,
            score_threshold: np.generic | None) -> list[int]:
    """Greedy selection of one class: highest score first (ties: lower index first),
    skipping a box an already selected one suppresses, at most `limit` boxes."""
    order = np.lexsort((np.arange(scores.size), -scores))
    chosen: list[int] = []
    for i in order:
        if len(chosen) >= limit:
            break
        if score_threshold is not None and not scores[i] > score_threshold:
            continue
        if not any(suppress[i, j] for j in chosen):
            chosen.append(int(i))
    return chosen


def _scalar(ctx: NodeContext, v: Value | None, dtype: np.dtype) -> np.generic | None:
    if v is None:
        return None
    values = ctx.host(v).reshape(-1)
    return None if values.size == 0 else dtype.type(values[0])


@op("NonMaxSuppression", attrs=("center_point_box",), min_opset=10)
def _nms(ctx: NodeContext, boxes: Value, scores: Value, max_output: Value | None = None,
         iou_threshold: Value | None = None, score_threshold: Value | None = None
         ) -> np.ndarray:
    """The (batch, class, box) triples kept, (k, 3) int64, batch- then class-major. Syncs:
    boxes and scores are read on the host (the output's size depends on them)."""
    b, s = ctx.host(boxes), ctx.host(scores)
    if np.isnan(b).any() or np.isnan(s).any():
        raise ctx.unsupported("NonMaxSuppression of NaN boxes or scores (no order)")
    limit = _scalar(ctx, max_output, np.dtype(np.int64))
    iou = _scalar(ctx, iou_threshold, b.dtype)
    floor = _scalar(ctx, score_threshold, s.dtype)
    center = bool(ctx.attr("center_point_box", 0))
    rows = []
    for batch in range(b.shape[0]):
        suppress = _suppresses(b[batch], center, b.dtype.type(0) if iou is None else iou)
        for cls in range(s.shape[1]):
            kept = _select(s[batch, cls], suppress, max(int(limit or 0), 0), floor)
            rows.extend((batch, cls, i) for i in kept)
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


# ── Col2Im ─────────────────────────────────────────────────────────────────

def _block_positions(padded: list[int], block: list[int], dilations: list[int],
                     strides: list[int]) -> tuple[np.ndarray, int]:
    """The flat padded-image position of every (kernel offset, block) pair, (K * L,) in
    the input's (K, L) order, and L, the number of blocks."""
    counts = [(p - (d * (k - 1) + 1)) // s + 1
              for p, k, d, s in zip(padded, block, dilations, strides, strict=True)]
    if any(c < 1 for c in counts):
        raise ValueError(f"no sliding blocks fit (block grid {counts})")
    flat = np.zeros((1, 1), dtype=np.int64)
    for size, k, d, s, c in zip(padded, block, dilations, strides, counts, strict=True):
        # along this axis: offset o of the kernel and block b sit at b * s + o * d
        pos = np.arange(k)[:, None] * d + np.arange(c)[None] * s  # (k, c)
        flat = (flat[:, None, :, None] * size + pos[None, :, None, :]).reshape(
            flat.shape[0] * k, flat.shape[1] * c)
    return flat.reshape(-1), int(np.prod(counts, dtype=np.int64))


@op("Col2Im", attrs=("dilations", "pads", "strides"), min_opset=18)
def _col2im(ctx: NodeContext, x: Value, image_shape: Value, block_shape: Value) -> Tensor:
    """(N, C * prod(block), L) columns summed back into (N, C, *image_shape): each column
    added at its block's place in the padded image, whose padding is then cut away."""
    t = ctx.t(x)
    image, block = ctx.ints(image_shape), ctx.ints(block_shape)
    rank = len(image)
    dilations = list(ctx.attr("dilations", [1] * rank))
    strides = list(ctx.attr("strides", [1] * rank))
    pads = list(ctx.attr("pads", [0] * (2 * rank)))
    if (min(pads, default=0) < 0 or min(strides + dilations, default=1) < 1
            or min(block + image, default=1) < 1
            or len(pads) != 2 * rank or len(strides) != rank or len(dilations) != rank
            or len(block) != rank):
        raise ctx.unsupported(f"image {image}, block {block}, pads {pads}, strides "
                              f"{strides}, dilations {dilations}")
    padded = [s + pads[i] + pads[i + rank] for i, s in enumerate(image)]
    try:
        positions, blocks = _block_positions(padded, block, dilations, strides)
    except ValueError as e:
        raise ctx.unsupported(str(e)) from e
    k = int(np.prod(block, dtype=np.int64))
    n, ck, length = t.shape
    if ck % k or length != blocks:
        raise ctx.unsupported(f"input of shape {tuple(t.shape)} does not hold blocks "
                              f"{block} over {blocks} places")
    c = ck // k
    src = t.reshape(n, c, k * length)
    index = ctx.t(positions).reshape(1, 1, -1).expand(n, c, k * length)
    zeros = ctx.t(np.zeros((n, c, int(np.prod(padded, dtype=np.int64))), t.dtype.np))
    out = zeros.scatter_add(2, index, src).reshape(n, c, *padded)
    crop = tuple(slice(pads[i], pads[i] + s) for i, s in enumerate(image))
    return out[(slice(None), slice(None), *crop)]


# ── CenterCropPad ──────────────────────────────────────────────────────────

@op("CenterCropPad", attrs=("axes",), min_opset=18)
def _center_crop_pad(ctx: NodeContext, x: Value, shape: Value) -> Tensor:
    """x cropped or zero-padded to `shape` along `axes` (default all), centered: an odd
    difference puts the extra element at the end (cropped from it, padded after)."""
    t = ctx.t(x)
    sizes = ctx.ints(shape)
    axes = [a + t.ndim if a < 0 else a for a in ctx.attr("axes", range(t.ndim))]
    if len(axes) != len(sizes) or sorted(set(axes)) != sorted(axes) or not all(
            0 <= a < t.ndim for a in axes):
        raise ctx.unsupported(f"shape {sizes} for axes {axes} of a rank-{t.ndim} input")
    crop = [slice(None)] * t.ndim
    pads = [(0, 0)] * t.ndim
    for a, want in zip(axes, sizes, strict=True):
        have = int(t.shape[a])
        if want < 0:
            raise ctx.unsupported(f"negative size {want}")
        if want < have:
            start = (have - want) // 2
            crop[a] = slice(start, start + want)
        elif want > have:
            before = (want - have) // 2
            pads[a] = (before, want - have - before)
    out = t[tuple(crop)]
    return out.pad(pads, 0) if any(p != (0, 0) for p in pads) else out


# ── AffineGrid ─────────────────────────────────────────────────────────────

def _base_grid(sizes: list[int], align: bool) -> np.ndarray:
    """The identity grid, (prod(sizes), rank + 1): each pixel's [x, (y, (z,)) 1], the
    coordinates innermost axis first, pixel centers (or corners with align_corners) in
    [-1, 1]."""
    axes = []
    for size in sizes:
        i = np.arange(size, dtype=np.float64)
        axes.append(2 * i / (size - 1) - 1 if align else (2 * i + 1) / size - 1)
    mesh = np.meshgrid(*axes, indexing="ij")
    coords = [m.reshape(-1) for m in reversed(mesh)]
    return np.stack([*coords, np.ones_like(coords[0])], axis=-1)


@op("AffineGrid", attrs=("align_corners",), min_opset=20)
def _affine_grid(ctx: NodeContext, theta: Value, size: Value) -> Tensor:
    """The sampling grid (N, *spatial, rank) of the affine maps theta (N, rank, rank + 1)
    for an output of size (N, C, *spatial), as GridSample takes it."""
    t = ctx.t(theta)
    n, _, *spatial = ctx.ints(size)
    rank = len(spatial)
    align = bool(ctx.attr("align_corners", 0))
    if rank not in (2, 3) or tuple(t.shape) != (n, rank, rank + 1):
        raise ctx.unsupported(f"theta of shape {tuple(t.shape)} for size {[n, *spatial]}")
    if align and 1 in spatial:
        # a one-pixel axis has no corners to align: onnxruntime and the reference differ
        raise ctx.unsupported("align_corners=1 with a spatial size of 1")
    base = ctx.t(_base_grid(spatial, align).astype(t.dtype.np))  # (P, rank + 1)
    grid = base.reshape(1, -1, rank + 1) @ t.transpose(1, 2)  # (N, P, rank)
    return grid.reshape(n, *spatial, rank)


# ── RoiAlign ───────────────────────────────────────────────────────────────

def _check_roi_align(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    mode = _text(attrs.get("mode", "avg"))
    if mode not in ("avg", "max"):
        return f"mode {mode!r}"
    transform = _text(attrs.get("coordinate_transformation_mode", "half_pixel"))
    if transform not in ("half_pixel", "output_half_pixel"):
        return f"coordinate_transformation_mode {transform!r}"
    return None


def _axis_samples(start: np.floating, length: np.floating, bins: int, grid: int, size: int
                  ) -> tuple[np.ndarray, ...]:
    """Along one axis, for each (bin, sample): the low and high pixel, the high pixel's
    weight and whether the sample is inside [-1, size], as the reference's pre_calc."""
    dt = np.asarray(start).dtype
    b = np.arange(bins, dtype=dt)[:, None]
    s = np.arange(grid, dtype=dt)[None]
    pos = start + b * (length / bins) + (s + 0.5) * (length / bins) / grid  # (bins, grid)
    inside = (pos >= -1.0) & (pos <= size)
    pos = np.maximum(pos, 0)
    low = pos.astype(np.int64)
    last = low >= size - 1
    low = np.where(last, size - 1, low)
    high = np.where(last, size - 1, low + 1)
    frac = np.where(last, 0.0, pos - low)
    return low, high, frac, inside


def _roi_samples(roi: np.ndarray, shape: tuple[int, int], out: tuple[int, int],
                 ratio: int, scale: float, half_pixel: bool
                 ) -> tuple[np.ndarray, np.ndarray, int]:
    """One ROI's bilinear samples: flat positions and weights, (PH, PW, gh * gw, 4) each
    (the four corners), and the sample count of a bin. Computed in the ROIs' dtype, as the
    reference does: a sample on the -1 edge is inside or not by float32's rounding."""
    one = roi.dtype.type(1)
    offset = one / 2 if half_pixel else one * 0
    x0, y0, x1, y1 = (v * roi.dtype.type(scale) - offset for v in roi)
    width, height = x1 - x0, y1 - y0
    if not half_pixel:
        width, height = max(width, one), max(height, one)
    gh = ratio if ratio > 0 else int(np.ceil(height / out[0]))
    gw = ratio if ratio > 0 else int(np.ceil(width / out[1]))
    yl, yh, ly, yin = _axis_samples(y0, height, out[0], gh, shape[0])
    xl, xh, lx, xin = _axis_samples(x0, width, out[1], gw, shape[1])

    def outer(a: np.ndarray, b: np.ndarray, fn: Any = np.multiply) -> np.ndarray:
        # (PH, gh) with (PW, gw) -> (PH, PW, gh * gw), the samples in the reference's order
        return fn(a[:, None, :, None], b[None, :, None, :]).reshape(out[0], out[1], -1)
    w = shape[1]
    pos = np.stack([outer(yl * w, xl, np.add), outer(yl * w, xh, np.add),
                    outer(yh * w, xl, np.add), outer(yh * w, xh, np.add)], axis=-1)
    inside = outer(yin, xin)
    weights = np.stack([outer(1 - ly, 1 - lx), outer(1 - ly, lx), outer(ly, 1 - lx),
                        outer(ly, lx)], axis=-1) * inside[..., None]
    return np.where(inside[..., None], pos, 0), weights, max(gh * gw, 1)


def _padded(arrays: list[np.ndarray], width: int) -> np.ndarray:
    """(R, PH, PW, width, 4): each ROI's samples padded with zeros to `width` samples."""
    return np.stack([np.pad(a, ((0, 0), (0, 0), (0, width - a.shape[2]), (0, 0)))
                     for a in arrays])


@op("RoiAlign", attrs=("coordinate_transformation_mode", "mode", "output_height",
                       "output_width", "sampling_ratio", "spatial_scale"),
    min_opset=10, check=_check_roi_align)
def _roi_align(ctx: NodeContext, x: Value, rois: Value, batch_indices: Value) -> Tensor:
    """(R, C, PH, PW): each ROI's bins averaged (or maxed) over bilinear samples of X.
    Syncs: the ROIs are read on the host (a bin's sample count depends on its size)."""
    t = ctx.t(x)
    n, c, h, w = t.shape
    boxes = ctx.host(rois)
    if not np.isfinite(boxes).all():
        raise ctx.unsupported("RoiAlign of NaN or infinite ROIs")
    if boxes.dtype.kind != "f" or boxes.dtype.itemsize < 4:
        boxes = boxes.astype(np.float32)
    index = ctx.host(batch_indices).astype(np.int64).reshape(-1)
    if index.size and (index.min() < 0 or index.max() >= n):
        raise ctx.unsupported(f"batch indices {index.tolist()} outside [0, {n})")
    out = (int(ctx.attr("output_height", 1)), int(ctx.attr("output_width", 1)))
    default = "half_pixel" if ctx.opset >= 16 else "output_half_pixel"
    half = _text(ctx.attr("coordinate_transformation_mode", default)) == "half_pixel"
    samples = [_roi_samples(r, (h, w), out, int(ctx.attr("sampling_ratio", 0)),
                            float(ctx.attr("spatial_scale", 1.0)), half) for r in boxes]
    if not samples:
        raise ctx.unsupported("RoiAlign of no ROIs")
    # at least one sample (zeros, weight 0): an empty ROI's bins are 0, as the reference's
    width = max(max(s[0].shape[2] for s in samples), 1)
    pos = _padded([s[0] for s in samples], width)
    weights = _padded([s[1] for s in samples], width).astype(t.dtype.np)
    r = len(samples)
    flat = t.reshape(n, c, h * w).index_select(0, ctx.t(index))  # (R, C, H*W)
    gathered = flat.gather(2, ctx.t(pos.reshape(r, 1, -1)).expand(r, c, pos[0].size))
    values = gathered.reshape(r, c, *pos.shape[1:]) * ctx.t(weights).unsqueeze(1)
    if _text(ctx.attr("mode", "avg")) == "avg":
        counts = np.array([s[2] for s in samples], dtype=t.dtype.np).reshape(r, 1, 1, 1)
        return values.sum((-2, -1)) / ctx.t(counts)
    # the padding samples are not candidates; an ROI with no samples at all gives 0
    real = np.stack([np.arange(width) < max(s[0].shape[2], 1) for s in samples])
    corner_max = values.max(-1)  # (R, C, PH, PW, width)
    mask = ctx.t(real.reshape(r, 1, 1, 1, width))
    return where(mask, corner_max, float("-inf")).cast(t.dtype).max(-1)
