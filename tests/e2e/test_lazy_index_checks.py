"""Computed (lazy) indices out of range raise when a result that depends on them is read.

An index tensor still pending when an op uses it cannot be checked on the host. The op's
result carries a range check (the index's min and max, computed in the same graph), and
reading the result, or anything computed from it, raises `IndexRangeError` naming the op,
the value, the dim's size and the line that indexed. On every device, for every op that
selects or writes by index; inside `pg.jit`, replays check their new arguments too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
import picograd.frontend.lazy as lazy
import picograd.nn.functional as F
from picograd.errors import IndexRangeError

torch = pytest.importorskip("torch", reason="torch is the oracle of the loss values")


def _computed(values: list[int], device: str) -> pg.Tensor:
    """An int32 index computed on the device (pending: its values are not on the host, and
    a product's bounds are not derived before it runs, `lazy.static_range`)."""
    return (pg.Tensor(np.array(values, np.int32) - 1, device=device) + 1) * 1


def _table(device: str) -> pg.Tensor:
    return pg.Tensor(np.arange(12, dtype=np.float32).reshape(4, 3), device=device)


# op name in the error, the op on a 4 x 3 table and an index computed on the device
OPS: dict[str, tuple[str, Callable[[pg.Tensor, pg.Tensor], pg.Tensor]]] = {
    "getitem": ("getitem", lambda t, i: t[i]),
    "getitem-two-dims": ("getitem", lambda t, i: t[i, i.clamp(0, 2)]),
    "index_select": ("index_select", lambda t, i: t.index_select(0, i)),
    "gather": ("gather", lambda t, i: t.gather(0, i.reshape(-1, 1).expand(i.shape[0], 3))),
    "take_along_dim": ("take_along_dim", lambda t, i: t.take_along_dim(i)),
    "scatter": ("scatter", lambda t, i: t.scatter(0, i.reshape(-1, 1), 1.0)),
    "scatter_add": ("scatter_add", lambda t, i: t.scatter_add(
        0, i.reshape(-1, 1), pg.ones(i.shape[0], 1, device=t.device))),
    "index_copy": ("index_copy", lambda t, i: t.index_copy(
        0, i, pg.zeros(i.shape[0], 3, device=t.device))),
    "embedding": ("embedding", lambda t, i: F.embedding(i, t)),
    "one_hot": ("one_hot", lambda t, i: i.one_hot(4)),
}


@pytest.mark.parametrize("name", list(OPS))
def test_a_computed_index_out_of_range_raises_when_read(device: str, name: str) -> None:
    op, fn = OPS[name]
    out = fn(_table(device), _computed([1, 99, 2], device))
    with pytest.raises(IndexRangeError, match=rf"{op}: (index|class) 99 is out of bounds for a dim "
                                              r"of size \d") as info:
        out.numpy()
    assert "test_lazy_index_checks.py" in str(info.value)  # the line that indexed
    with pytest.raises(IndexRangeError):  # and again: the wrong values are never handed out
        out.numpy()


@pytest.mark.parametrize("name", list(OPS))
def test_a_computed_index_in_range_gives_the_realized_indexs_result(device: str,
                                                                    name: str) -> None:
    _, fn = OPS[name]
    held = pg.Tensor(np.array([1, 3, 0], np.int32), device=device)
    want = fn(_table(device), held).numpy()
    np.testing.assert_array_equal(fn(_table(device), _computed([1, 3, 0], device)).numpy(),
                                  want)


def test_negative_computed_indices_count_from_the_end(device: str) -> None:
    table = _table(device)
    np.testing.assert_array_equal(table[_computed([-1, -4], device)].numpy(),
                                  table.numpy()[[-1, -4]])
    with pytest.raises(IndexRangeError, match="index -5 is out of bounds"):
        table[_computed([-5, 0], device)].numpy()
    with pytest.raises(IndexRangeError, match="index_select: index -1 is out of bounds"):
        table.index_select(0, _computed([-1], device)).numpy()  # torch allows none here


def test_results_computed_from_a_bad_selection_raise_too(device: str) -> None:
    picked = _table(device)[_computed([0, 7], device)]
    total = (picked * 2).sum()
    with pytest.raises(IndexRangeError, match="getitem: index 7"):
        total.item()
    later = picked + 1  # made after the failed read: still refuses
    with pytest.raises(IndexRangeError, match="getitem: index 7"):
        later.numpy()


def test_an_index_from_argmax(device: str) -> None:
    scores = pg.Tensor(np.array([0.5, 3.0, 1.0], np.float32), device=device)
    table = _table(device)
    np.testing.assert_array_equal(table[scores.argmax()].numpy(), table.numpy()[1])
    with pytest.raises(IndexRangeError, match="index 4 is out of bounds for a dim of size 4"):
        table[scores.argmax() + 3].numpy()


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_a_computed_target_out_of_range_raises_and_ignore_index_is_exempt(
        device: str, loss: str) -> None:
    fn = getattr(F, loss)
    scores = np.log(np.full((3, 4), 0.25, np.float32))  # logits, or log-probabilities
    logits = pg.Tensor(scores, device=device)
    with pytest.raises(IndexRangeError, match=rf"{loss}: target 7 is out of bounds for a dim "
                                              "of size 4"):
        fn(logits, _computed([0, 7, 1], device)).item()
    got = fn(logits, _computed([0, -100, 1], device)).item()  # the default ignore_index
    want = getattr(torch.nn.functional, loss)(torch.tensor(scores), torch.tensor([0, -100, 1]))
    assert got == pytest.approx(want.item(), rel=1e-5)


def test_the_gradient_of_a_bad_selection_raises(device: str) -> None:
    table = pg.Tensor(np.ones((4, 3), np.float32), device=device, requires_grad=True)
    F.embedding(_computed([2, 5], device), table).sum().backward()
    assert table.grad is not None
    with pytest.raises(IndexRangeError, match="embedding: index 5"):
        table.grad.numpy()


def test_a_realized_index_adds_no_check_to_the_graph(device: str) -> None:
    held = pg.Tensor(np.array([1, 2], np.int32), device=device)
    out = _table(device)[held]
    assert not out._node.guards  # checked on the host at the op: nothing to compute
    lazy = _table(device)[_computed([1, 2], device)]
    assert len(lazy._node.guards) == 1
    lazy.realize()
    assert not lazy._node.guards  # passed: forgotten


def test_jit_replays_check_new_index_arguments(device: str) -> None:
    table = _table(device)

    @pg.jit
    def pick(ids: pg.Tensor) -> Any:
        return (table[ids] * 2).sum()

    def ids(values: list[int]) -> pg.Tensor:
        return pg.Tensor(np.array(values, np.int32), device=device).realize()

    for _ in range(3):  # eager, capture, replay
        assert pick(ids([0, 1])).item() == 2 * (0 + 1 + 2 + 3 + 4 + 5)
    with pytest.raises(IndexRangeError, match="getitem: index 6 is out of bounds for a dim "
                                              "of size 4"):
        pick(ids([0, 6]))  # a replay: the function's Python does not run
    assert pick(ids([3, 3])).item() == 2 * 2 * (9 + 10 + 11)


def test_a_jitted_decoder_step_checks_its_computed_token(device: str) -> None:
    weight = pg.Tensor(np.eye(4, dtype=np.float32), device=device)

    @pg.jit
    def step(scores: pg.Tensor, shift: pg.Tensor) -> Any:
        token = scores.argmax() + shift.sum()  # computed: never on the host
        return F.embedding(token.reshape(1), weight)

    def run(best: int, shift: int) -> np.ndarray:
        scores = np.zeros(4, np.float32)
        scores[best] = 1.0
        return step(pg.Tensor(scores, device=device).realize(),
                    pg.Tensor(np.array([shift], np.int32), device=device).realize()).numpy()

    for best in (1, 2, 3):  # eager, capture, replay
        np.testing.assert_array_equal(run(best, 0), np.eye(4, dtype=np.float32)[[best]])
    with pytest.raises(IndexRangeError, match="embedding: index 5"):
        run(3, 2)


# ── bounds known before the run (`lazy.static_range`) ────────────────────────


def _cache_write(device: str, position: Any) -> pg.Tensor:
    """A KV cache update at `arange(1) + position`, as a decode step writes it."""
    cache = pg.Tensor(np.zeros((1, 6, 2), np.float32), device=device).realize()
    pos = pg.Tensor.arange(1, dtype=pg.int32, device=device) + position
    return cache.index_copy(1, pos, pg.Tensor(np.ones((1, 1, 2), np.float32), device=device))


def test_a_position_inside_its_variables_range_needs_no_device_check(device: str) -> None:
    position = pg.Variable("p", 0, 5)  # every value it can be bound to fits the dim of 6
    for at in (0, 3, 5):
        out = _cache_write(device, position.bind(at))
        assert not out._node.guards
        want = np.zeros((1, 6, 2), np.float32)
        want[0, at] = 1
        np.testing.assert_array_equal(out.numpy(), want)


def test_a_variable_whose_range_passes_the_dim_is_still_checked(device: str) -> None:
    position = pg.Variable("q", 0, 9)  # 6..9 would write past the dim of 6
    out = _cache_write(device, position.bind(2))
    assert len(out._node.guards) == 1
    assert out.numpy()[0, 2].tolist() == [1, 1]
    with pytest.raises(IndexRangeError, match="index_copy: index 7 is out of bounds"):
        _cache_write(device, position.bind(7)).numpy()


def test_bounds_that_could_wrap_around_are_not_trusted(device: str) -> None:
    # int32 max + 1 wraps to int32 min: the sum's bounds are not the operands' sum
    top = pg.Tensor(np.array([2**31 - 1], np.int32), device=device)
    index = top + 1  # 2**31 without the wrap: its bounds do not fit int32
    assert lazy.static_range(index._node) is None
    table = pg.Tensor(np.arange(6, dtype=np.float32), device=device)
    with pytest.raises(IndexRangeError, match="gather: index -2147483648"):
        table.gather(0, index).numpy()


def test_static_bounds_follow_views_casts_and_arithmetic() -> None:
    position = pg.Variable("r", 2, 7)
    base = pg.Tensor(np.array([0, 1, 2], np.int32))
    node = ((base + position.bind(4)).reshape(3, 1).expand(3, 2) - 1)._node
    assert lazy.static_range(node) == (1, 8)  # [0, 2] + [2, 7] - 1
    assert lazy.static_range(base.maximum(pg.Tensor(np.array([1, 1, 1], np.int32)))._node) \
        == (1, 2)
    assert lazy.static_range((base * 2)._node) is None  # products are not derived
    assert lazy.static_range(pg.Tensor(np.arange(100, dtype=np.int32))._node) is None  # large
    assert lazy.static_range(pg.Tensor(np.ones(3, np.float32))._node) is None


def test_a_capture_keeps_the_device_check_of_a_bounded_position(device: str) -> None:
    position = pg.Variable("s", 0, 5)
    cache = pg.Tensor(np.zeros((1, 6, 2), np.float32), device=device).realize()

    @pg.jit
    def write(at: Any) -> Any:
        pos = pg.Tensor.arange(1, dtype=pg.int32, device=device) + at
        out = cache.index_copy(1, pos, pg.Tensor(np.ones((1, 1, 2), np.float32), device=device))
        return out.sum(1)

    for at in (1, 2, 4):  # eager, capture, replay: a replay's value is not the capture's
        assert write(position.bind(at)).numpy().tolist() == [[1.0, 1.0]]
