"""Sorting and order statistics, as torch names them.

    sort(dim=-1, descending=False, stable=False) -> (values, indices)
    argsort(dim=-1, descending=False, stable=False), msort()
    topk(k, dim=-1, largest=True, sorted=True) -> (values, indices)
    kthvalue(k, dim=-1, keepdim=False) -> (values, indices)
    median(dim=None, keepdim=False), nanmedian(...)   (values, indices) given a dim
    mode(dim=-1, keepdim=False) -> (values, indices)

How a sort is built: by rank, from comparison counting, with shapes the compiler sees. Along
the sorted axis of length n, every element is compared with every other one (an (n, n)
comparison, one fused reduce): its rank is the number of elements that sort before it, an
equal one sorting before it when it comes first (so the sort is always stable, which
`stable=False` also allows). The ranks are a permutation; the sorted position r takes the
element whose rank is r (a second (n, n) compare-and-reduce), and the values are a gather of
the input at those indices, so the gradient scatters back through the indices (the gather's
backward, one pass). The work is n^2 per row: fine for the rows these ops meet (a top-k of
logits, a median of a window) up to a few thousand (sorting (8, 1024) float32 rows on
CPU:LLVM: 17 ms; (8, 4096): 0.16 s); a bitonic network would be n log^2 n (not done).
NaN sorts as the largest value, as in torch (last ascending, first descending). Indices are
int32 (torch's are int64; positions fit).
Ties: `sort` is stable; `topk`, `kthvalue`, `median` pick the stable order's element where
torch leaves the choice to the implementation; `mode` returns the last index of the most
frequent value (the smallest of equally frequent ones), as torch's CPU kernel does.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Self

from picograd.frontend.base import normalize_axis
from picograd.frontend.dtype import bool_, float32, int32
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import index_error
from picograd.frontend.ops_index import IndexOps
from picograd.frontend.ops_stats import StatsOps


class ValuesIndices(NamedTuple):
    """(values, indices), as torch's `torch.return_types.sort` & co."""

    values: Any
    indices: Any


def _before(a: Any, b: Any, descending: bool) -> Any:
    """Where b sorts strictly before a (NaN the largest value); both broadcast."""
    if descending:
        a, b = b, a
    less = b < a
    if a.dtype.is_float:
        less = less | (a.isnan() & ~b.isnan())
    return less


def _same(a: Any, b: Any) -> Any:
    """Where a and b are equal in sort order (two NaNs are)."""
    eq = a == b
    if a.dtype.is_float:
        eq = eq | (a.isnan() & b.isnan())
    return eq


class SortOps(IndexOps, StatsOps):
    __slots__ = ()

    def _sort_dim(self, op: str, dim: int) -> int:
        return normalize_axis(op, dim, max(self.ndim, 1), self.shape)

    def _sorted_order_last(self, descending: bool) -> Self:
        """int32 indices that sort the last axis stably (the module docstring's ranks)."""
        n = self.shape[-1]
        key: Any = self.cast(int32) if self.dtype is bool_ else self
        with no_grad():
            key = type(self)._from_node(key._node)
            a, b = key.unsqueeze(-1), key.unsqueeze(-2)  # [.., i, j]: a = x_i, b = x_j
            ar = self._index_range(n)
            earlier = ar.reshape(1, n) < ar.reshape(n, 1)  # j < i
            first = _before(a, b, descending) | (_same(a, b) & earlier)
            rank = first.cast(int32).sum(-1)  # (..., n): where element i goes
            at = rank.unsqueeze(-1) == ar  # [.., i, r]
            order = at.where(ar.reshape(n, 1), 0).sum(-2)  # [.., r]: the element ranked r
        return order.cast(int32)

    def _sort_along(self, d: int, descending: bool) -> tuple[Self, Self]:
        x: Any = self.reshape(1) if self.ndim == 0 else self
        last = x.ndim - 1
        moved = x if d == last else x.transpose(d, last)
        if moved.shape[-1] == 0:
            idx = moved._const(0, moved.shape, int32)
            values = moved
        else:
            idx = moved._sorted_order_last(descending)
            values = moved._gather_along(last, idx)
        if d != last:
            values, idx = values.transpose(d, last), idx.transpose(d, last)
        return values.reshape(self.shape), idx.reshape(self.shape)

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False
             ) -> ValuesIndices:
        """Values sorted along `dim` and the int32 indices they came from (stable; NaN the
        largest). `t.sort(descending=True).values[..., 0]` is the row's maximum.
        """
        values, idx = self._sort_along(self._sort_dim("sort", dim), descending)
        return ValuesIndices(values, idx)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Self:
        """The int32 indices that sort `dim` (`sort(...).indices`)."""
        return self._sort_along(self._sort_dim("argsort", dim), descending)[1]

    def msort(self) -> Self:
        """The values sorted along dim 0 (torch.msort)."""
        return self._sort_along(self._sort_dim("msort", 0), False)[0]

    def _k_of(self, op: str, k: int, n: int, low: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or not low <= k <= n:
            raise index_error(op, f"k ({k!r}) is out of range for a dim of size {n} (k must "
                                  f"lie in [{low}, {n}])")

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
             ) -> ValuesIndices:
        """The `k` largest (smallest with largest=False) elements along `dim`, in order,
        and their indices."""
        d = self._sort_dim("topk", dim)
        n = self.shape[d] if self.ndim else 1
        self._k_of("topk", k, n, 0)
        values, idx = self._sort_along(d, largest)
        if self.ndim == 0:
            return ValuesIndices(values, idx)
        return ValuesIndices(values._narrow(d, 0, k), idx._narrow(d, 0, k))

    def _pick(self, op: str, d: int, values: Any, idx: Any, at: Any, keepdim: bool
              ) -> ValuesIndices:
        """values/idx (sorted along `d`) at position `at` (an int, or an int32 tensor of
        the reduced shape, keepdim), reduced along `d`."""
        if self.ndim == 0:
            return ValuesIndices(values, idx)
        if isinstance(at, int):
            v, i = values._narrow(d, at, 1), idx._narrow(d, at, 1)
        else:
            v, i = values._gather_along(d, at), idx._gather_along(d, at)
        if not keepdim:
            v, i = v.squeeze(d), i.squeeze(d)
        return ValuesIndices(v, i)

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        """The k-th smallest element along `dim` (k counts from 1) and its index."""
        d = self._sort_dim("kthvalue", dim)
        n = self.shape[d] if self.ndim else 1
        self._k_of("kthvalue", k, n, 1)
        values, idx = self._sort_along(d, False)
        return self._pick("kthvalue", d, values, idx, k - 1, keepdim)

    def _median(self, op: str, dim: int | None, keepdim: bool, ignore_nan: bool) -> Any:
        if dim is None:
            flat: Any = self.reshape(-1)
            if flat.shape[0] == 0:  # torch's NaN, cast to the dtype (ints: design.md's rule)
                return self._const(float("nan"), (), float32).cast(self.dtype)
            return flat._median(op, 0, False, ignore_nan).values
        d = self._sort_dim(op, dim)
        if self.ndim and self.shape[d] == 0:
            raise index_error(op, f"cannot take the {op} of an empty dim {d}")
        n = self.shape[d] if self.ndim else 1
        values, idx = self._sort_along(d, False)
        if not self.dtype.is_float or self.ndim == 0:
            return self._pick(op, d, values, idx, (n - 1) // 2, keepdim)
        x: Any = self
        nan = x.isnan()
        count = nan.cast(int32).sum(d, keepdim=True)  # NaNs sort last
        if ignore_nan:  # the lower median of the others (a row of NaNs: of the NaNs)
            at = (count == n).where((n - 1) // 2, (n - count - 1) // 2)
        else:  # a row holding a NaN gives its first NaN, as torch
            at = (count > 0).where(n - count, (n - 1) // 2)
        return self._pick(op, d, values, idx, at.cast(int32), keepdim)

    def median(self, dim: int | None = None, keepdim: bool = False) -> Any:
        """The lower median (of all elements: a 0-d tensor; along `dim`: values and
        indices); NaN where a NaN is among them, as torch."""
        return self._median("median", dim, keepdim, False)

    def nanmedian(self, dim: int | None = None, keepdim: bool = False) -> Any:
        """`median` of the non-NaN elements (NaN where all are NaN)."""
        return self._median("nanmedian", dim, keepdim, True)

    def mode(self, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        """The most frequent value along `dim` (the smallest of equally frequent ones) and
        the last index holding it."""
        d = self._sort_dim("mode", dim)
        if self.ndim == 0:
            return ValuesIndices(self, self._const(0, (), int32))
        if self.shape[d] == 0:
            raise index_error("mode", f"cannot take the mode of an empty dim {d}")
        x: Any = self if d == self.ndim - 1 else self.transpose(d, self.ndim - 1)
        n = x.shape[-1]
        with no_grad():
            plain: Any = type(self)._from_node(x._node)
            a, b = plain.unsqueeze(-1), plain.unsqueeze(-2)
            count = (a == b).cast(int32).sum(-1)  # (..., n): how often x_i occurs (NaN: 0)
            # the best element: the most frequent, then the smallest, then the last
            order = plain._sorted_order_last(False)  # ascending, stable
            cnt_sorted = count._gather_along(x.ndim - 1, order)
            ar = self._index_range(n)
            # the score ranks by count, then by sorted position reversed (smaller first)
            score = cnt_sorted * (n + 1) + (n - 1 - ar)
            best = score.argmax(-1, keepdim=True).cast(int32)  # position in sorted order
            value_pos = order._gather_along(x.ndim - 1, best)  # an index of the mode
            vals = plain._gather_along(x.ndim - 1, value_pos)
            hits = _same(plain, vals.expand(plain.shape))
            last = hits.where(ar, -1).max(-1, keepdim=True).cast(int32)
        values = x._gather_along(x.ndim - 1, last)
        if d != self.ndim - 1:
            values, last = values.transpose(d, self.ndim - 1), last.transpose(d, self.ndim - 1)
        if not keepdim:
            values, last = values.squeeze(d), last.squeeze(d)
        return ValuesIndices(values, last)
