"""`opt-tool -t` output formats for a stage-5 module.

    -t llvm-ir   the `llvm.func` kernels as LLVM IR text (picograd.lowering.llvm_ir)
    -t c         the `pg_c.func` kernels as C source (picograd.lowering.c_source)

(`-t llvm` is xDSL's own LLVM IR printer; `llvm-ir` is the one picograd's runtime uses.)
The printers are imported when a module is emitted, not when the tool starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target


def _write(output: IO[str], text: str) -> None:
    output.write(text if text.endswith("\n") else text + "\n")


@dataclass(frozen=True)
class LlvmIrTarget(Target):
    """Print the module's `llvm.func` kernels as LLVM IR text."""

    name: ClassVar[str] = "llvm-ir"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from picograd.lowering.llvm_ir import module_to_llvm_ir

        _write(output, module_to_llvm_ir(module))


@dataclass(frozen=True)
class CSourceTarget(Target):
    """Print the module's `pg_c.func` kernels as C source."""

    name: ClassVar[str] = "c"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from picograd.lowering.c_source import module_to_c

        _write(output, module_to_c(module))


PICOGRAD_TARGETS: dict[str, type[Target]] = {"llvm-ir": LlvmIrTarget, "c": CSourceTarget}

# The target `--emit=<stage>` prints with; stages not listed print MLIR.
EMIT_TARGETS = {"llvm": "llvm-ir", "c": "c"}
