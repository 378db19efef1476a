"""float16, int8, uint8 and int16 on WEBGPU, which WGSL lacks and picograd emulates (values
held in f32 / i32, rounded or wrapped after every op: `uop-legalize{target=wgsl}`): every
result must equal CPU:LLVM's bit for bit (NaN equals NaN), forward and backward, with the
edge cases emulation could get wrong (wrap-around, f16 rounding ties, overflow to inf,
subnormals, division by zero). int64 and float64 stay errors on WEBGPU.

Transcendental functions are the one exception: WGSL's f32 exp, log and sin are not libm's,
so their f16 results may differ by one f16 ulp.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

import picograd as pg
from picograd.errors import PicogradError
from picograd.runtimes import get_device

DTYPES = {"float16": np.float16, "int8": np.int8, "uint8": np.uint8, "int16": np.int16}
INTS = ("int8", "uint8", "int16")
rng = np.random.default_rng(11)


@pytest.fixture(scope="module", autouse=True)
def webgpu() -> None:
    for device in ("WEBGPU", "CPU:LLVM"):
        try:
            get_device(device)
        except (PicogradError, ImportError, OSError) as e:
            pytest.skip(f"{device} is not available: {e}")


def values(name: str, shape: tuple[int, ...] = (4, 6)) -> np.ndarray:
    """Random values of dtype `name` with its edge values first."""
    n = int(np.prod(shape))
    if name == "float16":
        edges = [0.0, -0.0, 1.0, -1.5, 65504.0, -65504.0, 6e-8, -6e-5, np.inf, -np.inf, np.nan]
        v = np.concatenate([edges, rng.normal(size=n) * 50])[:n]
        return v.astype(np.float16).reshape(shape)
    info = np.iinfo(DTYPES[name])
    edges = [0, 1, -1, info.max, info.min, info.max - 1, info.min + 1, 2, 3]
    v = np.concatenate([edges, rng.integers(info.min, info.max + 1, n)])[:n]
    return v.astype(DTYPES[name]).reshape(shape)


def nonzero(name: str, shape: tuple[int, ...] = (4, 6)) -> np.ndarray:
    v = values(name, shape)
    v[v == 0] = 3
    return v


def run(fn: Callable[..., pg.Tensor], *arrays: np.ndarray, device: str) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*(pg.Tensor(a, device=device) for a in arrays)).numpy()


def same_bits(want: np.ndarray, got: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan)
        view = {2: np.uint16, 4: np.uint32}[want.dtype.itemsize]
        np.testing.assert_array_equal(got[~nan].view(view), want[~nan].view(view))
    else:
        np.testing.assert_array_equal(got, want)


def check(fn: Callable[..., pg.Tensor], *arrays: np.ndarray) -> None:
    """`fn` on WEBGPU gives CPU:LLVM's result bit for bit."""
    same_bits(run(fn, *arrays, device="CPU:LLVM"), run(fn, *arrays, device="WEBGPU"))


# ── arithmetic ───────────────────────────────────────────────────────────────

BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "maximum": lambda a, b: a.maximum(b), "minimum": lambda a, b: a.minimum(b),
    "lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "where": lambda a, b: (a > b).where(a, b), "chain": lambda a, b: (a * b + a) * (b - a),
}


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_ops_match_the_cpu(dtype: str, op: str) -> None:
    check(BINARY[op], values(dtype), values(dtype))


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", ["floordiv", "remainder", "and", "or", "xor", "not", "neg",
                                "shl", "shr", "abs"])
def test_integer_ops_wrap_like_the_cpu(dtype: str, op: str) -> None:
    fns: dict[str, Callable[..., pg.Tensor]] = {
        "floordiv": lambda a, b: a // b, "remainder": lambda a, b: a % b,
        "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
        "not": lambda a, b: ~a, "neg": lambda a, b: -a, "abs": lambda a, b: a.abs(),
        "shl": lambda a, b: a << (b & 7), "shr": lambda a, b: a >> (b & 7),
    }
    check(fns[op], values(dtype), nonzero(dtype))


@pytest.mark.parametrize("op", ["div", "recip", "sqrt", "neg", "abs", "relu"])
def test_float16_ops_round_like_the_cpu(op: str) -> None:
    fns: dict[str, Callable[..., pg.Tensor]] = {
        "div": lambda a, b: a / b, "recip": lambda a, b: a.reciprocal(),
        "sqrt": lambda a, b: a.abs().sqrt(), "neg": lambda a, b: -a, "abs": lambda a, b: a.abs(),
        "relu": lambda a, b: a.relu(),
    }
    b = values("float16")
    b[0, :3] = [0.0, -0.0, 3.0]
    check(fns[op], values("float16"), b)


def test_float16_rounding_ties_overflow_and_subnormals() -> None:
    """Sums that land exactly between two f16 (ties go to even), past 65504 (inf) and in
    the subnormal range."""
    a = np.array([2048, 2048, 2049, 1.0, 65504, 65504, 6e-8, 3e-5, -6e-8, 1e-4],
                 dtype=np.float16)
    b = np.array([1, 3, 1, 2**-11, 16, 15, -6e-8, -2.9e-5, 1.2e-7, -1e-4],
                 dtype=np.float16)
    check(lambda x, y: x + y, a, b)
    check(lambda x, y: x * y, a, b)
    check(lambda x, y: (x.cast(pg.float32) * 1.0009765625).cast(pg.float16), a, b)


@pytest.mark.parametrize("op", ["exp", "log", "sin", "sigmoid", "tanh"])
def test_float16_math_is_within_one_ulp(op: str) -> None:
    x = (rng.normal(size=(4, 6)) * 3).astype(np.float16)
    if op == "log":
        x = np.abs(x) + np.float16(0.1)
    fn = getattr(pg.Tensor, op)
    want = run(fn, x, device="CPU:LLVM")
    got = run(fn, x, device="WEBGPU")
    assert got.dtype == np.float16
    ulps = np.abs(got.view(np.int16).astype(np.int32) - want.view(np.int16).astype(np.int32))
    assert ulps.max() <= 1, (want, got)


# ── reductions, movement, matmul ─────────────────────────────────────────────


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("op", ["sum", "max", "min", "sum_axis", "permute_pad"])
def test_reductions_and_views_match_the_cpu(dtype: str, op: str) -> None:
    x = values(dtype)
    if dtype == "float16":
        x = np.nan_to_num(x, posinf=7.0, neginf=-7.0)  # keep sums finite and comparable
    fns: dict[str, Callable[..., pg.Tensor]] = {
        "sum": lambda a: a.sum(), "max": lambda a: a.max(), "min": lambda a: a.min(),
        "sum_axis": lambda a: a.sum(1),
        "permute_pad": lambda a: a.permute(1, 0).pad(((1, 0), (0, 2)))[::2] * a[0:4:2].sum(0)
            .reshape(1, 6)}
    check(fns[op], x)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_matmul_matches_the_cpu(dtype: str) -> None:
    a, b = values(dtype, (3, 5)), values(dtype, (5, 4))
    if dtype == "float16":
        a, b = rng.normal(size=(3, 5)).astype(np.float16), rng.normal(size=(5, 4)).astype(
            np.float16)
    check(lambda x, y: x @ y, a, b)


# ── casts ────────────────────────────────────────────────────────────────────

CAST_TO = ("float16", "float32", "int8", "uint8", "int16", "int32", "bool")


@pytest.mark.parametrize("src", [*DTYPES, "float32", "int32", "bool"])
@pytest.mark.parametrize("dst", CAST_TO)
def test_casts_match_the_cpu(src: str, dst: str) -> None:
    if src == dst:
        return
    if src in ("float32", "int32", "bool"):
        x = (rng.normal(size=(4, 6)) * 300).astype(np.float32)
        x = x.astype(np.int32) if src == "int32" else x > 0 if src == "bool" else x
    else:
        x = values(src)
    if x.dtype.kind == "f" and dst not in ("float16", "float32", "bool"):
        # a float out of the integer's range (or NaN) is undefined in C: in range only
        info = np.iinfo(getattr(np, dst))
        finite = np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        x = np.clip(finite, info.min, info.max).astype(x.dtype)
    check(lambda t: t.cast(getattr(pg, dst)), x)


# ── autograd in float16 ──────────────────────────────────────────────────────

GRADS: dict[str, Callable[..., pg.Tensor]] = {
    "mul_sum": lambda a, b: (a * b).sum(),
    "div_max": lambda a, b: (a / (b.abs() + 1)).max(1).sum(),
    "matmul_relu": lambda a, b: (a @ b.permute(1, 0)).relu().sum(),
    "where_mean": lambda a, b: (a > b).where(a * a, b).mean(),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_float16_gradients_match_the_cpu(name: str) -> None:
    a = rng.normal(size=(3, 4)).astype(np.float16)
    b = rng.normal(size=(3, 4)).astype(np.float16)
    results = {}
    for device in ("CPU:LLVM", "WEBGPU"):
        x = pg.Tensor(a, device=device, requires_grad=True)
        y = pg.Tensor(b, device=device, requires_grad=True)
        out = GRADS[name](x, y)
        out.backward()
        assert x.grad is not None and y.grad is not None
        results[device] = [out.numpy(), x.grad.numpy(), y.grad.numpy()]
    for want, got in zip(results["CPU:LLVM"], results["WEBGPU"], strict=True):
        # Mesa llvmpipe does not keep the sign of a zero product (x * -0.0), which a
        # gradient through relu/where can hit; adding +0 makes both zeros +0.
        same_bits(want + np.float16(0), got + np.float16(0))


# ── what stays unsupported ───────────────────────────────────────────────────


def test_int64_is_a_dtype_error_on_webgpu() -> None:
    with pytest.raises(pg.DTypeError, match="WEBGPU cannot hold int64"):
        pg.Tensor(np.arange(3), dtype=pg.int64, device="WEBGPU")
    with pytest.raises(pg.DTypeError, match="WEBGPU cannot hold int64"):
        pg.Tensor([1, 2], dtype=pg.int16, device="WEBGPU").cast(pg.int64)
