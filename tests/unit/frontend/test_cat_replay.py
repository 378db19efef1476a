"""A cat of many pieces is built once per pieces' shapes and replayed (`Recording`): the
replay builds the nodes the Tensor methods build (equal structure keys, so the same cached
programs) and gives their values; other shapes, dtypes or dims record anew."""

from __future__ import annotations

import numpy as np

import picograd as pg
from picograd.frontend import ops_shape

RNG = np.random.default_rng(0)


def _pieces(shapes: list[tuple[int, ...]], dtype=np.float32) -> list[pg.Tensor]:
    return [pg.Tensor(RNG.standard_normal(s).astype(dtype)) for s in shapes]


def test_a_replayed_cat_is_the_cat_the_tensor_methods_build() -> None:
    pieces = _pieces([(1, 3, 4)] * 20)
    built = ops_shape._cat_built(pieces, 0, pieces[0].dtype)
    first = pg.cat(pieces, 0)
    again = pg.cat(_pieces([(1, 3, 4)] * 20), 0)
    assert first._node is not built._node and first._node.key == built._node.key
    assert again._node.key == first._node.key
    np.testing.assert_array_equal(first.numpy(), np.concatenate([p.numpy() for p in pieces]))


def test_other_shapes_dtypes_and_dims_are_recorded_anew() -> None:
    shapes = [(2, k % 3 + 1) for k in range(12)]  # pieces of differing sizes along dim 1
    pieces = _pieces(shapes)
    np.testing.assert_array_equal(pg.cat(pieces, 1).numpy(),
                                  np.concatenate([p.numpy() for p in pieces], 1))
    mixed = [pg.Tensor(np.arange(k, k + 2, dtype=np.int32)) for k in range(6)]
    mixed += _pieces([(2,)] * 6)
    out = pg.cat(mixed, 0)
    assert out.dtype == pg.float32
    np.testing.assert_array_equal(out.numpy(), np.concatenate([p.numpy() for p in mixed]))
    empty = _pieces([(0, 3)] * 9 + [(2, 3)])  # every piece but one empty
    np.testing.assert_array_equal(pg.cat(empty, 0).numpy(), empty[-1].numpy())


def test_a_replayed_cat_keeps_its_gradient_rule() -> None:
    pieces = [p.requires_grad_() for p in _pieces([(2, 2)] * 10)]
    weights = pg.Tensor(RNG.standard_normal((20, 2)).astype(np.float32))
    (pg.cat(pieces, 0) * weights).sum().backward()
    for k, p in enumerate(pieces):
        assert p.grad is not None
        np.testing.assert_array_equal(p.grad.numpy(), weights.numpy()[2 * k:2 * k + 2])


def _pending_nodes(t: pg.Tensor) -> set[int]:
    seen: set[int] = set()
    stack = [t._node]
    while stack:
        node = stack.pop()
        if id(node) not in seen and node.buffer is None:
            seen.add(id(node))
            stack.extend(node.src)
    return seen


def test_replays_share_no_pending_node() -> None:
    # a pending node shared by two graphs is referenced from outside the first one's
    # realize, which then hands it a buffer that the second graph reads as an input
    first = pg.cat(_pieces([(2, 3)] * 9), 0)
    second = pg.cat(_pieces([(2, 3)] * 9), 0)
    assert not _pending_nodes(first) & _pending_nodes(second)
    pieces = _pieces([(2, 3)] * 9)
    pg.realize(pg.cat(pieces, 0) * 2.0)
    np.testing.assert_array_equal(pg.cat(pieces, 0).numpy(),
                                  np.concatenate([p.numpy() for p in pieces]))
