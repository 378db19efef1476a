"""Ops that read torch's layout or the data itself, and random ones:

    as_strided / as_strided_scatter   a gather over torch's storage order
    col2im (F.fold), masked_scatter (+ its backward)
    nonzero, _local_scalar_dense   sync points: the tensor is read on the host
    randperm   picograd's generator; _assert_scalar
    sym_stride / sym_storage_offset / sym_is_contiguous   torch's records of the layout
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

import picograd as pg
from picograd.frontend.dtype import int32
from picograd.frontend.ops_select import host_values
from picograd.frontend.tensor import Tensor
from picograd.nn import fold
from picograd.torch_backend.registry import (
    TorchUnsupported,
    aten,
    aten_node,
    check_placement,
    int_index,
    pg_dtype,
)

A = torch.ops.aten
INF = math.inf


# ── strided views, masks, data-dependent and random ops ────────────────────────


def _storage_order(value: Any, op: str) -> tuple[np.ndarray, int]:
    """For torch's tensor `value` (an FX record) whose elements fill a block of its
    storage: the logical (row-major) position of each storage element of the block, and
    the block's start. TorchUnsupported for a layout with gaps or overlaps, or symbolic."""
    start = value.storage_offset() if isinstance(value, torch.Tensor) else None
    if not isinstance(value, torch.Tensor) or not isinstance(start, int) or not all(
            isinstance(n, int) for n in (*value.shape, *value.stride())):
        raise TorchUnsupported(op, "an input without a static layout")
    numel = value.numel()
    where = np.zeros(tuple(value.shape), np.int64)
    for d, (n, s) in enumerate(zip(value.shape, value.stride(), strict=True)):
        where = where + (np.arange(n) * s).reshape((1,) * d + (n,) + (1,) * (value.ndim - d - 1))
    flat = where.reshape(-1)
    order = np.full(numel, -1, np.int64)
    if numel and (flat.min() < 0 or flat.max() >= numel):
        raise TorchUnsupported(op, f"an input with gaps in its storage (strides "
                               f"{value.stride()})")
    order[flat] = np.arange(numel)
    if numel and (order < 0).any():
        raise TorchUnsupported(op, f"an input whose elements overlap (strides {value.stride()})")
    return order, start


def _strided_positions(size: Sequence[int], stride: Sequence[int], offset: int) -> np.ndarray:
    where = np.full(tuple(size), offset, np.int64)
    for d, (n, s) in enumerate(zip(size, stride, strict=True)):
        where = where + (np.arange(n) * s).reshape((1,) * d + (n,) + (1,) * (len(size) - d - 1))
    return where


def _storage_block(node: Any, size: Sequence[int], stride: Sequence[int],
                   storage_offset: int | None, op: str) -> np.ndarray:
    """The logical positions in the input of the elements torch's as_strided addresses."""
    order, start = _storage_order(node.args[0].meta.get("val"), op)
    offset = start if storage_offset is None else storage_offset
    where = _strided_positions(size, stride, offset) - start
    if where.size and (where.min() < 0 or where.max() >= order.size):
        raise TorchUnsupported(op, f"size {list(size)}, stride {list(stride)}, offset {offset} "
                               f"reach past the input's elements")
    return order[where]


@aten_node(A.as_strided.default)
def _as_strided(node: Any, x: Tensor, size: Sequence[int], stride: Sequence[int],
                storage_offset: int | None = None) -> Tensor:
    picked = _storage_block(node, size, stride, storage_offset, "aten.as_strided")
    flat = x.reshape(-1)
    if picked.size == 0:
        return flat[:0].reshape(tuple(size))
    return flat.index_select(0, int_index(picked.reshape(-1), x.device)).reshape(tuple(size))


@aten_node(A.as_strided_scatter.default)
def _as_strided_scatter(node: Any, x: Tensor, src: Tensor, size: Sequence[int],
                        stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    op = "aten.as_strided_scatter"
    value = node.args[0].meta.get("val")
    if not isinstance(value, torch.Tensor) or not value.is_contiguous() or (
            value.storage_offset() != 0):  # torch writes into a clone at its own offsets
        raise TorchUnsupported(op, "an input that is not contiguous from offset 0")
    picked = _storage_block(node, size, stride, storage_offset, op).reshape(-1)
    if np.unique(picked).size != picked.size:
        raise TorchUnsupported(op, "positions written twice (torch's order is not defined)")
    if picked.size == 0:
        return x
    flat = x.reshape(-1).index_put([int_index(picked, x.device)],
                                   src.reshape(-1).cast(x.dtype))
    return flat.reshape(x.shape)


@aten(A.col2im.default)
def _col2im(x: Tensor, output_size: Sequence[int], kernel_size: Sequence[int],
            dilation: Sequence[int], padding: Sequence[int], stride: Sequence[int]) -> Tensor:
    return fold.fold(x, tuple(output_size), tuple(kernel_size), tuple(dilation),
                     tuple(padding), tuple(stride))


@aten(A.masked_scatter.default)
def _masked_scatter(x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    return x.masked_scatter(mask, source)


@aten(A.masked_scatter_backward.default)
def _masked_scatter_backward(grad: Tensor, mask: Tensor, sizes: Sequence[int]) -> Tensor:
    """The source's gradient: the gradient at the mask's True positions, in order, then
    zeros (torch's masked_select padded to the source's size)."""
    numel = math.prod(sizes)
    m = mask.expand(grad.shape).reshape(-1)
    which = m.cast(int32).cumsum(0).cast(int32) - 1
    target = (m & (which < numel)).where(which, numel)  # numel: a spare slot, dropped
    flat = Tensor.zeros(numel + 1, dtype=grad.dtype, device=grad.device)
    flat = flat.scatter_add(0, target, grad.reshape(-1))
    return flat[:numel].reshape(tuple(sizes))


@aten(A.nonzero.default)
def _nonzero(x: Tensor) -> Tensor:
    return x.nonzero()  # a sync point: the values are read on the host (int32 -> int64)


@aten(A._local_scalar_dense.default)
def _local_scalar_dense(x: Tensor) -> Any:
    # `.item()` in a graph: a sync point, like nonzero (JitError inside a capture)
    return host_values("item", x).reshape(-1)[0].item()


@aten(A._assert_scalar.default)
def _assert_scalar(condition: Any, message: str) -> None:
    # torch's runtime check of a size it did not know (a nonzero's count), on the size
    # picograd computed
    if not condition:
        raise TorchUnsupported("aten._assert_scalar", message)


@aten(A.randperm.default)
def _randperm(n: int, *, dtype: Any = None, layout: Any = None, device: Any = None,
              pin_memory: Any = None) -> Tensor:
    # picograd's generator, as rand / randn made in a graph: another permutation than
    # torch's, drawn anew on every call (replays included)
    check_placement("aten.randperm", layout, device, pin_memory)
    return Tensor.randperm(n, dtype=pg_dtype(dtype, "aten.randperm", pg.int64))


# ── size queries of torch's layout ──────────────────────────────────────────────


def _evaluated(value: Any, node: Any, x: Tensor, op: str) -> int:
    """torch's recorded `value` (an int, or a SymInt of the input's symbolic sizes, which
    the input's concrete shape fills in)."""
    if isinstance(value, int):
        return value
    record = node.args[0].meta.get("val")
    if isinstance(value, torch.SymInt) and isinstance(record, torch.Tensor):
        sizes = {d.node.expr: n for d, n in zip(record.shape, x.shape, strict=True)
                 if isinstance(d, torch.SymInt) and d.node.expr.is_Symbol}
        found = value.node.expr.xreplace(sizes)
        if found.is_Integer:
            return int(found)
    raise TorchUnsupported(op, f"a size picograd cannot evaluate ({value})")


def _record(node: Any, op: str) -> torch.Tensor:
    record = node.args[0].meta.get("val")
    if not isinstance(record, torch.Tensor):
        raise TorchUnsupported(op, "an input without torch's record of its layout")
    return record


@aten_node(A.sym_stride.int)
def _sym_stride(node: Any, x: Tensor, dim: int) -> int:
    op = "aten.sym_stride.int"
    return _evaluated(_record(node, op).stride(dim), node, x, op)


@aten_node(A.sym_storage_offset.default)
def _sym_storage_offset(node: Any, x: Tensor) -> int:
    op = "aten.sym_storage_offset"
    return _evaluated(_record(node, op).storage_offset(), node, x, op)


@aten_node(A.sym_is_contiguous.default)
def _sym_is_contiguous(node: Any, x: Tensor,
                       memory_format: torch.memory_format = torch.contiguous_format) -> bool:
    op = "aten.sym_is_contiguous"
    found = _record(node, op).is_contiguous(memory_format=memory_format)
    if not isinstance(found, bool):  # a SymBool: torch's own answer depends on sizes
        raise TorchUnsupported(op, f"a symbolic result {found}")
    return found
