"""Long float sums are as accurate as torch's: within a few units in the last place of the
exact sum, where one float32 accumulator per lane drifts by a hundred (and stops growing at
2**24 when it adds ones). `loop-optimize` adds them up in chunks (docs/design.md, "Float
sums: accumulation and error bound")."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg

torch = pytest.importorskip("torch", reason="torch is the oracle of the accuracy tests")

ULPS = 8  # the bound the tests hold every sum to (torch: within 1 here)


def _ulps(got: np.ndarray | float, exact: np.ndarray | float) -> float:
    exact = np.asarray(exact)
    return float(np.max(np.abs(np.asarray(got, np.float64) - exact)
                        / np.spacing(np.abs(exact).astype(np.float32))))


@pytest.mark.parametrize("n", [2**24, 7 * 10**6])
def test_a_long_sum_is_within_a_few_ulps(device: str, n: int) -> None:
    a = np.random.default_rng(n).random(n, dtype=np.float32)
    exact = a.astype(np.float64).sum()
    assert _ulps(pg.Tensor(a, device=device).sum().numpy(), exact) <= ULPS
    assert _ulps(float(torch.from_numpy(a).sum()), exact) <= ULPS  # the bound is torch's too


def test_long_rows_are_within_a_few_ulps(device: str) -> None:
    b = np.random.default_rng(1).standard_normal((8, 2**21), dtype=np.float32) + 0.5
    exact = b.astype(np.float64).sum(axis=1)
    assert _ulps(pg.Tensor(b, device=device).sum(axis=1).numpy(), exact) <= ULPS


def test_the_mean_of_2_to_the_25_ones_is_one(device: str) -> None:
    assert pg.Tensor.ones(2**25, device=device).mean().item() == 1.0


def test_a_prime_length_reduction_is_whole(device: str) -> None:
    """5000011 (a prime) has no chunks to split into: it is padded with each reduce's
    identity. (One WebGPU work group of 64 used to stop after 64 x 65535 elements.)"""
    a = np.random.default_rng(2).random(5_000_011, dtype=np.float32) - 0.25
    a[-1] = 7.0  # the largest, and the last element read
    x = pg.Tensor(a, device=device)
    assert _ulps(x.sum().numpy(), a.astype(np.float64).sum()) <= ULPS
    assert x.max().item() == 7.0 and x.min().item() == a.min()
    assert x.argmax().item() == 5_000_010


@pytest.mark.parametrize("n", [2**24 + 3, 1_000_003, 227_451])
def test_awkward_lengths_of_a_constant_stay_within_ulps_times_log2(device: str, n: int) -> None:
    """A sum of n copies of 0.1 (every rounding error of one sign: the worst case for one
    accumulator). 2**24 + 3 = 1549 x 10831 and 227451 = 21 x 10831 split at their divisors
    left 10831 terms (a prime count nothing chunks) per partial: 1e-4 relative, 1300 ulps;
    1000003 is a prime. The bound: 4 ulps per halving, as a pairwise sum's."""
    a = np.full(n, 0.1, np.float32)
    exact = a.astype(np.float64).sum()
    assert _ulps(pg.Tensor(a, device=device).sum().numpy(), exact) <= 4 * np.log2(n)
