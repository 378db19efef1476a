"""Reference semantics of shifts, bitcast and iota: `alu`, the rule engine's constant folding,
and one program interpreted at every stage."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import f16, f32, i8, i16, i32, i64
from xdsl.parser import Parser

from picograd.compiler.pipelines import run_pipeline, stage_pipeline
from picograd.dialects import make_context
from picograd.dialects.dtypes import index, ui8
from picograd.dialects.pg import BinaryKind
from picograd.interpreter import alu, run
from picograd.passes.rules import scalar

SHL, SHR = BinaryKind.SHL, BinaryKind.SHR


@pytest.mark.parametrize(("t", "dtype"), [(i8, np.int8), (ui8, np.uint8), (i16, np.int16),
                                          (i32, np.int32), (i64, np.int64)])
def test_shift_amounts_are_taken_modulo_the_width(t, dtype) -> None:
    width = np.dtype(dtype).itemsize * 8
    x = np.array([-5, 7, 1, -1], dtype=dtype) if dtype != np.uint8 else np.array(
        [251, 7, 1, 255], dtype=dtype)
    n = np.array([1, width + 1, width - 1, -1 if dtype != np.uint8 else 255], dtype=dtype)
    masked = (n.astype(np.int64) & (width - 1)).astype(dtype)
    left, right = alu.binary(SHL, x, n, t), alu.binary(SHR, x, n, t)
    assert left.dtype == dtype and right.dtype == dtype
    np.testing.assert_array_equal(left, np.left_shift(x, masked))
    np.testing.assert_array_equal(right, np.right_shift(x, masked))  # arithmetic / logical
    for a, b in zip(x.tolist(), n.tolist(), strict=True):  # the folder agrees, per scalar
        assert scalar.binary(SHL, a, b, t) == int(alu.binary(SHL, dtype(a), dtype(b), t))
        assert scalar.binary(SHR, a, b, t) == int(alu.binary(SHR, dtype(a), dtype(b), t))


def test_index_shifts_and_scalars() -> None:
    assert alu.binary(SHL, 3, 2, index) == 12 and alu.binary(SHR, -8, 1, index) == -4
    assert alu.binary(SHL, 1, 64, index) == 1  # modulo 64
    assert alu.binary(SHR, np.int32(-8), np.int32(33), i32) == -4


def test_bitcast_is_a_view() -> None:
    x = np.array([1.0, -0.0, np.inf], np.float32)
    np.testing.assert_array_equal(alu.bitcast(x, i32), x.view(np.int32))
    assert alu.bitcast(np.float16(1.0), i16) == np.float16(1.0).view(np.int16)
    assert alu.bitcast(np.int8(-1), ui8) == 255
    assert alu.bitcast(np.int32(0x3F800000), f32) == np.float32(1.0)
    assert alu.bitcast(np.int16(0x3C00), f16) == np.float16(1.0)


PROGRAM = """
func.func @main(%x: tensor<2x3xf32>, %n: tensor<2x3xi32>) -> (tensor<2x3xi32>, tensor<2x3xf32>) {
  %b = pg_tensor.bitcast %x : tensor<2x3xf32> to tensor<2x3xi32>
  %k = pg_tensor.iota {axis = 1} : tensor<2x3xi32>
  %r = pg_tensor.iota {axis = 0} : tensor<3x2xi32>
  %t = pg_tensor.permute %r {perm = array<i64: 1, 0>} : tensor<3x2xi32> -> tensor<2x3xi32>
  %s = pg_tensor.binary shl %b, %n : tensor<2x3xi32>
  %u = pg_tensor.binary shr %s, %k : tensor<2x3xi32>
  %v = pg_tensor.binary xor %u, %t : tensor<2x3xi32>
  %f = pg_tensor.bitcast %v : tensor<2x3xi32> to tensor<2x3xf32>
  func.return %v, %f : tensor<2x3xi32>, tensor<2x3xf32>
}
"""


@pytest.mark.parametrize("stage", ["tensor", "sched", "loop", "uop"])
def test_every_stage_interprets_bit_ops(stage: str) -> None:
    module = Parser(make_context(), PROGRAM).parse_module()
    if stage != "tensor":
        run_pipeline(module, stage_pipeline(stage))
    x = np.array([[1.0, -2.0, 0.5], [3.0, -0.0, 7.0]], np.float32)
    n = np.array([[0, 1, 33], [-1, 4, 31]], np.int32)
    got_i, got_f = run(module, [x, n])
    cols, rows = np.indices((2, 3))[1], np.indices((3, 2))[0].T
    want = (np.left_shift(x.view(np.int32), n & 31) >> (cols & 31)) ^ rows
    np.testing.assert_array_equal(got_i.ravel(), want.ravel())  # buffers are flat after sched
    np.testing.assert_array_equal(got_f.view(np.int32).ravel(), want.ravel())
