"""convert-uop-to-llvm: the shape of the llvm.func it builds, and that LLVM accepts every
scalar op on every element type. Numeric behaviour is tested in tests/unit/runtimes."""

from __future__ import annotations

import llvmlite.binding as llvm_binding
import pytest
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import make_context
from picograd.lowering.llvm.convert_uop_to_llvm import ConvertUopToLlvmPass
from picograd.lowering.llvm.printer import module_to_llvm_ir

REDUCE = """
pg_uop.kernel @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %acc = pg_uop.acc 0.0 : f32
  %j = pg_uop.range 0 to 8 reduce
  %c8 = pg_uop.const 8 : index
  %o = pg_uop.binary mul %i, %c8 : index
  %idx = pg_uop.binary add %o, %j : index
  %v = pg_uop.load %a[%idx] : !pg.buffer<32xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %v : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %j
  %r = pg_uop.acc_load %acc : f32
  pg_uop.store %r, %out[%i] : f32, !pg.buffer<4xf32>
  pg_uop.end %i
}
func.func @main(%a: !pg.buffer<32xf32>) -> !pg.buffer<4xf32> {
  %t = pg_sched.alloc : !pg.buffer<4xf32>
  pg_sched.launch @k0(%a, %t) : !pg.buffer<32xf32>, !pg.buffer<4xf32>
  func.return %t : !pg.buffer<4xf32>
}
"""


def lower(text: str) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    module.verify()
    ConvertUopToLlvmPass().apply(ctx, module)
    module.verify()
    return module


def llvm_accepts(module: ModuleOp) -> str:
    llvm_binding.initialize_native_target()
    llvm_binding.initialize_native_asmprinter()
    ir = module_to_llvm_ir(module)
    llvm_binding.parse_assembly(ir).verify()
    return ir


def the_func(module: ModuleOp, name: str = "k0") -> llvm.FuncOp:
    (op,) = [f for f in module.ops if isinstance(f, llvm.FuncOp) and f.sym_name.data == name]
    return op


def test_kernel_becomes_llvm_func_and_main_is_untouched():
    before = Parser(make_context(), REDUCE).parse_module()
    main_before = str(next(op for op in before.ops if isinstance(op, func.FuncOp)))
    module = lower(REDUCE)
    assert not [op.name for op in module.walk() if op.name.startswith("pg_uop.")]
    f = the_func(module)
    assert [str(t) for t in f.function_type.inputs] == ["!llvm.ptr", "!llvm.ptr", "i64",
                                                             "i64"]  # + (start, end)
    assert isinstance(f.function_type.output, llvm.LLVMVoidType)
    assert f.linkage.linkage.data == "external"
    main_after = next(op for op in module.ops if isinstance(op, func.FuncOp))
    assert str(main_after) == main_before


def test_loops_are_rotated_blocks_with_phis_and_allocas_sit_in_the_entry_block():
    f = the_func(lower(REDUCE))
    blocks = list(f.body.blocks)
    # entry, outer body, inner body, rest of the outer body, exit
    assert len(blocks) == 5
    bodies = [b for b in blocks if len(b.args) == 1 and b is not blocks[0]]
    assert len(bodies) == 2
    # the entry block tests the split outer range's (start, end) before its first iteration
    assert isinstance(blocks[0].last_op, llvm.CondBrOp)
    latches = [b for b in blocks[1:] if isinstance(b.last_op, llvm.CondBrOp)]
    assert len(latches) == 2
    for latch in latches:  # add nsw nuw; icmp slt; cond_br back to the body
        add, cmp, br = list(latch.ops)[-3:]
        assert isinstance(add, llvm.AddOp) and isinstance(cmp, llvm.ICmpOp)
        assert isinstance(br, llvm.CondBrOp) and br.then_block in bodies
        assert list(br.then_arguments) == [add.res]
    allocas = [op for op in f.walk() if isinstance(op, llvm.AllocaOp)]
    assert len(allocas) == 1 and allocas[0].parent_block() is blocks[0]
    names = {op.name for op in f.walk()}
    assert "llvm.getelementptr" in names
    assert not names & {"llvm.ptrtoint", "llvm.inttoptr"}
    llvm_accepts(lower(REDUCE))


def test_a_value_from_inside_a_loop_may_be_used_after_its_end():
    # what cse makes of two equal constants on both sides of `end %j`
    text = """
pg_uop.kernel @k0(%a: !pg.buffer<8xf32>, %out: !pg.buffer<2xf32>) {
  %i = pg_uop.range 0 to 2 global
  %acc = pg_uop.acc 0.0 : f32
  %j = pg_uop.range 0 to 4 reduce
  %two = pg_uop.const 2.0 : f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %two : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %j
  %r = pg_uop.acc_load %acc : f32
  %s = pg_uop.binary mul %r, %two : f32
  pg_uop.store %s, %out[%i] : f32, !pg.buffer<2xf32>
  pg_uop.end %i
}
pg_uop.kernel @k1(%out: !pg.buffer<2xf32>) {
  %i = pg_uop.range 0 to 2 global
  %acc = pg_uop.acc 1.0 : f32
  %j = pg_uop.range 3 to 3 reduce
  %z = pg_uop.const 0.0 : f32
  pg_uop.acc_store %acc, %z : f32
  pg_uop.end %j
  %r = pg_uop.acc_load %acc : f32
  pg_uop.store %r, %out[%i] : f32, !pg.buffer<2xf32>
  pg_uop.end %i
}
"""
    llvm_accepts(lower(text))


def test_noalias_only_when_every_launch_passes_distinct_buffers():
    text = """
pg_uop.kernel @k0(%a: !pg.buffer<4xf32>, %b: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %v = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
  pg_uop.store %v, %b[%i] : f32, !pg.buffer<4xf32>
  pg_uop.end %i
}
func.func @main(%a: !pg.buffer<4xf32>) -> !pg.buffer<4xf32> {
  %t = pg_sched.alloc : !pg.buffer<4xf32>
  pg_sched.launch @k0(%a, %t) : !pg.buffer<4xf32>, !pg.buffer<4xf32>
  pg_sched.launch @k0(%t, %t) : !pg.buffer<4xf32>, !pg.buffer<4xf32>
  func.return %t : !pg.buffer<4xf32>
}
"""
    assert the_func(lower(text)).arg_attrs is None
    distinct = text.replace("pg_sched.launch @k0(%t, %t)", "pg_sched.launch @k0(%a, %t)")
    attrs = the_func(lower(distinct)).arg_attrs
    # every pointer is noalias; the trailing (start, end) integers have no attributes
    assert attrs is not None and all("llvm.noalias" in a.data for a in attrs.data[:-2])
    assert [a.data for a in attrs.data[-2:]] == [{}, {}]
    assert "ptr noalias" in llvm_accepts(lower(distinct))


def test_bool_buffers_are_bytes():
    text = """
pg_uop.kernel @k0(%a: !pg.buffer<4xi1>, %b: !pg.buffer<4xi1>) {
  %i = pg_uop.range 0 to 4 global
  %v = pg_uop.load %a[%i] : !pg.buffer<4xi1> -> i1
  %n = pg_uop.unary not %v : i1
  pg_uop.store %n, %b[%i] : i1, !pg.buffer<4xi1>
  pg_uop.end %i
}
"""
    f = the_func(lower(text))
    loads = [op for op in f.walk() if isinstance(op, llvm.LoadOp)]
    stores = [op for op in f.walk() if isinstance(op, llvm.StoreOp)]
    assert [str(op.dereferenced_value.type) for op in loads] == ["i8"]
    assert [str(op.value.type) for op in stores] == ["i8"]
    assert isinstance(stores[0].value.owner, llvm.ZExtOp)
    assert any(isinstance(op, llvm.ICmpOp) for op in f.walk())


def test_masked_load_reads_in_bounds_and_selects_other():
    text = """
pg_uop.kernel @k0(%a: !pg.buffer<4xf32>, %b: !pg.buffer<6xf32>) {
  %i = pg_uop.range 0 to 6 global
  %c4 = pg_uop.const 4 : index
  %m = pg_uop.cmp lt %i, %c4 : index
  %v = pg_uop.load %a[%i] if %m else 2.5 : !pg.buffer<4xf32> -> f32
  pg_uop.store %v, %b[%i] : f32, !pg.buffer<6xf32>
  pg_uop.end %i
}
"""
    f = the_func(lower(text))
    (load,) = [op for op in f.walk() if isinstance(op, llvm.LoadOp)]
    gep = load.ptr.owner
    assert isinstance(gep, llvm.GEPOp)
    assert isinstance(gep.ssa_indices[0].owner, llvm.SelectOp)  # index 0 where masked off
    assert any(isinstance(u.operation, llvm.SelectOp) for u in load.dereferenced_value.uses)
    llvm_accepts(lower(text))


def test_gpu_ops_are_rejected_with_the_kernel_name():
    text = """
pg_uop.kernel @gpu(%a: !pg.buffer<4xf32>) {
  %g = pg_uop.special global_id 0 size 4
  %one = pg_uop.const 1.0 : f32
  pg_uop.store %one, %a[%g] : f32, !pg.buffer<4xf32>
}
"""
    with pytest.raises(PassFailedException, match=r"@gpu: pg_uop.special"):
        lower(text)


# ── every scalar op on every element type is valid LLVM IR ──────────────────

FLOATS = ["f16", "f32", "f64"]
INTS = ["i8", "ui8", "i16", "i32", "i64"]
TYPES = [*FLOATS, *INTS, "i1"]


def _binary_kinds(t: str) -> list[str]:
    if t == "i1":
        return ["and", "or", "xor", "max", "min"]
    common = ["add", "sub", "mul", "div", "max", "min"]
    return common if t in FLOATS else [*common, "mod", "and", "or", "xor"]


def _unary_kinds(t: str) -> list[str]:
    if t in FLOATS:
        return ["neg", "exp", "log", "sqrt", "sin", "recip"]
    return ["not"] if t == "i1" else ["neg", "not"]


def _alu_kernel(name: str, t: str) -> str:
    lines = [f"pg_uop.kernel @{name}(%a: !pg.buffer<4x{t}>, %out: !pg.buffer<4x{t}>) {{",
             "  %i = pg_uop.range 0 to 4 global",
             f"  %x = pg_uop.load %a[%i] : !pg.buffer<4x{t}> -> {t}",
             f"  %y = pg_uop.const 1 : {t}"]
    acc = "%x"
    for n, kind in enumerate(_binary_kinds(t)):
        lines.append(f"  %b{n} = pg_uop.binary {kind} {acc}, %y : {t}")
        acc = f"%b{n}"
    for n, kind in enumerate(_unary_kinds(t)):
        lines.append(f"  %u{n} = pg_uop.unary {kind} {acc} : {t}")
        acc = f"%u{n}"
    for n, kind in enumerate(["lt", "le", "gt", "ge", "eq", "ne"]):
        lines.append(f"  %c{n} = pg_uop.cmp {kind} {acc}, %x : {t}")
        lines.append(f"  %w{n} = pg_uop.where %c{n}, {acc}, %x : {t}")
        acc = f"%w{n}"
    for n, other in enumerate(TYPES):
        lines.append(f"  %to{n} = pg_uop.cast {acc} : {t} to {other}")
        lines.append(f"  %back{n} = pg_uop.cast %to{n} : {other} to {t}")
        acc = f"%back{n}"
    lines += [f"  pg_uop.store {acc}, %out[%i] : {t}, !pg.buffer<4x{t}>", "  pg_uop.end %i", "}"]
    return "\n".join(lines)


def test_every_alu_op_and_cast_is_accepted_by_llvm():
    text = "\n".join(_alu_kernel(f"k_{t}", t) for t in TYPES)
    module = lower(text)
    ir = llvm_accepts(module)
    for expected in ["fcmp uno", "fcmp olt", "llvm.smax.i32", "llvm.umin.i8",
                     "llvm.exp.f16", "llvm.fptosi.sat.i64.f32", "llvm.fptosi.sat.i32.f64",
                     "sdiv", "udiv", "srem", "urem", "fcmp une", "icmp ult", "fpext", "fptrunc"]:
        assert expected in ir
