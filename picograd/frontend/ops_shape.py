"""Shape ops built from the movement primitives, as torch names them.

    view/reshape_as/view_as/expand_as, flatten, unflatten, squeeze(dim or dims), movedim,
    swapaxes/swapdims, repeat (tile), roll, split, chunk, tril/triu
    cat(tensors, dim), stack(tensors, dim), pad(x, pad, mode, value) (torch's F.pad)

Every op is a composition of existing ops, so autograd and every device apply unchanged:
`cat` selects each piece, padded to the full size, where it lies (one fused elementwise
kernel). Indexing (gather, scatter, masked_fill, one_hot) is in ops_index.py, subscripts
(x[int_tensor], x[basic] = value) in ops_subscript.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Self, TypeVar

import numpy as np

from picograd.frontend.base import (
    Scalar,
    TensorBase,
    fill_scalar,
    normalize_axis,
    prod,
    shape_arg,
)
from picograd.frontend.dtype import DType, bool_, int32, promote
from picograd.frontend.grad_mode import is_grad_enabled, no_grad
from picograd.frontend.lazy import LazyOp, shape_error
from picograd.frontend.ops_movement import unique_axes
from picograd.frontend.ops_reduce import ReduceOps
from picograd.frontend.recording import Recording, placeholders

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
        """Remove size-1 dims: all of them, or those of `dim` (an int or a tuple, each dim
        at most once, as torch) that are 1."""
        if dim is None:
            return self.reshape(tuple(d for d in self.shape if d != 1))
        if self.ndim == 0:
            for d in _dims(dim):
                normalize_axis("squeeze", d, 1, self.shape)
            return self
        axes = unique_axes("squeeze", _dims(dim), self.ndim, self.shape)
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

    # ── triangles ───────────────────────────────────────────────────────────

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


# ── module-level functions ───────────────────────────────────────────────────


def cat(tensors: Sequence[T], dim: int = 0) -> T:
    """torch.cat: join tensors along an existing dim (dtypes promote). Each piece is padded
    to the full size and selected where it lies (`where`, not a sum of zero-padded pieces:
    a select copies every bit, while a GPU's add turns any NaN into its canonical NaN):
    one fused elementwise kernel. Its backward is its own: each piece's slice of the
    gradient."""
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
    if len(tensors) > 1 and is_grad_enabled() and any(t.requires_grad for t in tensors):
        # its own rule: piece k's gradient is the slice of g where it lies. Through the
        # decomposition it would be a select of a select of ... (the chain of later pieces'
        # `where`s), so a cat of T pieces had a backward of O(T^2) ops.
        with no_grad():
            out = _cat_value(tensors, d, dt)
        pieces = tuple(tensors)
        return out._with_gradient(pieces, lambda g: _cat_gradients(g, pieces, d))
    return _cat_value(tensors, d, dt)


# A cat of more pieces than this, whose flat kernel would do more masked loads than
# `_FLAT_CAT_LOADS`, is made in two levels (see `_cat_value`); a smaller one stays one
# kernel (a 5 x 5 convolution's weight gradient joins 25 taps of 24 values: two levels
# would only add launches).
_FLAT_CAT_PIECES = 16
_FLAT_CAT_LOADS = 1 << 20


# A cat of at least this many pieces is built once per (pieces' shapes, dtypes, device, dim,
# dtype) and replayed (`Recording`): through the Tensor methods its ~4 nodes per piece cost
# ~4 us each, 1.6 ms for a stack of 100 LSTM states (every eager step stacks four).
_REPLAYED_CAT_PIECES = 8
_CAT_RECORDINGS: dict[tuple[Any, ...], Recording] = {}
_MAX_CAT_RECORDINGS = 256


def _cat_value(tensors: Sequence[T], d: int, dt: DType) -> T:
    """`_cat_built`, replayed from a recording for a cat of many pieces."""
    if len(tensors) < _REPLAYED_CAT_PIECES:
        return _cat_built(tensors, d, dt)
    cls = type(tensors[0])
    like = tuple((t.shape, t.dtype, t.device) for t in tensors)
    key = (cls, d, dt, like)
    recording = _CAT_RECORDINGS.get(key)
    if recording is None:
        if len(_CAT_RECORDINGS) >= _MAX_CAT_RECORDINGS:
            _CAT_RECORDINGS.clear()
        slots = placeholders(like)
        with no_grad():
            out = _cat_built([cls._from_node(p) for p in slots], d, dt)
        # kept across graphs: its masks are replayed too (`Recording`'s share_constants)
        recording = _CAT_RECORDINGS[key] = Recording(slots, [out._node],
                                                     share_constants=False)
    if not recording.replayable:
        return _cat_built(tensors, d, dt)
    (node,) = recording.replay([t._node for t in tensors])
    return cls._from_node(node)


def _cat_built(tensors: Sequence[T], d: int, dt: DType) -> T:
    """The pieces, each padded to the full size and selected where it lies. Every element
    of a cat's kernel loads from every piece (masked; on CPUs `loop-unswitch` gives each
    piece a range of its own, unmasked, for up to its `MAX_PIECES`), so a cat of n pieces
    costs n loads per element: past `_FLAT_CAT_PIECES` (and `_FLAT_CAT_LOADS`) the pieces
    are joined in groups of about sqrt(n), each group stored in a buffer of its own, and
    the groups are joined (about 2 sqrt(n) loads per element: a stack of 100 (32, 256)
    LSTM states took 2.5 ms in one kernel, 1.7 ms in two levels, on a 2-core Zen 5)."""
    if len(tensors) > _FLAT_CAT_PIECES and (
            len(tensors) * prod(tensors[0].shape[:d]) * prod(tensors[0].shape[d + 1:])
            * sum(t.shape[d] for t in tensors) > _FLAT_CAT_LOADS):
        size = math.isqrt(len(tensors) - 1) + 1
        groups = [_cat_built(tensors[k:k + size], d, dt).contiguous()
                  for k in range(0, len(tensors), size)]
        return _cat_built(groups, d, dt)
    total = sum(t.shape[d] for t in tensors)
    out: T | None = None
    start = 0
    zero = fill_scalar("cat", 0, dt)
    ones: dict[tuple[int, ...], T] = {}  # the pieces' masks, before padding, by shape
    for t in tensors:
        n = t.shape[d]
        if n or len(tensors) == 1:
            low = tuple(start if k == d else 0 for k in range(t.ndim))
            high = tuple(total - start - n if k == d else 0 for k in range(t.ndim))
            piece = t.cast(dt)._padded(low, high, zero)
            if out is None:
                out = piece
            else:
                if (one := ones.get(t.shape)) is None:
                    one = ones[t.shape] = t._const(True, t.shape, bool_)
                out = one._padded(low, high, False).where(piece, out)
        start += n
    return tensors[0].cast(dt) if out is None else out  # None: every piece is empty


def _cat_gradients(g: T, tensors: Sequence[T], d: int) -> tuple[T | None, ...]:
    """cat's backward: each piece's slice of `g`, in the piece's dtype (None for an integer
    piece); an empty piece gets zeros of its shape, as torch gives."""
    grads: list[T | None] = []
    start = 0
    for t in tensors:
        n = t.shape[d]
        if not (t.requires_grad and t.dtype.is_float):
            grads.append(None)
        elif not n:
            grads.append(t._const(0.0, t.shape, t.dtype))
        else:
            begin = tuple(start if k == d else 0 for k in range(g.ndim))
            grads.append(g._slice(begin, (1,) * g.ndim, t.shape).cast(t.dtype))
        start += n
    return tuple(grads)


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
        # torch's value is a float: uint8 -1 is refused (DTypeError), not wrapped to 255
        out = _pad_dim(out, d, lo, hi, mode, 0 if value is None else float(value))
    return out


def _pad_dim(x: T, d: int, lo: int, hi: int, mode: str, value: Scalar) -> T:
    n = x.shape[d]
    if mode == "reflect" and min(lo, hi) < 0:
        return _reflect_cropped(x, d, lo, hi)
    if lo < 0 or hi < 0:  # negative padding crops (then the mode pads what is left)
        b, e = max(-lo, 0), n - max(-hi, 0)
        if e < b:
            raise shape_error("pad", f"cropping ({lo}, {hi}) leaves nothing of dim {d} of "
                                     f"size {n}")
        x, lo, hi = x._narrow(d, b, e - b), max(lo, 0), max(hi, 0)
        n = x.shape[d]
    if mode == "constant":
        return x.pad(tuple((lo, hi) if k == d else (0, 0) for k in range(x.ndim)), value)
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


def _reflect_cropped(x: T, d: int, lo: int, hi: int) -> T:
    """torch's reflect padding with a negative side: output j reads element j - lo of the
    uncropped dim, mirrored at its edges (not the cropped dim's)."""
    n = x.shape[d]
    size = n + lo + hi
    if size < 1 or max(lo, hi) >= n:
        raise shape_error("pad", f"reflect padding ({lo}, {hi}) of dim {d} of size {n}: each "
                                 "size must be smaller than the dim and something must remain")
    period = 2 * (n - 1)
    # abs and index_select are ops of mixins above ShapeOps (MathOps, IndexOps): every Tensor
    # has them, ShapeOps' type does not
    tensor: Any = x
    source = (tensor._arange(size) - lo).abs() % period  # int32 positions, computed where used
    return tensor.index_select(d, (source >= n).where(period - source, source))
