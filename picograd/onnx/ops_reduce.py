"""Reductions: ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceL1/L2,
ReduceSumSquare, ReduceLogSumExp, ArgMax, ArgMin.

`axes` is an attribute before opset 13 (ReduceSum) / 18 (the others) and an input after;
with the input form an empty `axes` reduces everything unless `noop_with_empty_axes`. ONNX
reductions keep the input dtype (an integer mean truncates), so results are cast back.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from picograd.frontend import where
from picograd.frontend.tensor import Tensor
from picograd.onnx.registry import NodeContext, Value, is_host, op

_AXES_INPUT_FROM = {"ReduceSum": 13}  # the others: 18

_REDUCE: dict[str, Callable[[Tensor, tuple[int, ...], bool], Tensor]] = {
    "ReduceSum": lambda t, d, k: t.sum(d, keepdim=k),
    "ReduceMean": lambda t, d, k: t.cast("float64").mean(d, keepdim=k).cast(t.dtype)
    if t.dtype.is_float is False else t.mean(d, keepdim=k),
    "ReduceMax": lambda t, d, k: t.amax(d, keepdim=k),
    "ReduceMin": lambda t, d, k: t.amin(d, keepdim=k),
    "ReduceProd": lambda t, d, k: t.prod(d, keepdim=k),
    "ReduceL1": lambda t, d, k: t.abs().sum(d, keepdim=k),
    "ReduceL2": lambda t, d, k: (t * t).sum(d, keepdim=k).sqrt(),
    "ReduceSumSquare": lambda t, d, k: (t * t).sum(d, keepdim=k),
    "ReduceLogSumExp": lambda t, d, k: _log_sum_exp(t, d, k),
}
# what a reduction over no elements gives (ONNX's "empty set" cases)
_EMPTY: dict[str, float] = {
    "ReduceSum": 0.0, "ReduceProd": 1.0, "ReduceL1": 0.0, "ReduceL2": 0.0,
    "ReduceSumSquare": 0.0, "ReduceLogSumExp": -np.inf, "ReduceMax": -np.inf,
    "ReduceMin": np.inf, "ReduceMean": np.nan,
}


def _log_sum_exp(t: Tensor, dims: tuple[int, ...], keep: bool) -> Tensor:
    """log(sum(exp(x))) over several dims, shifted by the max (0 where it is infinite, so a
    row of -inf gives -inf), as Tensor.logsumexp does for one dim."""
    top = t.amax(dims, keepdim=True)
    shift = where(top.isinf(), top * 0, top)
    out = (t - shift).exp().sum(dims, keepdim=True).log() + shift
    return out if keep else out.reshape([d for i, d in enumerate(t.shape) if i not in dims])


def _empty_reduction(name: str, x: Value, dims: tuple[int, ...], keep: bool) -> np.ndarray:
    """The result of reducing `dims` of which one has size 0: the reduction's identity."""
    shape = [1 if i in dims else d for i, d in enumerate(x.shape) if keep or i not in dims]
    dtype = np.dtype(x.dtype.np) if isinstance(x, Tensor) else np.asarray(x).dtype
    fill = _EMPTY[name]
    if dtype.kind in "iub" and not np.isfinite(fill):  # the dtype's lowest / highest
        info = np.iinfo(dtype) if dtype.kind != "b" else None
        fill = (fill > 0) if info is None else (info.max if fill > 0 else info.min)
    return np.full(shape, fill, dtype=dtype)
_REDUCE_HOST: dict[str, Callable[..., np.ndarray]] = {
    "ReduceSum": np.sum, "ReduceProd": np.prod, "ReduceMax": np.max, "ReduceMin": np.min,
}


@op(*_REDUCE, attrs=("axes", "keepdims", "noop_with_empty_axes"))
def _reduce(ctx: NodeContext, x: Value, axes: Value | None = None) -> Value:
    name = ctx.node.op_type
    keep = bool(ctx.attr("keepdims", 1))
    rank = len(x.shape)
    if ctx.opset >= _AXES_INPUT_FROM.get(name, 18):
        ax = ctx.ints(axes) if axes is not None else []
    else:
        ax = list(ctx.attr("axes", []))
    if not ax:
        if ctx.attr("noop_with_empty_axes", 0):
            return x
        ax = list(range(rank))
    dims = tuple(sorted(a + rank if a < 0 else a for a in ax))
    if is_host(x) and name in _REDUCE_HOST:
        out = _REDUCE_HOST[name](x, axis=dims, keepdims=keep)
        return np.asarray(out).astype(np.asarray(x).dtype)
    if any(x.shape[d] == 0 for d in dims):
        dtype = np.dtype(x.dtype.np) if isinstance(x, Tensor) else np.asarray(x).dtype
        if name == "ReduceMean" and dtype.kind in "iub":
            raise ctx.unsupported("an integer ReduceMean over no elements")
        return _empty_reduction(name, x, dims, keep)
    t = ctx.t(x)
    return _REDUCE[name](t, dims, keep).cast(t.dtype)


@op("ArgMax", "ArgMin", attrs=("axis", "keepdims", "select_last_index"))
def _arg(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    axis = ctx.attr("axis", 0)
    axis = axis + t.ndim if axis < 0 else axis
    keep = bool(ctx.attr("keepdims", 1))
    find = Tensor.argmax if ctx.node.op_type == "ArgMax" else Tensor.argmin
    if ctx.attr("select_last_index", 0):  # the first of the flipped, counted from the end
        last = find(t.flip(axis), axis, keep).cast("int64")
        return (t.shape[axis] - 1) - last
    return find(t, axis, keep).cast("int64")
