"""Neural-network ONNX ops: MatMul, Gemm, Conv, ConvTranspose, MaxPool, AveragePool, the
global pools, BatchNormalization (inference), LayerNormalization, InstanceNormalization,
Softmax, LogSoftmax.

Padding is resolved the ONNX way (explicit `pads` begin..., end..., or `auto_pad`) before
calling picograd's torch-style functionals, which take symmetric padding: uneven pads are
applied to the input first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from picograd.frontend.ops_shape import pad as pad_tensor
from picograd.frontend.tensor import Tensor
from picograd.nn import conv_nd, pool
from picograd.onnx.registry import NodeContext, Value, op

_CONV = {1: conv_nd.conv1d, 2: conv_nd.conv2d, 3: conv_nd.conv3d}
_CONV_T = {1: conv_nd.conv_transpose1d, 2: conv_nd.conv_transpose2d,
           3: conv_nd.conv_transpose3d}
_MAX_POOL = {1: pool.max_pool1d, 2: pool.max_pool2d, 3: pool.max_pool3d}
_AVG_POOL = {1: pool.avg_pool1d, 2: pool.avg_pool2d, 3: pool.avg_pool3d}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def resolve_pads(ctx: NodeContext, spatial: Sequence[int], kernel: Sequence[int],
                 strides: Sequence[int], dilations: Sequence[int]) -> tuple[list[int], list[int]]:
    """(begin, end) padding of each spatial dim from `pads` or `auto_pad`."""
    n = len(spatial)
    auto = _text(ctx.attr("auto_pad", "NOTSET"))
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for size, k, s, d in zip(spatial, kernel, strides, dilations, strict=True):
            out = -(-size // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
            low = total // 2 if auto == "SAME_UPPER" else total - total // 2
            begin.append(low)
            end.append(total - low)
        return begin, end
    if auto == "VALID":
        return [0] * n, [0] * n
    pads = list(ctx.attr("pads", [0] * (2 * n)))
    return pads[:n], pads[n:]


def _check_auto_pad(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    auto = _text(attrs.get("auto_pad", "NOTSET"))
    if auto not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        return f"auto_pad={auto!r}"
    if node.op_type == "MaxPool" and len(node.output) > 1 and node.output[1]:
        return "MaxPool's Indices output is not supported"
    return None


def _window_args(ctx: NodeContext, x: Tensor, kernel: Sequence[int]
                 ) -> tuple[int, list[int], list[int], list[int], list[int]]:
    n = x.ndim - 2
    strides = list(ctx.attr("strides", [1] * n))
    dilations = list(ctx.attr("dilations", [1] * n))
    begin, end = resolve_pads(ctx, x.shape[2:], kernel, strides, dilations)
    return n, strides, dilations, begin, end


def _pre_pad(x: Tensor, begin: Sequence[int], end: Sequence[int], value: float) -> Tensor:
    sizes: list[int] = []
    for b, e in zip(reversed(begin), reversed(end), strict=True):
        sizes += [b, e]
    return pad_tensor(x, sizes, "constant", value)


@op("MatMul")
def _matmul(ctx: NodeContext, a: Value, b: Value) -> Tensor:
    return ctx.t(a).matmul(ctx.t(b))


@op("Gemm", attrs=("alpha", "beta", "transA", "transB", "broadcast"))
def _gemm(ctx: NodeContext, a: Value, b: Value, c: Value | None = None) -> Tensor:
    ta, tb = ctx.t(a), ctx.t(b)
    if ctx.attr("transA", 0):
        ta = ta.permute(1, 0)
    if ctx.attr("transB", 0):
        tb = tb.permute(1, 0)
    y = ta.matmul(tb)
    alpha, beta = ctx.attr("alpha", 1.0), ctx.attr("beta", 1.0)
    if alpha != 1.0:
        y = y * alpha
    if c is not None:
        tc = ctx.t(c)
        y = y + (tc if beta == 1.0 else tc * beta)
    return y


@op("Conv", attrs=("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"),
    check=_check_auto_pad)
def _conv(ctx: NodeContext, x: Value, w: Value, b: Value | None = None) -> Tensor:
    tx, tw = ctx.t(x), ctx.t(w)
    n, strides, dilations, begin, end = _window_args(ctx, tx, tw.shape[2:])
    if n not in _CONV:
        raise ctx.unsupported(f"a {n}-D convolution")
    if begin != end:
        tx, begin = _pre_pad(tx, begin, end, 0.0), [0] * n
    return _CONV[n](tx, tw, None if b is None else ctx.t(b), strides, begin, dilations,
                    ctx.attr("group", 1))


@op("ConvTranspose", attrs=("auto_pad", "dilations", "group", "kernel_shape", "pads",
                            "strides", "output_padding", "output_shape"),
    check=_check_auto_pad)
def _conv_transpose(ctx: NodeContext, x: Value, w: Value, b: Value | None = None) -> Tensor:
    tx, tw = ctx.t(x), ctx.t(w)
    n = tx.ndim - 2
    if n not in _CONV_T:
        raise ctx.unsupported(f"a {n}-D transposed convolution")
    kernel = tw.shape[2:]
    strides = list(ctx.attr("strides", [1] * n))
    dilations = list(ctx.attr("dilations", [1] * n))
    extra = list(ctx.attr("output_padding", [0] * n))
    # the full result (no padding), then ONNX's output_padding and pads cut from it
    full = _CONV_T[n](tx, tw, None, strides, 0, 0, ctx.attr("group", 1), dilations)
    sizes = [(i - 1) * s + (k - 1) * d + 1 for i, s, k, d in
             zip(tx.shape[2:], strides, kernel, dilations, strict=True)]
    auto = _text(ctx.attr("auto_pad", "NOTSET"))
    if "output_shape" in ctx.attrs or auto in ("SAME_UPPER", "SAME_LOWER"):
        want = (list(ctx.attr("output_shape"))[-n:] if "output_shape" in ctx.attrs
                else [i * s for i, s in zip(tx.shape[2:], strides, strict=True)])
        begin, end = [], []
        for size, e, o in zip(sizes, extra, want, strict=True):
            total = size + e - o  # negative: an output larger than the full result
            half = int(total / 2)  # the spec's C division, toward zero
            low = total - half if auto == "SAME_LOWER" else half
            begin.append(low)
            end.append(total - low)
    elif auto == "VALID":
        begin, end = [0] * n, [0] * n
    else:
        pads = list(ctx.attr("pads", [0] * (2 * n)))
        begin, end = pads[:n], pads[n:]
    if any(e < 0 for e in extra):
        raise ctx.unsupported("negative output_padding")
    # output_padding and negative pads (an output_shape larger than the full result) add
    # zeros at the ends; positive pads cut
    y = _pre_pad(full, [max(-p, 0) for p in begin],
                 [e + max(-p, 0) for e, p in zip(extra, end, strict=True)], 0.0)
    index = (slice(None), slice(None), *(
        slice(max(lo, 0), d - max(hi, 0)) for lo, hi, d in zip(begin, end, y.shape[2:],
                                                                strict=True)))
    y = y[index]
    if b is not None:
        y = y + ctx.t(b).reshape((-1,) + (1,) * n)
    return y


def _lowest(x: Tensor) -> float:
    dt = np.dtype(x.dtype.np)
    return -math.inf if dt.kind == "f" or dt.name == "bfloat16" else float(np.iinfo(dt).min)


def _symmetric_ok(begin: Sequence[int], end: Sequence[int], kernel: Sequence[int]) -> bool:
    """Whether torch-style symmetric padding expresses these pads (at most half a window)."""
    return begin == end and all(2 * p <= k for p, k in zip(begin, kernel, strict=True))


_POOL_ATTRS = ("auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides")


@op("MaxPool", attrs=(*_POOL_ATTRS, "storage_order"), check=_check_auto_pad)
def _max_pool(ctx: NodeContext, x: Value) -> Tensor:
    tx = ctx.t(x)
    kernel = list(ctx.attr("kernel_shape"))
    n, strides, dilations, begin, end = _window_args(ctx, tx, kernel)
    if n not in _MAX_POOL:
        raise ctx.unsupported(f"a {n}-D max pool")
    ceil = bool(ctx.attr("ceil_mode", 0))
    spatial = tx.shape[2:]
    if _symmetric_ok(begin, end, kernel):
        out = _MAX_POOL[n](tx, kernel, strides, begin, dilations, ceil)
        assert isinstance(out, Tensor)
        return out
    padded = _pre_pad(tx, begin, end, _lowest(tx))
    out = _MAX_POOL[n](padded, kernel, strides, 0, dilations, ceil)
    assert isinstance(out, Tensor)
    if not ceil:
        return out
    # with ceil_mode a last window that starts in the end padding is dropped; on the
    # pre-padded input torch's rule would keep it
    sizes = []
    for size, k, s, d, b, e in zip(spatial, kernel, strides, dilations, begin, end,
                                   strict=True):
        count = -(-(size + b + e - ((k - 1) * d + 1)) // s) + 1
        sizes.append(count - 1 if (count - 1) * s >= size + b else count)
    return out[(slice(None), slice(None), *(slice(0, c) for c in sizes))]


@op("AveragePool", attrs=(*_POOL_ATTRS, "count_include_pad"), check=_check_auto_pad)
def _avg_pool(ctx: NodeContext, x: Value) -> Tensor:
    tx = ctx.t(x)
    kernel = list(ctx.attr("kernel_shape"))
    n, strides, dilations, begin, end = _window_args(ctx, tx, kernel)
    if n not in _AVG_POOL:
        raise ctx.unsupported(f"a {n}-D average pool")
    ceil = bool(ctx.attr("ceil_mode", 0))
    include = bool(ctx.attr("count_include_pad", 0))
    if any(d != 1 for d in dilations) or (ceil and not _symmetric_ok(begin, end, kernel)):
        return _window_mean(tx, kernel, strides, dilations, begin, end, ceil, include)
    if _symmetric_ok(begin, end, kernel):
        return _AVG_POOL[n](tx, kernel, strides, begin, ceil, include)
    padded = _pre_pad(tx, begin, end, 0.0)
    mean = _AVG_POOL[n](padded, kernel, strides, 0, False, True)
    if include:
        return mean
    inside = _pre_pad(tx * 0 + 1, begin, end, 0.0)  # 1 inside the input, 0 in the pads
    return mean / _AVG_POOL[n](inside, kernel, strides, 0, False, True)


def _window_mean(x: Tensor, kernel: Sequence[int], strides: Sequence[int],
                 dilations: Sequence[int], begin: Sequence[int], end: Sequence[int],
                 ceil: bool, include: bool) -> Tensor:
    """An average pool with dilated windows (or ceil_mode with uneven pads): the window sums
    as a depthwise convolution with ones (dilation and stride as the pool's), divided by
    the same convolution of a mask of the positions counted: the input, and with
    `count_include_pad` the pads too, never the overhang a ceil_mode window reaches past
    the end pads (onnxruntime's divisor)."""
    n, channels = len(kernel), x.shape[1]
    extra = []
    for size, k, st, d, b, e in zip(x.shape[2:], kernel, strides, dilations, begin, end,
                                    strict=True):
        span, total = (k - 1) * d + 1, size + b + e
        count = (-(-(total - span) // st) if ceil else (total - span) // st) + 1
        if ceil and (count - 1) * st >= size + b:  # the last window starts in the end pad
            count -= 1
        extra.append(max(0, (count - 1) * st + span - total))
    ones = Tensor.ones(channels, 1, *kernel, dtype=x.dtype, device=x.device)
    conv = _CONV[n]
    padded = _pre_pad(_pre_pad(x, begin, end, 0.0), [0] * n, extra, 0.0)
    sums = conv(padded, ones, None, list(strides), 0, list(dilations), channels)
    inside = Tensor.ones(1, 1, *x.shape[2:], dtype=x.dtype, device=x.device)
    counted = _pre_pad(inside, begin, end, 1.0 if include else 0.0)
    counted = _pre_pad(counted, [0] * n, extra, 0.0)
    divisor = conv(counted, ones[:1], None, list(strides), 0, list(dilations), 1)
    return sums / divisor


@op("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(ctx: NodeContext, x: Value) -> Tensor:
    tx = ctx.t(x)
    dims = tuple(range(2, tx.ndim))
    if ctx.node.op_type == "GlobalAveragePool":
        return tx.mean(dims, keepdim=True)
    return tx.amax(dims, keepdim=True)


def _check_batch_norm(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    if attrs.get("training_mode", 0):
        return "training_mode=1 is not supported (inference only)"
    if any(node.output[1:]):
        return "the running mean / variance outputs (training) are not supported"
    if attrs.get("spatial", 1) != 1:
        return "spatial=0 is not supported"
    return None


def _per_channel(t: Tensor, ndim: int) -> Tensor:
    return t.reshape((1, -1) + (1,) * (ndim - 2))


@op("BatchNormalization", attrs=("epsilon", "momentum", "training_mode", "spatial",
                                 "is_test", "consumed_inputs"), check=_check_batch_norm)
def _batch_norm(ctx: NodeContext, x: Value, scale: Value, bias: Value, mean: Value,
                var: Value) -> Tensor:
    tx = ctx.t(x)
    dt, nd = tx.dtype, tx.ndim
    s, b, m, v = (_per_channel(ctx.t(a).cast(dt), nd) for a in (scale, bias, mean, var))
    return (tx - m) * (s / (v + ctx.attr("epsilon", 1e-5)).sqrt()) + b


@op("LayerNormalization", attrs=("axis", "epsilon", "stash_type"), min_opset=17)
def _layer_norm(ctx: NodeContext, x: Value, scale: Value, bias: Value | None = None
                ) -> tuple[Tensor, Tensor, Tensor]:
    tx = ctx.t(x)
    axis = ctx.attr("axis", -1)
    axis = axis + tx.ndim if axis < 0 else axis
    dims = tuple(range(axis, tx.ndim))
    work = tx.cast("float32") if ctx.attr("stash_type", 1) == 1 else tx
    mean = work.mean(dims, keepdim=True)
    centred = work - mean
    inv_std = ((centred * centred).mean(dims, keepdim=True)
               + ctx.attr("epsilon", 1e-5)).sqrt().reciprocal()
    y = (centred * inv_std).cast(tx.dtype) * ctx.t(scale)
    if bias is not None:
        y = y + ctx.t(bias)
    return y, mean, inv_std


@op("InstanceNormalization", attrs=("epsilon",))
def _instance_norm(ctx: NodeContext, x: Value, scale: Value, bias: Value) -> Tensor:
    tx = ctx.t(x)
    dims = tuple(range(2, tx.ndim))
    mean = tx.mean(dims, keepdim=True)
    centred = tx - mean
    var = (centred * centred).mean(dims, keepdim=True)
    y = centred / (var + ctx.attr("epsilon", 1e-5)).sqrt()
    return y * _per_channel(ctx.t(scale), tx.ndim) + _per_channel(ctx.t(bias), tx.ndim)


@op("LRN", attrs=("alpha", "beta", "bias", "size"))
def _lrn(ctx: NodeContext, x: Value) -> Tensor:
    """x / (bias + alpha / size * sum of x**2 over channels c - (size-1)//2 .. c +
    ceil((size-1)/2)) ** beta (ONNX's window: for an even size one more after than torch's
    local_response_norm, so it is summed here)."""
    tx = ctx.t(x)
    size = ctx.attr("size")
    before, after = (size - 1) // 2, size // 2
    sq = pad_tensor(tx * tx, [0, 0] * (tx.ndim - 2) + [before, after], "constant", 0.0)
    channels = tx.shape[1]
    total = sq[:, 0:channels]
    for i in range(1, size):
        total = total + sq[:, i:i + channels]
    scale = total * (ctx.attr("alpha", 1e-4) / size) + ctx.attr("bias", 1.0)
    return tx / scale.pow(ctx.attr("beta", 0.75))


@op("Softmax", "LogSoftmax", attrs=("axis",))
def _softmax(ctx: NodeContext, x: Value) -> Tensor:
    tx = ctx.t(x)
    log = ctx.node.op_type == "LogSoftmax"
    if ctx.opset >= 13:
        axis = ctx.attr("axis", -1)
        return tx.log_softmax(axis) if log else tx.softmax(axis)
    # before opset 13 the input is read as 2-D: dims before `axis` x dims from it
    axis = ctx.attr("axis", 1)
    axis = axis + tx.ndim if axis < 0 else axis
    lead = int(np.prod(tx.shape[:axis], dtype=np.int64))
    flat = tx.reshape(lead, -1)
    return (flat.log_softmax(1) if log else flat.softmax(1)).reshape(tx.shape)
