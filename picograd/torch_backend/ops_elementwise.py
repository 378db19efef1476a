"""Elementwise ATen ops: arithmetic, comparisons, logic, activations, `where`, casts.

Python scalars stay python scalars, so picograd applies torch's promotion rules to them
(a float32 tensor times 0.5 stays float32).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch

import picograd as pg
from picograd.frontend.tensor import Tensor
from picograd.torch_backend.registry import aten, check_placement, like, pg_dtype

A = torch.ops.aten


def _binary(fn: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def translate(x: Any, y: Any) -> Any:
        if not isinstance(x, Tensor):  # `rsub`-style scalar first: make it a tensor
            x = like(y, x)
        return fn(x, y)
    return translate


_BINARY: dict[Any, Callable[[Any, Any], Any]] = {
    A.mul.Tensor: operator.mul, A.mul.Scalar: operator.mul,
    A.div.Tensor: operator.truediv, A.div.Scalar: operator.truediv,
    A.eq.Tensor: operator.eq, A.eq.Scalar: operator.eq,
    A.ne.Tensor: operator.ne, A.ne.Scalar: operator.ne,
    A.lt.Tensor: operator.lt, A.lt.Scalar: operator.lt,
    A.le.Tensor: operator.le, A.le.Scalar: operator.le,
    A.gt.Tensor: operator.gt, A.gt.Scalar: operator.gt,
    A.ge.Tensor: operator.ge, A.ge.Scalar: operator.ge,
    A.bitwise_and.Tensor: operator.and_, A.bitwise_or.Tensor: operator.or_,
    A.bitwise_xor.Tensor: operator.xor, A.logical_and.default: operator.and_,
    A.logical_or.default: operator.or_,
    A.maximum.default: pg.maximum, A.minimum.default: pg.minimum,
    A.pow.Tensor_Scalar: operator.pow, A.pow.Tensor_Tensor: operator.pow,
    A.remainder.Tensor: Tensor.remainder, A.remainder.Scalar: Tensor.remainder,
    A.fmod.Tensor: Tensor.fmod, A.fmod.Scalar: Tensor.fmod, A.atan2.default: Tensor.atan2,
    A.bitwise_and.Scalar: operator.and_, A.bitwise_or.Scalar: operator.or_,
    A.bitwise_xor.Scalar: operator.xor,
    A.logical_xor.default: lambda x, y: x.cast(pg.bool) != like(x, y).cast(pg.bool),
    A.pow.Scalar: operator.pow,  # a python base: `_binary` makes it the first operand
}
for _overload, _fn in _BINARY.items():
    aten(_overload)(_binary(_fn))

_UNARY: dict[Any, Callable[[Any], Any]] = {
    A.neg.default: operator.neg, A.exp.default: Tensor.exp, A.log.default: Tensor.log,
    A.sqrt.default: Tensor.sqrt, A.rsqrt.default: Tensor.rsqrt, A.abs.default: Tensor.abs,
    A.relu.default: Tensor.relu, A.sigmoid.default: Tensor.sigmoid,
    A.tanh.default: Tensor.tanh, A.sin.default: Tensor.sin, A.cos.default: Tensor.cos,
    A.reciprocal.default: Tensor.reciprocal, A.bitwise_not.default: operator.invert,
    A.logical_not.default: Tensor.logical_not, A.erf.default: Tensor.erf,
    A.log1p.default: Tensor.log1p, A.expm1.default: Tensor.expm1, A.log2.default: Tensor.log2,
    A.sign.default: Tensor.sign, A.floor.default: Tensor.floor, A.ceil.default: Tensor.ceil,
    A.trunc.default: Tensor.trunc, A.round.default: Tensor.round, A.tan.default: Tensor.tan,
    A.asin.default: Tensor.asin, A.acos.default: Tensor.acos, A.atan.default: Tensor.atan,
    A.sinh.default: Tensor.sinh, A.cosh.default: Tensor.cosh, A.asinh.default: Tensor.asinh,
    A.acosh.default: Tensor.acosh, A.atanh.default: Tensor.atanh,
    A.log10.default: Tensor.log10, A.isinf.default: Tensor.isinf,
    A.isnan.default: Tensor.isnan,
}
for _overload, _fn in _UNARY.items():
    aten(_overload)(_fn)


def _alpha(y: Any, alpha: Any) -> Any:
    return y if alpha == 1 else y * alpha


@aten(A.add.Tensor, A.add.Scalar)
def _add(x: Any, y: Any, *, alpha: Any = 1) -> Any:
    return _binary(operator.add)(x, _alpha(y, alpha))


@aten(A.sub.Tensor, A.sub.Scalar)
def _sub(x: Any, y: Any, *, alpha: Any = 1) -> Any:
    return _binary(operator.sub)(x, _alpha(y, alpha))


@aten(A.rsub.Scalar)
def _rsub(x: Tensor, y: Any, alpha: Any = 1) -> Any:
    return like(x, y) - _alpha(x, alpha)


@aten(A.where.self)
def _where(cond: Tensor, x: Any, y: Any) -> Tensor:
    return pg.where(cond, x, y)


@aten(A.clamp.default, A.clamp.Tensor)
def _clamp(x: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return x.clamp(min, max)


@aten(A.div.Tensor_mode, A.div.Scalar_mode)
def _div_mode(x: Any, y: Any, *, rounding_mode: str | None = None) -> Any:
    return _binary(lambda a, b: a.div(b, rounding_mode=rounding_mode))(x, y)


@aten(A.fill.Scalar)
def _fill(x: Tensor, value: Any) -> Tensor:
    return Tensor.full(x.shape, value, dtype=x.dtype, device=x.device)


@aten(A.alias.default, A.clone.default, A.lift_fresh_copy.default)
def _identity(x: Tensor, *, memory_format: Any = None) -> Tensor:
    # values are immutable in a functional graph: an alias or a copy is the value itself
    return x


@aten(A._to_copy.default)
def _to_copy(x: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
             pin_memory: Any = None, non_blocking: bool = False,
             memory_format: Any = None) -> Tensor:
    check_placement("aten._to_copy", layout, device, pin_memory)
    return x if dtype is None else x.cast(pg_dtype(dtype, "aten._to_copy"))


@aten(A.scalar_tensor.default)
def _scalar_tensor(value: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                   pin_memory: Any = None) -> Tensor:
    check_placement("aten.scalar_tensor", layout, device, pin_memory)
    return Tensor.full((), value, dtype=pg_dtype(dtype, "aten.scalar_tensor", pg.float32))


@aten(A.full.default)
def _full(size: Any, value: Any, *, dtype: Any = None, layout: Any = None,
          device: Any = None, pin_memory: Any = None) -> Tensor:
    check_placement("aten.full", layout, device, pin_memory)
    default = pg.float32 if isinstance(value, float) else (
        pg.bool if isinstance(value, bool) else pg.int64)
    return Tensor.full(tuple(size), value, dtype=pg_dtype(dtype, "aten.full", default))


@aten(A.full_like.default)
def _full_like(x: Tensor, value: Any, *, dtype: Any = None, layout: Any = None,
               device: Any = None, pin_memory: Any = None, memory_format: Any = None
               ) -> Tensor:
    check_placement("aten.full_like", layout, device, pin_memory)
    return Tensor.full(x.shape, value, dtype=pg_dtype(dtype, "aten.full_like", x.dtype),
                       device=x.device)


@aten(A.arange.start_step, A.arange.start, A.arange.default)
def _arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
            layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    check_placement("aten.arange", layout, device, pin_memory)
    values = (start, end, step)
    default = pg.float32 if any(isinstance(v, float) for v in values) else pg.int64
    return Tensor.arange(start, end, step, dtype=pg_dtype(dtype, "aten.arange", default))
