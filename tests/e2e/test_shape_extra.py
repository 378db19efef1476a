"""Shape ops, metadata and torch's free functions (ops_shape_extra.py, functions.py) against
torch, forward and backward, on every device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import picograd as pg
import picograd.frontend.functions as functions

from .helpers import assert_forward_and_grads_match


def _pair(device: str, shape: tuple[int, ...]) -> tuple[pg.Tensor, torch.Tensor]:
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return pg.Tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)


def _many(out: Any) -> Any:
    """A tuple of results summed into one tensor (weighted, so each piece is told apart)."""
    if isinstance(out, tuple | list):
        return sum(((i + 1.0) * t.sum() for i, t in enumerate(out)), 0.0 * out[0].sum())
    return out


OPS: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "repeat_interleave": (lambda x: x.repeat_interleave(2, dim=1), (2, 3)),
    "repeat_interleave_flat": (lambda x: x.repeat_interleave(3), (2, 2)),
    "repeat_interleave_0d": (lambda x: x.repeat_interleave(2), ()),
    "tile": (lambda x: x.tile((2, 1, 2)), (2, 3)),
    "tile_short": (lambda x: x.tile(2), (2, 3)),
    "unbind": (lambda x: _many(x.unbind(1)), (2, 3)),
    "narrow": (lambda x: x.narrow(1, -2, 2), (2, 4)),
    "t": (lambda x: x.t(), (2, 3)),
    "t_1d": (lambda x: x.t(), (3,)),
    "mT": (lambda x: x.mT, (2, 3, 4)),
    "mH": (lambda x: x.mH, (2, 3, 4)),
    "H": (lambda x: x.H, (2, 3)),
    "T": (lambda x: x.T, (2, 3)),
    "rot90": (lambda x: x.rot90(), (2, 3)),
    "rot90_k3": (lambda x: x.rot90(3, (1, 2)), (2, 3, 4)),
    "rot90_neg": (lambda x: x.rot90(-2), (2, 3)),
    "fliplr": (lambda x: x.fliplr(), (2, 3)),
    "flipud": (lambda x: x.flipud(), (2, 3)),
    "tensor_split": (lambda x: _many(x.tensor_split(3, dim=1)), (2, 7)),
    "tensor_split_idx": (lambda x: _many(x.tensor_split([1, 5, 9], dim=1)), (2, 7)),
    "hsplit": (lambda x: _many(x.hsplit(2)), (3, 4)),
    "vsplit": (lambda x: _many(x.vsplit([1])), (3, 4)),
    "dsplit": (lambda x: _many(x.dsplit(2)), (2, 1, 4)),
    "clone": (lambda x: x.clone() * 2, (2, 3)),
    "movedim": (lambda x: x.movedim((0, 1), (2, 0)), (2, 3, 4)),
    "swapdims": (lambda x: x.swapdims(0, 2), (2, 3, 4)),
    "squeeze_tuple": (lambda x: x.squeeze((0, 2)), (1, 3, 1, 2)),
}


@pytest.mark.parametrize("name", OPS)
def test_shape_ops(device: str, name: str) -> None:
    fn, shape = OPS[name]
    x, tx = _pair(device, shape)
    want = fn(tx)
    up = np.random.default_rng(1).standard_normal(tuple(want.shape)).astype(np.float32)
    assert_forward_and_grads_match(fn(x), want, [x], [tx], up, device)


def test_repeat_interleave_tensor_repeats(device: str) -> None:
    x, tx = _pair(device, (3, 2))
    reps = [2, 0, 3]
    out = x.repeat_interleave(pg.Tensor(reps, device=device), dim=0)
    want = tx.repeat_interleave(torch.tensor(reps), dim=0)
    up = np.arange(want.numel(), dtype=np.float32).reshape(tuple(want.shape))
    assert_forward_and_grads_match(out, want, [x], [tx], up, device)
    with pytest.raises(pg.ShapeError):
        x.repeat_interleave(pg.Tensor([1, 2], device=device), dim=0)
    with pytest.raises(pg.ShapeError):
        x.repeat_interleave(-1)


def test_split_and_narrow_errors(device: str) -> None:
    x = pg.ones(3, 4, device=device)
    with pytest.raises(pg.ShapeError):
        x.hsplit(3)
    with pytest.raises(pg.ShapeError):
        pg.ones(3, device=device).vsplit(1)
    with pytest.raises(pg.IndexRangeError):
        x.narrow(1, 5, 0)
    with pytest.raises(pg.ShapeError):
        x.narrow(1, 2, 3)
    with pytest.raises(pg.ShapeError):
        pg.ones(2, 2, 2, device=device).t()
    with pytest.raises(pg.ShapeError):
        _ = pg.ones(3, device=device).mT
    np.testing.assert_array_equal(x.narrow(0, pg.Tensor(1, device=device), 2).numpy(),
                                  np.ones((2, 4)))


def test_metadata_and_new_tensors(device: str) -> None:
    x = pg.ones(2, 3, dtype=pg.int16, device=device)
    t = torch.ones(2, 3, dtype=torch.int16)
    assert x.size() == tuple(t.size()) and x.size(-1) == t.size(-1) == 3
    assert x.dim() == x.ndimension() == 2 and x.nelement() == t.nelement() == 6
    assert x.element_size() == t.element_size() == 2 and x.is_contiguous()
    for name, args in (("new_zeros", (2, 2)), ("new_ones", ((3,),)), ("new_empty", (1, 2))):
        got, want = getattr(x, name)(*args), getattr(t, name)(*args)
        assert got.shape == tuple(want.shape) and got.dtype is pg.int16 and got.device == device
        if name != "new_empty":
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    full = x.new_full((2,), 7, dtype=pg.float32)
    np.testing.assert_array_equal(full.numpy(), t.new_full((2,), 7, dtype=torch.float32))
    assert full.dtype is pg.float32
    nt = x.new_tensor([1, 2, 3])
    assert nt.dtype is pg.int16 and nt.device == device and nt.tolist() == [1, 2, 3]
    assert x.type_as(full).dtype is pg.float32
    c = pg.ones(2, device=device)
    d = c.clone()
    d.fill_(5.0)
    assert c.tolist() == [1.0, 1.0] and d.tolist() == [5.0, 5.0]


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(device: str, indexing: str) -> None:
    (a, ta), (b, tb), (c, tc) = (_pair(device, (n,)) for n in (2, 3, 4))
    got = pg.meshgrid(a, b, c, indexing=indexing)
    want = torch.meshgrid(ta, tb, tc, indexing=indexing)
    for g, w in zip(got, want, strict=True):
        assert g.shape == tuple(w.shape)
        np.testing.assert_array_equal(g.numpy(), w.detach().numpy())
    up = np.ones(tuple(want[0].shape), np.float32)
    assert_forward_and_grads_match(got[0] * got[1] + got[2], want[0] * want[1] + want[2],
                                   [a, b, c], [ta, tb, tc], up, device)
    assert len(pg.meshgrid([a, b])) == 2


def test_atleast(device: str) -> None:
    for shape in ((), (3,), (2, 3), (2, 3, 4)):
        x = pg.ones(shape, device=device)
        t = torch.ones(shape)
        for n in (1, 2, 3):
            assert getattr(pg, f"atleast_{n}d")(x).shape == tuple(
                getattr(torch, f"atleast_{n}d")(t).shape)
    pair = pg.atleast_2d(pg.ones(2, device=device), pg.ones((), device=device))
    assert [p.shape for p in pair] == [(1, 2), (1, 1)]


def test_free_functions_match_the_lazy_list(device: str) -> None:
    """picograd/__init__.py's list of free functions is functions.py's, and every free
    function is the method (a few spot checks of the values)."""
    assert set(functions.FUNCTIONS) == set(pg._FUNCTIONS)  # pyright: ignore[reportPrivateUsage]
    x = pg.Tensor([[0.5, -0.25], [0.1, 0.9]], device=device)
    tx = torch.tensor([[0.5, -0.25], [0.1, 0.9]])
    for name, args in (("asin", ()), ("amax", (1,)), ("atan2", (x,)), ("diagonal", ()),
                       ("clamp", (-0.2, 0.3)), ("std_mean", (1,)), ("norm", ())):
        got = getattr(pg, name)(x, *args)
        want = getattr(torch, name)(tx, *[tx if a is x else a for a in args])
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,), strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
