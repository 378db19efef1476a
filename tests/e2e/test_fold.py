"""Tensor.unfold (sliding windows) and F.unfold / F.fold (im2col and its adjoint) with
nn.Unfold / nn.Fold, against torch on every device: values and input gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import picograd as pg
import picograd.nn.functional as F
from picograd.errors import ShapeError
from tests.e2e.helpers import assert_forward_and_grads_match

torch = pytest.importorskip("torch", reason="torch is the oracle of the fold tests")

rng = np.random.default_rng(8)


def _up(shape: Any) -> np.ndarray:
    return rng.standard_normal(tuple(shape)).astype(np.float32)


@pytest.mark.parametrize(("shape", "dim", "size", "step"), [
    ((2, 7), 1, 3, 2), ((5, 3), 0, 2, 1), ((4,), 0, 4, 3), ((2, 6), 1, 0, 2), ((), 0, 1, 1)])
def test_tensor_unfold(device: str, shape: tuple[int, ...], dim: int, size: int,
                       step: int) -> None:
    a = rng.standard_normal(shape).astype(np.float32)
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    want = tx.unfold(dim, size, step)
    assert_forward_and_grads_match(x.unfold(dim, size, step), want, [x], [tx],
                                   _up(want.shape), device)


def test_tensor_unfold_errors() -> None:
    x = pg.Tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(ShapeError, match="unfold: size 4 is larger"):
        x.unfold(1, 4, 1)
    with pytest.raises(ShapeError, match="unfold: step must be"):
        x.unfold(1, 2, 0)


CASES = [dict(kernel_size=3), dict(kernel_size=(2, 3), padding=1, stride=2, dilation=(1, 2)),
         dict(kernel_size=2, stride=(1, 2), padding=(0, 1))]


@pytest.mark.parametrize("kw", CASES)
def test_functional_unfold_and_fold(device: str, kw: dict[str, Any]) -> None:
    a = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    x = pg.Tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    want = torch.nn.functional.unfold(tx, **kw)
    assert_forward_and_grads_match(F.unfold(x, **kw), want, [x], [tx], _up(want.shape),
                                   device)
    cols = want.detach().numpy()
    c = pg.Tensor(cols, device=device, requires_grad=True)
    tc = torch.tensor(cols, requires_grad=True)
    assert_forward_and_grads_match(F.fold(c, (6, 5), **kw),
                                   torch.nn.functional.fold(tc, (6, 5), **kw), [c], [tc],
                                   _up((2, 3, 6, 5)), device)


def test_modules_and_unbatched(device: str) -> None:
    a = rng.standard_normal((3, 4, 4)).astype(np.float32)
    got = pg.nn.Unfold(2, stride=2)(pg.Tensor(a, device=device))
    want = torch.nn.Unfold(2, stride=2)(torch.tensor(a))
    np.testing.assert_allclose(got.numpy(), want.numpy())
    back = pg.nn.Fold((4, 4), 2, stride=2)(got)
    np.testing.assert_allclose(back.numpy(), torch.nn.Fold((4, 4), 2, stride=2)(want).numpy())
    with pytest.raises(ShapeError, match="fold: the input has 3 blocks"):
        F.fold(pg.Tensor(np.zeros((1, 4, 3), np.float32)), (4, 4), 2)
    with pytest.raises(ShapeError, match="unfold: the kernel"):
        F.unfold(pg.Tensor(np.zeros((1, 1, 2, 2), np.float32)), 3)
