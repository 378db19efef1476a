"""Every dtype on every device: arithmetic (with wrap-around), comparisons, `where`, casts
between every pair, reductions and float functions against torch, float16 backward, and
the errors for a dtype a device cannot hold (int64 on WEBGPU) or that cannot take grads.

A dtype missing from the device's capability table is skipped with the reason.
"""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from picograd.dialects.capabilities import capabilities
from picograd.frontend.dtype import DTYPES
from picograd.runtimes import get_device

torch = pytest.importorskip("torch", reason="torch is the oracle of the dtype tests")

TORCH = {t: getattr(torch, t.name) for t in DTYPES}
IDS = [t.name for t in DTYPES]
# the dtypes torch has full arithmetic for (uint16/32/64 have torch's "limited support":
# test_dtypes_wide.py tests them against numpy)
# (and bfloat16, whose coarse rounding test_dtypes_wide.py compares bit for bit)
FULL = [t for t in DTYPES if t not in (pg.uint16, pg.uint32, pg.uint64, pg.bfloat16)]
FULL_IDS = [t.name for t in FULL]
rng = np.random.default_rng(11)


def _need(device: str, *dtypes: pg.DType) -> None:
    target = get_device(device).renderer
    for t in dtypes:
        if not capabilities(target).supports(t.ir):
            pytest.skip(f"{device} ({target}) has no {t.name} in its capability table")


def _data(dtype: pg.DType, shape: tuple[int, ...] = (3, 4)) -> np.ndarray:
    """Small values that every op below keeps in range (no division by zero)."""
    if dtype.is_bool:
        return rng.random(shape) < 0.5
    if dtype.is_float:
        return rng.standard_normal(shape).astype(dtype.np)
    lo = 0 if not dtype.is_signed else -5
    return rng.integers(lo, 6, shape).astype(dtype.np)


def _same(got: pg.Tensor, want, dtype: pg.DType | None = None, tol: float = 0.0) -> None:
    """`got` has torch's values and dtype (or `dtype`, where picograd departs)."""
    assert got.dtype is (dtype or pg.frontend.to_dtype(want.dtype)), (got.dtype, want.dtype)
    values = got.numpy()
    assert values.dtype == got.dtype.np
    expected = want.float().numpy() if want.dtype is torch.bfloat16 else want.numpy()
    if got.dtype.is_float:
        np.testing.assert_allclose(values.astype(np.float64), expected.astype(np.float64),
                                   rtol=tol or 1e-6, atol=tol or 1e-6)
    else:
        np.testing.assert_array_equal(values, expected)


@pytest.mark.parametrize("dtype", FULL, ids=FULL_IDS)
def test_arithmetic_and_comparisons(device: str, dtype: pg.DType) -> None:
    _need(device, dtype)
    a, b = _data(dtype), _data(dtype)
    x, y = pg.Tensor(a, device=device), pg.Tensor(b, device=device)
    tx, ty = torch.from_numpy(a), torch.from_numpy(b)
    tol = 1e-3 if dtype is pg.float16 else 0.0
    _same(x + y, tx + ty, tol=tol)
    _same(x * y, tx * ty, tol=tol)
    if not dtype.is_bool:
        _same(x - y, tx - ty, tol=tol)
        _same(x.maximum(y), torch.maximum(tx, ty))
        _same(x * 3, tx * 3, tol=tol)
        _same(x + 2.5, tx + 2.5, tol=tol)  # ints: float32; float16 stays float16
    _same(x < y, tx < ty)
    _same(x == y, tx == ty)
    _same((x >= y).where(x, y), torch.where(tx >= ty, tx, ty))
    if dtype.is_float:
        _same(x.exp(), tx.exp(), tol=tol or 1e-5)
        _same(x / (y.abs() + 1), tx / (ty.abs() + 1), tol=tol or 1e-5)
    elif dtype.is_int:
        _same(x.exp(), tx.exp(), tol=1e-5)  # float32, torch's default float
        _same(x / 2, tx / 2)


@pytest.mark.parametrize(("dtype", "a", "b"), [
    (pg.int8, 100, 100), (pg.int8, -100, -100), (pg.uint8, 200, 100), (pg.uint8, 3, -5),
    (pg.int16, 30000, 30000), (pg.int32, 2**31 - 1, 1), (pg.int64, 2**62, 2**62)],
    ids=lambda v: getattr(v, "name", str(v)))
def test_integer_wraparound(device: str, dtype: pg.DType, a: int, b: int) -> None:
    """Integer arithmetic wraps (int8 100 + 100 = -56), tensor and python scalar alike."""
    _need(device, dtype)
    x = pg.Tensor([a, a], dtype=dtype, device=device)
    tx = torch.tensor([a, a], dtype=TORCH[dtype])
    _same(x + b, tx + b)
    _same(x + pg.Tensor([b, b], dtype=dtype, device=device),
          tx + torch.tensor([b, b]).to(TORCH[dtype]))
    _same(x * 3, tx * 3)
    if dtype is pg.int8 and (a, b) == (100, 100):
        assert (x + b).tolist() == [-56, -56]


def test_float16_rounding(device: str) -> None:
    _need(device, pg.float16)
    values = np.array([1.0, 2048.0, 0.1, 65504.0, 1e-4], np.float16)
    x = pg.Tensor(values, device=device)
    tx = torch.from_numpy(values)
    _same(x + 2.0 ** -11, tx + 2.0 ** -11)  # 1 + 2**-11 rounds to 1 (to even)
    _same(x + 1, tx + 1)  # 2048 + 1 rounds to 2048
    _same(x * 2, tx * 2)  # 65504 * 2 overflows to inf
    _same(x * 3, tx * 3, tol=1e-3)
    _same(pg.Tensor([0.1, 1 / 3], device=device).half(), torch.tensor([0.1, 1 / 3]).half())


@pytest.mark.parametrize("src", DTYPES, ids=IDS)
def test_casts_between_every_pair(device: str, src: pg.DType) -> None:
    """Values every dtype holds round-trip; floats truncate toward zero into integers."""
    _need(device, src)
    targets = [t for t in DTYPES if capabilities(get_device(device).renderer).supports(t.ir)]
    values = [0, 1, 2, 5, 100, 127] if src.is_int or src.is_float else [0, 1, 1, 0, 1, 0]
    x = pg.Tensor(np.array(values).astype(src.np), device=device)
    tx = torch.tensor(values).to(TORCH[src])
    outs = [(t, x.cast(t), x.cast(t).cast(src)) for t in targets]
    pg.realize(*[o for _, a, b in outs for o in (a, b)])
    for t, there, back in outs:
        _same(there, tx.to(TORCH[t]))
        _same(back, tx.to(TORCH[t]).to(TORCH[src]))
    if src.is_float:
        y = pg.Tensor(np.array([1.75, -1.75, 2.5, -0.5], src.np), device=device)
        ty = torch.tensor([1.75, -1.75, 2.5, -0.5]).to(TORCH[src])
        for t in targets:
            if t.is_signed and not t.is_float:
                _same(y.cast(t), ty.to(TORCH[t]))


@pytest.mark.parametrize("dtype", FULL, ids=FULL_IDS)
def test_reductions(device: str, dtype: pg.DType) -> None:
    """max/min keep the dtype; sum/prod count in int32 (int64 for int64; torch: always
    int64), float16 accumulates in float32 and returns float16, as torch."""
    _need(device, dtype)
    a = _data(dtype, (4, 5))
    x, tx = pg.Tensor(a, device=device), torch.from_numpy(a)
    acc = (pg.int64 if dtype is pg.int64 else pg.int32) if not dtype.is_float else None
    tol = 1e-2 if dtype is pg.float16 else 1e-5
    _same(x.sum(), tx.sum(), acc, tol)
    _same(x.sum(1), tx.sum(1), acc, tol)
    _same(x.max(0), tx.amax(0))
    _same(x.min(), tx.min())
    if not dtype.is_bool:
        small = pg.Tensor(a[:, :3], device=device)
        _same(small.prod(1), torch.from_numpy(a[:, :3]).prod(1), acc, tol)
        _same(x.cumsum(1), tx.cumsum(1), acc, tol)
    if dtype.is_float:
        _same(x.mean(0), tx.mean(0), tol=tol)
    else:
        with pytest.raises(pg.DTypeError, match="mean"):
            x.mean()


def test_float16_backward(device: str) -> None:
    _need(device, pg.float16)
    a = rng.standard_normal((3, 4)).astype(np.float16)
    b = rng.standard_normal((4,)).astype(np.float16)
    x = pg.Tensor(a, device=device, requires_grad=True)
    y = pg.Tensor(b, device=device, requires_grad=True)
    out = ((x * y).exp() + x.maximum(y) * 2.5).sum()
    out.backward()
    tx = torch.tensor(a.astype(np.float32), requires_grad=True)
    ty = torch.tensor(b.astype(np.float32), requires_grad=True)
    ((tx * ty).exp() + torch.maximum(tx, ty) * 2.5).sum().backward()
    assert out.dtype is pg.float16
    assert x.grad.dtype is pg.float16 and y.grad.dtype is pg.float16
    np.testing.assert_allclose(out.numpy().astype(np.float32), out_value(tx, ty), rtol=2e-2)
    np.testing.assert_allclose(x.grad.numpy().astype(np.float32), tx.grad.numpy(),
                               rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(y.grad.numpy().astype(np.float32), ty.grad.numpy(),
                               rtol=2e-2, atol=5e-2)


def out_value(tx, ty) -> np.ndarray:
    with torch.no_grad():
        return ((tx * ty).exp() + torch.maximum(tx, ty) * 2.5).sum().numpy()


@pytest.mark.parametrize("dtype", [t for t in DTYPES if not t.is_float],
                         ids=[t.name for t in DTYPES if not t.is_float])
def test_integer_tensors_cannot_require_grad(dtype: pg.DType) -> None:
    with pytest.raises(pg.DTypeError, match=dtype.name):
        pg.Tensor(np.zeros(2, dtype.np), requires_grad=True)


def test_unsupported_dtype_on_webgpu() -> None:
    """int64 is a DTypeError on WEBGPU, naming the dtype and the device, wherever a tensor
    of it would be created: from data, by `.to`, by a cast computed there."""
    try:
        target = get_device("WEBGPU").renderer
    except (pg.PicogradError, ImportError, OSError) as e:
        pytest.skip(f"WEBGPU is not available: {e}")
    assert not capabilities(target).supports(pg.int64.ir)
    with pytest.raises(pg.DTypeError, match=r"int64(.|\n)*WEBGPU|WEBGPU(.|\n)*int64") as info:
        pg.Tensor(np.arange(3), device="WEBGPU")
    assert "test_dtypes.py" in str(info.value)  # the user's line
    with pytest.raises(pg.DTypeError, match="WEBGPU"):
        pg.Tensor(np.arange(3)).to("WEBGPU")
    with pytest.raises(pg.DTypeError, match="int64"):
        pg.Tensor([1, 2], device="WEBGPU").long()
    with pytest.raises(pg.DTypeError, match="int64"):
        pg.Tensor.zeros(2, dtype=pg.int64, device="WEBGPU")
