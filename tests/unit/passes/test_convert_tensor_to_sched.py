"""convert-tensor-to-sched: kernel grouping (how many kernels, what each reads and writes) and
the shape of the @main schedule. Semantics are checked in tests/property/test_lowering_front.py."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import make_context
from picograd.dialects import pg_sched as S
from picograd.dialects import pg_tensor as T
from picograd.passes.sched import kernel_grouping
from picograd.passes.sched.convert_tensor_to_sched import ConvertTensorToSchedPass


def lower(text: str) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    ConvertTensorToSchedPass().apply(ctx, module)
    module.verify()
    return module


def kernels(module: ModuleOp) -> list[S.KernelOp]:
    return [op for op in module.ops if isinstance(op, S.KernelOp)]


def main_of(module: ModuleOp) -> func.FuncOp:
    (main,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return main


def tensor_ops(kernel: S.KernelOp) -> list[str]:
    return [op.name.removeprefix("pg_tensor.") for op in kernel.body.block.ops
            if op.dialect_name() == "pg_tensor"]


ELEMENTWISE_CHAIN = """
func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %x = pg_tensor.binary mul %a, %b : tensor<4x8xf32>
  %y = pg_tensor.unary exp %x : tensor<4x8xf32>
  %c = pg_tensor.const 2.0 : tensor<4x8xf32>
  %z = pg_tensor.binary add %y, %c : tensor<4x8xf32>
  %w = pg_tensor.unary sqrt %z : tensor<4x8xf32>
  func.return %w : tensor<4x8xf32>
}
"""

# (a*b + c).relu().sum(axis=1), relu = max(x, 0)
MUL_ADD_RELU_SUM = """
func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %m = pg_tensor.binary mul %a, %b : tensor<4x8xf32>
  %s = pg_tensor.binary add %m, %c : tensor<4x8xf32>
  %z = pg_tensor.const 0.0 : tensor<4x8xf32>
  %r = pg_tensor.binary max %s, %z : tensor<4x8xf32>
  %t = pg_tensor.reduce sum %r {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %t : tensor<4x1xf32>
}
"""

MATMUL = """
func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a3 = pg_tensor.reshape %a : tensor<64x64xf32> -> tensor<64x1x64xf32>
  %ae = pg_tensor.expand %a3 : tensor<64x1x64xf32> -> tensor<64x64x64xf32>
  %bt = pg_tensor.permute %b {perm = array<i64: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32>
  %b3 = pg_tensor.reshape %bt : tensor<64x64xf32> -> tensor<1x64x64xf32>
  %be = pg_tensor.expand %b3 : tensor<1x64x64xf32> -> tensor<64x64x64xf32>
  %p = pg_tensor.binary mul %ae, %be : tensor<64x64x64xf32>
  %s = pg_tensor.reduce sum %p {axes = array<i64: 2>} : tensor<64x64x64xf32> -> tensor<64x64x1xf32>
  %r = pg_tensor.reshape %s : tensor<64x64x1xf32> -> tensor<64x64xf32>
  func.return %r : tensor<64x64xf32>
}
"""

REDUCE_THEN_ELEMENTWISE = """
func.func @main(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %s = pg_tensor.reduce sum %a {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %e = pg_tensor.unary exp %s : tensor<4x1xf32>
  func.return %e : tensor<4x1xf32>
}
"""

SOFTMAX = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = pg_tensor.reduce max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %me = pg_tensor.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %d = pg_tensor.binary sub %x, %me : tensor<4x8xf32>
  %e = pg_tensor.unary exp %d : tensor<4x8xf32>
  %s = pg_tensor.reduce sum %e {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %se = pg_tensor.expand %s : tensor<4x1xf32> -> tensor<4x8xf32>
  %r = pg_tensor.binary div %e, %se : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
"""


def test_elementwise_chain_is_one_kernel():
    module = lower(ELEMENTWISE_CHAIN)
    (k,) = kernels(module)
    assert tensor_ops(k) == ["binary", "unary", "const", "binary", "unary"]
    assert [len(k.args)] == [3]  # a, b, out


def test_mul_add_relu_sum_is_one_kernel():
    (k,) = kernels(lower(MUL_ADD_RELU_SUM))
    assert tensor_ops(k) == ["binary", "binary", "const", "binary", "reduce"]


def test_matmul_is_one_kernel_with_the_final_reshape():
    (k,) = kernels(lower(MATMUL))
    ops = tensor_ops(k)
    assert ops.count("reduce") == 1 and ops[-1] == "reshape"


def test_reduce_then_elementwise_is_one_kernel():
    (k,) = kernels(lower(REDUCE_THEN_ELEMENTWISE))
    assert tensor_ops(k) == ["reduce", "unary"]  # the epilogue runs after each row's sum


def test_softmax_is_one_kernel_with_both_reductions_per_row():
    (k,) = kernels(lower(SOFTMAX))
    assert tensor_ops(k) == ["reduce", "expand", "binary", "unary", "reduce", "expand",
                             "binary"]
    assert len(k.args) == 2  # x, out


def test_main_is_only_alloc_launch_return():
    module = lower(SHARED_REDUCE)
    main = main_of(module)
    names = [op.name for op in main.body.block.ops]
    assert names == ["pg_sched.alloc", "pg_sched.launch"] * 3 + ["func.return"]
    assert str(main.function_type) == ("(!pg.buffer<32xf32>) -> (!pg.buffer<4xf32>, "
                                       "!pg.buffer<4xf32>)")
    # the input is only read: it is never the last (written) argument of a launch
    launches = [op for op in main.body.block.ops if isinstance(op, S.LaunchOp)]
    assert all(launch.args[-1] is not main.body.block.args[0] for launch in launches)
    # a kernel reads the buffer an earlier one wrote
    assert launches[0].args[-1] is launches[1].args[0]


def test_kernel_arguments_are_reads_in_first_use_order_then_output():
    module = lower(MUL_ADD_RELU_SUM)
    main = main_of(module)
    (launch,) = [op for op in main.body.block.ops if isinstance(op, S.LaunchOp)]
    a, b, c = main.body.block.args
    assert list(launch.args[:3]) == [a, b, c]
    (k,) = kernels(module)
    loads = [op for op in k.body.block.ops if isinstance(op, S.LoadOp)]
    assert [ld.buffer for ld in loads] == list(k.args[:3])
    store = k.body.block.last_op
    assert isinstance(store, S.StoreOp) and store.buffer is k.args[-1]


def test_argument_result_is_returned_as_its_buffer_and_a_view_of_it_is_copied():
    module = lower("""
    func.func @main(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
      %t = pg_tensor.permute %a {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
      func.return %a, %t : tensor<2x3xf32>, tensor<3x2xf32>
    }""")
    (k,) = kernels(module)
    assert tensor_ops(k) == ["permute"]
    main = main_of(module)
    ret = main.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    assert ret.operands[0] is main.body.block.args[0]
    assert isinstance(ret.operands[1].owner, S.AllocOp)


def test_constant_result_gets_a_kernel_and_constants_are_recreated_per_kernel():
    module = lower("""
    func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %c = pg_tensor.const 3.0 : tensor<4xf32>
      %x = pg_tensor.binary add %a, %c : tensor<4xf32>
      %y = pg_tensor.binary mul %a, %c : tensor<4xf32>
      func.return %c, %x, %y : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    }""")
    ks = kernels(module)
    assert [tensor_ops(k) for k in ks] == [["const"], ["const", "binary"], ["const", "binary"]]
    assert [len(k.args) for k in ks] == [1, 2, 2]  # the constant is never read from a buffer


def test_shared_cheap_values_are_recomputed():
    module = lower("""
    func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %e = pg_tensor.unary exp %a : tensor<4xf32>
      %x = pg_tensor.unary neg %e : tensor<4xf32>
      %y = pg_tensor.unary sin %e : tensor<4xf32>
      %z = pg_tensor.unary sqrt %e : tensor<4xf32>
      func.return %x, %y, %z : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    }""")
    assert [tensor_ops(k) for k in kernels(module)] == [["unary", "unary"]] * 3


def test_widely_shared_expensive_value_is_materialised():
    chain = "\n".join(f"  %e{i + 1} = pg_tensor.unary exp %e{i} : tensor<4xf32>"
                      for i in range(5))
    module = lower(f"""
    func.func @main(%e0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {{
    {chain}
      %x = pg_tensor.unary neg %e5 : tensor<4xf32>
      %y = pg_tensor.unary sin %e5 : tensor<4xf32>
      %z = pg_tensor.unary sqrt %e5 : tensor<4xf32>
      func.return %x, %y, %z : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    }}""")
    assert [tensor_ops(k) for k in kernels(module)] == [["unary"] * 5] + [["unary"]] * 3


SHARED_REDUCE = """
func.func @main(%a: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<1x4xf32>) {
  %s = pg_tensor.reduce sum %a {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %x = pg_tensor.unary exp %s : tensor<4x1xf32>
  %y = pg_tensor.reshape %s : tensor<4x1xf32> -> tensor<1x4xf32>
  func.return %x, %y : tensor<4x1xf32>, tensor<1x4xf32>
}"""


def test_shared_reduce_is_computed_once():
    ops = [tensor_ops(k) for k in kernels(lower(SHARED_REDUCE))]
    assert ops == [["reduce"], ["unary"], ["reshape"]]


def test_dead_ops_are_dropped():
    module = lower("""
    func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %dead = pg_tensor.reduce sum %a {axes = array<i64: 0>} : tensor<4xf32> -> tensor<1xf32>
      %x = pg_tensor.unary exp %a : tensor<4xf32>
      func.return %x : tensor<4xf32>
    }""")
    assert [tensor_ops(k) for k in kernels(module)] == [["unary"]]


def test_only_arguments_returned_means_no_kernel():
    module = lower("""
    func.func @main(%a: tensor<4xf32>, %b: tensor<2xi32>) -> (tensor<2xi32>, tensor<4xf32>) {
      func.return %b, %a : tensor<2xi32>, tensor<4xf32>
    }""")
    assert kernels(module) == []
    main = main_of(module)
    assert [op.name for op in main.body.block.ops] == ["func.return"]


def test_deterministic_output():
    assert str(lower(SOFTMAX)) == str(lower(SOFTMAX))
    assert str(lower(MATMUL)) == str(lower(MATMUL))


def test_no_tensor_op_outside_kernels():
    module = lower(SOFTMAX)
    for op in main_of(module).walk():
        assert not isinstance(op, T.TensorOp)


def test_missing_main_and_empty_tensors_are_errors():
    with pytest.raises(PassFailedException, match=r"no func\.func @main"):
        lower("func.func @other() { func.return }")
    with pytest.raises(PassFailedException, match="no elements"):
        lower("""
        func.func @main(%a: tensor<0x4xf32>) -> tensor<0x4xf32> {
          %x = pg_tensor.unary exp %a : tensor<0x4xf32>
          func.return %x : tensor<0x4xf32>
        }""")


# ── a buffer limit (WebGPU's bindings) ───────────────────────────────────────


def _sum_of_inputs(n: int) -> str:
    args = ", ".join(f"%a{i}: tensor<4xf32>" for i in range(n))
    lines = [f"func.func @main({args}) -> tensor<4xf32> {{", "  %s0 = pg_tensor.binary add "
             "%a0, %a1 : tensor<4xf32>"]
    for i in range(2, n):
        lines.append(f"  %s{i - 1} = pg_tensor.binary add %s{i - 2}, %a{i} : tensor<4xf32>")
    lines += [f"  func.return %s{n - 2} : tensor<4xf32>", "}"]
    return "\n".join(lines)


@pytest.mark.parametrize("limit", [4, 5, 8])
def test_max_buffers_splits_wide_kernels_and_keeps_the_result(limit: int) -> None:
    import numpy as np

    from picograd.interpreter import run

    ctx = make_context()
    text = _sum_of_inputs(11)
    module = Parser(ctx, text).parse_module()
    ConvertTensorToSchedPass(max_buffers=limit).apply(ctx, module)
    module.verify()
    ks = kernels(module)
    launches = [op for op in main_of(module).body.block.ops if isinstance(op, S.LaunchOp)]
    assert len(launches) > 1  # (kernels that add alike are one kernel, launched again)
    assert all(len(k.body.block.args) <= limit for k in ks)
    inputs = [np.full(4, float(i), np.float32) for i in range(11)]
    (got,) = run(module, inputs)
    np.testing.assert_array_equal(np.ravel(got), np.full(4, 55.0, np.float32))
    assert len(kernels(lower(text))) == 1  # no limit: one fused kernel


def test_max_buffers_below_an_ops_operands_is_refused() -> None:
    ctx = make_context()
    module = Parser(ctx, _sum_of_inputs(3)).parse_module()
    # a diagnostic (opt-tool prints it), not group_kernels' ValueError (a traceback there)
    with pytest.raises(PassFailedException, match="max-buffers=2: a kernel needs up to 3"):
        ConvertTensorToSchedPass(max_buffers=2).apply(ctx, module)


# ── row-wise reduction fusion: what is not fused ─────────────────────────────


def _softmax(shape: str, axis: int, rows: str) -> str:
    full, row = f"tensor<{shape}xf32>", f"tensor<{rows}xf32>"
    return f"""
    func.func @main(%x: tensor<{shape}xf32>) -> tensor<{shape}xf32> {{
      %m = pg_tensor.reduce max %x {{axes = array<i64: {axis}>}} : {full} -> {row}
      %me = pg_tensor.expand %m : tensor<{rows}xf32> -> tensor<{shape}xf32>
      %d = pg_tensor.binary sub %x, %me : tensor<{shape}xf32>
      %e = pg_tensor.unary exp %d : tensor<{shape}xf32>
      %s = pg_tensor.reduce sum %e {{axes = array<i64: {axis}>}} : {full} -> {row}
      %se = pg_tensor.expand %s : tensor<{rows}xf32> -> tensor<{shape}xf32>
      %r = pg_tensor.binary div %e, %se : tensor<{shape}xf32>
      func.return %r : tensor<{shape}xf32>
    }}"""


def test_a_reduction_over_a_leading_axis_is_not_fused_into_a_full_shape_kernel():
    # the column loop would enclose the row's reductions: each would run once per element
    assert len(kernels(lower(_softmax("8x4", 0, "1x4")))) == 3
    assert len(kernels(lower(_softmax("4x8", 1, "4x1")))) == 1


def test_a_view_of_a_fused_value_is_not_fused():
    text = _softmax("4x4", 1, "4x1").replace(
        "func.return %r : tensor<4x4xf32>",
        "%t = pg_tensor.permute %r {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> "
        "tensor<4x4xf32>\n      func.return %t : tensor<4x4xf32>")
    ks = kernels(lower(text))  # the permute would ask for a row's sum in the column loop
    assert [tensor_ops(k)[-1] for k in ks] == ["reduce", "reduce", "permute"]


def test_a_reduce_read_by_two_kernels_or_returned_stays_a_buffer():
    text = _softmax("4x8", 1, "4x1").replace(
        "-> tensor<4x8xf32> {", "-> (tensor<4x8xf32>, tensor<4x1xf32>) {").replace(
        "func.return %r : tensor<4x8xf32>",
        "func.return %r, %m : tensor<4x8xf32>, tensor<4x1xf32>")
    assert [tensor_ops(k)[-1] for k in kernels(lower(text))] == ["reduce", "binary"]


def test_row_fusion_respects_the_buffer_limit():
    args = ", ".join(f"%a{i}: tensor<4x8xf32>" for i in range(4))
    adds = "\n".join(f"  %t{i} = pg_tensor.binary add %t{i - 1}, %a{i} : tensor<4x8xf32>"
                      for i in range(1, 4))
    text = f"""func.func @main(%x: tensor<4x8xf32>, {args}) -> tensor<4x8xf32> {{
      %s = pg_tensor.reduce sum %x {{axes = array<i64: 1>}} : tensor<4x8xf32> -> tensor<4x1xf32>
      %se = pg_tensor.expand %s : tensor<4x1xf32> -> tensor<4x8xf32>
      %t0 = pg_tensor.binary add %se, %a0 : tensor<4x8xf32>
    {adds}
      func.return %t3 : tensor<4x8xf32>
    }}"""
    assert len(kernels(lower(text))) == 1  # reads x, a0..a3
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    ConvertTensorToSchedPass(max_buffers=6).apply(ctx, module)
    assert len(kernels(module)) == 1
    module = Parser(ctx, text).parse_module()
    ConvertTensorToSchedPass(max_buffers=5).apply(ctx, module)
    ks = kernels(module)  # the split kernel (x, a0..a2 -> t2) still fuses the sum
    assert [len(k.args) for k in ks] == [5, 3] and tensor_ops(ks[0])[0] == "reduce"
    module = Parser(ctx, text).parse_module()
    ConvertTensorToSchedPass(max_buffers=3).apply(ctx, module)
    assert all(len(k.args) <= 3 for k in kernels(module))


# ── reuse: a fused producer is evaluated about once per element it produces ──

# relu(a) @ b: fused, the relu would run once per multiply-add (64 times per element)
RELU_MATMUL = MATMUL.replace(
    "  %a3 = pg_tensor.reshape %a :",
    "  %z = pg_tensor.const 0.0 : tensor<64x64xf32>\n"
    "  %ra = pg_tensor.binary max %a, %z : tensor<64x64xf32>\n"
    "  %a3 = pg_tensor.reshape %ra :")

# a 3-tap window over relu(x): each tap reads relu(x) at its own offset
RELU_TAPS = """
func.func @main(%x: tensor<10xf32>) -> tensor<8xf32> {
  %z = pg_tensor.const 0.0 : tensor<10xf32>
  %r = pg_tensor.binary max %x, %z : tensor<10xf32>
  %t0 = pg_tensor.slice %r {start = array<i64: 0>, step = array<i64: 1>}
      : tensor<10xf32> -> tensor<8xf32>
  %t1 = pg_tensor.slice %r {start = array<i64: 1>, step = array<i64: 1>}
      : tensor<10xf32> -> tensor<8xf32>
  %t2 = pg_tensor.slice %r {start = array<i64: 2>, step = array<i64: 1>}
      : tensor<10xf32> -> tensor<8xf32>
  %s = pg_tensor.binary add %t0, %t1 : tensor<8xf32>
  %u = pg_tensor.binary add %s, %t2 : tensor<8xf32>
  func.return %u : tensor<8xf32>
}
"""

# a scalar computed once and broadcast: the compilers hoist it, so it stays fused
SCALAR_BROADCAST = """
func.func @main(%x: tensor<64x64xf32>, %lr: tensor<f32>) -> tensor<64x64xf32> {
  %two = pg_tensor.const 2.0 : tensor<f32>
  %l = pg_tensor.binary mul %lr, %two : tensor<f32>
  %l2 = pg_tensor.reshape %l : tensor<f32> -> tensor<1x1xf32>
  %le = pg_tensor.expand %l2 : tensor<1x1xf32> -> tensor<64x64xf32>
  %y = pg_tensor.binary mul %x, %le : tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}
"""


def test_a_producer_reread_per_multiply_add_gets_its_own_kernel():
    relu, matmul = kernels(lower(RELU_MATMUL))
    assert tensor_ops(relu) == ["const", "binary"]
    assert "reduce" in tensor_ops(matmul) and "const" not in tensor_ops(matmul)


def test_a_producer_reread_by_every_tap_of_a_window_gets_its_own_kernel():
    relu, taps = kernels(lower(RELU_TAPS))
    assert tensor_ops(relu) == ["const", "binary"]
    assert tensor_ops(taps).count("slice") == 3 and "const" not in tensor_ops(taps)


def test_two_taps_and_a_broadcast_scalar_stay_fused():
    # two taps read each element about twice: within the bound (MAX_REUSE = 2)
    (k,) = kernels(lower(RELU_TAPS.replace(
        "  %u = pg_tensor.binary add %s, %t2 : tensor<8xf32>\n  func.return %u",
        "  func.return %s")))
    assert tensor_ops(k).count("slice") == 2
    (k,) = kernels(lower(SCALAR_BROADCAST))
    assert tensor_ops(k).count("binary") == 2


def test_reuse_splits_stay_within_the_buffer_limit():
    # the taps also read x and y: with relu(x) in a buffer of its own the tap kernel would read
    # three buffers and write a fourth, more than max-buffers=3 allows, so relu stays fused
    text = RELU_TAPS.replace(
        "func.func @main(%x: tensor<10xf32>)", "func.func @main(%x: tensor<10xf32>, "
        "%y: tensor<8xf32>)").replace(
        "  %u = pg_tensor.binary add %s, %t2 : tensor<8xf32>\n",
        "  %v = pg_tensor.binary add %s, %t2 : tensor<8xf32>\n"
        "  %x8 = pg_tensor.slice %x {start = array<i64: 1>, step = array<i64: 1>}\n"
        "      : tensor<10xf32> -> tensor<8xf32>\n"
        "  %w = pg_tensor.binary add %v, %x8 : tensor<8xf32>\n"
        "  %u = pg_tensor.binary add %w, %y : tensor<8xf32>\n")
    assert len(kernels(lower(text))) == 2
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    ConvertTensorToSchedPass(max_buffers=3).apply(ctx, module)
    (k,) = kernels(module)
    assert len(k.args) == 3 and "const" in tensor_ops(k)  # x, y, out; relu recomputed


# relu(x) is re-read by three taps (its own kernel, by the reuse rule) and also fused into
# a second returned kernel that reads x, y and w besides it
RELU_TAPS_AND_A_WIDE_READER = RELU_TAPS.replace(
    "func.func @main(%x: tensor<10xf32>) -> tensor<8xf32> {",
    "func.func @main(%x: tensor<10xf32>, %y: tensor<10xf32>, %w: tensor<10xf32>)"
    " -> (tensor<8xf32>, tensor<10xf32>) {").replace(
    "  func.return %u : tensor<8xf32>\n",
    "  %xr = pg_tensor.flip %x {axes = array<i64: 0>} : tensor<10xf32>\n"
    "  %a = pg_tensor.binary add %r, %xr : tensor<10xf32>\n"
    "  %b = pg_tensor.binary add %a, %y : tensor<10xf32>\n"
    "  %c = pg_tensor.binary add %b, %w : tensor<10xf32>\n"
    "  func.return %u, %c : tensor<8xf32>, tensor<10xf32>\n")


def test_a_reuse_split_keeps_every_kernel_that_fused_the_value_within_the_limit():
    # storing relu(x) would make the second kernel read relu's buffer as well as x, y and
    # w: five buffers with its output, over max-buffers=4, so relu stays fused in both
    ctx = make_context()
    module = Parser(ctx, RELU_TAPS_AND_A_WIDE_READER).parse_module()
    ConvertTensorToSchedPass(max_buffers=4).apply(ctx, module)
    module.verify()
    assert all(len(k.args) <= 4 for k in kernels(module))
    assert len(kernels(lower(RELU_TAPS_AND_A_WIDE_READER))) == 3  # no limit: relu stored


def _softmax_layers(n: int) -> str:
    """`n` softmaxes in a row (each followed by a sqrt): a consumed row reduction per layer,
    the case where row-wise fusion asks which kernels read each reduce."""
    t, r = "tensor<4x8xf32>", "tensor<4x1xf32>"
    lines = [f"func.func @main(%x0: {t}) -> {t} {{"]
    for i in range(n):
        lines += [f"  %m{i} = pg_tensor.reduce max %x{i} {{axes = array<i64: 1>}} : {t} -> {r}",
                  f"  %me{i} = pg_tensor.expand %m{i} : {r} -> {t}",
                  f"  %d{i} = pg_tensor.binary sub %x{i}, %me{i} : {t}",
                  f"  %e{i} = pg_tensor.unary exp %d{i} : {t}",
                  f"  %s{i} = pg_tensor.reduce sum %e{i} {{axes = array<i64: 1>}} : {t} -> {r}",
                  f"  %se{i} = pg_tensor.expand %s{i} : {r} -> {t}",
                  f"  %q{i} = pg_tensor.binary div %e{i}, %se{i} : {t}",
                  f"  %x{i + 1} = pg_tensor.unary sqrt %q{i} : {t}"]
    return "\n".join([*lines, f"  func.return %x{n} : {t}", "}"])


def test_grouping_walks_cones_in_proportion_to_the_layers(monkeypatch: pytest.MonkeyPatch):
    # Row-wise fusion once recomputed every kernel's cone for every reduce (N**2 cone walks
    # for N layers: 54, 594, 8514 at 4, 16, 64 layers; a 24-layer encoder spent 85 s there).
    walks = [0]
    cone = kernel_grouping._kernel

    def counted(*args, **kwargs):
        walks[0] += 1
        return cone(*args, **kwargs)

    monkeypatch.setattr(kernel_grouping, "_kernel", counted)
    counts = []
    for layers in (4, 16, 64):
        walks[0] = 0
        lower(_softmax_layers(layers))
        counts.append(walks[0])
    assert counts[2] <= 5 * counts[1] <= 25 * counts[0], counts
