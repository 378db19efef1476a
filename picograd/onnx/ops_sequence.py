"""Sequences and optionals: SequenceConstruct, SequenceEmpty, SequenceAt, SequenceInsert,
SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence, Optional,
OptionalHasElement, OptionalGetElement.

An ONNX sequence is a Python list of values (host arrays or Tensors) in the environment;
every op makes a new list, so a sequence held elsewhere (a loop-carried value) never changes
under its reader. An empty optional is None. Positions are host ints (read back if not).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from picograd.errors import IndexRangeError
from picograd.frontend.ops_shape import cat, stack
from picograd.frontend.tensor import Tensor
from picograd.onnx.errors import OnnxModelError
from picograd.onnx.registry import NodeContext, is_host, op


def _seq(ctx: NodeContext, s: Any) -> list[Any]:
    if not isinstance(s, list):
        raise ctx.unsupported(f"needs a sequence, got {type(s).__name__}")
    return s


def _position(ctx: NodeContext, seq: list[Any], pos: Any, end_ok: bool) -> int:
    """ONNX's position: negative counts from the back; `end_ok` allows len(seq) (insert)."""
    p = ctx.ints(pos)[0]
    size = len(seq) + (1 if end_ok else 0)
    if not -len(seq) <= p < size:
        raise IndexRangeError(f"{ctx.label}: position {p} is out of range for a sequence of "
                         f"{len(seq)}")
    return p + len(seq) if p < 0 else p


def _dtype(v: Any) -> np.dtype:
    return np.dtype(v.dtype.np) if isinstance(v, Tensor) else np.asarray(v).dtype


def _same_dtype(ctx: NodeContext, items: list[Any]) -> list[Any]:
    """`items` as a sequence: ONNX's sequences hold one element type (onnxruntime refuses
    a mixed one at load), so a mix is refused here rather than promoted later."""
    dtypes = sorted({str(_dtype(v)) for v in items})
    if len(dtypes) > 1:
        raise OnnxModelError(f"{ctx.label}: a sequence of one element type, got "
                             f"{', '.join(dtypes)}")
    return items


@op("SequenceConstruct")
def _construct(ctx: NodeContext, *xs: Any) -> list[Any]:
    return _same_dtype(ctx, list(xs))


@op("SequenceEmpty", attrs=("dtype",))
def _empty(ctx: NodeContext) -> list[Any]:
    return []


@op("SequenceAt")
def _at(ctx: NodeContext, s: Any, pos: Any) -> Any:
    seq = _seq(ctx, s)
    return seq[_position(ctx, seq, pos, end_ok=False)]


@op("SequenceInsert")
def _insert(ctx: NodeContext, s: Any, x: Any, pos: Any = None) -> list[Any]:
    seq = list(_seq(ctx, s))
    at = len(seq) if pos is None else _position(ctx, seq, pos, end_ok=True)
    seq.insert(at, x)
    return _same_dtype(ctx, seq)


@op("SequenceErase")
def _erase(ctx: NodeContext, s: Any, pos: Any = None) -> list[Any]:
    seq = list(_seq(ctx, s))
    if not seq:
        raise IndexRangeError(f"{ctx.label}: erase from an empty sequence")
    at = len(seq) - 1 if pos is None else _position(ctx, seq, pos, end_ok=False)
    del seq[at]
    return seq


@op("SequenceLength")
def _length(ctx: NodeContext, s: Any) -> np.ndarray:
    return np.array(len(_seq(ctx, s)), np.int64)


def _axis(ctx: NodeContext, axis: int, rank: int) -> int:
    """`axis` of a `rank`-dim result, from the back if negative; one outside [-rank, rank)
    is refused (normalising it blindly would pick another axis: a silently wrong split)."""
    if not -rank <= axis < rank:
        raise OnnxModelError(f"{ctx.label}: axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _piece(ctx: NodeContext, x: Any, axis: int, lo: int, hi: int) -> Any:
    index = tuple([slice(None)] * axis + [slice(lo, hi)])
    return np.asarray(x)[index] if is_host(x) else ctx.t(x)[index]


@op("SplitToSequence", attrs=("axis", "keepdims"))
def _split_to_sequence(ctx: NodeContext, x: Any, split: Any = None) -> list[Any]:
    """No split: pieces of 1 (squeezed unless keepdims); a scalar split: pieces of that size,
    the last one smaller; a 1-D split: those sizes."""
    rank = len(x.shape)
    axis = _axis(ctx, ctx.attr("axis", 0), rank)
    dim = int(x.shape[axis])
    if split is None:
        pieces = [_piece(ctx, x, axis, i, i + 1) for i in range(dim)]
        if ctx.attr("keepdims", 1):
            return pieces
        return [np.squeeze(p, axis) if is_host(p) else p.squeeze(axis) for p in pieces]
    sizes_arr = ctx.host(split)
    if sizes_arr.ndim == 0:
        size = int(sizes_arr)
        if size <= 0:
            raise ctx.unsupported(f"split size {size} must be positive")
        sizes = [min(size, dim - lo) for lo in range(0, dim, size)]
    else:
        sizes = [int(s) for s in sizes_arr]
        if sum(sizes) != dim or any(s < 0 for s in sizes):
            raise ctx.unsupported(f"split sizes {sizes} do not add up to dim {dim}")
    bounds = np.cumsum([0, *sizes])
    return [_piece(ctx, x, axis, int(lo), int(hi)) for lo, hi in itertools.pairwise(bounds)]


@op("ConcatFromSequence", attrs=("axis", "new_axis"))
def _concat_from_sequence(ctx: NodeContext, s: Any) -> Any:
    seq = _seq(ctx, s)
    if not seq:
        raise ctx.unsupported("concatenating an empty sequence (no dtype or shape to give)")
    new_axis = bool(ctx.attr("new_axis", 0))
    rank = len(seq[0].shape) + (1 if new_axis else 0)
    axis = _axis(ctx, ctx.attr("axis"), rank)
    if is_host(*seq):
        arrays = [np.asarray(v) for v in seq]
        return np.stack(arrays, axis) if new_axis else np.concatenate(arrays, axis)
    tensors = [ctx.t(v) for v in seq]
    return stack(tensors, dim=axis) if new_axis else cat(tensors, dim=axis)


@op("Optional", attrs=("type",))
def _optional(ctx: NodeContext, x: Any = None) -> Any:
    return x


@op("OptionalHasElement")
def _has_element(ctx: NodeContext, x: Any = None) -> np.ndarray:
    return np.array(x is not None)


@op("OptionalGetElement")
def _get_element(ctx: NodeContext, x: Any) -> Any:
    if x is None:
        raise ctx.unsupported("the optional is empty")
    return x
