"""Shifts, bitcasts, iota and the device random generator on every device.

Shifts and bitcasts against torch / numpy (`<<` `>>` by python ints and by tensors, any
amount; `bitcast` as numpy's `.view`); iota against numpy's indices; `random` for
reproducibility (`manual_seed`), identical bits on every device, a kernel compiled once for
repeated calls, and a statistical sanity check of `rand` / `randn`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import picograd as pg
from picograd.dialects.capabilities import capabilities
from picograd.frontend import random
from picograd.frontend.realize import compile_stats
from picograd.runtimes import get_device

torch = pytest.importorskip("torch", reason="torch is the oracle of the shift tests")

rng = np.random.default_rng(5)
INT_DTYPES = ("int8", "uint8", "int16", "int32", "int64")


def _holds(device: str, name: str) -> bool:
    return capabilities(get_device(device).renderer).supports(getattr(pg, name).ir)


def _ints(name: str, shape: tuple[int, ...]) -> np.ndarray:
    info = np.iinfo(getattr(np, name))
    a = rng.integers(info.min, int(info.max) + 1, shape, dtype=np.int64).astype(name)
    flat = a.reshape(-1)
    flat[:4] = [info.min, info.max, 0, 1]
    return a


@pytest.mark.parametrize("name", INT_DTYPES)
def test_shifts_match_torch(device: str, name: str) -> None:
    if not _holds(device, name):
        pytest.skip(f"{device} has no {name}")
    width = np.dtype(name).itemsize * 8
    x = _ints(name, (3, 5))
    n = rng.integers(0, width, (3, 5)).astype(name)
    n.reshape(-1)[:3] = [0, width - 1, min(width + 2, 127)]  # amounts past the width too
    if name != "uint8":
        n.reshape(-1)[3] = -1
    a, b = pg.Tensor(x, device=device), pg.Tensor(n, device=device)
    tx, tn = torch.from_numpy(x), torch.from_numpy(n)
    cases = {
        "<< tensor": (a << b, tx << tn), ">> tensor": (a >> b, tx >> tn),
        "<< 3": (a << 3, tx << 3), ">> 3": (a >> 3, tx >> 3),
        "<< width-1": (a << (width - 1), tx << (width - 1)),
        ">> width-1": (a >> (width - 1), tx >> (width - 1)),
        "<< 70": (a << 70, tx << 70), ">> 70": (a >> 70, tx >> 70),
        "<< 0": (a << 0, tx << 0),
    }
    for what, (got, want) in cases.items():
        assert got.dtype.name == name, what
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=what)


def test_reverse_shift_and_broadcast(device: str) -> None:
    n = np.array([[0, 1, 5, 31]], dtype=np.int32)
    b = pg.Tensor(n, device=device)
    np.testing.assert_array_equal((3 << b).numpy(), (3 << torch.from_numpy(n)).numpy())
    np.testing.assert_array_equal((-64 >> b).numpy(), (-64 >> torch.from_numpy(n)).numpy())
    x = pg.Tensor(np.arange(6, dtype=np.int32).reshape(3, 2) - 3, device=device)
    k = pg.Tensor(np.array([1, 2], dtype=np.int32), device=device)
    np.testing.assert_array_equal((x << k).numpy(), (np.arange(6).reshape(3, 2) - 3) << [1, 2])


def test_shift_errors() -> None:
    f = pg.Tensor([1.0, 2.0])
    i = pg.Tensor([1, 2])
    with pytest.raises(pg.DTypeError, match="<<"):
        _ = f << 1
    with pytest.raises(pg.DTypeError, match=">>"):
        _ = i >> f
    with pytest.raises(pg.DTypeError, match="shifts need integer"):
        _ = pg.Tensor([True]) << 1
    with pytest.raises(pg.DTypeError, match="shift amount"):
        _ = i << -2


BITCASTS = (("float32", "int32"), ("int32", "float32"), ("float16", "int16"),
            ("int16", "float16"), ("int8", "uint8"), ("uint8", "int8"))


@pytest.mark.parametrize(("src", "dst"), BITCASTS)
def test_bitcast_matches_numpy_view(device: str, src: str, dst: str) -> None:
    if not (_holds(device, src) and _holds(device, dst)):
        pytest.skip(f"{device} has no {src} or {dst}")
    if src.startswith("float"):
        x = np.array([1.0, -2.5, 0.0, -0.0, np.inf, 3e-5, 65504.0, 0.1], dtype=src)
    else:
        x = _ints(src, (8,))
        if dst.startswith("float"):  # NaN patterns: f16 lives in f32 registers on GPUs
            x = x & np.array(0x3FFF, dtype=src)
    t = pg.Tensor(x, device=device).bitcast(dst)
    assert t.dtype.name == dst
    np.testing.assert_array_equal(t.numpy().view(np.uint8), x.view(dst).view(np.uint8))
    # through an integer op and back: the bits survive a round trip on the device
    back = t.bitcast(src) + 0 if dst.startswith("float") else (t + 0).bitcast(src)
    np.testing.assert_array_equal(back.numpy().view(np.uint8), x.view(np.uint8))


def test_bitcast_errors() -> None:
    with pytest.raises(pg.DTypeError, match="float32 as int16"):
        pg.Tensor([1.0]).bitcast(pg.int16)
    with pytest.raises(pg.DTypeError, match="bool"):
        pg.Tensor([1, 0], dtype=pg.int8).bitcast("bool")
    w = pg.Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(pg.DTypeError, match="requires grad"):
        w.bitcast(pg.int32)
    with pg.no_grad():
        assert w.bitcast(pg.int32).tolist() == np.array([1.0, 2.0], np.float32).view(
            np.int32).tolist()


def test_iota(device: str) -> None:
    for axis in range(3):
        t = random.iota(pg.Tensor, (2, 3, 4), axis, device)
        want = np.indices((2, 3, 4))[axis]
        np.testing.assert_array_equal(t.numpy(), want)
    # used inside a bigger graph, through views and with another input
    x = pg.Tensor(np.ones((3, 4), np.int32), device=device)
    it = random.iota(pg.Tensor, (4, 3), 0, device).permute(1, 0)
    np.testing.assert_array_equal((x * 10 + it).numpy(), 10 + np.indices((3, 4))[1])
    if _holds(device, "int64"):
        t64 = random.iota(pg.Tensor, (5,), 0, device, pg.int64)
        assert t64.dtype is pg.int64 and t64.tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(pg.DTypeError, match="iota"):
        random.iota(pg.Tensor, (5,), 0, device, pg.float32)
    with pytest.raises(pg.ShapeError, match="axis 2"):
        random.iota(pg.Tensor, (5,), 2, device)


# ── the random generator ─────────────────────────────────────────────────────


def _lowbias32(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint32)
    x ^= x >> 16
    x = x * np.uint32(0x7FEB352D)
    x ^= x >> 15
    x = x * np.uint32(0x846CA68B)
    return x ^ (x >> 16)


def test_bits_are_the_documented_hash(device: str) -> None:
    random.manual_seed(7)
    got = random.bits(pg.Tensor, (2, 9), device).numpy()
    random.manual_seed(7)
    k0, k1 = (np.uint32(k & 0xFFFFFFFF) for k in random._next_keys())
    i = np.arange(18, dtype=np.uint32)
    want = _lowbias32(_lowbias32(i ^ k0) ^ k1).view(np.int32).reshape(2, 9)
    np.testing.assert_array_equal(got, want)


def test_same_values_on_every_device(device: str) -> None:
    random.manual_seed(1234)
    mine = [random.rand(pg.Tensor, (4, 7), device).numpy(),
            random.bits(pg.Tensor, (5,), device).numpy(),
            random.randn(pg.Tensor, (3, 3), device).numpy()]
    random.manual_seed(1234)
    ref = [random.rand(pg.Tensor, (4, 7), "CPU:LLVM").numpy(),
           random.bits(pg.Tensor, (5,), "CPU:LLVM").numpy(),
           random.randn(pg.Tensor, (3, 3), "CPU:LLVM").numpy()]
    np.testing.assert_array_equal(mine[0], ref[0])
    np.testing.assert_array_equal(mine[1], ref[1])
    np.testing.assert_allclose(mine[2], ref[2], rtol=1e-5, atol=1e-5)  # each device's libm


def test_successive_calls_differ_and_seed_reproduces(device: str) -> None:
    random.manual_seed(3)
    a = random.rand(pg.Tensor, (64,), device).numpy()
    before = compile_stats()
    b = random.rand(pg.Tensor, (64,), device).numpy()
    after = compile_stats()
    assert after.compiles == before.compiles, "a second call must reuse the kernel"
    assert not np.array_equal(a, b)
    random.manual_seed(3)
    np.testing.assert_array_equal(random.rand(pg.Tensor, (64,), device).numpy(), a)
    random.manual_seed(4)
    assert not np.array_equal(random.rand(pg.Tensor, (64,), device).numpy(), a)


def test_rand_and_randn_statistics(device: str) -> None:
    n = 100_000
    random.manual_seed(2024)
    u = random.rand(pg.Tensor, (n,), device).numpy()
    assert u.dtype == np.float32 and u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    counts = np.bincount((u * 20).astype(np.int64), minlength=20)
    chi2 = ((counts - n / 20) ** 2 / (n / 20)).sum()
    assert chi2 < 50, chi2  # 19 degrees of freedom: p < 1e-4 beyond 45
    z = random.randn(pg.Tensor, (n,), device).numpy()
    assert np.isfinite(z).all()
    assert abs(z.mean()) < 0.02 and abs(z.var() - 1) < 0.03
    # the normal CDF at bucket edges, a Kolmogorov-Smirnov style check
    edges = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
    cdf = np.array([0.5 * (1 + math.erf(e / math.sqrt(2))) for e in edges])
    empirical = np.searchsorted(np.sort(z), edges) / n
    assert np.abs(empirical - cdf).max() < 0.01
    bits = random.bits(pg.Tensor, (n,), device).numpy().view(np.uint32)
    ones = np.unpackbits(bits.view(np.uint8)).reshape(n, 32).mean(axis=0)
    assert np.abs(ones - 0.5).max() < 0.01  # every bit position is fair


def test_rand_dtypes_and_empty(device: str) -> None:
    random.manual_seed(0)
    if _holds(device, "float16"):
        h = random.rand(pg.Tensor, (1000,), device, pg.float16).numpy()
        assert h.dtype == np.float16 and h.min() >= 0 and h.max() < 1
    assert random.rand(pg.Tensor, (0, 3), device).shape == (0, 3)
    with pytest.raises(pg.DTypeError, match="rand"):
        random.rand(pg.Tensor, (3,), device, pg.int32)
