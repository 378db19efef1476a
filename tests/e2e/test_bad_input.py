"""Edge cases of the Tensor API's input, against torch: python ints beyond int32 (int64, or a
DTypeError on a device without int64), python data that overflows an int dtype, arange's
bounds, negative sizes and bad devices in every creation function, `float(t)` / `int(t)` /
`bool(t)`, `pad`'s pairs, and dims named twice. Each either matches torch or raises a typed
picograd error that names the op and the offending value."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd.dialects.capabilities import capabilities
from picograd.runtimes import get_device

torch = pytest.importorskip("torch", reason="torch is the oracle of these edge cases")
F = torch.nn.functional

TORCH = {pg.float16: torch.float16, pg.float32: torch.float32, pg.int8: torch.int8,
         pg.uint8: torch.uint8, pg.int16: torch.int16, pg.int32: torch.int32,
         pg.int64: torch.int64, pg.bool: torch.bool}


def _holds_int64(device: str) -> bool:
    return capabilities(get_device(device).renderer).supports(pg.int64.ir)


def _located(message: str) -> bool:
    """The error ends with this file's line, as every frontend error does."""
    return re.search(re.escape(__file__) + r":\d+$", message) is not None


# ── 1. python ints beyond int32 ──────────────────────────────────────────────


@pytest.mark.parametrize("data", [[2**31], 2**31, [[1, -2**31 - 1]], [2**63 - 1, -2**63],
                                  [True, 2**40]], ids=str)
def test_python_ints_beyond_int32_are_int64(device: str, data: Any) -> None:
    want = torch.tensor(data)
    if not _holds_int64(device):
        with pytest.raises(pg.DTypeError, match=rf"^Tensor: value -?\d+ does not fit int32, "
                                                rf"and device {device} cannot hold") as info:
            pg.Tensor(data, device=device)
        assert _located(str(info.value))
        return
    t = pg.tensor(data, device=device)
    assert t.dtype is pg.int64 and want.dtype == torch.int64
    assert t.tolist() == want.tolist()
    if t.numel() == 1:
        assert t.item() == want.item() == 2**31


def test_python_ints_that_fit_int32_stay_int32(device: str) -> None:
    """picograd's default int is int32 (torch's int64): only values beyond it widen."""
    t = pg.Tensor([2**31 - 1, -2**31], device=device)
    assert t.dtype is pg.int32 and t.tolist() == [2**31 - 1, -2**31]
    assert pg.Tensor(7, device=device).dtype is pg.int32


@pytest.mark.parametrize("data", [[2**63], [2**64], [1, -2**63 - 1]], ids=str)
def test_python_ints_beyond_int64_are_a_dtype_error(data: list[int]) -> None:
    with pytest.raises((ValueError, OverflowError, RuntimeError)):
        torch.tensor(data)
    bad = next(v for v in data if not -2**63 <= v < 2**63)
    with pytest.raises(pg.DTypeError, match=rf"^Tensor: value {bad} cannot be converted to "
                                            "int64 without overflow"):
        pg.Tensor(data)


def test_big_python_ints_among_floats_are_floats(device: str) -> None:
    """numpy keeps ints beyond 64 bits as objects even among floats; torch makes floats."""
    for data, dtype in (([2**64, 1.5], None), ([2**64], pg.float32)):
        want = torch.tensor(data, dtype=None if dtype is None else TORCH[dtype])
        t = pg.Tensor(data, dtype=dtype, device=device)
        assert t.dtype is pg.float32
        assert t.tolist() == want.tolist()


def test_full_and_arange_widen_to_int64(device: str) -> None:
    makes = [(lambda: pg.full((2,), 2**31, device=device), "full",
              torch.full((2,), 2**31)),
             (lambda: pg.arange(2**31, 2**31 + 3, device=device), "arange",
              torch.arange(2**31, 2**31 + 3)),
             (lambda: pg.arange(-2**31 - 1, -2**31 + 1, device=device), "arange",
              torch.arange(-2**31 - 1, -2**31 + 1))]
    for make, op, want in makes:
        if not _holds_int64(device):
            with pytest.raises(pg.DTypeError, match=rf"^{op}: value -?\d+ does not fit int32"):
                make()
            continue
        t = make()
        assert t.dtype is pg.int64, op
        assert t.tolist() == want.tolist(), op
    assert pg.arange(-3, 2**31 - 1, 2**30, device=device).dtype is pg.int32


def test_randint_with_bounds_beyond_int32(device: str) -> None:
    if not _holds_int64(device):
        with pytest.raises(pg.DTypeError, match=r"^randint: value 2147483648 does not fit"):
            pg.randint(2**31, 2**31 + 5, (4,), device=device)
        return
    r = pg.randint(2**31, 2**31 + 5, (64,), device=device)
    assert r.dtype is pg.int64
    values = r.numpy()
    assert values.min() >= 2**31 and values.max() < 2**31 + 5
    assert pg.randint(0, 2**31, (2,), device=device).dtype is pg.int32


# ── 2. python data converted to an int dtype it does not fit ─────────────────


@pytest.mark.parametrize(("data", "dtype", "bad"), [
    ([300], pg.int8, "300"), ([1, -129], pg.int8, "-129"), (300, pg.int8, "300"),
    ([256], pg.uint8, "256"), ([-256], pg.uint8, "-256"), ([-0.5], pg.uint8, "-0.5"),
    ([127.5], pg.int8, "127.5"), ([float("nan")], pg.int32, "nan"),
    ([float("inf")], pg.int16, "inf"), ([2**31], pg.int32, "2147483648"),
    ([[1, 2], [3, 70000]], pg.int16, "70000"),
    (np.int64(300), pg.int8, "300"), (np.float64(-1.0), pg.uint8, "-1.0"),
], ids=str)
def test_python_data_that_overflows_an_int_dtype(data: Any, dtype: pg.DType, bad: str) -> None:
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.tensor(data, dtype=TORCH[dtype])
    with pytest.raises(pg.DTypeError) as info:
        pg.Tensor(data, dtype=dtype)
    message = str(info.value)
    assert message.startswith(f"Tensor: value {bad} cannot be converted to {dtype.name} "
                              "without overflow"), message
    assert _located(message)


@pytest.mark.parametrize(("data", "dtype"), [
    ([-1, 255], pg.uint8), ([-255], pg.uint8), ([2.7, -2.7, 127.0, -128.0], pg.int8),
    ([70000.0, 1e40], pg.float16), ([2, 0, 0.5], pg.bool), ([True, False], pg.int8),
    ([2**31 - 1], pg.int32), ([255.0], pg.uint8)], ids=str)
def test_python_data_that_fits_converts_as_torch(device: str, data: Any,
                                                 dtype: pg.DType) -> None:
    """Negative ints wrap into unsigned types, floats truncate, float and bool dtypes take
    any value (torch's conversions)."""
    got = pg.Tensor(data, dtype=dtype, device=device)
    assert got.dtype is dtype
    assert got.tolist() == torch.tensor(data, dtype=TORCH[dtype]).tolist()


def test_numpy_arrays_are_cast_as_numpy_casts(device: str) -> None:
    """torch.tensor(array, dtype=...) casts an array without a range check: so does
    picograd (a numpy scalar is checked like a python one, above)."""
    for array in (np.array([300, -1, 7]), np.array(300), np.array([300.5, -3.5])):
        want = torch.tensor(array, dtype=torch.int8)
        got = pg.Tensor(array, dtype=pg.int8, device=device)
        assert got.tolist() == want.tolist()


def test_fill_values_must_fit_the_dtype(device: str) -> None:
    for make, torch_make in (
            (lambda: pg.full((2,), 300, dtype=pg.int8, device=device),
             lambda: torch.full((2,), 300, dtype=torch.int8)),
            (lambda: pg.full((2,), float("inf"), dtype=pg.int32, device=device),
             lambda: torch.full((2,), float("inf"), dtype=torch.int32)),
            (lambda: pg.zeros(2, dtype=pg.int8, device=device).fill_(-129),
             lambda: torch.zeros(2, dtype=torch.int8).fill_(-129))):
        with pytest.raises(RuntimeError, match="without overflow"):
            torch_make()
        with pytest.raises(pg.DTypeError, match="cannot be converted to int"):
            make()
    np.testing.assert_array_equal(pg.full((2,), -1, dtype=pg.uint8, device=device).numpy(),
                                  torch.full((2,), -1, dtype=torch.uint8).numpy())
    with pytest.raises(pg.DTypeError, match="full: the fill value must be a python scalar"):
        pg.full((2,), [1, 2])


# ── 3. arange's bounds ──────────────────────────────────────────────────────


@pytest.mark.parametrize(("args", "match"), [
    ((0, float("nan")), r"end must be finite, got nan"),
    ((float("nan"),), r"end must be finite, got nan"),
    ((0, float("inf")), r"end must be finite, got inf"),
    ((float("-inf"), 5), r"start must be finite, got -inf"),
    ((0, 5, float("nan")), r"step must be finite, got nan"),
    ((0, 5, 0), r"step must not be zero"), ((0, 5, 0.0), r"step must not be zero")], ids=str)
def test_arange_needs_finite_bounds_and_a_step(args: tuple[float, ...], match: str) -> None:
    with pytest.raises(RuntimeError):
        torch.arange(*args)
    with pytest.raises(pg.ShapeError, match="^arange: " + match) as info:
        pg.arange(*args)
    assert _located(str(info.value))


# ── 4. sizes and devices of the creation functions ──────────────────────────

CREATORS: dict[str, Callable[..., Any]] = {
    "zeros": lambda n, device: pg.zeros(2, n, device=device),
    "ones": lambda n, device: pg.ones((2, n), device=device),
    "full": lambda n, device: pg.full((n,), 1.5, device=device),
    "empty": lambda n, device: pg.empty(n, device=device),
    "rand": lambda n, device: pg.rand(n, device=device),
    "randn": lambda n, device: pg.randn(3, n, device=device),
    "randint": lambda n, device: pg.randint(0, 5, (n,), device=device),
    "uniform": lambda n, device: pg.Tensor.uniform(n, device=device),
    "normal": lambda n, device: pg.Tensor.normal(n, device=device),
}
TORCH_CREATORS: dict[str, Callable[[int], Any]] = {
    "zeros": lambda n: torch.zeros(2, n), "ones": lambda n: torch.ones((2, n)),
    "full": lambda n: torch.full((n,), 1.5), "empty": lambda n: torch.empty(n),
    "rand": lambda n: torch.rand(n), "randn": lambda n: torch.randn(3, n),
    "randint": lambda n: torch.randint(0, 5, (n,)),
    "uniform": lambda n: torch.empty(n).uniform_(), "normal": lambda n: torch.empty(n).normal_(),
}


@pytest.mark.parametrize("op", sorted(CREATORS))
def test_negative_sizes_are_shape_errors(device: str, op: str) -> None:
    with pytest.raises(RuntimeError):
        TORCH_CREATORS[op](-2)
    with pytest.raises(pg.ShapeError, match=rf"^{op}: negative dimension in shape .*size -2"
                       ) as info:
        CREATORS[op](-2, device)
    assert _located(str(info.value))
    assert CREATORS[op](0, device).numpy().size == 0


@pytest.mark.parametrize(("args", "match"), [
    ((-1,), r"n must be a non-negative int, got -1"), ((2, -1), r"m must be a non-negative "
                                                                r"int, got -1"),
    ((2.5,), r"n must be a non-negative int, got 2\.5"),
    ((True,), r"n must be a non-negative int, got True")], ids=str)
def test_eye_sizes(device: str, args: tuple[Any, ...], match: str) -> None:
    with pytest.raises((RuntimeError, TypeError)):
        torch.eye(*args)
    with pytest.raises(pg.ShapeError, match="^eye: " + match):
        pg.eye(*args, device=device)
    np.testing.assert_array_equal(pg.eye(2, 0, device=device).numpy(), torch.eye(2, 0).numpy())


def test_linspace_and_randint_arguments(device: str) -> None:
    with pytest.raises(pg.ShapeError, match=r"^linspace: steps must be a non-negative int"):
        pg.linspace(0, 1, -1, device=device)
    with pytest.raises(pg.ShapeError, match=r"^randint: needs int bounds, got low=0\.5"):
        pg.randint(0.5, 3, (2,), device=device)
    with pytest.raises(TypeError):
        torch.randint(0.5, 3, (2,))


DEVICE_TAKERS: dict[str, Callable[[Any], Any]] = {
    "Tensor": lambda d: pg.Tensor([1.0], device=d), "tensor": lambda d: pg.tensor(2, device=d),
    "zeros": lambda d: pg.zeros(2, device=d), "ones": lambda d: pg.ones(2, device=d),
    "full": lambda d: pg.full((2,), 3, device=d), "empty": lambda d: pg.empty(2, device=d),
    "rand": lambda d: pg.rand(2, device=d), "randn": lambda d: pg.randn(2, device=d),
    "randint": lambda d: pg.randint(0, 4, (2,), device=d),
    "eye": lambda d: pg.eye(2, device=d), "arange": lambda d: pg.arange(3, device=d),
    "linspace": lambda d: pg.linspace(0, 1, 3, device=d),
    "zeros_like": lambda d: pg.zeros(2).zeros_like(device=d),
    "to": lambda d: pg.zeros(2).to(d),
}


@pytest.mark.parametrize("bad", [3, None, 1.5, "nope", "CPU:X"], ids=repr)
@pytest.mark.parametrize("op", sorted(DEVICE_TAKERS))
def test_bad_devices_are_device_errors(op: str, bad: Any) -> None:
    if bad is None and op in ("Tensor", "tensor", "zeros_like", "to"):
        return  # device=None means the default (or the source's) there, as torch
    with pytest.raises(pg.DeviceError, match=re.escape(repr(bad))) as info:
        DEVICE_TAKERS[op](bad)
    assert _located(str(info.value))
    assert "available: CPU" in str(info.value)


# ── 5. float(t), int(t), bool(t) ────────────────────────────────────────────


@pytest.mark.parametrize(("data", "dtype"), [
    ([2.5], pg.float32), ([[-2.7]], pg.float32), (7, pg.int32), ([[[-3]]], pg.int8),
    ([True], pg.bool), (0.0, pg.float16), ([200], pg.uint8)], ids=str)
def test_python_scalars_of_one_element_tensors(device: str, data: Any,
                                               dtype: pg.DType) -> None:
    t, want = pg.Tensor(data, dtype=dtype, device=device), torch.tensor(data,
                                                                        dtype=TORCH[dtype])
    for convert in (float, int, bool):
        got = convert(t)
        assert type(got) is convert and got == convert(want), convert


@pytest.mark.parametrize("shape", [(2,), (0,), (1, 2)], ids=str)
def test_python_scalars_need_one_element(device: str, shape: tuple[int, ...]) -> None:
    t, want = pg.zeros(*shape, device=device), torch.zeros(*shape)
    for convert in (float, int, bool):
        with pytest.raises((ValueError, RuntimeError)):
            convert(want)
        with pytest.raises(pg.ShapeError, match=re.escape(str(shape))) as info:
            convert(t)
        assert str(info.value).startswith(convert.__name__ + ":")


def test_int_of_nan_and_inf_raise_as_python(device: str) -> None:
    for value, error in ((float("nan"), ValueError), (float("inf"), OverflowError)):
        with pytest.raises(error):
            int(torch.tensor(value))
        with pytest.raises(error):
            int(pg.Tensor([value], device=device))
    assert math.isnan(float(pg.Tensor([float("nan")], device=device)))


# ── 6. Tensor.pad's pairs ───────────────────────────────────────────────────


@pytest.mark.parametrize("pads", [(1, 1), [1, 1, 1, 1], ((1, 1),), ((1, 1), (1, 1), (0, 0)),
                                  ((1, 1), (1,)), ((1, 1), (-1, 0)), ((1, 1), (0.5, 0)),
                                  ((1, 1), (True, 0)), 2], ids=str)
def test_pad_needs_one_non_negative_pair_per_dim(device: str, pads: Any) -> None:
    x = pg.ones(2, 2, device=device)
    with pytest.raises(pg.ShapeError) as info:
        x.pad(pads)
    message = str(info.value)
    assert message.startswith("pad: needs one (before, after) pair of non-negative ints per "
                              "dim of shape (2, 2)"), message
    assert f"got {pads!r}" in message and _located(message)


def test_pad_matches_torch(device: str) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = pg.Tensor(x, device=device).pad(((1, 0), (0, 2)), 9.0)
    want = F.pad(torch.tensor(x), (0, 2, 1, 0), value=9.0)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert pg.Tensor(x, device=device).pad([[0, 0], [2, 1]]).shape == (2, 6)


# ── 7. a dim named twice ────────────────────────────────────────────────────


@pytest.mark.parametrize(("op", "call", "torch_call"), [
    ("flip", lambda x: x.flip((0, 0)), lambda x: x.flip((0, 0))),
    ("flip", lambda x: x.flip(1, -1), lambda x: x.flip(1, -1)),
    ("permute", lambda x: x.permute(0, 0), lambda x: x.permute(0, 0)),
    ("permute", lambda x: x.permute((1, -1)), lambda x: x.permute((1, -1))),
    ("squeeze", lambda x: x.squeeze((0, 0)), lambda x: x.squeeze((0, 0))),
    ("sum", lambda x: x.sum((0, 0)), lambda x: x.sum((0, 0))),
    ("mean", lambda x: x.mean((1, -1)), lambda x: x.mean((1, -1))),
    ("max", lambda x: x.max((0, 0)), lambda x: x.amax((0, 0)))],
    ids=["flip-0-0", "flip-1-minus-1", "permute-0-0", "permute-1-minus-1", "squeeze-0-0",
         "sum-0-0", "mean-1-minus-1", "max-0-0"])
def test_a_dim_named_twice_is_a_shape_error(device: str, op: str, call: Callable[[Any], Any],
                                            torch_call: Callable[[Any], Any]) -> None:
    with pytest.raises(RuntimeError, match=r"multiple times|duplicate"):
        torch_call(torch.ones(1, 2))
    with pytest.raises(pg.ShapeError, match=f"^{op}: ") as info:
        call(pg.ones(1, 2, device=device))
    assert re.search(r"dim \d appears more than once|repeated axis", str(info.value))


@pytest.mark.parametrize(("dims", "match"), [((1, 2), "axis 2 is out of range"),
                                             ((0,), "names 1 dims, not 2"),
                                             ((0, 1.0), "dims must be ints")], ids=str)
def test_permute_checks_every_dim(dims: tuple[Any, ...], match: str) -> None:
    """`permute(1, 2)` of a matrix was taken as (1, 0) (2 % 2 == 0); torch raises."""
    with pytest.raises((IndexError, RuntimeError, TypeError)):
        torch.ones(2, 3).permute(*dims)
    with pytest.raises(pg.ShapeError, match="^permute: .*" + match):
        pg.ones(2, 3).permute(*dims)


def test_dims_that_repeat_where_torch_allows_it(device: str) -> None:
    """roll over a dim twice rolls it twice, as torch; a valid permute, flip, squeeze
    still work."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t, tt = pg.Tensor(x, device=device), torch.tensor(x)
    np.testing.assert_array_equal(t.roll((1, 1), (0, 0)).numpy(),
                                  tt.roll((1, 1), (0, 0)).numpy())
    np.testing.assert_array_equal(t.permute(-1, 0).numpy(), tt.permute(-1, 0).numpy())
    np.testing.assert_array_equal(t.flip((0, -1)).numpy(), tt.flip((0, -1)).numpy())
    assert t.reshape(1, 3, 4).squeeze((0, -1)).shape == tuple(
        tt.reshape(1, 3, 4).squeeze((0, -1)).shape)
