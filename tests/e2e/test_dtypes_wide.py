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


# ── uint16 / uint32 / uint64 ─────────────────────────────────────────────────

UNSIGNED = [pg.uint16, pg.uint32, pg.uint64]


def _unsigned_data(dtype: pg.DType) -> tuple[np.ndarray, np.ndarray]:
    """Values near both ends: above the signed type's range, and wrapping ones."""
    top = np.iinfo(dtype.np).max
    a = np.array([0, 1, 7, top, top // 2 + 3, 1000], dtype.np)
    b = np.array([3, 2, 1, 5, top, 999], dtype.np)
    return a, b


@pytest.mark.parametrize("dtype", UNSIGNED, ids=lambda t: t.name)
def test_unsigned_arithmetic_wraps_as_numpy(device: str, dtype: pg.DType) -> None:
    """torch has no add/sub/compare for uint16/32/64 ("limited support"): numpy, which
    wraps modulo 2**bits, is the oracle there; torch where it has the op."""
    a, b = _unsigned_data(dtype)
    if not _holds(device, dtype):
        with pytest.raises(pg.DTypeError, match=f"{device} cannot hold {dtype.name}"):
            pg.Tensor(a, device=device)
        return
    x, y = pg.Tensor(a, device=device), pg.Tensor(b, device=device)
    assert x.dtype is dtype
    with np.errstate(over="ignore"):
        cases = [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x < y, a < b),
                 (x == y, a == b), (x.maximum(y), np.maximum(a, b)),
                 ((x >= y).where(x, y), np.where(a >= b, a, b)), (x.max(), a.max())]
    for got, want in cases:
        assert got.dtype.np == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got.numpy(), want)
    ta = torch.from_numpy(a)
    _same(x * 3, ta * 3)  # a python int keeps the unsigned type
    _same(x / 2, ta / 2, tol=1e-6)  # float32
    _same(x + 2.5, ta + 2.5, tol=1e-6)
    _same(x.sum(), ta.sum())  # int64, wrapping for uint64 as torch
    _same(x.cast(pg.float32), ta.float(), tol=1e-7)
    _same(x.cast(pg.float64), ta.double())
    _same(x.cast(pg.int64), ta.long())
    _same(x.cast(pg.uint8), ta.to(torch.uint8))


@pytest.mark.parametrize("dtype", UNSIGNED, ids=lambda t: t.name)
def test_casts_into_unsigned_match_torch(device: str, dtype: pg.DType) -> None:
    """Floats above the signed range (3e9 into uint32, 1.8e19 into uint64) and negative
    ints wrap and truncate as torch."""
    if not _holds(device, dtype):
        pytest.skip(f"{device} has no {dtype.name} in its capability table")
    top = float(np.iinfo(dtype.np).max)
    floats = np.array([0.0, 1.9, 300.5, top * 0.75, top * 0.4], np.float64)
    if not _holds(device, pg.float64):
        floats = floats.astype(np.float32)
    tdt = getattr(torch, dtype.name)
    _same(pg.Tensor(floats, device=device).cast(dtype), torch.from_numpy(floats).to(tdt))
    small = np.array([1.5, 2.0, 65000.0], np.float32)
    _same(pg.Tensor(small, device=device).cast(dtype), torch.from_numpy(small).to(tdt))
    ints = np.array([-1, -3, 5], np.int32)
    _same(pg.Tensor(ints, device=device).cast(dtype), torch.from_numpy(ints).to(tdt))


def test_promote_types_matches_torch_for_every_pair() -> None:
    """`promote_types` is `torch.promote_types` for every pair of picograd's dtypes, and
    raises a DTypeError for every pair torch refuses (uint16/32/64 with other integers)."""
    for a in pg.DTYPES:
        for b in pg.DTYPES:
            try:
                want = torch.promote_types(getattr(torch, a.name), getattr(torch, b.name))
            except RuntimeError:
                with pytest.raises(pg.DTypeError, match="promot"):
                    pg.promote_types(a, b)
                continue
            assert pg.promote_types(a, b).name == str(want).removeprefix("torch."), (a, b)


def test_unsigned_refusals_name_the_pair() -> None:
    x = pg.Tensor(np.array([1, 2], np.uint32))
    with pytest.raises(pg.DTypeError, match="uint32 and int8"):
        _ = x + pg.Tensor(np.array([1, 2], np.int8))
    assert (x + pg.Tensor(np.int8(3))).dtype is pg.uint32  # a 0-d tensor: torch.result_type



# ── bfloat16 ─────────────────────────────────────────────────────────────────


def _bf16_pair(device: str, values: np.ndarray):
    return (pg.Tensor(values, device=device).cast(pg.bfloat16),
            torch.from_numpy(values).bfloat16())


def _same_bits(got: pg.Tensor, want) -> None:
    """`got` is a bfloat16 tensor with torch's bits (NaN as any NaN)."""
    assert got.dtype is pg.bfloat16
    values = got.numpy()
    assert values.dtype == pg.bfloat16.np and values.itemsize == 2  # stored as 16 bits
    ours, theirs = values.astype(np.float32), want.float().numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_bfloat16_rounds_and_computes_as_torch(device: str) -> None:
    """bf16 is stored as 16 bits and computed in f32, rounded to nearest even after every
    op (tensor-legalize-bf16), on every device: bit for bit torch's CPU results."""
    a = np.array([1.0, 0.1, 3.14159, -2.5e3, 1e38, np.nan, 1 + 2**-8, 1 + 3 * 2**-8, -0.0,
                  np.inf, 1e-40], np.float32)
    x, tx = _bf16_pair(device, a)
    _same_bits(x, tx)
    _same_bits(x + x * 0.3, tx + tx * 0.3)
    _same_bits(x * x - 1, tx * tx - 1)  # 1e38 squared overflows to inf
    _same_bits((x * 1e-38).exp(), (tx * 1e-38).exp())
    _same_bits(x / 3, tx / 3)
    _same_bits(x.maximum(x * -1), torch.maximum(tx, tx * -1))
    _same(x.cast(pg.float32), tx.float(), tol=0.0)
    _same(x < 2, tx < 2)
    _same(x[:4].cast(pg.int32), tx[:4].int())
    b = np.array([0.1, 0.2, 0.3], np.float32)
    _same(pg.Tensor(b, device=device).cast(pg.bfloat16) + pg.Tensor(b, device=device),
          torch.from_numpy(b).bfloat16() + torch.from_numpy(b))  # float32, as torch
    half = pg.Tensor(b.astype(np.float16), device=device)
    _same((half + pg.Tensor(b, device=device).cast(pg.bfloat16)),
          torch.from_numpy(b).half() + torch.from_numpy(b).bfloat16(), tol=1e-6)  # float32


def test_bfloat16_numpy_interop(device: str) -> None:
    import ml_dtypes

    a = np.array([1.5, -0.1, 300.0], ml_dtypes.bfloat16)
    x = pg.Tensor(a, device=device)
    assert x.dtype is pg.bfloat16
    assert x.numpy().tobytes() == a.tobytes()
    assert (x * 2).numpy().tobytes() == (a.astype(np.float32) * 2).astype(
        ml_dtypes.bfloat16).tobytes()


def test_bfloat16_sums_and_matmul_accumulate_in_float32(device: str) -> None:
    """torch adds bf16 sums and matmul products in float32 and rounds once."""
    a = rng.standard_normal((6, 40)).astype(np.float32)
    b = rng.standard_normal((40, 3)).astype(np.float32)
    x, tx = _bf16_pair(device, a)
    y, ty = _bf16_pair(device, b)
    for got, want in ((x.sum(axis=1), tx.sum(dim=1)), (x.mean(axis=0), tx.mean(dim=0)),
                      (x @ y, tx @ ty)):
        assert got.dtype is pg.bfloat16
        np.testing.assert_allclose(got.numpy().astype(np.float32), want.float().numpy(),
                                   rtol=2**-8, atol=1e-6)  # one bf16 rounding apart at most
    ones = pg.Tensor.ones(4096, device=device).cast(pg.bfloat16)
    assert ones.sum().item() == 4096.0  # a bf16 accumulator would stop at 256


def test_float32_to_bfloat16_rounds_every_kind_of_value_as_torch(device: str) -> None:
    """Random f32 bit patterns (every exponent: subnormals, inf, NaN payloads) and exact
    ties: the cast rounds to nearest even as torch."""
    bits = np.random.default_rng(3).integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    ties = (np.arange(2000, dtype=np.uint32) << 16) | 0x8000  # halfway between two bf16
    a = np.concatenate([bits, ties, ties | 0x80000000]).view(np.float32)
    x, tx = _bf16_pair(device, a)
    ours, theirs = x.numpy().astype(np.float32), tx.float().numpy()
    nan = np.isnan(theirs)
    np.testing.assert_array_equal(np.isnan(ours), nan)
    np.testing.assert_array_equal(ours[~nan].view(np.uint32), theirs[~nan].view(np.uint32))
