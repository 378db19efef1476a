"""More reductions (torch's names and semantics), on top of ops_reduce.py / ops_stats.py.

    amax(dim, keepdim) amin(dim, keepdim)      dim: an int, a tuple, or () / None for all;
                                                the gradient is shared among ties (NaN
                                                where the result is NaN, as torch's)
    aminmax(dim=, keepdim=) -> (min, max)      a named pair, as torch.return_types.aminmax
    var_mean / std_mean(dim, unbiased, keepdim, correction=) -> (var | std, mean)
    sum / prod / mean(..., dtype=)             the input cast to `dtype` first, as torch
    nansum nanmean                             NaNs count as absent (no gradient to them)
    count_nonzero(dim)                         int32 (picograd counts in int32)

    x = pg.Tensor([[1.0, 5.0], [3.0, 2.0]])
    x.amax(dim=1).numpy(), x.aminmax().max.item(), x.var_mean(dim=0)[1].numpy()
"""

from __future__ import annotations

from typing import Any, NamedTuple, Self

from picograd.frontend.dtype import int32, to_dtype
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.ops_math import MathOps
from picograd.frontend.ops_reduce import Axis
from picograd.frontend.ops_stats import StatsOps


class MinMax(NamedTuple):
    """aminmax's result: `min` and `max` (also unpacked as a pair)."""

    min: Any
    max: Any


def _dims(dim: Axis | tuple[()]) -> Axis:
    """torch's amax / amin / count_nonzero take () for every dim, as None."""
    return None if dim is None or (not isinstance(dim, int) and len(tuple(dim)) == 0) else dim


class StatsExtraOps(MathOps, StatsOps):
    __slots__ = ()

    def _extreme(self, op: str, dim: Axis | tuple[()], keepdim: bool) -> Self:
        """max / min over `dim` with torch's amax gradient: g * (x == result) / count of
        them (shared among ties; NaN everywhere a NaN was found, 0 / 0, unlike max())."""
        dims = _dims(dim)
        x = self
        with no_grad():
            value = getattr(x._detached(), "max" if op == "amax" else "min")(dims, keepdim)
        axes = x._axes(op, None, dims)
        kept = tuple(1 if i in axes else s for i, s in enumerate(x.shape))

        def rule(g: Self) -> tuple[Self]:
            hit = (x._detached() == value.reshape(kept)).cast(g.dtype)
            count = hit.sum(axes, keepdim=True)
            return (g.reshape(kept) * hit / count,)

        return value._with_gradient((x,), rule)

    def amax(self, dim: Axis | tuple[()] = (), keepdim: bool = False) -> Self:
        return self._extreme("amax", dim, keepdim)

    def amin(self, dim: Axis | tuple[()] = (), keepdim: bool = False) -> Self:
        return self._extreme("amin", dim, keepdim)

    def aminmax(self, *, dim: int | None = None, keepdim: bool = False) -> MinMax:
        if dim is None and keepdim and self.ndim:
            lo, hi = self.min(None, True), self.max(None, True)
            return MinMax(lo, hi)
        return MinMax(self.min(dim, keepdim), self.max(dim, keepdim))

    def _correction(self, op: str, unbiased: bool | None, correction: float | None) -> float:
        if unbiased is not None and correction is not None:
            raise shape_error(op, "give either unbiased or correction, not both")
        if correction is not None:
            return float(correction)
        return 0.0 if unbiased is False else 1.0

    def var_mean(self, dim: Axis = None, unbiased: bool | None = None, keepdim: bool = False,
                 *, correction: float | None = None) -> tuple[Self, Self]:
        """(var, mean) over `dim`, as torch.var_mean."""
        c = self._correction("var_mean", unbiased, correction)
        return self.var(dim, c, keepdim), self.mean(dim, keepdim)

    def std_mean(self, dim: Axis = None, unbiased: bool | None = None, keepdim: bool = False,
                 *, correction: float | None = None) -> tuple[Self, Self]:
        """(std, mean) over `dim`, as torch.std_mean."""
        c = self._correction("std_mean", unbiased, correction)
        return self.std(dim, c, keepdim), self.mean(dim, keepdim)

    def _as(self, dtype: object) -> Self:
        return self if dtype is None else self.cast(to_dtype(dtype))

    def sum(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None,
            dtype: object = None) -> Self:
        return super(StatsExtraOps, self._as(dtype)).sum(axis, keepdim, dim=dim)

    def prod(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None,
             dtype: object = None) -> Self:
        return super(StatsExtraOps, self._as(dtype)).prod(axis, keepdim, dim=dim)

    def mean(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None,
             dtype: object = None) -> Self:
        return super(StatsExtraOps, self._as(dtype)).mean(axis, keepdim, dim=dim)

    def nansum(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None,
               dtype: object = None) -> Self:
        """The sum with NaNs taken as 0; torch's gradient, g * ~isnan(x) (so an inf or NaN
        flowing back, nanmean's of an all-NaN row, gives NaN there too)."""
        x = self._as(dtype)
        if x.dtype.is_float:
            present = (~x.isnan()).cast(x.dtype)
            with no_grad():
                clean = x.isnan().where(0.0, x)
            x = clean._with_gradient((x,), lambda g: (g * present,))
        return x.sum(axis, keepdim, dim=dim)

    def nanmean(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None,
                dtype: object = None) -> Self:
        """The mean of the non-NaN elements (NaN where there are none, as 0 / 0)."""
        x = self._as(dtype)
        if not x.dtype.is_float:
            raise dtype_error("nanmean", f"needs a float tensor, got {x.dtype.name}")
        present = (~x.isnan()).cast(x.dtype)
        return x.nansum(axis, keepdim, dim=dim) / present.sum(axis, keepdim, dim=dim)

    def count_nonzero(self, dim: Axis | tuple[()] = None) -> Self:
        return (self._detached() != 0).cast(int32).sum(_dims(dim))
