"""Print the `llvm.func` kernels of a stage-5 module as LLVM IR text.

    module_to_llvm_ir(module) -> str

Only `llvm.func` (and `llvm.mlir.global`) ops are printed: `func.func @main` (the schedule,
executed by the runtime) and anything else is skipped. The translation is xDSL's
`xdsl.backend.llvm.convert.convert_module` (llvmlite IR builder) on a temporary module
holding those ops (moved there and back) and copies of the declarations; the triple is
the host's, the data layout is left to the runtime's target machine. Calls of vector
max/min helpers get their bodies here (`vector_select.py`).

A kernel that may run in chunks (a `pg.outer` attribute, see
`picograd/lowering/outer_range.py`) also exports `@{name}_pg_outer = constant [2 x i64]
[trip, work]`, which `picograd/runtimes/cpu_llvm.py` reads when it loads the kernel.

A graph of many kernels prints as several LLVM modules, one after the other, each after a
`PART_SEPARATOR` comment line: the kernels split into `compile_parts` groups of about equal
size, every module with its own copies of the helpers. The runtime optimises and compiles
the modules in parallel processes (LLVM's optimiser and code generator are most of a cold
compile, and llvmlite runs one call at a time per process).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from picograd.dialects.abi import OUTER_ATTR, WORK_ATTR, outer_symbol
from picograd.dialects.capabilities import host_cpus
from picograd.errors import CompileError
from picograd.lowering.llvm.vector_select import define_vector_selects


class LlvmConvertError(CompileError):
    """llvmlite refused to build LLVM IR from the module's `llvm` dialect ops."""


# Between two modules of one source (an LLVM IR comment).
PART_SEPARATOR = "; ---- picograd: the next module ----\n"
# A graph is split only from this many kernels and llvm ops (a fork costs a few
# milliseconds; the MLP step's 32 kernels are about 2000 ops and 0.44 s of LLVM, 0.28 s
# split in two: its cold step 0.69-0.73 -> 0.53-0.59 s).
MIN_SPLIT_KERNELS = 8
MIN_SPLIT_OPS = 1000
MAX_PARTS = 4


def compile_parts(kernels: int, ops: int) -> int:
    """How many modules a graph of `kernels` kernels and `ops` ops prints as: one per CPU
    this process may use (`host_cpus`, at most `MAX_PARTS`) for a big graph, else one."""
    if kernels < MIN_SPLIT_KERNELS or ops < MIN_SPLIT_OPS:
        return 1
    return max(1, min(host_cpus(), MAX_PARTS, kernels))


def split_kernels(sizes: list[int], parts: int) -> list[list[int]]:
    """The kernels (by position) of each of `parts` modules, each in its order: the biggest
    kernel (`sizes`: their llvm ops) first goes to the lightest module. Empty modules are
    left out, but for a single one."""
    groups: list[list[int]] = [[] for _ in range(parts)]
    totals = [0] * parts
    for n in sorted(range(len(sizes)), key=lambda n: -sizes[n]):  # biggest to lightest
        lightest = totals.index(min(totals))
        groups[lightest].append(n)
        totals[lightest] += sizes[n]
    return [sorted(group) for group in groups if group or parts == 1]


def module_to_llvm_ir(module: ModuleOp) -> str:
    """LLVM IR text of every `llvm.func` / `llvm.mlir.global` at the top level of `module`:
    one module, or `compile_parts` of them joined by `PART_SEPARATOR`."""
    kept = [op for op in module.ops if isinstance(op, llvm.FuncOp | llvm.GlobalOp)]
    kernels = [op for op in kept if isinstance(op, llvm.FuncOp) and op.body.blocks]
    # helper declarations go to every part; a global would be defined twice: no split
    shared = [op for op in kept if not (isinstance(op, llvm.FuncOp) and op.body.blocks)]
    sizes = [sum(1 for _ in op.walk()) for op in kernels]
    parts = 1 if any(isinstance(op, llvm.GlobalOp) for op in shared) else compile_parts(
        len(kernels), sum(sizes))
    groups = split_kernels(sizes, parts)
    # The kernels move into each part's module and back, in their order: cloning them
    # was a third of printing (the CNN step's render 0.33-0.34 s with clones, 0.19-0.27
    # without).
    order = list(module.ops)
    for op in order:
        op.detach()
    try:
        return PART_SEPARATOR.join(
            _module_text(shared, [kernels[n] for n in group]) for group in groups)
    finally:
        module.body.block.add_ops(order)


def _sort_flags(ir_module: ir.Module) -> None:
    """Put every instruction's flags in one order. xDSL hands them over from a set
    (`overflow<nsw,nuw>`, fast-math flags), so their order followed Python's hash seed:
    `add nsw nuw` in one process, `add nuw nsw` in the next, and the source text, which is
    part of the disk cache's key, missed half the time."""
    for function in ir_module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                flags = getattr(instruction, "flags", None)
                if isinstance(flags, list) and len(flags) > 1:
                    flags.sort()


def _module_text(shared: list[llvm.FuncOp | llvm.GlobalOp], kernels: list[llvm.FuncOp]
                 ) -> str:
    """One LLVM module: copies of the `shared` declarations and globals, and `kernels`
    themselves (detached from their module: they are moved here and back out)."""
    kept = [*(op.clone() for op in shared), *kernels]
    part = ModuleOp(kept)
    try:
        ir_module = convert_module(part, fallback_target_triple=None)
    except (IndexError, KeyError, NotImplementedError, TypeError, ValueError) as e:
        # xDSL's llvm ops verify little (a shufflevector mask past its vectors, a value of
        # the wrong type), and llvm.func takes ops of any dialect: llvmlite's builder and
        # xDSL's converter (NotImplementedError for an op it has no rule for) refuse them
        raise LlvmConvertError(f"the llvm dialect kernels are not valid LLVM IR: "
                               f"{type(e).__name__}: {e}") from e
    finally:
        for op in kernels:
            op.detach()
    define_vector_selects(ir_module)
    _sort_flags(ir_module)
    for op in kept:
        trip, work = op.attributes.get(OUTER_ATTR), op.attributes.get(WORK_ATTR)
        if isinstance(op, llvm.FuncOp) and isinstance(trip, IntegerAttr) and isinstance(
                work, IntegerAttr):
            export_outer(ir_module, op.sym_name.data, trip.value.data, work.value.data)
    return str(ir_module)


def export_outer(ir_module: ir.Module, kernel: str, trip: int, work: int) -> None:
    """Add `@{kernel}_pg_outer = constant [2 x i64] [trip, work]` to `ir_module`."""
    array = ir.ArrayType(ir.IntType(64), 2)
    symbol = ir.GlobalVariable(ir_module, array, outer_symbol(kernel))
    symbol.global_constant = True
    # llvmlite's stubs type `initializer` as None
    symbol.initializer = ir.Constant(array, [trip, work])  # pyright: ignore
