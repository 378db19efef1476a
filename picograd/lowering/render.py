"""The one dispatch from a compile target to its printer.

    render(module, "llvm" | "c" | "ptx" | "wgsl", arch=None) -> str
    TARGETS                       the target names, in the order docs list them
    DIRECT_ROUTES                 target -> DirectRoute: its pg_uop-stage printer

`module` is at stage 5 (after `convert-uop-to-<target>`); the result is the source text the
target's runtime compiles. `arch` is the PTX `.target` (default sm_80); other targets ignore
it. The compile driver and `opt-tool -t` both print through here. A module at another
stage (tensor-stage IR given to `-t c`) is a `WrongStageError`, not an empty program: the
printers print the ops of their own target and would skip everything else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from picograd.dialects import pg_c, pg_ptx, pg_wgsl
from picograd.errors import CompileError
from picograd.lowering.c.printer import CSourceError, module_to_c
from picograd.lowering.llvm import text_route
from picograd.lowering.llvm.printer import module_to_llvm_ir
from picograd.lowering.ptx.printer import PtxSourceError, module_to_ptx
from picograd.lowering.wgsl.printer import WgslSourceError, module_to_wgsl

_PRINTERS: dict[str, Callable[[ModuleOp, str | None], str]] = {
    "llvm": lambda module, arch: module_to_llvm_ir(module),
    "c": lambda module, arch: module_to_c(module),
    "ptx": lambda module, arch: module_to_ptx(module, arch or "sm_80"),
    "wgsl": lambda module, arch: module_to_wgsl(module),
}
TARGETS = tuple(_PRINTERS)

@dataclass(frozen=True)
class DirectRoute:
    """How a target's `pg_uop` kernels also print straight to source text, the same text
    that its conversion pass and `render` give: `lower` makes each kernel's piece (plain
    values: JSON), `assemble` the source of the pieces. The compile driver takes this route
    when nothing needs the target-stage IR (docs/design.md, "Departures")."""

    conversion: str  # the pass the route stands in for (the pipeline's last)
    lower: Callable[[ModuleOp], list[dict]]  # a pg_uop-stage module -> its kernels' pieces
    assemble: Callable[[list[dict]], str]  # the pieces, in the module's order -> the source

    def print(self, module: ModuleOp) -> str:
        return self.assemble(self.lower(module))


DIRECT_ROUTES: dict[str, DirectRoute] = {
    "llvm": DirectRoute("convert-uop-to-llvm", text_route.lower_kernels, text_route.assemble),
}

# The module-level ops each printer prints; besides them a stage-5 module holds only the
# host function (`func.func` of allocs and launches).
_KERNELS: dict[str, tuple[type[Operation], ...]] = {
    "llvm": (llvm.FuncOp, llvm.GlobalOp), "c": (pg_c.FuncOp,), "ptx": (pg_ptx.EntryOp,),
    "wgsl": (pg_wgsl.FuncOp,),
}
# ops of the stages before 5, which a host function holds only before convert-tensor-to-sched
_EARLY_STAGES = ("pg_tensor.", "pg_loop.", "pg_uop.")


class UnprintableKernelError(CompileError):
    """A kernel of the right stage that its printer cannot write (an attribute of the wrong
    type, an op the target has no spelling for): the printer's own error, as a CompileError."""


class WrongStageError(CompileError):
    """A module the target's printer cannot print: `op` is not one of its kernels (the
    module is at an earlier stage, or another target's)."""

    def __init__(self, message: str, op: Operation):
        super().__init__(message)
        self.op = op


def check_stage(module: ModuleOp, target: str) -> None:
    """Raise `WrongStageError` unless `module` is `target`'s stage 5: its kernels and the
    host function, nothing of an earlier stage or another target."""
    kernels = _KERNELS[target]
    names = " or ".join(k.name for k in kernels)
    for op in module.ops:
        if isinstance(op, kernels):
            continue
        stray = op if not isinstance(op, func.FuncOp) else next(
            (o for o in op.walk() if o.name.startswith(_EARLY_STAGES)), None)
        if stray is not None:
            raise WrongStageError(
                f"the {target} printer prints {names} ops, and this module holds "
                f"'{stray.name}': lower it to the {target} target first (the {target} pipeline, "
                f"`opt-tool --emit={target}` from the tensor stage)",
                stray)


def render(module: ModuleOp, target: str, arch: str | None = None) -> str:
    """The source of every kernel of `module` for `target`."""
    printer = _PRINTERS.get(target)
    if printer is None:
        raise CompileError(f"unknown compile target {target!r}; use one of "
                           f"{', '.join(TARGETS)}")
    check_stage(module, target)
    try:
        return printer(module, arch)
    except (CSourceError, PtxSourceError, WgslSourceError) as e:
        # ValueErrors, as the printers are called directly too; a caller of render (the
        # compile driver, opt-tool -t) gets picograd's error for a failed compilation
        raise UnprintableKernelError(f"cannot print the {target} kernels: {e}") from e
