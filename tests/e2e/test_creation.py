"""Creation ops (picograd/frontend/creation.py): empty, linspace (bit for bit against torch),
randint, uniform, normal, the `_like` family and the in-place fills, on every device; their
errors; and that the in-place ops follow torch's autograd rules."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg

torch = pytest.importorskip("torch", reason="torch is the oracle of linspace")

T = pg.Tensor


def test_empty_is_zero_filled(device: str) -> None:
    e = T.empty(2, 3, device=device)
    assert e.shape == (2, 3) and e.dtype == pg.float32 and e.device == device
    np.testing.assert_array_equal(e.numpy(), np.zeros((2, 3), np.float32))
    assert T.empty((4,), dtype=pg.int32, device=device).numpy().tolist() == [0] * 4


@pytest.mark.parametrize(("start", "end"), [(0, 1), (-3.7, 11.3), (1e-3, 7.1), (5, -2.2),
                                            (-1e6, 3.25), (2.5, 2.5)])
def test_linspace_matches_torch_bit_for_bit(start: float, end: float) -> None:
    for steps in (*range(0, 40), 63, 100, 257, 1000):
        got = T.linspace(start, end, steps).numpy()
        want = torch.linspace(start, end, steps).numpy()
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want, err_msg=f"steps={steps}")


def test_linspace_int_dtype_and_device(device: str) -> None:
    for start, end, steps in [(0, 10, 4), (-7, 9, 6), (3, -20, 7), (0, 5, 1)]:
        got = T.linspace(start, end, steps, dtype=pg.int32, device=device)
        want = torch.linspace(start, end, steps, dtype=torch.int32).numpy()
        assert got.dtype == pg.int32 and got.device == device
        np.testing.assert_array_equal(got.numpy(), want)


def test_randint_range_and_forms(device: str) -> None:
    pg.manual_seed(3)
    r = T.randint(-4, 5, (2000,), device=device)
    assert r.dtype == pg.int32 and r.shape == (2000,)
    values = r.numpy()
    assert values.min() == -4 and values.max() == 4  # every value is reachable
    assert set(np.unique(values).tolist()) == set(range(-4, 5))
    assert T.randint(3, (4, 5)).shape == (4, 5)  # randint(high, size), as torch
    assert T.randint(3, size=(50,)).numpy().min() >= 0
    f = T.randint(0, 2, (10,), dtype=pg.float32)
    assert f.dtype == pg.float32 and set(f.numpy().tolist()) <= {0.0, 1.0}


def test_uniform_and_normal_statistics(device: str) -> None:
    pg.manual_seed(11)
    u = T.uniform(100, 100, low=-2.0, high=3.0, device=device).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0
    assert abs(u.mean() - 0.5) < 0.05 and abs(u.std() - 5 / np.sqrt(12)) < 0.03
    n = T.normal((100, 100), mean=1.5, std=0.5, device=device).numpy()
    assert abs(n.mean() - 1.5) < 0.02 and abs(n.std() - 0.5) < 0.01


def test_random_ops_are_reproducible() -> None:
    pg.manual_seed(42)
    a = [T.uniform(5).numpy(), T.normal(5).numpy(), T.randint(0, 100, (5,)).numpy()]
    pg.manual_seed(42)
    b = [T.uniform(5).numpy(), T.normal(5).numpy(), T.randint(0, 100, (5,)).numpy()]
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_like_functions_keep_dtype_and_device(device: str) -> None:
    x = T(np.arange(6, dtype=np.int32).reshape(2, 3), device=device)
    f = T(np.ones((3, 2), np.float32), device=device)
    for made, value in [(x.zeros_like(), 0), (x.ones_like(), 1), (x.empty_like(), 0),
                        (x.full_like(7), 7)]:
        assert made.shape == (2, 3) and made.dtype == pg.int32 and made.device == device
        np.testing.assert_array_equal(made.numpy(), np.full((2, 3), value))
    assert x.full_like(2.5, dtype=pg.float32).numpy().tolist() == [[2.5] * 3] * 2
    assert x.zeros_like(device="CPU:LLVM").device == "CPU:LLVM"
    r, n = f.rand_like(), f.randn_like()
    assert r.shape == n.shape == (3, 2) and r.dtype == n.dtype == pg.float32
    assert r.device == n.device == device
    assert (r.numpy() >= 0).all() and (r.numpy() < 1).all()
    ri = x.randint_like(10)
    assert ri.dtype == pg.int32 and ri.shape == (2, 3) and (ri.numpy() < 10).all()
    assert (f.randint_like(2, 4).numpy() >= 2).all()
    assert T.zeros_like(x).shape == (2, 3)  # torch.zeros_like(x) spelling


def test_in_place_fills(device: str) -> None:
    pg.manual_seed(5)
    x = T(np.arange(6, dtype=np.float32).reshape(2, 3), device=device)
    before = x * 1  # built earlier: keeps the old values
    assert x.fill_(2.5) is x
    np.testing.assert_array_equal(x.numpy(), np.full((2, 3), 2.5, np.float32))
    np.testing.assert_array_equal(before.numpy(), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(x.zero_().numpy(), np.zeros((2, 3)))
    u = x.uniform_(-1.0, 1.0).numpy()
    assert x.shape == (2, 3) and x.device == device and (np.abs(u) <= 1).all()
    big = T.empty(50, 50, device=device).normal_(2.0, 0.1).numpy()
    assert abs(big.mean() - 2.0) < 0.01 and abs(big.std() - 0.1) < 0.01
    i = T(np.ones(3, np.int32), device=device).fill_(2.7)
    assert i.dtype == pg.int32 and i.numpy().tolist() == [2, 2, 2]


def test_in_place_on_parameters_needs_no_grad() -> None:
    w = T(np.ones((2, 2), np.float32), requires_grad=True)
    with pytest.raises(pg.AutogradError, match="uniform_: a leaf tensor that requires grad"):
        w.uniform_()
    with pg.no_grad():
        w.fill_(3.0)
    assert w.requires_grad and w._ctx is None
    (w * 2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full((2, 2), 2.0))
    # on a non-leaf the new values do not depend on the graph: it stops recording
    y = w * 3
    y.fill_(1.0)
    assert not y.requires_grad


def test_errors_name_the_op_and_values() -> None:
    with pytest.raises(pg.ShapeError, match=r"empty: negative dimension in shape \(2, -1\)"):
        T.empty(2, -1)
    with pytest.raises(pg.ShapeError, match="linspace: steps must be a non-negative int, got -1"):
        T.linspace(0, 1, -1)
    with pytest.raises(pg.ShapeError, match="randint: needs low < high, got low=5, high=5"):
        T.randint(5, 5, (2,))
    with pytest.raises(pg.ShapeError, match="randint: negative dimension"):
        T.randint(0, 5, (-2,))
    with pytest.raises(pg.ShapeError, match=r"uniform: needs low <= high, got low=2\.0"):
        T.uniform(3, low=2.0, high=1.0)
    with pytest.raises(pg.ShapeError, match=r"uniform_: needs a <= b, got a=1\.0, b=0\.0"):
        T.empty(3).uniform_(1.0, 0.0)
    with pytest.raises(pg.ShapeError, match=r"normal_: needs std >= 0, got std=-1\.0"):
        T.empty(3).normal_(0.0, -1.0)
    with pytest.raises(pg.DTypeError, match="normal_: random samples need a float dtype"):
        T.zeros(3, dtype=pg.int32).normal_()
    with pytest.raises(pg.DTypeError, match="rand_like: random samples need a float dtype"):
        T.zeros(3, dtype=pg.int32).rand_like()
    with pytest.raises(pg.DTypeError, match="linspace: needs a float or int dtype"):
        T.linspace(0, 1, 3, dtype=pg.bool)


def test_module_level_functions_are_the_tensor_ones() -> None:
    """`pg.zeros(...)` etc. as in torch: the same values as the Tensor classmethods."""
    pg.manual_seed(3)
    a = pg.rand(4, 5)
    pg.manual_seed(3)
    np.testing.assert_array_equal(a.numpy(), pg.Tensor.rand(4, 5).numpy())
    np.testing.assert_array_equal(pg.zeros(2, 3).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(pg.full_like(pg.ones(3, dtype=pg.int8), 7).numpy(),
                                  np.full(3, 7, np.int8))
    np.testing.assert_allclose(pg.linspace(-1, 1, 5).numpy(), np.linspace(-1, 1, 5))
    assert pg.tensor([1.5]).dtype == pg.float32
    r = pg.randint(2, 9, (100,)).numpy()
    assert r.min() >= 2 and r.max() < 9
