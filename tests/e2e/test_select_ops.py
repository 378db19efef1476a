"""Ops whose output shape depends on the data (masked_select, nonzero, argwhere, unique,
unique_consecutive, bincount) against torch on every device, their gradients where torch has
them, and the JitError they raise inside a `picograd.jit` capture."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd.errors import DTypeError, IndexRangeError, JitError, ShapeError
from tests.e2e.helpers import assert_forward_and_grads_match

torch = pytest.importorskip("torch", reason="torch is the oracle of the select tests")

rng = np.random.default_rng(3)
NAN = np.float32("nan")


def _same(got: Any, want: Any) -> None:
    """Tensors (or tuples of them) equal torch's, int64 results as int32."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    w = want.numpy()
    w = w.astype(np.int32) if w.dtype == np.int64 else w
    g = got.numpy()
    assert g.shape == w.shape and g.dtype == w.dtype, (g, w)
    np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("mask_shape", [(3, 4), (4,), (1, 4)])
def test_masked_select_and_grad(device: str, mask_shape: tuple[int, ...]) -> None:
    a = rng.standard_normal((3, 4)).astype(np.float32)
    m = rng.random(mask_shape) > 0.4
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    out = x.masked_select(pg.Tensor(m, device=device))
    want = tx.masked_select(torch.tensor(m))
    assert_forward_and_grads_match(out, want, [x], [tx],
                                   rng.standard_normal(tuple(want.shape)).astype(np.float32),
                                   device)


def test_masked_select_edges(device: str) -> None:
    x = pg.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device=device)
    none = x.masked_select(pg.Tensor(np.zeros((2, 3), bool), device=device))
    assert none.shape == (0,) and none.numpy().shape == (0,)
    lazy_mask = x > 2.5  # a pending mask: computed, then read
    np.testing.assert_array_equal(x.masked_select(lazy_mask).numpy(), [3, 4, 5])
    with pytest.raises(DTypeError, match="masked_select: the mask must be bool"):
        x.masked_select(x)


CASES: dict[str, Callable[[Any], Any]] = {
    "nonzero": lambda t: t.nonzero(),
    "nonzero_tuple": lambda t: t.nonzero(as_tuple=True),
    "argwhere": lambda t: t.argwhere(),
    "unique": lambda t: t.unique(),
    "unique_all": lambda t: t.unique(return_inverse=True, return_counts=True),
    "unique_dim0": lambda t: t.unique(dim=0, return_inverse=True, return_counts=True),
    "unique_dim1": lambda t: t.unique(dim=1, return_counts=True),
    "unique_consecutive": lambda t: t.unique_consecutive(return_inverse=True,
                                                         return_counts=True),
    "unique_consecutive_dim": lambda t: t.unique_consecutive(dim=0, return_counts=True),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("data", ["ints", "floats_nan", "empty", "scalar"])
def test_data_dependent_ops_match_torch(device: str, name: str, data: str) -> None:
    arrays = {"ints": np.array([[1, 0, 2], [1, 0, 2], [0, 0, 3], [1, 1, 2]], np.int32),
              "floats_nan": np.array([[1, NAN, 0], [2, 1, NAN]], np.float32),
              "empty": np.zeros((0, 3), np.float32),
              "scalar": np.array(2.0, np.float32)}
    a = arrays[data]
    if "dim" in name and (data == "scalar" or (data == "floats_nan" and "consecutive" not in
                                               name)):
        return  # torch: dim out of range for 0-d; unique(dim) of NaN rows differs by version
    try:
        want = CASES[name](torch.tensor(a))
    except RuntimeError:  # (unique along dim 1 of a (0, 3) tensor)
        with pytest.raises(ShapeError, match="has a dim of size 0"):
            CASES[name](pg.Tensor(a, device=device))
        return
    _same(CASES[name](pg.Tensor(a, device=device)), want)


def test_unique_of_pending_and_bool(device: str) -> None:
    a = np.array([3, 1, 3, 2], np.int32)
    _same((pg.Tensor(a, device=device) * 2).unique(return_counts=True),
          (torch.tensor(a) * 2).unique(return_counts=True))
    b = np.array([True, False, True])
    _same(pg.Tensor(b, device=device).unique(), torch.tensor(b).unique())


def test_bincount(device: str) -> None:
    a = np.array([0, 2, 2, 5, 1], np.int32)
    _same(pg.Tensor(a, device=device).bincount(), torch.tensor(a).bincount())
    _same(pg.Tensor(a, device=device).bincount(minlength=8), torch.tensor(a).bincount(
        minlength=8))
    _same(pg.Tensor(np.zeros(0, np.int32), device=device).bincount(minlength=2),
          torch.tensor(np.zeros(0, np.int32)).bincount(minlength=2))
    w = rng.standard_normal(5).astype(np.float32)
    pw = pg.Tensor(w, device=device, requires_grad=True)
    out = pg.Tensor(a, device=device).bincount(pw)
    _same(out, torch.tensor(a).bincount(torch.tensor(w)))
    # torch has no derivative of bincount; ours is the sum's: each weight gets its bin's
    upstream = np.arange(6, dtype=np.float32)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    np.testing.assert_array_equal(pw.grad.numpy(), upstream[a])
    with pytest.raises(IndexRangeError, match="bincount: needs non-negative"):
        pg.Tensor(np.array([1, -1], np.int32), device=device).bincount()
    with pytest.raises(DTypeError, match="bincount"):
        pg.Tensor(np.ones(2, np.float32), device=device).bincount()


@pytest.mark.parametrize("op", ["masked_select", "nonzero", "argwhere", "unique",
                                "unique_consecutive", "bincount"])
def test_data_dependent_ops_refuse_jit_capture(op: str) -> None:
    def body(x: pg.Tensor) -> Any:
        y = x + 1
        if op == "masked_select":
            return y.masked_select(y > 1)
        return getattr(y.cast(pg.int32), op)()

    fn = pg.jit(body)
    x = pg.Tensor(np.array([0, 1, 2], np.float32))
    fn(x)  # call 1 runs eagerly
    with pytest.raises(JitError, match=f"{op}: its output shape depends on the values"):
        fn(x)  # call 2 captures
