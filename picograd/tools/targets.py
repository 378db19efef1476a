"""`opt-tool -t` output formats for a stage-5 module.

    -t llvm-ir   the `llvm.func` kernels as LLVM IR text (picograd.lowering.llvm.printer)
    -t c         the `pg_c.func` kernels as C source (picograd.lowering.c.printer)
    -t ptx       the `pg_ptx.entry` kernels as PTX for sm_80 (picograd.lowering.ptx.printer)
    -t ptx-sm90  the same for sm_90
    -t wgsl      the `pg_wgsl.fn` kernels as one WGSL module (picograd.lowering.wgsl.printer)

(`-t llvm` is xDSL's own LLVM IR printer; `llvm-ir` is the one picograd's runtime uses.)
Each prints through `picograd.lowering.render`, as the compile driver does; the printers are
imported when a module is emitted, not when the tool starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target


def _emit(output: IO[str], module: ModuleOp, target: str, arch: str | None = None) -> None:
    # lazy: opt-tool starts without the printers (and their dialects) loaded
    from picograd.lowering.render import render

    text = render(module, target, arch)
    output.write(text if text.endswith("\n") else text + "\n")


@dataclass(frozen=True)
class LlvmIrTarget(Target):
    """Print the module's `llvm.func` kernels as LLVM IR text."""

    name: ClassVar[str] = "llvm-ir"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        _emit(output, module, "llvm")


@dataclass(frozen=True)
class CSourceTarget(Target):
    """Print the module's `pg_c.func` kernels as C source."""

    name: ClassVar[str] = "c"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        _emit(output, module, "c")


@dataclass(frozen=True)
class PtxTarget(Target):
    """Print the module's `pg_ptx.entry` kernels as a PTX module for sm_80."""

    name: ClassVar[str] = "ptx"
    arch: ClassVar[str] = "sm_80"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        _emit(output, module, "ptx", self.arch)


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
        _emit(output, module, "wgsl")


PICOGRAD_TARGETS: dict[str, type[Target]] = {
    t.name: t for t in (LlvmIrTarget, CSourceTarget, PtxTarget, PtxSm90Target, WgslTarget)
}

# The target `--emit=<stage>` prints with; stages not listed print MLIR.
EMIT_TARGETS = {"llvm": "llvm-ir", "c": "c", "ptx": "ptx", "wgsl": "wgsl"}
