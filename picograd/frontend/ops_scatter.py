"""Writing by index, as torch names these ops (out of place, and in place with a `_`).

    scatter_reduce(dim, index, src, reduce, include_self=True)   sum|prod|mean|amax|amin
    scatter(dim, index, src, reduce=None|"add"|"multiply")
    index_add(dim, index, source, alpha=1), index_fill(dim, index, value)
    index_put(indices, values, accumulate=False), put(index, source, accumulate=False)
    masked_scatter(mask, source), take(index)
    in place: scatter_reduce_, index_add_, index_fill_, index_put_, put_, masked_scatter_

`scatter_reduce` compares the index with an arange of the dim (a one-hot, (index size) x
(dim size) work, as `scatter`): every position of the output reduces the src elements whose
index names it, and the tensor's own element first when `include_self`. Being one reduce
over one tensor, its gradient is the reduce's: amax/amin share it among the elements equal
to the result (the tensor's own included), prod is torch's with zeros, mean divides by the
count. `index_add` is a scatter_add of the index spread over the source. `index_put`, `put`
and a subscript assignment (`x[idx] = v`, ops_advanced_index.py) write at flat positions
(`_write_flat`): with `accumulate` one scatter_add; without it the written positions are
replaced, and where a position repeats the value last in order wins (torch's CPU outcome),
found on the host for a realized index (then one scatter_add of the kept values) and with
`index_copy`'s one-hot otherwise (a computed index, or any index inside a jit capture, whose
replay gets other values). `masked_scatter` places source elements in order at the
mask's True positions: a cumsum of the mask gives each position its source element, so it
keeps static shapes; a source too small raises IndexRangeError when read (a range guard).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from picograd.errors import ShapeError
from picograd.frontend import capture
from picograd.frontend.base import Scalar, TensorBase, broadcast_shape, normalize_axis
from picograd.frontend.dtype import bool_, int32
from picograd.frontend.grad_mode import AutogradError, is_grad_enabled, no_grad
from picograd.frontend.lazy import dtype_error, shape_error, user_location, view_source
from picograd.frontend.ops_select import SelectOps, host_values
from picograd.frontend.ops_shape import cat

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


class ScatterOps(SelectOps):
    __slots__ = ()

    # ── in place ────────────────────────────────────────────────────────────

    def _in_place(self, op: str, result: Any) -> Self:
        """Point this tensor at `result` (an in-place op), recorded for autograd."""
        if is_grad_enabled() and self.requires_grad and self._ctx is None:
            raise AutogradError(f"{op}: a leaf Variable that requires grad is being used in an "
                                f"in-place operation\n  at {user_location()}")
        self._take_node(result._node)
        if is_grad_enabled():
            self._ctx, self.requires_grad = result._ctx, result.requires_grad
        return self

    def _old(self) -> Any:
        """This tensor's current value as a tensor of its own (before an in-place op)."""
        old = type(self)._from_node(self._node)
        old._ctx, old.requires_grad = self._ctx, self.requires_grad
        return old

    # ── scatter_reduce ──────────────────────────────────────────────────────

    def scatter_reduce(self, dim: int, index: TensorBase, src: TensorBase, reduce: str,
                       *, include_self: bool = True) -> Self:
        """torch's scatter_reduce: each position named by `index` along `dim` reduces the
        src elements sent there (and its own value with include_self) by sum, prod, mean,
        amax or amin; positions no index names keep their value."""
        op = "scatter_reduce"
        if reduce not in _REDUCES:
            raise shape_error(op, f"reduce must be one of {_REDUCES}, got {reduce!r}")
        d = self._check_index(op, dim, index)
        self._check_device(op, src)
        if src.ndim != index.ndim or any(i > s for i, s in zip(index.shape, src.shape,
                                                               strict=True)):
            raise shape_error(op, f"index of shape {index.shape} is larger than src of shape "
                                  f"{src.shape}")
        if src.dtype != self.dtype:
            raise dtype_error(op, f"src is {src.dtype.name}, the tensor {self.dtype.name}: "
                                  "they must match")
        n = self.shape[d]
        idx: Any = self._checked_index(op, index, n, negative=False)
        s: Any = src
        s = s._slice((0,) * s.ndim, (1,) * s.ndim, index.shape)
        pads = tuple((0, 0) if k == d else (0, full - part) for k, (full, part) in
                     enumerate(zip(self.shape, index.shape, strict=True)))
        if any(p for _, p in pads):  # off `dim`, positions past the index hit nothing
            idx, s = idx.pad(pads, -1), s.pad(pads)
        if idx.numel() == 0 or n == 0:
            return type(self)._from_node(self._node)._with_gradient((self,), lambda g: (g,))
        hit = idx.unsqueeze(-1) == self._arange(n)  # (*P, n): [.., k, .., j] = index is j
        identity = _identity(reduce, self)
        vals = hit.where(s.unsqueeze(-1).expand(hit.shape), identity)
        mine: Any = self
        me = mine.movedim(d, -1).unsqueeze(d)  # (*P with d -> 1, n)
        stacked = vals if not include_self else cat([me, vals], d)
        if reduce in ("sum", "mean"):
            total = stacked.sum(d)
        elif reduce == "prod":
            total = stacked.prod(d)
        else:
            total = stacked.max(d) if reduce == "amax" else stacked.min(d)
        total = total.cast(self.dtype)
        count: Any = hit.cast(int32).sum(d)
        if reduce == "mean":
            count = count + 1 if include_self else count.maximum(1)
            total = total / count if self.dtype.is_float else total // count
            total = total.cast(self.dtype)
        out = total.movedim(-1, d)
        if include_self:
            return out
        any_hit = (hit.cast(int32).sum(d) > 0).movedim(-1, d)
        return any_hit.where(out, self)

    def scatter_reduce_(self, dim: int, index: TensorBase, src: TensorBase, reduce: str,
                        *, include_self: bool = True) -> Self:
        return self._in_place("scatter_reduce_", self._old().scatter_reduce(
            dim, index, src, reduce, include_self=include_self))

    def scatter(self, dim: int, index: TensorBase, src: TensorBase | Scalar,
                reduce: str | None = None) -> Self:
        """torch's scatter: src values written at `index` along `dim` (see
        `IndexOps.scatter`); with reduce="add" / "multiply" they are added / multiplied in
        (`scatter_reduce` sum / prod, the tensor's value included)."""
        if reduce is None:
            return super().scatter(dim, index, src)
        kinds = {"add": "sum", "multiply": "prod"}
        if reduce not in kinds:
            raise shape_error("scatter", f"reduce must be 'add' or 'multiply', got {reduce!r}")
        if not isinstance(src, TensorBase):
            src = self._const(src, index.shape, self.dtype)
        return self.scatter_reduce(dim, index, src, kinds[reduce])

    # ── index_add, index_fill ───────────────────────────────────────────────

    def _along_index(self, op: str, dim: int, index: TensorBase) -> tuple[int, Any]:
        d = normalize_axis(op, dim, max(self.ndim, 1), self.shape)
        if index.ndim > 1:
            raise shape_error(op, f"index must be 1-D, got shape {index.shape}")
        flat: Any = index
        return d, flat.reshape(-1)

    def index_add(self, dim: int, index: TensorBase, source: TensorBase,
                  alpha: Scalar = 1) -> Self:
        """A copy with alpha * source.select(dim, i) added at self.select(dim, index[i])
        (repeated indices add up)."""
        op = "index_add"
        d, idx = self._along_index(op, dim, index)
        want = (*self.shape[:d], idx.shape[0], *self.shape[d + 1:])
        if not isinstance(source, TensorBase) or source.shape != want:
            got = source.shape if isinstance(source, TensorBase) else type(source).__name__
            raise shape_error(op, f"source must have shape {want}, got {got}")
        src: Any = source
        src = src if alpha == 1 else src * alpha
        spread = idx.reshape(tuple(-1 if k == d else 1 for k in range(self.ndim)))
        return self.scatter_add(d, spread.expand(want), src.cast(self.dtype))

    def index_add_(self, dim: int, index: TensorBase, source: TensorBase,
                   alpha: Scalar = 1) -> Self:
        return self._in_place("index_add_", self._old().index_add(dim, index, source, alpha))

    def index_fill(self, dim: int, index: TensorBase, value: Scalar | TensorBase) -> Self:
        """A copy with the slices of `dim` that `index` names filled with `value`."""
        op = "index_fill"
        d, idx = self._along_index(op, dim, index)
        n = self.shape[d] if self.ndim else 1
        idx = self._checked_index(op, idx, n)
        hit = (idx.unsqueeze(-1) == self._arange(n)).cast(int32).sum(0) > 0
        mask = hit.reshape(tuple(n if k == d else 1 for k in range(self.ndim)))
        return self.masked_fill(mask.expand(self.shape), value)

    def index_fill_(self, dim: int, index: TensorBase, value: Scalar | TensorBase) -> Self:
        return self._in_place("index_fill_", self._old().index_fill(dim, index, value))

    # ── flat writes: index_put, put, take ───────────────────────────────────

    def _write_flat(self, op: str, positions: Any, values: Any, accumulate: bool,
                    known: bool) -> Self:
        """This tensor with `values` (one per position, both 1-D) written (or added with
        `accumulate`) at the flat `positions` (in range, non-negative). `known`: the
        positions come from indices already on the host, so reading them costs one small
        kernel (never inside a jit capture, whose replay gets other indices)."""
        flat: Any = self.reshape(-1)
        vals: Any = values.cast(self.dtype)
        if positions.shape[0] == 0:  # nothing written: the values (a new tensor)
            return flat.reshape(self.shape)
        if accumulate:
            return flat.scatter_add(0, positions, vals).reshape(self.shape)
        if not known or capture.recorder() is not None:
            # positions computed on the device: index_copy's one-hot, last wins
            return flat.index_copy(0, positions, vals).reshape(self.shape)
        pos = host_values(op, positions).reshape(-1)
        # the last write to each position wins: keep the final occurrence only
        rev_unique = np.unique(pos[::-1], return_index=True)[1]
        keep = np.sort(pos.shape[0] - 1 - rev_unique)
        kept_pos = self._host_leaf(pos[keep], int32)
        kept = self._host_leaf(keep, int32)
        numel = flat.shape[0]
        with no_grad():
            written = np.zeros(numel, bool)
            written[pos] = True
            mask = self._host_leaf(written, bool_)
            zero: Any = flat._const(0, flat.shape, flat.dtype)
            plain: Any = type(vals)._from_node(vals._node)
            placed = zero.scatter_add(0, kept_pos, plain._gather_along(0, kept))
            out: Any = mask.where(placed, flat)

        def gradient(g: Any) -> tuple[Any, Any]:
            return mask.where(0.0, g).cast(g.dtype), g._gather_along(0, positions)

        return out._with_gradient((flat, vals), gradient).reshape(self.shape)

    def _flat_positions(self, op: str, index: TensorBase) -> Any:
        n = self.numel()
        idx: Any = self._checked_index(op, index, n)
        return idx.reshape(-1)

    def take(self, index: TensorBase) -> Self:
        """The elements at the flat positions `index` (negative from the end), in its
        shape, as torch.take."""
        flat: Any = self.reshape(-1)
        return flat._gather_along(0, self._flat_positions("take", index)).reshape(index.shape)

    def put(self, index: TensorBase, source: TensorBase, accumulate: bool = False) -> Self:
        """A copy with source written (added with `accumulate`) at the flat positions
        `index` (negative from the end), as torch's put."""
        if source.numel() != index.numel():
            raise shape_error("put", f"source has {source.numel()} elements, the index "
                                     f"{index.numel()}: they must match")
        src: Any = source
        return self._write_flat("put", self._flat_positions("put", index), src.reshape(-1),
                                accumulate, _held(index))

    def put_(self, index: TensorBase, source: TensorBase, accumulate: bool = False) -> Self:
        return self._in_place("put_", self._old().put(index, source, accumulate))

    def _advanced_positions(self, op: str, indices: Sequence[Any]) -> Any:
        """The flat positions that `self[indices]` reads (its shape), from indexing an
        arange of this tensor's flat positions the same way."""
        n = self.numel()
        if n >= 2 ** 31:
            raise shape_error(op, f"{n} elements are more than an int32 position reaches")
        positions: Any = self._host_leaf(np.arange(n, dtype=np.int32).reshape(self.shape),
                                         int32)
        return positions[tuple(indices)]

    def index_put(self, indices: Sequence[Any], values: TensorBase | Scalar,
                  accumulate: bool = False) -> Self:
        """A copy with `values` written (added with `accumulate`) at `self[indices]`
        (torch's index_put: a tuple of index tensors, advanced indexing's placement)."""
        op = "index_put"
        if not isinstance(indices, tuple | list):
            raise shape_error(op, f"indices must be a tuple of tensors, got "
                                  f"{type(indices).__name__}")
        pos = self._advanced_positions(op, indices)
        return self._write_at(op, pos, values, accumulate, all(_held(i) for i in indices))

    def _write_at(self, op: str, pos: Any, values: TensorBase | Scalar,
                  accumulate: bool, known: bool) -> Self:
        if isinstance(values, TensorBase):
            self._check_device(op, values)
            v: Any = values
            try:
                v = v.expand(pos.shape)
            except ShapeError:
                raise shape_error(op, f"values of shape {values.shape} do not broadcast to "
                                      f"the indexed shape {pos.shape}") from None
        else:
            v = self._const(values, pos.shape, self.dtype)
        return self._write_flat(op, pos.reshape(-1), v.reshape(-1), accumulate, known)

    def index_put_(self, indices: Sequence[Any], values: TensorBase | Scalar,
                   accumulate: bool = False) -> Self:
        return self._in_place("index_put_", self._old().index_put(indices, values,
                                                                  accumulate))

    # ── masked_scatter ──────────────────────────────────────────────────────

    def masked_scatter(self, mask: TensorBase, source: TensorBase) -> Self:
        """A copy with source's elements, in order, at the positions where the bool `mask`
        (broadcast) is True, as torch's masked_scatter."""
        op = "masked_scatter"
        if not mask.dtype.is_bool:
            raise dtype_error(op, f"the mask must be bool, got {mask.dtype.name}")
        self._check_device(op, mask)
        self._check_device(op, source)
        if source.dtype != self.dtype:
            raise dtype_error(op, f"source is {source.dtype.name}, the tensor "
                                  f"{self.dtype.name}: they must match")
        shape = broadcast_shape(op, self.shape, mask.shape)
        m: Any = mask
        m = m.expand(shape).reshape(-1)
        src: Any = source
        src = src.reshape(-1)
        if m.shape[0] == 0:
            return self.expand(shape)
        n = src.shape[0]
        with no_grad():
            which = m.cast(int32).cumsum(0) - 1  # the source element each True takes
            which = m.where(which, -1)  # -1: none (exempt from the range check)
            which = self._checked_index(op, which, n, negative=False, ignore=-1)
            which = (which < 0).where(n, which)
        # one spare element past the source, so the table is never empty
        picked = src.pad(((0, 1),))._gather_along(0, which)
        x: Any = self.expand(shape)
        return m.where(picked, x.reshape(-1)).reshape(shape)

    def masked_scatter_(self, mask: TensorBase, source: TensorBase) -> Self:
        return self._in_place("masked_scatter_", self._old().masked_scatter(mask, source))


def _held(index: Any) -> bool:
    """Whether a subscript item's values are on the host (python data, a realized tensor
    or a view of one)."""
    if isinstance(index, TensorBase):
        return view_source(index._node).buffer is not None
    return not isinstance(index, slice) and index is not None and index is not Ellipsis


def _identity(reduce: str, like: TensorBase) -> Scalar:
    dt = like.dtype
    if reduce in ("sum", "mean"):
        return 0.0 if dt.is_float else 0
    if reduce == "prod":
        return 1.0 if dt.is_float else 1
    if dt.is_float:
        return -float("inf") if reduce == "amax" else float("inf")
    if dt is bool_:
        return reduce == "amin"
    return dt.min if reduce == "amax" else dt.max


