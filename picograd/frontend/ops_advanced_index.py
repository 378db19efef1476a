"""Advanced subscripts beyond ops_subscript.py: bool masks, and assignment by index tensors.

    x[mask]                    a bool mask (tensor, numpy array or nested list) over some
                               dims: the elements where it is True (syncs: the mask is read)
    x[idx] = v                 int tensor / list indices, bool masks, mixed with basic items
    x[mask] = v                a mask over the leading dims: no sync (masked_fill, or
                               masked_scatter for a value of one row per True)

Placement follows numpy (and torch): the index tensors broadcast together; their result
dims stand where the indexed dims were when those are adjacent, first otherwise
(`SubscriptOps._take_many`). A bool mask of k dims stands for the k int index tensors of its
True positions (`nonzero(as_tuple=True)`), so `x[mask]` has a data-dependent shape and syncs
(host_values: JitError inside a jit capture). An assignment finds the flat positions the
subscript reads by reading an arange of this tensor's positions with the same subscript,
and writes there (`ScatterOps._write_flat`: the last of repeated positions wins). The
common `x[mask] = v` with a mask over the leading dims needs no positions: a scalar (or a
value that broadcasts over one row) is a masked_fill / where, and a value with one row per
True element is a masked_scatter; neither syncs, so both work under `pg.jit`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from picograd.errors import ShapeError
from picograd.frontend.base import Scalar, TensorBase, broadcast_shape, fill_scalar
from picograd.frontend.dtype import int32
from picograd.frontend.lazy import shape_error
from picograd.frontend.ops_scatter import ScatterOps, _held
from picograd.frontend.ops_select import host_values
from picograd.frontend.ops_subscript import SubscriptOps, _symbolic


def _is_advanced(item: Any) -> bool:
    return isinstance(item, TensorBase | list | np.ndarray)


class AdvancedIndexOps(ScatterOps, SubscriptOps):
    __slots__ = ()

    def _mask_items(self, op: str, index: Any) -> Any:
        """The subscript with every bool mask replaced by the int index tensors of its True
        positions (one per dim it covers), read on the host."""
        items = self._index_items(index)
        if not any(isinstance(i, TensorBase) and i.dtype.is_bool for i in items):
            return tuple(items)
        def width(item: Any) -> int:  # the dims an item indexes
            if item is None or item is Ellipsis:
                return 0
            return item.ndim if isinstance(item, TensorBase) and item.dtype.is_bool else 1

        used = sum(width(i) for i in items)
        out: list[Any] = []
        d = 0
        for item in items:
            if item is Ellipsis:
                d += self.ndim - used
            if not (isinstance(item, TensorBase) and item.dtype.is_bool):
                out.append(item)
                d += width(item)
                continue
            want = self.shape[d:d + item.ndim]
            if item.ndim == 0 or item.shape != want:
                raise shape_error(op, f"the mask of shape {item.shape} does not match the "
                                      f"indexed dims {want} (from dim {d})")
            self._check_device(op, item)
            where = np.nonzero(host_values(op, item))
            out += [self._host_leaf(w, int32) for w in where]
            d += item.ndim
        return tuple(out)

    def __getitem__(self, index: Any) -> Any:
        """numpy indexing: basic items, int tensors / lists and bool masks (see the module
        docstring); a 0-d int tensor indexes as an int does (torch's rule: its dim goes
        and it is no advanced index)."""
        items = list(self._mask_items("getitem", index))
        scalars = [p for p, i in enumerate(items) if isinstance(i, TensorBase)
                   and i.ndim == 0 and not i.dtype.is_bool]
        if not scalars:
            return super().__getitem__(tuple(items))
        used = sum(1 for i in items if i is not None and i is not Ellipsis)
        dims, d = {}, 0
        for pos, item in enumerate(items):
            if item is Ellipsis:
                d += self.ndim - used
            elif item is not None:
                dims[pos] = d
                d += 1
        x: Any = self
        for pos in reversed(scalars):  # the last first: the dims before it stay put
            if dims[pos] >= x.ndim:
                raise shape_error("getitem", f"too many indices for a tensor of {self.ndim} "
                                             "dims")
            x = x._take(dims[pos], items[pos])
        rest = [i for p, i in enumerate(items) if p not in scalars]
        return SubscriptOps.__getitem__(x, tuple(rest))

    def __setitem__(self, index: Any, value: TensorBase | Scalar) -> None:
        """x[index] = value for any subscript `__getitem__` reads: a functional update that
        points this tensor at a new node, recorded for autograd."""
        items = index if isinstance(index, tuple) else (index,)
        if any(_symbolic(i) for i in items) or not any(_is_advanced(i) for i in items):
            super().__setitem__(index, value)
            return
        if len(items) == 1 and self._set_by_leading_mask(items[0], value):
            return
        plain = self._mask_items("setitem", index)
        pos = self._advanced_positions("setitem", plain)
        if not isinstance(value, TensorBase):
            value = fill_scalar("setitem", value, self.dtype)
        known = all(_held(i) for i in plain if isinstance(i, TensorBase))
        self._in_place("setitem", self._old()._write_at("setitem", pos, value, False, known))

    def _set_by_leading_mask(self, mask: Any, value: TensorBase | Scalar) -> bool:
        """`x[mask] = value` for a bool tensor mask over the leading dims, without a sync;
        False if the subscript is not that."""
        if not (isinstance(mask, TensorBase) and mask.dtype.is_bool and mask.ndim
                and mask.shape == self.shape[:mask.ndim]):
            return False
        self._check_device("setitem", mask)
        rest = self.shape[mask.ndim:]
        m: Any = mask
        m = m.reshape((*mask.shape, *(1,) * len(rest))).expand(self.shape)
        old = self._old()
        if not isinstance(value, TensorBase):
            result = old.masked_fill(m, fill_scalar("setitem", value, self.dtype))
        elif value.ndim <= len(rest) or value.shape[0] == 1:  # one row for every True
            v: Any = value
            try:
                broadcast_shape("setitem", v.shape, (1, *rest))
            except ShapeError:
                raise shape_error("setitem", f"value of shape {value.shape} does not "
                                             f"broadcast to the rows {rest}") from None
            v = v.reshape(v.shape[1:]) if v.ndim > len(rest) else v
            self._check_device("setitem", v)
            result = m.where(v.cast(self.dtype).expand(self.shape), old)
        else:  # one row per True element, in order
            self._check_device("setitem", value)
            src: Any = value
            if src.shape[1:] != rest:
                raise shape_error("setitem", f"value of shape {value.shape} does not fit the "
                                             f"masked rows of shape {rest}")
            result = old.masked_scatter(m, src.cast(self.dtype))
        self._in_place("setitem", result)
        return True

