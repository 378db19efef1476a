"""convert-sched-to-loop: every movement op, pad and reduce lowered to loops computes what numpy
computes (run by the stage-3 interpreter, with no simplification after the pass), the output
holds no stage-2 op, @main is untouched, and malformed kernels fail with a message."""

# ruff: noqa: E501  (IR text is kept one op per line, as opt-tool prints it)

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from picograd import interpreter
from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import make_context
from picograd.dialects import pg_loop as L
from picograd.passes.loop.convert_sched_to_loop import ConvertSchedToLoopPass

RNG = np.random.default_rng(1)


def to_loop(text: str) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    return run_pipeline(module, "convert-tensor-to-sched,convert-sched-to-loop", ctx=ctx,
                        verify_each=True)


def graph(x_type: str, out_type: str, body: str) -> str:
    return (f"func.func @main(%x: {x_type}) -> {out_type} {{\n{body}\n"
            f"  func.return %r : {out_type}\n}}")


# (name, input array, pg_tensor body computing %r from %x, result type, numpy reference)
CASES: list[tuple[str, np.ndarray, str, str, Callable[[np.ndarray], np.ndarray]]] = [
    ("reshape_across_groups", np.arange(24, dtype=np.float32).reshape(2, 3, 4),
     "  %r = pg_tensor.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>",
     "tensor<4x6xf32>", lambda x: x.reshape(4, 6)),
    ("reshape_split_and_merge", np.arange(24, dtype=np.int32).reshape(6, 4),
     "  %r = pg_tensor.reshape %x : tensor<6x4xi32> -> tensor<2x1x3x4xi32>",
     "tensor<2x1x3x4xi32>", lambda x: x.reshape(2, 1, 3, 4)),
    ("permute_3d", np.arange(24, dtype=np.float32).reshape(2, 3, 4),
     "  %r = pg_tensor.permute %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>",
     "tensor<4x2x3xf32>", lambda x: x.transpose(2, 0, 1)),
    ("expand_two_dims", np.arange(3, dtype=np.float32).reshape(1, 3, 1),
     "  %r = pg_tensor.expand %x : tensor<1x3x1xf32> -> tensor<2x3x4xf32>",
     "tensor<2x3x4xf32>", lambda x: np.broadcast_to(x, (2, 3, 4))),
    ("slice_with_steps", np.arange(63, dtype=np.float32).reshape(7, 9),
     "  %r = pg_tensor.slice %x {start = array<i64: 2, 1>, step = array<i64: 2, 3>} : tensor<7x9xf32> -> tensor<3x3xf32>",
     "tensor<3x3xf32>", lambda x: x[2::2, 1::3]),
    ("flip_two_axes", np.arange(24, dtype=np.float32).reshape(2, 3, 4),
     "  %r = pg_tensor.flip %x {axes = array<i64: 0, 2>} : tensor<2x3x4xf32>",
     "tensor<2x3x4xf32>", lambda x: x[::-1, :, ::-1]),
    ("pad_both_sides", np.arange(6, dtype=np.float32).reshape(2, 3),
     "  %r = pg_tensor.pad %x low [1, 0] high [2, 3] value -1.0 : tensor<2x3xf32> -> tensor<5x6xf32>",
     "tensor<5x6xf32>", lambda x: np.pad(x, ((1, 2), (0, 3)), constant_values=-1)),
    ("pad_of_reshape", np.arange(6, dtype=np.int32),
     "  %v = pg_tensor.reshape %x : tensor<6xi32> -> tensor<2x3xi32>\n"
     "  %r = pg_tensor.pad %v low [1, 1] high [1, 1] value 7 : tensor<2x3xi32> -> tensor<4x5xi32>",
     "tensor<4x5xi32>", lambda x: np.pad(x.reshape(2, 3), 1, constant_values=7)),
    ("pad_over_alu", np.array([0.5, 1.0, 2.0], np.float32),
     "  %e = pg_tensor.unary sqrt %x : tensor<3xf32>\n"
     "  %r = pg_tensor.pad %e low [2] high [1] value 9.0 : tensor<3xf32> -> tensor<6xf32>",
     "tensor<6xf32>", lambda x: np.pad(np.sqrt(x), (2, 1), constant_values=9)),
    ("pad_of_pad", np.array([1.0, 2.0], np.float32),
     "  %p = pg_tensor.pad %x low [1] high [0] value 3.0 : tensor<2xf32> -> tensor<3xf32>\n"
     "  %r = pg_tensor.pad %p low [0] high [2] value 4.0 : tensor<3xf32> -> tensor<5xf32>",
     "tensor<5xf32>", lambda x: np.array([3, 1, 2, 4, 4], np.float32)),
    ("bool_pad", np.array([True, False]),
     "  %r = pg_tensor.pad %x low [1] high [1] value 1 : tensor<2xi1> -> tensor<4xi1>",
     "tensor<4xi1>", lambda x: np.pad(x, 1, constant_values=True)),
    ("reduce_inner_keepdims", np.arange(12, dtype=np.float32).reshape(3, 4),
     "  %r = pg_tensor.reduce sum %x {axes = array<i64: 1>} : tensor<3x4xf32> -> tensor<3x1xf32>",
     "tensor<3x1xf32>", lambda x: x.sum(axis=1, keepdims=True)),
    ("reduce_outer", np.arange(12, dtype=np.int32).reshape(3, 4) - 5,
     "  %r = pg_tensor.reduce prod %x {axes = array<i64: 0>} : tensor<3x4xi32> -> tensor<1x4xi32>",
     "tensor<1x4xi32>", lambda x: x.prod(axis=0, keepdims=True, dtype=np.int32)),
    ("reduce_outer_and_inner", RNG.standard_normal((2, 3, 4)).astype(np.float32),
     "  %r = pg_tensor.reduce max %x {axes = array<i64: 0, 2>} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>",
     "tensor<1x3x1xf32>", lambda x: x.max(axis=(0, 2), keepdims=True)),
    ("reduce_all", RNG.standard_normal((2, 3)).astype(np.float32),
     "  %r = pg_tensor.reduce min %x {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<1x1xf32>",
     "tensor<1x1xf32>", lambda x: x.min(keepdims=True)),
    ("reduce_of_view", np.arange(12, dtype=np.float32).reshape(3, 4),
     "  %t = pg_tensor.permute %x {perm = array<i64: 1, 0>} : tensor<3x4xf32> -> tensor<4x3xf32>\n"
     "  %f = pg_tensor.flip %t {axes = array<i64: 1>} : tensor<4x3xf32>\n"
     "  %r = pg_tensor.reduce sum %f {axes = array<i64: 0>} : tensor<4x3xf32> -> tensor<1x3xf32>",
     "tensor<1x3xf32>", lambda x: x.T[:, ::-1].sum(axis=0, keepdims=True)),
    ("reduce_under_pad", np.arange(6, dtype=np.float32).reshape(2, 3),
     "  %s = pg_tensor.reduce sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>\n"
     "  %r = pg_tensor.pad %s low [1, 0] high [0, 1] value -2.0 : tensor<2x1xf32> -> tensor<3x2xf32>",
     "tensor<3x2xf32>",
     lambda x: np.pad(x.sum(axis=1, keepdims=True), ((1, 0), (0, 1)), constant_values=-2)),
]


@pytest.mark.parametrize(("name", "x", "body", "out_type", "reference"), CASES,
                         ids=[c[0] for c in CASES])
def test_lowered_kernel_matches_numpy(name: str, x: np.ndarray, body: str, out_type: str,
                                      reference: Callable[[np.ndarray], np.ndarray]) -> None:
    x_type = "tensor<{}x{}>".format("x".join(map(str, x.shape)),
                                    {"float32": "f32", "int32": "i32", "bool": "i1"}[x.dtype.name])
    module = to_loop(graph(x_type, out_type, body))
    (out,) = interpreter.run(module, [x])
    want = np.ravel(reference(x))
    assert out.dtype == want.dtype
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_output_holds_only_loops_and_schedule() -> None:
    module = to_loop(graph("tensor<4x8xf32>", "tensor<4x1xf32>",
                           "  %r = pg_tensor.reduce sum %x {axes = array<i64: 1>} : "
                           "tensor<4x8xf32> -> tensor<4x1xf32>"))
    names = {op.name for op in module.walk()}
    assert not any(n.startswith("pg_tensor.") for n in names)
    assert not names & {"pg_sched.kernel", "pg_sched.load", "pg_sched.store"}
    assert "pg_loop.kernel" in names and "pg_loop.reduce" in names
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    assert [op.name for op in main.body.block.ops] == ["pg_sched.alloc", "pg_sched.launch",
                                                       "func.return"]


def test_size_one_dims_get_no_range() -> None:
    module = to_loop(graph("tensor<1x5x1xf32>", "tensor<1x5x1xf32>",
                           "  %r = pg_tensor.unary neg %x : tensor<1x5x1xf32>"))
    ranges = [op for op in module.walk() if isinstance(op, L.RangeOp)]
    assert [(r.start.data, r.end.data) for r in ranges] == [(0, 5)]


def test_a_shared_value_is_computed_once_per_element() -> None:
    """The walk reuses what it emitted: x*x + x*x loads x once and multiplies once."""
    module = to_loop(graph("tensor<8xf32>", "tensor<8xf32>",
                           "  %m = pg_tensor.binary mul %x, %x : tensor<8xf32>\n"
                           "  %r = pg_tensor.binary add %m, %m : tensor<8xf32>"))
    names = [op.name for op in module.walk()]
    assert names.count("pg_loop.load") == 1
    assert names.count("pg_uop.binary") == 2


def test_an_op_it_cannot_lower_fails_with_its_name() -> None:
    text = """
    pg_sched.kernel @k0(%a: !pg.buffer<4xf32>, %out: !pg.buffer<4xf32>) {
      %x = pg_sched.load %a : !pg.buffer<4xf32> -> tensor<4xf32>
      %y = "test.op"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      pg_sched.store %y, %out : tensor<4xf32>, !pg.buffer<4xf32>
    }"""
    ctx = make_context()
    ctx.allow_unregistered = True
    module = Parser(ctx, text).parse_module()
    with pytest.raises(PassFailedException, match=r"cannot lower test\.op"):
        ConvertSchedToLoopPass().apply(ctx, module)


def test_a_multi_axis_sum_accumulates_once_in_row_major_order() -> None:
    """One accumulator over both axes: ((((0 + 1e8) + 1) + 1) - 1e8) + 1 + 1 = 2 in f32;
    one accumulator per axis would give (1e8 + 1 + 1) + (-1e8 + 1 + 1) = 0."""
    module = to_loop(graph("tensor<2x3xf32>", "tensor<1x1xf32>",
                           "  %r = pg_tensor.reduce sum %x {axes = array<i64: 0, 1>} : "
                           "tensor<2x3xf32> -> tensor<1x1xf32>"))
    assert len([op for op in module.walk() if isinstance(op, L.ReduceOp)]) == 1
    x = np.array([[1e8, 1, 1], [-1e8, 1, 1]], np.float32)
    np.testing.assert_array_equal(interpreter.run(module, [x])[0], [2.0])


def test_reduced_axes_are_walked_in_the_listed_order() -> None:
    """axes [2, 0]: axis 2 is the outer one of the accumulation, as stage 1 defines it."""
    text = graph("tensor<2x1x3xf32>", "tensor<1x1x1xf32>",
                 "  %r = pg_tensor.reduce sum %x {axes = array<i64: 2, 0>} : "
                 "tensor<2x1x3xf32> -> tensor<1x1x1xf32>")
    x = np.array([[[1e8, 1, 1]], [[-1e8, 1, 1]]], np.float32)
    stage1 = interpreter.run(Parser(make_context(), text).parse_module(), [x])[0]
    np.testing.assert_array_equal(interpreter.run(to_loop(text), [x])[0], np.ravel(stage1))


def test_a_float_sum_over_size_one_axes_turns_negative_zero_positive() -> None:
    module = to_loop(graph("tensor<1x2xf32>", "tensor<1x2xf32>",
                           "  %r = pg_tensor.reduce sum %x {axes = array<i64: 0>} : "
                           "tensor<1x2xf32> -> tensor<1x2xf32>"))
    (out,) = interpreter.run(module, [np.array([[-0.0, -1.5]], np.float32)])
    np.testing.assert_array_equal(out, [0.0, -1.5])
    assert not np.signbit(out[0])
