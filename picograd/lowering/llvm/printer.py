"""Print the `llvm.func` kernels of a stage-5 module as LLVM IR text.

    module_to_llvm_ir(module) -> str

Only `llvm.func` (and `llvm.mlir.global`) ops are printed: `func.func @main` (the schedule,
executed by the runtime) and anything else is skipped. The translation is xDSL's
`xdsl.backend.llvm.convert.convert_module` (llvmlite IR builder) on a temporary module
holding clones of those ops; the triple is the host's, the data layout is left to the
runtime's target machine. Calls of vector max/min helpers get their bodies here
(`vector_select.py`).

A kernel that may run in chunks (a `pg.outer` attribute, see
`picograd/lowering/outer_range.py`) also exports `@{name}_pg_outer = constant [2 x i64]
[trip, work]`, which `picograd/runtimes/cpu_llvm.py` reads when it loads the kernel.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from picograd.dialects.abi import OUTER_ATTR, WORK_ATTR, outer_symbol
from picograd.lowering.llvm.vector_select import define_vector_selects


def module_to_llvm_ir(module: ModuleOp) -> str:
    """LLVM IR text of every `llvm.func` / `llvm.mlir.global` at the top level of `module`."""
    kept = [op.clone() for op in module.ops if isinstance(op, llvm.FuncOp | llvm.GlobalOp)]
    ir_module = convert_module(ModuleOp(kept), fallback_target_triple=None)
    define_vector_selects(ir_module)
    for op in kept:
        trip, work = op.attributes.get(OUTER_ATTR), op.attributes.get(WORK_ATTR)
        if isinstance(op, llvm.FuncOp) and isinstance(trip, IntegerAttr) and isinstance(
                work, IntegerAttr):
            _export_outer(ir_module, op.sym_name.data, trip.value.data, work.value.data)
    return str(ir_module)


def _export_outer(ir_module: ir.Module, kernel: str, trip: int, work: int) -> None:
    array = ir.ArrayType(ir.IntType(64), 2)
    symbol = ir.GlobalVariable(ir_module, array, outer_symbol(kernel))
    symbol.global_constant = True
    # llvmlite's stubs type `initializer` as None
    symbol.initializer = ir.Constant(array, [trip, work])  # pyright: ignore
