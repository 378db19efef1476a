"""Scans beyond cumsum, as torch names them.

    cumprod(dim)                   int32 for int/bool inputs (int64: int64), as cumsum
    cummax(dim) / cummin(dim)      (values, indices): indices int32, the last of equal ones
    logcumsumexp(dim)              log(cumsum(exp(x))) without overflow

They reuse the block scan of ops_stats.py (`_scan_last`: a triangular reduce inside blocks
of 32, the block totals scanned recursively). `cumprod` is a PROD scan; its gradient is
torch's with zeros included: d out_i / d x_j = prod_{k <= i, k != j} x_k, which splits into
the exclusive product before j times the product of x_(j+1)..x_i, so the gradient of x_j is
excl_j * sum_{i >= j} g_i * prod(x_(j+1)..x_i): an (n, n) table of those products (one scan
along its rows), n^2 per row, exact where x holds zeros (out / x would divide by them).
`cummax`/`cummin` find their indices from the running values: position j is a record where
x_j equals the running extreme there (two NaNs count as equal), and the index at i is the
last record up to i (a MAX scan of the record positions): the last of tied maxima, the last
NaN once one is seen, as torch's CPU kernel. The values are a gather of x at those indices,
so the gradient goes back through the gather to the index's element (torch's rule).
`logcumsumexp` scans with log-add-exp: inside a block a masked `logsumexp` of each prefix,
across blocks the log-add-exp of a block's prefix and the total before it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Self

from picograd.dialects.pg import ReduceKind
from picograd.frontend.dtype import bool_, float16, int32
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.ops_reduce import accumulator_dtype
from picograd.frontend.ops_shape import stack
from picograd.frontend.ops_sort import SortOps, ValuesIndices, _same

_BLOCK = 32  # as ops_stats._SCAN_BLOCK: the longest axis one triangular reduce scans


def _blocked(x: Any, small: Callable[[Any], Any], join: Callable[[Any, Any], Any],
             identity: float) -> Any:
    """The inclusive scan of x's last axis by `small` (a scan of at most _BLOCK) inside
    blocks, each block joined with the scan of the totals before it (`join`)."""
    n, lead = x.shape[-1], x.shape[:-1]
    if n <= _BLOCK:
        return small(x)
    m = -(-n // _BLOCK)
    pads = ((0, 0),) * len(lead)
    inner = _blocked(x.pad((*pads, (0, m * _BLOCK - n)), identity).reshape(
        *lead, m, _BLOCK), small, join, identity)
    totals = inner[..., _BLOCK - 1]
    before = _blocked(totals, small, join, identity).pad((*pads, (1, 0)), identity)[..., :m]
    return join(inner, before.unsqueeze(-1).expand(inner.shape)).reshape(
        *lead, m * _BLOCK)[..., :n]


def _prefix_logsumexp(x: Any) -> Any:
    n = x.shape[-1]
    ar = x._index_range(n)
    lower = ar.reshape(n, 1) >= ar.reshape(1, n)  # [i, j]: j <= i
    rows = x.unsqueeze(-2).expand(*x.shape[:-1], n, n)
    return lower.where(rows, -math.inf).logsumexp(-1)


class ScanOps(SortOps):
    __slots__ = ()

    def _along_last(self, op: str, dim: int | None, axis: int | None,
                    fn: Callable[[Any], Any]) -> Any:
        """fn applied to this tensor with `dim` moved last (0-d: as one element)."""
        d = self._one_axis(op, axis, dim)
        x: Any = self.reshape(1) if self.ndim == 0 else self
        last = x.ndim - 1
        moved = x if d == last else x.transpose(d, last)
        out = fn(moved)
        if isinstance(out, tuple):
            back = tuple(o if d == last else o.transpose(d, last) for o in out)
            return ValuesIndices(*(o.reshape(self.shape) for o in back))
        return (out if d == last else out.transpose(d, last)).reshape(self.shape)

    def cumprod(self, dim: int | None = None, *, axis: int | None = None) -> Self:
        """Running products along `dim`: out[..., i] = prod(x[..., :i + 1])."""
        return self._along_last("cumprod", dim, axis, _cumprod_last)

    def cummax(self, dim: int | None = None, *, axis: int | None = None) -> ValuesIndices:
        """Running maxima along `dim` and the (last) index of each (torch's cummax)."""
        return self._along_last("cummax", dim, axis, lambda x: _cum_extreme(x, True))

    def cummin(self, dim: int | None = None, *, axis: int | None = None) -> ValuesIndices:
        """Running minima along `dim` and the (last) index of each (torch's cummin)."""
        return self._along_last("cummin", dim, axis, lambda x: _cum_extreme(x, False))

    def logcumsumexp(self, dim: int | None = None, *, axis: int | None = None) -> Self:
        """log(cumsum(exp(x))) along `dim`, computed without overflow (float results)."""

        def scan(x: Any) -> Any:
            x = x._f()
            if x.shape[-1] == 0:
                return x
            return _blocked(x, _prefix_logsumexp,
                            lambda a, b: stack([a, b], -1).logsumexp(-1), -math.inf)

        return self._along_last("logcumsumexp", dim, axis, scan)


def _cumprod_last(x: Any) -> Any:
    if not x.dtype.is_float:
        x = x.cast(accumulator_dtype(x.dtype) if x.dtype is not bool_ else int32)
    n = x.shape[-1]
    if n == 0:
        return x
    wide = x.cast(accumulator_dtype(x.dtype)) if x.dtype is float16 else x
    with no_grad():
        plain = type(wide)._from_node(wide._node)
        out = plain._scan_last(ReduceKind.PROD, 1)
    value = out.cast(x.dtype) if x.dtype is float16 else out
    if not x.dtype.is_float:
        return value

    def gradient(g: Any) -> tuple[Any]:
        lead = plain.shape[:-1]
        ar = plain._index_range(n)
        after = ar.reshape(1, n) > ar.reshape(n, 1)  # [j, k]: k > j
        table = after.where(plain.unsqueeze(-2).expand(*lead, n, n), 1.0)
        spans = table._scan_last(ReduceKind.PROD, 1)  # [j, i]: prod x_(j+1)..x_i (i >= j)
        upto = ar.reshape(1, n) >= ar.reshape(n, 1)  # [j, i]: i >= j
        gw = g.cast(plain.dtype)
        s = upto.where(spans * gw.unsqueeze(-2), 0.0).sum(-1)
        excl = out.pad(((0, 0),) * len(lead) + ((1, 0),), 1.0)[..., :n]
        return ((excl * s).cast(x.dtype),)

    return value._with_gradient((x,), gradient)


def _cum_extreme(x: Any, largest: bool) -> ValuesIndices:
    n = x.shape[-1]
    if n == 0:
        return ValuesIndices(x, x._const(0, x.shape, int32))
    with no_grad():
        plain = type(x)._from_node(x._node)
        key = plain.cast(int32) if plain.dtype is bool_ else plain
        if not largest:  # an order-reversing map that is exact: -x, or ~x for integers
            key = -key if key.dtype.is_float else ~key
        running = key._scan_last(ReduceKind.MAX, key.dtype.min)
        record = _same(key, running)
        at = record.where(key._index_range(n), -1)._scan_last(ReduceKind.MAX, -1)
        at = at.cast(int32)
    return ValuesIndices(x._gather_along(x.ndim - 1, at), at)
