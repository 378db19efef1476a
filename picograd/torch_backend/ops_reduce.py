"""Reductions and matrix products: sum, mean, prod, var, amax/amin, max/min along a dim,
argmax/argmin, sort, topk, cumsum, (log_)softmax, mm, bmm, addmm."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import picograd as pg
from picograd.frontend.tensor import Tensor
from picograd.torch_backend.registry import aten, pg_dtype

A = torch.ops.aten


def _dims(dim: Sequence[int] | int | None) -> Any:
    """aten's dim list: None and [] both mean every dim."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return None
    return dim if isinstance(dim, int) else tuple(dim)


def _accumulated(x: Tensor, dtype: Any, op: str) -> Any:
    """The dtype torch sums / multiplies `x` in: `dtype` when given, int64 for integer and
    bool inputs (picograd keeps their own width, so an int32 sum would wrap where torch's
    does not), else the input's."""
    if dtype is not None:
        return pg_dtype(dtype, op)
    return pg.int64 if x.dtype.is_int or x.dtype.is_bool else None


@aten(A.sum.dim_IntList)
def _sum(x: Tensor, dim: Sequence[int] | None = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    return x.sum(_dims(dim), keepdim, dtype=_accumulated(x, dtype, "aten.sum"))


@aten(A.sum.default)
def _sum_all(x: Tensor, *, dtype: Any = None) -> Tensor:
    return x.sum(dtype=_accumulated(x, dtype, "aten.sum"))


@aten(A.mean.dim)
def _mean(x: Tensor, dim: Sequence[int] | None = None, keepdim: bool = False, *,
          dtype: Any = None) -> Tensor:
    return x.mean(_dims(dim), keepdim, dtype=pg_dtype(dtype, "aten.mean"))


@aten(A.mean.default)
def _mean_all(x: Tensor, *, dtype: Any = None) -> Tensor:
    return x.mean(dtype=pg_dtype(dtype, "aten.mean"))


@aten(A.amax.default)
def _amax(x: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    return x.amax(tuple(dim), keepdim)


@aten(A.amin.default)
def _amin(x: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    return x.amin(tuple(dim), keepdim)


@aten(A.prod.default)
def _prod_all(x: Tensor, *, dtype: Any = None) -> Tensor:
    return x.prod(dtype=_accumulated(x, dtype, "aten.prod"))


@aten(A.prod.dim_int)
def _prod(x: Tensor, dim: int, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    return x.prod(dim, keepdim, dtype=_accumulated(x, dtype, "aten.prod"))


@aten(A.var.correction)
def _var(x: Tensor, dim: Sequence[int] | None = None, *, correction: Any = None,
         keepdim: bool = False) -> Tensor:
    return x.var(_dims(dim), 1 if correction is None else correction, keepdim)


@aten(A.var.dim)
def _var_unbiased(x: Tensor, dim: Sequence[int] | None = None, unbiased: bool = True,
                  keepdim: bool = False) -> Tensor:
    return x.var(_dims(dim), 1 if unbiased else 0, keepdim)


@aten(A.argmax.default)
def _argmax(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return x.argmax(dim, keepdim)


@aten(A.argmin.default)
def _argmin(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return x.argmin(dim, keepdim)


@aten(A.max.dim)
def _max_dim(x: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return x.max(dim, keepdim), x.argmax(dim, keepdim)


@aten(A.min.dim)
def _min_dim(x: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return x.min(dim, keepdim), x.argmin(dim, keepdim)


@aten(A.sort.default)
def _sort(x: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    return tuple(x.sort(dim, descending))  # type: ignore[return-value]


@aten(A.topk.default)
def _topk(x: Tensor, k: int, dim: int = -1, largest: bool = True,
          sorted: bool = True) -> tuple[Tensor, Tensor]:
    return tuple(x.topk(k, dim, largest, sorted))  # type: ignore[return-value]


@aten(A.cumsum.default)
def _cumsum(x: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    accumulated = _accumulated(x, dtype, "aten.cumsum")
    if accumulated is not None:  # torch sums in it: the input is cast first
        x = x.cast(accumulated)
    return x.cumsum(dim)


@aten(A._log_softmax.default)
def _log_softmax(x: Tensor, dim: int, half_to_float: bool = False) -> Tensor:
    return x.log_softmax(dim)


@aten(A._softmax.default)
def _softmax(x: Tensor, dim: int, half_to_float: bool = False) -> Tensor:
    return x.softmax(dim)


@aten(A.mm.default, A.bmm.default)
def _mm(x: Tensor, y: Tensor) -> Tensor:
    return x.matmul(y)


@aten(A.addmm.default)
def _addmm(bias: Tensor, x: Tensor, y: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    product = x.matmul(y)
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # torch ignores the bias then, NaNs included
        return product
    return product + (bias if beta == 1 else bias * beta)
