"""Lazy nodes per composite: every node costs host time on every call (built, checked against
the cached plan), so LayerNorm, GELU and softmax build no more than they need. The bounds are
the counts of the graphs as written now (GELU's and softmax's backward are torch's formulas,
not the derivative of their decompositions); a change that adds nodes has to raise them
knowingly."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import picograd as pg
import picograd.nn as nn
from picograd.frontend.realize import linearize

torch = pytest.importorskip("torch", reason="torch is the oracle of the values")

SHAPE = (2, 8, 32)


def _nodes(*tensors: pg.Tensor) -> int:
    return len(linearize([t._node for t in tensors])[0])


def _layer_norm() -> nn.LayerNorm:
    layer = nn.LayerNorm(SHAPE[-1])
    for p in layer.parameters():
        p.realize()
    return layer


# name -> (picograd function, torch function, forward bound, forward + backward bound)
COMPOSITES: dict[str, tuple[Callable[[], Callable], Callable, int, int]] = {
    # (its mean is computed twice, by layer_norm and by var: sharing it, 22 nodes, changed
    # which intermediates a grad-mode realize hands back, and a decoder's graphs grew by a
    # layer each; see docs/design.md "Host work per call")
    "layer_norm": (_layer_norm, lambda t: torch.nn.functional.layer_norm(t, SHAPE[-1:]),
                   28, 47),
    "gelu": (lambda: lambda t: t.gelu(), torch.nn.functional.gelu, 69, 82),
    "softmax": (lambda: lambda t: t.softmax(-1), lambda t: t.softmax(-1), 8, 18),
}


@pytest.mark.parametrize("name", list(COMPOSITES))
def test_composites_build_at_most_their_nodes(name: str) -> None:
    make, reference, forward_bound, backward_bound = COMPOSITES[name]
    fn = make()
    data = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32) * 3
    seed = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    with pg.no_grad():
        forward = fn(pg.Tensor(data))
    assert _nodes(forward) <= forward_bound
    x = pg.Tensor(data, requires_grad=True)
    (fn(x) * pg.Tensor(seed)).sum().backward()
    assert x.grad is not None
    assert _nodes(x.grad) <= backward_bound
    tx = torch.tensor(data, requires_grad=True)
    (reference(tx) * torch.from_numpy(seed)).sum().backward()
    np.testing.assert_allclose(forward.numpy(), reference(torch.tensor(data)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    assert tx.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_a_kv_cache_write_at_a_bounded_position_builds_no_range_check() -> None:
    """A decode step's `index_copy_` at `arange(1) + position` (a variable whose range fits
    the cache): the position's bounds are known before the run, so no min / max / cat of
    the index is built and computed with every write (`lazy.static_range`)."""
    cache = pg.Tensor(np.zeros((1, 2, 16, 4), np.float32)).realize()
    position = pg.Variable("at", 0, 15)
    pos = pg.Tensor.arange(1, dtype=pg.int32) + position.bind(3)
    out = cache.index_copy(2, pos, pg.Tensor(np.ones((1, 2, 1, 4), np.float32)))
    assert not out._node.guards
    assert _nodes(out) <= 13  # (one slice written: no scatter order, no gather)
    assert out.numpy()[0, :, 3].tolist() == [[1.0] * 4] * 2



def _stack_backward_nodes(steps: int) -> tuple[int, list[np.ndarray]]:
    """The nodes of the first piece's gradient in a stack of `steps` pieces, and every
    piece's gradient."""
    data = np.random.default_rng(0).standard_normal((steps, 3)).astype(np.float32)
    pieces = [pg.Tensor(row, requires_grad=True) for row in data]
    weights = pg.Tensor(np.arange(steps * 3, dtype=np.float32).reshape(steps, 3))
    (pg.stack([p.tanh() for p in pieces], 0) * weights).sum().backward()
    grads = [p.grad for p in pieces]
    assert all(g is not None for g in grads)
    return _nodes(grads[0]), [g.numpy() for g in grads]  # type: ignore[union-attr]


def test_a_stack_piece_gradient_does_not_grow_with_the_pieces() -> None:
    # cat's own backward slices the output gradient once per piece; through its select
    # chain the first piece's gradient was a select per later piece (each per-step kernel
    # of a 100-step LSTM read a 100-deep chain: its compile was quadratic)
    small, _ = _stack_backward_nodes(4)
    large, grads = _stack_backward_nodes(32)
    assert large == small
    data = np.random.default_rng(0).standard_normal((32, 3)).astype(np.float32)
    t = torch.tensor(data, requires_grad=True)
    (torch.tanh(t) * torch.arange(96, dtype=torch.float32).reshape(32, 3)).sum().backward()
    assert t.grad is not None
    np.testing.assert_allclose(np.stack(grads), t.grad.numpy(), rtol=1e-5, atol=1e-6)
