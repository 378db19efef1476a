"""Vector and matrix norms (torch.linalg's semantics); `picograd.linalg` (linalg.py) is the
functional face of these methods.

    t.norm(p="fro", dim=None, keepdim=False)      torch's Tensor.norm: p a number or "fro"
    t._vector_norm(ord, dim, keepdim)            linalg.vector_norm: sum(|x|^ord)^(1/ord),
                                                 ord inf / -inf the max / min of |x|, ord 0
                                                 the count of nonzeros
    t._matrix_norm(ord, dim, keepdim)            linalg.matrix_norm: "fro", 1, -1, inf, -inf
                                                 ("nuc", 2 and -2 need singular values:
                                                 a ShapeError says so)

The p-norms give torch's gradient formula (`_with_gradient`): x |x|^(p-2) / norm^(p-1),
0 where the norm is 0 (so the 2-norm of a zero vector has gradient 0, not NaN) and at a zero
element, sgn(x) for p = 1; the inf-norms share the gradient among the elements that reach
the extreme (amax's).

    v = pg.Tensor([3.0, -4.0])
    v.norm().item(), v.norm(1).item(), pg.linalg.vector_norm(v, math.inf).item()
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Self

from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.ops_reduce import Axis
from picograd.frontend.ops_stats_extra import StatsExtraOps

Ord = float | int | str | None


class NormOps(StatsExtraOps):
    __slots__ = ()

    def _vector_norm(self, ord: float | int = 2, dim: Axis = None, keepdim: bool = False
                     ) -> Self:
        if not self.dtype.is_float:
            raise dtype_error("vector_norm", f"needs a float tensor, got {self.dtype.name}")
        if isinstance(ord, str | bool):
            raise shape_error("vector_norm", f"ord must be a number, got {ord!r}")
        p = float(ord)
        a = self.abs()
        if p == math.inf:
            return a.amax(() if dim is None else dim, keepdim)
        if p == -math.inf:
            return a.amin(() if dim is None else dim, keepdim)
        if p == 0:
            count = (self._detached() != 0).cast(self.dtype).sum(dim, keepdim)
            return count._with_gradient((self,), lambda g: (
                self._const(0.0, self.shape, self.dtype),))  # torch's gradient: 0
        x = self
        with no_grad():
            ax = x._detached().abs()
            if p == 2:
                value = (ax * ax).sum(dim, keepdim).sqrt()
            elif p == 1:
                value = ax.sum(dim, keepdim)
            else:
                value = ax.pow(p).sum(dim, keepdim).pow(1.0 / p)
        axes = self._axes("vector_norm", None, dim)
        kept = tuple(1 if i in axes else s for i, s in enumerate(self.shape))

        def rule(g: Self) -> tuple[Self]:
            g = g.reshape(kept)
            n = value.reshape(kept)
            if p == 1:
                return (g * x.sign(),)
            if p == 2:
                return ((n == 0).where(0.0, x * g / n),)
            scaled = x * x.abs().pow(p - 2.0) * g / n.pow(p - 1.0)
            # a zero element's share is 0, as torch's (for p < 2, 0 * inf would be NaN)
            return (((n == 0) | (x == 0)).where(0.0, scaled),)

        return value._with_gradient((x,), rule)

    def _matrix_norm(self, ord: Ord = "fro", dim: Sequence[int] = (-2, -1),
                     keepdim: bool = False) -> Self:
        if self.ndim < 2:
            raise shape_error("matrix_norm", f"needs at least 2 dims, got shape {self.shape}")
        if len(dim) != 2:
            raise shape_error("matrix_norm", f"dim must be a pair of dims, got {dim}")
        d0, d1 = (self._axes("matrix_norm", None, d)[0] for d in dim)
        if d0 == d1:
            raise shape_error("matrix_norm", f"dims must differ, got {dim}")
        if ord == "fro":
            return self._vector_norm(2, (d0, d1), keepdim)
        if ord in ("nuc", 2, -2):
            raise shape_error("matrix_norm", f"ord {ord!r} needs singular values, which "
                                             "picograd does not compute")
        if ord not in (1, -1, math.inf, -math.inf):
            raise shape_error("matrix_norm", f"ord must be 'fro', 'nuc', 1, -1, 2, -2, inf "
                                             f"or -inf, got {ord!r}")
        assert isinstance(ord, int | float)
        # 1 / -1: the max / min over columns of the column sums (sum over rows, d0); inf /
        # -inf the same over rows
        summed, over = (d0, d1) if abs(ord) == 1 else (d1, d0)
        sums = self.abs().sum(summed, keepdim=True)
        out = sums.amax(over, keepdim=True) if ord > 0 else sums.amin(over, keepdim=True)
        return out if keepdim else out.reshape(tuple(
            s for i, s in enumerate(self.shape) if i not in (d0, d1)))

    def norm(self, p: Ord = "fro", dim: Axis = None, keepdim: bool = False, *,
             dtype: object = None) -> Self:
        """torch's Tensor.norm: the 2-norm for "fro" (over `dim`, or every element), a
        vector p-norm for a number p (p=None is 2)."""
        x = self if dtype is None else self.cast(dtype)
        if p is None or p == "fro":
            return x._vector_norm(2, dim, keepdim)
        if p == "nuc":
            return x._matrix_norm("nuc")
        if isinstance(p, str):
            raise shape_error("norm", f"p must be a number, 'fro' or 'nuc', got {p!r}")
        return x._vector_norm(p, dim, keepdim)
