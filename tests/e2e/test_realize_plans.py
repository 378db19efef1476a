"""A cached realize looks its plan up by the outputs' structural keys (`LazyOp.key`) and checks
the graph against it node by node. A wrong hit would be a silently wrong answer: graphs that
differ in anything the program bakes in (a shape, a dtype, a constant, a view's parameters,
which nodes are shared, a node realized since its consumers were built, a range check) must
not run each other's program, and the inputs are always the graph's own buffers."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
import picograd.frontend.lazy as lazy
import picograd.frontend.realize as realize_mod
from picograd.errors import IndexRangeError

from .helpers import assert_matches

rng = np.random.default_rng(7)


def _data(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _compiles(before: pg.CompileStats) -> int:
    return pg.compile_stats().compiles - before.compiles


def test_equal_structure_hits_the_plan_and_runs_on_the_new_buffers(device: str) -> None:
    x, y = _data(6), _data(6)
    (pg.Tensor(x, device=device) * pg.Tensor(y, device=device) + 1.0).realize()
    before = pg.compile_stats()
    for _ in range(3):
        x, y = _data(6), _data(6)
        assert_matches(pg.Tensor(x, device=device) * pg.Tensor(y, device=device) + 1.0,
                       x * y + 1, rtol=1e-6, atol=1e-6)
    after = pg.compile_stats()
    assert (after.compiles - before.compiles, after.cache_hits - before.cache_hits) == (0, 3)


@pytest.mark.parametrize("name, first, second", [
    ("shape", lambda x: x[:3] + 1.0, lambda x: x[:4] + 1.0),
    ("dtype", lambda x: x + 1.0, lambda x: x.half() + 1.0),
    ("constant", lambda x: x * 2.0, lambda x: x * 3.0),
    ("signed zero", lambda x: x * 0.0, lambda x: x * -0.0),
    ("flip axis", lambda x: x.reshape(2, 3).flip(0), lambda x: x.reshape(2, 3).flip(1)),
    ("permutation", lambda x: x.reshape(1, 6, 1).permute(1, 0, 2),
     lambda x: x.reshape(1, 6, 1).permute(1, 2, 0)),
    ("slice start", lambda x: x[1:4], lambda x: x[2:5]),
    ("pad value", lambda x: x.pad(((1, 1),), value=0.0), lambda x: x.pad(((1, 1),), value=5.0)),
    ("reduce kind", lambda x: x.sum(), lambda x: x.max()),
])
def test_graphs_that_differ_in_one_baked_in_attribute_do_not_share_a_program(
        device: str, name: str, first, second) -> None:
    x = _data(6)
    t = pg.Tensor(x, device=device)
    want_first = first(pg.Tensor(x, device="CPU:LLVM")).numpy()
    want_second = second(pg.Tensor(x, device="CPU:LLVM")).numpy()
    assert_matches(first(t), want_first)
    assert_matches(second(t), want_second)  # after `first`'s plan exists
    assert_matches(first(t), want_first)  # and back
    if name in ("signed zero",) and device != "WEBGPU":
        assert np.signbit(second(t).numpy()[x > 0]).all()


def test_which_nodes_are_shared_is_part_of_the_match(device: str) -> None:
    """a + b and a + a have equal keys (a tree of a buffer added to a buffer of one shape):
    the plan of one must not run the other, whichever came first."""
    a_np, b_np = _data(5), _data(5)
    a, b = pg.Tensor(a_np, device=device), pg.Tensor(b_np, device=device)
    assert (a + b)._node.key == (a + a)._node.key
    assert_matches(a + b, a_np + b_np)
    assert_matches(a + a, a_np + a_np)
    assert_matches(a + b, a_np + b_np)
    e = a.exp()  # an internal node shared, or two equal ones
    assert_matches(e * e, np.exp(a_np) ** 2, rtol=1e-5)
    assert_matches(a.exp() * b.exp(), np.exp(a_np) * np.exp(b_np), rtol=1e-5)
    assert_matches(e * e, np.exp(a_np) ** 2, rtol=1e-5)


def test_a_source_realized_after_its_consumer_was_built_is_an_input(device: str) -> None:
    """A consumer keeps the key it was built with; a source given new values since (assign)
    must be read from its buffer, not computed again from the graph it had."""
    x_np, v_np = _data(4), _data(4)
    x = pg.Tensor(x_np, device=device)
    assert_matches(x.exp() * 2.0, np.exp(x_np) * 2, rtol=1e-5)  # the plan of exp(x) * 2
    y = x.exp()
    z = y * 2.0
    y.assign(pg.Tensor(v_np, device=device))
    assert_matches(z, v_np * 2)


def test_a_constant_given_values_since_is_an_input(device: str) -> None:
    """A constant has no sources before and after it became a buffer: only its key tells."""
    x_np, v_np = _data(4), _data(4)
    x = pg.Tensor(x_np, device=device)
    assert_matches(pg.zeros(4, device=device) + x, x_np)
    c = pg.zeros(4, device=device)
    w = c + x
    c.assign(pg.Tensor(v_np, device=device))
    assert_matches(w, v_np + x_np)


def test_a_range_check_is_not_dropped_by_a_cached_plan(device: str) -> None:
    table = pg.Tensor(np.arange(12, dtype=np.float32).reshape(4, 3), device=device)

    def picked(values: list[int]) -> pg.Tensor:
        index = pg.Tensor(np.array(values, np.int32) - 1, device=device) + 1  # computed
        return table[index]

    assert_matches(picked([0, 3, 1]), np.arange(12, dtype=np.float32).reshape(4, 3)[[0, 3, 1]])
    with pytest.raises(IndexRangeError, match="index 9 is out of bounds"):
        picked([0, 9, 1]).numpy()
    assert_matches(picked([2, 2, 0]), np.arange(12, dtype=np.float32).reshape(4, 3)[[2, 2, 0]])


def test_a_plan_checks_every_node_not_only_the_outputs_keys(device: str) -> None:
    """A graph whose outputs have the plan's keys but whose node was replaced (a realized
    source is a buffer now) falls back to a walk: the answer and the compile count say so."""
    x_np = _data(3, 4)
    x = pg.Tensor(x_np, device=device)
    y = (x * 3.0).sum(axis=1)
    assert_matches(y, (x_np * 3).sum(axis=1), rtol=1e-5)
    inner = x * 3.0
    outer = inner.sum(axis=1)
    inner.realize()
    plan = realize_mod._PLANS.get((device, outer._node.key))
    assert plan is not None and realize_mod._match(plan, [outer._node]) is None
    assert_matches(outer, (x_np * 3).sum(axis=1), rtol=1e-5)


def test_structure_numbers_are_never_reused_after_the_table_starts_afresh(
        monkeypatch: pytest.MonkeyPatch) -> None:
    x = pg.Tensor(_data(4))
    old = {(x * c)._node.key for c in (2.0, 3.0, 4.0)}
    monkeypatch.setattr(lazy, "_MAX_STRUCTURES", 2)
    new = {(x + c)._node.key for c in (5.0, 6.0, 7.0, 8.0)}
    assert not old & new
    assert_matches(x + 5.0, x.numpy() + 5)
    assert_matches(x * 2.0, x.numpy() * 2)


def test_clear_cache_forgets_the_plans() -> None:
    x = pg.Tensor(_data(4))
    (x + 1.0).realize()
    assert realize_mod._PLANS
    pg.frontend.clear_cache()
    assert not realize_mod._PLANS
    before = pg.compile_stats()
    assert_matches(x + 1.0, x.numpy() + 1)
    assert _compiles(before) == 1
