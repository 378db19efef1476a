"""float8 e4m3fn / e5m2 as torch 2.13 has them: storage with casts, and the few ops torch
computes on them (float8 * float8, abs, ==, !=, where).

Every cast against torch's bits (round to nearest even, e4m3fn saturating to 448, e5m2
overflowing to inf, NaN kept), numpy / tolist round trips, movement ops on the bits, those
ops against torch's bits, and torch's refusals (other arithmetic, a python number operand,
promotion with another dtype) as typed DTypeErrors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import picograd as pg
from picograd import DTypeError

FLOAT8 = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}
EDGES = [0.1, -0.3, 1.0, 448.0, 449.0, 464.0, 465.0, 480.0, 500.0, 1e6, 57344.0, 61439.0,
         61440.0, 65536.0, float("inf"), -float("inf"), float("nan"), 0.0, -0.0, 1e-9,
         2.0**-6, 2.0**-7 * 1.5, 2.0**-9, 2.0**-10, 2.0**-10 * 3, 2.0**-14, 2.0**-16,
         2.0**-17, 2.0**-17 * 3, 3e-3, -5e-5, 1.0625, 1.1875, 3.3]


def _values() -> np.ndarray:
    """The edges and a spread of random magnitudes (both signs, over every exponent)."""
    rng = np.random.default_rng(0)
    spread = rng.standard_normal(300) * 2.0 ** rng.integers(-20, 18, 300)
    return np.concatenate([np.array(EDGES), spread]).astype(np.float32)


def _bits(t: torch.Tensor) -> np.ndarray:
    return t.view(torch.uint8).numpy()


def _same_values(got: np.ndarray, want: np.ndarray) -> None:
    """Equal as float32 bits, every NaN the same NaN (torch's NaN codes differ in sign)."""
    got, want = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    keep = ~np.isnan(want)
    np.testing.assert_array_equal(got[keep].view(np.uint32), want[keep].view(np.uint32))


@pytest.mark.parametrize("name", list(FLOAT8))
@pytest.mark.parametrize("source", ["float32", "float16", "bfloat16"])
def test_cast_to_float8_rounds_and_saturates_as_torch(device: str, name: str,
                                                       source: str) -> None:
    x = torch.from_numpy(_values()).to(getattr(torch, source))
    want = x.to(getattr(torch, name))
    got = pg.Tensor(x.float().numpy(), device=device).cast(source).cast(name)
    assert got.dtype is getattr(pg, name)
    array = got.numpy()
    assert array.dtype == np.dtype(FLOAT8[name])
    keep = ~np.isnan(x.float().numpy())
    np.testing.assert_array_equal(array.view(np.uint8)[keep], _bits(want)[keep])
    _same_values(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("name", list(FLOAT8))
def test_every_code_casts_back_exactly(device: str, name: str) -> None:
    codes = np.arange(256, dtype=np.uint8)
    want = torch.from_numpy(codes.copy()).view(getattr(torch, name))
    x = pg.Tensor(codes.view(FLOAT8[name]), device=device)
    assert x.dtype is getattr(pg, name)
    _same_values(x.float().numpy(), want.float().numpy())
    _same_values(x.cast(pg.float16).numpy(), want.half().numpy())
    _same_values(x.cast(pg.bfloat16).numpy(), want.bfloat16().float().numpy())
    finite = ~torch.isnan(want.float()) & ~torch.isinf(want.float())
    assert x.cast(pg.int32).numpy()[finite.numpy()].tolist() == \
        want.to(torch.int32)[finite].tolist()
    assert x.cast(pg.bool).tolist() == want.to(torch.bool).tolist()
    _same_values(np.array(x.tolist(), np.float32), want.float().numpy())


@pytest.mark.parametrize("name", list(FLOAT8))
def test_creation_from_python_and_fill_as_torch(device: str, name: str) -> None:
    values = [500.0, 0.1, float("inf"), -1e6, 3.3, 2.0**-10]
    want = torch.tensor(values, dtype=getattr(torch, name))
    got = pg.Tensor(values, dtype=getattr(pg, name), device=device)
    np.testing.assert_array_equal(got.numpy().view(np.uint8), _bits(want))
    full = pg.full((3,), 3.3, dtype=getattr(pg, name), device=device)
    np.testing.assert_array_equal(full.numpy().view(np.uint8),
                                  _bits(torch.full((3,), 3.3, dtype=getattr(torch, name))))


@pytest.mark.parametrize("name", list(FLOAT8))
def test_movement_ops_move_the_bits(device: str, name: str) -> None:
    a = _values()[:12]
    want = torch.from_numpy(a).to(getattr(torch, name)).reshape(3, 4)
    x = pg.Tensor(a, device=device).cast(name).reshape(3, 4)
    moved = pg.cat([x.permute(1, 0)[1:3], x.flip(0).permute(1, 0)[:1]])
    expect = torch.cat([want.t()[1:3], want.flip(0).t()[:1]])
    np.testing.assert_array_equal(moved.numpy().view(np.uint8), _bits(expect.contiguous()))


@pytest.mark.parametrize("name", list(FLOAT8))
def test_the_ops_torch_computes_on_float8(device: str, name: str) -> None:
    a = _values()
    b = np.roll(a, 7) * np.float32(-1.5)
    x, y = (pg.Tensor(v, device=device).cast(name) for v in (a, b))
    tx, ty = (torch.from_numpy(v).to(getattr(torch, name)) for v in (a, b))
    _same_values((x * y).numpy(), (tx * ty).float().numpy().astype(FLOAT8[name]))
    # abs: the sign bit cleared. torch's own float8 abs keeps -0.0 in its 64-element
    # vector blocks and clears it in the tail (a (64,) -0.0 gives -0.0, a (10,) +0.0), and
    # makes every NaN its one NaN code: compared by value, every zero positive here
    got, want = x.abs().numpy(), tx.abs().float().numpy()
    _same_values(got, np.abs(want))
    assert not np.signbit(got.astype(np.float32)).any()
    np.testing.assert_array_equal((x == y).numpy(), (tx == ty).numpy())
    np.testing.assert_array_equal((x != x).numpy(), (tx != tx).numpy())  # NaN != NaN
    zeros = pg.Tensor([0.0, -0.0], device=device).cast(name)
    assert (zeros == zeros.flip(0)).numpy().all()  # -0.0 == 0.0, as by value


@pytest.mark.parametrize("name", list(FLOAT8))
def test_arithmetic_and_promotion_refused_as_torch(name: str) -> None:
    x = pg.Tensor([1.0, 2.0]).cast(name)
    t = torch.tensor([1.0, 2.0]).to(getattr(torch, name))
    for op in (lambda a: a + a, lambda a: -a, lambda a: a * 2, lambda a: a < a):
        with pytest.raises(NotImplementedError):
            op(t)
        with pytest.raises(DTypeError, match=f"not implemented for {name}"):
            op(x)
    for other in ("float32", "bfloat16", "int32", "bool"):
        with pytest.raises(RuntimeError, match="Promotion for Float8"):
            torch.promote_types(getattr(torch, name), getattr(torch, other))
        with pytest.raises(DTypeError, match="float8 types promote only with themselves"):
            pg.promote_types(getattr(pg, name), getattr(pg, other))
        with pytest.raises(DTypeError):
            _ = x + pg.Tensor([1, 0]).cast(other)
    assert pg.promote_types(getattr(pg, name), getattr(pg, name)) is getattr(pg, name)


def test_float8_are_storage_dtypes_outside_dtypes() -> None:
    assert (pg.float8_e4m3fn, pg.float8_e5m2) == pg.FLOAT8_DTYPES
    assert not set(pg.FLOAT8_DTYPES) & set(pg.DTYPES)
    for t in pg.FLOAT8_DTYPES:
        assert t.is_float and t.storage_only and t.itemsize == 1
        assert pg.Tensor(np.zeros(2, FLOAT8[t.name])).dtype is t
        assert pg.Tensor([1.0]).cast(f"torch.{t.name}").dtype is t


@pytest.mark.parametrize("name", list(FLOAT8))
def test_load_torch_keeps_float8_storages(name: str, tmp_path) -> None:
    from picograd.nn.torch_pickle import load_torch

    every = torch.arange(256, dtype=torch.uint8).view(getattr(torch, name))
    path = tmp_path / "f8.pt"
    torch.save({"every": every, "strided": every.reshape(16, 16).t()[3:5]}, path)
    got = load_torch(path)
    for key, want in (("every", every), ("strided", every.reshape(16, 16).t()[3:5])):
        assert got[key].dtype == np.dtype(FLOAT8[name])
        np.testing.assert_array_equal(got[key].view(np.uint8),
                                      want.contiguous().view(torch.uint8).numpy())
        assert pg.Tensor(got[key]).dtype is getattr(pg, name)


@pytest.mark.parametrize("name", list(FLOAT8))
def test_a_cast_through_float8_passes_the_gradient_as_torch(device: str, name: str) -> None:
    """torch's float8 casts are differentiable: the gradient is cast back (so rounded
    through float8 on its way, 0.3 -> 0.3125 in e4m3fn)."""
    values, weights = [1.0, 2.0, 500.0, -3e-3], [0.3, 1.0, 2.0, -7.0]
    x = pg.Tensor(values, requires_grad=True, device=device)
    (x.cast(name).float() * pg.Tensor(weights, device=device)).sum().backward()
    xt = torch.tensor(values, requires_grad=True)
    (xt.to(getattr(torch, name)).float() * torch.tensor(weights)).sum().backward()
    assert x.grad is not None and xt.grad is not None
    _same_values(x.grad.numpy(), xt.grad.numpy())
