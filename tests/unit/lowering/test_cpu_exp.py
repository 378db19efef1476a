"""The CPU targets' f32 `exp` (LLVM: `picograd/lowering/llvm/math.py`; C: the same function
printed as `pg_exp_*` helpers, `picograd/lowering/c/printer.py`): within 2 ulp of the
correctly rounded result across f32, exact at the edges (0, inf, NaN, overflow, underflow,
subnormals), and the same bits in a vectorised loop body as in its scalar remainder."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg


@pytest.fixture(params=["CPU:LLVM", "CPU:C"])
def cpu(request: pytest.FixtureRequest) -> str:
    return request.param


def _exp(x: np.ndarray, device: str) -> np.ndarray:
    return pg.Tensor(x, device=device).exp().numpy()


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


def _reference(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.exp(x.astype(np.float64)).astype(np.float32)


def test_within_two_ulp_over_the_whole_range(cpu: str) -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-104, 89, 200_000), rng.uniform(-1, 1, 50_000),
                        rng.uniform(-1e-6, 1e-6, 1000)]).astype(np.float32)
    got, want = _exp(x, cpu), _reference(x)
    assert _ulps(got, want).max() <= 2


@pytest.mark.parametrize(("x", "want"), [
    (0.0, 1.0), (-0.0, 1.0), (np.inf, np.inf), (-np.inf, 0.0), (100.0, np.inf),
    (88.73, np.inf), (-104.0, 0.0), (-200.0, 0.0), (1.0, np.float32(np.e)),
])
def test_edges(cpu: str, x: float, want: float) -> None:
    got = _exp(np.array([x], np.float32), cpu)[0]
    assert got == np.float32(want)


def test_nan_stays_nan_and_the_largest_results_stay_finite(cpu: str) -> None:
    got = _exp(np.array([np.nan, 88.72, 88.7228], np.float32), cpu)
    assert np.isnan(got[0]) and np.isfinite(got[1:]).all()


def test_subnormal_results_round_once(cpu: str) -> None:
    x = np.linspace(-103.9, -87.4, 5001, dtype=np.float32)  # results below 2^-126
    got, want = _exp(x, cpu), _reference(x)
    assert (got > 0).all() and _ulps(got, want).max() <= 1


def test_vector_body_and_scalar_remainder_agree(cpu: str) -> None:
    rng = np.random.default_rng(1)
    head = rng.uniform(-20, 20, 1024).astype(np.float32)
    x = np.concatenate([head, head[:7]])  # 1031: the last 7 run outside whole vectors
    got = _exp(x, cpu)
    assert got[1024:].view(np.int32).tolist() == got[:7].view(np.int32).tolist()
