"""amax / amin / aminmax, var_mean / std_mean, sum / prod / mean with dtype=, nansum /
nanmean and count_nonzero (ops_stats_extra.py) against torch, forward and backward, on every
device; ties share the gradient as torch's amax does."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import picograd as pg

from .helpers import assert_forward_and_grads_match

# ties along both dims, and a -0.0 next to a 0.0
V = np.array([[1.0, 5.0, 5.0, -2.0], [3.0, 0.0, -0.0, 2.0], [-4.0, -4.0, 7.0, 7.0]],
             np.float32)


def _pair(device: str, values: np.ndarray = V) -> tuple[pg.Tensor, torch.Tensor]:
    return (pg.Tensor(values, device=device, requires_grad=True),
            torch.tensor(values, requires_grad=True))


@pytest.mark.parametrize("name", ["amax", "amin"])
@pytest.mark.parametrize("dim", [(), 0, 1, (0, 1), -1])
def test_amax_amin(device: str, name: str, dim: int | tuple[int, ...]) -> None:
    x, tx = _pair(device)
    out, want = getattr(x, name)(dim), getattr(tx, name)(dim)
    upstream = np.arange(1, 1 + want.numel(), dtype=np.float32).reshape(want.shape)
    assert_forward_and_grads_match(out, want, [x], [tx], upstream, device)
    kept = getattr(x, name)(dim, keepdim=True)
    assert kept.shape == tuple(getattr(tx, name)(dim, keepdim=True).shape)


def test_amax_nan_and_empty(device: str) -> None:
    v = np.array([[1.0, math.nan, 3.0], [2.0, 2.0, -1.0]], np.float32)
    x, tx = _pair(device, v)
    np.testing.assert_array_equal(x.amax(1).numpy(), tx.amax(1).detach().numpy())
    np.testing.assert_array_equal(x.amin().numpy(), tx.amin().detach().numpy())
    with pytest.raises(pg.ShapeError):
        pg.zeros(0, 3, device=device).amax(0)
    assert pg.zeros(0, 3, device=device).amax(1).shape == (0,)


@pytest.mark.parametrize("dim", [None, 1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_aminmax(device: str, dim: int | None, keepdim: bool) -> None:
    x, tx = _pair(device)
    got, want = x.aminmax(dim=dim, keepdim=keepdim), tx.aminmax(dim=dim, keepdim=keepdim)
    lo, hi = got
    assert got.min is lo and got.max is hi
    for ours, theirs in ((lo, want.min), (hi, want.max)):
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.detach().numpy())
    up = np.ones(tuple(want.max.shape), np.float32)
    assert_forward_and_grads_match(hi - lo, want.max - want.min, [x], [tx], up, device)


@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": 1}, {"dim": (0, 1), "keepdim": True},
                                    {"dim": 0, "correction": 0}, {"dim": 1, "unbiased": False}])
def test_var_std_mean(device: str, fn: str, kwargs: dict) -> None:
    rng = np.random.default_rng(0)
    v = rng.standard_normal((3, 5)).astype(np.float32)
    x, tx = _pair(device, v)
    (a, m), (ta, tm) = getattr(x, fn)(**kwargs), getattr(torch, fn)(tx, **kwargs)
    up = rng.standard_normal(tuple(ta.shape)).astype(np.float32)
    assert_forward_and_grads_match(a * 2.0 + m, ta * 2.0 + tm, [x], [tx], up, device)


def test_sum_prod_mean_dtype(device: str) -> None:
    ints = np.array([[100, 100, 27], [-128, 5, 3]], np.int8)
    x, tx = pg.Tensor(ints, device=device), torch.tensor(ints)
    for name, dt, tdt in (("sum", pg.int32, torch.int32), ("prod", pg.int32, torch.int32),
                          ("mean", pg.float32, torch.float32), ("sum", pg.float16, torch.float16),
                          ("sum", pg.float32, torch.float32)):
        for dim in (None, 1):
            got = getattr(x, name)(dim=dim, dtype=dt)
            want = getattr(tx, name)(dim=dim, dtype=tdt) if dim is not None else getattr(
                tx, name)(dtype=tdt)
            assert got.dtype is dt, (name, dt)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-3)
    f, tf = _pair(device)
    up = np.ones(4, np.float32)
    assert_forward_and_grads_match(f.half().sum(0, dtype=pg.float32), tf.half().sum(
        0, dtype=torch.float32), [f], [tf], up, device)


def test_nansum_nanmean_count_nonzero(device: str) -> None:
    v = np.array([[1.0, math.nan, 3.0, 0.0], [math.nan, math.nan, math.nan, math.nan],
                  [-0.0, 2.0, 5.0, 1.5]], np.float32)
    x, tx = _pair(device, v)
    up = np.array([1.0, 2.0, 3.0], np.float32)
    assert_forward_and_grads_match(x.nansum(1), tx.nansum(1), [x], [tx], up, device)
    x, tx = _pair(device, v)
    assert_forward_and_grads_match(x.nanmean(1), tx.nanmean(1), [x], [tx], up, device)
    np.testing.assert_allclose(x.nansum().numpy(), tx.nansum().detach().numpy())
    np.testing.assert_allclose(x.nanmean(dim=0, keepdim=True).numpy(),
                               tx.nanmean(dim=0, keepdim=True).detach().numpy())
    for dim in (None, 0, 1, (0, 1)):
        got, want = x.count_nonzero(dim), tx.count_nonzero(dim)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    ints = pg.Tensor([[0, 3], [0, 0]], device=device)
    np.testing.assert_array_equal(ints.count_nonzero(0).numpy(), [0, 1])
    with pytest.raises(pg.DTypeError):
        ints.nanmean()
