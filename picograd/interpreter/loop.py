"""Reference semantics of `pg_loop` (stage 3).

A `pg_loop.kernel` runs its body once; `pg_loop.range` runs its body once per index, and
`pg_loop.reduce` combines what its body yields strictly in index order from the kind's
identity (`alu.reduce_identity` / `alu.reduce_combine`), like the accumulator loop that
`convert-loop-to-uop` makes of it. Each body run is one `run_ssacfg_region` call, so it
gets a fresh scope that sees the enclosing values.

Index values are Python ints wrapped to 64 bits. `pg_loop.index div/mod` are floor division
and floor modulo (non-negative for the positive divisors the lowering emits), unlike the
truncating `pg_uop.binary div/mod` on `index`: the two agree on non-negative operands.
Scalar arithmetic in the bodies is `pg_uop`'s ALU ops (`uop.ScalarFunctions`); loads and
stores share `uop.load` / `uop.store`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.utils.exceptions import InterpretationError

from picograd.dialects import pg_loop as pl
from picograd.dialects.pg import BinaryKind
from picograd.interpreter import alu, uop
from picograd.interpreter.sched import check_kernel_args, kernel_runner


def _floor_div(a: int, b: int) -> int:
    if b == 0:
        raise InterpretationError("pg_loop.index: division by zero")
    return alu.wrap_index(a // b)  # Python's // is floor division


def _floor_mod(a: int, b: int) -> int:
    if b == 0:
        raise InterpretationError("pg_loop.index: modulo by zero")
    return alu.wrap_index(a % b)  # Python's % has the sign of b: in [0, b) for b > 0


_INDEX: dict[BinaryKind, Callable[[int, int], int]] = {
    BinaryKind.ADD: lambda a, b: alu.wrap_index(a + b),
    BinaryKind.SUB: lambda a, b: alu.wrap_index(a - b),
    BinaryKind.MUL: lambda a, b: alu.wrap_index(a * b),
    BinaryKind.DIV: _floor_div,
    BinaryKind.MOD: _floor_mod,
    BinaryKind.MAX: max,
    BinaryKind.MIN: min,
}


@register_impls
class LoopFunctions(InterpreterFunctions):
    """Impls of every `pg_loop` op but the kernel (see `run_loop_kernel`)."""

    @impl(pl.RangeOp)
    def run_range(self, interp: Interpreter, op: pl.RangeOp, args: PythonValues) -> PythonValues:
        for i in range(op.start.data, op.end.data):
            interp.run_ssacfg_region(op.body, (i,), "pg_loop.range")
        return ()

    @impl(pl.ReduceOp)
    def run_reduce(self, interp: Interpreter, op: pl.ReduceOp, args: PythonValues
                   ) -> PythonValues:
        kind, t = op.kind.data, op.result.type
        acc = alu.reduce_identity(kind, t)
        for j in range(op.start.data, op.end.data):
            (value,) = interp.run_ssacfg_region(op.body, (j,), "pg_loop.reduce")
            acc = alu.reduce_combine(kind, acc, value, t)
        return (acc,)

    @impl_terminator(pl.YieldOp)
    def run_yield(self, interp: Interpreter, op: pl.YieldOp, args: PythonValues
                  ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl(pl.ConstOp)
    def run_const(self, interp: Interpreter, op: pl.ConstOp, args: PythonValues) -> PythonValues:
        return (alu.wrap_index(op.value.data),)

    @impl(pl.IndexOp)
    def run_index(self, interp: Interpreter, op: pl.IndexOp, args: PythonValues) -> PythonValues:
        return (_INDEX[op.kind.data](args[0], args[1]),)

    @impl(pl.CmpOp)
    def run_cmp(self, interp: Interpreter, op: pl.CmpOp, args: PythonValues) -> PythonValues:
        return (np.bool_(alu.compare(op.kind.data, args[0], args[1])),)

    @impl(pl.AndOp)
    def run_and(self, interp: Interpreter, op: pl.AndOp, args: PythonValues) -> PythonValues:
        return (np.bool_(args[0] and args[1]),)

    @impl(pl.LoadOp)
    def run_load(self, interp: Interpreter, op: pl.LoadOp, args: PythonValues) -> PythonValues:
        return (uop.load(op, args),)

    @impl(pl.StoreOp)
    def run_store(self, interp: Interpreter, op: pl.StoreOp, args: PythonValues) -> PythonValues:
        uop.store(op, args)
        return ()


@kernel_runner(pl.KernelOp)
def run_loop_kernel(interp: Interpreter, kernel: pl.KernelOp, buffers: PythonValues) -> None:
    check_kernel_args(kernel.sym_name.data, len(kernel.body.block.args), buffers)
    interp.run_ssacfg_region(kernel.body, buffers, kernel.sym_name.data)
