"""More shape ops and tensor metadata (torch's names and semantics), from movement ops.

    repeat_interleave(repeats, dim) tile(dims) unbind(dim) narrow(dim, start, length)
    t() .mT .H .mH rot90(k, dims) fliplr() flipud()
    tensor_split(indices_or_sections, dim) hsplit vsplit dsplit
    clone() type_as(other) new_zeros/new_ones/new_full/new_empty/new_tensor
    size(dim) dim() ndimension() nelement() element_size() is_contiguous()
    meshgrid(*tensors, indexing) atleast_1d/2d/3d(*tensors)      (free functions)

`repeat_interleave` with a tensor of repeats and `tensor_split` with a tensor of indices
have output shapes that depend on values: they read those values when called (a realize
of that small tensor, as torch's CPU ops read theirs) and then index lazily.

    x = pg.Tensor([[1, 2], [3, 4]])
    x.repeat_interleave(2, dim=0).shape, x.rot90().tolist(), pg.meshgrid(x[0], x[1])[0].shape
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, Self, TypeVar

import numpy as np

from picograd.frontend.base import TensorBase, normalize_axis
from picograd.frontend.dtype import int32, to_dtype
from picograd.frontend.lazy import LazyOp, index_error, shape_error
from picograd.frontend.ops_index import IndexOps
from picograd.frontend.ops_math import MathOps

T = TypeVar("T", bound=TensorBase)


def _values(t: TensorBase) -> np.ndarray:
    """The values of a (small, index-like) tensor, read now."""
    return np.asarray(t.numpy())  # type: ignore[attr-defined]  # (Tensor's)


class ShapeExtraOps(MathOps, IndexOps):
    __slots__ = ()

    # ── repeating and splitting ─────────────────────────────────────────────

    def repeat_interleave(self, repeats: int | TensorBase, dim: int | None = None, *,
                          output_size: int | None = None) -> Self:
        """Each element (each slice of `dim`; of the flattening when dim is None) repeated
        `repeats` times, or repeats[i] times for slice i."""
        if dim is not None and self.ndim == 0:  # (torch: "dim out of range [-1, 0], got 1")
            raise index_error("repeat_interleave", "a 0-d tensor has no dim to repeat along; "
                                                   "give dim=None")
        x = self.reshape(-1) if dim is None else self
        d = 0 if dim is None else normalize_axis("repeat_interleave", dim, x.ndim, x.shape)
        n = x.shape[d]
        if isinstance(repeats, TensorBase):
            if repeats.dtype.is_float or repeats.ndim > 1:
                raise shape_error("repeat_interleave", f"repeats must be an int or a 1-D "
                                                       f"integer tensor, got {repeats.dtype.name} "
                                                       f"of shape {repeats.shape}")
            counts = _values(repeats).reshape(-1).astype(np.int64)
            if counts.size == 1:
                counts = np.full(n, counts[0])
            if counts.size != n:
                raise shape_error("repeat_interleave", f"repeats has {counts.size} entries, "
                                                       f"dim {d} has size {n}")
        else:
            counts = np.full(n, int(repeats))
        if (counts < 0).any():
            raise shape_error("repeat_interleave", f"repeats must be >= 0, got {counts.min()}")
        total = int(counts.sum())
        if output_size is not None and output_size != total:
            raise shape_error("repeat_interleave", f"output_size {output_size} is not the sum "
                                                   f"of repeats ({total})")
        if not isinstance(repeats, TensorBase):  # equal repeats: a broadcast, no gather
            r = int(repeats)
            wide = x.unsqueeze(d + 1).expand(*x.shape[:d + 1], r, *x.shape[d + 1:])
            return wide.reshape(*x.shape[:d], n * r, *x.shape[d + 1:])
        index = np.repeat(np.arange(n, dtype=np.int32), counts)
        return x.index_select(d, self._leaf_ints(index))

    def _leaf_ints(self, values: np.ndarray) -> Self:
        """Host-computed int32 indices as a leaf on this device (as ShapeOps._arange)."""
        node = LazyOp.leaf(np.ascontiguousarray(values, np.int32), int32, self.device)
        return type(self)._from_node(node)

    def tile(self, *dims: int | Sequence[int]) -> Self:
        """repeat() with `dims` padded with leading 1s to the tensor's rank (as torch)."""
        reps = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else dims
        reps = tuple(int(r) for r in reps)  # type: ignore[arg-type]
        reps = (1,) * (self.ndim - len(reps)) + reps
        return self.repeat(reps)

    def unbind(self, dim: int = 0) -> tuple[Self, ...]:
        d = normalize_axis("unbind", dim, self.ndim, self.shape)
        return tuple(self._narrow(d, i, 1).squeeze(d) for i in range(self.shape[d]))

    def narrow(self, dim: int, start: int | TensorBase, length: int) -> Self:
        if self.ndim == 0:
            raise shape_error("narrow", "cannot narrow a 0-d tensor")
        d = normalize_axis("narrow", dim, self.ndim, self.shape)
        n = self.shape[d]
        s = int(_values(start).reshape(())) if isinstance(start, TensorBase) else int(start)
        if not -n <= s <= n:
            raise index_error("narrow", f"start {s} is out of range for dim {dim} of size {n}")
        s = s % n if s < 0 else s
        if length < 0 or s + length > n:
            raise shape_error("narrow", f"start ({s}) + length ({length}) exceeds dim {dim} "
                                        f"of size {n}")
        return self._narrow(d, s, length)

    def tensor_split(self, indices_or_sections: int | Sequence[int] | TensorBase,
                     dim: int = 0) -> tuple[Self, ...]:
        """`sections` near-equal pieces (the first n % sections one longer), or the pieces
        between `indices` (clamped to the dim, as Python slices)."""
        d = normalize_axis("tensor_split", dim, self.ndim, self.shape)
        n = self.shape[d]
        spec: Any = indices_or_sections
        if isinstance(spec, TensorBase):
            values = _values(spec)
            spec = int(values) if spec.ndim == 0 else [int(v) for v in values.reshape(-1)]
        if isinstance(spec, int):
            if spec <= 0:
                raise shape_error("tensor_split", f"sections must be positive, got {spec}")
            small, extra = divmod(n, spec)
            sizes = [small + 1] * extra + [small] * (spec - extra)
            bounds = np.cumsum([0, *sizes]).tolist()
        else:
            bounds = [0, *(min(max(i if i >= 0 else i + n, 0), n) for i in spec), n]
        pieces = []
        for lo, hi in itertools.pairwise(bounds):
            lo = min(lo, n)
            pieces.append(self._narrow(d, lo, max(hi - lo, 0)))
        return tuple(pieces)

    def _split_at(self, op: str, dim: int, sections: int | Sequence[int]) -> tuple[Self, ...]:
        if isinstance(sections, int) and (sections <= 0 or self.shape[dim] % sections):
            raise shape_error(op, f"dim {dim} of size {self.shape[dim]} cannot be split into "
                                  f"{sections} equal pieces")
        return self.tensor_split(sections, dim)

    def hsplit(self, sections: int | Sequence[int]) -> tuple[Self, ...]:
        if self.ndim == 0:
            raise shape_error("hsplit", "needs at least 1 dim, got a 0-d tensor")
        return self._split_at("hsplit", 1 if self.ndim > 1 else 0, sections)

    def vsplit(self, sections: int | Sequence[int]) -> tuple[Self, ...]:
        if self.ndim < 2:
            raise shape_error("vsplit", f"needs at least 2 dims, got shape {self.shape}")
        return self._split_at("vsplit", 0, sections)

    def dsplit(self, sections: int | Sequence[int]) -> tuple[Self, ...]:
        if self.ndim < 3:
            raise shape_error("dsplit", f"needs at least 3 dims, got shape {self.shape}")
        return self._split_at("dsplit", 2, sections)

    # ── transposes, rotations, flips ────────────────────────────────────────

    def t(self) -> Self:
        """The transpose of a matrix; a 0-d or 1-D tensor is returned as it is."""
        if self.ndim > 2:
            raise shape_error("t", f"expects a tensor of at most 2 dims, got {self.shape}")
        return self if self.ndim < 2 else self.transpose(0, 1)

    @property
    def mT(self) -> Self:
        if self.ndim < 2:
            raise shape_error("mT", f"needs at least 2 dims, got shape {self.shape}")
        return self.transpose(-2, -1)

    @property
    def mH(self) -> Self:  # (real tensors: the conjugate is the tensor)
        return self.mT

    @property
    def H(self) -> Self:
        if self.ndim not in (0, 2):
            raise shape_error("H", f"is for matrices (2-D) or 0-d tensors, got {self.shape}")
        return self.t()

    def adjoint(self) -> Self:
        return self.mH

    def rot90(self, k: int = 1, dims: Sequence[int] = (0, 1)) -> Self:
        """Rotate by 90 degrees k times, from dims[0] towards dims[1]."""
        if len(dims) != 2:
            raise shape_error("rot90", f"dims must be a pair, got {tuple(dims)}")
        d0, d1 = (normalize_axis("rot90", d, self.ndim, self.shape) for d in dims)
        if d0 == d1 or self.ndim < 2:
            raise shape_error("rot90", f"needs two different dims, got {tuple(dims)} for "
                                       f"shape {self.shape}")
        k %= 4
        if k == 1:
            return self.flip(d1).transpose(d0, d1)
        if k == 2:
            return self.flip(d0, d1)
        if k == 3:
            return self.flip(d0).transpose(d0, d1)
        return self.clone()

    def fliplr(self) -> Self:
        if self.ndim < 2:
            raise shape_error("fliplr", f"needs at least 2 dims, got shape {self.shape}")
        return self.flip(1)

    def flipud(self) -> Self:
        if self.ndim < 1:
            raise shape_error("flipud", "needs at least 1 dim, got a 0-d tensor")
        return self.flip(0)

    # ── copies, new tensors, metadata ───────────────────────────────────────

    def clone(self, *, memory_format: object = None) -> Self:
        """A new tensor of the same values (its own node: in-place ops on either leave the
        other alone); the gradient flows back to this one."""
        return self._make("reshape", (self,), None, self.shape)

    def type_as(self, other: TensorBase) -> Self:
        return self.cast(other.dtype)

    def _new(self, value: float | int | bool, size: Sequence[Any], dtype: object,
             device: object) -> Self:
        shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
        if any(not isinstance(s, int) or s < 0 for s in shape):
            raise shape_error("new_*", f"sizes must be ints >= 0, got {tuple(shape)}")
        out = self._const(value, tuple(shape), self.dtype if dtype is None else to_dtype(dtype))
        return out if device is None else out.to(device)  # type: ignore[attr-defined]

    def new_zeros(self, *size: Any, dtype: object = None, device: object = None) -> Self:
        return self._new(0, size, dtype, device)

    def new_ones(self, *size: Any, dtype: object = None, device: object = None) -> Self:
        return self._new(1, size, dtype, device)

    def new_empty(self, *size: Any, dtype: object = None, device: object = None) -> Self:
        return self._new(0, size, dtype, device)

    def new_full(self, size: Sequence[int], fill_value: float | int | bool, *,
                 dtype: object = None, device: object = None) -> Self:
        return self._new(fill_value, (tuple(size),), dtype, device)

    def new_tensor(self, data: Any, *, dtype: object = None, device: object = None,
                   requires_grad: bool = False) -> Self:
        """A new leaf of `data` with this tensor's dtype and device unless given."""
        dt = self.dtype if dtype is None else dtype
        dev = self.device if device is None else device
        if isinstance(data, TensorBase):
            data = _values(data)
        return type(self)(data, dtype=dt, device=dev,  # type: ignore[call-arg]
                          requires_grad=requires_grad)

    def size(self, dim: int | None = None) -> Any:
        """The shape (a tuple), or the size of one dim."""
        if dim is None:
            return self.shape
        return self.shape[normalize_axis("size", dim, self.ndim, self.shape)]

    def dim(self) -> int:
        return self.ndim

    def ndimension(self) -> int:
        return self.ndim

    def nelement(self) -> int:
        return self.numel()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def is_contiguous(self, memory_format: object = None) -> bool:
        """True: picograd's tensors are row-major values (views are their own nodes)."""
        return True


def meshgrid(*tensors: T | Sequence[T], indexing: str = "ij") -> tuple[T, ...]:
    """Coordinate grids of 1-D (or 0-d) tensors: with "ij" grid k varies along dim k; "xy"
    swaps the roles of the first two (numpy's default)."""
    ts = list(tensors[0]) if len(tensors) == 1 and not isinstance(tensors[0], TensorBase) \
        else list(tensors)
    if indexing not in ("ij", "xy"):
        raise shape_error("meshgrid", f"indexing must be 'ij' or 'xy', got {indexing!r}")
    if not ts:
        raise shape_error("meshgrid", "needs at least one tensor")
    for t in ts:
        if t.ndim > 1:  # type: ignore[union-attr]
            raise shape_error("meshgrid", f"expects 0-d or 1-D tensors, got shape {t.shape}")  # type: ignore[union-attr]
    flat: list[Any] = [t.reshape(-1) for t in ts]  # type: ignore[union-attr]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    grids = [t.reshape(tuple(-1 if j == i else 1 for j in range(len(flat)))).expand(shape)
             for i, t in enumerate(flat)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _at_least(rank: int, tensors: tuple[Any, ...]) -> Any:
    ts = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], list | tuple) \
        else list(tensors)
    out = []
    for t in ts:
        if t.ndim >= rank:
            out.append(t)
        elif rank == 3 and t.ndim == 2:
            out.append(t.unsqueeze(-1))
        elif rank == 3 and t.ndim == 1:
            out.append(t.reshape(1, -1, 1))
        else:
            out.append(t.reshape((1,) * (rank - t.ndim) + t.shape))
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], TensorBase) else tuple(out)


def atleast_1d(*tensors: Any) -> Any:
    return _at_least(1, tensors)


def atleast_2d(*tensors: Any) -> Any:
    return _at_least(2, tensors)


def atleast_3d(*tensors: Any) -> Any:
    return _at_least(3, tensors)

