"""Indexing ops, as torch names them: selecting and writing elements by position.

    gather(dim, index), take_along_dim(indices, dim), index_select(dim, index)
    scatter_add(dim, index, src), scatter(dim, index, src), index_copy(dim, index, source)
    masked_fill(mask, value), one_hot(num_classes)

Selecting by index tensor (`gather`, `index_select`, `take_along_dim`, `x[int_tensor]`, and
`nn.functional.embedding` built on them) is one primitive, the lazy op "gather"
(`pg_tensor.gather`): every output element loads the one table element its index names, so
the work is O(output) whatever the table's size; several tensor indices index the indexed
dims flattened. Negative indices count from the end where torch allows them
(`x[int_tensor]`, `take_along_dim`) and raise where it does not (`gather`, `index_select`,
`embedding`, `scatter_add`, `scatter`, `index_copy`, `one_hot`). An index tensor that is
already realized is checked on the host and a value outside the dim raises `IndexRangeError`
at the op, as torch does; one that is still lazy cannot be read without running it, so the
op's result carries a range check (`lazy.Guard`: the index's min and max, computed with the
result) and reading anything that depends on it raises `IndexRangeError` naming the op, the
value and the line that indexed (inside a jit capture every index gets one, since a replay's
arguments are not seen on the host). The kernels' loads are masked, so a bad index never
reads or writes outside a buffer. The class-index losses of picograd.nn (`cross_entropy`,
`nll_loss`) check their targets the same way, their `ignore_index` exempt. The gradient of a
selection is the lazy op "scatter_add" (`pg_tensor.scatter_add`), which adds the output
gradient back at the indexed positions in one pass over the index; `scatter_add` is also
public. `scatter`, `index_copy` and `one_hot` compare an index with an arange (a one-hot
mask): (index size) x (dim size) work, fine for the small sizes they are meant for.
`scatter` and `index_copy` write, never add: where an index repeats, the value last in the
index's order wins (torch's CPU outcome). Subscripts (`x[...]`, `x[...] = v`) are in
ops_subscript.py, built on these; the shape ops this builds on are in ops_shape.py.
"""

from __future__ import annotations

from typing import Any, Self

from picograd.errors import ShapeError
from picograd.frontend import capture
from picograd.frontend.base import (
    Scalar,
    TensorBase,
    broadcast_shape,
    fill_scalar,
    normalize_axis,
)
from picograd.frontend.dtype import bool_, int32
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import (
    RangeGuard,
    dtype_error,
    index_error,
    shape_error,
    static_range,
    view_source,
)
from picograd.frontend.ops_shape import ShapeOps, cat


def _guarded(op: str, index: Any, idx: Any, low: int, n: int, ignore: int | None,
             noun: str) -> Any:
    """`idx` (the index as the op uses it) carrying the range check of `index`'s values (a
    `RangeGuard` of their min and max; `ignore` values count as `low`), so that results
    computed from it check it when realized."""
    with no_grad():
        values = index if ignore is None else (index == ignore).where(low, index)
        bounds = cat([values.min().reshape((1,)), values.max().reshape((1,))])
        return idx._carrying(RangeGuard(bounds._node, op, noun, low, n))


class IndexOps(ShapeOps):
    __slots__ = ()

    # ── masks ───────────────────────────────────────────────────────────────

    def masked_fill(self, mask: TensorBase, value: Scalar | TensorBase) -> Self:
        """`value` where the bool `mask` is True; keeps the dtype. The mask and the tensor
        broadcast together (a mask of more dims gives the broadcast shape, as torch); a
        python value must fit the dtype (int32 and -inf: DTypeError, torch's RuntimeError)."""
        if not mask.dtype.is_bool:
            raise dtype_error("masked_fill", f"the mask must be bool, got {mask.dtype.name}")
        self._check_device("masked_fill", mask)
        shape = broadcast_shape("masked_fill", self.shape, mask.shape)
        m: Any = mask
        if isinstance(value, TensorBase):
            if value.ndim:
                raise shape_error("masked_fill", f"value must be a 0-d tensor, got shape "
                                                 f"{value.shape}")
            fill: Any = value
            fill = fill.cast(self.dtype).expand(shape)
        else:
            fill = self._const(fill_scalar("masked_fill", value, self.dtype), shape, self.dtype)
        return m.expand(shape).where(fill, self.expand(shape))

    def one_hot(self, num_classes: int = -1) -> Self:
        """int32 one-hot of an int tensor: shape + (num_classes,), as torch's F.one_hot.
        num_classes=-1 takes max + 1, which realizes this tensor to read it. A class outside
        [0, num_classes) raises IndexRangeError (torch raises too): at the call for a
        realized tensor, when the result is read for a computed one."""
        if self.dtype.is_float or self.dtype.is_bool:
            raise dtype_error("one_hot", f"class indices must be an int tensor, got "
                                         f"{self.dtype.name}")
        if num_classes == -1:
            if self.numel() == 0:
                raise shape_error("one_hot", "cannot infer num_classes of an empty tensor")
            top: Any = self.max()
            num_classes = int(top.item()) + 1
        if num_classes < 0:
            raise shape_error("one_hot", f"num_classes must be positive, got {num_classes}")
        classes = self._checked_index("one_hot", self, num_classes, negative=False,
                                      noun="class")
        return (classes.unsqueeze(-1) == self._arange(num_classes)).cast(int32)

    # ── gather / scatter / tensor indexing ──────────────────────────────────

    def _check_index(self, op: str, dim: int, index: TensorBase) -> int:
        d = normalize_axis(op, dim, self.ndim, self.shape)
        if index.ndim != self.ndim or any(i > s for k, (i, s) in
                                          enumerate(zip(index.shape, self.shape, strict=True))
                                          if k != d):
            raise shape_error(op, f"index of shape {index.shape} does not fit the tensor's "
                                  f"shape {self.shape} along dims other than {d}")
        return d

    def _gather_along(self, axis: int, index: TensorBase) -> Self:
        """The primitive: out[c] = self[c with c[axis] = index[c]]; index has this tensor's
        rank and shape off `axis` (pg_tensor.gather)."""
        return self._make("gather", (self, index), axis, index.shape)

    def _checked_index(self, op: str, index: TensorBase, n: int, negative: bool = True, *,
                       ignore: int | None = None, noun: str = "index") -> Any:
        """`index` for a dim of size `n`, negative values counted from its end when
        `negative` (as torch's op does). A realized index holding a value outside the dim
        raises IndexRangeError here, naming the value as `noun` ("target" for a loss's
        classes); values equal to `ignore` (a loss's ignore_index) are exempt. A lazy
        index's (or, inside a jit capture, any index's) range is checked on the device: the
        returned index carries a `Guard`, which every result computed from it inherits."""
        if index.dtype.is_float or index.dtype.is_bool:
            raise dtype_error(op, f"indices must be an int tensor, got {index.dtype.name}")
        self._check_device(op, index)
        low = -n if negative else 0
        held = view_source(index._node).buffer  # values already on the host
        checked = held if held is None or ignore is None else held[held != ignore]
        if checked is not None and checked.size and (checked.min() < low or checked.max() >= n):
            bad = checked[(checked < low) | (checked >= n)].ravel()[0]
            raise index_error(op, f"{noun} {bad} is out of bounds for a dim of size {n} "
                                  f"({noun} values lie in [{checked.min()}, {checked.max()}])")
        idx: Any = index
        # bounds known now (a position from a bound variable's range) need no check on the
        # device; inside a capture a replay's values are not these, so it checks them
        bounds = (static_range(index._node) if held is None and capture.recorder() is None
                  else None)
        if bounds is not None and not (low <= bounds[0] and bounds[1] < n):
            bounds = None
        if negative and (held is None or (held.size and held.min() < 0)) and (
                bounds is None or bounds[0] < 0):
            idx = (idx < 0).where(idx + n, idx)  # count from the end
        if index.numel() and (held is None or capture.recorder() is not None) and (
                bounds is None):
            idx = _guarded(op, index, idx, low, n, ignore, noun)
        return idx

    def gather(self, dim: int, index: TensorBase) -> Self:
        """out[..., i, ...] = self[..., index[..., i, ...], ...] along `dim`; out has the
        index's shape (which may be smaller than self off `dim`)."""
        d = self._check_index("gather", dim, index)
        idx = self._checked_index("gather", index, self.shape[d], negative=False)
        part = self._slice((0,) * self.ndim, (1,) * self.ndim,
                           tuple(self.shape[d] if k == d else i
                                 for k, i in enumerate(index.shape)))
        return part._gather_along(d, idx)

    def take_along_dim(self, indices: TensorBase, dim: int | None = None) -> Self:
        """torch.take_along_dim: `gather` after broadcasting self and `indices` against each
        other off `dim`; with dim=None both are flattened first."""
        ix: Any = indices
        if dim is None:  # torch allows no negative index here
            flat = self.reshape((-1,))
            return flat._gather_along(0, flat._checked_index(
                "take_along_dim", ix.reshape((-1,)), flat.shape[0], negative=False))
        d = normalize_axis("take_along_dim", dim, self.ndim, self.shape)
        if indices.ndim != self.ndim:
            raise shape_error("take_along_dim", f"indices of shape {indices.shape} need the "
                                                f"tensor's rank {self.ndim}")
        try:
            off = broadcast_shape("take_along_dim", tuple(1 if k == d else n for k, n in
                                                          enumerate(self.shape)),
                                  tuple(1 if k == d else n for k, n in
                                        enumerate(indices.shape)))
        except ShapeError:
            raise shape_error("take_along_dim", f"indices of shape {indices.shape} do not "
                                                f"broadcast with the tensor's shape "
                                                f"{self.shape} off dim {d}") from None
        table = self.expand(tuple(self.shape[d] if k == d else n for k, n in enumerate(off)))
        ix = ix.expand(tuple(indices.shape[d] if k == d else n for k, n in enumerate(off)))
        return table._gather_along(d, self._checked_index("take_along_dim", ix,
                                                          self.shape[d]))

    def index_select(self, dim: int, index: TensorBase) -> Self:
        """The slices of `dim` that the 1-D (or 0-d) `index` names, in its order."""
        d = normalize_axis("index_select", dim, self.ndim, self.shape)
        if index.ndim > 1:
            raise shape_error("index_select", f"index must be 1-D, got shape {index.shape}")
        flat: Any = index
        return self._take(d, flat.reshape((-1,)), negative=False, op="index_select")

    def _scatter_add(self, axis: int, index: TensorBase, n: int) -> Self:
        """The gradient of `_gather_along`: zeros of this (the index's) shape with `n` along
        `axis`, plus each of this tensor's elements added where its index names (indices
        outside [0, n) add nowhere): one pass over the index (pg_tensor.scatter_add)."""
        shape = tuple(n if d == axis else s for d, s in enumerate(self.shape))
        base = self._const(0, shape, self.dtype)
        return base._make("scatter_add", (base, index, self), axis, shape)

    def scatter_add(self, dim: int, index: TensorBase, src: TensorBase) -> Self:
        """A copy of self with src[..., i, ...] added at self[..., index[..., i, ...], ...]
        along `dim` (torch's out-of-place scatter_add): repeated indices add up, in the
        index's order along `dim`. The index may be smaller than src, and than self off
        `dim`; its values must lie in [0, self.shape[dim])."""
        d = self._check_index("scatter_add", dim, index)
        self._check_device("scatter_add", src)
        if src.ndim != index.ndim or any(i > s for i, s in zip(index.shape, src.shape,
                                                               strict=True)):
            raise shape_error("scatter_add", f"index of shape {index.shape} is larger than src "
                                             f"of shape {src.shape}")
        if src.dtype != self.dtype:
            raise dtype_error("scatter_add", f"src is {src.dtype.name}, the tensor "
                                             f"{self.dtype.name}: they must match")
        idx = self._checked_index("scatter_add", index, self.shape[d], negative=False)
        s: Any = src
        s = s._slice((0,) * s.ndim, (1,) * s.ndim, index.shape)
        # off `dim`, indices past the index's extent add nowhere (-1) and their src is 0
        pads = tuple((0, 0) if k == d else (0, full - part) for k, (full, part) in
                     enumerate(zip(self.shape, index.shape, strict=True)))
        if any(p for _, p in pads):
            idx, s = idx.pad(pads, -1), s.pad(pads)
        return self._make("scatter_add", (self, idx, s), d, self.shape)

    def index_copy(self, dim: int, index: TensorBase, source: TensorBase) -> Self:
        """torch's out-of-place `index_copy`: a copy of self with the slices
        `source.select(dim, i)` written at `self.select(dim, index[i])`; `index` is 1-D and
        `source` has self's shape with `len(index)` along `dim`. Where an index repeats, the
        last slice written there wins (one of the outcomes torch allows). A KV cache update
        at a decode position held in a tensor: the graph does not change with the position.
        """
        op = "index_copy"
        d = normalize_axis(op, dim, self.ndim, self.shape)
        if index.ndim != 1:
            raise shape_error(op, f"index must be 1-D, got shape {index.shape}")
        want = (*self.shape[:d], index.shape[0], *self.shape[d + 1:])
        if not isinstance(source, TensorBase) or source.shape != want:
            got = source.shape if isinstance(source, TensorBase) else type(source).__name__
            raise shape_error(op, f"source must have shape {want} (the tensor's shape with the "
                                  f"index's length along dim {d}), got {got}")
        self._check_device(op, source)
        if source.dtype != self.dtype:
            raise dtype_error(op, f"source is {source.dtype.name}, the tensor "
                                  f"{self.dtype.name}: they must match")
        n, k = self.shape[d], index.shape[0]
        idx = self._checked_index(op, index, n, negative=False)
        shape = tuple(n if a == d else 1 for a in range(self.ndim))
        with no_grad():
            if k == 0:  # nothing to write: the tensor's values
                written: Any = self._const(False, shape, bool_)
                out = type(self)._from_node(self._node)
            elif k == 1:  # one slice (a decode step's): written where the index points
                written = (idx == self._arange(n)).reshape(shape)
                src1: Any = source
                out = written.expand(self.shape).where(src1.expand(self.shape), self)
            else:
                hit = idx.unsqueeze(-1) == self._arange(n)  # (k, n)
                order = self._arange(k).cast(int32).unsqueeze(-1).expand(hit.shape)
                last = hit.where(order, self._const(-1, hit.shape, int32)).max(0)  # i or -1
                written = (last >= 0).reshape(shape)
                which: Any = last.reshape(shape).expand(self.shape).maximum(0)
                src: Any = source
                out = written.expand(self.shape).where(src._gather_along(d, which), self)

        def gradient(g: Any) -> tuple[Any, Any]:
            # torch's rule: the source's gradient is the output's at every index, repeated
            # ones included; the tensor's is zero where a slice was written
            return (written.where(0.0, g).cast(g.dtype), g.index_select(d, idx))

        return out._with_gradient((self, source), gradient)

    def scatter(self, dim: int, index: TensorBase, src: TensorBase | Scalar) -> Self:
        """A copy of self with self[..., index[..., i, ...], ...] = src[..., i, ...] along
        `dim` (torch's out-of-place scatter); a scalar src writes that value. Where an index
        repeats, the src value last in the index's order along `dim` wins (torch's CPU
        outcome; torch allows any). The index may be smaller than src, and than self off
        `dim`; its values must lie in [0, self.shape[dim]). The gradient is torch's: self's
        is zero where a value was written, and every src element the index covers gets the
        output's gradient at its index, overwritten ones included (the rest get zero)."""
        op = "scatter"
        d = self._check_index(op, dim, index)
        if isinstance(src, TensorBase):
            if src.ndim != index.ndim or any(i > s for i, s in zip(index.shape, src.shape,
                                                                   strict=True)):
                raise shape_error(op, f"index of shape {index.shape} is larger than src of "
                                      f"shape {src.shape}")
            self._check_device(op, src)
        n = self.shape[d]
        idx = self._checked_index(op, index, n, negative=False)
        # off `dim`, positions past the index's extent keep self's values
        pads = tuple((0, 0) if k == d else (0, full - part) for k, (full, part) in
                     enumerate(zip(self.shape, index.shape, strict=True)))
        with no_grad():
            written, out = self._scatter_last(d, idx, src)
            written = written.pad(pads, False)
            out = written.where(out.pad(pads), self)

        def gradient(g: Any) -> tuple[Any, Any]:
            dx = written.where(0.0, g).cast(g.dtype)
            if not isinstance(src, TensorBase):
                return dx, None
            part = g._slice((0,) * g.ndim, (1,) * g.ndim, tuple(
                g.shape[d] if k == d else i for k, i in enumerate(index.shape)))
            dsrc = part._gather_along(d, idx).cast(src.dtype)
            return dx, dsrc.pad(tuple((0, full - i) for full, i in
                                      zip(src.shape, index.shape, strict=True)))

        return out._with_gradient((self, src if isinstance(src, TensorBase) else None),
                                  gradient)

    def _scatter_last(self, d: int, idx: Any, src: TensorBase | Scalar) -> tuple[Any, Any]:
        """`scatter`'s writes over the index's extent (idx.shape with this tensor's size
        along `d`): where a value is written, and the value, which is the src element last
        in idx's order along `d` among those whose index names the position (`index_copy`'s
        rule). An idx value outside the dim names no position."""
        n, k = self.shape[d], idx.shape[d]
        shape = tuple(n if a == d else s for a, s in enumerate(idx.shape))
        if idx.numel() == 0:  # nothing to write
            return self._const(False, shape, bool_), self._const(0, shape, self.dtype)
        hit = idx.unsqueeze(-1) == self._arange(n)  # (*idx.shape, n)
        order = self._arange(k).reshape(tuple(k if a == d else 1 for a in range(hit.ndim)))
        last = hit.where(order.expand(hit.shape), self._const(-1, hit.shape, int32))
        last = last.max(d).movedim(-1, d)  # the position along `d` written last, or -1
        if not isinstance(src, TensorBase):
            return last >= 0, self._const(src, shape, self.dtype)
        s: Any = src
        s = s._slice((0,) * s.ndim, (1,) * s.ndim, idx.shape).cast(self.dtype)
        return last >= 0, s._gather_along(d, last.maximum(0))

    def _take(self, dim: int, index: TensorBase, negative: bool = True,
              op: str = "getitem") -> Self:
        """self[:, ..., index, ...] at `dim`: shape[:dim] + index.shape + shape[dim + 1:]."""
        idx = self._checked_index(op, index, self.shape[dim], negative)
        pre, post = self.shape[:dim], self.shape[dim + 1:]
        m = index.numel()  # one gather by the flattened index: the table is never expanded
        flat = idx.reshape((*(1,) * len(pre), m, *(1,) * len(post))).expand(
            (*pre, m, *post))
        return self._gather_along(dim, flat).reshape((*pre, *index.shape, *post))
