"""Less common normalizations, pools and index ops: LpPool, LpNormalization,
GroupNormalization, MeanVarianceNormalization, CumProd, EyeLike, GatherND, ReverseSequence,
ReduceLogSum, MaxUnpool, Det.

Index ops (GatherND, ReverseSequence) turn what they read into one `gather` whose index is
out of range wherever an ONNX index is, so a bad index raises picograd's IndexRangeError
when the result is read instead of reading a neighbouring element.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import onnx

from picograd.frontend import where
from picograd.frontend.ops_shape import cat
from picograd.frontend.ops_shape import pad as pad_tensor
from picograd.frontend.tensor import Tensor
from picograd.nn import conv_nd
from picograd.onnx.dtypes import ONNX_TO_NUMPY
from picograd.onnx.ops_nn import resolve_pads
from picograd.onnx.ops_reduce import _reduce as reduce_op
from picograd.onnx.registry import NodeContext, Value, is_host, op

_CONV = {1: conv_nd.conv1d, 2: conv_nd.conv2d, 3: conv_nd.conv3d}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _along(values: Any, axis: int, rank: int) -> Any:
    """A 1-D host array or Tensor laid along `axis` of a rank-`rank` shape (size 1
    elsewhere)."""
    shape = [1] * rank
    shape[axis] = -1
    return values.reshape(shape)


def _wide(t: Tensor) -> Tensor:
    """`t` in float32 at least: statistics of float16 inputs are computed in float32 (the
    stash_type of ONNX's normalizations)."""
    return t.cast("float32") if t.dtype.itemsize < 4 else t


# ── pools ────────────────────────────────────────────────────────────────────

def _check_lp_pool(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    auto = _text(attrs.get("auto_pad", "NOTSET"))
    if auto not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        return f"auto_pad={auto!r}"
    if attrs.get("ceil_mode", 0):
        return "ceil_mode=1 is not supported"
    return None


@op("LpPool", attrs=("auto_pad", "ceil_mode", "dilations", "kernel_shape", "p", "pads",
                     "strides"), check=_check_lp_pool)
def _lp_pool(ctx: NodeContext, x: Value) -> Tensor:
    """(sum over each window of |x|^p)^(1/p): the window sums are a depthwise convolution
    with a kernel of ones (which also takes dilations); padding adds zeros."""
    t = ctx.t(x)
    n = t.ndim - 2
    if n not in _CONV:
        raise ctx.unsupported(f"a {n}-D LpPool")
    kernel = list(ctx.attr("kernel_shape"))
    strides = list(ctx.attr("strides", [1] * n))
    dilations = list(ctx.attr("dilations", [1] * n))
    begin, end = resolve_pads(ctx, t.shape[2:], kernel, strides, dilations)
    p = float(ctx.attr("p", 2))
    powered = _wide(t).abs().pow(p)
    sizes: list[int] = []
    for b, e in zip(reversed(begin), reversed(end), strict=True):
        sizes += [b, e]
    powered = pad_tensor(powered, sizes, "constant", 0.0)
    channels = t.shape[1]
    ones = Tensor.ones(channels, 1, *kernel, dtype=powered.dtype, device=powered.device)
    sums = _CONV[n](powered, ones, None, strides, 0, dilations, channels)
    return sums.pow(1.0 / p).cast(t.dtype)


@op("MaxUnpool", attrs=("kernel_shape", "pads", "strides"))
def _max_unpool(ctx: NodeContext, x: Value, indices: Value, output_shape: Value | None = None
                ) -> Tensor:
    """Zeros of the unpooled shape with each of `x`'s values written at its index into the
    whole flattened result (MaxPool's Indices count over N and C too). The indices address
    the shape inferred from kernel, strides and pads; an `output_shape` larger than that
    adds zeros after each dim's end (onnx's reference), a smaller one is refused."""
    t = ctx.t(x)
    n = t.ndim - 2
    kernel = list(ctx.attr("kernel_shape"))
    strides = list(ctx.attr("strides", [1] * n))
    pads = list(ctx.attr("pads", [0] * (2 * n)))
    shape = [*t.shape[:2]] + [(i - 1) * s + k - pads[d] - pads[d + n] for d, (i, s, k) in
                              enumerate(zip(t.shape[2:], strides, kernel, strict=True))]
    if tuple(indices.shape) != tuple(t.shape):
        raise ctx.unsupported(f"indices of shape {tuple(indices.shape)} for values of shape "
                              f"{t.shape}: they need the same shape")
    flat = Tensor.zeros(math.prod(shape), dtype=t.dtype, device=t.device)
    idx = ctx.t(indices).cast("int64").reshape(-1)
    y = flat.scatter(0, idx, t.reshape(-1)).reshape(shape)
    if output_shape is None:
        return y
    want = ctx.ints(output_shape)
    if len(want) != len(shape) or any(w < s for w, s in zip(want, shape, strict=True)):
        raise ctx.unsupported(f"output_shape {want} smaller than the unpooled shape {shape}")
    sizes: list[int] = []
    for w, s in zip(reversed(want), reversed(shape), strict=True):
        sizes += [0, w - s]
    return pad_tensor(y, sizes, "constant", 0)


# ── normalizations ───────────────────────────────────────────────────────────

def _check_lp_norm(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    p = attrs.get("p", 2)
    return None if p in (1, 2) else f"p={p} (ONNX defines p = 1 or 2)"


@op("LpNormalization", attrs=("axis", "p"), check=_check_lp_norm)
def _lp_normalization(ctx: NodeContext, x: Value) -> Tensor:
    """x divided by its L1 or L2 norm along `axis`; 0 where the norm is 0 (onnxruntime's
    and onnx's reference, not 0/0)."""
    t = ctx.t(x)
    axis = _axis(ctx.attr("axis", -1), t.ndim)
    w = _wide(t)
    if ctx.attr("p", 2) == 1:
        norm = w.abs().sum(axis, keepdim=True)
    else:
        norm = (w * w).sum(axis, keepdim=True).sqrt()
    zero = norm == 0
    return where(zero, w * 0, w / where(zero, norm + 1, norm)).cast(t.dtype)


def _standardize(w: Tensor, dims: tuple[int, ...], eps: float, eps_outside: bool) -> Tensor:
    """(w - mean) / sqrt(var + eps) over `dims` (population variance); with `eps_outside`
    (MeanVarianceNormalization) the eps is added to the standard deviation instead. The
    variance is the mean of squared deviations, never negative (E[x^2] - E[x]^2 can be)."""
    centered = w - w.mean(dims, keepdim=True)
    var = (centered * centered).mean(dims, keepdim=True)
    return centered / (var.sqrt() + eps if eps_outside else (var + eps).sqrt())


def _check_stash(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    stash = attrs.get("stash_type", 1)
    return None if stash == 1 else f"stash_type={stash} (only 1, float32, is translated)"


# opset 18's GroupNormalization (scale and bias per group) is deprecated: onnx's checker
# rejects a model of opset 18-20 that uses it, so only opset 21's form is translated
@op("GroupNormalization", attrs=("epsilon", "num_groups", "stash_type"), min_opset=21,
    check=_check_stash)
def _group_normalization(ctx: NodeContext, x: Value, scale: Value, bias: Value) -> Tensor:
    """Each group of C / num_groups channels standardized over its channels and spatial
    dims (in float32 at least, stash_type 1), then scaled and shifted per channel."""
    t = ctx.t(x)
    groups = int(ctx.attr("num_groups"))
    if t.ndim < 2 or groups <= 0 or t.shape[1] % groups:
        raise ctx.unsupported(f"an input of shape {t.shape} with num_groups={groups}: "
                              f"C must be a multiple of num_groups")
    n, c = t.shape[:2]
    if scale.shape != (c,) or bias.shape != (c,):
        raise ctx.unsupported(f"scale {tuple(scale.shape)} and bias {tuple(bias.shape)}: "
                              f"opset 21 takes one of each per channel ({c})")
    g = _standardize(_wide(t).reshape(n, groups, -1), (2,), float(ctx.attr("epsilon", 1e-5)), False)
    y = g.reshape(t.shape)
    s, b = ctx.t(scale).cast(y.dtype), ctx.t(bias).cast(y.dtype)
    per_channel = [1, c] + [1] * (t.ndim - 2)
    return (y * s.reshape(per_channel) + b.reshape(per_channel)).cast(t.dtype)


@op("MeanVarianceNormalization", attrs=("axes",))
def _mvn(ctx: NodeContext, x: Value) -> Tensor:
    """(x - mean) / (std + 1e-9) over `axes` (default N, H, W), the spec's function."""
    t = ctx.t(x)
    dims = tuple(sorted({_axis(a, t.ndim) for a in ctx.attr("axes", [0, 2, 3])}))
    return _standardize(_wide(t), dims, 1e-9, True).cast(t.dtype)


# ── scans, reductions, creation ──────────────────────────────────────────────

@op("CumProd", attrs=("exclusive", "reverse"))
def _cumprod(ctx: NodeContext, x: Value, axis: Value) -> Tensor:
    """Running products along `axis`; `exclusive` leaves the element itself out (a 1 is
    shifted in), `reverse` runs from the end."""
    t = ctx.t(x)
    (ax,) = ctx.ints(axis)
    ax = _axis(ax, t.ndim)
    if ctx.attr("reverse", 0):
        t = t.flip(ax)
    if ctx.attr("exclusive", 0):
        n = t.shape[ax]
        sizes = [0, 0] * (t.ndim - 1 - ax) + [1, 0]
        shifted = pad_tensor(t, sizes, "constant", 1)
        t = shifted[(slice(None),) * ax + (slice(0, n),)]
    out = t.cumprod(ax).cast(t.dtype)
    return out.flip(ax) if ctx.attr("reverse", 0) else out


def _check_eye_like(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    dtype = attrs.get("dtype")
    if dtype is not None and dtype not in ONNX_TO_NUMPY:
        return f"dtype {dtype} has no picograd dtype"
    return None


@op("EyeLike", attrs=("dtype", "k"), check=_check_eye_like)
def _eye_like(ctx: NodeContext, x: Value) -> np.ndarray:
    """Ones on the k-th diagonal of a matrix of x's shape: a host value (only the shape of
    `x` is read)."""
    if len(x.shape) != 2:
        raise ctx.unsupported(f"an input of shape {tuple(x.shape)}: EyeLike takes a matrix")
    dtype_attr = ctx.attr("dtype")
    if dtype_attr is not None:
        dtype = ONNX_TO_NUMPY[dtype_attr]
    else:
        dtype = np.dtype(x.dtype.np) if isinstance(x, Tensor) else np.asarray(x).dtype
    rows, cols = x.shape
    return np.eye(rows, cols, int(ctx.attr("k", 0)), dtype=dtype)


@op("ReduceLogSum", attrs=("axes", "keepdims", "noop_with_empty_axes"))
def _reduce_log_sum(ctx: NodeContext, x: Value, axes: Value | None = None) -> Value:
    """log(ReduceSum(x)): the sum is ops_reduce's ReduceSum, read at opset 18 (axes an
    input) with the attribute axes of an older opset given as that input."""
    if ctx.opset < 18:
        attr_axes = ctx.attr("axes")
        axes = None if attr_axes is None else np.asarray(attr_axes, dtype=np.int64)
    attrs = {k: v for k, v in ctx.attrs.items() if k != "axes"}
    node = onnx.NodeProto()
    node.CopyFrom(ctx.node)
    node.op_type = "ReduceSum"
    total = reduce_op(dataclasses.replace(ctx, node=node, attrs=attrs, opset=18), x, axes)
    if is_host(total):
        host = np.asarray(total)
        if host.dtype.kind not in "f":
            raise ctx.unsupported(f"ReduceLogSum of {host.dtype} (integer log)")
        with np.errstate(divide="ignore"):
            return np.log(host).astype(host.dtype)
    if not total.dtype.is_float:
        raise ctx.unsupported(f"ReduceLogSum of {total.dtype} (integer log)")
    return total.log().cast(total.dtype)


# ── index ops ────────────────────────────────────────────────────────────────

def _flat_positions(ctx: NodeContext, idx: Tensor, dims: list[int]) -> Tensor:
    """The row-major position of each index tuple (the last axis of `idx`) in `dims`;
    negative components count from the end, and a tuple with a component out of range
    gets the position prod(dims), one past the end, so the gather that reads it raises."""
    extent = ctx.t(np.asarray(dims, dtype=np.int64))
    comp = where(idx < 0, idx + extent, idx)
    inside = ((comp >= 0) & (comp < extent)).cast("int64").sum(-1) == len(dims)
    strides = [math.prod(dims[i + 1:]) for i in range(len(dims))]
    flat = (comp * ctx.t(np.asarray(strides, dtype=np.int64))).sum(-1)
    return where(inside, flat, flat * 0 + math.prod(dims))


@op("GatherND", attrs=("batch_dims",))
def _gather_nd(ctx: NodeContext, data: Value, indices: Value) -> Tensor:
    """data[batch..., indices[batch..., m, :], rest...]: the indexed dims are flattened
    into one and read with a single gather along it."""
    d = ctx.t(data)
    b = int(ctx.attr("batch_dims", 0))
    idx = ctx.t(indices).cast("int64")
    k = idx.shape[-1] if idx.ndim else 0
    if idx.ndim < b + 1 or k > d.ndim - b or tuple(idx.shape[:b]) != tuple(d.shape[:b]):
        raise ctx.unsupported(f"indices of shape {idx.shape} for data of shape {d.shape} "
                              f"with batch_dims={b}: they need the data's batch dims and "
                              f"at most {d.ndim - b} index components")
    batch, inner, rest = d.shape[:b], list(d.shape[b:b + k]), list(d.shape[b + k:])
    middle = list(idx.shape[b:-1])
    nb, nm = math.prod(batch), math.prod(middle)
    table = d.reshape(nb, math.prod(inner), *rest)
    pos = _flat_positions(ctx, idx.reshape(nb, nm, k), inner)
    pos = pos.reshape(nb, nm, *[1] * len(rest)).expand(nb, nm, *rest)
    return table.gather(1, pos).reshape(*batch, *middle, *rest)


@op("ReverseSequence", attrs=("batch_axis", "time_axis"))
def _reverse_sequence(ctx: NodeContext, x: Value, sequence_lens: Value) -> Tensor:
    """Each batch entry's first sequence_lens[b] steps along the time axis reversed, the
    rest kept: one gather along time. A length above the time steps (or below 0) makes
    an out-of-range index, which raises when read."""
    t = ctx.t(x)
    time, batch = int(ctx.attr("time_axis", 0)), int(ctx.attr("batch_axis", 1))
    if {time, batch} != {0, 1} or t.ndim < 2:
        raise ctx.unsupported(f"time_axis={time}, batch_axis={batch} of shape {t.shape}: "
                              f"one must be 0, the other 1")
    steps = t.shape[time]
    if tuple(sequence_lens.shape) != (t.shape[batch],):
        raise ctx.unsupported(f"sequence_lens of shape {tuple(sequence_lens.shape)}: it "
                              f"needs one length per batch entry ({t.shape[batch]})")
    lens = ctx.t(_along(ctx.t(sequence_lens).cast("int64"), batch, t.ndim))
    pos = ctx.t(_along(np.arange(steps, dtype=np.int64), time, t.ndim))
    idx = where(pos < lens, lens - 1 - pos, pos)
    idx = where(lens < 0, idx * 0 + steps, idx)
    return t.gather(time, idx.expand(t.shape))


# ── Det ──────────────────────────────────────────────────────────────────────

def _swap_rows(ctx: NodeContext, a: Tensor, k: int, r: Tensor) -> Tensor:
    """`a` (..., M, M) with its rows k and r[...] (per matrix, r >= k) exchanged."""
    m = a.shape[-1]
    rows = ctx.t(np.arange(m, dtype=np.int64).reshape(m, 1))
    r = r.reshape(*r.shape, 1, 1)
    order = where(rows == k, r, where(rows == r, rows * 0 + k, rows))
    return a.gather(a.ndim - 2, order.expand(a.shape))


def _det(ctx: NodeContext, a: Tensor) -> Tensor:
    """The determinants of the matrices (..., M, M) by Gaussian elimination with partial
    pivoting (the product of the pivots, negated once per row exchange), M steps of
    Tensor ops. A zero pivot (a singular matrix) makes the product 0 and eliminates
    nothing, so no 0/0 reaches the result."""
    m = a.shape[-1]
    lead = (slice(None),) * (a.ndim - 2)
    det = (a[(*lead, 0, 0)] * 0 + 1) if m else a.sum((-2, -1)) * 0 + 1
    for k in range(m):
        below = a[(*lead, slice(k, m), k)].abs()
        r = below.argmax(-1).cast("int64") + k
        a = _swap_rows(ctx, a, k, r)
        det = where(r == k, det, -det)
        pivot = a[(*lead, k, k)]
        det = det * pivot
        if k + 1 == m:
            break
        safe = where(pivot == 0, pivot * 0 + 1, pivot).reshape(*pivot.shape, 1, 1)
        factor = a[(*lead, slice(k + 1, m), slice(k, k + 1))] / safe
        factor = where(pivot.reshape(*pivot.shape, 1, 1) == 0, factor * 0, factor)
        rest = a[(*lead, slice(k + 1, m), slice(None))] - factor * a[
            (*lead, slice(k, k + 1), slice(None))]
        a = cat([a[(*lead, slice(0, k + 1), slice(None))], rest], dim=-2)
    return det


@op("Det", min_opset=11)
def _det_op(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ctx.unsupported(f"an input of shape {t.shape}: Det takes (..., M, M)")
    if not t.dtype.is_float:
        raise ctx.unsupported(f"Det of {t.dtype}")
    return _det(ctx, _wide(t)).cast(t.dtype)
