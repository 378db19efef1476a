"""cumprod (gradient with zeros), cummax/cummin (values and indices), logcumsumexp and
cumsum of 0-d tensors against torch on every device."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from tests.e2e.helpers import assert_forward_and_grads_match

torch = pytest.importorskip("torch", reason="torch is the oracle of the scan tests")

rng = np.random.default_rng(9)
NAN = np.float32("nan")


def _with_zeros(*shape: int) -> np.ndarray:
    a = rng.uniform(0.5, 1.5, shape).astype(np.float32)
    a.reshape(-1)[1] = 0  # one zero in the first row, two in the second: torch's cases
    a.reshape(a.shape[0], -1)[1, [0, 2]] = 0
    return a


@pytest.mark.parametrize(("shape", "dim"), [((3, 5), 1), ((4, 3), 0), ((2, 40), 1)])
def test_cumprod_with_zeros(device: str, shape: tuple[int, int], dim: int) -> None:
    a = _with_zeros(*shape)
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    assert_forward_and_grads_match(x.cumprod(dim), tx.cumprod(dim), [x], [tx],
                                   rng.standard_normal(shape).astype(np.float32), device)


def test_cumprod_ints_bools_and_0d(device: str) -> None:
    a = rng.integers(-3, 4, (3, 5)).astype(np.int32)
    got = pg.Tensor(a, device=device).cumprod(1)
    assert got.dtype == pg.int32
    np.testing.assert_array_equal(got.numpy(), torch.tensor(a).cumprod(1).numpy())
    b = np.array([True, True, False, True])
    np.testing.assert_array_equal(pg.Tensor(b, device=device).cumprod(0).numpy(),
                                  torch.tensor(b).cumprod(0).numpy())
    assert float(pg.Tensor(2.5, device=device).cumprod(0)) == 2.5
    assert pg.Tensor(2.5, device=device).cumsum(0).shape == ()
    assert float(pg.Tensor(2.5, device=device).cumsum(0)) == 2.5
    assert pg.Tensor(np.zeros((2, 0), np.float32), device=device).cumprod(1).shape == (2, 0)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("dim", [0, 1])
def test_cum_extreme_values_indices_grad(device: str, op: str, dim: int) -> None:
    a = np.array([[1, 3, 3, 2, 5, NAN, 1, NAN], [0, -1, -1, 4, NAN, 2, -3, 0],
                  [2, 2, 0, 7, 7, 1, 9, 9]], np.float32)
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    values, idx = getattr(x, op)(dim)
    tv, ti = getattr(tx, op)(dim)
    np.testing.assert_array_equal(idx.numpy(), ti.numpy())
    assert idx.dtype == pg.int32
    assert_forward_and_grads_match(values, tv, [x], [tx],
                                   rng.standard_normal(a.shape).astype(np.float32), device)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool"])
def test_cum_extreme_ints_long_axis(device: str, op: str, dtype: str) -> None:
    a = rng.integers(0, 5, (70, 2)).astype(dtype)  # 70 > one scan block
    values, idx = getattr(pg.Tensor(a, device=device), op)(0)
    tv, ti = getattr(torch.tensor(a), op)(0)
    np.testing.assert_array_equal(values.numpy(), tv.numpy())
    np.testing.assert_array_equal(idx.numpy(), ti.numpy())


@pytest.mark.parametrize(("shape", "dim"), [((3, 6), 1), ((70, 2), 0), ((5,), 0)])
def test_logcumsumexp(device: str, shape: tuple[int, ...], dim: int) -> None:
    a = (rng.standard_normal(shape) * 4).astype(np.float32)
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    assert_forward_and_grads_match(x.logcumsumexp(dim), tx.logcumsumexp(dim), [x], [tx],
                                   rng.standard_normal(shape).astype(np.float32), device)


def test_logcumsumexp_far_apart_and_infinite(device: str) -> None:
    a = np.array([-1000, 0, -np.inf, 3, 200, np.inf], np.float32)
    np.testing.assert_allclose(pg.Tensor(a, device=device).logcumsumexp(0).numpy(),
                               torch.tensor(a).logcumsumexp(0).numpy(), rtol=1e-6)
    ints = pg.Tensor(np.array([1, 2, 3], np.int32), device=device).logcumsumexp(0)
    assert ints.dtype == pg.float32
    np.testing.assert_allclose(ints.numpy(), torch.tensor([1.0, 2, 3]).logcumsumexp(0).numpy(),
                               rtol=1e-6)
