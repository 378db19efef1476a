"""Reference semantics of `pg_tensor` (stage 1, and the bodies of `pg_sched` kernels).

A tensor value is a numpy array of the tensor type's shape and exactly its element dtype.
Elementwise ops follow `picograd.interpreter.alu` (C semantics); movement ops are numpy
views (`reshape`, `transpose`, `broadcast_to`, ...), which is safe because no op mutates a
tensor value. `reduce` combines strictly left to right from the kind's identity, over the
reduced axes in row-major order, like the loops later stages lower it to.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)

from picograd.dialects import pg_tensor as pt
from picograd.dialects.dtypes import to_numpy_dtype
from picograd.interpreter import alu


def _dtype(op: Any) -> np.dtype:
    return to_numpy_dtype(pt.dtype_of(op.results[0]))


@register_impls
class TensorFunctions(InterpreterFunctions):
    """Impls of every `pg_tensor` op over numpy arrays."""

    @impl(pt.ConstOp)
    def run_const(self, interp: Interpreter, op: pt.ConstOp, args: PythonValues) -> PythonValues:
        value = alu.scalar(op.scalar, pt.dtype_of(op.result))
        return (np.full(pt.shape_of(op.result), value, dtype=_dtype(op)),)

    @impl(pt.IotaOp)
    def run_iota(self, interp: Interpreter, op: pt.IotaOp, args: PythonValues) -> PythonValues:
        shape, axis = pt.shape_of(op.result), op.axis_index
        along = np.arange(shape[axis], dtype=_dtype(op))
        view = along.reshape([n if d == axis else 1 for d, n in enumerate(shape)])
        return (np.broadcast_to(view, shape),)

    # ── elementwise ──────────────────────────────────────────────────────────

    @impl(pt.UnaryOp)
    def run_unary(self, interp: Interpreter, op: pt.UnaryOp, args: PythonValues) -> PythonValues:
        return (np.asarray(alu.unary(op.kind.data, args[0], pt.dtype_of(op.input))),)

    @impl(pt.BinaryOp)
    def run_binary(self, interp: Interpreter, op: pt.BinaryOp, args: PythonValues
                   ) -> PythonValues:
        return (np.asarray(alu.binary(op.kind.data, args[0], args[1], pt.dtype_of(op.lhs))),)

    @impl(pt.CmpOp)
    def run_cmp(self, interp: Interpreter, op: pt.CmpOp, args: PythonValues) -> PythonValues:
        return (np.asarray(alu.compare(op.kind.data, args[0], args[1])),)

    @impl(pt.WhereOp)
    def run_where(self, interp: Interpreter, op: pt.WhereOp, args: PythonValues) -> PythonValues:
        return (np.asarray(alu.select(*args)),)

    @impl(pt.CastOp)
    def run_cast(self, interp: Interpreter, op: pt.CastOp, args: PythonValues) -> PythonValues:
        return (np.asarray(alu.cast(args[0], pt.dtype_of(op.input), pt.dtype_of(op.result))),)

    @impl(pt.BitcastOp)
    def run_bitcast(self, interp: Interpreter, op: pt.BitcastOp, args: PythonValues
                    ) -> PythonValues:
        return (alu.bitcast(np.asarray(args[0]), pt.dtype_of(op.result)),)

    # ── gather ───────────────────────────────────────────────────────────────

    @impl(pt.GatherOp)
    def run_gather(self, interp: Interpreter, op: pt.GatherOp, args: PythonValues
                   ) -> PythonValues:
        table, index = np.asarray(args[0]), np.asarray(args[1]).astype(np.int64)
        axis = op.axis_index
        inside = (index >= 0) & (index < table.shape[axis])
        picked = np.take_along_axis(table, np.where(inside, index, 0), axis) \
            if table.shape[axis] else np.zeros(index.shape, table.dtype)
        return (np.where(inside, picked, np.zeros((), table.dtype)),)

    @impl(pt.ScatterAddOp)
    def run_scatter_add(self, interp: Interpreter, op: pt.ScatterAddOp, args: PythonValues
                        ) -> PythonValues:
        base, index = np.asarray(args[0]), np.asarray(args[1]).astype(np.int64)
        src, axis = np.asarray(args[2]), op.axis_index
        out = base.copy()
        # np.add.at adds one element at a time in row-major order of the index (so along the
        # axis in order), in the dtype's own arithmetic (integers wrap)
        inside = (index >= 0) & (index < base.shape[axis])
        where = list(np.nonzero(inside))
        where[axis] = index[inside]
        with np.errstate(all="ignore"):
            np.add.at(out, tuple(where), src[inside])
        return (out,)

    # ── attention ────────────────────────────────────────────────────────────

    @impl(pt.AttentionOp)
    def run_attention(self, interp: Interpreter, op: pt.AttentionOp, args: PythonValues
                      ) -> PythonValues:
        q, k, v, bias = (np.asarray(a) for a in args)
        t = q.dtype
        with np.errstate(all="ignore"):
            # sums in numpy's order (the kernel's loops agree to rounding)
            scores = np.matmul(q, np.swapaxes(k, -1, -2)) * t.type(op.scale_value) + bias
            peak = scores.max(axis=-1, keepdims=True) if scores.shape[-1] else \
                np.full((*scores.shape[:-1], 1), -np.inf, t)
            e = np.where(scores == -np.inf, t.type(0), np.exp(scores - peak))
            total = e.sum(axis=-1, keepdims=True, dtype=t)
            out = np.matmul(e, v) / np.where(total == 0, t.type(1), total)
        return (out.astype(t),)

    # ── reduce ───────────────────────────────────────────────────────────────

    @impl(pt.ReduceOp)
    def run_reduce(self, interp: Interpreter, op: pt.ReduceOp, args: PythonValues
                   ) -> PythonValues:
        x: np.ndarray = args[0]
        axes = op.axis_list
        kept = x.ndim - len(axes)
        # Reduced axes last (in their order), flattened into one row-major axis.
        moved = np.moveaxis(x, axes, tuple(range(kept, x.ndim)))
        flat = moved.reshape((*moved.shape[:kept], -1))
        reduced = alu.reduce_last_axis(op.kind.data, flat, pt.dtype_of(op.input))
        return (reduced.reshape(pt.shape_of(op.result)),)

    # ── movement ─────────────────────────────────────────────────────────────

    @impl(pt.ReshapeOp)
    def run_reshape(self, interp: Interpreter, op: pt.ReshapeOp, args: PythonValues
                    ) -> PythonValues:
        return (args[0].reshape(pt.shape_of(op.result)),)

    @impl(pt.PermuteOp)
    def run_permute(self, interp: Interpreter, op: pt.PermuteOp, args: PythonValues
                    ) -> PythonValues:
        return (np.transpose(args[0], op.order),)

    @impl(pt.ExpandOp)
    def run_expand(self, interp: Interpreter, op: pt.ExpandOp, args: PythonValues
                   ) -> PythonValues:
        return (np.broadcast_to(args[0], pt.shape_of(op.result)),)

    @impl(pt.PadOp)
    def run_pad(self, interp: Interpreter, op: pt.PadOp, args: PythonValues) -> PythonValues:
        value = alu.scalar(op.scalar, pt.dtype_of(op.input))
        return (np.pad(args[0], op.pads, mode="constant", constant_values=value),)

    @impl(pt.SliceOp)
    def run_slice(self, interp: Interpreter, op: pt.SliceOp, args: PythonValues) -> PythonValues:
        # The result type fixes the element count of each dimension.
        index = tuple(
            slice(start, start + (size - 1) * step + 1, step) if size > 0 else slice(0, 0)
            for start, step, size in zip(op.starts, op.steps, pt.shape_of(op.result),
                                         strict=True)
        )
        return (args[0][index],)

    @impl(pt.ContiguousOp)
    def run_contiguous(self, interp: Interpreter, op: pt.ContiguousOp, args: PythonValues
                       ) -> PythonValues:
        return (np.ascontiguousarray(args[0]),)

    @impl(pt.FlipOp)
    def run_flip(self, interp: Interpreter, op: pt.FlipOp, args: PythonValues) -> PythonValues:
        return (np.flip(args[0], op.axis_list),)
