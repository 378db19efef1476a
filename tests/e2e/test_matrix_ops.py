"""Matrix products, diagonals and norms (ops_matrix.py, ops_norm.py, picograd.linalg)
against torch, forward and backward, on every device, with torch's shape errors."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import picograd as pg

from .helpers import assert_forward_and_grads_match


def _inputs(device: str, *shapes: tuple[int, ...], seed: int = 0
            ) -> tuple[list[pg.Tensor], list[torch.Tensor]]:
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return ([pg.Tensor(a, device=device, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _check(device: str, fn: Callable[..., Any], *shapes: tuple[int, ...],
           torch_fn: Callable[..., Any] | None = None) -> None:
    ours, theirs = _inputs(device, *shapes)
    want = (torch_fn or fn)(*theirs)
    up = np.random.default_rng(9).standard_normal(tuple(want.shape)).astype(np.float32)
    assert_forward_and_grads_match(fn(*ours), want, ours, theirs, up, device)


PRODUCTS: dict[str, tuple[Callable[..., Any], tuple[tuple[int, ...], ...]]] = {
    "mm": (lambda a, b: a.mm(b), ((2, 3), (3, 4))),
    "bmm": (lambda a, b: a.bmm(b), ((2, 3, 4), (2, 4, 5))),
    "mv": (lambda a, b: a.mv(b), ((3, 4), (4,))),
    "dot": (lambda a, b: a.dot(b), ((5,), (5,))),
    "vdot": (lambda a, b: a.vdot(b), ((5,), (5,))),
    "inner": (lambda a, b: a.inner(b), ((2, 3, 4), (5, 4))),
    "outer": (lambda a, b: a.outer(b), ((3,), (4,))),
    "ger": (lambda a, b: a.ger(b), ((3,), (2,))),
    "kron": (lambda a, b: a.kron(b), ((2, 3), (3, 2))),
    "kron_mixed": (lambda a, b: a.kron(b), ((2,), (2, 3))),
    "cross": (lambda a, b: a.cross(b, dim=1), ((2, 3), (2, 3))),
    "cross_default": (lambda a, b: a.cross(b), ((4, 3, 3), (3, 1))),
    "addmm": (lambda c, a, b: c.addmm(a, b, beta=0.5, alpha=2.0), ((4,), (2, 3), (3, 4))),
    "baddbmm": (lambda c, a, b: c.baddbmm(a, b, alpha=-1.0), ((2, 3, 5), (2, 3, 4),
                                                              (2, 4, 5))),
    "addbmm": (lambda c, a, b: c.addbmm(a, b), ((3, 5), (2, 3, 4), (2, 4, 5))),
    "addmv": (lambda c, a, b: c.addmv(a, b, beta=2.0), ((3,), (3, 4), (4,))),
    "addr": (lambda c, a, b: c.addr(a, b), ((3, 4), (3,), (4,))),
    "trace": (lambda a: a.trace(), ((3, 4),)),
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_products(device: str, name: str) -> None:
    fn, shapes = PRODUCTS[name]
    if name == "cross_default":  # torch.cross without dim: the first dim of size 3
        _check(device, fn, *shapes, torch_fn=lambda a, b: torch.cross(
            a, b.expand(4, 3, 3), dim=1))
        return
    _check(device, fn, *shapes)


def test_beta_zero_ignores_nan_input(device: str) -> None:
    nan = pg.Tensor([[math.nan, math.inf]], device=device)
    a, b = pg.ones(2, 3, device=device), pg.ones(3, 2, device=device)
    np.testing.assert_array_equal(nan.addmm(a, b, beta=0).numpy(), np.full((2, 2), 3.0))


@pytest.mark.parametrize("offset", [-3, -1, 0, 1, 2, 5])
def test_diagonal_diag_embed(device: str, offset: int) -> None:
    _check(device, lambda a: a.diagonal(offset), (3, 4))
    _check(device, lambda a: a.diagonal(offset, 2, 0), (4, 2, 3))
    _check(device, lambda a: a.diag_embed(offset), (2, 3))
    _check(device, lambda a: a.diag_embed(offset, 0, 2), (2, 3))
    _check(device, lambda a: a.diag(offset), (3,))
    _check(device, lambda a: a.diag(offset), (4, 3))


def test_shape_errors(device: str) -> None:
    a = pg.ones(2, 3, device=device)
    bad: list[Callable[[], Any]] = [
        lambda: a.mm(pg.ones(2, 3, device=device)), lambda: a.mm(pg.ones(3, device=device)),
        lambda: a.bmm(a), lambda: a.dot(a), lambda: pg.ones(3, device=device).dot(
            pg.ones(4, device=device)),
        lambda: pg.ones(2, 2, device=device).cross(pg.ones(2, 2, device=device)),
        lambda: a.diagonal(0, 1, 1),
        lambda: pg.ones(3, device=device).diagonal(),
        lambda: pg.ones(2, 2, 2, device=device).trace(),
        lambda: pg.ones(2, 2, 2, device=device).diag(), lambda: a.outer(a),
        lambda: pg.ones(3, device=device).vdot(a)]
    for f in bad:
        with pytest.raises(pg.ShapeError):
            f()


def test_fill_diagonal(device: str) -> None:
    for shape, wrap in (((3, 3), False), ((5, 3), False), ((7, 3), True), ((3, 5), False),
                        ((3, 3, 3), False)):
        x = pg.zeros(*shape, device=device)
        t = torch.zeros(*shape)
        assert x.fill_diagonal_(2.5, wrap=wrap) is x
        t.fill_diagonal_(2.5, wrap=wrap)
        np.testing.assert_array_equal(x.numpy(), t.numpy())
    # the gradient flows to the elements off the diagonal, as torch's
    (w,), (tw,) = _inputs(device, (3, 3))
    y, ty = w * 2.0, tw * 2.0
    y.fill_diagonal_(0.0)
    ty.fill_diagonal_(0.0)
    assert_forward_and_grads_match(y, ty, [w], [tw], np.ones((3, 3), np.float32), device)
    with pytest.raises(pg.AutogradError):
        w.fill_diagonal_(1.0)


NORMS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "norm": (lambda x: x.norm(), lambda x: x.norm()),
    "norm1_dim": (lambda x: x.norm(1, dim=1), lambda x: x.norm(1, dim=1)),
    "norm3_keep": (lambda x: x.norm(3, dim=0, keepdim=True),
                   lambda x: x.norm(3, dim=0, keepdim=True)),
    "vector2": (lambda x: pg.linalg.vector_norm(x, dim=(0, 1)),
                lambda x: torch.linalg.vector_norm(x, dim=(0, 1))),
    "vector_inf": (lambda x: pg.linalg.vector_norm(x, math.inf, dim=1),
                   lambda x: torch.linalg.vector_norm(x, math.inf, dim=1)),
    "vector_minf": (lambda x: pg.linalg.vector_norm(x, -math.inf),
                    lambda x: torch.linalg.vector_norm(x, -math.inf)),
    "vector_half": (lambda x: pg.linalg.vector_norm(x, 0.5),
                    lambda x: torch.linalg.vector_norm(x, 0.5)),
    "fro": (lambda x: pg.linalg.matrix_norm(x), lambda x: torch.linalg.matrix_norm(x)),
    "mat1": (lambda x: pg.linalg.matrix_norm(x, 1), lambda x: torch.linalg.matrix_norm(x, 1)),
    "mat_inf_keep": (lambda x: pg.linalg.matrix_norm(x, math.inf, keepdim=True),
                     lambda x: torch.linalg.matrix_norm(x, math.inf, keepdim=True)),
    "mat_m1": (lambda x: pg.linalg.matrix_norm(x, -1, dim=(1, 0)),
               lambda x: torch.linalg.matrix_norm(x, -1, dim=(1, 0))),
    "linalg_norm": (lambda x: pg.linalg.norm(x), lambda x: torch.linalg.norm(x)),
    "linalg_norm_inf": (lambda x: pg.linalg.norm(x, math.inf),
                        lambda x: torch.linalg.norm(x, math.inf)),
    "linalg_norm_dim": (lambda x: pg.linalg.norm(x, 3, dim=1),
                        lambda x: torch.linalg.norm(x, 3, dim=1)),
}


@pytest.mark.parametrize("name", NORMS)
def test_norms(device: str, name: str) -> None:
    ours, theirs = NORMS[name]
    _check(device, ours, (3, 4), torch_fn=theirs)


def test_norm_of_zeros_and_errors(device: str) -> None:
    x = pg.Tensor(np.zeros((2, 3), np.float32), device=device, requires_grad=True)
    tx = torch.zeros(2, 3, requires_grad=True)
    assert_forward_and_grads_match(x.norm(dim=1), tx.norm(dim=1), [x], [tx],
                                   np.ones(2, np.float32), device)
    v = np.array([[0.0, 2.0, -1.0], [0.0, 0.0, 0.0]], np.float32)
    zero_norm = pg.linalg.vector_norm(pg.Tensor(v, device=device), 0, dim=1)
    np.testing.assert_array_equal(zero_norm.numpy(), torch.linalg.vector_norm(
        torch.tensor(v), 0, dim=1).numpy())
    with pytest.raises(pg.ShapeError):
        pg.linalg.matrix_norm(pg.ones(2, 2, device=device), "nuc")
    with pytest.raises(pg.ShapeError):
        pg.linalg.matrix_norm(pg.ones(2, device=device))
    with pytest.raises(pg.DTypeError):
        pg.linalg.vector_norm(pg.Tensor([1, 2], device=device))
