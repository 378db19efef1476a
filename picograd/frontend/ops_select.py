"""Ops whose output shape depends on the values, as torch names them.

    masked_select(mask), nonzero(as_tuple=False), argwhere()
    unique(sorted=True, return_inverse=False, return_counts=False, dim=None)
    unique_consecutive(return_inverse=False, return_counts=False, dim=None)
    bincount(weights=None, minlength=0)

A lazy graph has static shapes, so these sync with the device (docs/design.md, "Ops whose
output shape depends on the data"): the tensor whose values decide the shape is realized
and read on the host, and the result is built from what was read. Only that tensor syncs:
`masked_select` reads the mask, builds the positions it selects as an index leaf, and
gathers the (still lazy) tensor at them, so its gradient flows back through the gather;
`bincount` reads the indices for the length and adds the weights with a scatter_add (so the
weights get a gradient too). `nonzero`, `unique`, `unique_consecutive` return host-built
leaves (torch gives them no gradient either). Inside a `picograd.jit` capture they raise
JitError naming the op: a replay runs no Python, so it could not change the shape. Indices
and counts are int32 (torch's are int64). NaNs are never equal to each other (torch's
unique gives each NaN its own entry).
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from picograd.errors import JitError
from picograd.frontend import capture
from picograd.frontend.base import TensorBase, broadcast_shape, normalize_axis
from picograd.frontend.dtype import DType, float32, int32
from picograd.frontend.lazy import LazyOp, dtype_error, index_error, shape_error, user_location
from picograd.frontend.ops_scan import ScanOps
from picograd.frontend.realize import realize


def host_values(op: str, t: TensorBase) -> np.ndarray:
    """`t`'s values on the host, computing them now (the sync of a data-dependent op);
    JitError inside a jit capture, whose replay could not redo it."""
    if capture.recorder() is not None:
        raise JitError(f"{op}: its output shape depends on the values of a tensor, which a "
                       f"picograd.jit replay cannot read; call {op} outside the jitted "
                       f"function (or use a fixed-shape form such as masked_fill/where)\n"
                       f"  at {user_location()}")
    node = t._node
    if node.buffer is None or node.guards:
        realize(t)
    assert node.buffer is not None
    return node.buffer


def _unique_along(values: np.ndarray, axis: int | None, consecutive: bool
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unique values, inverse, counts) as torch gives them (each NaN its own value)."""
    flat = values.reshape(-1) if axis is None else np.moveaxis(values, axis, 0)
    n = flat.shape[0]
    rows = flat.reshape(n, int(np.prod(flat.shape[1:])))
    if consecutive:
        if n == 0:
            new = np.zeros(0, bool)
        else:
            same = np.all(rows[1:] == rows[:-1], axis=1)
            new = np.concatenate([[True], ~same])
        inverse = np.cumsum(new) - 1
        starts = np.flatnonzero(new)
        picked = flat[starts]
        counts = np.diff(np.append(starts, n))
    else:
        # lexicographic order of the rows, NaN last and never equal to another
        order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(n)
        ordered = rows[order]
        if n == 0:
            new = np.zeros(0, bool)
        else:
            same = np.all(ordered[1:] == ordered[:-1], axis=1)
            new = np.concatenate([[True], ~same])
        group = np.cumsum(new) - 1
        inverse = np.empty(n, np.int64)
        inverse[order] = group
        starts = np.flatnonzero(new)
        picked = flat[order[starts]]
        counts = np.diff(np.append(starts, n))
    if axis is not None:
        picked = np.moveaxis(picked, 0, axis)
    return picked, inverse, counts


class SelectOps(ScanOps):
    __slots__ = ()

    def _host_leaf(self, array: np.ndarray, dtype: DType) -> Self:
        node = LazyOp.leaf(np.array(array, dtype.np, order="C"), dtype, self.device)
        return type(self)._from_node(node)

    def masked_select(self, mask: TensorBase) -> Self:
        """The elements where the bool `mask` (broadcast with the tensor) is True, as a 1-D
        tensor in row-major order. Syncs: the mask is read on the host."""
        if not mask.dtype.is_bool:
            raise dtype_error("masked_select", f"the mask must be bool, got {mask.dtype.name}")
        self._check_device("masked_select", mask)
        shape = broadcast_shape("masked_select", self.shape, mask.shape)
        where = np.flatnonzero(np.broadcast_to(host_values("masked_select", mask), shape))
        flat: Any = self.expand(shape).reshape(-1)
        if where.size == 0:
            return flat._narrow(0, 0, 0)
        return flat._gather_along(0, self._host_leaf(where, int32))

    def nonzero(self, as_tuple: bool = False) -> Any:
        """The int32 positions of the non-zero elements, one row each (shape (n, ndim)); a
        tuple of ndim 1-D tensors with `as_tuple`. Syncs: the tensor is read on the host."""
        values = host_values("nonzero", self)
        if as_tuple:
            at = np.nonzero(np.atleast_1d(values))
            return tuple(self._host_leaf(a, int32) for a in at)
        return self._host_leaf(np.argwhere(values), int32)

    def argwhere(self) -> Self:
        """`nonzero()`: the positions of the non-zero elements, shape (n, ndim)."""
        return self._host_leaf(np.argwhere(host_values("argwhere", self)), int32)

    def _unique(self, op: str, dim: int | None, return_inverse: bool, return_counts: bool,
                consecutive: bool) -> Any:
        values = host_values(op, self)
        axis = None if dim is None else normalize_axis(op, dim, max(self.ndim, 1), self.shape)
        if axis is not None and self.ndim == 0:
            values = values.reshape(1)
        if axis is not None and 0 in self.shape and self.shape[axis] != 0:
            raise shape_error(op, f"shape {self.shape} has a dim of size 0 other than the "
                                  f"dim {axis} it is applied along")
        picked, inverse, counts = _unique_along(values, axis, consecutive)
        out = self._host_leaf(picked, self.dtype)
        if not (return_inverse or return_counts):
            return out
        result: list[Any] = [out]
        if return_inverse:
            inverse_shape = self.shape if axis is None else (values.shape[axis],)
            result.append(self._host_leaf(inverse.reshape(inverse_shape), int32))
        if return_counts:
            result.append(self._host_leaf(counts, int32))
        return tuple(result)

    def unique(self, sorted: bool = True, return_inverse: bool = False,
               return_counts: bool = False, dim: int | None = None) -> Any:
        """The distinct values (sorted; slices along `dim` if given), with the inverse
        (where each element went) and the counts when asked, as torch.unique. Syncs."""
        return self._unique("unique", dim, return_inverse, return_counts, False)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                           dim: int | None = None) -> Any:
        """One of each run of equal consecutive values (slices along `dim`), as
        torch.unique_consecutive. Syncs."""
        return self._unique("unique_consecutive", dim, return_inverse, return_counts, True)

    def bincount(self, weights: TensorBase | None = None, minlength: int = 0) -> Self:
        """How often each value 0..max occurs in this 1-D non-negative int tensor (at least
        `minlength` bins); with `weights`, their sums instead. Syncs: reads the values for
        the number of bins."""
        op = "bincount"
        if self.dtype.is_float or self.dtype.is_bool:
            raise dtype_error(op, f"needs an int tensor, got {self.dtype.name}")
        if self.ndim != 1:
            raise shape_error(op, f"needs a 1-D tensor, got shape {self.shape}")
        if isinstance(minlength, bool) or not isinstance(minlength, int) or minlength < 0:
            raise shape_error(op, f"minlength must be a non-negative int, got {minlength!r}")
        values = host_values(op, self)
        if values.size and values.min() < 0:
            raise index_error(op, f"needs non-negative values, got {values.min()}")
        n = max(int(values.max()) + 1 if values.size else 0, minlength)
        if weights is None:
            w: Any = self._const(1, self.shape, int32)
        else:
            if weights.shape != self.shape:
                raise shape_error(op, f"weights of shape {weights.shape} must have the "
                                      f"tensor's shape {self.shape}")
            self._check_device(op, weights)
            w = weights
            w = w if w.dtype.is_float else w.cast(float32)
        zeros = w._const(0, (n,), w.dtype)
        if self.shape[0] == 0:
            return zeros
        return zeros.scatter_add(0, self._host_leaf(values, int32), w)
