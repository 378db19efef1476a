"""Regressions for the defects tests/e2e/test_api_fuzz.py found (issue 11, "no silent wrong
answers"), each on every device against torch:

* float `%` and `//` are torch's fmod-based kernels on an exact fmod (they were
  x - y * floor(x / y), which rounds: 1.0 // 0.33333334 was 3.0, 3e38 % 0.4993 -inf);
* float division by zero is IEEE's NaN / ±inf on WEBGPU too (Mesa folded `x / 0.0` to 0.0,
  so var of one element and mean of an empty tensor were 0 there);
* sin and cos of |x| >= 2^23 on WEBGPU (Mesa's sin(2147483647.0) was -1.0);
* integer ** a negative integer tensor is 0, 1 or ±1 (0 ** -8 was a saturated inf);
* a fill value (pad, masked_fill) an integer dtype cannot hold is a DTypeError (was a raw
  xDSL VerifyException / OverflowError), a mask of more dims broadcasts the result;
* an empty piece of `cat` gets a zero gradient of its shape (was None).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from ptx_sim import simulate

import picograd as pg
import picograd.nn.functional as F
from picograd.compiler.pipelines import GPU_PTX, run_pipeline
from picograd.frontend.realize import build_module, linearize

torch = pytest.importorskip("torch", reason="torch is the oracle of the fuzz findings")

INF, NAN = math.inf, math.nan
F32 = np.float32


def f32(values: list[float]) -> np.ndarray:
    return np.array(values, F32)


def _same(got: np.ndarray, want: np.ndarray, rtol: float = 0.0, atol: float = 0.0) -> None:
    """Equal (NaN with NaN, and a zero with the sign of torch's), to a tolerance if given."""
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol, equal_nan=True)
    zeros = (want == 0) & (got == 0)
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


def _random_floats(n: int, seed: int) -> np.ndarray:
    """Floats of every exponent (any bit pattern: subnormals, inf and NaN included)."""
    bits = np.random.default_rng(seed).integers(0, 2**32, n, dtype=np.uint64)
    return bits.astype(np.uint32).view(F32)


# ── float % and // ───────────────────────────────────────────────────────────

EDGE_X = f32([1.0, 3e38, -1.2e-33, -0.0, 0.0, 35.0, 5.0, -5.0, INF, -INF, NAN, 1e-45, -3e-45,
              7.0, -1.0, 1.0, -0.0, 3.4028235e38, 16777217.0, -2.5])
EDGE_Y = f32([0.33333334, 0.4993, 0.4993, -1.13, -2.0, -0.7, 0.0, -0.0, 2.0, INF, 1.0, 1e-45,
              1e-45, -INF, INF, -INF, 2.0, 1e-45, 3.0, 0.5])


def _torch_remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """torch's remainder through float64 (exact for float32 and float16 inputs): torch's
    vectorised float32 fmod gives NaN where x / y overflows, its scalar kernel does not."""
    out = torch.remainder(torch.from_numpy(x).double(), torch.from_numpy(y).double())
    return out.to(torch.from_numpy(x).dtype).numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float_remainder_and_floor_divide_are_torchs(device: str, dtype: type) -> None:
    with np.errstate(over="ignore"):
        x = np.concatenate([EDGE_X, _random_floats(600, 0)]).astype(dtype)
        y = np.concatenate([EDGE_Y, _random_floats(600, 1)]).astype(dtype)
    px, py = pg.Tensor(x, device=device), pg.Tensor(y, device=device)
    _same((px % py).numpy(), _torch_remainder(x, y))
    _same((px // py).numpy(), torch.floor_divide(torch.from_numpy(x), torch.from_numpy(y)).numpy())


def test_float_remainder_and_floor_divide_through_the_ptx_pipeline() -> None:
    """The PTX target (simulated, tests/ptx_sim.py) agrees too: fmod is int32 arithmetic."""
    x = np.concatenate([EDGE_X, _random_floats(40, 2)])
    y = np.concatenate([EDGE_Y, _random_floats(40, 3)])
    px, py = pg.Tensor(x), pg.Tensor(y)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    for out, want in ((px % py, _torch_remainder(x, y)), (px // py, torch.floor_divide(tx, ty))):
        nodes, entries, buffers, positions = linearize([out._node])
        (got,) = simulate(run_pipeline(build_module(nodes, entries, positions), GPU_PTX),
                          list(buffers))
        _same(got, np.asarray(want))


def test_float_remainder_and_floor_divide_one_line_repros(device: str) -> None:
    def t(v: float) -> pg.Tensor:
        return pg.Tensor(f32([v]), device=device)

    assert (t(1.0) // t(0.33333334)).item() == 2.0  # was 3.0
    assert (t(1.0) // 0.33333334).item() == 2.0  # a python divisor too
    assert (t(3e38) % t(0.4993)).item() == pytest.approx(0.20737457, rel=1e-6)  # was -inf
    assert (t(-1.2e-33) % t(0.4993)).item() == pytest.approx(0.4993)  # was 0
    r = (t(-0.0) % t(-1.13)).item()
    assert r == 0 and math.copysign(1, r) < 0  # was +0.0 on CPU:C
    assert np.isnan((t(5.0) % 0.0).item()) and (t(5.0) // 0.0).item() == INF


def test_float_remainder_gradients_are_torchs(device: str) -> None:
    xs, ys = f32([5.5, -5.5, 1.0, 3e3]), f32([2.0, 2.0, -0.3, 7.0])
    x = pg.Tensor(xs, device=device, requires_grad=True)
    y = pg.Tensor(ys, device=device, requires_grad=True)
    (x % y).sum().backward()
    tx = torch.tensor(xs, requires_grad=True)
    ty = torch.tensor(ys, requires_grad=True)
    (tx % ty).sum().backward()
    assert x.grad is not None and y.grad is not None
    _same(x.grad.numpy(), tx.grad.numpy())
    _same(y.grad.numpy(), ty.grad.numpy())
    f = pg.Tensor(xs, device=device, requires_grad=True)
    (f // 2.0).sum().backward()  # no derivative in torch; zero here
    assert f.grad is not None and not f.grad.numpy().any()


# ── division by zero, sin of large arguments (WEBGPU) ───────────────────────


def test_float_division_by_zero_is_ieee(device: str) -> None:
    x = pg.Tensor(f32([0.0, 1.0, -1.0, NAN, -0.0, INF]), device=device)
    want = np.array([NAN, INF, -INF, NAN, NAN, INF])
    _same((x / 0.0).numpy(), want)  # a constant zero: Mesa folded x / 0.0 to 0.0
    _same((x / -0.0).numpy(), np.array([NAN, -INF, INF, NAN, NAN, -INF]))
    _same((x / pg.Tensor(f32([0.0] * 6), device=device)).numpy(), want)
    _same((1.0 / x).numpy(), np.array([INF, 1.0, -1.0, NAN, -INF, 0.0]))
    assert np.isnan(pg.Tensor(f32([3.0]), device=device).var().item())  # was 0.0 on WEBGPU
    assert np.isnan(pg.Tensor(f32([]), device=device).mean().item())
    assert np.isnan(pg.Tensor(f32([3.0]), device=device).std(0).item())


def test_sin_and_cos_of_large_arguments(device: str) -> None:
    rng = np.random.default_rng(2)
    big = rng.uniform(-1, 1, 400) * 10.0 ** rng.uniform(6, 38, 400)
    x = np.concatenate([f32([2147483647.0, 3e38, -1e30, 8388608.0, -16777216.0,
                             3.4028235e38, 1e7, INF, NAN]), big.astype(F32)])
    px, tx = pg.Tensor(x, device=device), torch.from_numpy(x).double()
    _same(px.sin().numpy(), tx.sin().float().numpy(), atol=1e-6)  # sin(2147483647) was -1.0
    _same(px.cos().numpy(), tx.cos().float().numpy(), atol=2e-6)


# ── integer ** negative integer ──────────────────────────────────────────────


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_integer_power_of_a_negative_exponent(device: str, dtype: type) -> None:
    if dtype is np.int64 and device == "WEBGPU":
        pytest.skip("WEBGPU has no int64")
    base = np.array([-7, 0, 2, 1, -1, -1, 3, 0, 5], np.int64)
    exponent = np.array([-8, -8, -1, -5, -3, -4, 2, 0, 3], np.int64)
    if dtype is np.uint8:  # no negative exponents
        base, exponent = np.abs(base), np.minimum(np.abs(exponent), 5)
    b, e = base.astype(dtype), exponent.astype(dtype)
    got = pg.Tensor(b, device=device) ** pg.Tensor(e, device=device)
    want = torch.from_numpy(b) ** torch.from_numpy(e)
    np.testing.assert_array_equal(got.numpy(), want.numpy())  # (-7) ** -8 was 2147483647
    assert got.dtype is pg.Tensor(b).dtype


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_integer_powers_are_exact_and_wrap_as_torchs(device: str, dtype: type) -> None:
    # they went through float32: 3 ** 16 was 43046716, 3 ** 21 saturated at 2**31 - 1
    if dtype is np.int64 and device == "WEBGPU":
        pytest.skip("WEBGPU has no int64")
    base = np.array([3, 7, 3, -3, 2, 3, 0, 1, -1, 5, 2, 9], np.int64).astype(dtype)
    exponent = np.array([16, 9, 19, 17, 31, 21, 5, 100, 7, 0, 62, 2**20], np.int64)
    e = exponent.astype(dtype)
    got = pg.Tensor(base, device=device) ** pg.Tensor(e, device=device)
    want = torch.from_numpy(base) ** torch.from_numpy(e)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# ── fill values, masked_fill broadcasting, cat of empty pieces ───────────────


def test_fill_values_an_integer_dtype_cannot_hold(device: str) -> None:
    u = pg.Tensor(np.array([1], np.uint8), device=device)
    with pytest.raises(pg.DTypeError, match=r"value -1\.0 cannot be converted to uint8"):
        F.pad(u, (1, 1), value=-1)  # torch's value is a float: refused, as torch
    with pytest.raises(pg.DTypeError, match=r"uint8"):
        u.pad(((1, 1),), value=-1.0)
    np.testing.assert_array_equal(F.pad(u, (1, 1), value=2.5).numpy(), [2, 1, 2])
    i = pg.Tensor(np.array([1, 2], np.int32), device=device)
    mask = pg.Tensor(np.array([True, False]), device=device)
    with pytest.raises(pg.DTypeError, match=r"value -inf cannot be converted to int32"):
        i.masked_fill(mask, -INF)  # was a raw OverflowError
    with pytest.raises(pg.DTypeError, match=r"value 300 .* uint8"):
        u.masked_fill(pg.Tensor(np.array([True]), device=device), 300)
    # torch's integer scalars wrap into uint8 (-1 is 255), as its masked_fill does
    assert u.masked_fill(pg.Tensor(np.array([True]), device=device), -1).item() == 255


def test_masked_fill_with_a_mask_of_more_dims(device: str) -> None:
    xs = f32([1.0, 2.0, 3.0])
    ms = np.array([[True, False, False], [False, True, True]])
    x = pg.Tensor(xs, device=device, requires_grad=True)
    y = x.masked_fill(pg.Tensor(ms, device=device), -1.5)
    upstream = np.arange(6, dtype=F32).reshape(2, 3)
    (y * pg.Tensor(upstream, device=device)).sum().backward()
    tx = torch.tensor(xs, requires_grad=True)
    w = tx.masked_fill(torch.from_numpy(ms), -1.5)
    (w * torch.from_numpy(upstream)).sum().backward()
    assert y.shape == (2, 3)  # was a ShapeError
    _same(y.numpy(), w.detach().numpy())
    assert x.grad is not None
    _same(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize(("shapes", "dim"), [(((0, 0, 0), (0, 0, 0)), 0),
                                             (((2, 0, 3), (2, 4, 3), (2, 0, 3)), 1),
                                             (((0, 3), (2, 3)), 0)])
def test_cat_gives_empty_pieces_a_zero_gradient(device: str, shapes: Any, dim: int) -> None:
    xs = [pg.Tensor(np.ones(s, F32), device=device, requires_grad=True) for s in shapes]
    (pg.cat(xs, dim) * 2.0).sum().backward()
    ts = [torch.ones(s, requires_grad=True) for s in shapes]
    (torch.cat(ts, dim) * 2.0).sum().backward()
    for x, t in zip(xs, ts, strict=True):
        assert x.grad is not None, f"grad of a {x.shape} piece is None (torch's has one)"
        assert x.grad.shape == tuple(t.grad.shape)
        _same(x.grad.numpy(), t.grad.numpy())
