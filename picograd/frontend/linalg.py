"""`picograd.linalg`: torch.linalg's norms (the computations are Tensor methods, ops_norm.py).

    pg.linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None)
    pg.linalg.matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None)
    pg.linalg.norm(A, ord=None, dim=None, keepdim=False, *, dtype=None)

`norm` is torch's dispatcher: ord=None is the 2-norm of the flattened input (or the
Frobenius norm of a matrix dim pair); a number with a 1-D input or one `dim` is a vector
norm, with a 2-D input or two dims a matrix norm; a string is a matrix norm.

    import math, picograd as pg
    pg.linalg.norm(pg.Tensor([[1.0, -2.0], [3.0, 4.0]]), math.inf).item()   # 7.0
"""

from __future__ import annotations

from collections.abc import Sequence

from picograd.frontend.lazy import shape_error
from picograd.frontend.ops_norm import Ord
from picograd.frontend.ops_reduce import Axis
from picograd.frontend.tensor import Tensor


def _cast(x: Tensor, dtype: object) -> Tensor:
    return x if dtype is None else x.cast(dtype)


def vector_norm(x: Tensor, ord: float | int = 2, dim: Axis = None, keepdim: bool = False,
                *, dtype: object = None) -> Tensor:
    return _cast(x, dtype)._vector_norm(ord, dim, keepdim)


def matrix_norm(A: Tensor, ord: Ord = "fro", dim: Sequence[int] = (-2, -1),
                keepdim: bool = False, *, dtype: object = None) -> Tensor:
    return _cast(A, dtype)._matrix_norm(ord, tuple(dim), keepdim)


def norm(A: Tensor, ord: Ord = None, dim: Axis = None, keepdim: bool = False,
         *, dtype: object = None) -> Tensor:
    x = _cast(A, dtype)
    dims = None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if ord is None:
        if dims is not None and len(dims) == 2:
            return x._matrix_norm("fro", dims, keepdim)
        return x._vector_norm(2, dims, keepdim)
    if dims is None:
        if x.ndim == 1:
            if isinstance(ord, str):
                return _refuse(ord)
            return x._vector_norm(ord, None, keepdim)
        if x.ndim == 2:
            return x._matrix_norm(ord, (-2, -1), keepdim)
        raise shape_error("linalg.norm", f"with ord {ord!r}, the input must be 1-D or 2-D "
                                         f"unless dim is given, got shape {x.shape}")
    if len(dims) == 1:
        if isinstance(ord, str):
            return _refuse(ord)
        return x._vector_norm(ord, dims, keepdim)
    if len(dims) == 2:
        return x._matrix_norm(ord, dims, keepdim)
    raise shape_error("linalg.norm", f"dim must be one or two dims, got {dim}")


def _refuse(ord: str) -> Tensor:
    raise shape_error("linalg.norm", f"ord {ord!r} is a matrix norm: it needs a 2-D input "
                                     "or two dims")


__all__ = ["matrix_norm", "norm", "vector_norm"]
