"""Reference semantics of `pg_sched` (stage 2) and the dispatch of launches at stages 2-4.

A buffer is a flat 1-D numpy array of the buffer's element dtype, shared by reference:
kernels write their outputs in place. `pg_sched.launch` looks its kernel symbol up in the
module and runs it with the runner registered for its op class, so `@main` runs unchanged
whatever stage its kernels have reached: `pg_sched.kernel` (here), `pg_loop.kernel`
(`loop.py`) or `pg_uop.kernel` (`uop.py`). The kernel ops are not xDSL callables (they do
not implement `CallableOpInterface`), hence this small registry instead of `impl_callable`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import InterpretationError

from picograd.dialects import pg_loop as pl
from picograd.dialects import pg_sched as ps
from picograd.dialects import pg_uop as pu
from picograd.dialects.dtypes import to_numpy_dtype
from picograd.dialects.pg import BufferType

# The kernel ops of stages 2-4, each with a runner (here, in loop.py and in uop.py).
KERNEL_OPS = (ps.KernelOp, pl.KernelOp, pu.KernelOp)

_Op = TypeVar("_Op", bound=Operation)
_Runner = Callable[[Interpreter, _Op, PythonValues], None]
_KERNEL_RUNNERS: dict[type[Operation], _Runner] = {}


def kernel_runner(op_type: type[_Op]) -> Callable[[_Runner[_Op]], _Runner[_Op]]:
    """Register `fn(interp, kernel, buffers)` as the way to run kernels of `op_type`; it
    writes the kernel's outputs into `buffers` in place."""

    def register(fn: _Runner[_Op]) -> _Runner[_Op]:
        _KERNEL_RUNNERS[op_type] = fn
        return fn

    return register


def run_kernel(interp: Interpreter, kernel: Operation, buffers: PythonValues) -> None:
    runner = _KERNEL_RUNNERS.get(type(kernel))
    if runner is None:
        raise InterpretationError(f"no interpreter for kernels of {kernel.name} (is its "
                                  "module of picograd.interpreter imported?)")
    runner(interp, kernel, buffers)


def new_buffer(t: BufferType) -> np.ndarray:
    return np.zeros(t.size.data, dtype=to_numpy_dtype(t.element_type))


@register_impls
class SchedFunctions(InterpreterFunctions):
    """Impls of every `pg_sched` op; `pg_sched.kernel` is a callable."""

    @impl(ps.AllocOp)
    def run_alloc(self, interp: Interpreter, op: ps.AllocOp, args: PythonValues) -> PythonValues:
        assert isinstance(op.result.type, BufferType)
        return (new_buffer(op.result.type),)

    @impl(ps.LaunchOp)
    def run_launch(self, interp: Interpreter, op: ps.LaunchOp, args: PythonValues
                   ) -> PythonValues:
        kernel = SymbolTable.lookup_symbol(op, op.kernel)
        if kernel is None:
            raise InterpretationError(f"pg_sched.launch: no kernel named @{op.kernel_name}")
        if not isinstance(kernel, KERNEL_OPS):
            raise InterpretationError(
                f"pg_sched.launch @{op.kernel_name}: a {kernel.name} cannot be interpreted "
                "(stage-5 kernels run on a device runtime, not in the interpreter)")
        run_kernel(interp, kernel, args)
        return ()

    @impl(ps.LoadOp)
    def run_load(self, interp: Interpreter, op: ps.LoadOp, args: PythonValues) -> PythonValues:
        # A copy, not a view: a later store to the same buffer must not change the tensor.
        return (args[0].reshape(op.result.type.get_shape()).copy(),)

    @impl(ps.StoreOp)
    def run_store(self, interp: Interpreter, op: ps.StoreOp, args: PythonValues) -> PythonValues:
        value, buffer = args
        buffer[...] = np.ravel(value)
        return ()


@kernel_runner(ps.KernelOp)
def run_sched_kernel(interp: Interpreter, op: ps.KernelOp, args: PythonValues) -> None:
    check_kernel_args(op.sym_name.data, len(op.body.block.args), args)
    # The body has no terminator: the interpreter runs it to its last op.
    interp.run_ssacfg_region(op.body, args, op.sym_name.data)


def check_kernel_args(name: str, want: int, args: PythonValues) -> None:
    if len(args) != want:
        raise InterpretationError(f"kernel @{name} takes {want} buffers, got {len(args)}")
