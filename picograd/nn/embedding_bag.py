"""`embedding_bag` and `EmbeddingBag`: the sum, mean or max of bags of embedding rows,
without building the (bags, length, dim) tensor of rows for sum and mean (torch's
semantics and argument names).

    embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None)
    EmbeddingBag(num_embeddings, embedding_dim, ...)      the layer (weight from N(0, 1),
                                                          the padding row zeroed)

The bags: a 2-D input (B, N) is B bags of N indices; a 1-D input of L indices is split at
`offsets` (bag b holds input[offsets[b]:offsets[b + 1]], the last bag runs to the end, or
`offsets` ends with the end when `include_last_offset`). The offsets are read on the host
(realized if they are lazy): torch checks their values at the call too (offsets[0] == 0,
offsets[-1] <= L), and they fix the shape of the work. The indices stay lazy: each row is
picked as `embedding` picks it (out-of-range indices raise IndexRangeError, a RuntimeError
as torch's), entries equal to `padding_idx` count for nothing (not even in a mean's count),
and an empty bag is a row of zeros.

    sum / mean   the rows (times per_sample_weights, sum mode only) added into their bag
                 (`index_add`); mean divides by the bag's count of non-padding entries
    max          the bags padded to the longest one (a gather of positions, the padding
                 reading -inf), the first maximum of each feature picked (torch's tie rule),
                 and that row's element gathered again so the gradient reaches only it

`scale_grad_by_freq` divides the gradient of each occurrence of an index by the number of
times the index appears in the whole input (the values are unchanged: x + (x - x.detach())
* s carries s into the gradient only). `max_norm` renormalises, in place and without a
gradient, every row the input names whose `norm_type`-norm exceeds max_norm: it is scaled
by max_norm / (norm + 1e-7) (torch's `embedding_renorm_`). The weight's buffer is written
now (`Tensor.assign`), so a graph built earlier from the old weight reads the new rows when
it is realized (torch would refuse its backward instead). `sparse=True` is accepted; the
gradient is dense (the same values as torch's sparse one).

Where torch 2.13's CPU kernels disagree with torch's documentation, this follows the
documentation: `scale_grad_by_freq` divides by the index's own count (torch's CPU
embedding_bag reads the wrong count, pytorch#190063), and with `include_last_offset` the
last offset ends the last bag in every mode (for indices past it, torch's CPU sum ignores
them, its max includes them and its mean counts them without adding them, pytorch#191965).
torch segfaults on offsets with no bags (in max mode, and in the backward of sum and mean);
here that is a (0, dim) result. Decreasing offsets are a ShapeError (torch's sum and mean
fail on them with a RuntimeError, its max reads them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import (
    argument_type_error,
    dtype_error,
    shape_error,
    unimplemented_error,
)
from picograd.frontend.ops_shape import cat
from picograd.frontend.realize import realize_later
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module
from picograd.nn.norm import embedding

_MODES = ("sum", "mean", "max")


@dataclass(frozen=True)
class _Bags:
    """Where the bags lie in the flat input (host arrays): bag b is positions
    [starts[b], ends[b]); `owner[k]` is position k's bag (`len(starts)` for a position in
    no bag, past include_last_offset's end)."""

    starts: np.ndarray
    ends: np.ndarray
    owner: np.ndarray

    @property
    def count(self) -> int:
        return len(self.starts)


def _check_args(input: Tensor, weight: Tensor, offsets: Tensor | None, mode: str,
                scale_grad_by_freq: bool, sparse: bool,
                per_sample_weights: Tensor | None) -> None:
    """torch's checks, in torch's order (ValueError ones first: ShapeError is one)."""
    op = "embedding_bag"
    for name, t in (("input", input), ("weight", weight), ("offsets", offsets),
                    ("per_sample_weights", per_sample_weights)):
        if t is not None and not isinstance(t, Tensor):
            raise argument_type_error(op, f"{name} must be a Tensor, got {type(t).__name__}")
    if per_sample_weights is not None and per_sample_weights.shape != input.shape:
        raise shape_error(op, f"If per_sample_weights ({per_sample_weights.shape}) is not "
                              f"None, then it must have the same shape as the input "
                              f"({input.shape})")
    if weight.ndim != 2:
        raise shape_error(op, f"weight has to be a 2D Tensor, but got Tensor of dimension "
                              f"{weight.ndim}")
    if input.ndim == 2 and offsets is not None:
        raise shape_error(op, "if input is 2D, then offsets has to be None, as input is "
                              "treated is a mini-batch of fixed length sequences")
    if input.ndim == 1 and (offsets is None or offsets.ndim != 1):
        raise shape_error(op, f"offsets has to be a 1D Tensor but got "
                              f"{'None' if offsets is None else offsets.shape}")
    if input.ndim not in (1, 2):
        raise shape_error(op, f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                              f"{input.ndim}")
    _check_mode(mode, scale_grad_by_freq, sparse)
    for name, t in (("input", input), ("offsets", offsets)):
        if t is not None and (t.dtype.is_float or t.dtype.is_bool):
            raise dtype_error(op, f"{name} must be an int tensor, got {t.dtype.name}")


def _check_mode(mode: str, scale_grad_by_freq: bool, sparse: bool) -> None:
    op = "embedding_bag"
    if mode not in _MODES:
        raise shape_error(op, f"mode has to be one of sum, mean or max, got {mode!r}")
    if mode == "max" and scale_grad_by_freq:
        raise shape_error(op, "max mode does not support scaling the gradient by the "
                              "frequency")
    if mode == "max" and sparse:
        raise shape_error(op, "max mode does not support sparse weights")


def _bags(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> _Bags:
    op = "embedding_bag"
    length = input.numel()
    if input.ndim == 2:
        n_bags, size = input.shape
        if size == 0:
            raise shape_error(op, f"a 2-D input needs at least one index per bag, got shape "
                                  f"{input.shape}")
        starts = np.arange(n_bags) * size
        return _Bags(starts, starts + size, np.arange(length) // max(size, 1))
    assert offsets is not None  # _check_args
    off = offsets.numpy().astype(np.int64)
    if include_last_offset and off.size == 0:
        raise shape_error(op, "include_last_offset: number of offset should be at least 1")
    if off.size and off[0] != 0:
        raise shape_error(op, f"offsets[0] has to be 0, i.e., the first sequence in the "
                              f"mini-batch has to start from position 0. However, got "
                              f"{off[0]}")
    if off.size and off[-1] > length:
        raise shape_error(op, f"offsets[-1] can not be greater than input's length {length} "
                              f"but got offsets[-1] of {off[-1]}")
    if np.any(np.diff(off) < 0):
        raise shape_error(op, f"offsets must not decrease, got {off.tolist()}")
    if include_last_offset:  # the last offset ends the last bag: later indices are in none
        starts, ends = off[:-1], off[1:]
    else:
        starts, ends = off, np.append(off[1:], length)[:off.size]
    owner = np.full(length, len(starts))
    owner[:ends[-1] if len(ends) else 0] = np.repeat(np.arange(len(starts)), ends - starts)
    return _Bags(starts, ends, owner)


def _padding(weight: Tensor, padding_idx: int | None) -> int | None:
    if padding_idx is None:
        return None
    n = weight.shape[0]
    if not -n <= padding_idx < n:
        raise shape_error("embedding_bag", f"padding_idx must be within the number of "
                                           f"embeddings, -{n} through {n - 1}, but got "
                                           f"{padding_idx}")
    return padding_idx % n


def _renorm(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> None:
    """torch's `embedding_renorm_`: the rows `indices` names whose norm exceeds max_norm
    scaled by max_norm / (norm + 1e-7), written into the weight now."""
    with no_grad():
        w = weight.detach()
        named = Tensor.zeros(w.shape[0], device=w.device).index_add(
            0, indices, Tensor.ones(indices.shape[0], device=w.device)) > 0
        norms = w.norm(norm_type, 1)
        shrink = named & (norms > max_norm)
        scale = shrink.where(max_norm / (norms + 1e-7), 1.0).cast(w.dtype)
        weight.assign(w * scale.unsqueeze(1))


def _frequency_scaled(rows: Tensor, indices: Tensor, num_embeddings: int) -> Tensor:
    """`rows` with the gradient of each row divided by how often its index occurs."""
    ones = Tensor.ones(indices.shape[0], device=rows.device, dtype=rows.dtype)
    counts = Tensor.zeros(num_embeddings, device=rows.device, dtype=rows.dtype).index_add(
        0, indices, ones)
    scale = (1.0 / counts.index_select(0, indices)).unsqueeze(1)
    fixed = rows.detach()
    return fixed + (rows - fixed) * scale  # the value is `rows`; the gradient, scaled


def _sum_bags(rows: Tensor, keep: Tensor, bags: _Bags, mode: str,
              per_sample_weights: Tensor | None) -> Tensor:
    """Each bag's rows added up (divided by the bag's count for 'mean')."""
    n, dim = bags.count, rows.shape[1]
    owner = Tensor(bags.owner.astype(np.int32), device=rows.device)
    kept = keep.unsqueeze(1).where(rows, 0.0)
    if per_sample_weights is not None:
        kept = kept * per_sample_weights.unsqueeze(1)
    total = Tensor.zeros(n + 1, dim, device=rows.device, dtype=rows.dtype).index_add(
        0, owner, kept)[:n]
    if mode == "sum":
        return total
    count = Tensor.zeros(n + 1, device=rows.device, dtype=rows.dtype).index_add(
        0, owner, keep.cast(rows.dtype))[:n]
    return total / count.maximum(1.0).unsqueeze(1)


def _max_bags(rows: Tensor, keep: Tensor, bags: _Bags) -> Tensor:
    """Each feature's first maximum over the bag's kept rows (0 for a bag with none)."""
    n, length, dim = bags.count, rows.shape[0], rows.shape[1]
    longest = int((bags.ends - bags.starts).max()) if n else 0
    padded = cat([rows, Tensor.zeros(1, dim, device=rows.device, dtype=rows.dtype)], 0)
    if longest == 0:  # every bag empty: the zero row for each
        return padded.gather(0, Tensor.full((n, dim), length, dtype="int32",
                                            device=rows.device))
    steps = np.arange(longest)
    positions = bags.starts[:, None] + steps  # (bags, longest); `length`: the padding
    positions = np.where(steps < (bags.ends - bags.starts)[:, None], positions, length)
    where = Tensor(positions.astype(np.int32), device=rows.device)
    padded_keep = cat([keep, Tensor.zeros(1, device=rows.device, dtype=keep.dtype)], 0)
    with no_grad():
        candidates = padded_keep.unsqueeze(1).where(padded, -np.inf)
        window = candidates.index_select(0, where.reshape(-1)).reshape(n, longest, dim)
        first = window.argmax(1)  # (bags, dim): the first maximum, as torch
        picked = where.gather(1, first)  # its position in the input
        filled = padded_keep.index_select(0, where.reshape(-1)).reshape(n, longest).any(1)
    return filled.unsqueeze(1).where(padded.gather(0, picked), 0.0)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of each bag of rows of `weight` (num_embeddings, dim) that
    `input` and `offsets` name: shape (bags, dim)."""
    _check_args(input, weight, offsets, mode, scale_grad_by_freq, sparse, per_sample_weights)
    bags = _bags(input, offsets, include_last_offset)
    flat = input.reshape(-1)
    if max_norm is not None:
        _renorm(weight, flat, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise unimplemented_error(
            "embedding_bag", f"per_sample_weights was not None. per_sample_weights is only "
                             f"supported for mode='sum' (got mode='{mode}')")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise dtype_error("embedding_bag", f"per_sample_weights is "
                                           f"{per_sample_weights.dtype.name}, the weight "
                                           f"{weight.dtype.name}: they must match")
    pad = _padding(weight, padding_idx)
    rows = embedding(flat, weight)
    if scale_grad_by_freq:
        rows = _frequency_scaled(rows, flat, weight.shape[0])
    keep = (flat != pad) if pad is not None else Tensor.full(flat.shape[0], True,
                                                              device=rows.device)
    if mode == "max":
        return _max_bags(rows, keep, bags)
    weights = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    return _sum_bags(rows, keep, bags, mode, weights)


class EmbeddingBag(Module):
    """A table of `num_embeddings` rows of size `embedding_dim` (drawn from N(0, 1), the
    padding row zero), reduced per bag by `embedding_bag`."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: str = "CPU"):
        super().__init__()
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise shape_error("EmbeddingBag", f"padding_idx must be within num_embeddings, "
                                              f"got {padding_idx} for {num_embeddings}")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        self.weight = self._initial_weight(_weight, device)

    def _initial_weight(self, given: Tensor | None, device: str) -> Tensor:
        shape = (self.num_embeddings, self.embedding_dim)
        if given is not None:
            if given.shape != shape:
                raise shape_error("EmbeddingBag", f"_weight of shape {given.shape} does not "
                                                  f"match {shape}")
            return given if given.requires_grad else given.requires_grad_()
        weight = Tensor.randn(*shape, device=device)
        if self.padding_idx is not None:
            weight[self.padding_idx] = 0.0
        realize_later(weight)  # computed by the next realize, unless loaded first
        return weight.requires_grad_()

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        parts = [f"{self.num_embeddings}", f"{self.embedding_dim}"]
        if self.max_norm is not None:
            parts.append(f"max_norm={self.max_norm}")
        if self.norm_type != 2:
            parts.append(f"norm_type={self.norm_type}")
        if self.scale_grad_by_freq:
            parts.append("scale_grad_by_freq=True")
        parts.append(f"mode={self.mode!r}")
        if self.padding_idx is not None:
            parts.append(f"padding_idx={self.padding_idx}")
        return ", ".join(parts)
