"""Subscripts, as torch reads them: `x[...]` and `x[...] = value`.

    x[basic]                    ints, slices, None, '...' (`MovementOps.__getitem__`)
    x[int_tensor, ...]          int tensor (or list / numpy array) indices on one or more
                                dims, placed as torch places them (`_take_many`)
    x[p], x[:, p:p + k]         a bound variable (`picograd.frontend.variable`), checked
                                against the dim for every value in its range
    x[basic] = value            a functional update, recorded for autograd (`_placed`);
                                at a bound variable, `index_copy` made contiguous

The selections are the gather of ops_index.py, so their range checks (on the host for a
realized index, on the device for a computed one) are those of `IndexOps._checked_index`.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from picograd.errors import ShapeError
from picograd.frontend.base import Scalar, TensorBase, broadcast_shape
from picograd.frontend.dtype import bool_, int32
from picograd.frontend.grad_mode import AutogradError, is_grad_enabled
from picograd.frontend.lazy import LazyOp, shape_error, user_location
from picograd.frontend.ops_index import IndexOps
from picograd.frontend.variable import SymbolicInt


class SubscriptOps(IndexOps):
    __slots__ = ()

    def _index_items(self, index: Any) -> list[Any]:
        """The items of a subscript, lists and numpy arrays made int32 (or bool) tensors."""
        items = list(index) if isinstance(index, tuple) else [index]
        for i, item in enumerate(items):
            if isinstance(item, list):
                items[i] = item = np.asarray(item)
            if isinstance(item, np.ndarray):
                if item.dtype.kind not in "iub":
                    raise shape_error("getitem", f"unsupported index array of {item.dtype}: "
                                                 "use ints")
                dt = bool_ if item.dtype.kind == "b" else int32
                items[i] = type(self)._from_node(LazyOp.leaf(item.astype(dt.np), dt,
                                                             self.device))
        if any(_symbolic(i) for i in items):
            for i, d in self._item_dims(items).items():
                if _symbolic(items[i]):
                    items[i] = self._positions("getitem", items[i], self.shape[d])
        return items

    def _item_dims(self, items: list[Any]) -> dict[int, int]:
        """The dim of this tensor that each item of a subscript indexes (None and '...'
        index none)."""
        used = sum(1 for i in items if i is not None and i is not Ellipsis)
        dims, dim = {}, 0
        for pos, item in enumerate(items):
            if item is Ellipsis:
                dim += self.ndim - used
            elif item is not None:
                dims[pos] = dim
                dim += 1
        return dims

    def _positions(self, op: str, item: Any, n: int) -> Any:
        """The int32 index tensor of a symbolic subscript item on a dim of size `n`: 0-d for
        a bound variable `p` (the dim goes, as for an int), 1-D `p + arange(k)` for a slice
        `p:p + k` (the dim stays). Its range must lie inside the dim, whatever the value."""
        if item.__class__ is SymbolicInt:
            item.check_inside(op, n)
            return self._symbolic(item)
        start, stop = item.start, item.stop
        if (start.__class__ is not SymbolicInt or stop.__class__ is not SymbolicInt
                or start.variable != stop.variable or item.step not in (None, 1)):
            raise shape_error(op, f"the slice {start!r}:{stop!r} has a symbolic length: shapes "
                                  "are static, so a slice with a variable must run from "
                                  "p + a to p + b (one variable, step 1); to use the first p "
                                  "positions, mask the rest (arange(n) < p)")
        length = max(stop.offset - start.offset, 0)
        start.check_inside(op, n, length)
        return self._symbolic(start).add(self._arange(length))

    def __getitem__(self, index: Any) -> Self:
        """numpy basic indexing (ints, slices, None, '...') plus int tensor (or list of
        ints) indices, placed as torch places them (see `_take_many`)."""
        items = self._index_items(index)
        tensors = [i for i, item in enumerate(items) if isinstance(item, TensorBase)]
        if not tensors:
            return super().__getitem__(tuple(items))
        for i in tensors:
            if items[i].dtype.is_bool:
                raise shape_error("getitem", "boolean mask indexing makes a data-dependent "
                                             "shape, which static shapes cannot express; use "
                                             "masked_fill or where")
        indices = [items[i] for i in tensors]
        for i in tensors:
            items[i] = slice(None)
        basic = super().__getitem__(tuple(items))
        # the output dim each tensor index selects from: dims made by the items before it
        used = sum(1 for i in items if i is not None and i is not Ellipsis)
        dims, out_dim = [], 0
        for pos, item in enumerate(items):
            if pos in tensors:
                dims.append(out_dim)
            if item is Ellipsis:
                out_dim += self.ndim - used
            elif item is None or isinstance(item, slice):
                out_dim += 1
        if len(dims) == 1:
            return basic._take(dims[0], indices[0])
        return basic._take_many(dims, indices)

    def _take_many(self, dims: list[int], indices: list[TensorBase]) -> Self:
        """Advanced indexing by several int tensors at `dims` (ascending), as torch: the
        indices broadcast to one shape B, and each position of B picks the element at its
        index in every indexed dim. B takes the place of the indexed dims when they are
        adjacent, else it comes first. One gather over the indexed dims flattened."""
        shape = ()
        for index in indices:
            shape = broadcast_shape("getitem", shape, index.shape)
        sizes = [self.shape[d] for d in dims]
        total = int(np.prod(sizes))
        if total >= 2 ** 31:
            raise shape_error("getitem", f"the indexed dims {sizes} hold {total} elements, "
                                         "more than an int32 index reaches")
        flat: Any = None
        inside: Any = None
        for index, n, stride in zip(indices, sizes, np.cumprod([1, *sizes[:0:-1]])[::-1],
                                    strict=True):
            idx = self._checked_index("getitem", index, n).expand(shape)
            ok = (idx >= 0) & (idx < n)  # a lazy index's stray value must not reach a neighbour
            term = idx * int(stride)
            flat = term if flat is None else flat + term
            inside = ok if inside is None else inside & ok
        flat = inside.where(flat, total)  # out of range: selects 0
        others = [d for d in range(self.ndim) if d not in dims]
        table = self.permute((*dims, *others)).reshape((total, *(self.shape[d] for d in others)))
        out = table._take(0, flat, negative=False)
        if dims != list(range(dims[0], dims[0] + len(dims))):
            return out
        k, at = len(shape), dims[0]  # adjacent: B goes where the indexed dims were
        order = (*range(k, k + at), *range(k), *range(k + at, out.ndim))
        return out.permute(order)

    def _unslice(self, full: tuple[int, ...], start: tuple[int, ...],
                 step: tuple[int, ...], fill: Scalar) -> Self:
        """The inverse of `_slice`: this tensor placed at the strided positions of a tensor
        of shape `full`, `fill` elsewhere."""
        x = self
        for dim, s in enumerate(step):
            if s > 1 and x.shape[dim] > 0:
                shape = x.shape
                x = x.unsqueeze(dim + 1)
                x = x.pad(tuple((0, s - 1) if i == dim + 1 else (0, 0) for i in range(x.ndim)),
                          fill)
                x = x.reshape((*shape[:dim], shape[dim] * s, *shape[dim + 1:]))
        pads = []
        for dim, (n, b) in enumerate(zip(full, start, strict=True)):
            end = min(b + x.shape[dim], n)
            x = x._narrow(dim, 0, end - b)
            pads.append((b, n - end))
        return x.pad(tuple(pads), fill)

    def __setitem__(self, index: Any, value: TensorBase | Scalar) -> None:
        """x[basic index] = value (ints, slices, None, '...'): a functional update that
        points this tensor at a new node, recorded for autograd. Tensors built from this
        one earlier keep the old values (and their gradients flow to the old ones)."""
        items = index if isinstance(index, tuple) else (index,)
        if any(_symbolic(i) for i in items):
            self._set_symbolic(list(items), value)
            return
        if any(isinstance(i, TensorBase | list | np.ndarray) for i in items):
            raise shape_error("setitem", "only basic indices (ints, slices, None, '...') can be "
                                         "assigned to")
        if is_grad_enabled() and self.requires_grad and self._ctx is None:
            raise AutogradError("setitem: a leaf Variable that requires grad is being used in "
                                "an in-place operation\n  at " + user_location())
        old = self._from_node(self._node)
        old._ctx, old.requires_grad = self._ctx, self.requires_grad
        target_shape = super().__getitem__(index).shape  # checks the index
        v = self._assigned_value(value, target_shape)
        mask = self._const(True, target_shape, bool_)._placed(index, self.shape)
        placed = v._placed(index, self.shape)
        result = mask.where(placed, old)
        self._take_node(result._node)
        if is_grad_enabled():
            self._ctx, self.requires_grad = result._ctx, result.requires_grad

    def _assigned_value(self, value: TensorBase | Scalar, shape: tuple[int, ...]) -> Any:
        """`value` (a tensor or a scalar) as this tensor's dtype, broadcast to the indexed
        `shape` of an assignment."""
        if not isinstance(value, TensorBase):
            return self._const(value, shape, self.dtype)
        self._check_device("setitem", value)
        v: Any = value
        try:
            return v.expand(shape).cast(self.dtype)
        except ShapeError:
            raise shape_error("setitem", f"value of shape {value.shape} does not broadcast "
                                         f"to the indexed shape {shape}") from None

    def _set_symbolic(self, items: list[Any], value: TensorBase | Scalar) -> None:
        """x[..., p, ...] = value or x[..., p:p + k, ...] = value, every other item whole
        (`:` or '...'): an `index_copy` at the variable's positions (a KV cache written at a
        decode position that changes every call, under one compile), made contiguous: the
        realize that first computes the new value stores it and this tensor reads that
        buffer from then on (docs/design.md, "Intermediates that outlive their realize")."""
        where = [i for i, item in enumerate(items) if _symbolic(item)]
        whole = [item is Ellipsis or (isinstance(item, slice) and item == slice(None))
                 for item in items]
        if len(where) > 1 or not all(w for i, w in enumerate(whole) if i != where[0]):
            raise shape_error("setitem", "a symbolic position can be assigned to only with "
                                         "every other dim taken whole (x[:, p] = v, "
                                         "x[..., p:p + k, :] = v)")
        d = self._item_dims(items)[where[0]]
        positions = self._positions("setitem", items[where[0]], self.shape[d])
        scalar = positions.ndim == 0
        shape = (*self.shape[:d], *(() if scalar else positions.shape), *self.shape[d + 1:])
        v = self._assigned_value(value, shape)
        if scalar:
            positions, v = positions.reshape((1,)), v.unsqueeze(d)
        if is_grad_enabled() and self.requires_grad and self._ctx is None:
            raise AutogradError("setitem: a leaf Variable that requires grad is being used in "
                                "an in-place operation\n  at " + user_location())
        old = self._from_node(self._node)
        old._ctx, old.requires_grad = self._ctx, self.requires_grad
        # stored in a buffer of its own: a realize that computes it hands this tensor the
        # buffer, so a cache written at every decode step never grows a graph
        result = old.index_copy(d, positions, v).contiguous()
        self._take_node(result._node)
        if is_grad_enabled():
            self._ctx, self.requires_grad = result._ctx, result.requires_grad

    def _placed(self, index: Any, full: tuple[int, ...]) -> Self:
        """This tensor (the shape `index` selects from a tensor of shape `full`) put back at
        the selected positions, zeros elsewhere: the inverse of basic `__getitem__`."""
        items = index if isinstance(index, tuple) else (index,)
        used = sum(1 for i in items if i is not None and i is not Ellipsis)
        items = [x for i in items for x in ((slice(None),) * (len(full) - used)
                                            if i is Ellipsis else (i,))]
        if len(items) - items.count(None) < len(full):  # no '...': the rest are whole
            items += [slice(None)] * (len(full) - used)
        start, step, sizes, flips = [], [], [], []
        dim = 0
        for item in items:
            if item is None:
                continue
            n = full[dim]
            if isinstance(item, slice):
                b, e, s = item.indices(n)
                count = len(range(b, e, s))
                if s < 0:
                    flips.append(dim)
                    b, s = n - 1 - b, -s
                start.append(max(b, 0) if count else 0)
                step.append(s)
                sizes.append(count)
            else:
                start.append(item % n)
                step.append(1)
                sizes.append(1)
            dim += 1
        x = self.reshape(tuple(sizes))._unslice(full, tuple(start), tuple(step), 0)
        return x.flip(tuple(flips)) if flips else x


def _symbolic(item: Any) -> bool:
    """Whether a subscript item holds a bound variable (`p`, or a slice `p:p + k`)."""
    return item.__class__ is SymbolicInt or (
        isinstance(item, slice) and (item.start.__class__ is SymbolicInt
                                     or item.stop.__class__ is SymbolicInt))
