"""Movement ops: views that only rearrange elements (pg_tensor reshape, permute, expand, pad,
slice, flip), plus indexing built from them. No-op moves return `self` (no node).

Dims are ints (anything with `__index__` but bool); as in torch, a dim named twice in
`permute` or `flip` is a ShapeError, and `pad` takes one (before, after) pair per dim."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Self

from picograd.frontend.base import (
    Scalar,
    TensorBase,
    fill_scalar,
    normalize_axis,
    prod,
    shape_arg,
)
from picograd.frontend.lazy import LazyOp, dim_error, shape_error


def _index(value: Any) -> int | None:
    """`value` as an int, or None if it is not one (bools are not)."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _axes_arg(op: str, args: Sequence[Any]) -> tuple[int, ...]:
    """`f(0, 1)` and `f((0, 1))` both mean the dims (0, 1); ShapeError unless they are ints."""
    raw = tuple(args[0]) if len(args) == 1 and isinstance(args[0], tuple | list) else tuple(args)
    dims = []
    for d in raw:
        i = _index(d)
        if i is None:
            raise shape_error(op, f"dims must be ints, got {raw}")
        dims.append(i)
    return tuple(dims)


def unique_axes(op: str, dims: tuple[int, ...], ndim: int, shape: tuple[int, ...]
                ) -> tuple[int, ...]:
    """`dims` normalised to 0..ndim-1, in order; ShapeError naming a dim given twice
    (0 and -ndim are the same dim), as torch's "dim 0 appears multiple times"."""
    axes = tuple(normalize_axis(op, d, ndim, shape) for d in dims)
    for i, a in enumerate(axes):
        if a in axes[:i]:
            raise shape_error(op, f"dim {a} appears more than once in {dims} (shape {shape})")
    return axes


def _pad_pairs(pads: Any) -> tuple[tuple[int, int], ...] | None:
    """`pads` as (before, after) int pairs, or None if it is not a sequence of them."""
    if not isinstance(pads, Sequence):
        return None
    pairs = []
    for p in pads:
        if not isinstance(p, Sequence) or len(p) != 2:
            return None
        lo, hi = _index(p[0]), _index(p[1])
        if lo is None or hi is None:
            return None
        pairs.append((lo, hi))
    return tuple(pairs)


class MovementOps(TensorBase):
    __slots__ = ()

    def reshape(self, *shape: int | Sequence[int]) -> Self:
        """Same elements (row-major), new shape; one dimension may be -1 (inferred)."""
        new = shape_arg("reshape", shape)
        node = self._node
        if new == node.shape:  # (the same shape: nothing to infer or check)
            return self
        count = prod(node.shape)
        if new and min(new) < 0:
            if new.count(-1) > 1 or min(new) < -1:
                raise shape_error("reshape", f"cannot reshape {self.shape} to {new}: at most "
                                             "one dimension may be -1 and none may be negative")
            known = prod(d for d in new if d != -1)
            if known == 0 or count % known:
                raise shape_error("reshape", f"cannot reshape {self.shape} to {new}")
            new = tuple(count // known if d == -1 else d for d in new)
        if prod(new) != count:
            raise shape_error("reshape", f"cannot reshape {self.shape} ({count} elements)"
                                         f" to {new} ({prod(new)} elements)")
        if new == node.shape:
            return self
        inner = node.src[0] if node.op == "reshape" else None
        if inner is not None and node.guards == inner.guards:  # (it adds no check)
            # a reshape of a reshape: one reshape of the first one's source, or that source
            view = inner if inner.shape == new else LazyOp("reshape", (inner,), None, new,
                                                           node.dtype, node.device)
            return self._view_node(view, "reshape", None)
        return self._make("reshape", (self,), None, new)

    def permute(self, *dims: int | Sequence[int]) -> Self:
        """Reorder dimensions: result dim i is dim `dims[i]` of this tensor."""
        order = _axes_arg("permute", dims)
        n = self.ndim
        if len(order) != n:
            raise shape_error("permute", f"{order} is not a permutation of the dims of shape "
                                         f"{self.shape}: it names {len(order)} dims, not {n}")
        perm = unique_axes("permute", order, n, self.shape)
        if perm == tuple(range(n)):
            return self
        shape = tuple(self.shape[p] for p in perm)
        node = self._node
        inner = node.src[0] if node.op == "permute" else None
        if inner is not None and node.guards == inner.guards:  # (it adds no check)
            # a permute of a permute: one permute of the first one's source (a weight's
            # transpose transposed back by matmul: that source itself)
            both = tuple(node.arg[p] for p in perm)
            view = inner if both == tuple(range(n)) else LazyOp(
                "permute", (inner,), both, shape, node.dtype, node.device)
            return self._view_node(view, "permute", perm)
        return self._make("permute", (self,), perm, shape)

    def transpose(self, dim0: int = -2, dim1: int = -1) -> Self:
        """Swap two dimensions (default: the last two). As torch, a 0-d tensor has one dim
        to name (0 or -1), so `transpose(0, 0)` of a 0-d or 1-d tensor is the tensor."""
        n = max(self.ndim, 1)
        a = normalize_axis("transpose", dim0, n, self.shape)
        b = normalize_axis("transpose", dim1, n, self.shape)
        if a == b:
            return self
        order = list(range(self.ndim))
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    @property
    def T(self) -> Self:
        """All dimensions reversed (the transpose of a matrix), as numpy's `.T`."""
        return self.permute(tuple(reversed(range(self.ndim))))

    def expand(self, *shape: int | Sequence[int]) -> Self:
        """Broadcast to `shape` (torch's rules: new leading dims, -1 keeps a dim, only
        size-1 dims grow)."""
        new = shape_arg("expand", shape)
        if len(new) < self.ndim:
            raise shape_error("expand", f"cannot expand {self.shape} to fewer dims {new}")
        lead = len(new) - self.ndim
        padded = (1,) * lead + self.shape
        if -1 in new:
            new = tuple(p if (d == -1 and i >= lead) else d
                        for i, (p, d) in enumerate(zip(padded, new, strict=True)))
        for p, d in zip(padded, new, strict=True):
            if (p != d and p != 1) or d < 0:
                raise shape_error("expand", f"cannot expand {self.shape} to {new}")
        x = self.reshape(padded) if lead else self
        return x if new == x.shape else x._make("expand", (x,), None, new)

    def _broadcast_to(self, shape: tuple[int, ...]) -> Self:
        """reshape + expand to a shape already checked by `broadcast_shape`."""
        return self if shape == self.shape else self.expand(shape)

    def unsqueeze(self, dim: int) -> Self:
        d = normalize_axis("unsqueeze", dim, self.ndim + 1, self.shape)
        return self.reshape((*self.shape[:d], 1, *self.shape[d:]))

    def squeeze(self, dim: int | None = None) -> Self:
        if dim is None:
            return self.reshape(tuple(d for d in self.shape if d != 1))
        d = normalize_axis("squeeze", dim, self.ndim, self.shape)
        if self.shape[d] != 1:
            return self
        return self.reshape(self.shape[:d] + self.shape[d + 1:])

    def pad(self, pads: Sequence[tuple[int, int]], value: Scalar = 0) -> Self:
        """numpy-style padding: `pads[i] = (before, after)` for every dimension i, filled
        with `value`. E.g. `x.pad(((1, 0), (0, 2)))` on a 4x8 tensor gives 5x10. Sizes are
        non-negative ints (ShapeError otherwise): torch's flat form with negative sizes
        that crop is `picograd.nn.functional.pad`."""
        pairs = _pad_pairs(pads)
        if pairs is None or len(pairs) != self.ndim or any(min(p) < 0 for p in pairs):
            example = ((1, 1),) * self.ndim
            raise shape_error("pad", f"needs one (before, after) pair of non-negative ints per "
                                     f"dim of shape {self.shape}, e.g. {example}; got {pads!r}"
                                     " (torch's flat (left, right, ...) form is "
                                     "picograd.nn.functional.pad)")
        if all(p == (0, 0) for p in pairs):
            return self
        v = fill_scalar("pad", value, self.dtype)  # uint8 -1.0 and int32 inf: DTypeError
        return self._padded(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs), v)

    def _padded(self, low: tuple[int, ...], high: tuple[int, ...], value: Scalar) -> Self:
        """`pad` of sizes and a fill value already checked (`cat` pads every piece)."""
        new = tuple(d + lo + hi for d, lo, hi in zip(self.shape, low, high, strict=True))
        return self._make("pad", (self,), (low, high, value), new)

    def flip(self, *axis: int | Sequence[int]) -> Self:
        """Reverse the order of elements along `axis` (an int or a tuple of ints, each dim
        at most once)."""
        axes = sorted(unique_axes("flip", _axes_arg("flip", axis), self.ndim, self.shape))
        if not axes:
            return self
        return self._make("flip", (self,), tuple(axes), self.shape)

    def contiguous(self) -> Self:
        """The same values, stored in a buffer of their own (row-major) when computed, as
        torch's and tinygrad's `contiguous()`: a realized tensor (always row-major) is
        returned as it is; a pending one becomes a kernel boundary, so what reads it loads
        that buffer instead of recomputing or re-indexing the graph behind it."""
        if self._node.realized or self._node.op == "contiguous":
            return self
        return self._make("contiguous", (self,), None, self.shape)

    def _slice(self, start: tuple[int, ...], step: tuple[int, ...],
               shape: tuple[int, ...]) -> Self:
        if shape == self.shape and all(s == 0 for s in start):
            return self
        return self._make("slice", (self,), (start, step), shape)

    def __getitem__(self, index: Any) -> Self:
        """numpy basic indexing: ints, slices (any step), None, Ellipsis, tuples of them."""
        items = index if isinstance(index, tuple) else (index,)
        if sum(i is Ellipsis for i in items) > 1:
            raise shape_error("getitem", "an index can only have a single ellipsis ('...')")
        used = sum(1 for i in items if i is not None and i is not Ellipsis)
        if used > self.ndim:
            raise dim_error("getitem", f"too many indices ({used}) for shape {self.shape}")
        if Ellipsis in items:
            k = items.index(Ellipsis)
            items = items[:k] + (slice(None),) * (self.ndim - used) + items[k + 1:]
        else:
            items = items + (slice(None),) * (self.ndim - used)
        start, step, sizes, flips, out_shape = [], [], [], [], []
        dim = 0
        for item in items:
            if item is None:
                out_shape.append(1)
                continue
            n = self.shape[dim]
            if isinstance(item, slice):
                b, e, s = item.indices(n)
                count = len(range(b, e, s))
                if s < 0:  # read the flipped dim forwards: index i is n-1-i there
                    flips.append(dim)
                    b, s = n - 1 - b, -s
                start.append(max(b, 0) if count else 0)
                step.append(s)
                sizes.append(count)
                out_shape.append(count)
            elif isinstance(item, int) and not isinstance(item, bool):
                if not -n <= item < n:
                    raise dim_error("getitem", f"index {item} is out of bounds for dim {dim} "
                                                 f"of shape {self.shape}")
                start.append(item % n)
                step.append(1)
                sizes.append(1)
            else:
                raise shape_error("getitem", f"unsupported index {item!r}: use ints, slices, "
                                             "None and '...'")
            dim += 1
        x = self.flip(tuple(flips)) if flips else self
        x = x._slice(tuple(start), tuple(step), tuple(sizes))
        return x.reshape(tuple(out_shape))
