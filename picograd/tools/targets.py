"""`opt-tool -t` output formats for a stage-5 module.

    -t llvm-ir   the `llvm.func` kernels as LLVM IR text (picograd.lowering.llvm_ir)
    -t c         the `pg_c.func` kernels as C source (picograd.lowering.c_source)
    -t ptx       the `pg_ptx.entry` kernels as PTX for sm_80 (picograd.lowering.ptx_source)
    -t ptx-sm90  the same for sm_90
    -t wgsl      the `pg_wgsl.fn` kernels as one WGSL module (picograd.lowering.wgsl_source)

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


@dataclass(frozen=True)
class PtxTarget(Target):
    """Print the module's `pg_ptx.entry` kernels as a PTX module for sm_80."""

    name: ClassVar[str] = "ptx"
    arch: ClassVar[str] = "sm_80"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from picograd.lowering.ptx_source import module_to_ptx

        _write(output, module_to_ptx(module, self.arch))


@dataclass(frozen=True)
class PtxSm90Target(PtxTarget):
    """Print the module's `pg_ptx.entry` kernels as a PTX module for sm_90."""

    name: ClassVar[str] = "ptx-sm90"
    arch: ClassVar[str] = "sm_90"


@dataclass(frozen=True)
class WgslTarget(Target):
    """Print the module's `pg_wgsl.fn` kernels as one WGSL module."""

    name: ClassVar[str] = "wgsl"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from picograd.lowering.wgsl_source import module_to_wgsl

        _write(output, module_to_wgsl(module))


PICOGRAD_TARGETS: dict[str, type[Target]] = {
    t.name: t for t in (LlvmIrTarget, CSourceTarget, PtxTarget, PtxSm90Target, WgslTarget)
}

# The target `--emit=<stage>` prints with; stages not listed print MLIR.
EMIT_TARGETS = {"llvm": "llvm-ir", "c": "c", "ptx": "ptx", "wgsl": "wgsl"}
