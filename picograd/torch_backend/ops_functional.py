"""What functionalization leaves of torch's in-place and allocating code: `copy` (an
in-place `copy_`), `slice_scatter` / `select_scatter` (`x[:, 1:3] = v`, `x[2] = v`),
`scatter_reduce`, `empty` / `empty_strided` (a buffer the graph then fills), and
`native_dropout` (train-mode dropout, drawn from picograd's generator: a different mask
than torch's, the same distribution and scale), and `rand` / `randn` made in a graph (from
picograd's generator too)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import picograd as pg
from picograd.frontend.tensor import Tensor
from picograd.torch_backend.registry import TorchUnsupported, aten, check_placement, pg_dtype

A = torch.ops.aten


@aten(A.copy.default)
def _copy(x: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    # `x.copy_(src)` functionalized: src broadcast to x's shape, in x's dtype
    value = src if src.dtype == x.dtype else src.cast(x.dtype)
    return value if value.shape == x.shape else value.expand(x.shape)


def _scatter_into(x: Tensor, index: tuple[Any, ...], src: Tensor) -> Tensor:
    out = x.clone()
    out[index] = src if src.dtype == x.dtype else src.cast(x.dtype)
    return out


@aten(A.slice_scatter.default)
def _slice_scatter(x: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                   end: int | None = None, step: int = 1) -> Tensor:
    index: list[Any] = [slice(None)] * x.ndim
    index[dim] = slice(start, end, step)
    return _scatter_into(x, tuple(index), src)


@aten(A.select_scatter.default)
def _select_scatter(x: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    items: list[Any] = [slice(None)] * x.ndim
    items[dim] = index
    return _scatter_into(x, tuple(items), src)


@aten(A.scatter_reduce.two)
def _scatter_reduce(x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    return x.scatter_reduce(dim, index, src, reduce, include_self=include_self)


def _empty(op: str, size: Sequence[int], dtype: Any, layout: Any, device: Any,
           pin_memory: Any) -> Tensor:
    # torch leaves the values unspecified; the graph overwrites them (zeros are one choice)
    check_placement(op, layout, device, pin_memory)
    return Tensor.zeros(*size, dtype=pg_dtype(dtype, op, pg.float32))


@aten(A.empty.memory_format)
def _empty_memory_format(size: Sequence[int], *, dtype: Any = None, layout: Any = None,
                         device: Any = None, pin_memory: Any = None,
                         memory_format: Any = None) -> Tensor:
    return _empty("aten.empty", size, dtype, layout, device, pin_memory)


@aten(A.empty_strided.default)
def _empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                   layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return _empty("aten.empty_strided", size, dtype, layout, device, pin_memory)


@aten(A.native_dropout.default)
def _native_dropout(x: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    if not train or p == 0:
        return x, Tensor.ones(*x.shape, dtype=pg.bool, device=x.device)
    if p >= 1:  # torch: every element dropped, no division by zero
        return x * 0, Tensor.zeros(*x.shape, dtype=pg.bool, device=x.device)
    keep = Tensor.rand(*x.shape, device=x.device) >= p
    return x * keep.cast(x.dtype) * (1.0 / (1.0 - p)), keep


@aten(A.native_dropout_backward.default)
def _native_dropout_backward(grad: Tensor, mask: Tensor, scale: float) -> Tensor:
    return grad * mask.cast(grad.dtype) * scale


def _draw(op: str, draw: Any) -> Any:
    def make(size: Sequence[int], *, generator: Any = None, dtype: Any = None,
             layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
        if generator is not None:  # a seeded torch generator's numbers cannot be matched
            raise TorchUnsupported(op, "a torch.Generator")
        check_placement(op, layout, device, pin_memory)
        return draw(*size, dtype=pg_dtype(dtype, op, pg.float32))
    return make


# random tensors made inside a graph: picograd's generator (new numbers on every call,
# replays included), not torch's
aten(A.rand.default)(_draw("aten.rand", Tensor.rand))
aten(A.randn.default)(_draw("aten.randn", Tensor.randn))
