"""Matrix and vector products and diagonals (torch's names, signatures and shape rules),
composed from matmul, movement ops and slices, so autograd and fusion come for free.

    mm(m2) bmm(b2) mv(v) vdot(v) inner(o) outer(v) / ger(v) kron(o) cross(o, dim)
    addmm(m1, m2, beta=1, alpha=1) baddbmm(b1, b2, ...) addmv(m, v, ...) addr(v1, v2, ...)
    diagonal(offset, dim1, dim2) diag(diagonal) diag_embed(offset, dim1, dim2) trace()
    norm(p="fro", dim=None, keepdim=False)      (the vector and matrix norms: linalg.py)

The diagonal of an (m, n) matrix is a strided slice of its flattening (element (i, i + k)
is at i * (n + 1) + k); `diag_embed` builds the flattening the other way round (each value
followed by n zeros, shifted by the offset, cut to n * n). `add*` ops follow torch's beta
rule: with beta == 0 the added input is ignored (its NaN and inf do not propagate).

    a = pg.Tensor([[1.0, 2.0], [3.0, 4.0]])
    a.mm(a).trace().item(), a.diagonal().numpy(), a.outer(a[0]).shape
"""

from __future__ import annotations

from typing import Self

from picograd.frontend.base import TensorBase, fill_scalar, normalize_axis
from picograd.frontend.grad_mode import AutogradError, is_grad_enabled
from picograd.frontend.lazy import shape_error, user_location
from picograd.frontend.ops_division import DivisionOps
from picograd.frontend.ops_shape import ShapeOps


def _need_dims(op: str, t: TensorBase, ndim: int, what: str) -> None:
    if t.ndim != ndim:
        raise shape_error(op, f"{what} must be {ndim}-D, got shape {t.shape}")


class MatrixOps(DivisionOps, ShapeOps):
    __slots__ = ()

    # ── products ────────────────────────────────────────────────────────────

    def mm(self, mat2: TensorBase) -> Self:
        _need_dims("mm", self, 2, "self")
        _need_dims("mm", mat2, 2, "mat2")
        return self.matmul(mat2)

    def bmm(self, mat2: TensorBase) -> Self:
        _need_dims("bmm", self, 3, "self")
        _need_dims("bmm", mat2, 3, "mat2")
        if self.shape[0] != mat2.shape[0]:
            raise shape_error("bmm", f"batch sizes differ: {self.shape} and {mat2.shape}")
        return self.matmul(mat2)

    def mv(self, vec: TensorBase) -> Self:
        _need_dims("mv", self, 2, "self")
        _need_dims("mv", vec, 1, "vec")
        return self.matmul(vec)

    def vdot(self, other: TensorBase) -> Self:
        """torch's vdot: two 1-D tensors of one size (real: no conjugate). (`dot` stays
        numpy's, a matmul, as picograd has had it.)"""
        _need_dims("vdot", self, 1, "self")
        _need_dims("vdot", other, 1, "other")
        if self.shape != other.shape:
            raise shape_error("vdot", f"sizes differ: {self.shape} and {other.shape}")
        return self.matmul(other)

    def inner(self, other: TensorBase) -> Self:
        """Sum over the last dims: shape self.shape[:-1] + other.shape[:-1] (a product with
        a 0-d operand)."""
        if self.ndim == 0 or other.ndim == 0:
            return self * other  # type: ignore[operator]
        k = self.shape[-1]
        if other.shape[-1] != k:
            raise shape_error("inner", f"last dims differ: {self.shape} and {other.shape}")
        flat = self.reshape(-1, k).matmul(other.reshape(-1, k).transpose(0, 1))  # type: ignore[attr-defined]
        return flat.reshape(*self.shape[:-1], *other.shape[:-1])

    def outer(self, vec2: TensorBase) -> Self:
        _need_dims("outer", self, 1, "self")
        _need_dims("outer", vec2, 1, "vec2")
        return self.reshape(-1, 1) * vec2.reshape(1, -1)  # type: ignore[attr-defined]

    def ger(self, vec2: TensorBase) -> Self:
        return self.outer(vec2)

    def kron(self, other: TensorBase) -> Self:
        """The Kronecker product: block (i, j, ...) is self[i, j, ...] * other."""
        n = max(self.ndim, other.ndim)
        a = self.reshape((1,) * (n - self.ndim) + self.shape)
        b = other.reshape((1,) * (n - other.ndim) + other.shape)  # type: ignore[attr-defined]
        inter_a = tuple(d for s in a.shape for d in (s, 1))
        inter_b = tuple(d for s in b.shape for d in (1, s))
        out = a.reshape(inter_a) * b.reshape(inter_b)
        return out.reshape(tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))

    def cross(self, other: TensorBase, dim: int | None = None) -> Self:
        """The cross product of 3-vectors along `dim` (the first dim of size 3 when None,
        as torch.cross); the operands broadcast."""
        x, y = self._operands("cross", other)
        if dim is None:
            sizes = [i for i, s in enumerate(x.shape) if s == 3]
            if not sizes:
                raise shape_error("cross", f"no dim of size 3 in shape {x.shape}")
            dim = sizes[0]
        d = normalize_axis("cross", dim, x.ndim, x.shape)
        if x.shape[d] != 3:
            raise shape_error("cross", f"dim {dim} must have size 3, got shape {x.shape}")
        return x.roll(-1, d) * y.roll(-2, d) - x.roll(-2, d) * y.roll(-1, d)

    def _scaled_sum(self, op: str, product: Self, beta: float, alpha: float) -> Self:
        """beta * self + alpha * product, self broadcast to the product's shape; self is
        ignored where beta == 0 (torch)."""
        scaled = product if alpha == 1 else product * alpha
        if beta == 0:
            self._operands(op, scaled)  # still a broadcast (and device) check
            return scaled
        x, p = self._operands(op, scaled)
        if x.shape != p.shape:
            raise shape_error(op, f"input of shape {self.shape} does not broadcast to the "
                                  f"product's {product.shape}")
        return p + (x if beta == 1 else x * beta)

    def addmm(self, mat1: TensorBase, mat2: TensorBase, *, beta: float = 1,
              alpha: float = 1) -> Self:
        return self._scaled_sum("addmm", mat1.mm(mat2), beta, alpha)  # type: ignore[attr-defined]

    def baddbmm(self, batch1: TensorBase, batch2: TensorBase, *, beta: float = 1,
                alpha: float = 1) -> Self:
        return self._scaled_sum("baddbmm", batch1.bmm(batch2), beta, alpha)  # type: ignore[attr-defined]

    def addbmm(self, batch1: TensorBase, batch2: TensorBase, *, beta: float = 1,
               alpha: float = 1) -> Self:
        product = batch1.bmm(batch2).sum(0)  # type: ignore[attr-defined]
        return self._scaled_sum("addbmm", product, beta, alpha)

    def addmv(self, mat: TensorBase, vec: TensorBase, *, beta: float = 1,
              alpha: float = 1) -> Self:
        return self._scaled_sum("addmv", mat.mv(vec), beta, alpha)  # type: ignore[attr-defined]

    def addr(self, vec1: TensorBase, vec2: TensorBase, *, beta: float = 1,
             alpha: float = 1) -> Self:
        return self._scaled_sum("addr", vec1.outer(vec2), beta, alpha)  # type: ignore[attr-defined]

    # ── diagonals ───────────────────────────────────────────────────────────

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Self:
        """The diagonal of dims (dim1, dim2), as the last dim (torch's order): elements
        (i, i + offset) (or (i - offset, i) for a negative offset)."""
        if self.ndim < 2:
            raise shape_error("diagonal", f"needs at least 2 dims, got shape {self.shape}")
        d1 = normalize_axis("diagonal", dim1, self.ndim, self.shape)
        d2 = normalize_axis("diagonal", dim2, self.ndim, self.shape)
        if d1 == d2:
            raise shape_error("diagonal", f"dim1 and dim2 are the same dim ({dim1}, {dim2})")
        x = self.movedim((d1, d2), (-2, -1))
        m, n = x.shape[-2:]
        size = max(0, min(m, n - offset) if offset >= 0 else min(m + offset, n))
        lead = x.shape[:-2]
        flat = x.reshape(*lead, m * n)
        start = offset if offset >= 0 else -offset * n
        if size == 0:
            return flat._slice((0,) * flat.ndim, (1,) * flat.ndim, (*lead, 0))
        return flat._slice((0,) * len(lead) + (start,), (1,) * len(lead) + (n + 1,),
                           (*lead, size))

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Self:
        """A tensor with one more dim whose (dim1, dim2) diagonal `offset` holds the last
        dim of self, zeros elsewhere (the inverse of `diagonal`)."""
        if self.ndim == 0:
            raise shape_error("diag_embed", "needs at least 1 dim, got a 0-d tensor")
        out_ndim = self.ndim + 1
        d1 = normalize_axis("diag_embed", dim1, out_ndim, (*self.shape, 1))
        d2 = normalize_axis("diag_embed", dim2, out_ndim, (*self.shape, 1))
        if d1 == d2:
            raise shape_error("diag_embed", f"dim1 and dim2 are the same dim ({dim1}, {dim2})")
        size = self.shape[-1]
        n = size + abs(offset)
        lead = self.shape[:-1]
        k = len(lead)
        # each value followed by n zeros: value i lands at i * (n + 1) in the flattening
        spaced = self.unsqueeze(-1).pad(((0, 0),) * (k + 1) + ((0, n),))
        flat = spaced.reshape(*lead, size * (n + 1))
        shift = offset if offset >= 0 else -offset * n
        length = size * (n + 1) + shift
        if length < n * n:
            flat = flat.pad(((0, 0),) * k + ((shift, n * n - length),))
        else:
            flat = flat.pad(((0, 0),) * k + ((shift, 0),))
            flat = flat._slice((0,) * (k + 1), (1,) * (k + 1), (*lead, n * n))
        square = flat.reshape(*lead, n, n)
        return square.movedim((-2, -1), (d1, d2)) if (d1, d2) != (k, k + 1) else square

    def diag(self, diagonal: int = 0) -> Self:
        """A 1-D tensor's square matrix with it on diagonal `diagonal`; a 2-D tensor's
        diagonal `diagonal` as a 1-D tensor."""
        if self.ndim == 1:
            return self.diag_embed(diagonal)
        if self.ndim == 2:
            return self.diagonal(diagonal)
        raise shape_error("diag", f"needs a 1-D or 2-D tensor, got shape {self.shape}")

    def trace(self) -> Self:
        _need_dims("trace", self, 2, "self")
        return self.diagonal().sum()

    def fill_diagonal_(self, fill_value: float, wrap: bool = False) -> Self:
        """Fill the main diagonal in place (all dims of one size beyond 2-D; `wrap`: a tall
        matrix's diagonal restarts after every n + 1 rows, as torch)."""
        if self.ndim < 2:
            raise shape_error("fill_diagonal_", f"needs at least 2 dims, got {self.shape}")
        if self.ndim > 2 and len(set(self.shape)) != 1:
            raise shape_error("fill_diagonal_", f"all dims must be equal, got {self.shape}")
        idx = [self._arange(s).reshape(tuple(s if j == i else 1 for j in range(self.ndim)))
               for i, s in enumerate(self.shape)]
        if self.ndim == 2:
            m, n = self.shape
            row = idx[0]
            if wrap and m > n:
                row = row - (row // (n + 1)) * (n + 1)
            mask = row == idx[1]
            if not wrap and m > n:
                mask = mask & (idx[0] < n)
        else:
            mask = idx[0] == idx[1]
            for t in idx[2:]:
                mask = mask & (idx[0] == t)
        if is_grad_enabled() and self.requires_grad and self._ctx is None:
            raise AutogradError("fill_diagonal_: a leaf tensor that requires grad is being "
                                "used in an in-place operation\n  at " + user_location())
        old = self._from_node(self._node)  # (as setitem: the gradient flows off the diagonal)
        old._ctx, old.requires_grad = self._ctx, self.requires_grad
        fill = self._const(fill_scalar("fill_diagonal_", fill_value, self.dtype), self.shape,
                           self.dtype)
        result = mask.where(fill, old)
        self._take_node(result._node)
        if is_grad_enabled():
            self._ctx, self.requires_grad = result._ctx, result.requires_grad
        return self
