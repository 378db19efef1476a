"""Float max/min on LLVM vectors: helper functions the kernels call, defined in llvmlite.

xDSL's `llvm.fcmp` and `llvm.select` take scalars only, so a vector `pg_uop.binary max`
lowers to `llvm.call @"pg.fmax.v16f32"` (`pg.fmin.v8f64`, ...) of a function that
`declare_vector_selects` declares in the module (an `llvm.func` without a body), and that
`define_vector_selects` gives its body in the llvmlite module the printer translates to, the
scalar rule on whole vectors:

    define internal <16 x float> @"pg.fmax.v16f32"(<16 x float> %a, <16 x float> %b)
        alwaysinline {
      %better = fcmp ogt <16 x float> %a, %b
      %nan = fcmp uno <16 x float> %a, %a
      %pick = or <16 x i1> %better, %nan
      %r = select <16 x i1> %pick, <16 x float> %a, <16 x float> %b
      ret <16 x float> %r
    }

(NaN wins; of two equal zeros, the second: what the interpreters and the scalar lowering
choose.) `alwaysinline` and internal linkage: LLVM inlines every call and drops the helper,
so a kernel's machine code has the compare and blend in place.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp

# the helper's name prefix for each scalar predicate of `alu._nan_propagating`
VECTOR_SELECTS_BY_PREDICATE = {"ogt": "pg.fmax", "olt": "pg.fmin"}
_PREDICATES = {name: predicate for predicate, name in VECTOR_SELECTS_BY_PREDICATE.items()}
_LLVMLITE_ORDERED = {"ogt": ">", "olt": "<"}


def _is_helper(name: str) -> bool:
    return name.rsplit(".", 1)[0] in _PREDICATES


def declare_vector_selects(module: ModuleOp) -> None:
    """Declare (once, before the kernels) every helper the module's kernels call."""
    wanted: dict[str, llvm.LLVMFunctionType] = {}
    for op in module.walk():
        if isinstance(op, llvm.CallOp) and op.callee is not None and _is_helper(
                name := op.callee.string_value()) and op.returned is not None:
            t = op.returned.type
            wanted[name] = llvm.LLVMFunctionType([t, t], t)
    declared = {op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp)}
    first = module.body.block.first_op
    for name, signature in sorted(wanted.items()):
        if name not in declared:
            declaration = llvm.FuncOp(name, signature, llvm.LinkageAttr("external"))
            if first is None:
                module.body.block.add_op(declaration)
            else:
                module.body.block.insert_op_before(declaration, first)


def define_vector_selects(module: ir.Module) -> None:
    """Give every declared `pg.fmax.*` / `pg.fmin.*` of `module` its body."""
    for function in module.functions:
        if not _is_helper(function.name) or not function.is_declaration:
            continue
        prefix = function.name.rsplit(".", 1)[0]
        function.linkage = "internal"
        function.attributes.add("alwaysinline")
        a, b = function.args
        builder = ir.IRBuilder(function.append_basic_block("entry"))
        better = builder.fcmp_ordered(_LLVMLITE_ORDERED[_PREDICATES[prefix]], a, b)
        nan = builder.fcmp_unordered("uno", a, a)
        builder.ret(builder.select(builder.or_(better, nan), a, b))
