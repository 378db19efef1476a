"""Constant, TopK, CumSum, Einsum, Trilu and the like: ops that fit no other family."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from picograd.frontend.ops_linalg import einsum
from picograd.frontend.ops_shape import pad
from picograd.onnx.dtypes import numpy_dtype
from picograd.onnx.registry import NodeContext, Value, op

_CONSTANT_ATTRS = ("value", "value_float", "value_floats", "value_int", "value_ints")


def _check_constant(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    if len(attrs) != 1:
        return "a Constant needs exactly one value attribute"
    proto = attrs.get("value")
    if proto is not None and numpy_dtype(proto.data_type) is None:
        return f"a constant of element type {proto.data_type} is not supported"
    return None


@op("Constant", attrs=_CONSTANT_ATTRS, check=_check_constant)
def _constant(ctx: NodeContext) -> np.ndarray:
    if "value" in ctx.attrs:
        proto = ctx.attr("value")
        return np.asarray(numpy_helper.to_array(proto), dtype=numpy_dtype(proto.data_type))
    if "value_float" in ctx.attrs:
        return np.array(ctx.attr("value_float"), dtype=np.float32)
    if "value_floats" in ctx.attrs:
        return np.array(ctx.attr("value_floats"), dtype=np.float32)
    if "value_int" in ctx.attrs:
        return np.array(ctx.attr("value_int"), dtype=np.int64)
    return np.array(ctx.attr("value_ints"), dtype=np.int64)


@op("TopK", attrs=("axis", "largest", "sorted", "k"))
def _topk(ctx: NodeContext, x: Value, k: Value | None = None) -> tuple[Value, Value]:
    t = ctx.t(x)
    count = ctx.ints(k)[0] if k is not None else ctx.attr("k")
    axis = ctx.attr("axis", -1)
    values, indices = t.topk(count, axis, bool(ctx.attr("largest", 1)),
                             bool(ctx.attr("sorted", 1)))
    return values, indices.cast("int64")


@op("CumSum", attrs=("exclusive", "reverse"))
def _cumsum(ctx: NodeContext, x: Value, axis: Value) -> Value:
    t = ctx.t(x)
    a = ctx.ints(axis)[0]
    a = a + t.ndim if a < 0 else a
    if ctx.attr("reverse", 0):
        t = t.flip(a)
    out = t.cumsum(a).cast(t.dtype)
    if ctx.attr("exclusive", 0):  # shift by one: a zero first, the last sum dropped
        sizes = [0, 0] * (t.ndim - 1 - a) + [1, 0]
        index = tuple([slice(None)] * a + [slice(0, t.shape[a])])
        out = pad(out, sizes, "constant", 0)[index]
    return out.flip(a) if ctx.attr("reverse", 0) else out


@op("Einsum", attrs=("equation",))
def _einsum(ctx: NodeContext, *xs: Value) -> Value:
    equation = ctx.attr("equation")
    equation = equation.decode() if isinstance(equation, bytes) else equation
    return einsum(equation, *[ctx.t(x) for x in xs])


@op("Trilu", attrs=("upper",))
def _trilu(ctx: NodeContext, x: Value, k: Value | None = None) -> Value:
    t = ctx.t(x)
    diagonal = ctx.ints(k)[0] if k is not None else 0
    return t.triu(diagonal) if ctx.attr("upper", 1) else t.tril(diagonal)
