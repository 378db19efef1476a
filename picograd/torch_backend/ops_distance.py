"""Distances and bags of embeddings, with torch's CPU kernels' results:

    _cdist_forward / _cdist_backward, _pdist_forward / _pdist_backward   torch's formulas
        (the p = 2 matmul form where compute_mode or more than 25 rows picks it)
    _embedding_bag (+ _forward_only, _backward, _per_sample_weights_backward)   torch's four
        results (offset2bag, bag_size, max_indices as its CPU kernel fills them)

Where torch's kernel has a quirk its results show, the translation keeps it (each says
which): a graph split around one of these hands its results to torch's own backward.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from picograd.frontend.dtype import int32
from picograd.frontend.ops_shape import cat
from picograd.frontend.tensor import Tensor
from picograd.nn import distance
from picograd.torch_backend.registry import (
    TorchUnsupported,
    aten,
    aten_node,
    int_index,
)

A = torch.ops.aten
INF = math.inf


# ── distances: cdist, pdist ─────────────────────────────────────────────────────


def _reduced_distance(diff: Tensor, p: float, nan_max: bool) -> Tensor:
    """torch's distance kernels over the last dim of `diff` (map, reduce, finish).
    `nan_max`: the inf-norm's max drops NaNs (cdist's scalar std::max from 0)."""
    a = diff.abs()
    if p == 0:  # min(ceil(|d|), 1): a NaN stays NaN
        return (a > 0).where(1.0, a).sum(-1)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return (a * a).sum(-1).sqrt()
    if math.isinf(p):
        return a.isnan().where(0.0, a).max(-1) if nan_max else a.max(-1)
    return (a ** p).sum(-1) ** (1.0 / p)


def _sign(v: Tensor) -> Tensor:
    # the kernels' sign: NaN stays NaN (picograd's sign gives 0 there)
    return v.isnan().where(v, v.sign())


def _distance_grad(diff: Tensor, grad: Tensor, dist: Tensor, p: float) -> Tensor:
    """The gradient of one distance towards its first vector, per element of `diff`
    (torch's backward structs, each guarded where dist (or diff, for p < 1) is 0)."""
    if p == 1:
        return grad * _sign(diff)
    if math.isinf(p):
        at_max = 1.0 - ((diff.abs() - dist).abs().ceil()).minimum(1.0)
        return grad * _sign(diff) * at_max
    zero = dist == 0
    if p < 2:
        value = _sign(diff) * diff.abs() ** (p - 1) * grad / dist ** (p - 1)
        zero = zero | (diff == 0) if p < 1 else zero
    elif p == 2:
        value = grad * diff / dist
    else:
        value = diff * diff.abs() ** (p - 2) * grad / dist ** (p - 1)
    return zero.where(0.0, value)


def _batch_shape(x1: Tensor, x2: Tensor) -> tuple[int, ...]:
    return tuple(torch.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))


def _uses_mm(p: float, compute_mode: int | None, r1: int, r2: int) -> bool:
    """torch's choice of the matmul form: p = 2 and compute_mode 1, or mode 0 (None) with
    more than 25 rows on either side."""
    mode = compute_mode or 0
    return p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))


@aten(A._cdist_forward.default)
def _cdist_forward(x1: Tensor, x2: Tensor, p: float, compute_mode: int | None) -> Tensor:
    op = "aten._cdist_forward"
    if not (x1.dtype.is_float and x2.dtype.is_float) or p < 0 or compute_mode not in (
            None, 0, 1, 2):
        raise TorchUnsupported(op, f"dtypes {x1.dtype.name}, {x2.dtype.name}, p {p}, "
                               f"compute_mode {compute_mode}")
    r1, r2, m = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    shape = (*_batch_shape(x1, x2), r1, r2)
    if m == 0 or 0 in shape:
        return Tensor.zeros(*shape, dtype=x1.dtype, device=x1.device)
    if _uses_mm(p, compute_mode, r1, r2):  # torch's _euclidean_dist
        n1, n2 = (x1 * x1).sum(-1, keepdim=True), (x2 * x2).sum(-1, keepdim=True)
        ones1 = Tensor.ones(*n1.shape, dtype=x1.dtype, device=x1.device)
        ones2 = Tensor.ones(*n2.shape, dtype=x2.dtype, device=x2.device)
        left, right = cat([x1 * -2, n1, ones1], -1), cat([x2, ones2, n2], -1)
        return (left @ right.transpose(-2, -1)).clamp_min(0.0).sqrt().expand(shape)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _reduced_distance(diff, p, nan_max=True)


@aten(A._cdist_backward.default)
def _cdist_backward(grad: Tensor, x1: Tensor, x2: Tensor, p: float, dist: Tensor) -> Tensor:
    """The gradient towards x1 (expanded to the batch; autograd sums it back)."""
    batch = _batch_shape(x1, x2)
    a = x1.expand((*batch, *x1.shape[-2:]))
    b = x2.expand((*batch, *x2.shape[-2:]))
    if p == 0 or 0 in a.shape or b.shape[-2] == 0:
        return Tensor.zeros(*a.shape, dtype=x1.dtype, device=x1.device)
    diff = a.unsqueeze(-2) - b.unsqueeze(-3)
    terms = _distance_grad(diff, grad.unsqueeze(-1), dist.unsqueeze(-1), p)
    return terms.sum(-2)


def _pairs(n: int, device: str) -> tuple[Tensor, Tensor]:
    first, second = np.triu_indices(n, 1)
    return int_index(first, device), int_index(second, device)


@aten(A._pdist_forward.default)
def _pdist_forward(x: Tensor, p: float = 2.0) -> Tensor:
    n, m = x.shape
    if n <= 1 or m == 0:
        return Tensor.zeros(n * (n - 1) // 2, dtype=x.dtype, device=x.device)
    if p == 0:  # Tensor.norm's 0-"norm" counts nonzeros; torch's kernel keeps NaN
        first, second = _pairs(n, x.device)
        return _reduced_distance(x.index_select(0, first) - x.index_select(0, second), p,
                                 nan_max=False)
    return distance.pdist(x, p)


@aten(A._pdist_backward.default)
def _pdist_backward(grad: Tensor, x: Tensor, p: float, dist: Tensor) -> Tensor:
    n = x.shape[0]
    zeros = Tensor.zeros(*x.shape, dtype=x.dtype, device=x.device)
    if p == 0 or n <= 1 or x.shape[1] == 0:
        return zeros
    first, second = _pairs(n, x.device)
    diff = x.index_select(0, first) - x.index_select(0, second)
    terms = _distance_grad(diff, grad.unsqueeze(-1), dist.unsqueeze(-1), p)
    return zeros.index_add(0, first, terms).index_add(0, second, -terms)


# ── embedding_bag ───────────────────────────────────────────────────────────────


def _offset2bag(offsets: Tensor, length: int) -> Tensor:
    """torch's make_offset2bag: each position's bag (ones added at the offsets, summed
    along, minus one)."""
    ones = Tensor.ones(offsets.shape[0], dtype=int32, device=offsets.device)
    marks = Tensor.zeros(length + 1, dtype=int32, device=offsets.device).index_add(
        0, offsets, ones)
    return (marks.cumsum(0) - 1).cast(int32)[:length]


def _bag_sizes(offsets: Tensor, bags: int, length: int, padded: Tensor, owner: Tensor) -> Tensor:
    """torch's make_bag_size (the last bag runs to the end of the input, even with
    include_last_offset), less each bag's padding entries."""
    sizes = cat([offsets[1:bags] - offsets[:bags - 1], length - offsets[bags - 1:bags]], 0)
    counts = Tensor.zeros(bags, dtype=int32, device=offsets.device).index_add(
        0, owner, padded.cast(int32))
    return sizes.cast(int32) - counts


def _record_of(node: Any, position: int, name: str) -> Any:
    """torch's record (FX `meta["val"]`) of the node's argument `name`, or None."""
    arg = node.args[position] if len(node.args) > position else node.kwargs.get(name)
    return arg.meta.get("val") if isinstance(arg, torch.fx.Node) else None


def _fast_path(node: Any, padding_idx: int) -> bool:
    """torch's CPU fast sum path (float32 / float16 rows of stride 1, no padding_idx),
    from the FX records of the weight and per_sample_weights: it sums each bag between
    its offsets and leaves offset2bag empty."""
    weight = _record_of(node, 0, "weight")
    scales = _record_of(node, 6, "per_sample_weights")
    rows_ok = isinstance(weight, torch.Tensor) and weight.dtype in (
        torch.float32, torch.float16) and weight.stride()[1] == 1
    scale_ok = not isinstance(scales, torch.Tensor) or scales.stride()[0] == 1
    return rows_ok and scale_ok and padding_idx < 0


def _max_bags(rows: Tensor, valid: Tensor, owner: Tensor, indices: Tensor,
              bags: int) -> tuple[Tensor, Tensor]:
    """Each bag's feature-wise max, as torch's loop takes it: the first valid row, then a
    row only where strictly greater (a NaN first stays; a later NaN never wins); an empty
    bag gives 0 and index 0."""
    length, dim = rows.shape
    device = rows.device
    position = Tensor.arange(length, dtype=int32, device=device)
    spare = Tensor.full((bags,), length, dtype=int32, device=device)
    first = spare.scatter_reduce(0, owner, valid.where(position, length), "amin")
    nan = rows.isnan()
    key = (nan | ~valid.unsqueeze(1)).where(-INF, rows)
    where = owner.unsqueeze(1).expand(length, dim)
    best = Tensor.full((bags, dim), -INF, dtype=rows.dtype, device=device).scatter_reduce(
        0, where, key, "amax")
    hit = valid.unsqueeze(1) & (key == best.gather(0, where))
    spare2 = Tensor.full((bags, dim), length, dtype=int32, device=device)
    pos = spare2.scatter_reduce(0, where, hit.where(position.unsqueeze(1), length), "amin")
    nan_rows = cat([nan, Tensor.full((1, dim), False, device=device)], 0)
    first_nan = nan_rows.gather(0, first.unsqueeze(1).expand(bags, dim))
    pos = first_nan.where(first.unsqueeze(1).expand(bags, dim), pos)
    table = cat([rows, Tensor.zeros(1, dim, dtype=rows.dtype, device=device)], 0)
    names = cat([indices.cast(int32), Tensor.zeros(1, dtype=int32, device=device)], 0)
    return table.gather(0, pos), names.gather(0, pos.reshape(-1)).reshape(bags, dim)


def _embedding_bag_impl(node: Any, weight: Tensor, indices: Tensor, offsets: Tensor,
                        mode: int, per_sample_weights: Tensor | None,
                        include_last_offset: bool, padding_idx: int,
                        requires_grad: bool) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    if indices.ndim != 1 or offsets.ndim != 1 or mode not in (0, 1, 2) or bags < 1 or (
            per_sample_weights is not None and mode != 0):
        raise TorchUnsupported("aten._embedding_bag", f"indices of shape {indices.shape}, "
                               f"offsets of shape {offsets.shape}, mode {mode}")
    length, dim = indices.shape[0], weight.shape[1]
    fast = _fast_path(node, padding_idx)
    owner = _offset2bag(offsets[:bags], length)
    padded = indices == padding_idx if padding_idx >= 0 else Tensor.full(
        (length,), False, device=indices.device)
    valid = ~padded
    sizes = _bag_sizes(offsets, bags, length, padded, owner)
    rows = weight.index_select(0, indices)
    if mode == 2:
        out, max_indices = _max_bags(rows, valid, owner, indices, bags)
        return out, owner, sizes, max_indices
    taken = valid
    if fast and include_last_offset:  # the fast path stops the last bag at its offset
        position = Tensor.arange(length, dtype=offsets.dtype, device=indices.device)
        taken = taken & (position < offsets[bags:bags + 1])
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    rows = taken.unsqueeze(1).where(rows, 0.0)
    out = Tensor.zeros(bags, dim, dtype=weight.dtype, device=weight.device).index_add(
        0, owner, rows)
    if mode == 1:
        out = out / sizes.maximum(1).cast(out.dtype).unsqueeze(1)
        return out, owner, sizes, sizes
    # sum: bag_size zeroed (sized as the offsets without a gradient); offset2bag empty
    # on the fast path
    zeros = Tensor.zeros(bags if requires_grad else offsets.shape[0], dtype=int32,
                         device=weight.device)
    return out, owner[:0] if fast else owner, zeros, zeros


@aten_node(A._embedding_bag.default)
def _embedding_bag(node: Any, weight: Tensor, indices: Tensor, offsets: Tensor,
                   scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                   per_sample_weights: Tensor | None = None,
                   include_last_offset: bool = False, padding_idx: int = -1) -> Any:
    return _embedding_bag_impl(node, weight, indices, offsets, mode, per_sample_weights,
                               include_last_offset, padding_idx, requires_grad=True)


@aten_node(A._embedding_bag_forward_only.default)
def _embedding_bag_forward_only(node: Any, weight: Tensor, indices: Tensor, offsets: Tensor,
                                scale_grad_by_freq: bool = False, mode: int = 0,
                                sparse: bool = False,
                                per_sample_weights: Tensor | None = None,
                                include_last_offset: bool = False,
                                padding_idx: int = -1) -> Any:
    if include_last_offset:  # torch's meta kernel and its CPU kernel disagree on the
        # shapes of bag_size and max_indices here: no result matches both
        raise TorchUnsupported("aten._embedding_bag_forward_only", "include_last_offset")
    return _embedding_bag_impl(node, weight, indices, offsets, mode, per_sample_weights,
                               include_last_offset, padding_idx, requires_grad=False)


def _owners(indices: Tensor, offsets: Tensor, offset2bag: Tensor) -> Tensor:
    # torch's backward rebuilds an empty offset2bag from all the offsets
    if indices.shape[0] != 0 and offset2bag.shape[0] == 0:
        return _offset2bag(offsets, indices.shape[0])
    return offset2bag


def _frequency_divisor(indices: Tensor, num_weights: int) -> Tensor:
    """What torch's CPU backward divides each entry's gradient by under
    scale_grad_by_freq: the count of the r-th smallest index, r being the rank of the
    entry's own index among the distinct ones (its loop reads `counts[indices[i]]` with
    i the group's number, not the group's index: only the smallest index is right)."""
    ones = Tensor.ones(indices.shape[0], dtype=int32, device=indices.device)
    counts = Tensor.zeros(num_weights, dtype=int32, device=indices.device).index_add(
        0, indices, ones)
    rank = ((counts > 0).cast(int32).cumsum(0) - 1).cast(int32).index_select(0, indices)
    ordered = indices.cast(int32).sort().values
    return counts.index_select(0, ordered.index_select(0, rank))


@aten(A._embedding_bag_backward.default)
def _embedding_bag_backward(grad: Tensor, indices: Tensor, offsets: Tensor,
                            offset2bag: Tensor, bag_size: Tensor, max_indices: Tensor,
                            num_weights: int, scale_grad_by_freq: bool, mode: int,
                            sparse: bool, per_sample_weights: Tensor | None,
                            padding_idx: int = -1) -> Tensor:
    if sparse:
        raise TorchUnsupported("aten._embedding_bag_backward", "a sparse gradient")
    table = Tensor.zeros(num_weights, grad.shape[1], dtype=grad.dtype, device=grad.device)
    if mode == 2:  # each bag's gradient to the rows its max came from (empty bags: none)
        kept = (bag_size != 0).unsqueeze(1).where(grad, 0.0)
        return table.scatter_add(0, max_indices, kept)
    owner = _owners(indices, offsets, offset2bag)
    scale = Tensor.ones(indices.shape[0], dtype=grad.dtype, device=grad.device)
    if per_sample_weights is not None:
        scale = per_sample_weights
    if scale_grad_by_freq:
        scale = scale / _frequency_divisor(indices, num_weights).cast(grad.dtype)
    if mode == 1:
        size = bag_size.index_select(0, owner)
        scale = (size != 0).where(scale / size.cast(grad.dtype), scale)
    rows = grad.index_select(0, owner) * scale.unsqueeze(1)
    if padding_idx >= 0:
        rows = (indices != padding_idx).unsqueeze(1).where(rows, 0.0)
    return table.index_add(0, indices, rows)


@aten(A._embedding_bag_per_sample_weights_backward.default)
def _embedding_bag_per_sample_weights_backward(grad: Tensor, weight: Tensor, indices: Tensor,
                                               offsets: Tensor, offset2bag: Tensor,
                                               mode: int, padding_idx: int = -1) -> Tensor:
    if mode != 0:
        raise TorchUnsupported("aten._embedding_bag_per_sample_weights_backward",
                               f"mode {mode}")
    owner = _owners(indices, offsets, offset2bag)
    dots = (grad.index_select(0, owner) * weight.index_select(0, indices)).sum(1)
    return (indices != padding_idx).where(dots, 0.0) if padding_idx >= 0 else dots
