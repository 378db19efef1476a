"""Float max/min on vector lanes (relu, maximum, minimum in kernels that `loop-optimize`
gives vector lanes): on the CPU targets the vector ops choose exactly what the scalar rule
and the interpreter choose — NaN wins, of two equal zeros the second — in whole vectors and
in the scalar remainder; and the kernels do compute them on vectors."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from picograd.frontend.realize import compiled

CPU_TARGETS = ["CPU:LLVM", "CPU:C"]
EDGES_A = [np.nan, -0.0, 0.0, np.inf, 0.0, -0.0, -np.inf, 1.0, np.nan, 2.0]
EDGES_B = [1.0, 0.0, -0.0, np.nan, 0.0, -0.0, np.nan, -1.0, np.nan, 2.0]


def _inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4, 40)).astype(np.float32)  # 40 columns: 2 vectors + 8
    b = rng.standard_normal((3, 4, 40)).astype(np.float32)
    for row in (0, 2):  # the edges in a whole vector, and in the scalar remainder
        a[1, row, 30 * (row // 2):30 * (row // 2) + 10] = EDGES_A
        b[1, row, 30 * (row // 2):30 * (row // 2) + 10] = EDGES_B
    return a, b, rng.standard_normal(4).astype(np.float32)


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.int32), want[~nan].view(np.int32))


CASES = {
    "relu_of_bias_add": (lambda a, b, c: (a + c.reshape(1, 4, 1)).relu(),
                         lambda a, b, c: np.maximum(a + c.reshape(1, 4, 1), np.float32(0))),
    "maximum": (lambda a, b, c: a.maximum(b), np.maximum),
    "minimum_times_two": (lambda a, b, c: a.minimum(b) * 2,
                          lambda a, b, c: np.minimum(a, b) * np.float32(2)),
}


@pytest.mark.parametrize("device", CPU_TARGETS)
@pytest.mark.parametrize("name", list(CASES))
def test_vector_max_min_choose_as_the_scalar_rule(device: str, name: str) -> None:
    ours, numpy = CASES[name]
    a, b, c = _inputs()
    got = ours(*(pg.Tensor(x, device=device) for x in (a, b, c))).numpy()
    with np.errstate(invalid="ignore"):
        want = numpy(a, b, c) if name != "maximum" else numpy(a, b)
    _same_bits(got, want)


@pytest.mark.parametrize("device", CPU_TARGETS)
def test_the_kernels_compute_max_on_vectors(device: str) -> None:
    # LLVM: a call of the vector helper, defined inline as a vector compare and select; C: a
    # bit blend of vector extension types by the lane masks
    a, _, c = _inputs()
    out = (pg.Tensor(a, device=device) + pg.Tensor(c, device=device).reshape(1, 4, 1)).relu()
    recipe = compiled(out)[0].recipe
    assert recipe is not None
    source = recipe[0]
    if device == "CPU:LLVM":
        assert '@"pg.fmax.v' in source  # v16f32 with AVX-512, v8f32 with AVX2
        assert "define internal" in source and "alwaysinline" in source
        assert "fcmp ogt <" in source and "fcmp uno <" in source
    else:
        assert "__typeof__(" in source and "pg_f32x" in source
