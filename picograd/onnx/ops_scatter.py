"""Writing at positions and data-dependent selections: ScatterElements (and the older
Scatter), ScatterND, NonZero, Compress, Unique.

NonZero, Compress and Unique have output shapes that depend on the values, so they sync
with the device: their data (NonZero, Unique) or condition (Compress) is read back to the
host, the positions computed there in numpy, and the result is a host value (NonZero,
Unique) or a gather with host-computed positions (Compress).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from picograd.frontend.tensor import Tensor
from picograd.onnx.registry import NodeContext, Value, op

# ONNX reduction -> torch scatter_reduce's name; "none" writes
_REDUCTIONS = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _check_reduction(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    reduction = _text(attrs.get("reduction", "none"))
    if reduction != "none" and reduction not in _REDUCTIONS:
        return f"reduction {reduction!r}"
    return None


def _scatter(data: Tensor, axis: int, index: Tensor, updates: Tensor, reduction: str
             ) -> Tensor:
    if reduction == "none":
        return data.scatter(axis, index, updates)
    return data.scatter_reduce(axis, index, updates, _REDUCTIONS[reduction])


@op("ScatterElements", "Scatter", attrs=("axis", "reduction"), min_opset=9,
    check=_check_reduction)
def _scatter_elements(ctx: NodeContext, data: Value, indices: Value, updates: Value
                      ) -> Tensor:
    """updates written (or reduced) into data at indices along axis; negative indices
    count from the end. Scatter (opset 9-10) is the same without reduction."""
    t = ctx.t(data)
    axis = ctx.attr("axis", 0)
    axis = axis + t.ndim if axis < 0 else axis
    idx = ctx.t(indices).cast("int64")
    idx = (idx < 0).cast("int64") * t.shape[axis] + idx
    return _scatter(t, axis, idx, ctx.t(updates).cast(t.dtype),
                    _text(ctx.attr("reduction", "none")))


@op("ScatterND", attrs=("reduction",), min_opset=11, check=_check_reduction)
def _scatter_nd(ctx: NodeContext, data: Value, indices: Value, updates: Value) -> Tensor:
    """updates[i...] written (or reduced) at data[indices[i...]]: the last dim of indices
    (k) indexes data's first k dims. Read as a scatter along dim 0 of data flattened to
    (prod(shape[:k]), prod(shape[k:])), each index tuple made one row number."""
    t = ctx.t(data)
    shape = tuple(t.shape)
    k = int(indices.shape[-1])
    lead = int(np.prod(shape[:k], dtype=np.int64))
    rest = int(np.prod(shape[k:], dtype=np.int64))
    # row-major strides of the first k dims: a tuple's row in the flattened data
    strides = np.array([int(np.prod(shape[j + 1:k], dtype=np.int64)) for j in range(k)],
                       dtype=np.int64)
    dims = np.array(shape[:k], dtype=np.int64)
    idx = ctx.t(indices).cast("int64")
    idx = (idx < 0).cast("int64") * ctx.t(dims) + idx
    rows = (idx * ctx.t(strides)).sum(-1).reshape(-1, 1)  # (M, 1)
    m = rows.shape[0]
    flat = t.reshape(lead, rest)
    upd = ctx.t(updates).cast(t.dtype).reshape(m, rest)
    out = _scatter(flat, 0, rows.expand(m, rest), upd, _text(ctx.attr("reduction", "none")))
    return out.reshape(shape)


@op("NonZero", min_opset=9)
def _non_zero(ctx: NodeContext, x: Value) -> np.ndarray:
    """The positions of the non-zero elements, (rank, n) int64. A 0-d input is read as one
    element of a 1-D one, (1, n), as onnxruntime does. Syncs: the data is read on the host
    (the output's shape depends on it)."""
    values = ctx.host(x)
    if values.ndim == 0:  # numpy has no positions of a 0-d array
        values = values.reshape(1)
    return np.array(np.nonzero(values), dtype=np.int64).reshape(values.ndim, -1)


@op("Compress", attrs=("axis",), min_opset=9)
def _compress(ctx: NodeContext, x: Value, condition: Value) -> Tensor:
    """The slices along axis (the flattened input without one) where condition is true; a
    condition shorter than the axis drops the rest, and the entries of a longer one past
    the axis are ignored (onnxruntime's reading; the spec only speaks of shorter ones).
    Syncs: the condition is read on the host (the output's shape depends on it)."""
    t = ctx.t(x)
    axis = ctx.attr("axis")
    if axis is None:
        t, axis = t.reshape(-1), 0
    axis = axis + t.ndim if axis < 0 else axis
    keep = ctx.host(condition).reshape(-1).astype(bool)[:t.shape[axis]]
    return t.index_select(axis, ctx.t(np.flatnonzero(keep).astype(np.int64)))


@op("Unique", attrs=("axis", "sorted"), min_opset=11)
def _unique(ctx: NodeContext, x: Value) -> tuple[np.ndarray, ...]:
    """(Y, indices, inverse_indices, counts) as numpy's unique, with sorted=0 keeping the
    order of first occurrence. Syncs: the data is read on the host."""
    values = ctx.host(x)
    axis = ctx.attr("axis")
    if axis is not None:
        axis = axis + values.ndim if axis < 0 else axis
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ctx.unsupported("Unique of data with NaN (numpy and onnxruntime disagree)")
    y, first, inverse, counts = np.unique(values, return_index=True, return_inverse=True,
                                          return_counts=True, axis=axis)
    inverse = inverse.reshape(-1)
    if not ctx.attr("sorted", 1):
        order = np.argsort(first, kind="stable")  # by first occurrence
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        y = np.take(y, order, axis=0 if axis is None else axis)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    return (y, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64))
