"""sort, argsort, msort, topk, kthvalue, median, nanmedian and mode against torch on every
device: values, indices (where torch fixes them) and input gradients; NaN ordering, ties,
empty and 0-d edges."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from picograd.errors import IndexRangeError, ShapeError
from tests.e2e.helpers import assert_forward_and_grads_match

torch = pytest.importorskip("torch", reason="torch is the oracle of the sort tests")

rng = np.random.default_rng(5)
NAN = np.float32("nan")


def _distinct(*shape: int) -> np.ndarray:
    return (rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32) - 5) / 3


def _ties_and_nans() -> np.ndarray:
    return np.array([[3, NAN, 1, NAN, 2, 1, -np.inf], [1, 2, 2, 1, 5, 0, 2]], np.float32)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_values_indices_and_grad(device: str, dim: int, descending: bool) -> None:
    a = _distinct(4, 5)
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    values, idx = x.sort(dim, descending=descending)
    tv, ti = torch.sort(tx, dim=dim, descending=descending, stable=True)
    np.testing.assert_array_equal(idx.numpy(), ti.numpy())
    assert idx.dtype == pg.int32
    assert_forward_and_grads_match(values, tv, [x], [tx], rng.standard_normal(a.shape,
                                                                              np.float32),
                                   device)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_is_stable_and_puts_nan_where_torch_does(device: str, descending: bool) -> None:
    a = _ties_and_nans()
    values, idx = pg.Tensor(a, device=device).sort(1, descending=descending)
    tv, ti = torch.sort(torch.tensor(a), dim=1, descending=descending, stable=True)
    np.testing.assert_array_equal(values.numpy(), tv.numpy())
    np.testing.assert_array_equal(idx.numpy(), ti.numpy())
    np.testing.assert_array_equal(pg.Tensor(a, device=device).argsort(1, descending).numpy(),
                                  ti.numpy())


@pytest.mark.parametrize("dtype", ["int32", "bool", "uint8"])
def test_sort_ints_and_bools(device: str, dtype: str) -> None:
    a = rng.integers(0, 4, (3, 6)).astype(dtype)
    values, idx = pg.Tensor(a, device=device).sort(-1)
    tv, ti = torch.sort(torch.tensor(a), dim=-1, stable=True)
    np.testing.assert_array_equal(values.numpy(), tv.numpy())
    np.testing.assert_array_equal(idx.numpy(), ti.numpy())


def test_sort_empty_and_0d(device: str) -> None:
    values, idx = pg.Tensor(np.zeros((2, 0), np.float32), device=device).sort(1)
    assert values.shape == idx.shape == (2, 0)
    assert values.numpy().shape == (2, 0)
    v0, i0 = pg.Tensor(2.5, device=device).sort()
    assert v0.shape == () and float(v0) == 2.5 and int(i0) == 0
    with pytest.raises(ShapeError, match="sort: axis 2"):
        pg.Tensor(np.ones((2, 2), np.float32)).sort(2)


def test_msort(device: str) -> None:
    a = _distinct(4, 3)
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    assert_forward_and_grads_match(x.msort(), torch.msort(tx), [x], [tx],
                                   rng.standard_normal(a.shape, np.float32), device)


@pytest.mark.parametrize("largest", [True, False])
def test_topk(device: str, largest: bool) -> None:
    a = _distinct(3, 7)
    a[1, 2] = NAN
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    values, idx = x.topk(3, largest=largest)
    tv, ti = tx.topk(3, largest=largest)
    np.testing.assert_array_equal(idx.numpy(), ti.numpy())
    assert_forward_and_grads_match(values, tv, [x], [tx], rng.standard_normal((3, 3),
                                                                              np.float32),
                                   device)
    assert x.topk(0, dim=0).values.shape == (0, 7)
    with pytest.raises(IndexRangeError, match="topk: k"):
        x.topk(8)


@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue(device: str, keepdim: bool) -> None:
    a = _distinct(4, 5)
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    values, idx = x.kthvalue(2, 0, keepdim)
    tv, ti = tx.kthvalue(2, 0, keepdim)
    np.testing.assert_array_equal(idx.numpy(), ti.numpy())
    assert_forward_and_grads_match(values, tv, [x], [tx], rng.standard_normal(tuple(tv.shape),
                                                                              np.float32),
                                   device)
    with pytest.raises(IndexRangeError, match="kthvalue: k"):
        x.kthvalue(0)


@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median_dim_with_nans(device: str, op: str) -> None:
    a = np.array([[3, NAN, 1, NAN, 2], [4, 2, 0, 1, 5], [NAN, NAN, NAN, NAN, NAN],
                  [1, 7, NAN, 3, 0]], np.float32)
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    values, idx = getattr(x, op)(1)
    tv, ti = getattr(tx, op)(1)
    np.testing.assert_array_equal(idx.numpy(), ti.numpy())
    assert_forward_and_grads_match(values, tv, [x], [tx], np.arange(4, dtype=np.float32) + 1,
                                   device)


def test_median_all_and_even_length(device: str) -> None:
    a = _distinct(3, 4)  # 12 elements: the lower of the two middle ones
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    assert_forward_and_grads_match(x.median(), tx.median(), [x], [tx],
                                   np.array(2.0, np.float32), device)
    b = a.copy()
    b[2, 1] = NAN
    assert np.isnan(pg.Tensor(b, device=device).median().numpy())
    np.testing.assert_allclose(pg.Tensor(b, device=device).nanmedian().numpy(),
                               torch.tensor(b).nanmedian().numpy())
    v, i = pg.Tensor(np.array([5, 1, 4, 2], np.int32), device=device).median(0)
    assert int(v) == 2 and int(i) == 3
    with pytest.raises(IndexRangeError, match="median"):
        pg.Tensor(np.zeros((2, 0), np.float32)).median(1)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_mode(device: str, dtype: str) -> None:
    a = np.array([[1, 2, 2, 1, 5, 1, 2], [3, 3, 1, 1, 0, 0, 7], [4, 3, 2, 1, 0, 6, 5]], dtype)
    x = pg.Tensor(a, device=device)
    values, idx = x.mode(1)
    tv, _ = torch.tensor(a).mode(1)
    np.testing.assert_array_equal(values.numpy(), tv.numpy())
    # torch leaves which of the equal elements' indices to its kernel: one holding the value
    np.testing.assert_array_equal(np.take_along_axis(a, idx.numpy()[:, None], 1)[:, 0],
                                  tv.numpy())
    kv, ki = x.mode(0, keepdim=True)
    assert kv.shape == ki.shape == (1, 7)


def test_mode_grad(device: str) -> None:
    a = np.array([[1, 2, 2, 3], [0, 5, 5, 5]], np.float32)
    x = pg.Tensor(a, device=device, requires_grad=True)
    values, idx = x.mode(1)
    (values * pg.Tensor([1.0, 2.0], device=device)).sum().backward()
    want = np.zeros_like(a)
    want[0, idx.numpy()[0]], want[1, idx.numpy()[1]] = 1, 2
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_sort_replays_under_jit() -> None:
    # static shapes: no sync, so a jit capture replays it with new values
    fn = pg.jit(lambda x: x.topk(2).values * 1.0)
    for _ in range(3):
        a = _distinct(2, 5)
        np.testing.assert_array_equal(fn(pg.Tensor(a)).numpy(),
                                      torch.tensor(a).topk(2).values.numpy())
