"""Quantization ops: QuantizeLinear, DequantizeLinear (per tensor, per axis from opset 13,
float8 and `saturate` from 19, blocks from 21), DynamicQuantizeLinear, and the integer
kernels MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv.

The arithmetic is onnxruntime's CPU kernels', so integer outputs match it exactly:

* quantize: `x / scale` in float32 (float16 / bfloat16 widened exactly first), rounded half
  to even, plus the zero point, clamped to the target's range; to float8, the quotient
  cast with nearest even and `saturate` (e4m3fn: beyond the largest finite value +-448,
  or NaN of the value's sign with saturate=0; e5m2: +-57344, or inf with saturate=0 —
  ONNX's reference; onnxruntime 1.31 gives NaN for 61440 <= |q| < 65536 there, a rounding
  carry into the NaN code). A non-zero float8 zero point and int32 x (no onnxruntime
  kernel) are refused with a typed error naming the node;
* dequantize: `(x - zero_point)` in int32 (float8: x in float32), times the scale in float32,
  then rounded once to the scale's dtype;
* integer matmul / convolution: `(a - a_zero_point)` times `(b - b_zero_point)` summed in
  int32 (a convolution is summed in float64 — picograd's conv is float only — which is
  exact while the sum stays below 2**53, products of 8-bit values being below 2**16, and
  cast through int64 to int32, so it wraps as an int32 accumulator does); the QLinear
  kinds requantize as onnxruntime:
  `round(float32(acc) * (a_scale * b_scale / y_scale)) + y_zero_point`, clamped. b (and
  w) may be quantized per column (per output channel); a per-row a is refused.

Element types picograd has no dtype for (int4, uint4, int2, float4, fnuz float8) cannot
reach a translation: graph inputs and initializers of those types are rejected at load, and
so is an `output_dtype` attribute naming one (`check=`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto

from picograd.frontend.ops_shape import pad as pad_tensor
from picograd.frontend.tensor import Tensor
from picograd.nn import conv_nd
from picograd.onnx.dtypes import from_storage, is_host_only, storage_dtype, storage_tensor
from picograd.onnx.ops_nn import resolve_pads
from picograd.onnx.registry import NodeContext, Value, is_host, op

_E4M3, _E5M2 = np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)
# the quantized element types picograd has: ONNX type -> numpy dtype
_QUANT_TYPES = {TensorProto.UINT8: np.dtype(np.uint8), TensorProto.INT8: np.dtype(np.int8),
                TensorProto.UINT16: np.dtype(np.uint16), TensorProto.INT16: np.dtype(np.int16),
                TensorProto.FLOAT8E4M3FN: _E4M3, TensorProto.FLOAT8E5M2: _E5M2}
_INTEGER_TYPES = frozenset(t for t in _QUANT_TYPES.values() if t.kind in "iu")
# the 2- and 4-bit integers: host values (picograd has no such dtype) held in int8 / uint8
_SUB_BYTE = {TensorProto.INT4: np.dtype(ml_dtypes.int4), TensorProto.UINT4:
             np.dtype(ml_dtypes.uint4), TensorProto.INT2: np.dtype(ml_dtypes.int2),
             TensorProto.UINT2: np.dtype(ml_dtypes.uint2)}
_8BIT = frozenset({np.dtype(np.uint8), np.dtype(np.int8)})
# e4m3fn with saturate=0: a value whose nearest even e4m3fn code is past 448 (above 464,
# halfway to the next step, 480, which is NaN's code) becomes NaN
_E4M3_LIMIT = 464.0
_E5M2_MAX = 57344.0

_CONV = {1: conv_nd.conv1d, 2: conv_nd.conv2d, 3: conv_nd.conv3d}


def dtype_of(v: Value) -> np.dtype:
    """The numpy dtype of a host value or Tensor."""
    return np.dtype(v.dtype.np) if isinstance(v, Tensor) else np.asarray(v).dtype


# ── load-time checks ────────────────────────────────────────────────────────

def _check_quantize(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    out = attrs.get("output_dtype", 0)
    if out and out not in _QUANT_TYPES and out not in _SUB_BYTE:
        return (f"output_dtype {onnx.TensorProto.DataType.Name(out)} is not supported "
                f"(picograd has no such dtype)")
    return None


# ── scales and zero points laid along x ─────────────────────────────────────

def _along(ctx: NodeContext, param: Value, x: Tensor, what: str) -> Tensor:
    """A scale or zero point shaped to broadcast against `x`: a scalar (per tensor), a 1-D
    tensor laid along `axis` (per axis) or, with block_size, x's rank with each element
    repeated block_size times along `axis` (the last block may be short)."""
    t = _values(ctx, param)
    block = ctx.attr("block_size", 0)
    if t.ndim == 0 or (t.ndim == 1 and t.shape[0] == 1 and not block):
        return t.reshape(())
    axis = ctx.attr("axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    n = x.shape[axis]
    if not block:
        if t.ndim != 1 or t.shape[0] != n:
            raise ctx.unsupported(f"{what} of shape {tuple(t.shape)} for x of shape "
                                  f"{tuple(x.shape)} along axis {axis}")
        shape = [1] * x.ndim
        shape[axis] = n
        return t.reshape(shape)
    if t.ndim != x.ndim or t.shape[axis] != -(-n // block):
        raise ctx.unsupported(f"{what} of shape {tuple(t.shape)} for x of shape "
                              f"{tuple(x.shape)} in blocks of {block} along axis {axis}")
    return t.index_select(axis, ctx.t(np.arange(n, dtype=np.int64) // block))


def _values(ctx: NodeContext, v: Value) -> Tensor:
    """`v` as a device Tensor; a 2- or 4-bit integer host value as its exact int8 / uint8
    storage (dtypes.storage_tensor). Other host-only types (float4, fnuz float8, e8m0) are
    refused: their arithmetic here is not checked against a reference."""
    if is_host(v) and is_host_only(np.asarray(v).dtype):
        dtype = np.asarray(v).dtype
        if dtype not in _SUB_BYTE.values():
            raise ctx.unsupported(f"{dtype} values (2- and 4-bit integers are supported)")
        return storage_tensor(np.asarray(v), ctx.device)
    return ctx.t(v)


def _quant_dtype(ctx: NodeContext, zero_point: Value | None) -> np.dtype:
    out = ctx.attr("output_dtype", 0)
    if out:
        return _QUANT_TYPES.get(out) or _SUB_BYTE[out]
    dtype = np.dtype(np.uint8) if zero_point is None else dtype_of(zero_point)
    if dtype not in _QUANT_TYPES.values() and dtype not in _SUB_BYTE.values():
        raise ctx.unsupported(f"quantizing to {dtype} is not supported")
    return dtype


def quantize_values(q: Tensor, dtype: np.dtype, zero_point: Tensor | None,
                    saturate: bool = True) -> Tensor:
    """The float quotient `q` (x / scale) as `dtype`: integers round half to even, add the
    zero point and clamp; float8 are cast (see the module docstring)."""
    if dtype in _INTEGER_TYPES:
        v = q.round()
        if zero_point is not None:
            v = v + zero_point.cast(q.dtype)
        info = np.iinfo(dtype)
        return v.clamp(float(info.min), float(info.max)).cast(dtype)
    v = q.cast("float32")  # a float8 zero point is zero (_check_float8_zero_point)
    if dtype == _E5M2 and saturate:
        # a NaN stays NaN: the comparisons are false for it
        v = (v > _E5M2_MAX).where(_E5M2_MAX, (v < -_E5M2_MAX).where(-_E5M2_MAX, v))
    out = v.cast(dtype)  # e4m3fn's encoding saturates; e5m2's overflows to inf
    if dtype == _E4M3 and not saturate:  # past the range: NaN of the value's sign
        bits = out.bitcast("uint8")
        out = (v.abs() > _E4M3_LIMIT).where(bits | 0x7F, bits).bitcast(dtype)
    return out


def _check_float8_zero_point(ctx: NodeContext, zero_point: Value | None) -> None:
    """Refuse a non-zero float8 zero point: onnxruntime ignores it in QuantizeLinear and
    refuses it in DequantizeLinear, ONNX's reference adds it, so no answer is agreed on.
    Reads the zero point on the host (a sync only when it is computed on the device)."""
    if zero_point is None or dtype_of(zero_point) not in (_E4M3, _E5M2):
        return
    if np.any(ctx.host(zero_point).astype(np.float32) != 0.0):
        raise ctx.unsupported("a non-zero float8 zero point (onnxruntime ignores or "
                              "refuses it; ONNX's reference adds it)")


# ── QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear ─────────────────

@op("QuantizeLinear", attrs=("axis", "saturate", "block_size", "output_dtype"), min_opset=10,
    check=_check_quantize)
def _quantize_linear(ctx: NodeContext, x: Value, scale: Value,
                     zero_point: Value | None = None) -> Value:
    """y = saturate(round(x / scale) + zero_point), in the zero point's dtype (uint8 without
    one, or output_dtype)."""
    tx = ctx.t(x)
    if not tx.dtype.is_float:
        # ONNX allows int32 x (its reference divides in float64); onnxruntime has no such
        # kernel and picograd's float64 round is unavailable, so it is refused, not guessed
        raise ctx.unsupported(f"QuantizeLinear of {tx.dtype.name} x (float x is supported)")
    dtype = _quant_dtype(ctx, zero_point)
    _check_float8_zero_point(ctx, zero_point)
    q = tx.cast("float32") / _along(ctx, scale, tx, "scale").cast("float32")
    zp = None if zero_point is None else _along(ctx, zero_point, tx, "zero point")
    if dtype in _SUB_BYTE.values():
        return _quantize_sub_byte(ctx, q, dtype, zp)
    return quantize_values(q, dtype, zp, bool(ctx.attr("saturate", 1)))


def _quantize_sub_byte(ctx: NodeContext, q: Tensor, dtype: np.dtype, zero_point: Tensor | None
                       ) -> np.ndarray:
    """round(q) + zero point, clamped to a 2- or 4-bit range, computed in the int8 / uint8
    storage and read back as a host value of `dtype` (picograd has no such dtype: the
    read-back makes the model translate on every call)."""
    v = q.round()
    if zero_point is not None:
        v = v + zero_point.cast(q.dtype)
    info = ml_dtypes.iinfo(dtype)
    stored = v.clamp(float(info.min), float(info.max)).cast(storage_dtype(dtype))
    return from_storage(ctx.host(stored), dtype)


@op("DequantizeLinear", attrs=("axis", "block_size"), min_opset=10)
def _dequantize_linear(ctx: NodeContext, x: Value, scale: Value,
                       zero_point: Value | None = None) -> Tensor:
    """y = (x - zero_point) * scale, in the scale's dtype."""
    tx = _values(ctx, x)
    ts = _along(ctx, scale, tx, "scale")
    if tx.dtype.is_float:  # float8: its zero point is zero
        _check_float8_zero_point(ctx, zero_point)
        v = tx.cast("float32")
    else:
        v = tx.cast("int32")
        if zero_point is not None:
            v = v - _along(ctx, zero_point, tx, "zero point").cast("int32")
        v = v.cast("float32")
    return (v * ts.cast("float32")).cast(ts.dtype)


@op("DynamicQuantizeLinear", min_opset=11)
def _dynamic_quantize_linear(ctx: NodeContext, x: Value) -> tuple[Tensor, Tensor, Tensor]:
    """(y, y_scale, y_zero_point) of uint8 quantization over x's range widened to hold 0:
    scale = (max - min) / 255 (1 when the range is empty), zero point = round(-min / scale)
    clamped to 0..255, y = saturate(round(x / scale) + zero point) — onnxruntime's."""
    tx = ctx.t(x).cast("float32")
    if tx.numel() == 0:  # no range: onnxruntime's scale 1 and zero point 0
        return (ctx.t(np.zeros(tx.shape, np.uint8)), ctx.t(np.array(1.0, np.float32)),
                ctx.t(np.array(0, np.uint8)))
    lo = tx.min().minimum(0.0)
    hi = tx.max().maximum(0.0)
    scale = (hi == lo).where(1.0, (hi - lo) / 255.0)
    zp = (0.0 - lo / scale).clamp(0.0, 255.0).round().cast("uint8")
    return quantize_values(tx / scale, np.dtype(np.uint8), zp), scale, zp


# ── integer matmul and convolution ──────────────────────────────────────────

def _centered(ctx: NodeContext, v: Value, zero_point: Value | None, per: str) -> Tensor:
    """v - zero_point in int32. b's zero point (per="col") may be per column (1-D along
    the last dim, as it broadcasts); a's (per="row") and a conv input's must be one value:
    ONNX describes a per-row one, but onnxruntime refuses it and ONNX's reference
    broadcasts it along the columns, so there is nothing to be checked against."""
    t = ctx.t(v)
    if dtype_of(t) not in _8BIT:
        raise ctx.unsupported(f"integer inputs of {dtype_of(t)} (int8 / uint8 are)")
    out = t.cast("int32")
    if zero_point is None:
        return out
    zp = ctx.t(zero_point).cast("int32")
    if per != "col" and zp.numel() != 1:
        raise ctx.unsupported(f"a zero point of shape {tuple(zp.shape)} for the first input "
                              "(per tensor only)")
    return out - (zp if per == "col" else zp.reshape(()))


def requantize(ctx: NodeContext, acc: Tensor, multiplier: Tensor, y_zero_point: Value
               ) -> Tensor:
    """The int32 accumulator `acc` requantized: round(float32(acc) * multiplier) + y zero
    point, clamped to its dtype."""
    dtype = dtype_of(y_zero_point)
    if dtype not in _8BIT:
        raise ctx.unsupported(f"a {dtype} output (int8 / uint8 are)")
    q = acc.cast("float32") * multiplier
    return quantize_values(q, dtype, ctx.t(y_zero_point))


def _scale(ctx: NodeContext, v: Value) -> Tensor:
    return ctx.t(v).cast("float32")


@op("MatMulInteger", min_opset=10)
def _matmul_integer(ctx: NodeContext, a: Value, b: Value, a_zero_point: Value | None = None,
                    b_zero_point: Value | None = None) -> Tensor:
    """(a - a_zero_point) @ (b - b_zero_point), summed in int32."""
    return _centered(ctx, a, a_zero_point, "row").matmul(
        _centered(ctx, b, b_zero_point, "col"))


@op("QLinearMatMul", min_opset=10)
def _qlinear_matmul(ctx: NodeContext, a: Value, a_scale: Value, a_zero_point: Value,
                    b: Value, b_scale: Value, b_zero_point: Value, y_scale: Value,
                    y_zero_point: Value) -> Tensor:
    """The int32 product of the centred inputs requantized to y's scale and zero point;
    a per-column b_scale broadcasts as b's zero point does."""
    acc = _centered(ctx, a, a_zero_point, "row").matmul(_centered(ctx, b, b_zero_point, "col"))
    sa = _scale(ctx, a_scale)
    if sa.numel() != 1:  # per row: as for a's zero point (_centered)
        raise ctx.unsupported(f"an a_scale of shape {tuple(sa.shape)} (per tensor only)")
    multiplier = sa.reshape(()) * _scale(ctx, b_scale) / _scale(ctx, y_scale)
    return requantize(ctx, acc, multiplier, y_zero_point)


_CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def _per_channel(ctx: NodeContext, v: Value, ndim: int) -> Tensor:
    """A scalar, or a 1-D value per output channel laid along dim 1 of a rank-`ndim` conv
    output."""
    t = ctx.t(v)
    if t.ndim == 1 and t.shape[0] != 1:
        return t.reshape([1, -1] + [1] * (ndim - 2))
    return t.reshape(())


def _integer_conv(ctx: NodeContext, x: Value, x_zero_point: Value | None, w: Value,
                  w_zero_point: Value | None) -> Tensor:
    """conv(x - x_zero_point, w - w_zero_point) as int32; the padding is zeros of the
    centred input (onnxruntime pads x with its zero point). Summed in float64: every
    product and partial sum is an integer below 2**53, so the sum is exact."""
    tx = _centered(ctx, x, x_zero_point, "tensor").cast("float64")
    tw = ctx.t(w)
    if dtype_of(tw) not in _8BIT:
        raise ctx.unsupported(f"integer weights of {dtype_of(tw)} (int8 / uint8 are)")
    tw = tw.cast("int32")
    if w_zero_point is not None:
        zp = ctx.t(w_zero_point).cast("int32")
        if zp.ndim == 1 and zp.shape[0] != 1:  # per output channel: dim 0 of w
            zp = zp.reshape([-1] + [1] * (tw.ndim - 1))
        tw = tw - zp
    # through int64: past int32's range the sum wraps as an int32 accumulator's does
    return _conv(ctx, tx, tw.cast("float64")).cast("int64").cast("int32")


def _conv(ctx: NodeContext, x: Tensor, w: Tensor) -> Tensor:
    n = x.ndim - 2
    if n not in _CONV:
        raise ctx.unsupported(f"a {n}-D convolution")
    strides = list(ctx.attr("strides", [1] * n))
    dilations = list(ctx.attr("dilations", [1] * n))
    begin, end = resolve_pads(ctx, x.shape[2:], w.shape[2:], strides, dilations)
    if begin != end:  # picograd's conv pads symmetrically: pad the rest first
        x, begin = _pre_pad(x, begin, end), [0] * n
    return _CONV[n](x, w, None, strides, begin, dilations, ctx.attr("group", 1))


def _pre_pad(x: Tensor, begin: Sequence[int], end: Sequence[int]) -> Tensor:
    sizes: list[int] = []
    for b, e in zip(reversed(begin), reversed(end), strict=True):
        sizes += [b, e]
    return pad_tensor(x, sizes, "constant", 0.0)


@op("ConvInteger", attrs=_CONV_ATTRS, min_opset=10)
def _conv_integer(ctx: NodeContext, x: Value, w: Value, x_zero_point: Value | None = None,
                  w_zero_point: Value | None = None) -> Tensor:
    return _integer_conv(ctx, x, x_zero_point, w, w_zero_point)


@op("QLinearConv", attrs=_CONV_ATTRS, min_opset=10)
def _qlinear_conv(ctx: NodeContext, x: Value, x_scale: Value, x_zero_point: Value, w: Value,
                  w_scale: Value, w_zero_point: Value, y_scale: Value, y_zero_point: Value,
                  bias: Value | None = None) -> Tensor:
    """The int32 convolution (plus the int32 bias) requantized with the per-output-channel
    multiplier x_scale * w_scale[m] / y_scale."""
    acc = _integer_conv(ctx, x, x_zero_point, w, w_zero_point)
    if bias is not None:
        acc = acc + _per_channel(ctx, ctx.t(bias).cast("int32"), acc.ndim)
    multiplier = (_scale(ctx, x_scale) * _per_channel(ctx, _scale(ctx, w_scale), acc.ndim)
                  / _scale(ctx, y_scale))
    return requantize(ctx, acc, multiplier, y_zero_point)
