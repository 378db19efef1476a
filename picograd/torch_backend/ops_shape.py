"""Movement and indexing ATen ops: views, permutes, concatenation, slices, gathers and
scatters. A functional graph has no aliasing to keep, so every view is a plain reshape."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import picograd as pg
from picograd.frontend.tensor import Tensor
from picograd.torch_backend.registry import TorchUnsupported, aten

A = torch.ops.aten


@aten(A.view.default, A._unsafe_view.default, A.reshape.default)
def _view(x: Tensor, shape: Sequence[int]) -> Tensor:
    return x.reshape(tuple(shape))


@aten(A.permute.default)
def _permute(x: Tensor, dims: Sequence[int]) -> Tensor:
    return x.permute(tuple(dims))


@aten(A.t.default)
def _t(x: Tensor) -> Tensor:
    return x if x.ndim < 2 else x.transpose(0, 1)


@aten(A.transpose.int)
def _transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    return x.transpose(dim0, dim1)


@aten(A.unsqueeze.default)
def _unsqueeze(x: Tensor, dim: int) -> Tensor:
    return x.unsqueeze(dim)


@aten(A.squeeze.dims, A.squeeze.dim, A.squeeze.default)
def _squeeze(x: Tensor, dims: int | Sequence[int] | None = None) -> Tensor:
    if dims is None:
        return x.squeeze()
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    # torch drops only the listed dims of size 1 and ignores the others
    keep = [d % x.ndim for d in dims if x.shape[d] == 1] if x.ndim else []
    return x.reshape(tuple(n for i, n in enumerate(x.shape) if i not in keep))


@aten(A.expand.default)
def _expand(x: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:
    lead = len(size) - x.ndim
    shape = tuple(x.shape[i - lead] if n == -1 else n for i, n in enumerate(size))
    return x.expand(shape)


@aten(A.flip.default)
def _flip(x: Tensor, dims: Sequence[int]) -> Tensor:
    return x.flip(tuple(dims))


@aten(A.tril.default)
def _tril(x: Tensor, diagonal: int = 0) -> Tensor:
    return x.tril(diagonal)


@aten(A.triu.default)
def _triu(x: Tensor, diagonal: int = 0) -> Tensor:
    return x.triu(diagonal)


@aten(A.cat.default)
def _cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    return pg.cat(list(tensors), dim=dim)


@aten(A.slice.Tensor)
def _slice(x: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
           step: int = 1) -> Tensor:
    index = [slice(None)] * x.ndim
    index[dim] = slice(start, end, step)
    return x[tuple(index)]


@aten(A.select.int)
def _select(x: Tensor, dim: int, index: int) -> Tensor:
    items: list[Any] = [slice(None)] * x.ndim
    items[dim] = index
    return x[tuple(items)]


@aten(A.gather.default)
def _gather(x: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    return x.gather(dim, index)


@aten(A.scatter.value, A.scatter.src)
def _scatter(x: Tensor, dim: int, index: Tensor, src: Any) -> Tensor:
    return x.scatter(dim, index, src)


@aten(A.scatter_add.default)
def _scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return x.scatter_add(dim, index, src)


@aten(A.index_select.default)
def _index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    return x.index_select(dim, index)


@aten(A.index_put.default)
def _index_put(x: Tensor, indices: Sequence[Tensor | None], values: Tensor,
               accumulate: bool = False) -> Tensor:
    if any(i is None for i in indices):
        raise TorchUnsupported("aten.index_put", "a None index (a full slice)")
    return x.index_put(list(indices), values, accumulate)


@aten(A.index.Tensor)
def _index(x: Tensor, indices: Sequence[Tensor | None]) -> Tensor:
    return x[tuple(slice(None) if i is None else i for i in indices)]


@aten(A.split_with_sizes.default)
def _split_with_sizes(x: Tensor, sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    out, start = [], 0
    for size in sizes:
        out.append(_slice(x, dim, start, start + size))
        start += size
    return tuple(out)


@aten(A.constant_pad_nd.default)
def _constant_pad_nd(x: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    if any(p < 0 for p in pad):
        raise TorchUnsupported("aten.constant_pad_nd", "negative padding (a crop)")
    return pg.nn.functional.pad(x, tuple(pad), value=value)


@aten(A.repeat.default)
def _repeat(x: Tensor, repeats: Sequence[int]) -> Tensor:
    return x.repeat(tuple(repeats))


@aten(A.diagonal.default)
def _diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return x.diagonal(offset, dim1, dim2)
