"""scatter_reduce, scatter(reduce=...), index_add, index_fill, index_put, put, take and
masked_scatter (and their in-place forms) against torch on every device: values and input
gradients."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from picograd.errors import IndexRangeError, ShapeError
from tests.e2e.helpers import assert_forward_and_grads_match

torch = pytest.importorskip("torch", reason="torch is the oracle of the scatter tests")

rng = np.random.default_rng(21)


def _pair(a: np.ndarray, device: str) -> tuple[pg.Tensor, torch.Tensor]:
    return pg.Tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)


def _up(shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(device: str, reduce: str, include_self: bool) -> None:
    base = rng.standard_normal((3, 4)).astype(np.float32)
    src = rng.standard_normal((2, 4)).astype(np.float32)
    src[0, 3] = 0.0  # prod's gradient at a zero
    ix = np.array([[0, 2, 2, 0], [2, 2, 0, 0]], np.int32)  # row 1 of the output: no index
    x, tx = _pair(base, device)
    s, ts = _pair(src, device)
    out = x.scatter_reduce(0, pg.Tensor(ix, device=device), s, reduce,
                           include_self=include_self)
    want = tx.scatter_reduce(0, torch.tensor(ix), ts, reduce, include_self=include_self)
    assert_forward_and_grads_match(out, want, [x, s], [tx, ts], _up((3, 4)), device)


def test_scatter_reduce_dim1_ints_and_edges(device: str) -> None:
    base = rng.integers(-5, 5, (2, 4)).astype(np.int32)
    src = rng.integers(-5, 5, (2, 3)).astype(np.int32)
    index = np.array([[3, 3, 0], [1, 2, 1]], np.int32)
    for reduce in ("sum", "prod", "amax", "amin", "mean"):
        got = pg.Tensor(base, device=device).scatter_reduce(
            1, pg.Tensor(index, device=device), pg.Tensor(src, device=device), reduce)
        want = torch.tensor(base).scatter_reduce(1, torch.tensor(index), torch.tensor(src),
                                                 reduce)
        np.testing.assert_array_equal(got.numpy(), want.numpy().astype(np.int32))
    empty = pg.Tensor(base, device=device).scatter_reduce(
        1, pg.Tensor(np.zeros((2, 0), np.int32), device=device),
        pg.Tensor(np.zeros((2, 0), np.int32), device=device), "sum")
    np.testing.assert_array_equal(empty.numpy(), base)
    with pytest.raises(ShapeError, match="reduce must be one of"):
        pg.Tensor(base).scatter_reduce(1, pg.Tensor(index), pg.Tensor(src), "max")
    with pytest.raises(IndexRangeError, match="scatter_reduce"):
        pg.Tensor(base).scatter_reduce(1, pg.Tensor(index + 2), pg.Tensor(src), "sum")


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce(device: str, reduce: str) -> None:
    base = rng.standard_normal((3, 3)).astype(np.float32)
    src = rng.standard_normal((2, 3)).astype(np.float32)
    index = np.array([[0, 1, 1], [0, 2, 1]], np.int32)
    got = pg.Tensor(base, device=device).scatter(0, pg.Tensor(index, device=device),
                                                 pg.Tensor(src, device=device), reduce=reduce)
    want = torch.tensor(base).scatter(0, torch.tensor(index), torch.tensor(src), reduce=reduce)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    got = pg.Tensor(base, device=device).scatter(1, pg.Tensor(index, device=device), 2.0,
                                                 reduce=reduce)
    want = torch.tensor(base).scatter(1, torch.tensor(index), 2.0, reduce=reduce)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dim", [0, 1])
def test_index_add(device: str, dim: int) -> None:
    base = rng.standard_normal((3, 4)).astype(np.float32)
    index = np.array([2, 0, 2], np.int32)
    shape = (3, 4) if dim == 0 else (3, 3)
    x, tx = _pair(base, device)
    s, ts = _pair(rng.standard_normal(shape).astype(np.float32), device)
    out = x.index_add(dim, pg.Tensor(index, device=device), s, alpha=1.5)
    want = tx.index_add(dim, torch.tensor(index), ts, alpha=1.5)
    assert_forward_and_grads_match(out, want, [x, s], [tx, ts], _up((3, 4)), device)


def test_index_fill(device: str) -> None:
    base = rng.standard_normal((3, 4)).astype(np.float32)
    x, tx = _pair(base, device)
    out = x.index_fill(1, pg.Tensor([0, -1], device=device), -2.5)
    want = tx.index_fill(1, torch.tensor([0, -1]), -2.5)
    assert_forward_and_grads_match(out, want, [x], [tx], _up((3, 4)), device)
    y = pg.Tensor(base, device=device)
    y.index_fill_(0, pg.Tensor([1], device=device), 7.0)
    np.testing.assert_array_equal(y.numpy(), torch.tensor(base).index_fill(
        0, torch.tensor([1]), 7.0).numpy())


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(device: str, accumulate: bool) -> None:
    base = rng.standard_normal((3, 4)).astype(np.float32)
    rows, cols = np.array([0, 2, 0], np.int32), np.array([1, 3, 2], np.int32)
    x, tx = _pair(base, device)
    v, tv = _pair(rng.standard_normal(3).astype(np.float32), device)
    out = x.index_put((pg.Tensor(rows, device=device), pg.Tensor(cols, device=device)), v,
                      accumulate=accumulate)
    want = tx.index_put((torch.tensor(rows), torch.tensor(cols)), tv, accumulate=accumulate)
    assert_forward_and_grads_match(out, want, [x, v], [tx, tv], _up((3, 4)), device)


def test_index_put_repeated_positions_and_in_place(device: str) -> None:
    base = np.zeros((2, 3), np.float32)
    rows, cols = np.array([0, 0, 1, 0], np.int32), np.array([1, 1, 2, 1], np.int32)
    vals = np.array([1, 2, 3, 4], np.float32)
    add = pg.Tensor(base, device=device).index_put(
        (pg.Tensor(rows, device=device), pg.Tensor(cols, device=device)),
        pg.Tensor(vals, device=device), accumulate=True)
    np.testing.assert_array_equal(add.numpy(), torch.tensor(base).index_put(
        (torch.tensor(rows), torch.tensor(cols)), torch.tensor(vals), accumulate=True).numpy())
    y = pg.Tensor(base, device=device)
    y.index_put_((pg.Tensor(rows, device=device), pg.Tensor(cols, device=device)),
                 pg.Tensor(vals, device=device))
    np.testing.assert_array_equal(y.numpy(), [[0, 4, 0], [0, 0, 3]])  # the last write wins
    lazy_rows = pg.Tensor(rows, device=device) * 1  # a computed index: index_copy's path
    z = pg.Tensor(base, device=device).index_put((lazy_rows, pg.Tensor(cols, device=device)),
                                                 pg.Tensor(vals, device=device))
    np.testing.assert_array_equal(z.numpy(), [[0, 4, 0], [0, 0, 3]])
    leaf = pg.Tensor(base, device=device, requires_grad=True)
    with pytest.raises(pg.AutogradError, match="index_put_: a leaf Variable"):
        leaf.index_put_((pg.Tensor([0], device=device),), pg.Tensor(1.0, device=device))


def test_take_and_put(device: str) -> None:
    base = rng.standard_normal((3, 4)).astype(np.float32)
    index = np.array([[0, -1], [5, 11]], np.int32)
    x, tx = _pair(base, device)
    assert_forward_and_grads_match(x.take(pg.Tensor(index, device=device)),
                                   tx.take(torch.tensor(index).long()), [x], [tx], _up((2, 2)),
                                   device)
    for accumulate in (False, True):
        x, tx = _pair(base, device)
        s, ts = _pair(rng.standard_normal((2, 2)).astype(np.float32), device)
        out = x.put(pg.Tensor(index, device=device), s, accumulate=accumulate)
        want = tx.put(torch.tensor(index).long(), ts, accumulate=accumulate)
        assert_forward_and_grads_match(out, want, [x, s], [tx, ts], _up((3, 4)), device)
    with pytest.raises(IndexRangeError, match="take"):
        pg.Tensor(base).take(pg.Tensor([12]))


@pytest.mark.parametrize("mask_shape", [(2, 3), (3,)])
def test_masked_scatter(device: str, mask_shape: tuple[int, ...]) -> None:
    base = rng.standard_normal((2, 3)).astype(np.float32)
    mask = rng.random(mask_shape) > 0.4
    x, tx = _pair(base, device)
    s, ts = _pair(rng.standard_normal(7).astype(np.float32), device)
    out = x.masked_scatter(pg.Tensor(mask, device=device), s)
    want = tx.masked_scatter(torch.tensor(mask), ts)
    assert_forward_and_grads_match(out, want, [x, s], [tx, ts], _up((2, 3)), device)


def test_masked_scatter_source_too_small(device: str) -> None:
    x = pg.Tensor(np.zeros((2, 2), np.float32), device=device)
    out = x.masked_scatter(pg.Tensor(np.ones((2, 2), bool), device=device),
                           pg.Tensor(np.ones(3, np.float32), device=device))
    with pytest.raises(IndexRangeError, match="masked_scatter"):
        out.numpy()


def test_writes_replay_under_jit_with_new_indices() -> None:
    @pg.jit
    def write(x: pg.Tensor, rows: pg.Tensor, flat: pg.Tensor, vals: pg.Tensor
              ) -> tuple[pg.Tensor, pg.Tensor]:
        return x.index_put((rows,), vals), x.put(flat, vals)

    base = np.zeros((4, 2), np.float32)
    for rows, flat in (([0, 2, 0], [[0, 5, 0], [1, 1, 7]]), ([3, 1, 1], [[2, 2, 3], [4, 6, 6]]),
                       ([2, 2, 0], [[7, 7, 7], [0, 1, 2]])):
        vals = rng.standard_normal((3, 2)).astype(np.float32)
        got = write(pg.Tensor(base), pg.Tensor(np.array(rows, np.int32)),
                    pg.Tensor(np.array(flat, np.int32).T.copy()), pg.Tensor(vals))
        want = torch.tensor(base).index_put((torch.tensor(rows),), torch.tensor(vals))
        np.testing.assert_array_equal(got[0].numpy(), want.numpy())
        want = torch.tensor(base).put(torch.tensor(flat).T.contiguous(), torch.tensor(vals))
        np.testing.assert_array_equal(got[1].numpy(), want.numpy())
