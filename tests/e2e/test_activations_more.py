"""The activations of ops_activation.py's second half, their F forms
(nn/activation_functions.py) and modules (nn/activations.py) against torch, forward and
backward, on every device, at the kinks, ±inf and NaN."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F

from .helpers import assert_forward_and_grads_match

TF = torch.nn.functional
inf, nan = math.inf, math.nan
EDGES = np.array([-1e30, -100.0, -20.0, -3.0, -1.0, -0.5, -1e-5, -0.0, 0.0, 1e-7, 0.3, 0.5,
                  1.0, 1.5, 2.0, 20.0, 88.0, 1e12, inf, -inf, nan], np.float32)

# name -> (picograd, torch): elementwise, compared at EDGES
ELEMENTWISE: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "celu": (lambda x: F.celu(x, 0.7), lambda x: TF.celu(x, 0.7)),
    "selu": (F.selu, TF.selu),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 1.0), lambda x: TF.hardtanh(x, -0.5, 1.0)),
    "softsign": (F.softsign, TF.softsign),
    "logsigmoid": (F.logsigmoid, TF.logsigmoid),
    "hardshrink": (lambda x: F.hardshrink(x, 0.5), lambda x: TF.hardshrink(x, 0.5)),
    "softshrink": (lambda x: F.softshrink(x, 1.0), lambda x: TF.softshrink(x, 1.0)),
    "tanhshrink": (F.tanhshrink, TF.tanhshrink),
    "threshold": (lambda x: F.threshold(x, 0.3, -2.0), lambda x: TF.threshold(x, 0.3, -2.0)),
    "rrelu_eval": (F.rrelu, TF.rrelu),
    "relu6": (F.relu6, TF.relu6),
    "mish": (F.mish, TF.mish),
    "elu_small": (lambda x: x.elu(), TF.elu),
    "swish": (lambda x: x.swish(), TF.silu),
    "quick_gelu": (lambda x: x.quick_gelu(), lambda x: x * torch.sigmoid(1.702 * x)),
}
# tanhshrink, x - tanh(x) as torch, magnifies the rounding of a device's tanh (WGSL's);
# quick_gelu's reference is torch's composition
RTOL = {"tanhshrink": 1e-5, "quick_gelu": 1e-5}


@pytest.mark.parametrize("names", [list(ELEMENTWISE)[:8], list(ELEMENTWISE)[8:]],
                         ids=["first", "second"])
def test_elementwise_edges(device: str, names: list[str]) -> None:
    """Values and gradients at EDGES, each group realized as one graph."""
    up = np.linspace(0.5, 1.5, EDGES.size).astype(np.float32)
    leaves, outs, loss = [], [], None
    for name in names:
        x = pg.Tensor(EDGES, device=device, requires_grad=True)
        y = ELEMENTWISE[name][0](x)
        term = (y * pg.Tensor(up, device=device)).sum()
        loss = term if loss is None else loss + term
        leaves.append(x)
        outs.append(y)
    assert loss is not None
    loss.backward()
    pg.realize(*outs, *(x.grad for x in leaves if x.grad is not None))
    for name, x, y in zip(names, leaves, outs, strict=True):
        tx = torch.tensor(EDGES, requires_grad=True)
        ty = ELEMENTWISE[name][1](tx)
        (ty * torch.tensor(up)).sum().backward()
        try:
            _check_edges(name, x, y, tx, ty)
        except AssertionError as e:
            raise AssertionError(f"{name} on {device}: {e}") from None


def _check_edges(name: str, x: pg.Tensor, y: pg.Tensor, tx: torch.Tensor,
                 ty: torch.Tensor) -> None:
    got, want = y.numpy(), ty.detach().numpy()
    # results below float32's normal range (silu(-100) is -3.7e-42) are flushed on GPUs
    np.testing.assert_allclose(got, want, rtol=RTOL.get(name, 2e-6), atol=1e-37,
                               equal_nan=True)
    zero = (want == 0) & (got == 0)
    # (softshrink's zero between the thresholds is +0.0 in torch's vectorised kernel, -0.0
    # for -0.0 in its scalar one)
    if name not in ("swish", "quick_gelu", "softshrink"):
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
    assert x.grad is not None and tx.grad is not None
    grad, want_grad = x.grad.numpy(), tx.grad.numpy()
    if name in ("hardtanh", "relu6"):
        # torch passes the gradient at NaN in its scalar kernel (a vector's tail) and not in
        # its vectorised one; picograd never does
        assert grad[-1] == 0
        grad, want_grad = grad[:-1], want_grad[:-1]
    # (softsign's gradient at 1e12 is 1e-24; torch's rounding of 1/d - |x|/d/d leaves 1e-19)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-5, atol=1e-18, equal_nan=True)


def _pair(device: str, shape: tuple[int, ...], seed: int = 0
          ) -> tuple[pg.Tensor, torch.Tensor]:
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 2
    return pg.Tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)


ALONG: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "softmin": (lambda x: F.softmin(x, dim=1), lambda x: TF.softmin(x, dim=1)),
    "softmin_implicit": (F.softmin, lambda x: TF.softmin(x, dim=0)),  # 3-D: dim 0
    "glu": (lambda x: F.glu(x, 1), lambda x: TF.glu(x, 1)),
    "glu_last": (F.glu, TF.glu),
    "normalize": (F.normalize, TF.normalize),
    "normalize_p1": (lambda x: F.normalize(x, 1.0, dim=-1), lambda x: TF.normalize(x, 1.0, -1)),
}


@pytest.mark.parametrize("name", ALONG)
def test_along_a_dim(device: str, name: str) -> None:
    ours, theirs = ALONG[name]
    x, tx = _pair(device, (3, 4, 2))
    want = theirs(tx)
    up = np.random.default_rng(5).standard_normal(tuple(want.shape)).astype(np.float32)
    assert_forward_and_grads_match(ours(x), want, [x], [tx], up, device)


def test_normalize_zero_rows(device: str) -> None:
    a = np.array([[0.0, 0.0, 0.0], [3.0, -4.0, 0.0]], np.float32)
    x, tx = pg.Tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)
    assert_forward_and_grads_match(F.normalize(x), TF.normalize(tx), [x], [tx],
                                   np.ones((2, 3), np.float32), device)


@pytest.mark.parametrize("channels", [1, 3])
def test_prelu(device: str, channels: int) -> None:
    x, tx = _pair(device, (2, 3, 4))
    w = np.linspace(-0.5, 0.75, channels).astype(np.float32)
    pw, tw = pg.Tensor(w, device=device, requires_grad=True), torch.tensor(w, requires_grad=True)
    up = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(np.float32)
    assert_forward_and_grads_match(F.prelu(x, pw), TF.prelu(tx, tw), [x, pw], [tx, tw], up,
                                   device)
    with pytest.raises(pg.ShapeError):
        F.prelu(x, pg.ones(2, device=device))


def test_rrelu_training_draws_slopes_in_range(device: str) -> None:
    pg.manual_seed(0)
    x = pg.full((4, 256), -1.0, device=device)
    y = F.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert ((y >= -0.3) & (y <= -0.1)).all() and len(np.unique(y)) > 100
    assert np.isclose(y.mean(), -0.2, atol=0.01)  # U(0.1, 0.3): mean 0.2, sd 0.06 / 32
    np.testing.assert_array_equal(F.rrelu(pg.Tensor([2.0], device=device), training=True)
                                  .numpy(), [2.0])


def test_errors(device: str) -> None:
    with pytest.raises(pg.ShapeError):
        F.glu(pg.ones(2, 3, device=device))
    with pytest.raises(pg.ShapeError):
        F.celu(pg.ones(2, device=device), 0.0)
    with pytest.raises(pg.ShapeError):
        F.hardtanh(pg.ones(2, device=device), 1.0, -1.0)


MODULES: list[tuple[Callable[[], Any], Callable[[], Any]]] = [
    (lambda: nn.CELU(0.5), lambda: torch.nn.CELU(0.5)),
    (nn.SELU, torch.nn.SELU),
    (lambda: nn.Hardtanh(-2.0, 2.0), lambda: torch.nn.Hardtanh(-2.0, 2.0)),
    (nn.Softsign, torch.nn.Softsign),
    (lambda: nn.Softmin(1), lambda: torch.nn.Softmin(1)),
    (lambda: nn.Softmax(-1), lambda: torch.nn.Softmax(-1)),
    (lambda: nn.LogSoftmax(0), lambda: torch.nn.LogSoftmax(0)),
    (nn.LogSigmoid, torch.nn.LogSigmoid),
    (lambda: nn.GLU(1), lambda: torch.nn.GLU(1)),
    (nn.Hardshrink, torch.nn.Hardshrink),
    (lambda: nn.Softshrink(0.3), lambda: torch.nn.Softshrink(0.3)),
    (nn.Tanhshrink, torch.nn.Tanhshrink),
    (lambda: nn.Threshold(0.1, 20.0), lambda: torch.nn.Threshold(0.1, 20.0)),
    (nn.RReLU, torch.nn.RReLU),  # eval mode: the mean slope
    (nn.Identity, torch.nn.Identity),
]


@pytest.mark.parametrize("index", range(len(MODULES)))
def test_modules(device: str, index: int) -> None:
    make, make_torch = MODULES[index]
    m, tm = make().eval(), make_torch().eval()
    x, tx = _pair(device, (3, 4), seed=index)
    want = tm(tx)
    up = np.random.default_rng(3).standard_normal(tuple(want.shape)).astype(np.float32)
    assert_forward_and_grads_match(m(x), want, [x], [tx], up, device)


def test_prelu_module_state_dict(device: str) -> None:
    m, tm = nn.PReLU(3, init=0.1, device=device), torch.nn.PReLU(3, init=0.1)
    assert list(m.state_dict()) == list(tm.state_dict()) == ["weight"]
    m.load_state_dict({"weight": pg.Tensor([0.5, -0.25, 0.0])})
    with torch.no_grad():
        tm.weight.copy_(torch.tensor([0.5, -0.25, 0.0]))
    x, tx = _pair(device, (2, 3, 2))
    up = np.ones((2, 3, 2), np.float32)
    assert_forward_and_grads_match(m(x), tm(tx), [x, m.weight], [tx, tm.weight], up, device)
    assert nn.PReLU().weight.shape == (1,)
