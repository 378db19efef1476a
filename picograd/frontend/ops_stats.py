"""Statistics and scans built from the reduce primitives.

    prod(dim=None, keepdim=False)                   int32 for int/bool inputs (int64: int64)
    var(dim=None, correction=1, keepdim=False)      float32 (float16 for float16 inputs);
                                                    `correction` may be a bool
    std(dim=None, correction=1, keepdim=False)      (torch's `unbiased`): True = 1, False = 0
    any(dim=None, keepdim=False) / all(...)         bool: elements != 0, on any dtype
    argmax(dim=None, keepdim=False) / argmin(...)   int32, the first index among ties; a NaN
                                                    counts as the extreme (torch's rule)
    cumsum(dim)                                     int32 for int/bool inputs (int64: int64)
    cummax(dim)                                     values only (as `max(dim)` here)

`dim` may also be given as `axis=`, like `sum`/`max`; `var`/`std`/`any`/`all`/`prod` take an
int, a tuple of ints or None (all dims). Where torch returns int64 these return int32
(int64 for int64 inputs). float16 inputs are computed in float32 and rounded back to
float16, as torch accumulates them. `var`/`std` of integers compute in float32 (torch
refuses them).

`prod` is a PROD reduce with torch's gradient (`prod_backward`): where the tensor holds no
zero, out / x (NaN at an infinite x, as torch); where it holds one, the product of the other
elements of each slice, an exclusive scan from each side multiplied (so 0 and inf give 0 * inf
= NaN only where that product has both); for `prod()` over all dims with two or more zeros,
0. `var`'s gradient is torch's `var_backward` too: 2 / (n - correction) * (x - mean) (the
mean's own term, zero in exact arithmetic, left out, so an infinite x gives ±inf, not NaN),
and over all dims with n <= correction NaN where x equals the mean, inf elsewhere. `std`'s
is var's of g / (2 std), 0 where std is 0 (a constant input).

How the scans are built. A scan along an axis of length n <= `_SCAN_BLOCK` is one reduce:
the row is broadcast to (n, n), the lower triangle (j <= i, from comparing two aranges, so no
mask is stored) selected and reduced — n^2 work, but one fused kernel with no intermediate.
A longer axis is padded to whole blocks of `_SCAN_BLOCK`, scanned inside each block, and the
exclusive scan of the block totals (the same function, recursively) combined into every
block: about n * (`_SCAN_BLOCK` + n / `_SCAN_BLOCK`) work instead of n^2, a handful of
kernels. Forward + backward of cumsum over (16, 4096) on CPU:LLVM (median of 5 steady
steps): block 256: 17 ms, 128: 8.1 ms, 64: 4.4 ms, 32: 2.3 ms, 16: 2.6 ms, 8: 2.0 ms; at
(16, 256) 32 is the fastest (0.7 ms), so the block is 32. (A log-step scan of slice + pad +
add fuses into one kernel whose expression duplicates the input 2^steps times — n loads per
element and O(n) code — so it is not used.)
The backward pass goes through the same compositions (a reverse scan, by the rules of
expand and where). `cummax` shares the gradient among equal elements of a prefix, where
torch gives it to the last of them.
"""

from __future__ import annotations

import math
from typing import Self

import numpy as np

from picograd.dialects.pg import ReduceKind
from picograd.frontend.base import normalize_axis, prod
from picograd.frontend.dtype import bool_, float_compute_dtype, int32, uint8
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import LazyOp, shape_error
from picograd.frontend.ops_reduce import Axis, ReduceOps, accumulator_dtype

_SCAN_BLOCK = 32  # longest axis scanned by one triangular reduce (see the docstring)


class StatsOps(ReduceOps):
    __slots__ = ()

    # ── helpers ─────────────────────────────────────────────────────────────

    def _index_range(self, n: int) -> Self:
        """int32 0..n-1 as a leaf on this tensor's device."""
        node = LazyOp.leaf(np.arange(n, dtype=np.int32), int32, self.device)
        return type(self)._from_node(node)

    def _no_grad_view(self) -> Self:
        """The same node, cut from autograd (index and truth results have no gradient)."""
        return type(self)._from_node(self._node)

    def _one_axis(self, op: str, axis: int | None, dim: int | None) -> int:
        if axis is not None and dim is not None:
            raise shape_error(op, "give either axis= or dim=, not both")
        d = dim if axis is None else axis
        if not isinstance(d, int) or isinstance(d, bool):
            raise shape_error(op, f"needs one int dim, got {d!r}")
        return normalize_axis(op, d, max(self.ndim, 1), self.shape)

    def _empty_over(self, axes: tuple[int, ...]) -> bool:
        """Whether reducing `axes` reduces nothing (a constant then: no kernel reads an
        empty buffer)."""
        return any(self.shape[a] == 0 for a in axes)

    def _reduced_shape(self, axes: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
        if keepdim:
            return tuple(1 if i in axes else d for i, d in enumerate(self.shape))
        return tuple(d for i, d in enumerate(self.shape) if i not in axes)

    # ── reductions ──────────────────────────────────────────────────────────

    def prod(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None) -> Self:
        """The product of the elements over `dim` (all dims if None)."""
        axes = self._axes("prod", axis, dim)
        if not self.dtype.is_float:
            return self._accumulated(ReduceKind.PROD, axes, keepdim)
        wide = float_compute_dtype(self.dtype)
        if self.dtype is not wide:  # float16 / bfloat16 multiply in float32, round once
            return self.cast(wide).prod(axes, keepdim).cast(self.dtype)
        x = self
        with no_grad():
            value = x._reduce(ReduceKind.PROD, axes, keepdim)
        whole = axis is None and dim is None and x.ndim > 0  # torch's prod() without a dim
        kept = self._reduced_shape(axes, True)

        def rule(g: Self) -> tuple[Self]:
            g, out = g.reshape(kept), value.reshape(kept)
            zero = x == 0.0
            some_zero = zero.any()
            d = some_zero.where(g * x._prod_of_others(axes), g * (out / x))
            if whole:  # torch's shortcut: two zeros or more make every gradient 0
                d = (zero.sum() > 1).where(0.0, d)
            return (d,)

        return value._with_gradient((x,), rule)

    def _prod_of_others(self, axes: tuple[int, ...]) -> Self:
        """For each element, the product of the other elements of its slice over `axes`: the
        exclusive products from the left and from the right multiplied (torch's
        `prod_safe_zeros_backward`)."""
        rest = [i for i in range(self.ndim) if i not in axes]
        perm = (*rest, *axes)
        moved = self.permute(perm)
        lead = moved.shape[:len(rest)]
        n = prod(self.shape[a] for a in axes)
        if n == 0:
            return self
        row = moved.reshape(*lead, n)
        keep = ((0, 0),) * len(lead)
        left = row[..., :n - 1].pad((*keep, (1, 0)), 1.0)._scan_last(ReduceKind.PROD, 1.0)
        right = row.flip(-1)[..., :n - 1].pad((*keep, (1, 0)), 1.0)
        right = right._scan_last(ReduceKind.PROD, 1.0).flip(-1)
        others = (left * right).reshape(moved.shape)
        inverse = tuple(perm.index(i) for i in range(self.ndim))
        return others.permute(inverse)

    def var(self, axis: Axis = None, correction: float = 1, keepdim: bool = False, *,
            dim: Axis = None) -> Self:
        """sum((x - mean)^2) / (n - correction) over `dim`, in float32 (torch's `var`)."""
        return self._var("var", axis, correction, keepdim, dim)

    def _var(self, op: str, axis: Axis, correction: float, keepdim: bool, dim: Axis) -> Self:
        axes = self._axes(op, axis, dim)
        dof = prod(self.shape[a] for a in axes) - float(correction)
        x = self.cast(float_compute_dtype(self.dtype))
        with no_grad():
            mean = x.mean(axes, keepdim=True)
            centred = x - mean
            out = (centred * centred).sum(axes, keepdim=keepdim) / max(dof, 0.0)
        whole = (axis is None and dim is None) or x.ndim == 0  # torch's var() without a dim
        kept = self._reduced_shape(axes, True)

        def rule(g: Self) -> tuple[Self]:
            g = g.reshape(kept)
            if whole and dof <= 0:  # 2 / 0 times 0 where x is its mean, times nonzero elsewhere
                return (g * (x == mean).where(math.nan, math.inf),)
            scale = math.inf if dof == 0 else 2.0 / dof
            return ((g * scale) * centred,)

        out = out._with_gradient((x,), rule)
        return out.cast(self.dtype) if self.dtype.is_float and out.dtype is not self.dtype else out

    def std(self, axis: Axis = None, correction: float = 1, keepdim: bool = False, *,
            dim: Axis = None) -> Self:
        """The square root of `var`."""
        v = self._var("std", axis, correction, keepdim, dim)
        with no_grad():
            out = v.sqrt()
        return out._with_gradient((v,), lambda g: ((out == 0).where(0.0, g / (out * 2)),))

    def any(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None) -> Self:
        """True where some element over `dim` is nonzero (False over an empty dim)."""
        axes = self._axes("any", axis, dim)
        if self._empty_over(axes):
            out = self._const(False, self._reduced_shape(axes, keepdim), bool_)
        else:
            out = (self._no_grad_view() != 0).sum(axes, keepdim=keepdim) > 0
        return out.cast(uint8) if self.dtype is uint8 else out  # torch's dtype for uint8

    def all(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None) -> Self:
        """True where every element over `dim` is nonzero (True over an empty dim)."""
        axes = self._axes("all", axis, dim)
        if self._empty_over(axes):
            out = self._const(True, self._reduced_shape(axes, keepdim), bool_)
        else:
            out = (self._no_grad_view() == 0).sum(axes, keepdim=keepdim) == 0
        return out.cast(uint8) if self.dtype is uint8 else out  # torch's dtype for uint8

    def _arg_extreme(self, op: str, kind: ReduceKind, axis: int | None, keepdim: bool,
                     dim: int | None) -> Self:
        if axis is None and dim is None:
            flat = self.reshape(-1)._arg_extreme(op, kind, 0, False, None)
            return flat.reshape((1,) * self.ndim) if keepdim else flat.reshape(())
        d = self._one_axis(op, axis, dim)
        x = self._no_grad_view()
        x = x.reshape(1) if x.ndim == 0 else x
        n = x.shape[d]
        if n == 0:
            raise shape_error(op, f"cannot take the {op} of an empty dim of shape {self.shape}")
        x = x.cast(int32) if x.dtype.is_bool else x
        best = x._reduce(kind, (d,), True)
        index = self._index_range(n).reshape(tuple(n if i == d else 1 for i in range(x.ndim)))
        # candidates: NaNs first (index), then the extremes (n + index), then the rest (2n)
        candidate = (x == best).where(index + n, 2 * n)
        if x.dtype.is_float:
            candidate = (x != x).where(index, candidate)
        first = candidate.min(d, keepdim=True)
        first = (first >= n).where(first - n, first)
        if self.ndim == 0:
            return first.reshape(())
        return first if keepdim else first.squeeze(d)

    def argmax(self, axis: int | None = None, keepdim: bool = False, *,
               dim: int | None = None) -> Self:
        """int32 index of the largest element over `dim` (of the flattened tensor if None);
        the first one among ties."""
        return self._arg_extreme("argmax", ReduceKind.MAX, axis, keepdim, dim)

    def argmin(self, axis: int | None = None, keepdim: bool = False, *,
               dim: int | None = None) -> Self:
        """int32 index of the smallest element over `dim`; the first one among ties."""
        return self._arg_extreme("argmin", ReduceKind.MIN, axis, keepdim, dim)

    # ── scans ───────────────────────────────────────────────────────────────

    def _scan_last(self, kind: ReduceKind, identity: float | int) -> Self:
        """The inclusive scan (SUM, PROD or MAX) of the last axis (see the module docstring)."""
        n = self.shape[-1]
        lead = self.shape[:-1]
        if n <= _SCAN_BLOCK:
            ar = self._index_range(n)
            lower = ar.reshape(n, 1) >= ar.reshape(1, n)  # [i, j]: j <= i
            rows = self.unsqueeze(-2).expand(*lead, n, n)
            return lower.where(rows, identity)._reduce(kind, (len(lead) + 1,), False)
        b = _SCAN_BLOCK
        m = -(-n // b)
        padded = self.pad(((0, 0),) * len(lead) + ((0, m * b - n),), identity)
        inner = padded.reshape(*lead, m, b)._scan_last(kind, identity)  # (..., m, b)
        totals = inner[..., b - 1]  # (..., m)
        before = totals._scan_last(kind, identity).pad(((0, 0),) * len(lead) + ((1, 0),),
                                                      identity)[..., :m]
        before = before.unsqueeze(-1)
        joined = (inner + before if kind == ReduceKind.SUM else inner * before
                  if kind == ReduceKind.PROD else inner.maximum(before))
        return joined.reshape(*lead, m * b)[..., :n]

    def _scan(self, op: str, kind: ReduceKind, axis: int | None, dim: int | None) -> Self:
        d = self._one_axis(op, axis, dim)
        x = self.reshape(1) if self.ndim == 0 else self
        if kind == ReduceKind.SUM:
            acc = accumulator_dtype(x.dtype)
            x, identity = x.cast(acc), (0.0 if acc.is_float else 0)
        else:
            x = x.cast(int32) if x.dtype is bool_ else x
            identity = x.dtype.min
        last = x.ndim - 1
        out = x if d == last else x.transpose(d, last)
        if x.shape[d] > 0:
            out = out._scan_last(kind, identity)
        out = out if d == last else out.transpose(d, last)
        out = out.cast(bool_) if kind == ReduceKind.MAX and self.dtype is bool_ else out
        out = out.cast(self.dtype) if self.dtype.is_float and out.dtype is not self.dtype else out
        return out.reshape(self.shape)

    def cumsum(self, axis: int | None = None, *, dim: int | None = None) -> Self:
        """Running sums along `dim`: out[..., i] = sum(x[..., :i + 1])."""
        return self._scan("cumsum", ReduceKind.SUM, axis, dim)

    def cummax(self, axis: int | None = None, *, dim: int | None = None) -> Self:
        """Running maxima along `dim` (values only, as `max(dim)`; torch also returns the
        indices)."""
        return self._scan("cummax", ReduceKind.MAX, axis, dim)
