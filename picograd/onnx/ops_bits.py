"""Bit-level ONNX ops: BitShift, BitwiseAnd / Or / Xor / Not, BitCast.

All are exact integer ops on picograd's Tensor (`<<`, `>>`, `&`, `|`, `^`, `~`, `bitcast`);
host inputs (constants, shapes) are folded with numpy. The shifts' results outside
[0, width) follow ONNX's reference: 0, or the sign (-1 / 0) for a signed right shift,
which is what picograd's shifts give (torch's rule).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx

from picograd.frontend.tensor import Tensor
from picograd.onnx.dtypes import ONNX_TO_NUMPY, onnx_type_name
from picograd.onnx.registry import NodeContext, Value, is_host, op


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _dtype_of(v: Value) -> np.dtype:
    return np.dtype(v.dtype.np) if isinstance(v, Tensor) else np.asarray(v).dtype


# ── shifts ─────────────────────────────────────────────────────────────────

def _check_shift(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    direction = _text(attrs.get("direction", ""))
    if direction not in ("LEFT", "RIGHT"):
        return f"direction {direction!r} (LEFT or RIGHT)"
    return None


def _host_shift(a: np.ndarray, b: np.ndarray, left: bool) -> np.ndarray:
    """ONNX's shift of host values: amounts outside [0, width) give 0 (the sign for a
    signed right shift); a signed left shift wraps as its unsigned twin's."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    width = a.dtype.itemsize * 8
    inside = (b >= 0) & (b < width)
    amount = np.where(inside, b, 0).astype(np.uint64 if a.dtype.kind == "u" else np.int64)
    if left:
        unsigned = a.view(f"u{a.dtype.itemsize}")
        shifted = np.left_shift(unsigned, amount.astype(unsigned.dtype)).view(a.dtype)
        return np.where(inside, shifted, 0).astype(a.dtype)
    shifted = np.right_shift(a, amount.astype(a.dtype))
    fill = np.where(a < 0, -1, 0) if a.dtype.kind == "i" else 0
    return np.where(inside, shifted, fill).astype(a.dtype)


@op("BitShift", attrs=("direction",), min_opset=11, check=_check_shift)
def _bit_shift(ctx: NodeContext, x: Value, y: Value) -> Value:
    """x << y or x >> y elementwise (broadcast), in x's dtype."""
    left = _text(ctx.attr("direction")) == "LEFT"
    if is_host(x, y):
        return _host_shift(np.asarray(x), np.asarray(y), left)
    a, b = ctx.t(x), ctx.t(y)
    return a << b if left else a >> b


# ── bitwise logic ──────────────────────────────────────────────────────────

_BITWISE: dict[str, tuple[Callable[[Tensor, Tensor], Tensor], Callable[..., Any]]] = {
    "BitwiseAnd": (lambda a, b: a & b, np.bitwise_and),
    "BitwiseOr": (lambda a, b: a | b, np.bitwise_or),
    "BitwiseXor": (lambda a, b: a ^ b, np.bitwise_xor),
}


@op("BitwiseAnd", "BitwiseOr", "BitwiseXor", min_opset=18)
def _bitwise(ctx: NodeContext, a: Value, b: Value) -> Value:
    """a & b, a | b, a ^ b elementwise (broadcast); ONNX's inputs share one dtype."""
    dev, host = _BITWISE[ctx.node.op_type]
    if is_host(a, b):
        return np.asarray(host(a, b)).astype(_dtype_of(a))
    return dev(ctx.t(a), ctx.t(b))


@op("BitwiseNot", min_opset=18)
def _bitwise_not(ctx: NodeContext, x: Value) -> Value:
    if is_host(x):
        return np.invert(np.asarray(x))
    return ~ctx.t(x)


# ── BitCast ────────────────────────────────────────────────────────────────

def _check_bitcast(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    to = attrs.get("to")
    if to not in ONNX_TO_NUMPY:
        return f"a bitcast to element type {onnx_type_name(to or 0)} is not supported"
    return None


@op("BitCast", attrs=("to",), min_opset=26, check=_check_bitcast)
def _bit_cast(ctx: NodeContext, x: Value) -> Value:
    """x's bits read as `to` (same item size). Bool <-> a byte type is a cast (False / True
    are the bytes 0 / 1; a byte other than 0 or 1 read as bool is True, as numpy shows
    it): picograd's bitcast does not take bool."""
    dtype = ONNX_TO_NUMPY[ctx.attr("to")]
    src = _dtype_of(x)
    if src.itemsize != dtype.itemsize:
        raise ctx.unsupported(f"BitCast from {src} to {dtype}: the item sizes differ")
    if is_host(x):
        return np.asarray(x).view(dtype)
    t = ctx.t(x)
    if dtype == np.bool_:
        return t != 0
    if src == np.bool_:
        return t.cast(dtype)
    return t.bitcast(dtype)
