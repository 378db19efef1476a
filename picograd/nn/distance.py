"""Distances between vectors, as torch's, built on `Tensor.norm` (so the p-norms carry
torch's gradient: 0 where a distance is 0, not NaN):

    pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False)
        ||x1 - x2 + eps||_p over the last dim of the broadcast pair: (N, D), (D,) or ()
        inputs; p may be any number, inf, -inf or 0 (the count of nonzero differences)
    pdist(input, p=2)
        the p-norm distance of every pair of rows i < j of an (N, M) input, in torch's
        order (row-major upper triangle): shape (N * (N - 1) / 2,)
    cosine_similarity(x1, x2, dim=1, eps=1e-8)
    PairwiseDistance(p, eps, keepdim), CosineSimilarity(dim, eps)      the layers

    d = pdist(pg.randn(5, 3))                        # (10,)
"""

from __future__ import annotations

import numpy as np

from picograd.frontend.lazy import argument_type_error, dtype_error, shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module


def _tensor(op: str, name: str, x: object) -> Tensor:
    if not isinstance(x, Tensor):
        raise argument_type_error(op, f"{name} must be a Tensor, got {type(x).__name__}")
    return x


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dim of their broadcast shape (torch adds
    eps to the difference, so equal vectors are eps * D**(1/p) apart, not 0). Integer
    inputs give float32, as torch's."""
    _tensor("pairwise_distance", "x1", x1)
    _tensor("pairwise_distance", "x2", x2)
    return (x1 - x2 + eps).norm(p, -1, keepdim)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 * x2) / (max(|x1|, eps) * max(|x2|, eps)) along `dim` (broadcasting)."""
    n1 = (x1 * x1).sum(dim, keepdim=True).sqrt().maximum(eps)
    n2 = (x2 * x2).sum(dim, keepdim=True).sqrt().maximum(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance between rows i < j of an (N, M) float input, pairs in torch's
    order (0, 1), (0, 2), ..., (N - 2, N - 1). Fewer than two rows give an empty result."""
    op = "pdist"
    _tensor(op, "input", input)
    if input.ndim != 2:
        raise shape_error(op, f"only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_float:
        raise dtype_error(op, f"only supports floating-point dtypes, got {input.dtype.name}")
    if p < 0:
        raise shape_error(op, f"only supports non-negative p values, got {p}")
    first, second = np.triu_indices(input.shape[0], 1)
    rows_i = input.index_select(0, Tensor(first.astype(np.int32), device=input.device))
    rows_j = input.index_select(0, Tensor(second.astype(np.int32), device=input.device))
    return (rows_i - rows_j).norm(p, 1)


class PairwiseDistance(Module):
    """`pairwise_distance(x1, x2, p, eps, keepdim)`; torch keeps p as the attribute
    `norm`."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """`cosine_similarity(x1, x2, dim, eps)`: the cosine of the angle between x1 and x2
    along `dim` (broadcasting)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)
