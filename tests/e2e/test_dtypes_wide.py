"""The wide and narrow dtypes against torch on every device: float64 (numpy float64 stays
float64, as `torch.from_numpy`; python floats stay float32), its math, reductions, matmul
and gradients, and the DTypeError where a device's capability table lacks the dtype.
"""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from picograd.dialects.capabilities import capabilities
from picograd.runtimes import get_device
from tests.e2e.helpers import assert_forward_and_grads_match

torch = pytest.importorskip("torch", reason="torch is the oracle of the dtype tests")
rng = np.random.default_rng(5)


def _holds(device: str, dtype: pg.DType) -> bool:
    return capabilities(get_device(device).renderer).supports(dtype.ir)


def _same(got: pg.Tensor, want, tol: float = 1e-12) -> None:
    """`got` has torch's dtype and values."""
    assert got.dtype is pg.frontend.to_dtype(want.dtype), (got.dtype, want.dtype)
    values = got.numpy()
    assert values.dtype == got.dtype.np
    expected = want.detach().numpy()
    if got.dtype.is_float:
        np.testing.assert_allclose(values.astype(np.float64), expected.astype(np.float64),
                                   rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(values, expected)


def test_numpy_float64_stays_float64_python_floats_are_float32(device: str) -> None:
    a = np.array([0.1, 1e-300, 2.0**60 + 1.0])
    assert pg.Tensor([0.1, 2.5], device=device).dtype is pg.float32
    assert pg.Tensor(np.float32(2.5), device=device).dtype is pg.float32
    if not _holds(device, pg.float64):
        with pytest.raises(pg.DTypeError, match=f"{device} cannot hold float64"):
            pg.Tensor(a, device=device)
        return
    x = pg.Tensor(a, device=device)
    assert x.dtype is pg.float64 is pg.double
    assert x.numpy().tobytes() == a.tobytes()  # no rounding through float32
    assert pg.Tensor([0.1], dtype=pg.float64, device=device).item() == 0.1
    assert pg.Tensor([1, 2], device=device).cast("double").dtype is pg.float64


def test_float64_arithmetic_and_math(device: str) -> None:
    if not _holds(device, pg.float64):
        pytest.skip(f"{device} has no float64 in its capability table")
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    x, y = pg.Tensor(a, device=device), pg.Tensor(b, device=device)
    tx, ty = torch.from_numpy(a), torch.from_numpy(b)
    _same(x + y, tx + ty)
    _same(x * y - 1.5, tx * ty - 1.5)  # a python float keeps float64
    _same(x / (y.abs() + 1), tx / (ty.abs() + 1))
    _same(x.exp(), tx.exp())
    _same((x.abs() + 1e-3).log(), (tx.abs() + 1e-3).log())
    _same(x.sin(), tx.sin())
    _same(x.abs().sqrt(), tx.abs().sqrt())
    _same(x < y, tx < ty)
    _same(x.cast(pg.float32), tx.float(), tol=1e-7)
    _same(x.cast(pg.int32), tx.int())


def test_float64_promotion_matches_torch(device: str) -> None:
    if not _holds(device, pg.float64):
        pytest.skip(f"{device} has no float64 in its capability table")
    a = np.array([1.0, 2.0])
    x64 = pg.Tensor(a, device=device)
    x32 = pg.Tensor(a.astype(np.float32), device=device)
    i32 = pg.Tensor([1, 2], device=device)
    s64 = pg.Tensor(np.float64(3.0), device=device)  # a 0-d tensor
    t64, t32, ti, ts = (torch.from_numpy(a), torch.from_numpy(a.astype(np.float32)),
                        torch.tensor([1, 2], dtype=torch.int32), torch.tensor(3.0).double())
    _same(x64 + x32, t64 + t32)
    _same(i32 + x64, ti + t64)
    _same(x32 + s64, t32 + ts, tol=1e-7)  # a 0-d float64 does not widen a float32 tensor
    _same(i32 + s64, ti + ts)  # ...but it does an integer one (the float tier wins)


def test_float64_reductions_and_matmul(device: str) -> None:
    if not _holds(device, pg.float64):
        pytest.skip(f"{device} has no float64 in its capability table")
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    x, y = pg.Tensor(a, device=device), pg.Tensor(b, device=device)
    tx, ty = torch.from_numpy(a), torch.from_numpy(b)
    _same(x.sum(), tx.sum())
    _same(x.sum(axis=1), tx.sum(dim=1))
    _same(x.mean(axis=0), tx.mean(dim=0))
    _same(x.var(axis=1), tx.var(dim=1))
    _same(x.prod(axis=0), tx.prod(dim=0))
    _same(x.max(axis=1), tx.amax(dim=1))
    _same(x @ y, tx @ ty)
    # float64 keeps what float32 loses: 1 + 1e-10 - 1
    assert (pg.Tensor(np.array([1.0, 1e-10]), device=device).sum() - 1).item() == pytest.approx(
        1e-10, rel=1e-6)


def test_float64_gradients(device: str) -> None:
    if not _holds(device, pg.float64):
        pytest.skip(f"{device} has no float64 in its capability table")
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    x = pg.Tensor(a, device=device, requires_grad=True)
    w = pg.Tensor(b, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    tw = torch.tensor(b, requires_grad=True)
    out = (x @ w).exp() * x.sum(axis=1, keepdim=True)
    want = (tx @ tw).exp() * tx.sum(dim=1, keepdim=True)
    assert out.dtype is pg.float64
    assert_forward_and_grads_match(out, want, [x, w], [tx, tw], rng.standard_normal((3, 2)),
                                   device, rtol=1e-12, atol=1e-12)
    assert x.grad.dtype is pg.float64


def test_ptx_has_no_float64_transcendentals() -> None:
    """PTX's only f64 math is sqrt: on CUDA a float64 exp/log/sin is a DTypeError at the op
    (frontend/lazy.py), never a silently float32 result."""
    ptx = capabilities("ptx")
    f64 = pg.float64.ir
    assert ptx.supports(f64) and ptx.computes("sqrt", f64)
    for function in ("exp", "log", "sin", "exp2", "log2"):
        assert not ptx.computes(function, f64)
        assert ptx.computes(function, pg.float32.ir)
        assert ptx.computes(function, pg.float16.ir)
    assert not capabilities("wgsl").supports(f64)
    for target in ("llvm", "c"):
        assert all(capabilities(target).computes(f, f64) for f in ("exp", "log", "sin"))
