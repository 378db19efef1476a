"""Shape and indexing ops built from the movement primitives, as torch names them.

    view/reshape_as/view_as/expand_as, flatten, unflatten, squeeze(dim or dims), movedim,
    swapaxes/swapdims, repeat (tile), roll, split, chunk, tril/triu, masked_fill, one_hot,
    gather, scatter, x[int_tensor], x[basic] = value
    cat(tensors, dim), stack(tensors, dim), pad(x, pad, mode, value) (torch's F.pad)

Every op is a composition of existing ops, so autograd and every device apply unchanged:
`cat` is the sum of its pieces each zero-padded to the full size (one fused elementwise
kernel); `gather`, `scatter` and tensor indexing compare an index with an arange (a one-hot
mask) and reduce over the indexed dim, which costs (index size) x (dim size) work: fine for
the small sizes they are meant for. Out-of-range indices select nothing (a zero / an
unchanged element) where torch raises, since checking would need the index's values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self, TypeVar

import numpy as np

from picograd.errors import ShapeError
from picograd.frontend.autograd import AutogradError, is_grad_enabled
from picograd.frontend.base import Scalar, TensorBase, normalize_axis, prod, shape_arg
from picograd.frontend.dtype import bool_, int32, promote
from picograd.frontend.lazy import LazyOp, dtype_error, shape_error, user_location
from picograd.frontend.ops_reduce import ReduceOps

T = TypeVar("T", bound="ShapeOps")
Dims = int | Sequence[int]


def _dims(dims: Dims) -> tuple[int, ...]:
    return (dims,) if isinstance(dims, int) else tuple(dims)


class ShapeOps(ReduceOps):
    __slots__ = ()

    # ── helpers ─────────────────────────────────────────────────────────────

    def _arange(self, n: int) -> Self:
        """0..n-1 as int32 on this tensor's device (a host-filled leaf, as Tensor.arange)."""
        return type(self)._from_node(LazyOp.leaf(np.arange(n, dtype=np.int32), int32,
                                                 self.device))

    def _narrow(self, dim: int, start: int, length: int) -> Self:
        """Elements start..start+length-1 along `dim` (a slice)."""
        shape = (*self.shape[:dim], length, *self.shape[dim + 1:])
        begin = tuple(start if i == dim else 0 for i in range(self.ndim))
        return self._slice(begin, (1,) * self.ndim, shape)

    def _index_mask(self, op: str, index: TensorBase, n: int) -> Self:
        """index.shape + (n,): True where the last coordinate equals the index (negative
        indices count from the end, as torch)."""
        if index.dtype.is_float or index.dtype.is_bool:
            raise dtype_error(op, f"indices must be an int tensor, got {index.dtype.name}")
        self._check_device(op, index)
        idx: Any = index
        idx = (idx < 0).where(idx + n, idx)
        return idx.unsqueeze(-1) == self._arange(n)

    # ── views and dims ──────────────────────────────────────────────────────

    def view(self, *shape: int | Sequence[int]) -> Self:
        """torch's view: the same as reshape (tensors here have no strides to keep)."""
        return self.reshape(*shape)

    def view_as(self, other: TensorBase) -> Self:
        return self.reshape(other.shape)

    def reshape_as(self, other: TensorBase) -> Self:
        return self.reshape(other.shape)

    def expand_as(self, other: TensorBase) -> Self:
        return self.expand(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Self:
        """Merge dims start_dim..end_dim into one (a 0-d tensor becomes 1-d, as torch)."""
        if self.ndim == 0:
            return self.reshape(1)
        a = normalize_axis("flatten", start_dim, self.ndim, self.shape)
        b = normalize_axis("flatten", end_dim, self.ndim, self.shape)
        if a > b:
            raise shape_error("flatten", f"start_dim {start_dim} comes after end_dim {end_dim} "
                                         f"for shape {self.shape}")
        return self.reshape((*self.shape[:a], prod(self.shape[a:b + 1]), *self.shape[b + 1:]))

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Self:
        """Split dim `dim` into `sizes` (one of them may be -1)."""
        d = normalize_axis("unflatten", dim, self.ndim, self.shape)
        sizes = shape_arg("unflatten", (sizes,))
        n = self.shape[d]
        known = prod(s for s in sizes if s != -1)
        if sizes.count(-1) > 1 or (-1 in sizes and (known == 0 or n % known)) or (
                -1 not in sizes and known != n):
            raise shape_error("unflatten", f"sizes {sizes} do not multiply to dim {dim} of size "
                                           f"{n} (shape {self.shape})")
        sizes = tuple(n // known if s == -1 else s for s in sizes)
        return self.reshape((*self.shape[:d], *sizes, *self.shape[d + 1:]))

    def squeeze(self, dim: Dims | None = None) -> Self:
        """Remove size-1 dims: all of them, or those of `dim` (an int or a tuple) that are 1."""
        if dim is None:
            return self.reshape(tuple(d for d in self.shape if d != 1))
        if self.ndim == 0:
            for d in _dims(dim):
                normalize_axis("squeeze", d, 1, self.shape)
            return self
        axes = {normalize_axis("squeeze", d, self.ndim, self.shape) for d in _dims(dim)}
        return self.reshape(tuple(n for i, n in enumerate(self.shape)
                                  if not (i in axes and n == 1)))

    def movedim(self, source: Dims, destination: Dims) -> Self:
        """Move dims `source` to positions `destination`, the others keeping their order."""
        src, dst = _dims(source), _dims(destination)
        n = self.ndim
        if len(src) != len(dst):
            raise shape_error("movedim", f"source {src} and destination {dst} differ in length")
        s = [normalize_axis("movedim", d, n, self.shape) for d in src]
        t = [normalize_axis("movedim", d, n, self.shape) for d in dst]
        if len(set(s)) != len(s) or len(set(t)) != len(t):
            raise shape_error("movedim", f"repeated dim in source {src} or destination {dst}")
        order: list[int | None] = [None] * n
        for a, b in zip(s, t, strict=True):
            order[b] = a
        rest = iter(d for d in range(n) if d not in s)
        return self.permute(tuple(next(rest) if o is None else o for o in order))

    moveaxis = movedim

    def swapaxes(self, axis0: int, axis1: int) -> Self:
        return self.transpose(axis0, axis1)

    swapdims = swapaxes

    # ── tiling and rearranging ──────────────────────────────────────────────

    def repeat(self, *sizes: int | Sequence[int]) -> Self:
        """Tile: dim i repeated sizes[i] times (leading sizes add new dims), as torch."""
        reps = shape_arg("repeat", sizes)
        if len(reps) < self.ndim or min(reps, default=0) < 0:
            raise shape_error("repeat", f"needs one non-negative count per dim of shape "
                                        f"{self.shape} (or more), got {reps}")
        shape = (1,) * (len(reps) - self.ndim) + self.shape
        pairs = [x for d in shape for x in (1, d)]
        grown = [x for r, d in zip(reps, shape, strict=True) for x in (r, d)]
        x = self.reshape(tuple(pairs)).expand(tuple(grown))
        return x.reshape(tuple(r * d for r, d in zip(reps, shape, strict=True)))

    def roll(self, shifts: Dims, dims: Dims | None = None) -> Self:
        """Shift elements along `dims` cyclically (no dims: over the flattened tensor)."""
        if dims is None:
            return self.flatten().roll(shifts, 0).reshape(self.shape)
        sh, ds = _dims(shifts), _dims(dims)
        if len(sh) != len(ds):
            raise shape_error("roll", f"shifts {sh} and dims {ds} differ in length")
        x = self
        for s, d in zip(sh, ds, strict=True):
            d = normalize_axis("roll", d, self.ndim, self.shape)
            n = self.shape[d]
            s = s % n if n else 0
            if s:
                x = cat((x._narrow(d, n - s, s), x._narrow(d, 0, n - s)), d)
        return x

    def split(self, split_size_or_sections: int | Sequence[int], dim: int = 0
              ) -> tuple[Self, ...]:
        """Pieces along `dim`: of `split_size` each (the last may be smaller), or of the
        given section sizes."""
        d = normalize_axis("split", dim, self.ndim, self.shape)
        n = self.shape[d]
        if isinstance(split_size_or_sections, int):
            size = split_size_or_sections
            if size <= 0 and not (size == 0 and n == 0):
                raise shape_error("split", f"split size must be positive, got {size}")
            sections = [min(size, n - b) for b in range(0, n, size)] if n else [0]
        else:
            sections = list(split_size_or_sections)
            if sum(sections) != n or min(sections, default=0) < 0:
                raise shape_error("split", f"sections {tuple(sections)} do not add up to dim "
                                           f"{dim} of size {n} (shape {self.shape})")
        pieces, start = [], 0
        for s in sections:
            pieces.append(self._narrow(d, start, s))
            start += s
        return tuple(pieces)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Self, ...]:
        """`chunks` pieces of ceil(n / chunks) (fewer if they run out), as torch."""
        if chunks <= 0:
            raise shape_error("chunk", f"chunks must be positive, got {chunks}")
        n = self.shape[normalize_axis("chunk", dim, self.ndim, self.shape)]
        return self.split(max(-(-n // chunks), 1), dim)

    # ── masks ───────────────────────────────────────────────────────────────

    def _triangle(self, op: str, diagonal: int, lower: bool) -> Self:
        if self.ndim < 2:
            raise shape_error(op, f"needs at least 2 dims, got shape {self.shape}")
        r, c = self.shape[-2:]
        offset = self._arange(c).reshape(1, c) - self._arange(r).reshape(r, 1)
        keep = offset <= diagonal if lower else offset >= diagonal
        return keep.where(self, self._const(0, self.shape, self.dtype))

    def tril(self, diagonal: int = 0) -> Self:
        """The lower triangle of the last two dims (j - i <= diagonal), zeros above."""
        return self._triangle("tril", diagonal, True)

    def triu(self, diagonal: int = 0) -> Self:
        """The upper triangle of the last two dims (j - i >= diagonal), zeros below."""
        return self._triangle("triu", diagonal, False)

    def masked_fill(self, mask: TensorBase, value: Scalar | TensorBase) -> Self:
        """`value` where the bool `mask` (broadcast to this shape) is True; keeps the dtype."""
        if not mask.dtype.is_bool:
            raise dtype_error("masked_fill", f"the mask must be bool, got {mask.dtype.name}")
        self._check_device("masked_fill", mask)
        m: Any = mask
        if m.ndim > self.ndim or any(a != b and a != 1 for a, b in
                                     zip(m.shape[::-1], self.shape[::-1], strict=False)):
            raise shape_error("masked_fill", f"mask of shape {mask.shape} does not broadcast "
                                             f"to the tensor's shape {self.shape}")
        if isinstance(value, TensorBase):
            if value.ndim:
                raise shape_error("masked_fill", f"value must be a 0-d tensor, got shape "
                                                 f"{value.shape}")
            fill: Any = value
            fill = fill.cast(self.dtype).expand(self.shape)
        else:
            fill = self._const(value, self.shape, self.dtype)
        return m.expand(self.shape).where(fill, self)

    def one_hot(self, num_classes: int = -1) -> Self:
        """int32 one-hot of an int tensor: shape + (num_classes,), as torch's F.one_hot.
        num_classes=-1 takes max + 1, which realizes this tensor to read it."""
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
        return (self.unsqueeze(-1) == self._arange(num_classes)).cast(int32)

    # ── gather / scatter / tensor indexing ──────────────────────────────────

    def _check_index(self, op: str, dim: int, index: TensorBase) -> int:
        d = normalize_axis(op, dim, self.ndim, self.shape)
        if index.ndim != self.ndim or any(i > s for k, (i, s) in
                                          enumerate(zip(index.shape, self.shape, strict=True))
                                          if k != d):
            raise shape_error(op, f"index of shape {index.shape} does not fit the tensor's "
                                  f"shape {self.shape} along dims other than {d}")
        return d

    def gather(self, dim: int, index: TensorBase) -> Self:
        """out[..., i, ...] = self[..., index[..., i, ...], ...] along `dim`; out has the
        index's shape (which may be smaller than self off `dim`)."""
        d = self._check_index("gather", dim, index)
        n = self.shape[d]
        hit = self._index_mask("gather", index, n)  # (*index.shape, n)
        part = self._slice((0,) * self.ndim, (1,) * self.ndim,
                           tuple(n if k == d else i for k, i in enumerate(index.shape)))
        src = part.movedim(d, -1).unsqueeze(d).expand(hit.shape)  # (*index.shape, n)
        out = hit.where(src, self._const(0, hit.shape, self.dtype)).sum(-1)
        return out.cast(self.dtype)

    def scatter(self, dim: int, index: TensorBase, src: TensorBase | Scalar) -> Self:
        """A copy of self with self[..., index[..., i, ...], ...] = src[..., i, ...] along
        `dim` (out of place). Where an index repeats, the src values written there add up
        (torch keeps one of them)."""
        d = self._check_index("scatter", dim, index)
        n = self.shape[d]
        hit = self._index_mask("scatter", index, n)  # (*index.shape, n)
        if isinstance(src, TensorBase):
            if src.ndim != index.ndim or any(i > s for i, s in zip(index.shape, src.shape,
                                                                   strict=True)):
                raise shape_error("scatter", f"index of shape {index.shape} is larger than src "
                                             f"of shape {src.shape}")
            self._check_device("scatter", src)
            s: Any = src
            s = s._slice((0,) * s.ndim, (1,) * s.ndim, index.shape).cast(self.dtype)
        else:
            s = self._const(src, index.shape, self.dtype)
        vals = hit.where(s.unsqueeze(-1).expand(hit.shape), self._const(0, hit.shape,
                                                                         self.dtype))
        total = vals.sum(d).movedim(-1, d).cast(self.dtype)  # index.shape, dim d -> n
        written = hit.sum(d).movedim(-1, d) > 0
        pads = tuple((0, full - part) for full, part in zip(self.shape, total.shape,
                                                             strict=True))
        return written.pad(pads, False).where(total.pad(pads), self)

    def _take(self, dim: int, index: TensorBase) -> Self:
        """self[:, ..., index, ...] at `dim`: shape[:dim] + index.shape + shape[dim + 1:]."""
        n, k = self.shape[dim], index.ndim
        hit = self._index_mask("getitem", index, n)  # (*index.shape, n)
        pre, post = self.shape[:dim], self.shape[dim + 1:]
        full = (*pre, *index.shape, n, *post)
        x = self.reshape((*pre, *(1,) * k, n, *post)).expand(full)
        mask = hit.reshape((*(1,) * len(pre), *hit.shape, *(1,) * len(post))).expand(full)
        out = mask.where(x, self._const(0, full, self.dtype)).sum(dim + k)
        return out.cast(self.dtype)

    def __getitem__(self, index: Any) -> Self:
        """numpy basic indexing, plus one int tensor (or list of ints) index on one dim."""
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
        tensors = [i for i, item in enumerate(items) if isinstance(item, TensorBase)]
        if not tensors:
            return super().__getitem__(tuple(items))
        for i in tensors:
            if items[i].dtype.is_bool:
                raise shape_error("getitem", "boolean mask indexing makes a data-dependent "
                                             "shape, which static shapes cannot express; use "
                                             "masked_fill or where")
        if len(tensors) > 1:
            raise shape_error("getitem", "only one tensor index is supported")
        (pos,) = tensors
        idx = items[pos]
        items[pos] = slice(None)
        basic = super().__getitem__(tuple(items))
        # the output dim the tensor index selects from: dims made by the items before it
        used = sum(1 for i in items if i is not None and i is not Ellipsis)
        out_dim = 0
        for item in items[:pos]:
            if item is Ellipsis:
                out_dim += self.ndim - used
            elif item is None or isinstance(item, slice):
                out_dim += 1
        return basic._take(out_dim, idx)

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
        if any(isinstance(i, TensorBase | list | np.ndarray) for i in items):
            raise shape_error("setitem", "only basic indices (ints, slices, None, '...') can be "
                                         "assigned to")
        if is_grad_enabled() and self.requires_grad and self._ctx is None:
            raise AutogradError("setitem: a leaf Variable that requires grad is being used in "
                                "an in-place operation\n  at " + user_location())
        old = self._from_node(self._node)
        old._ctx, old.requires_grad = self._ctx, self.requires_grad
        target_shape = super().__getitem__(index).shape  # checks the index
        if isinstance(value, TensorBase):
            self._check_device("setitem", value)
            v: Any = value
            try:
                v = v.expand(target_shape).cast(self.dtype)
            except ShapeError:
                raise shape_error("setitem", f"value of shape {value.shape} does not broadcast "
                                             f"to the indexed shape {target_shape}") from None
        else:
            v = self._const(value, target_shape, self.dtype)
        mask = self._const(True, target_shape, bool_)._placed(index, self.shape)
        placed = v._placed(index, self.shape)
        result = mask.where(placed, old)
        self._node = result._node
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


# ── module-level functions ───────────────────────────────────────────────────


def cat(tensors: Sequence[T], dim: int = 0) -> T:
    """torch.cat: join tensors along an existing dim (dtypes promote). Each piece is
    zero-padded to the full size and the pieces are added: one fused elementwise kernel."""
    if not tensors:
        raise shape_error("cat", "needs at least one tensor")
    first = tensors[0]
    d = normalize_axis("cat", dim, first.ndim, first.shape) if first.ndim else dim
    if first.ndim == 0:
        raise shape_error("cat", "zero-dimensional tensors cannot be concatenated")
    for t in tensors:
        first._check_device("cat", t)
        if t.ndim != first.ndim or any(a != b for k, (a, b) in
                                       enumerate(zip(t.shape, first.shape, strict=True))
                                       if k != d):
            raise shape_error("cat", f"shapes {tuple(x.shape for x in tensors)} differ off "
                                     f"dim {dim}")
    dt = first.dtype
    for t in tensors[1:]:
        dt = promote(dt, t.dtype)
    total = sum(t.shape[d] for t in tensors)
    out: T | None = None
    start = 0
    for t in tensors:
        n = t.shape[d]
        if n or len(tensors) == 1:
            pads = tuple((start, total - start - n) if k == d else (0, 0)
                         for k in range(t.ndim))
            piece = t.cast(dt).pad(pads)
            out = piece if out is None else out + piece
        start += n
    if out is None:  # every piece is empty along dim
        return first.cast(dt)
    return out


def stack(tensors: Sequence[T], dim: int = 0) -> T:
    """torch.stack: join equal-shaped tensors along a new dim."""
    if not tensors:
        raise shape_error("stack", "needs at least one tensor")
    first = tensors[0]
    if any(t.shape != first.shape for t in tensors):
        raise shape_error("stack", f"needs tensors of one shape, got "
                                   f"{tuple(t.shape for t in tensors)}")
    d = normalize_axis("stack", dim, first.ndim + 1, first.shape)
    return cat([t.unsqueeze(d) for t in tensors], d)


def pad(x: T, pad: Sequence[int], mode: str = "constant", value: Scalar | None = None) -> T:
    """torch.nn.functional.pad: `pad` gives (left, right) sizes from the last dim backwards,
    e.g. (1, 1, 2, 0) pads the last dim by 1 on each side and the one before by 2 on top.
    Modes: 'constant' (fill with `value`, default 0; negative sizes crop), 'reflect'
    (mirror without the edge), 'replicate' (repeat the edge), 'circular' (wrap around)."""
    sizes = tuple(pad)
    if len(sizes) % 2 or len(sizes) // 2 > x.ndim:
        raise shape_error("pad", f"needs an even number of sizes, at most 2 per dim of shape "
                                 f"{x.shape}, got {sizes}")
    if mode != "constant" and value:
        raise shape_error("pad", f"a fill value is only for mode 'constant', not {mode!r}")
    out = x
    for i in range(len(sizes) // 2):
        d = x.ndim - 1 - i
        lo, hi = sizes[2 * i], sizes[2 * i + 1]
        out = _pad_dim(out, d, lo, hi, mode, 0 if value is None else value)
    return out


def _pad_dim(x: T, d: int, lo: int, hi: int, mode: str, value: Scalar) -> T:
    n = x.shape[d]
    if mode == "constant":
        if lo < 0 or hi < 0:  # negative padding crops
            b, e = max(-lo, 0), n - max(-hi, 0)
            if e < b:
                raise shape_error("pad", f"cropping ({lo}, {hi}) leaves nothing of dim {d} of "
                                         f"size {n}")
            x, lo, hi = x._narrow(d, b, e - b), max(lo, 0), max(hi, 0)
        return x.pad(tuple((lo, hi) if k == d else (0, 0) for k in range(x.ndim)), value)
    if min(lo, hi) < 0:
        raise shape_error("pad", f"negative sizes ({lo}, {hi}) need mode 'constant'")
    if mode == "reflect":
        if max(lo, hi) >= n:
            raise shape_error("pad", f"reflect padding ({lo}, {hi}) must be smaller than dim "
                                     f"{d} of size {n}")
        left, right = x._narrow(d, 1, lo).flip(d), x._narrow(d, n - 1 - hi, hi).flip(d)
    elif mode == "replicate":
        if n == 0:
            raise shape_error("pad", f"replicate padding of an empty dim {d}")
        edge = tuple(lo if k == d else s for k, s in enumerate(x.shape))
        left = x._narrow(d, 0, 1).expand(edge)
        edge = tuple(hi if k == d else s for k, s in enumerate(x.shape))
        right = x._narrow(d, n - 1, 1).expand(edge)
    elif mode == "circular":
        if max(lo, hi) > n:
            raise shape_error("pad", f"circular padding ({lo}, {hi}) must be at most dim {d} "
                                     f"of size {n}")
        left, right = x._narrow(d, n - lo, lo), x._narrow(d, 0, hi)
    else:
        raise shape_error("pad", f"unknown mode {mode!r}: use 'constant', 'reflect', "
                                 "'replicate' or 'circular'")
    return cat([left, x, right], d)
