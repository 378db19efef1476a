"""The LLVM IR text of a module's `pg_uop` kernels, printed straight from them.

    uop_module_to_llvm_ir(module) -> str
    lower_kernels(module) -> list[dict]       each kernel's text (JSON-able), in order
    assemble(pieces) -> str                   the source of such pieces

The same text as `convert-uop-to-llvm` followed by `printer.module_to_llvm_ir` (byte for
byte: the kernel lowering is the same code, `convert_uop_to_llvm._KernelLowering`, given a
`TextBuilder` instead of an `XdslBuilder`), without building the llvm dialect ops: realize()
compiles through here (the compile driver, when nothing needs the target-stage IR), and
opt-tool, PG_DUMP and DEBUG>=2 keep the llvm dialect stage. See docs/design.md, "Departures
from the architecture page".

`module` is at the `pg_uop` stage: `pg_uop.kernel` ops and the `@main` schedule (what the
default pipeline has made before its last pass). The kernels split into modules as the
printer splits them (`compile_parts`, `split_kernels`: by the count of llvm ops the xDSL
route makes, which the text builder counts as it goes).
"""

from __future__ import annotations

import functools

from llvmlite import binding, ir
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from picograd.dialects import pg_uop
from picograd.dialects.abi import outer_symbol
from picograd.errors import CompileError
from picograd.lowering.kernels import kernels_with_distinct_buffers
from picograd.lowering.llvm.convert_uop_to_llvm import _KernelLowering
from picograd.lowering.llvm.printer import (
    PART_SEPARATOR,
    compile_parts,
    export_outer,
    split_kernels,
)
from picograd.lowering.llvm.text_builder import TextBuilder, TextFunction


class NotUopStageError(CompileError):
    """The text route was given a module that is not at the pg_uop stage."""


def uop_module_to_llvm_ir(module: ModuleOp) -> str:
    """LLVM IR text of every `pg_uop.kernel` of `module` (see the module docstring)."""
    return assemble(lower_kernels(module))


def lower_kernels(module: ModuleOp) -> list[dict]:
    """Each `pg_uop.kernel` of `module` as LLVM text, in order: `TextFunction.to_dict`s,
    which `assemble` joins into the source (and which another process can send as JSON)."""
    distinct = kernels_with_distinct_buffers(module)
    functions: list[dict] = []
    for op in module.ops:
        if isinstance(op, pg_uop.KernelOp):
            name = op.sym_name.data
            lowering = _KernelLowering(op, name in distinct, TextBuilder(len(op.args)))
            function: TextFunction = lowering.run()
            if lowering.split is not None:
                function.outer = (lowering.split.trip, lowering.split.work)
            functions.append(function.to_dict())
        elif not isinstance(op, func.FuncOp):
            raise NotUopStageError(f"the LLVM text route prints pg_uop.kernel ops, and this "
                                   f"module holds '{op.name}'")
    return functions


def assemble(pieces: list[dict]) -> str:
    """The source of the kernels `pieces` (`lower_kernels`' dicts, in the module's order):
    `compile_parts` modules, the kernels split among them as the printer splits them."""
    functions = [TextFunction.from_dict(piece) for piece in pieces]
    helpers: dict[str, str] = {}
    for function in functions:
        helpers.update(function.helpers)
    shared = [helpers[name] for name in sorted(helpers)]
    parts = compile_parts(len(functions), sum(f.ops for f in functions))
    groups = split_kernels([f.ops for f in functions], parts)
    return PART_SEPARATOR.join(_module_text(shared, [functions[n] for n in group])
                               for group in groups)


def _module_text(shared: list[str], functions: list[TextFunction]) -> str:
    """One LLVM module, as llvmlite writes the xDSL route's: header, helpers, kernels, the
    intrinsics in first-use order, the chunked kernels' exports."""
    intrinsics: dict[str, str] = {}
    for function in functions:
        for name, declaration in function.intrinsics.items():
            intrinsics.setdefault(name, declaration)
    exports = [_outer_text(f.name, *f.outer) for f in functions if f.outer is not None]
    lines = ['; ModuleID = ""', f'target triple = "{_triple()}"', 'target datalayout = ""', "",
             *shared, *(f.text for f in functions), *intrinsics.values(), *exports]
    return "\n".join(lines)


@functools.cache
def _triple() -> str:
    return binding.get_default_triple()


def _outer_text(kernel: str, trip: int, work: int) -> str:
    scratch = ir.Module()
    export_outer(scratch, kernel, trip, work)
    return str(scratch.get_global(outer_symbol(kernel)))
