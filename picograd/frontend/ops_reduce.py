"""Reductions (sum, max, min, mean) and matmul.

`axis` (or torch's `dim`) is an int, a tuple of ints or None (all axes); `keepdim` keeps the
reduced axes as size 1. pg_tensor.reduce always keeps them; without keepdim a reshape drops
them. Matmul is a broadcast multiply and a sum over the
contracted axis, which the scheduler fuses into one reduce kernel.

Result dtypes: `max`/`min` keep the input's. `sum` (and `prod`, ops_stats.py) of bool, int8,
uint8, int16 and int32 counts in int32 and of int64 in int64 (torch gives int64 for every
integer input: picograd's default int is int32). float16 sums accumulate in float32 and
round the result to float16, as torch does. `mean` needs a float tensor (a DTypeError on
integers and bools, as torch) and returns its dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from picograd.dialects.pg import ReduceKind
from picograd.errors import ShapeError
from picograd.frontend.autocast import lower_precision
from picograd.frontend.base import TensorBase, broadcast_shape, normalize_axis, prod
from picograd.frontend.dtype import (
    DEFAULT_INT,
    DType,
    float_compute_dtype,
    int64,
    promote,
)
from picograd.frontend.lazy import argument_type_error, dim_error, dtype_error, shape_error
from picograd.frontend.ops_elementwise import ElementwiseOps

Axis = int | Sequence[int] | None


def accumulator_dtype(dtype: DType) -> DType:
    """What a sum or product of `dtype` elements is computed in: int64 for int64 and
    uint16/32/64 (as torch), int32 for the other integers and bool, float64 for float64
    and float32 for the other floats."""
    if dtype.is_float:
        return float_compute_dtype(dtype)
    # uint16/32/64 count in int64 as torch (uint64 wraps into it)
    return int64 if dtype is int64 or (dtype.is_int and not dtype.is_signed
                                       and dtype.itemsize > 1) else DEFAULT_INT


class ReduceOps(ElementwiseOps):
    __slots__ = ()

    def _axes(self, op: str, axis: Axis, dim: Axis) -> tuple[int, ...]:
        if axis is not None and dim is not None:
            raise shape_error(op, "give either axis= or dim=, not both")
        axis = dim if axis is None else axis
        if axis is None:
            return tuple(range(self.ndim))
        raw = (axis,) if isinstance(axis, int) else tuple(axis)
        # as torch, a 0-d tensor has one dim to name (0 or -1), which reduces nothing
        axes = tuple(sorted({normalize_axis(op, a, max(self.ndim, 1), self.shape)
                             for a in raw}))
        if len(axes) != len(raw):
            raise shape_error(op, f"repeated axis in {raw} for shape {self.shape}")
        return axes if self.ndim else ()

    def _reduce(self, kind: ReduceKind, axes: tuple[int, ...], keepdim: bool) -> Self:
        kept = tuple(1 if i in axes else d for i, d in enumerate(self.shape))
        x = self if not axes else self._make("reduce", (self,), (kind, axes), kept)
        if keepdim:
            return x
        return x.reshape(tuple(d for i, d in enumerate(self.shape) if i not in axes))

    def _accumulated(self, kind: ReduceKind, axes: tuple[int, ...], keepdim: bool) -> Self:
        """A SUM or PROD reduce in `accumulator_dtype`, a narrow float rounded back at the end."""
        acc = accumulator_dtype(self.dtype)
        x = self.cast(acc)
        out = x._float_sum(axes, keepdim) if kind == ReduceKind.SUM else x._reduce(kind, axes,
                                                                                  keepdim)
        return out.cast(self.dtype) if self.dtype.is_float and out.dtype is not self.dtype else out

    def _float_sum(self, axes: tuple[int, ...], keepdim: bool) -> Self:
        """A SUM reduce; of a 0-d float tensor over a size-1 axis, as torch's sum starts from
        0.0 too (-0.0 sums to +0.0)."""
        if not axes and self.ndim == 0 and self.dtype.is_float:
            return self.reshape(1)._reduce(ReduceKind.SUM, (0,), False)
        return self._reduce(ReduceKind.SUM, axes, keepdim)

    def sum(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None) -> Self:
        return self._accumulated(ReduceKind.SUM, self._axes("sum", axis, dim), keepdim)

    def max(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None) -> Self:
        axes = self._axes("max", axis, dim)
        if any(self.shape[a] == 0 for a in axes):
            raise dim_error("max", f"reducing an empty axis of shape {self.shape} has no "
                                     "identity")
        return self._reduce(ReduceKind.MAX, axes, keepdim)

    def min(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None) -> Self:
        axes = self._axes("min", axis, dim)
        if any(self.shape[a] == 0 for a in axes):
            raise dim_error("min", f"reducing an empty axis of shape {self.shape} has no "
                                     "identity")
        return self._reduce(ReduceKind.MIN, axes, keepdim)

    def mean(self, axis: Axis = None, keepdim: bool = False, *, dim: Axis = None) -> Self:
        """sum / count, in the tensor's float dtype (float16 accumulates in float32)."""
        if not self.dtype.is_float:
            raise dtype_error("mean", f"needs a float tensor, got {self.dtype.name}; cast "
                                      "it first, e.g. .float()")
        axes = self._axes("mean", axis, dim)
        count = prod(self.shape[a] for a in axes)
        total = self.cast(float_compute_dtype(self.dtype))._float_sum(axes, keepdim) / count
        return total.cast(self.dtype)

    # ── matmul ──────────────────────────────────────────────────────────────

    def matmul(self, other: TensorBase) -> Self:
        """numpy's matmul: 1-D operands are promoted to a matrix and the added dim removed
        again; leading (batch) dims broadcast."""
        if not isinstance(other, TensorBase):
            raise argument_type_error("matmul", f"expected a Tensor, got {type(other).__name__}")
        self, other = lower_precision("matmul", self, other)  # inside pg.autocast
        self._check_device("matmul", other)
        dt = promote(self.dtype, other.dtype)
        dt = DEFAULT_INT if dt.is_bool else dt  # bools are multiplied and summed as int32
        # float16 / bfloat16 multiply and add in float32, rounded once at the end (torch)
        wide = float_compute_dtype(dt) if dt.is_float else dt
        a, b = self.cast(wide), other.cast(wide)  # type: ignore[attr-defined]
        if a.ndim == 0 or b.ndim == 0:
            raise shape_error("matmul", f"needs at least 1-D operands, got shapes {self.shape} "
                                        f"and {other.shape}")
        x = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
        y = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
        n, k = x.shape[-2:]
        k2, m = y.shape[-2:]
        if k != k2:
            raise shape_error("matmul", f"shapes {self.shape} and {other.shape}: contracted "
                                        f"dims differ ({k} != {k2})")
        try:
            batch = broadcast_shape("matmul", x.shape[:-2], y.shape[:-2])
        except ShapeError:
            raise shape_error("matmul", f"shapes {self.shape} and {other.shape}: batch dims "
                                        "cannot be broadcast together") from None
        # (..., n, 1, k) * (..., 1, m, k) summed over k: one fused multiply-reduce.
        xe = x.reshape(*x.shape[:-1], 1, k).expand(*batch, n, m, k)
        ye = y.transpose(-1, -2).reshape(*y.shape[:-2], 1, m, k).expand(*batch, n, m, k)
        out = (xe * ye).sum(axis=-1)
        if out.dtype is not dt:  # int8/uint8/int16 sum in int32: wrap back; f16 rounds
            out = out.cast(dt)
        shape = batch + ((n,) if self.ndim > 1 else ()) + ((m,) if other.ndim > 1 else ())
        return out.reshape(shape)

    def __matmul__(self, other: TensorBase) -> Self:
        return self.matmul(other)

    def dot(self, other: TensorBase) -> Self:
        return self.matmul(other)
