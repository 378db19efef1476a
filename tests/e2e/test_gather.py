"""Selecting by index tensor against torch on every device: `gather`, `take_along_dim`,
`index_select`, `x[int_tensor]` and `embedding`, forward and backward (the gradient adds up
at repeated indices), and `scatter_add`; negative indices where torch takes them; realized
out-of-range indices raise `IndexRangeError` at the op, lazy ones select 0; and the work is
O(output): an embedding into a 30,522-row table compiles to one kernel with no loop over the
table, and its gradient to a fill and one pass over the ids.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import picograd as pg
import picograd.nn.functional as F
from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import pg_loop
from picograd.errors import IndexRangeError
from picograd.frontend.realize import build_module, linearize

torch = pytest.importorskip("torch", reason="torch is the oracle of the gather tests")

rng = np.random.default_rng(19)


def _randn(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _check(device: str, x: np.ndarray, index: np.ndarray,
           ours: Callable[[pg.Tensor, pg.Tensor], pg.Tensor],
           theirs: Callable[[Any, Any], Any]) -> None:
    """Forward and the gradient of `x` (seeded with random upstream values) match torch."""
    xo = pg.Tensor(x, device=device, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    out = ours(xo, pg.Tensor(index, device=device))
    ref = theirs(xt, torch.from_numpy(np.asarray(index, np.int64)))
    assert out.shape == tuple(ref.shape)
    seed = _randn(*ref.shape)
    (out * pg.Tensor(seed, device=device)).sum().backward()
    (ref * torch.from_numpy(seed)).sum().backward()
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-6, atol=1e-6)
    assert xo.grad is not None and xt.grad is not None
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_gather(device: str, dim: int) -> None:
    x = _randn(4, 5, 6)
    shape = [3, 4, 5]
    shape[dim] = 7  # more picks than the dim has: indices repeat
    index = rng.integers(0, x.shape[dim], shape).astype(np.int32)
    _check(device, x, index, lambda a, i: a.gather(dim, i),
           lambda a, i: torch.gather(a, dim, i))


def test_take_along_dim_broadcasts_and_counts_negatives_from_the_end(device: str) -> None:
    x = _randn(3, 1, 5)
    index = rng.integers(-5, 5, (1, 4, 2)).astype(np.int32)
    _check(device, x, index, lambda a, i: a.take_along_dim(i, 2),
           lambda a, i: torch.take_along_dim(a, i, 2))
    flat = rng.integers(0, 15, (6,)).astype(np.int32)
    _check(device, x, flat, lambda a, i: a.take_along_dim(i),
           lambda a, i: torch.take_along_dim(a, i))


@pytest.mark.parametrize("dim", [0, 1])
def test_index_select(device: str, dim: int) -> None:
    x = _randn(5, 6)
    index = np.array([4, 0, 4, 2], np.int32)
    _check(device, x, index, lambda a, i: a.index_select(dim, i),
           lambda a, i: torch.index_select(a, dim, i))


@pytest.mark.parametrize("shape", [(), (4,), (2, 3)])
def test_getitem_with_an_int_tensor(device: str, shape: tuple[int, ...]) -> None:
    x = _randn(3, 7, 2)
    index = np.asarray(rng.integers(-7, 7, shape), np.int32)
    _check(device, x, index, lambda a, i: a[:, i], lambda a, i: a[:, i])
    _check(device, x, index % 3, lambda a, i: a[i, 1:], lambda a, i: a[i, 1:])


def test_embedding_forward_and_backward(device: str) -> None:
    weight = _randn(50, 8)
    ids = rng.integers(0, 50, (3, 9)).astype(np.int32)
    ids[0, :3] = 17  # a repeated id accumulates its rows' gradients
    _check(device, weight, ids, lambda w, i: F.embedding(i, w),
           lambda w, i: torch.nn.functional.embedding(i, w))


def test_gather_of_integers_and_of_a_computed_table(device: str) -> None:
    table = rng.integers(-100, 100, (6, 4)).astype(np.int32)
    index = rng.integers(0, 6, (3, 4)).astype(np.int32)
    t = pg.Tensor(table, device=device)
    got = t.gather(0, pg.Tensor(index, device=device))
    assert got.dtype == pg.int32
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(table, index, 0))
    x = _randn(6, 4)
    got = pg.Tensor(x, device=device).exp().gather(0, pg.Tensor(index, device=device))
    np.testing.assert_allclose(got.numpy(), np.exp(np.take_along_axis(x, index, 0)),
                               rtol=1e-6)


@pytest.mark.parametrize("op", [
    lambda x, i: x.gather(0, i.reshape(-1, 1)),
    lambda x, i: x.index_select(0, i),
    lambda x, i: x[i],
    lambda x, i: F.embedding(i, x),
], ids=["gather", "index_select", "getitem", "embedding"])
def test_a_realized_index_out_of_range_raises_at_the_op(device: str, op: Any) -> None:
    x = pg.Tensor(_randn(4, 3), device=device)
    with pytest.raises(IndexRangeError, match=r"index 9 is out of bounds for a dim of size "
                                              r"4.*\n  at .*test_gather.py"):
        op(x, pg.Tensor(np.array([1, 9], np.int32), device=device))
    with pytest.raises(IndexError):  # torch's exception type, too
        op(x, pg.Tensor(np.array([9], np.int32), device=device))


def test_negative_indices_follow_torch(device: str) -> None:
    x = pg.Tensor(_randn(4, 3), device=device)
    minus_one = pg.Tensor(np.array([-1], np.int32), device=device)
    np.testing.assert_array_equal(x[minus_one].numpy(), x.numpy()[[-1]])
    for op in (lambda i: x.gather(0, i.reshape(1, 1)), lambda i: x.index_select(0, i),
               lambda i: F.embedding(i, x)):
        with pytest.raises(IndexRangeError, match="index -1 is out of bounds"):
            op(minus_one)


def test_a_lazy_index_out_of_range_raises_when_read(device: str) -> None:
    # the full set of lazy-index checks is in test_lazy_index_checks.py
    lazy = pg.Tensor(np.array([1, 5, 2], np.int32), device=device) * 1  # not realized
    out = pg.Tensor(_randn(4, 3), device=device).index_select(0, lazy)
    with pytest.raises(IndexRangeError, match="index 5 is out of bounds for a dim of size 4"):
        out.numpy()


def test_empty_index(device: str) -> None:
    x = pg.Tensor(_randn(4, 3), device=device)
    assert x.index_select(0, pg.Tensor(np.zeros(0, np.int32), device=device)).numpy().shape \
        == (0, 3)


def _loop_stage(out: pg.Tensor) -> ModuleOp:
    nodes, entries, _, positions = linearize([out._node])
    module = build_module(nodes, entries, positions)
    return run_pipeline(module, "convert-tensor-to-sched,convert-sched-to-loop")


def test_an_embedding_loads_rows_instead_of_scanning_the_table() -> None:
    weight = pg.Tensor(np.zeros((30522, 384), np.float32))
    ids = pg.Tensor(np.zeros((32, 45), np.int32))
    module = _loop_stage(F.embedding(ids, weight))
    kernels = [op for op in module.walk() if isinstance(op, pg_loop.KernelOp)]
    ranges = [op for op in module.walk() if isinstance(op, pg_loop.RangeOp | pg_loop.ReduceOp)]
    assert len(kernels) == 1
    assert all(not isinstance(r, pg_loop.ReduceOp) for r in ranges)
    assert sorted(r.end.data for r in ranges) == [32, 45, 384]


def test_scatter_add(device: str) -> None:
    x, src = _randn(4, 5), _randn(3, 5)
    index = rng.integers(0, 4, (3, 5)).astype(np.int32)
    index[:, 0] = 2  # three additions into one element, in order
    xo, so = (pg.Tensor(a, device=device, requires_grad=True) for a in (x, src))
    xt, st = (torch.tensor(a, requires_grad=True) for a in (x, src))
    out = xo.scatter_add(0, pg.Tensor(index, device=device), so)
    ref = xt.scatter_add(0, torch.from_numpy(index.astype(np.int64)), st)
    seed = _randn(4, 5)
    (out * pg.Tensor(seed, device=device)).sum().backward()
    (ref * torch.from_numpy(seed)).sum().backward()
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-6, atol=1e-6)
    for ours, theirs in ((xo, xt), (so, st)):
        assert ours.grad is not None and theirs.grad is not None
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)
    # an index smaller than src and than the tensor off dim: the rest is left alone
    small = index[:2, :3] % 5
    got = pg.Tensor(x, device=device).scatter_add(1, pg.Tensor(small, device=device),
                                                  pg.Tensor(src, device=device))
    want = torch.from_numpy(x).scatter_add(1, torch.from_numpy(small.astype(np.int64)),
                                           torch.from_numpy(src))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_an_embedding_gradient_adds_rows_instead_of_scanning_the_table() -> None:
    weight = pg.Tensor(np.zeros((30522, 384), np.float32), requires_grad=True)
    ids = pg.Tensor(np.zeros((32, 45), np.int32))
    F.embedding(ids, weight).sum().backward()
    assert weight.grad is not None
    module = _loop_stage(weight.grad)
    kernels = [op for op in module.walk() if isinstance(op, pg_loop.KernelOp)]
    trips = [[op.end.data for op in k.walk() if isinstance(op, pg_loop.RangeOp | pg_loop.ReduceOp)]
             for k in kernels]
    # the zero fill, then per column of the table one pass over the 1440 ids
    assert trips == [[30522, 384], [384, 1440]]


@pytest.mark.parametrize("where", [
    lambda x, i: x[i(0), i(1)],  # leading and adjacent: B first
    lambda x, i: x[:, i(0), i(1)],  # adjacent after a slice: B in their place
    lambda x, i: x[i(0), :, i(1)],  # apart: B first
    lambda x, i: x[1, i(0), :, i(1)],  # an int is basic indexing, as in torch
    lambda x, i: x[None, i(2), 1:3, i(1)],  # broadcast index shapes
], ids=["leading", "inner", "apart", "with-int", "broadcast"])
def test_advanced_indexing_with_several_tensors(device: str, where: Any) -> None:
    x = _randn(3, 4, 5, 6)
    picks = [np.array([0, -1, 2], np.int32), np.array([1, 3, -2], np.int32),
             np.array([[0], [2]], np.int32)]
    xo = pg.Tensor(x, device=device, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    out = where(xo, lambda k: pg.Tensor(picks[k], device=device))
    ref = where(xt, lambda k: torch.from_numpy(picks[k].astype(np.int64)))
    assert out.shape == tuple(ref.shape)
    seed = _randn(*ref.shape)
    (out * pg.Tensor(seed, device=device)).sum().backward()
    (ref * torch.from_numpy(seed)).sum().backward()
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-6)
    assert xo.grad is not None and xt.grad is not None
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


def test_a_lazy_index_out_of_range_in_one_dim_raises(device: str) -> None:
    # the flattened position of (1, 7) in a 4 x 5 tensor would be a valid element (12):
    # each dim's index is checked against its own size
    x = _randn(4, 5)
    rows = pg.Tensor(np.array([0, 1], np.int32), device=device)
    cols = pg.Tensor(np.array([2, 7], np.int32), device=device) * 1  # lazy
    with pytest.raises(IndexRangeError, match="index 7 is out of bounds for a dim of size 5"):
        pg.Tensor(x, device=device)[rows, cols].numpy()


@pytest.mark.parametrize(("dim", "index"), [(1, [4, 0, 2]), (0, [1, 1]), (-1, [5, 0]), (1, [3]),
                                           (-1, [0])])  # (one slice: its own graph)
def test_index_copy_forward_and_backward(device: str, dim: int, index: list[int]) -> None:
    """torch's index_copy: slices of src written at the indexed positions; a repeated index
    keeps the last slice (what torch gives on the CPU); gradients to both operands."""
    x = _randn(3, 5, 6)
    shape = list(x.shape)
    shape[dim] = len(index)
    src, seed = _randn(*shape), _randn(*x.shape)
    ids = np.array(index, np.int32)
    xo, so = (pg.Tensor(a, device=device, requires_grad=True) for a in (x, src))
    xt, st = (torch.tensor(a, requires_grad=True) for a in (x, src))
    out = xo.index_copy(dim, pg.Tensor(ids, device=device), so)
    ref = xt.index_copy(dim, torch.from_numpy(ids.astype(np.int64)), st)
    (out * pg.Tensor(seed, device=device)).sum().backward()
    (ref * torch.from_numpy(seed)).sum().backward()
    np.testing.assert_array_equal(out.numpy(), ref.detach().numpy())
    for ours, theirs in ((xo, xt), (so, st)):
        assert ours.grad is not None and theirs.grad is not None
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)


def test_index_copy_in_place_keeps_the_node_and_checks_shapes(device: str) -> None:
    cache = pg.Tensor.zeros(1, 2, 4, 3, device=device).realize()
    node = cache._node
    new = _randn(1, 2, 1, 3)
    cache.index_copy_(2, pg.Tensor(np.array([2], np.int32), device=device),
                      pg.Tensor(new, device=device))
    want = np.zeros((1, 2, 4, 3), np.float32)
    want[:, :, 2:3] = new
    assert cache._node is node
    np.testing.assert_array_equal(cache.numpy(), want)
    with pytest.raises(pg.ShapeError, match=r"source must have shape \(1, 2, 1, 3\)"):
        cache.index_copy(2, pg.Tensor(np.array([0], np.int32), device=device),
                         pg.Tensor(_randn(1, 2, 3), device=device))
    with pytest.raises(pg.ShapeError, match="index must be 1-D"):
        cache.index_copy(2, pg.Tensor(np.array([[0]], np.int32), device=device),
                         pg.Tensor(new, device=device))
    with pytest.raises(IndexRangeError, match="index 4 is out of bounds"):
        cache.index_copy(2, pg.Tensor(np.array([4], np.int32), device=device),
                         pg.Tensor(new, device=device))
    # an empty index writes nothing (torch: the tensor's values)
    none = cache.index_copy(2, pg.Tensor(np.zeros(0, np.int32), device=device),
                            pg.Tensor(np.zeros((1, 2, 0, 3), np.float32), device=device))
    np.testing.assert_array_equal(none.numpy(), want)
