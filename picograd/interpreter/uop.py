"""Reference semantics of `pg_uop` (stage 4), and of the scalar ALU ops at stages 3 and 4.

A `pg_uop.kernel` is one flat block; it is executed by walking the block with an explicit
program counter: `pg_uop.range` opens a loop (or skips to after its `end` when empty), and
`pg_uop.end` advances the innermost loop and jumps back to the op after its `range` until
the loop is done. Values live in one interpreter scope per kernel run and are overwritten
on each iteration, so a value defined inside a loop stays readable after its `end` (CSE on
the flat block may legally make later ops use it).

`pg_uop.special` ids are run sequentially: the kernel body is executed once for every
combination of the launch's work-item ids, each id being a range over its `size`.
`pg_uop.barrier` is then a no-op, which is exact because work items share no memory other
than the global buffers.

Scalars are numpy scalars of exactly the IR element type (Python ints for `index`); the
ALU impls (`ScalarFunctions`) are shared with `pg_loop` bodies and defer to `alu`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from picograd.dialects import pg_uop as pu
from picograd.dialects.pg import BufferType, SpecialKind
from picograd.dialects.syntax import scalar_value
from picograd.interpreter import alu
from picograd.interpreter.sched import check_kernel_args, kernel_runner

# ── memory, shared with pg_loop ──────────────────────────────────────────────


def _checked_index(op: Operation, buffer: np.ndarray, index: int) -> int:
    # Checked explicitly: numpy would silently wrap a negative index.
    if not 0 <= index < buffer.shape[0]:
        raise InterpretationError(
            f"{op.name}: index {index} out of bounds of a buffer of {buffer.shape[0]} elements")
    return index


def load(op: Operation, args: PythonValues) -> Any:
    """`buffer[index]`, or, with a mask that does not hold, the op's `other` (not read)."""
    buffer, index, *mask = args
    if mask and not mask[0]:
        assert isinstance(op.operands[0].type, BufferType)
        return alu.scalar(scalar_value(op.other), op.operands[0].type.element_type)  # type: ignore[attr-defined]
    return buffer[_checked_index(op, buffer, index)]


def store(op: Operation, args: PythonValues) -> None:
    value, buffer, index = args
    buffer[_checked_index(op, buffer, index)] = value


@dataclass
class Register:
    """The run-time value of a `pg_uop.acc`: one mutable scalar."""

    value: Any


# ── op impls ─────────────────────────────────────────────────────────────────


@register_impls
class ScalarFunctions(InterpreterFunctions):
    """The `pg_uop` ALU ops, on numpy scalars (and Python ints for `index`)."""

    @impl(pu.ConstOp)
    def run_const(self, interp: Interpreter, op: pu.ConstOp, args: PythonValues) -> PythonValues:
        return (alu.scalar(op.scalar, op.result.type),)

    @impl(pu.UnaryOp)
    def run_unary(self, interp: Interpreter, op: pu.UnaryOp, args: PythonValues) -> PythonValues:
        return (alu.unary(op.kind.data, args[0], op.input.type),)

    @impl(pu.BinaryOp)
    def run_binary(self, interp: Interpreter, op: pu.BinaryOp, args: PythonValues
                   ) -> PythonValues:
        return (alu.binary(op.kind.data, args[0], args[1], op.lhs.type),)

    @impl(pu.CmpOp)
    def run_cmp(self, interp: Interpreter, op: pu.CmpOp, args: PythonValues) -> PythonValues:
        return (np.bool_(alu.compare(op.kind.data, args[0], args[1])),)

    @impl(pu.WhereOp)
    def run_where(self, interp: Interpreter, op: pu.WhereOp, args: PythonValues) -> PythonValues:
        return (alu.select(*args),)

    @impl(pu.CastOp)
    def run_cast(self, interp: Interpreter, op: pu.CastOp, args: PythonValues) -> PythonValues:
        return (alu.cast(args[0], op.input.type, op.result.type),)


@register_impls
class UopFunctions(InterpreterFunctions):
    """The non-ALU `pg_uop` ops that are plain ops (loops and ids are run by the kernel walk)."""

    @impl(pu.LoadOp)
    def run_load(self, interp: Interpreter, op: pu.LoadOp, args: PythonValues) -> PythonValues:
        return (load(op, args),)

    @impl(pu.StoreOp)
    def run_store(self, interp: Interpreter, op: pu.StoreOp, args: PythonValues) -> PythonValues:
        store(op, args)
        return ()

    @impl(pu.AccOp)
    def run_acc(self, interp: Interpreter, op: pu.AccOp, args: PythonValues) -> PythonValues:
        # A fresh register each time control reaches the op, set to its init value.
        return (Register(alu.scalar(scalar_value(op.init), op.element_type)),)

    @impl(pu.AccLoadOp)
    def run_acc_load(self, interp: Interpreter, op: pu.AccLoadOp, args: PythonValues
                     ) -> PythonValues:
        return (args[0].value,)

    @impl(pu.AccStoreOp)
    def run_acc_store(self, interp: Interpreter, op: pu.AccStoreOp, args: PythonValues
                      ) -> PythonValues:
        args[0].value = args[1]
        return ()

    @impl(pu.BarrierOp)
    def run_barrier(self, interp: Interpreter, op: pu.BarrierOp, args: PythonValues
                    ) -> PythonValues:
        return ()  # work items run one after the other: all earlier ones are done


# ── the kernel walk ──────────────────────────────────────────────────────────


def _launch_grid(kernel: pu.KernelOp) -> dict[tuple[SpecialKind, int], int]:
    """The size of each work-item id `(kind, dim)` the kernel reads."""
    grid: dict[tuple[SpecialKind, int], int] = {}
    for op in kernel.body.block.ops:
        if isinstance(op, pu.SpecialOp):
            key, size = (op.kind.data, op.dim.data), op.size.data
            if grid.setdefault(key, size) != size:
                raise InterpretationError(
                    f"@{kernel.sym_name.data}: pg_uop.special {key[0]} {key[1]} has two sizes, "
                    f"{grid[key]} and {size}")
    return grid


def _matching_ends(ops: list[Operation]) -> dict[int, int]:
    """The position of each `pg_uop.range`'s `end`, by the position of the range."""
    ends: dict[int, int] = {}
    position = {op: pc for pc, op in enumerate(ops)}
    for pc, op in enumerate(ops):
        if isinstance(op, pu.EndOp):
            ends[position[op.range.owner]] = pc  # type: ignore[index]
    return ends


def _walk(interp: Interpreter, ops: list[Operation], ends: dict[int, int],
          ids: dict[tuple[SpecialKind, int], int]) -> None:
    pc = 0
    loops: list[tuple[int, int]] = []  # (position of the open range, its current value)
    while pc < len(ops):
        op = ops[pc]
        if isinstance(op, pu.RangeOp):
            start, end = op.start.data, op.end.data
            if start == end:
                pc = ends[pc] + 1  # an empty loop: its body never runs
                continue
            loops.append((pc, start))
            interp.set_values([(op.result, start)])
        elif isinstance(op, pu.EndOp):
            begin, value = loops[-1]
            range_op = ops[begin]
            assert isinstance(range_op, pu.RangeOp)
            if value + 1 < range_op.end.data:
                loops[-1] = (begin, value + 1)
                interp.set_values([(range_op.result, value + 1)])
                pc = begin + 1
                continue
            loops.pop()
        elif isinstance(op, pu.SpecialOp):
            interp.set_values([(op.result, ids[(op.kind.data, op.dim.data)])])
        else:
            results = interp.run_op(op, interp.get_values(op.operands))
            interp.set_values(zip(op.results, results, strict=True))
        pc += 1


@kernel_runner(pu.KernelOp)
def run_uop_kernel(interp: Interpreter, kernel: pu.KernelOp, buffers: PythonValues) -> None:
    name = kernel.sym_name.data
    block = kernel.body.block
    check_kernel_args(name, len(block.args), buffers)
    ops = list(block.ops)
    ends = _matching_ends(ops)
    grid = _launch_grid(kernel)
    keys = list(grid)
    for point in itertools.product(*(range(grid[k]) for k in keys)):
        interp.push_scope(name)
        try:
            interp.set_values(zip(block.args, buffers, strict=True))
            _walk(interp, ops, ends, dict(zip(keys, point, strict=True)))
        finally:
            interp.pop_scope()

