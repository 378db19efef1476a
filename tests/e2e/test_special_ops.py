"""The elementwise math of ops_special.py against torch, forward and backward, on every
device: ordinary values, the domain edges (±1, 0, -0.0), ±inf and NaN, where torch's
results (NaN outside a domain, ±inf at a pole) and gradients must come out."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

import picograd as pg
from picograd.errors import ZeroDivisorError

from .helpers import assert_forward_and_grads_match

inf, nan = math.inf, math.nan

# the edges of every domain here, and values beyond the float32 range of exp
EDGES = np.array([-1e30, -100.0, -9.5, -3.0, -1.0, -0.999, -0.5, -1e-5, -0.0, 0.0, 1e-7,
                  0.3, 0.5, 0.9999, 1.0, 1.5, 2.0, 8.9, 9.1, 20.0, 88.0, 89.3, 1e12, inf,
                  -inf, nan], np.float32)
UNARY = ["atan", "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1", "log1p",
         "log10", "erfc", "erfinv", "frac", "deg2rad", "rad2deg", "square", "nan_to_num",
         "sgn", "fix", "arctan", "arcsinh", "negative", "absolute"]

A = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, inf, -inf, inf, nan, 3.0, 1e30, -7.0,
              0.0, 1e-30, 0.75, -4.0], np.float32)
B = np.array([0.0, 0.0, -0.0, -0.0, 0.0, -0.0, -1.5, 3.0, inf, inf, -inf, 1.0, nan, 1e30, 2.0,
              5.0, -1e-30, 0.5, -1.25], np.float32)
# erfc's tail fit: 1.2e-7 in exact arithmetic, exp(-z^2) of a rounded z^2 adds 4e-6 at 8.9
RTOL = {"erfc": 1e-5}
BINARY = ["atan2", "arctan2", "logaddexp", "logaddexp2", "copysign", "fmod", "hypot", "xlogy"]


def _close(got: np.ndarray, want: np.ndarray, rtol: float) -> None:
    """Equal within `rtol` (NaN where torch has NaN), with the sign of every zero."""
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))


def _grad(t: pg.Tensor | None, like: np.ndarray) -> np.ndarray:
    return np.zeros_like(like) if t is None or t.grad is None else t.grad.numpy()


@pytest.mark.parametrize("names", [UNARY[:12], UNARY[12:]], ids=["inverse-hyperbolic",
                                                               "logs-and-rest"])
def test_unary_edges(device: str, names: list[str]) -> None:
    """Values and gradients of each op at EDGES, all realized as one graph per group."""
    up = np.linspace(0.5, 1.5, EDGES.size).astype(np.float32)
    leaves, outs, loss = [], [], None
    for name in names:
        x = pg.Tensor(EDGES, device=device, requires_grad=True)
        y = getattr(x, name)()
        term = (y * pg.Tensor(up, device=device)).sum()
        loss = term if loss is None else loss + term
        leaves.append(x)
        outs.append(y)
    assert loss is not None
    loss.backward()
    pg.realize(*outs, *(x.grad for x in leaves if x.grad is not None))
    for name, x, y in zip(names, leaves, outs, strict=True):
        tx = torch.tensor(EDGES, requires_grad=True)
        ty = getattr(tx, name)()
        (ty * torch.tensor(up)).sum().backward()
        want = ty.detach().numpy()
        try:
            _close(y.numpy(), want, rtol=RTOL.get(name, 3e-6))
            # subnormal gradients (erfc's at -9.5 is 7e-40) are flushed by GPUs
            want_grad = (tx.grad.numpy(force=True) if tx.grad is not None
                         else np.zeros_like(EDGES))
            np.testing.assert_allclose(_grad(x, EDGES), want_grad, rtol=2e-5, atol=1e-37,
                                       equal_nan=True)
        except AssertionError as e:
            raise AssertionError(f"{name} on {device}: {e}") from None


@pytest.mark.parametrize("name", BINARY)
def test_binary_edges(device: str, name: str) -> None:
    x = pg.Tensor(A, device=device, requires_grad=True)
    z = pg.Tensor(B, device=device, requires_grad=True)
    tx, tz = torch.tensor(A, requires_grad=True), torch.tensor(B, requires_grad=True)
    y, ty = getattr(x, name)(z), getattr(tx, name)(tz)
    y.sum().backward()
    ty.sum().backward()
    want = ty.detach().numpy()
    got = y.numpy()
    np.testing.assert_allclose(got, want, rtol=3e-6, atol=0, equal_nan=True)
    if name != "logaddexp2":  # (-0.0 vs 0.0 of equal inputs is not a sign torch defines)
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
    for ours, theirs in ((x, tx), (z, tz)):
        t_grad = theirs.grad
        want_g = np.zeros_like(A) if t_grad is None else t_grad.numpy()
        np.testing.assert_allclose(_grad(ours, A), want_g, rtol=2e-5, atol=0, equal_nan=True)


def test_binary_broadcast_scalars_and_ints(device: str) -> None:
    """Python scalars, 0-d and integer tensors are promoted as torch (ints to float32)."""
    xi = np.array([[3, -7, 0], [5, 9, -2]], np.int32)
    x = pg.Tensor(xi, device=device)
    tx = torch.tensor(xi)
    for name, arg in (("atan2", 2.0), ("hypot", 4.0), ("copysign", -1.0), ("fmod", 4),
                      ("logaddexp", 1.0), ("xlogy", 3.0)):
        want = getattr(tx, name)(torch.tensor(arg))
        got = getattr(x, name)(arg)
        assert got.dtype.name == str(want.dtype).removeprefix("torch."), name
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    ours = x.atan2(pg.Tensor(np.float32(2.0), device=device).reshape(()))
    np.testing.assert_allclose(ours.numpy(), tx.atan2(torch.tensor(2.0)).numpy(), rtol=1e-6)


def test_random_values_forward_and_backward(device: str) -> None:
    """Ordinary values (a broadcast pair) through a chain of the new ops, vs torch."""
    rng = np.random.default_rng(0)
    a = rng.uniform(-0.9, 0.9, (3, 4)).astype(np.float32)
    b = rng.uniform(0.5, 3.0, (4,)).astype(np.float32)
    x, z = (pg.Tensor(v, device=device, requires_grad=True) for v in (a, b))
    tx, tz = (torch.tensor(v, requires_grad=True) for v in (a, b))

    def chain(lib_x, lib_z):
        u = lib_x.asin() + lib_x.acos() * lib_x.atanh() + lib_z.acosh() * lib_x.sinh()
        v = lib_x.atan2(lib_z) + lib_x.logaddexp(lib_z) - lib_z.log10() + lib_x.erfinv()
        return u * v.expm1() + lib_x.hypot(lib_z) + lib_x.cosh().log1p() + lib_z.asinh()

    upstream = rng.standard_normal((3, 4)).astype(np.float32)
    assert_forward_and_grads_match(chain(x, z), chain(tx, tz), [x, z], [tx, tz], upstream,
                                   device, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_rounding_modes(device: str, mode: str | None) -> None:
    fa = np.array([7.5, -7.5, 1.0, -0.0, inf, 5.0, -3.0, 0.0], np.float32)
    fb = np.array([2.0, 2.0, -0.0, 3.0, 2.0, -inf, 0.5, 0.0], np.float32)
    x = pg.Tensor(fa, device=device, requires_grad=True)
    tx = torch.tensor(fa, requires_grad=True)
    got, want = x.div(pg.Tensor(fb, device=device), rounding_mode=mode), tx.div(
        torch.tensor(fb), rounding_mode=mode)
    _close(got.numpy(), want.detach().numpy(), rtol=1e-6)
    got.sum().backward()
    want.sum().backward()
    assert x.grad is not None and tx.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), equal_nan=True)
    ia, ib = np.array([7, -7, 7, -7, 0], np.int32), np.array([2, 2, -2, -2, 3], np.int32)
    gi = pg.Tensor(ia, device=device).div(pg.Tensor(ib, device=device), rounding_mode=mode)
    wi = torch.tensor(ia).div(torch.tensor(ib), rounding_mode=mode)
    assert gi.dtype.name == str(wi.dtype).removeprefix("torch.")
    np.testing.assert_allclose(gi.numpy(), wi.numpy())


def test_div_rounding_errors(device: str) -> None:
    with pytest.raises(ZeroDivisorError):
        pg.Tensor([1, 2], device=device).div(pg.Tensor([1, 0], device=device),
                                              rounding_mode="trunc")
    with pytest.raises(ZeroDivisorError):
        pg.Tensor([1, 2], device=device).fmod(0)
    with pytest.raises(pg.ShapeError):
        pg.Tensor([1.0], device=device).div(2.0, rounding_mode="round")
    assert np.array_equal(pg.Tensor([7, -7], device=device).fmod(3).numpy(),
                          torch.tensor([7, -7]).fmod(3).numpy())


def test_isclose_allclose_and_classes(device: str) -> None:
    a = np.array([1.0, 1.0, inf, -inf, nan, 0.0, 1e-9, 100.0, inf], np.float32)
    b = np.array([1.0 + 1e-6, 1.1, inf, inf, nan, 1e-9, 0.0, 100.001, nan], np.float32)
    x, y = pg.Tensor(a, device=device), pg.Tensor(b, device=device)
    tx, ty = torch.tensor(a), torch.tensor(b)
    options: list[dict[str, Any]] = [{}, {"equal_nan": True}, {"rtol": 0.2, "atol": 0.0},
                                     {"atol": 1e-2}]
    for kw in options:
        np.testing.assert_array_equal(x.isclose(y, **kw).numpy(), tx.isclose(ty, **kw).numpy())
        assert x.allclose(y, **kw) == torch.allclose(tx, ty, **kw)
    assert pg.Tensor([1.0, 2.0], device=device).allclose(pg.Tensor([1.0, 2.0 + 1e-7],
                                                                   device=device))
    ints = pg.Tensor([3, 5, -2], device=device)
    np.testing.assert_array_equal(ints.isclose(pg.Tensor([3, 6, -2], device=device)).numpy(),
                                  torch.tensor([3, 5, -2]).isclose(torch.tensor([3, 6, -2])))
    for name in ("isposinf", "isneginf", "isreal", "isinf", "isnan", "isfinite"):
        np.testing.assert_array_equal(getattr(x, name)().numpy(), getattr(tx, name)().numpy())
        np.testing.assert_array_equal(getattr(ints, name)().numpy(),
                                      getattr(torch.tensor([3, 5, -2]), name)().numpy())
    assert x.is_floating_point() and not ints.is_floating_point() and not x.is_complex()


def test_nan_to_num_options_and_abs(device: str) -> None:
    v = np.array([nan, inf, -inf, 2.5, -0.0], np.float32)
    x = pg.Tensor(v, device=device, requires_grad=True)
    tx = torch.tensor(v, requires_grad=True)
    got = x.nan_to_num(nan=1.0, posinf=7.0, neginf=-3.0)
    want = tx.nan_to_num(nan=1.0, posinf=7.0, neginf=-3.0)
    _close(got.numpy(), want.detach().numpy(), rtol=0)
    half = pg.Tensor(v, dtype=pg.float16, device=device).nan_to_num()
    np.testing.assert_array_equal(half.numpy(), torch.tensor(v).half().nan_to_num().numpy())
    got.sum().backward()
    want.sum().backward()
    assert x.grad is not None and tx.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    a = abs(pg.Tensor([-2.0, 3.0, -0.0], device=device))
    _close(a.numpy(), abs(torch.tensor([-2.0, 3.0, -0.0])).numpy(), rtol=0)


def test_clamp_with_tensor_bounds(device: str) -> None:
    rng = np.random.default_rng(1)
    v = rng.standard_normal((3, 4)).astype(np.float32)
    lo = rng.uniform(-1, 0, (4,)).astype(np.float32)
    hi = rng.uniform(0, 1, (3, 1)).astype(np.float32)
    x, tl, th = (pg.Tensor(a, device=device, requires_grad=True) for a in (v, lo, hi))
    tx, ttl, tth = (torch.tensor(a, requires_grad=True) for a in (v, lo, hi))
    upstream = rng.standard_normal((3, 4)).astype(np.float32)
    assert_forward_and_grads_match(x.clamp(tl, th), tx.clamp(ttl, tth), [x, tl, th],
                                   [tx, ttl, tth], upstream, device)


def test_lerp_with_tensor_weight(device: str) -> None:
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal(3)
    w = rng.uniform(-0.5, 1.5, (2, 1)).astype(np.float32)
    x, e, wt = (pg.Tensor(v.astype(np.float32), device=device, requires_grad=True)
                for v in (a, b, w))
    tx, te, tw = (torch.tensor(v.astype(np.float32), requires_grad=True) for v in (a, b, w))
    upstream = rng.standard_normal((2, 3)).astype(np.float32)
    assert_forward_and_grads_match(x.lerp(e, wt), tx.lerp(te, tw), [x, e, wt], [tx, te, tw],
                                   upstream, device)
