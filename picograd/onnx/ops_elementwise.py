"""Elementwise ONNX ops: arithmetic, comparisons, logic, activations, Cast, Clip, Where.

Inputs that are all host values (constants, shapes) are computed with numpy on the host
(`_fold`), so shape arithmetic launches no kernel; anything else becomes Tensor ops. ONNX
ops keep their input dtype (Pow's result is the base's dtype, integer Div truncates), so
results are cast back where picograd would promote.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce
from typing import Any

import ml_dtypes
import numpy as np
import onnx

from picograd.frontend import maximum, minimum, where
from picograd.frontend.tensor import Tensor
from picograd.onnx.dtypes import cast_host, is_host_only, numpy_dtype, onnx_type
from picograd.onnx.registry import NodeContext, Value, is_host, op


def _fold(fn: Callable[..., Any], *values: Any, dtype: np.dtype | None = None
          ) -> np.ndarray:
    out = np.asarray(fn(*values))
    return out.astype(dtype if dtype is not None else np.asarray(values[0]).dtype, copy=False)


def _int_div(a: Any, b: Any) -> np.ndarray:
    """Integer division rounding toward zero (C's, onnxruntime's), exact for int64."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


# ── arithmetic ─────────────────────────────────────────────────────────────

# opsets 1-6 broadcast only with `broadcast=1`, B against a run of A's dims from `axis`
_LEGACY = ("broadcast", "axis")


def _legacy_broadcast(ctx: NodeContext, a: Value, b: Value) -> Value:
    """B as numpy broadcasting reads it under opset 1-6's rule: with `broadcast=1`, B's dims
    match A's (or are 1) from `axis` on (default: A's last dims), so trailing 1s are
    appended (a (3,) bias over axis 1 of (2, 3, 4, 5) is (3, 1, 1)). Without it, the
    shapes are equal."""
    if ctx.opset >= 7 or not ctx.attr("broadcast", 0):
        return b
    a_rank, b_shape = len(a.shape), tuple(b.shape)
    axis = ctx.attr("axis", a_rank - len(b_shape))
    axis = axis + a_rank if axis < 0 else axis
    if not 0 <= axis <= a_rank - len(b_shape) or not all(
            m in (n, 1) for n, m in zip(a.shape[axis:], b_shape, strict=False)):
        raise ctx.unsupported(f"shape {b_shape} does not broadcast to {tuple(a.shape)} at "
                              f"axis {axis}")
    return b.reshape(b_shape + (1,) * (a_rank - axis - len(b_shape)))


_BINARY: dict[str, tuple[Callable[[Tensor, Tensor], Tensor], Callable[..., Any]]] = {
    "Add": (lambda a, b: a + b, np.add),
    "Sub": (lambda a, b: a - b, np.subtract),
    "Mul": (lambda a, b: a * b, np.multiply),
}


@op("Add", "Sub", "Mul", attrs=_LEGACY)
def _arith(ctx: NodeContext, a: Value, b: Value) -> Value:
    dev, host = _BINARY[ctx.node.op_type]
    b = _legacy_broadcast(ctx, a, b)
    if is_host(a, b):
        return _fold(host, a, b)
    return dev(ctx.t(a), ctx.t(b))


@op("Div", attrs=_LEGACY)
def _div(ctx: NodeContext, a: Value, b: Value) -> Value:
    b = _legacy_broadcast(ctx, a, b)
    integer = np.dtype(ctx.t(a).dtype.np if isinstance(a, Tensor) else a.dtype).kind in "iu"
    if is_host(a, b):
        return _int_div(a, b) if integer else _fold(np.divide, a, b)
    if integer:
        return ctx.t(a).div(ctx.t(b), rounding_mode="trunc")
    return ctx.t(a) / ctx.t(b)


@op("Mod", attrs=("fmod",))
def _mod(ctx: NodeContext, a: Value, b: Value) -> Value:
    if ctx.attr("fmod", 0):
        return ctx.t(a).fmod(ctx.t(b))
    return ctx.t(a).remainder(ctx.t(b))


@op("Pow", attrs=_LEGACY)
def _pow(ctx: NodeContext, x: Value, y: Value) -> Value:
    y = _legacy_broadcast(ctx, x, y)
    base = ctx.t(x)
    return base.pow(ctx.t(y)).cast(base.dtype)


_UNARY: dict[str, Callable[[Tensor], Tensor]] = {
    "Neg": lambda x: -x, "Abs": lambda x: x.abs(), "Exp": lambda x: x.exp(),
    "Log": lambda x: x.log(), "Sqrt": lambda x: x.sqrt(),
    "Reciprocal": lambda x: x.reciprocal(), "Relu": lambda x: x.relu(),
    "Sigmoid": lambda x: x.sigmoid(), "Tanh": lambda x: x.tanh(), "Erf": lambda x: x.erf(),
    "Floor": lambda x: x.floor(), "Ceil": lambda x: x.ceil(), "Round": lambda x: x.round(),
    "Sign": lambda x: x.sign(), "Sin": lambda x: x.sin(), "Cos": lambda x: x.cos(),
    "Tan": lambda x: x.tan(), "Asin": lambda x: x.asin(), "Acos": lambda x: x.acos(),
    "Atan": lambda x: x.atan(), "Sinh": lambda x: x.sinh(), "Cosh": lambda x: x.cosh(),
    "Asinh": lambda x: x.asinh(), "Acosh": lambda x: x.acosh(),
    "Atanh": lambda x: x.atanh(), "Softsign": lambda x: x.softsign(),
    "Mish": lambda x: x.mish(), "Not": lambda x: x.logical_not(),
    "IsNaN": lambda x: x.isnan(),
}
# folded on the host when the input is a host value (shape arithmetic, an attention scale
# computed from a shape): the exact ones only, whose result is the device's to the bit
# (sqrt and reciprocal are correctly rounded, round is half to even in both)
_UNARY_HOST: dict[str, Callable[..., Any]] = {
    "Neg": np.negative, "Abs": np.abs, "Not": np.logical_not, "Sign": np.sign,
    "Sqrt": np.sqrt, "Reciprocal": np.reciprocal, "Floor": np.floor, "Ceil": np.ceil,
    "Round": np.round,
}


@op(*_UNARY)
def _unary(ctx: NodeContext, x: Value) -> Value:
    name = ctx.node.op_type
    if is_host(x) and name in _UNARY_HOST:
        return _fold(_UNARY_HOST[name], x)
    return _UNARY[name](ctx.t(x))


# ── activations with attributes ─────────────────────────────────────────────

@op("LeakyRelu", attrs=("alpha",))
def _leaky_relu(ctx: NodeContext, x: Value) -> Tensor:
    return ctx.t(x).leaky_relu(ctx.attr("alpha", 0.01))


@op("Elu", attrs=("alpha",))
def _elu(ctx: NodeContext, x: Value) -> Tensor:
    return ctx.t(x).elu(ctx.attr("alpha", 1.0))


@op("Celu", attrs=("alpha",))
def _celu(ctx: NodeContext, x: Value) -> Tensor:
    return ctx.t(x).celu(ctx.attr("alpha", 1.0))


@op("Selu", attrs=("alpha", "gamma"))
def _selu(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    alpha = ctx.attr("alpha", 1.67326319217681884765625)
    gamma = ctx.attr("gamma", 1.05070102214813232421875)
    return where(t > 0, t, (t.exp() - 1) * alpha) * gamma


@op("ThresholdedRelu", attrs=("alpha",))
def _thresholded_relu(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    return where(t > ctx.attr("alpha", 1.0), t, t * 0)


@op("HardSigmoid", attrs=("alpha", "beta"))
def _hard_sigmoid(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    return (t * ctx.attr("alpha", 0.2) + ctx.attr("beta", 0.5)).clamp(0.0, 1.0)


@op("HardSwish")
def _hard_swish(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    return t * (t * (1 / 6) + 0.5).clamp(0.0, 1.0)


@op("Softplus")
def _softplus(ctx: NodeContext, x: Value) -> Tensor:
    return ctx.t(x).softplus()


@op("Gelu", attrs=("approximate",), min_opset=20,
    check=lambda n, a, o: None if a.get("approximate", b"none") in (b"none", b"tanh", "none",
                                                                     "tanh")
    else f"approximate={a['approximate']!r}")
def _gelu(ctx: NodeContext, x: Value) -> Tensor:
    approximate = ctx.attr("approximate", b"none")
    approximate = approximate.decode() if isinstance(approximate, bytes) else approximate
    return ctx.t(x).gelu(approximate=approximate)


@op("IsInf", attrs=("detect_negative", "detect_positive"))
def _is_inf(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    negative, positive = ctx.attr("detect_negative", 1), ctx.attr("detect_positive", 1)
    if negative and positive:
        return t.isinf()
    if negative:
        return t.isneginf()
    if positive:
        return t.isposinf()
    return t.isinf() & False


@op("Shrink", attrs=("bias", "lambd"))
def _shrink(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    bias, lambd = ctx.attr("bias", 0.0), ctx.attr("lambd", 0.5)
    return where(t < -lambd, t + bias, where(t > lambd, t - bias, t * 0))


@op("PRelu")
def _prelu(ctx: NodeContext, x: Value, slope: Value) -> Tensor:
    t, s = ctx.t(x), ctx.t(slope)
    if ctx.opset < 7 and s.ndim == 1 and s.shape[0] > 1 and t.ndim > 1 and \
            s.shape[0] == t.shape[1]:  # opset 6: one slope per channel (dim 1)
        s = s.reshape((s.shape[0],) + (1,) * (t.ndim - 2))
    return where(t < 0, t * s, t)


@op("Clip", attrs=("min", "max"))
def _clip(ctx: NodeContext, x: Value, lo: Value | None = None, hi: Value | None = None
          ) -> Value:
    t = ctx.t(x)
    if ctx.opset < 11:
        return t.clamp(ctx.attr("min", -float("inf")), ctx.attr("max", float("inf")))
    if lo is not None:
        t = t.clamp(min=lo.item()) if is_host(lo) else maximum(t, ctx.t(lo))
    if hi is not None:
        t = t.clamp(max=hi.item()) if is_host(hi) else minimum(t, ctx.t(hi))
    return t


# ── variadic, comparisons, logic ───────────────────────────────────────────

@op("Min", "Max", "Sum", "Mean")
def _variadic(ctx: NodeContext, *xs: Value) -> Value:
    name = ctx.node.op_type
    if is_host(*xs) and name in ("Min", "Max", "Sum"):
        host = {"Min": np.minimum, "Max": np.maximum, "Sum": np.add}[name]
        return _fold(lambda *v: reduce(host, v), *xs)
    ts = [ctx.t(x) for x in xs]
    if name == "Min":
        return reduce(minimum, ts)
    if name == "Max":
        return reduce(maximum, ts)
    total = reduce(lambda a, b: a + b, ts)
    return total if name == "Sum" else total / len(ts)


_COMPARE: dict[str, tuple[Callable[[Tensor, Tensor], Tensor], Callable[..., Any]]] = {
    "Equal": (lambda a, b: a == b, np.equal), "Less": (lambda a, b: a < b, np.less),
    "Greater": (lambda a, b: a > b, np.greater),
    "LessOrEqual": (lambda a, b: a <= b, np.less_equal),
    "GreaterOrEqual": (lambda a, b: a >= b, np.greater_equal),
    "And": (lambda a, b: a & b, np.logical_and), "Or": (lambda a, b: a | b, np.logical_or),
    "Xor": (lambda a, b: a ^ b, np.logical_xor),
}


@op(*_COMPARE, attrs=_LEGACY)
def _compare(ctx: NodeContext, a: Value, b: Value) -> Value:
    dev, host = _COMPARE[ctx.node.op_type]
    b = _legacy_broadcast(ctx, a, b)
    if is_host(a, b):
        return _fold(host, a, b, dtype=np.dtype(np.bool_))
    return dev(ctx.t(a), ctx.t(b))


@op("Where")
def _where(ctx: NodeContext, cond: Value, x: Value, y: Value) -> Value:
    if is_host(cond, x, y):
        return _fold(np.where, cond, x, y, dtype=np.asarray(x).dtype)
    return where(ctx.t(cond), ctx.t(x), ctx.t(y))


# ── casts and identities ───────────────────────────────────────────────────

def _check_cast(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    if node.op_type == "Cast" and numpy_dtype(attrs.get("to", 0)) is None:
        return f"a cast to element type {attrs.get('to')} is not supported"
    if _text(attrs.get("round_mode", b"up")) not in ("up", "down", "nearest"):
        return f"round_mode={attrs['round_mode']!r} is not supported"
    return None


_E4M3FN = np.dtype(ml_dtypes.float8_e4m3fn)
_FLOAT8 = {_E4M3FN, np.dtype(ml_dtypes.float8_e5m2)}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _source_dtype(x: Value) -> np.dtype:
    return np.dtype(x.dtype.np) if isinstance(x, Tensor) else np.asarray(x).dtype


def _cast_host_only(ctx: NodeContext, x: Value, dtype: np.dtype) -> np.ndarray:
    """A cast to or from a host-only type (INT4, FLOAT4E2M1, the fnuz float8 kinds, ...:
    dtypes.py), or one picograd's kernels cannot do exactly, on the host as onnx's
    reference; a device value is read back."""
    to = onnx_type(dtype)
    assert to is not None  # check_cast / CastLike's input: a type numpy_dtype knows
    return cast_host(ctx.host(x), to, bool(ctx.attr("saturate", 1)),
                     _text(ctx.attr("round_mode", b"up")))


def cast_value(ctx: NodeContext, x: Value, dtype: np.dtype) -> Value:
    """`x` as `dtype`: on the host for a host value, else a Tensor cast. Casts to float8
    saturate by default as ONNX's (out-of-range values and infinities become the largest
    finite value, NaN stays NaN); `saturate=0` keeps e5m2's infinities. A cast to or from
    a host-only type runs on the host (`_cast_host_only`)."""
    if is_host_only(dtype) or is_host_only(_source_dtype(x)):
        return _cast_host_only(ctx, x, dtype)
    if dtype == _E4M3FN and not ctx.attr("saturate", 1):
        # picograd's e4m3fn encoding saturates; ONNX's saturate=0 wants NaN past the
        # range: converted on the host as onnx's reference (a device value is read back)
        return _cast_host_only(ctx, x, dtype)
    if dtype in _FLOAT8:
        t = ctx.t(x)
        if ctx.attr("saturate", 1) and t.dtype.is_float:
            top = float(ml_dtypes.finfo(dtype).max)
            t = t.clamp(-top, top)
        return t.cast(dtype)
    if is_host(x):
        return np.asarray(x).astype(dtype)
    return ctx.t(x).cast(dtype)


@op("Cast", attrs=("to", "saturate", "round_mode"), check=_check_cast)
def _cast(ctx: NodeContext, x: Value) -> Value:
    dtype = numpy_dtype(ctx.attr("to"))
    assert dtype is not None  # _check_cast
    return cast_value(ctx, x, dtype)


@op("CastLike", attrs=("saturate", "round_mode"), check=_check_cast)
def _cast_like(ctx: NodeContext, x: Value, like: Value) -> Value:
    return cast_value(ctx, x, _source_dtype(like))


@op("Identity")
def _identity(ctx: NodeContext, x: Value) -> Value:
    return x


@op("Dropout", attrs=("ratio", "seed"))
def _dropout(ctx: NodeContext, x: Value, ratio: Value | None = None,
             training_mode: Value | None = None) -> Value | tuple[Value, Value]:
    if training_mode is not None and bool(ctx.host(training_mode)):
        raise ctx.unsupported("training_mode=True (random dropout) is not supported")
    if ctx.n_outputs > 1 and ctx.node.output[1]:
        shape = tuple(x.shape)
        return x, ctx.t(np.ones(shape, np.bool_))
    return x
