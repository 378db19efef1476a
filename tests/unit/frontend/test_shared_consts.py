"""Python-number operands are shared constant nodes (`lazy.shared_const`): one node per
value, shape, dtype and device while it is alive and still a constant, with values that
stay exact (a float zero's sign, NaN) and results equal to numpy's."""

from __future__ import annotations

import numpy as np

import picograd as pg
from picograd.frontend.lazy import shared_const
from picograd.frontend.realize import linearize


def _consts(t: pg.Tensor) -> list:
    return [n for n in linearize([t._node])[0] if n.op == "const"]


def test_equal_numbers_of_a_graph_are_one_node() -> None:
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = pg.Tensor(data)
    out = (x * 2.0 + 1.0) * 2.0 + 1.0
    consts = _consts(out)
    assert sorted(n.arg for n in consts) == [1.0, 2.0]
    np.testing.assert_array_equal(out.numpy(), (data * 2 + 1) * 2 + 1)


def test_a_float_zero_keeps_its_sign_and_nan_is_never_shared() -> None:
    x = pg.Tensor(np.ones(3, np.float32))
    node_pos = shared_const(0.0, (3,), x.dtype, x.device)
    node_neg = shared_const(-0.0, (3,), x.dtype, x.device)
    assert node_pos is not node_neg and str(node_neg.arg) == "-0.0"
    assert shared_const(float("nan"), (3,), x.dtype, x.device) is not shared_const(
        float("nan"), (3,), x.dtype, x.device)
    # 1 / (x * -0.0) is -inf, 1 / (x * 0.0) is +inf: the two constants stay apart
    got = (1.0 / (x * -0.0)).numpy(), (1.0 / (x * 0.0)).numpy()
    assert np.all(got[0] == -np.inf) and np.all(got[1] == np.inf)


def test_shape_dtype_and_device_are_part_of_the_share() -> None:
    f = pg.Tensor(np.ones(3, np.float32))
    i = pg.Tensor(np.ones(3, np.int32))
    a, b, c = shared_const(2, (3,), f.dtype, f.device), shared_const(
        2, (3,), i.dtype, i.device), shared_const(2, (4,), f.dtype, f.device)
    assert len({id(a), id(b), id(c)}) == 3
    assert (i * 2).numpy().dtype == np.int32 and (f * 2).numpy().dtype == np.float32


def test_a_constant_that_became_a_buffer_is_not_handed_out_again() -> None:
    x = pg.Tensor(np.ones(3, np.float32))
    node = shared_const(3.0, (3,), x.dtype, x.device)
    node.become_buffer(np.full(3, 3.0, np.float32))
    again = shared_const(3.0, (3,), x.dtype, x.device)
    assert again is not node and again.op == "const"
    np.testing.assert_array_equal((x * 3.0).numpy(), np.full(3, 3.0, np.float32))


def test_a_shared_constant_across_realizes_gives_each_graph_its_value() -> None:
    """Two graphs share `* 0.5`; realizing one (a cached plan hit the second time) leaves
    the other's constant a constant and both values right, with new inputs each time."""
    rng = np.random.default_rng(0)
    for _ in range(3):
        a_data, b_data = (rng.standard_normal(4).astype(np.float32) for _ in range(2))
        a, b = pg.Tensor(a_data), pg.Tensor(b_data)
        ya, yb = a * 0.5, b * 0.5
        assert _consts(ya)[0] is _consts(yb)[0]
        np.testing.assert_array_equal(ya.numpy(), a_data * np.float32(0.5))
        assert _consts(yb)[0].op == "const"
        np.testing.assert_array_equal(yb.numpy(), b_data * np.float32(0.5))
