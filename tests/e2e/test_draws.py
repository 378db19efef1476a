"""bucketize, searchsorted and histc against torch on every device; the random draws
(multinomial, bernoulli, randperm, random_) by their laws, their edges and their
reproducibility under manual_seed (the same values on every device)."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from picograd.errors import DTypeError, ShapeError

torch = pytest.importorskip("torch", reason="torch is the oracle of the binning tests")

NAN = np.float32("nan")
BOUNDS = np.array([1, 3, 3, 5, 7], np.float32)  # a repeated boundary: left and right differ
VALUES = np.array([[NAN, 0, 1, 3], [6, 9, np.inf, -np.inf]], np.float32)


def _int32(t: torch.Tensor) -> np.ndarray:
    return t.numpy().astype(np.int32)


@pytest.mark.parametrize("right", [False, True])
def test_bucketize(device: str, right: bool) -> None:
    got = pg.Tensor(VALUES, device=device).bucketize(pg.Tensor(BOUNDS, device=device),
                                                     right=right)
    want = torch.bucketize(torch.tensor(VALUES), torch.tensor(BOUNDS), right=right)
    assert got.dtype == pg.int32 and got.shape == VALUES.shape
    np.testing.assert_array_equal(got.numpy(), _int32(want))
    ints = pg.Tensor(np.array([0, 3, 8], np.int32), device=device).bucketize(
        pg.Tensor(BOUNDS, device=device), right=right)
    np.testing.assert_array_equal(ints.numpy(), _int32(torch.bucketize(
        torch.tensor([0, 3, 8]), torch.tensor(BOUNDS), right=right)))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(device: str, side: str) -> None:
    seq = pg.Tensor(BOUNDS, device=device)
    got = seq.searchsorted(pg.Tensor(VALUES, device=device), side=side)
    want = torch.searchsorted(torch.tensor(BOUNDS), torch.tensor(VALUES), side=side)
    np.testing.assert_array_equal(got.numpy(), _int32(want))
    rows = np.array([[1, 2, 4, 8], [0, 0, 5, 5]], np.float32)
    vals = np.array([[2, 9], [0, 5]], np.float32)
    got = pg.Tensor(rows, device=device).searchsorted(pg.Tensor(vals, device=device),
                                                      right=side == "right")
    want = torch.searchsorted(torch.tensor(rows), torch.tensor(vals), right=side == "right")
    np.testing.assert_array_equal(got.numpy(), _int32(want))
    scalar = seq.searchsorted(3.0, side=side)
    assert scalar.shape == () and int(scalar) == int(torch.searchsorted(
        torch.tensor(BOUNDS), 3.0, side=side))
    with pytest.raises(ShapeError, match="searchsorted: values of shape"):
        pg.Tensor(rows).searchsorted(pg.Tensor(np.ones((3, 2), np.float32)))


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_with_nan_entries_is_torch_s_binary_search(device: str, right: bool
                                                                 ) -> None:
    """NaN entries (sorted last) make the "entry >= value" test non-monotone: torch's answer
    is where its binary search stops, not a count (1.5 in [1, nan, nan] lands at 3)."""
    values = np.array([NAN, 1.5, 2, 1, -1, 9], np.float32)
    for seq in ([1, 2, NAN], [1, NAN, NAN], [NAN], [0.5] * 7, list(range(13))):
        boundaries = np.array(seq, np.float32)
        got = pg.Tensor(boundaries, device=device).searchsorted(
            pg.Tensor(values, device=device), right=right)
        want = torch.searchsorted(torch.tensor(boundaries), torch.tensor(values), right=right)
        np.testing.assert_array_equal(got.numpy(), _int32(want), err_msg=str(seq))


@pytest.mark.parametrize(("data", "bins", "lo", "hi"), [
    ([1, 2, 1, 4, 2.5, 10, -1], 4, 0, 4), ([1, 2, 1], 4, 0, 0), ([2, 2], 4, 0, 0),
    ([0.5, 0.25, 0.75, 1.0], 3, 0.25, 1.0), ([], 5, 0, 0)])
def test_histc(device: str, data: list[float], bins: int, lo: float, hi: float) -> None:
    a = np.array(data, np.float32)
    got = pg.Tensor(a, device=device).histc(bins, lo, hi)
    want = torch.histc(torch.tensor(a), bins, lo, hi)
    assert got.dtype == pg.float32
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_histc_errors() -> None:
    with pytest.raises(DTypeError, match="histc: needs a float"):
        pg.Tensor([1, 2]).histc()
    with pytest.raises(ShapeError, match="histc: max must be larger"):
        pg.Tensor([1.0]).histc(3, 2, 1)


def test_multinomial_with_replacement_law(device: str) -> None:
    pg.manual_seed(3)
    probs = np.array([[0.1, 0.0, 0.6, 0.3], [2.0, 2.0, 0.0, 4.0]], np.float32)  # weights
    drawn = pg.Tensor(probs, device=device).multinomial(4000, replacement=True).numpy()
    assert drawn.shape == (2, 4000) and drawn.dtype == np.int32
    for row, p in zip(drawn, probs, strict=True):
        freq = np.bincount(row, minlength=4) / row.size
        np.testing.assert_allclose(freq, p / p.sum(), atol=0.03)
        assert not np.any(row[p[row] == 0])  # zero weights are never drawn


def test_multinomial_without_replacement(device: str) -> None:
    pg.manual_seed(4)
    probs = pg.Tensor(np.array([0.5, 0.2, 0.2, 0.1, 0.0], np.float32), device=device)
    first = []
    for _ in range(200):
        d = probs.multinomial(4).numpy()
        assert sorted(d.tolist()) == [0, 1, 2, 3]  # distinct, the zero weight never drawn
        first.append(d[0])
    assert abs(np.mean(np.array(first) == 0) - 0.5) < 0.1
    with pytest.raises(ShapeError, match="without replacement"):
        probs.multinomial(6)


def test_bernoulli(device: str) -> None:
    pg.manual_seed(5)
    p = np.array([0.0, 0.25, 0.9, 1.0], np.float32)
    draws = pg.Tensor(np.tile(p, (2000, 1)), device=device).bernoulli().numpy()
    assert set(np.unique(draws)) <= {0.0, 1.0}
    np.testing.assert_allclose(draws.mean(0), p, atol=0.03)
    fixed = pg.Tensor(np.zeros(4000, np.float32), device=device).bernoulli(0.3).numpy()
    assert abs(fixed.mean() - 0.3) < 0.03
    t = pg.Tensor(np.zeros(4000, np.float32), device=device)
    t.bernoulli_(0.7)
    assert abs(t.numpy().mean() - 0.7) < 0.03


def test_randperm_and_random_reproducible_on_every_device(device: str) -> None:
    pg.manual_seed(11)
    perm = pg.Tensor.randperm(50, device=device).numpy()
    assert sorted(perm.tolist()) == list(range(50))
    pg.manual_seed(11)
    np.testing.assert_array_equal(pg.Tensor.randperm(50, device="CPU:LLVM").numpy(), perm)
    assert pg.Tensor.randperm(0, device=device).shape == (0,)
    t = pg.Tensor(np.zeros(3000, np.int32), device=device)
    t.random_(3, 7)
    values = t.numpy()
    assert values.min() == 3 and values.max() == 6
    np.testing.assert_allclose(np.bincount(values - 3) / values.size, 0.25, atol=0.03)
    u = pg.Tensor(np.zeros(100, np.uint8), device=device)
    u.random_()
    assert u.numpy().max() <= 255 and len(np.unique(u.numpy())) > 30
