"""One pg_tensor program interpreted at stages 1, 2, 3 and 4 gives numpy's answer.

Each program is lowered with the default CPU pipeline up to the end of each stage
(`stage_pipeline`), and every stage's result is compared with a numpy formula.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.parser import Parser

from picograd.compiler.pipelines import run_pipeline, stage_pipeline
from picograd.dialects import make_context
from picograd.interpreter import run


@dataclass
class Case:
    text: str
    inputs: Sequence[np.ndarray]
    expected: Callable[..., Sequence[np.ndarray]]


RNG = np.random.default_rng(0)

MATVEC = Case(  # tests/filecheck/tools/pipeline-llvm.mlir
    """
    func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
      %bb = pg_tensor.reshape %b : tensor<8xf32> -> tensor<1x8xf32>
      %be = pg_tensor.expand %bb : tensor<1x8xf32> -> tensor<4x8xf32>
      %m = pg_tensor.binary mul %a, %be : tensor<4x8xf32>
      %s = pg_tensor.reduce sum %m {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
      func.return %s : tensor<4x1xf32>
    }
    """,
    [RNG.integers(-4, 5, (4, 8)).astype(np.float32), RNG.integers(-4, 5, 8).astype(np.float32)],
    # Small integers: every partial sum is exact, so any summation order gives these bits.
    lambda a, b: [(a * b).sum(axis=1, keepdims=True)],
)

VIEWS = Case(  # flip, pad (masked loads), permute, slice; C integer division; max reduce
    """
    func.func @main(%a: tensor<2x3xi32>) -> (tensor<4x4xi32>, tensor<1x4xi32>) {
      %f = pg_tensor.flip %a {axes = array<i64: 1>} : tensor<2x3xi32>
      %p = pg_tensor.pad %f low [1, 0] high [1, 1] value 5 : tensor<2x3xi32> -> tensor<4x4xi32>
      %t = pg_tensor.permute %p {perm = array<i64: 1, 0>} : tensor<4x4xi32> -> tensor<4x4xi32>
      %c = pg_tensor.const -3 : tensor<4x4xi32>
      %d = pg_tensor.binary div %t, %c : tensor<4x4xi32>
      %m = pg_tensor.reduce max %d {axes = array<i64: 0>} : tensor<4x4xi32> -> tensor<1x4xi32>
      func.return %d, %m : tensor<4x4xi32>, tensor<1x4xi32>
    }
    """,
    [np.array([[-7, 8, 1], [4, -5, 6]], dtype=np.int32)],
    lambda a: _views(a),
)


def _views(a: np.ndarray) -> list[np.ndarray]:
    p = np.pad(a[:, ::-1], ((1, 1), (0, 1)), constant_values=5).T
    d = (np.sign(p) * (np.abs(p) // 3) * -1).astype(np.int32)  # C division truncates
    return [d, d.max(axis=0, keepdims=True)]


SELECT = Case(  # cmp, where, cast to bool and float, a bool reduction, slice with a step
    """
    func.func @main(%a: tensor<6xf32>, %b: tensor<6xf32>) -> (tensor<3xf64>, tensor<1xi1>) {
      %lt = pg_tensor.cmp lt %a, %b : tensor<6xf32> -> tensor<6xi1>
      %w = pg_tensor.where %lt, %a, %b : tensor<6xi1>, tensor<6xf32>
      %s = pg_tensor.slice %w {start = array<i64: 1>, step = array<i64: 2>}
        : tensor<6xf32> -> tensor<3xf32>
      %x = pg_tensor.cast %s : tensor<3xf32> to tensor<3xf64>
      %nz = pg_tensor.cast %a : tensor<6xf32> to tensor<6xi1>
      %all = pg_tensor.reduce min %nz {axes = array<i64: 0>} : tensor<6xi1> -> tensor<1xi1>
      func.return %x, %all : tensor<3xf64>, tensor<1xi1>
    }
    """,
    [np.array([1.5, -2, 0, 3, -0.0, 7], dtype=np.float32),
     np.array([2, -3, 1, 3, 4, 6], dtype=np.float32)],
    lambda a, b: [np.minimum(a, b)[1::2].astype(np.float64), np.array([np.all(a != 0)])],
)


@pytest.mark.parametrize("case", [MATVEC, VIEWS, SELECT], ids=["matvec", "views", "select"])
@pytest.mark.parametrize("stage", ["tensor", "sched", "loop", "uop"])
def test_every_stage_gives_numpys_answer(case: Case, stage: str) -> None:
    module = Parser(make_context(), case.text).parse_module()
    if stage != "tensor":
        run_pipeline(module, stage_pipeline(stage), verify_each=True)
    expected = case.expected(*case.inputs)
    results = run(module, case.inputs)
    assert len(results) == len(expected)
    for got, want in zip(results, expected, strict=True):
        assert got.dtype == want.dtype
        if stage == "tensor":
            assert got.shape == want.shape
        np.testing.assert_array_equal(np.ravel(got), np.ravel(want))
