"""convert-loop-to-uop: accumulator identities, the flat kernel it builds (ranges nest, nothing
of pg_loop is left, loop-invariant code is hoisted only out of non-empty loops), and, run by the
stage-4 interpreter with and without hoisting, the same results as numpy."""

from __future__ import annotations

import numpy as np
import pytest
from ir_programs import matmul_text
from xdsl.dialects.builtin import IndexType, ModuleOp, f32, i1, i32
from xdsl.ir import Attribute
from xdsl.parser import Parser

from picograd import interpreter
from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import make_context
from picograd.dialects import pg_uop as U
from picograd.dialects.dtypes import ui8
from picograd.dialects.pg import ReduceKind
from picograd.passes.uop.convert_loop_to_uop import ConvertLoopToUopPass, reduce_identity


@pytest.mark.parametrize(("kind", "t", "want"), [
    (ReduceKind.SUM, f32, 0), (ReduceKind.PROD, f32, 1),
    (ReduceKind.MAX, f32, -np.inf), (ReduceKind.MIN, f32, np.inf),
    (ReduceKind.MAX, i32, -(2**31)), (ReduceKind.MIN, i32, 2**31 - 1),
    (ReduceKind.MAX, ui8, 0), (ReduceKind.MIN, ui8, 255),
    (ReduceKind.MAX, i1, False), (ReduceKind.MIN, i1, True),
    (ReduceKind.SUM, i1, 0), (ReduceKind.PROD, i1, 1),
])
def test_reduce_identity(kind: ReduceKind, t: Attribute, want: float) -> None:
    assert reduce_identity(kind, t) == want


def parse(text: str) -> tuple[ModuleOp, object]:
    ctx = make_context()
    return Parser(ctx, text).parse_module(), ctx


def to_uop(text: str, hoist: bool) -> ModuleOp:
    module, ctx = parse(text)
    run_pipeline(module, "convert-tensor-to-sched,convert-sched-to-loop", ctx=ctx)
    ConvertLoopToUopPass(hoist=hoist).apply(ctx, module)
    module.verify()
    return module


MATMUL = matmul_text(3, 5, 4)

NESTED_AND_MASKED = """
func.func @main(%x: tensor<2x3x4xi32>, %c: tensor<3x4xi1>) -> (tensor<1x3x1xi32>, tensor<1x6xi1>) {
  %s = pg_tensor.reduce max %x {axes = array<i64: 0, 2>} : tensor<2x3x4xi32> -> tensor<1x3x1xi32>
  %p = pg_tensor.pad %c low [1, 0] high [0, 2] value 0 : tensor<3x4xi1> -> tensor<4x6xi1>
  %a = pg_tensor.reduce prod %p {axes = array<i64: 0>} : tensor<4x6xi1> -> tensor<1x6xi1>
  func.return %s, %a : tensor<1x3x1xi32>, tensor<1x6xi1>
}
"""


@pytest.mark.parametrize("hoist", [True, False])
def test_matmul_matches_numpy(hoist: bool) -> None:
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((3, 5), np.float32), rng.standard_normal((5, 4), np.float32)
    (out,) = interpreter.run(to_uop(MATMUL, hoist), [a, b])
    np.testing.assert_allclose(out, np.ravel(a @ b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("hoist", [True, False])
def test_nested_reduces_and_masks_match_numpy(hoist: bool) -> None:
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4) * np.int32(-1)
    c = np.array([[1, 1, 0, 1], [1, 1, 1, 1], [1, 0, 1, 1]], bool)
    s, a = interpreter.run(to_uop(NESTED_AND_MASKED, hoist), [x, c])
    np.testing.assert_array_equal(s, np.ravel(x.max(axis=(0, 2))))
    # the padded first row is all false, so every product is false
    np.testing.assert_array_equal(a, np.zeros(6, bool))


def test_no_pg_loop_op_is_left_and_ranges_nest() -> None:
    module = to_uop(MATMUL, hoist=True)
    assert not [op for op in module.walk() if op.name.startswith("pg_loop.")]
    (kernel,) = [op for op in module.ops if isinstance(op, U.KernelOp)]
    assert not any(op.regions for op in kernel.body.block.ops)
    depth = 0
    for op in kernel.body.block.ops:
        depth += isinstance(op, U.RangeOp) - isinstance(op, U.EndOp)
        assert depth >= 0
    assert depth == 0


INVARIANT = """
pg_loop.kernel @k0(%a: !pg.buffer<4xf32>, %out: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %c = pg_loop.const 3
    pg_loop.range %j = 0 to N loop {
      %k = pg_loop.const 1
    }
    %v = pg_loop.load %a[%i] : !pg.buffer<4xf32> -> f32
    %two = pg_uop.const 2.0 : f32
    %w = pg_uop.binary mul %v, %two : f32
    pg_loop.store %w, %out[%i] : f32, !pg.buffer<4xf32>
  }
}
"""


def _flat(text: str, hoist: bool) -> list[str]:
    module, ctx = parse(text)
    ConvertLoopToUopPass(hoist=hoist).apply(ctx, module)
    module.verify()
    (kernel,) = [op for op in module.ops if isinstance(op, U.KernelOp)]
    return [op.name.removeprefix("pg_uop.") for op in kernel.body.block.ops]


def test_invariant_ops_are_hoisted_before_the_outer_range() -> None:
    ops = _flat(INVARIANT.replace("N", "2"), True)
    # the three constants first, then the loops; the load and its multiply stay inside
    assert ops == ["const", "const", "const", "range", "range", "end", "load", "binary",
                   "store", "end"]


def test_without_hoisting_every_op_stays_in_its_loop() -> None:
    ops = _flat(INVARIANT.replace("N", "2"), False)
    assert ops == ["range", "const", "range", "const", "end", "load", "const", "binary",
                   "store", "end"]


def test_nothing_is_hoisted_out_of_an_empty_range() -> None:
    ops = _flat(INVARIANT.replace("N", "0"), True)
    assert ops == ["const", "const", "range", "range", "const", "end", "load", "binary",
                   "store", "end"]


def test_index_ops_become_index_typed_uops() -> None:
    module = to_uop(MATMUL, hoist=True)
    binaries = [op for op in module.walk() if isinstance(op, U.BinaryOp)]
    assert any(isinstance(op.result.type, IndexType) for op in binaries)
    assert any(op.result.type == f32 for op in binaries)
