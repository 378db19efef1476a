"""Reference semantics of `pg_uop` (stage 4), and of the scalar ALU ops at stages 3 and 4.

A `pg_uop.kernel` is one flat block; it is executed by walking the block with an explicit
program counter: `pg_uop.range` opens a loop (or skips to after its `end` when empty), and
`pg_uop.end` advances the innermost loop and jumps back to the op after its `range` until
the loop is done. Values live in one interpreter scope per kernel run and are overwritten
on each iteration, so a value defined inside a loop stays readable after its `end` (CSE on
the flat block may legally make later ops use it).

`pg_uop.special` ids are run sequentially: the kernel body is executed once for every
combination of the launch's work-item ids, each id being a range over its `size`.
`pg_uop.if` skips to after its `endif` when its condition is false.

A kernel with a `pg_uop.shared` buffer or a `pg_uop.barrier` runs work group by work group
(a group is one combination of the `group_id` values), and within a group in lockstep:
every work item (one combination of the `local_id` values, each with its own scope) runs
until it reaches a barrier, then the next one does, and the phase ends when all of them
wait at the same barrier, which they then pass together. Barriers may sit anywhere as long
as every work item of a group reaches the same barrier op in the same iteration of the same
enclosing loops, in the same order: at the top level, inside ifs whose condition is uniform
over the group (e.g. on `group_id` only) and inside loops with uniform trip counts. A group
whose items diverge (one reaches a barrier that another skips or finishes without) raises
`InterpretationError`, as CUDA and WGSL leave that undefined. Each `pg_uop.shared` op gets
one fresh buffer per work group, filled with garbage (NaN, the most negative integer, true)
so that reading an element before writing it shows. Such kernels may not read `global_id`
specials. Kernels without shared memory and barriers keep the plain sequential walk.

Scalars are numpy scalars of exactly the IR element type (Python ints for `index`); the
ALU impls (`ScalarFunctions`) are shared with `pg_loop` bodies and defer to `alu`. A
vector is a one-dimensional numpy array of its lane type; `unary` and `binary` apply to it
lane by lane, and `vload`/`vstore` check every lane's index.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import VectorType
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
from picograd.dialects.dtypes import lane_type, to_numpy_dtype
from picograd.dialects.flat_vectors import lanes_of
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
        return (alu.unary(op.kind.data, args[0], lane_type(op.input.type)),)

    @impl(pu.BinaryOp)
    def run_binary(self, interp: Interpreter, op: pu.BinaryOp, args: PythonValues
                   ) -> PythonValues:
        return (alu.binary(op.kind.data, args[0], args[1], lane_type(op.lhs.type)),)

    @impl(pu.FmaOp)
    def run_fma(self, interp: Interpreter, op: pu.FmaOp, args: PythonValues) -> PythonValues:
        return (alu.fused_multiply_add(*args),)

    @impl(pu.CmpOp)
    def run_cmp(self, interp: Interpreter, op: pu.CmpOp, args: PythonValues) -> PythonValues:
        return (np.bool_(alu.compare(op.kind.data, args[0], args[1])),)

    @impl(pu.WhereOp)
    def run_where(self, interp: Interpreter, op: pu.WhereOp, args: PythonValues) -> PythonValues:
        return (alu.select(*args),)

    @impl(pu.CastOp)
    def run_cast(self, interp: Interpreter, op: pu.CastOp, args: PythonValues) -> PythonValues:
        return (alu.cast(args[0], op.input.type, op.result.type),)

    @impl(pu.BitcastOp)
    def run_bitcast(self, interp: Interpreter, op: pu.BitcastOp, args: PythonValues
                    ) -> PythonValues:
        return (alu.bitcast(args[0], op.result.type),)


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
        init = alu.scalar(scalar_value(op.init), lane_type(op.element_type))
        if isinstance(op.element_type, VectorType):
            init = np.full(lanes_of(op.element_type), init)
        return (Register(init),)

    @impl(pu.AccLoadOp)
    def run_acc_load(self, interp: Interpreter, op: pu.AccLoadOp, args: PythonValues
                     ) -> PythonValues:
        return (args[0].value,)

    @impl(pu.AccStoreOp)
    def run_acc_store(self, interp: Interpreter, op: pu.AccStoreOp, args: PythonValues
                      ) -> PythonValues:
        args[0].value = args[1]
        return ()


@register_impls
class VectorFunctions(InterpreterFunctions):
    """The vector ops: a vector is a one-dimensional numpy array of its lane type."""

    @impl(pu.VLoadOp)
    def run_vload(self, interp: Interpreter, op: pu.VLoadOp, args: PythonValues
                  ) -> PythonValues:
        buffer, index = args
        lanes, step = lanes_of(op.result.type), op.stride
        last = _checked_index(op, buffer, index + step * (lanes - 1))
        return (buffer[_checked_index(op, buffer, index):last + 1:step].copy(),)

    @impl(pu.VStoreOp)
    def run_vstore(self, interp: Interpreter, op: pu.VStoreOp, args: PythonValues
                   ) -> PythonValues:
        value, buffer, index = args
        _checked_index(op, buffer, index + len(value) - 1)
        buffer[_checked_index(op, buffer, index):index + len(value)] = value
        return ()

    @impl(pu.BroadcastOp)
    def run_broadcast(self, interp: Interpreter, op: pu.BroadcastOp, args: PythonValues
                      ) -> PythonValues:
        return (np.full(lanes_of(op.result.type), args[0]),)

    @impl(pu.VReduceOp)
    def run_vreduce(self, interp: Interpreter, op: pu.VReduceOp, args: PythonValues
                    ) -> PythonValues:
        lanes, t = args[0], op.result.type
        total = lanes[0]
        for lane in lanes[1:]:  # in lane order: the rounding of the scalar sequence
            total = alu.binary(op.kind.data, total, lane, t)
        return (total,)


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
    """The position of each `pg_uop.range`'s `end` and each `pg_uop.if`'s `endif`, by the
    position of the range or if."""
    ends: dict[int, int] = {}
    open_ifs: list[int] = []
    position = {op: pc for pc, op in enumerate(ops)}
    for pc, op in enumerate(ops):
        if isinstance(op, pu.EndOp):
            ends[position[op.range.owner]] = pc  # type: ignore[index]
        elif isinstance(op, pu.IfOp):
            open_ifs.append(pc)
        elif isinstance(op, pu.EndIfOp):
            ends[open_ifs.pop()] = pc
    return ends


# Where a work item waits: the barrier's position and the values of the open loops.
_Stop = tuple[int, tuple[tuple[int, int], ...]]


def _walk(interp: Interpreter, ops: list[Operation], ends: dict[int, int],
          ids: dict[tuple[SpecialKind, int], int],
          shared: dict[Operation, np.ndarray] | None = None) -> Iterator[_Stop]:
    """Run one work item, in the interpreter's current scope; suspend at each barrier."""
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
        elif isinstance(op, pu.IfOp):
            if not interp.get_values((op.cond,))[0]:
                pc = ends[pc] + 1  # the guard fails: skip to after its endif
                continue
        elif isinstance(op, pu.EndIfOp):
            pass
        elif isinstance(op, pu.BarrierOp):
            yield pc, tuple(loops)
        elif isinstance(op, pu.SpecialOp | pu.SharedOp):
            interp.set_values([(op.result, _launch_value(op, ids, shared))])
        else:
            results = interp.run_op(op, interp.get_values(op.operands))
            interp.set_values(zip(op.results, results, strict=True))
        pc += 1


def _launch_value(op: pu.SpecialOp | pu.SharedOp, ids: dict[tuple[SpecialKind, int], int],
                  shared: dict[Operation, np.ndarray] | None) -> Any:
    """The value of a work-item id, or the work group's buffer of a `pg_uop.shared`."""
    if isinstance(op, pu.SpecialOp):
        return ids[(op.kind.data, op.dim.data)]
    assert shared is not None  # kernels with shared buffers run in lockstep
    if op not in shared:
        assert isinstance(op.result.type, BufferType)
        shared[op] = _garbage(op.result.type)
    return shared[op]


def _garbage(t: BufferType) -> np.ndarray:
    """A fresh shared buffer whose elements are obviously not written yet."""
    dtype = to_numpy_dtype(t.element_type)
    if dtype.kind == "f":
        fill: Any = np.nan
    elif dtype.kind == "b":
        fill = True
    else:
        fill = np.iinfo(dtype).min
    return np.full(t.size.data, fill, dtype=dtype)


def _points(grid: dict[tuple[SpecialKind, int], int], kinds: tuple[SpecialKind, ...]
            ) -> list[dict[tuple[SpecialKind, int], int]]:
    """Every combination of the ids of `kinds` in `grid`."""
    keys = [k for k in grid if k[0] in kinds]
    return [dict(zip(keys, point, strict=True))
            for point in itertools.product(*(range(grid[k]) for k in keys))]


def _describe(stop: _Stop | None) -> str:
    return "the end of the kernel" if stop is None else f"the barrier at op {stop[0]}" + (
        f" (loop values {[v for _, v in stop[1]]})" if stop[1] else "")


def _run_lockstep(interp: Interpreter, kernel: pu.KernelOp, buffers: PythonValues,
                  ops: list[Operation], ends: dict[int, int],
                  grid: dict[tuple[SpecialKind, int], int]) -> None:
    """Run each work group's items phase by phase between barriers (module docstring)."""
    name, block = kernel.sym_name.data, kernel.body.block
    if any(kind == SpecialKind.GLOBAL_ID for kind, _ in grid):
        raise InterpretationError(
            f"@{name}: a kernel with shared memory or barriers must use group_id and "
            "local_id specials, not global_id")
    home = interp._ctx  # each work item needs a scope of its own
    try:
        for group in _points(grid, (SpecialKind.GROUP_ID,)):
            shared: dict[Operation, np.ndarray] = {}
            items: list[tuple[Any, Iterator[_Stop]]] = []
            for local in _points(grid, (SpecialKind.LOCAL_ID,)):
                interp._ctx = home
                interp.push_scope(name)
                interp.set_values(zip(block.args, buffers, strict=True))
                walk = _walk(interp, ops, ends, {**group, **local}, shared)
                items.append((interp._ctx, walk))
            while True:
                stops: list[_Stop | None] = []
                for scope, walk in items:
                    interp._ctx = scope
                    stops.append(next(walk, None))
                if all(stop is None for stop in stops):
                    break
                if any(stop != stops[0] for stop in stops):
                    first = next(n for n, stop in enumerate(stops) if stop != stops[0])
                    raise InterpretationError(
                        f"@{name}: in work group {list(group.values())}, work item 0 reached "
                        f"{_describe(stops[0])} but work item {first} reached "
                        f"{_describe(stops[first])}; every work item of a group must reach "
                        "the same barriers (uniform control flow)")
    finally:
        interp._ctx = home


@kernel_runner(pu.KernelOp)
def run_uop_kernel(interp: Interpreter, kernel: pu.KernelOp, buffers: PythonValues) -> None:
    name = kernel.sym_name.data
    block = kernel.body.block
    check_kernel_args(name, len(block.args), buffers)
    ops = list(block.ops)
    ends = _matching_ends(ops)
    grid = _launch_grid(kernel)
    if any(isinstance(op, pu.SharedOp | pu.BarrierOp) for op in ops):
        _run_lockstep(interp, kernel, buffers, ops, ends, grid)
        return
    keys = list(grid)
    for point in itertools.product(*(range(grid[k]) for k in keys)):
        interp.push_scope(name)
        try:
            interp.set_values(zip(block.args, buffers, strict=True))
            for _ in _walk(interp, ops, ends, dict(zip(keys, point, strict=True))):
                pass  # no barrier without shared memory or barriers: never suspends
        finally:
            interp.pop_scope()

