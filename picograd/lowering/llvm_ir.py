"""Print the `llvm.func` kernels of a stage-5 module as LLVM IR text.

    module_to_llvm_ir(module) -> str

Only `llvm.func` (and `llvm.mlir.global`) ops are printed: `func.func @main` (the schedule,
executed by the runtime) and anything else is skipped. The translation is xDSL's
`xdsl.backend.llvm.convert.convert_module` (llvmlite IR builder) on a temporary module
holding clones of those ops; the triple is the host's, the data layout is left to the
runtime's target machine.
"""

from __future__ import annotations

from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp


def module_to_llvm_ir(module: ModuleOp) -> str:
    """LLVM IR text of every `llvm.func` / `llvm.mlir.global` at the top level of `module`."""
    kept = [op.clone() for op in module.ops if isinstance(op, llvm.FuncOp | llvm.GlobalOp)]
    return str(convert_module(ModuleOp(kept), fallback_target_triple=None))
