"""Reductions and matrix products: sum, mean, amax/amin, (log_)softmax, mm, bmm, addmm."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from picograd.frontend.tensor import Tensor
from picograd.torch_backend.registry import aten, pg_dtype

A = torch.ops.aten


def _dims(dim: Sequence[int] | int | None) -> Any:
    """aten's dim list: None and [] both mean every dim."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return None
    return dim if isinstance(dim, int) else tuple(dim)


@aten(A.sum.dim_IntList)
def _sum(x: Tensor, dim: Sequence[int] | None = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    return x.sum(_dims(dim), keepdim, dtype=pg_dtype(dtype, "aten.sum"))


@aten(A.sum.default)
def _sum_all(x: Tensor, *, dtype: Any = None) -> Tensor:
    return x.sum(dtype=pg_dtype(dtype, "aten.sum"))


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


@aten(A.cumsum.default)
def _cumsum(x: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    if dtype is not None:  # torch sums in `dtype`: the input is cast first
        x = x.cast(pg_dtype(dtype, "aten.cumsum"))
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
