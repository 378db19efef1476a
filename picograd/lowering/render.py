"""The one dispatch from a compile target to its printer.

    render(module, "llvm" | "c" | "ptx" | "wgsl", arch=None) -> str
    TARGETS                       the target names, in the order docs list them

`module` is at stage 5 (after `convert-uop-to-<target>`); the result is the source text the
target's runtime compiles. `arch` is the PTX `.target` (default sm_80); other targets ignore
it. The compile driver and `opt-tool -t` both print through here.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp

from picograd.errors import CompileError
from picograd.lowering.c.printer import module_to_c
from picograd.lowering.llvm.printer import module_to_llvm_ir
from picograd.lowering.ptx.printer import module_to_ptx
from picograd.lowering.wgsl.printer import module_to_wgsl

_PRINTERS: dict[str, Callable[[ModuleOp, str | None], str]] = {
    "llvm": lambda module, arch: module_to_llvm_ir(module),
    "c": lambda module, arch: module_to_c(module),
    "ptx": lambda module, arch: module_to_ptx(module, arch or "sm_80"),
    "wgsl": lambda module, arch: module_to_wgsl(module),
}
TARGETS = tuple(_PRINTERS)


def render(module: ModuleOp, target: str, arch: str | None = None) -> str:
    """The source of every kernel of `module` for `target`."""
    printer = _PRINTERS.get(target)
    if printer is None:
        raise CompileError(f"unknown compile target {target!r}; use one of "
                           f"{', '.join(TARGETS)}")
    return printer(module, arch)
