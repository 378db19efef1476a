"""`StepTemplate` replays a recorded step: the nodes it builds are the ones the Tensor
methods build (equal structure keys, so equal cached programs), nodes that depend on no
input are shared between replays, and what it cannot replay (other shapes, grad mode with
an input that requires grad, index checks of the step's own) runs the step itself."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from picograd.errors import IndexRangeError
from picograd.frontend.realize import linearize
from picograd.frontend.step_template import StepTemplate

RNG = np.random.default_rng(0)
W = RNG.standard_normal((4, 4)).astype(np.float32)


def _cell(w: pg.Tensor):
    def step(h: pg.Tensor, x: pg.Tensor) -> tuple[pg.Tensor, ...]:
        z = h @ w + x * 0.5
        return z.tanh(), z.sigmoid().sum(1)
    return step


def _loop(run, h: pg.Tensor, xs: list[pg.Tensor]) -> tuple[pg.Tensor, pg.Tensor]:
    total = None
    for x in xs:
        h, s = run(h, x)
        total = s if total is None else total + s
    assert total is not None
    return h, total


def test_a_replayed_loop_is_the_loop_the_tensor_methods_build() -> None:
    w = pg.Tensor(W)
    xs = [pg.Tensor(RNG.standard_normal((3, 4)).astype(np.float32)) for _ in range(5)]
    h0 = pg.Tensor(np.zeros((3, 4), np.float32))
    step = _cell(w)
    template = StepTemplate(step, h0, xs[0])
    direct = _loop(step, h0, xs)
    replayed = _loop(template, h0, xs)
    for a, b in zip(direct, replayed, strict=True):
        assert a._node is not b._node and a._node.key == b._node.key
    want = [t.numpy() for t in direct]
    for got, expected in zip(replayed, want, strict=True):
        np.testing.assert_array_equal(got.numpy(), expected)
    h = np.zeros((3, 4), np.float32)
    for x in xs:
        h = np.tanh(h @ W + x.numpy() * 0.5)
    np.testing.assert_allclose(want[0], h, rtol=1e-5, atol=1e-6)


def test_nodes_that_depend_on_no_input_are_built_once() -> None:
    w = pg.Tensor(W)
    template = StepTemplate(lambda h: (h @ (w * 3.0).exp(),),
                            pg.Tensor(np.ones((2, 4), np.float32)))
    a, = template(pg.Tensor(np.ones((2, 4), np.float32)))
    b, = template(pg.Tensor(np.full((2, 4), 2.0, np.float32)))
    exps = [[n for n in linearize([t._node])[0] if n.op == "unary"] for t in (a, b)]
    assert len(exps[0]) == 1 and exps[0][0] is exps[1][0]  # exp(3 w): one node
    np.testing.assert_allclose(b.numpy(), 2 * a.numpy(), rtol=1e-6)
    np.testing.assert_allclose(a.numpy(), np.ones((2, 4)) @ np.exp(3 * W), rtol=1e-5)


def test_other_shapes_and_gradients_run_the_step_itself() -> None:
    calls = []

    def step(x: pg.Tensor) -> tuple[pg.Tensor]:
        calls.append(x.shape)
        return (x * 2.0,)

    template = StepTemplate(step, pg.Tensor(np.ones(3, np.float32)))
    assert calls == [(3,)]
    template(pg.Tensor(np.ones(3, np.float32)))
    assert calls == [(3,)]  # replayed
    out, = template(pg.Tensor(np.ones(5, np.float32)))
    assert calls == [(3,), (5,)] and out.numpy().tolist() == [2.0] * 5
    x = pg.Tensor(np.ones(3, np.float32)).requires_grad_()
    out, = template(x)
    assert len(calls) == 3 and out.requires_grad
    out.sum().backward()
    assert x.grad is not None and x.grad.numpy().tolist() == [2.0] * 3


def test_a_step_with_an_index_check_of_its_own_is_not_replayed() -> None:
    table = pg.Tensor(np.arange(4, dtype=np.float32))
    calls = []

    def step(i: pg.Tensor) -> tuple[pg.Tensor]:
        calls.append(1)
        return (table[i + 1],)

    template = StepTemplate(step, pg.Tensor(np.array([0], np.int32)))
    out, = template(pg.Tensor(np.array([1], np.int32)))
    assert len(calls) == 2 and out.numpy().tolist() == [2.0]
    bad, = template(pg.Tensor(np.array([3], np.int32)))
    with pytest.raises(IndexRangeError):
        bad.numpy()
