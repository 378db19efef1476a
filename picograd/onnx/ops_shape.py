"""Shape ops: Reshape, Flatten, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze, Expand,
Gather, GatherElements, Tile, Pad, Shape, Size, ConstantOfShape, Range.

Every one of them works on host values with numpy (they are how shape computations are
written in ONNX) and on Tensors with the Tensor API. Axes follow ONNX: negative axes count
from the end; inputs that moved from attributes to inputs in some opset are read from
wherever that opset puts them.
"""

from __future__ import annotations

import itertools

import numpy as np
from onnx import numpy_helper

from picograd.frontend.ops_shape import cat, pad
from picograd.frontend.tensor import Tensor
from picograd.onnx.registry import NodeContext, Value, is_host, op


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _concat(parts: list[Value], axis: int, ctx: NodeContext) -> Value:
    if is_host(*parts):
        return np.concatenate([np.asarray(p) for p in parts], axis=axis)
    return cat([ctx.t(p) for p in parts], dim=axis)


@op("Reshape", attrs=("allowzero", "shape"))
def _reshape(ctx: NodeContext, x: Value, shape: Value | None = None) -> Value:
    dims = ctx.ints(shape) if shape is not None else list(ctx.attr("shape"))
    if not ctx.attr("allowzero", 0):  # 0 copies the input's dim
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    if is_host(x):
        return np.asarray(x).reshape(dims)
    return ctx.t(x).reshape(dims)


@op("Flatten", attrs=("axis",))
def _flatten(ctx: NodeContext, x: Value) -> Value:
    axis = _axis(ctx.attr("axis", 1), len(x.shape))
    lead = int(np.prod(x.shape[:axis], dtype=np.int64))
    shape = (lead, int(np.prod(x.shape[axis:], dtype=np.int64)))
    return np.asarray(x).reshape(shape) if is_host(x) else ctx.t(x).reshape(shape)


@op("Transpose", attrs=("perm",))
def _transpose(ctx: NodeContext, x: Value) -> Value:
    perm = list(ctx.attr("perm", range(len(x.shape) - 1, -1, -1)))
    return np.transpose(x, perm) if is_host(x) else ctx.t(x).permute(perm)


@op("Concat", attrs=("axis",))
def _concat_op(ctx: NodeContext, *xs: Value) -> Value:
    parts = [x for x in xs if x is not None]
    return _concat(parts, _axis(ctx.attr("axis"), len(parts[0].shape)), ctx)


def _split_sizes(ctx: NodeContext, dim: int, split: Value | None) -> list[int]:
    if split is not None:
        return ctx.ints(split)
    if "split" in ctx.attrs:
        return list(ctx.attr("split"))
    n = ctx.attr("num_outputs", ctx.n_outputs)
    if ctx.opset >= 18 and "num_outputs" in ctx.attrs:  # uneven: the last piece smaller
        size = -(-dim // n)
        return [min(size, dim - i * size) for i in range(n)]
    if dim % n:
        raise ctx.unsupported(f"dim {dim} does not split evenly into {n} outputs")
    return [dim // n] * n


@op("Split", attrs=("axis", "split", "num_outputs"))
def _split(ctx: NodeContext, x: Value, split: Value | None = None) -> tuple[Value, ...]:
    axis = _axis(ctx.attr("axis", 0), len(x.shape))
    sizes = _split_sizes(ctx, x.shape[axis], split)
    bounds = np.cumsum([0, *sizes])
    out = []
    for lo, hi in itertools.pairwise(bounds):
        index = tuple([slice(None)] * axis + [slice(int(lo), int(hi))])
        out.append(np.asarray(x)[index] if is_host(x) else ctx.t(x)[index])
    return tuple(out)


def _slice_bounds(start: int, end: int, step: int, dim: int) -> slice:
    """ONNX Slice's clamping of one axis into a Python slice."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        return slice(start, max(end, start), step)
    start, end = min(max(start, -1), dim - 1), min(max(end, -1), dim - 1)
    if end >= start:
        return slice(0, 0, 1)
    return slice(start, None if end < 0 else end, step)


@op("Slice", attrs=("starts", "ends", "axes"))
def _slice(ctx: NodeContext, x: Value, starts: Value | None = None, ends: Value | None = None,
           axes: Value | None = None, steps: Value | None = None) -> Value:
    if ctx.opset < 10:
        s, e = list(ctx.attr("starts")), list(ctx.attr("ends"))
        ax = list(ctx.attr("axes", range(len(s))))
        st = [1] * len(s)
    else:
        s, e = ctx.ints(starts), ctx.ints(ends)  # type: ignore[arg-type]
        ax = ctx.ints(axes) if axes is not None else list(range(len(s)))
        st = ctx.ints(steps) if steps is not None else [1] * len(s)
    rank = len(x.shape)
    index: list[slice] = [slice(None)] * rank
    for a, lo, hi, step in zip(ax, s, e, st, strict=True):
        if step == 0:
            raise ctx.unsupported("a step of 0")
        a = _axis(a, rank)
        index[a] = _slice_bounds(lo, hi, step, x.shape[a])
    if is_host(x):
        return np.asarray(x)[tuple(index)]
    return ctx.t(x)[tuple(index)]


def _axes(ctx: NodeContext, axes: Value | None) -> list[int] | None:
    if axes is not None:
        return ctx.ints(axes)
    return list(ctx.attr("axes")) if "axes" in ctx.attrs else None


@op("Squeeze", attrs=("axes",))
def _squeeze(ctx: NodeContext, x: Value, axes: Value | None = None) -> Value:
    rank = len(x.shape)
    ax = _axes(ctx, axes)
    ax = [i for i in range(rank) if x.shape[i] == 1] if ax is None else [_axis(a, rank)
                                                                           for a in ax]
    shape = [d for i, d in enumerate(x.shape) if i not in ax]
    return np.asarray(x).reshape(shape) if is_host(x) else ctx.t(x).reshape(shape)


@op("Unsqueeze", attrs=("axes",))
def _unsqueeze(ctx: NodeContext, x: Value, axes: Value | None = None) -> Value:
    ax = _axes(ctx, axes) or []
    rank = len(x.shape) + len(ax)
    ax = sorted(_axis(a, rank) for a in ax)
    shape = list(x.shape)
    for a in ax:
        shape.insert(a, 1)
    return np.asarray(x).reshape(shape) if is_host(x) else ctx.t(x).reshape(shape)


@op("Expand")
def _expand(ctx: NodeContext, x: Value, shape: Value) -> Value:
    target = tuple(np.broadcast_shapes(tuple(x.shape), tuple(ctx.ints(shape))))
    if is_host(x):
        return np.broadcast_to(x, target).copy()
    return ctx.t(x).expand(target)


@op("Gather", attrs=("axis",))
def _gather(ctx: NodeContext, x: Value, indices: Value) -> Value:
    axis = _axis(ctx.attr("axis", 0), len(x.shape))
    dim = x.shape[axis]
    if is_host(x, indices):
        idx = np.asarray(indices).astype(np.int64)
        return np.take(x, np.where(idx < 0, idx + dim, idx), axis=axis)
    t = ctx.t(x)
    idx = ctx.t(indices).cast("int64")
    idx = (idx < 0).cast("int64") * dim + idx
    picked = t.index_select(axis, idx.reshape(-1))
    return picked.reshape(tuple(t.shape[:axis]) + tuple(idx.shape) + tuple(t.shape[axis + 1:]))


@op("GatherElements", attrs=("axis",))
def _gather_elements(ctx: NodeContext, x: Value, indices: Value) -> Tensor:
    axis = _axis(ctx.attr("axis", 0), len(x.shape))
    idx = ctx.t(indices).cast("int64")
    idx = (idx < 0).cast("int64") * x.shape[axis] + idx
    return ctx.t(x).gather(axis, idx)


@op("Tile")
def _tile(ctx: NodeContext, x: Value, repeats: Value) -> Value:
    reps = ctx.ints(repeats)
    return np.tile(x, reps) if is_host(x) else ctx.t(x).tile(reps)


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "replicate",
              "wrap": "circular"}


@op("Pad", attrs=("mode", "pads", "value"),
    check=lambda n, a, o: None if _mode(a) in _PAD_MODES else f"mode {_mode(a)!r}")
def _pad(ctx: NodeContext, x: Value, pads: Value | None = None, value: Value | None = None,
         axes: Value | None = None) -> Tensor:
    t = ctx.t(x)
    rank = t.ndim
    if ctx.opset < 11:
        widths, fill = list(ctx.attr("pads")), float(ctx.attr("value", 0.0))
    else:
        widths = ctx.ints(pads)  # type: ignore[arg-type]
        fill = ctx.host(value).item() if value is not None and value.size else 0
    ax = [_axis(a, rank) for a in ctx.ints(axes)] if axes is not None else list(range(rank))
    begin, end = [0] * rank, [0] * rank
    for i, a in enumerate(ax):
        begin[a], end[a] = widths[i], widths[i + len(ax)]
    # negative widths crop first, then the positive ones pad in the chosen mode
    crop = tuple(slice(max(-b, 0), t.shape[a] - max(-e, 0))
                 for a, (b, e) in enumerate(zip(begin, end, strict=True)))
    t = t[crop]
    sizes: list[int] = []
    for a in reversed(range(rank)):
        sizes += [max(begin[a], 0), max(end[a], 0)]
    if not any(sizes):
        return t
    mode = _PAD_MODES[_mode(ctx.attrs)]
    return pad(t, sizes, mode, fill if mode == "constant" else None)


def _mode(attrs: dict) -> str:
    mode = attrs.get("mode", "constant")
    return mode.decode() if isinstance(mode, bytes) else mode


@op("Shape", attrs=("start", "end"))
def _shape(ctx: NodeContext, x: Value) -> np.ndarray:
    dims = tuple(x.shape)
    start, end = ctx.attr("start", 0), ctx.attr("end", len(dims))
    return np.array(dims[slice(start, end)], dtype=np.int64)


@op("Size")
def _size(ctx: NodeContext, x: Value) -> np.ndarray:
    return np.array(int(np.prod(x.shape, dtype=np.int64)), dtype=np.int64)


@op("ConstantOfShape", attrs=("value",))
def _constant_of_shape(ctx: NodeContext, shape: Value) -> Value:
    proto = ctx.attr("value")
    fill = numpy_helper.to_array(proto).reshape(-1) if proto is not None else np.zeros(1,
                                                                                       np.float32)
    out = np.full(ctx.ints(shape), fill[0], dtype=fill.dtype)
    return out if out.size <= 4096 else ctx.t(out)


@op("Range")
def _range(ctx: NodeContext, start: Value, limit: Value, delta: Value) -> np.ndarray:
    s, lim, d = (ctx.host(v) for v in (start, limit, delta))
    n = max(int(np.ceil((lim.item() - s.item()) / d.item())), 0)
    return (s + np.arange(n, dtype=s.dtype) * d).astype(s.dtype)
