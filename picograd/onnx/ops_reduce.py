"""Reductions: ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceL1/L2,
ReduceSumSquare, ReduceLogSumExp, ArgMax, ArgMin.

`axes` is an attribute before opset 13 (ReduceSum) / 18 (the others) and an input after;
with the input form an empty `axes` reduces everything unless `noop_with_empty_axes`. ONNX
reductions keep the input dtype (an integer mean truncates), so results are cast back.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

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
    "ReduceLogSumExp": lambda t, d, k: t.logsumexp(d, keepdim=k),
}
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
    t = ctx.t(x)
    if any(t.shape[d] == 0 for d in dims) and name in ("ReduceMax", "ReduceMin"):
        raise ctx.unsupported(f"{name} over an empty dim")
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
