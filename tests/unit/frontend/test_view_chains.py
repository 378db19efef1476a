"""A view of a view is built as one node (`MovementOps.reshape` / `permute`): a reshape of a
reshape is one reshape of the first one's source (or that source, when the shapes agree), a
permute of a permute one permute (or the source, when they cancel, as a weight transposed by
`linear` and back by `matmul`). Autograd still sees each op of the user's program, a view
that carries a range check keeps its node, and a cached plan never mixes the two forms."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from picograd.errors import IndexRangeError
from picograd.frontend.lazy import RangeGuard
from picograd.frontend.realize import linearize

torch = pytest.importorskip("torch", reason="torch is the oracle of the gradients")

rng = np.random.default_rng(3)


def _ops(t: pg.Tensor) -> list[str]:
    return [n.op for n in linearize([t._node])[0]]


def test_a_reshape_of_a_reshape_is_one_node_and_back_is_the_source() -> None:
    x = pg.Tensor(rng.standard_normal((2, 3, 4)).astype(np.float32))
    y = x.reshape(6, 4).reshape(4, 6)
    assert _ops(y) == ["buffer", "reshape"]
    assert x.reshape(24).reshape(2, 3, 4)._node is x._node
    np.testing.assert_array_equal(y.numpy(), x.numpy().reshape(4, 6))


def test_a_permute_of_a_permute_is_one_node_and_cancelling_ones_are_the_source() -> None:
    data = rng.standard_normal((2, 3, 4)).astype(np.float32)
    x = pg.Tensor(data)
    y = x.permute(2, 0, 1).permute(0, 2, 1)
    assert _ops(y) == ["buffer", "permute"]
    np.testing.assert_array_equal(y.numpy(), data.transpose(2, 0, 1).transpose(0, 2, 1))
    assert x.transpose(0, 1).transpose(0, 1)._node is x._node
    w = pg.Tensor(rng.standard_normal((5, 4)).astype(np.float32))
    out = pg.Tensor(data) @ w.transpose(0, 1)  # matmul transposes its right operand back
    assert "permute" not in _ops(out)
    np.testing.assert_allclose(out.numpy(), data @ w.numpy().T, rtol=1e-5, atol=1e-5)


def test_gradients_flow_through_every_view_of_a_chain() -> None:
    data = rng.standard_normal((2, 3, 4)).astype(np.float32)
    seed = rng.standard_normal((4, 2, 3)).astype(np.float32)
    x = pg.Tensor(data, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    (x.reshape(6, 4).reshape(2, 12).reshape(2, 3, 4).permute(1, 2, 0).permute(1, 2, 0)
     * pg.Tensor(seed)).sum().backward()
    (tx.reshape(6, 4).reshape(2, 12).reshape(2, 3, 4).permute(1, 2, 0).permute(1, 2, 0)
     * torch.from_numpy(seed)).sum().backward()
    assert x.grad is not None and tx.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    # a cancelling pair: the result shares the source's node, the gradient is still the view's
    w = pg.Tensor(data[0], requires_grad=True)
    (w.transpose(0, 1).transpose(0, 1) * 3.0).sum().backward()
    assert w.grad is not None
    np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 4), 3.0, np.float32))


def test_a_view_that_carries_a_range_check_keeps_its_node() -> None:
    table = pg.Tensor(np.arange(4, dtype=np.float32))
    index = pg.Tensor(np.array([1, 9], np.int32)) * 1  # computed: checked when read
    picked = table[index]
    assert picked._node.guards
    with pytest.raises(IndexRangeError, match="index 9"):
        picked.reshape(2, 1).reshape(2).numpy()
    # the check's own node (a reshape that adds it) is not skipped by a reshape after it
    bounds = pg.Tensor(np.array([0, 9], np.int32))
    carrying = index._carrying(RangeGuard(bounds._node, "test", "index", 0, 4))
    after = carrying.reshape(2, 1)
    assert after._node.src[0] is carrying._node and after._node.guards
    with pytest.raises(IndexRangeError, match="test: index 9"):
        after.numpy()


def test_plans_of_the_chained_and_the_single_view_do_not_mix() -> None:
    data = rng.standard_normal((3, 4)).astype(np.float32)
    for _ in range(2):  # the second round runs on cached plans
        x = pg.Tensor(data)
        chained = x.reshape(12).reshape(4, 3) + 1.0
        single = x.reshape(4, 3) + 1.0
        transposed = x.permute(1, 0).permute(1, 0).reshape(4, 3) + 1.0
        for t in (chained, single, transposed):
            np.testing.assert_array_equal(t.numpy(), data.reshape(4, 3) + 1)
