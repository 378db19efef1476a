"""Advanced subscripts against torch on every device: lists, tuples, several index tensors
(adjacent and separated), bool masks and 0-d index tensors, on reads and on assignment,
with the gradients of both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd.errors import JitError, ShapeError
from tests.e2e.helpers import assert_forward_and_grads_match

torch = pytest.importorskip("torch", reason="torch is the oracle of the indexing tests")

rng = np.random.default_rng(17)
A = rng.standard_normal((3, 4, 5)).astype(np.float32)
MASK2 = np.array([[True, False, True, False], [False, False, True, True],
                  [True, True, False, False]])
MASK1 = np.array([True, False, True, True, False])


def _i(values: Any) -> np.ndarray:
    return np.array(values, np.int32)


# name -> a subscript, given how to make an index tensor from a numpy array (per library)
READS: dict[str, Callable[[Callable[[np.ndarray], Any]], Any]] = {
    "list": lambda t: [2, 0, 2],
    # (torch 2.13 still reads a nested list as a tuple, deprecated; numpy as one index)
    "nested_list": lambda t: ([[0, 1], [2, 2]] if t is not _torch_index else
                              _torch_index(_i([[0, 1], [2, 2]]))),
    "tuple_of_lists": lambda t: ([0, 2], [1, 3]),
    "two_adjacent": lambda t: (slice(None), t(_i([0, 3, 1])), t(_i([4, 0, 2]))),
    "two_separated": lambda t: (t(_i([0, 2])), slice(1, 3), t(_i([4, 1]))),
    "broadcast": lambda t: (t(_i([[0], [2]])), t(_i([1, 3, 0]))),
    "zero_d": lambda t: (t(np.array(1, np.int32)), slice(None), t(_i([0, 4]))),
    "zero_d_alone": lambda t: (slice(None), t(np.array(-1, np.int32))),
    "ellipsis": lambda t: (Ellipsis, t(_i([1, 1, 3]))),
    "none_and_tensor": lambda t: (None, t(_i([2, 0])), Ellipsis, 1),
    "mask_leading": lambda t: t(MASK2),
    "mask_inner": lambda t: (slice(None), slice(None), t(MASK1)),
    "mask_and_int_tensor": lambda t: (t(MASK2), t(_i([0, 1, 4, 2, 3, 0]))),
    "mask_separated": lambda t: (t(_i([0, 2, 1])), slice(None), t(MASK1)),
    "numpy_mask": lambda t: MASK2,
}


def _pg_index(device: str) -> Callable[[np.ndarray], Any]:
    return lambda a: pg.Tensor(a, device=device)


def _torch_index(a: np.ndarray) -> Any:
    return torch.tensor(a.astype(np.int64) if a.dtype.kind == "i" else a)


@pytest.mark.parametrize("name", list(READS))
def test_advanced_reads_and_grads(device: str, name: str) -> None:
    x = pg.Tensor(A, device=device, requires_grad=True)
    tx = torch.tensor(A, requires_grad=True)
    want = tx[READS[name](_torch_index)]
    out = x[READS[name](_pg_index(device))]
    assert_forward_and_grads_match(out, want, [x], [tx],
                                   rng.standard_normal(tuple(want.shape)).astype(np.float32),
                                   device)


WRITES: dict[str, tuple[Callable[[Callable[[np.ndarray], Any]], Any], tuple[int, ...] | None]] = {
    "list": (lambda t: [2, 0], (2, 4, 5)),
    "two_adjacent": (lambda t: (slice(None), t(_i([0, 3])), t(_i([4, 0]))), (3, 2)),
    "two_separated": (lambda t: (t(_i([0, 2])), slice(1, 3), t(_i([4, 1]))), (2, 2)),
    "broadcast_value": (lambda t: (t(_i([[0], [2]])), t(_i([1, 3, 0]))), (5,)),
    "repeated": (lambda t: (t(_i([1, 1])), 2), (2, 5)),
    "zero_d": (lambda t: (t(np.array(2, np.int32)), t(_i([0, 3]))), (2, 5)),
    "mask_leading_rows": (lambda t: t(MASK2), (6, 5)),
    "mask_leading_broadcast": (lambda t: t(MASK2), (5,)),
    "mask_leading_scalar": (lambda t: t(MASK2), None),
    "mask_full": (lambda t: t(A > 0.5), None),
    "mask_inner": (lambda t: (slice(None), 1, t(MASK1)), (3, 3)),
}


@pytest.mark.parametrize("name", list(WRITES))
def test_advanced_assignment_and_grads(device: str, name: str) -> None:
    subscript, value_shape = WRITES[name]
    v_np = (rng.standard_normal(value_shape).astype(np.float32) if value_shape else None)
    base = pg.Tensor(A, device=device, requires_grad=True)
    tbase = torch.tensor(A, requires_grad=True)
    x, tx = base * 1.0, tbase * 1.0  # not leaves: assigning into them is recorded
    if v_np is None:
        x[subscript(_pg_index(device))] = -3.0
        tx[subscript(_torch_index)] = -3.0
        ours, theirs = [base], [tbase]
    else:
        v = pg.Tensor(v_np, device=device, requires_grad=True)
        tv = torch.tensor(v_np, requires_grad=True)
        x[subscript(_pg_index(device))] = v
        tx[subscript(_torch_index)] = tv
        ours, theirs = [base, v], [tbase, tv]
        if name == "repeated":  # torch leaves which write wins open: check the values
            np.testing.assert_allclose(x.numpy(), tx.detach().numpy())
            return
    assert_forward_and_grads_match(x, tx, ours, theirs,
                                   rng.standard_normal(A.shape).astype(np.float32), device)


def test_assignment_casts_ints_and_checks_values(device: str) -> None:
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = pg.Tensor(a, device=device)
    x[[0, 2], [1, 3]] = pg.Tensor(np.array([100, 200], np.int32), device=device)
    x[pg.Tensor(a % 5 == 0, device=device)] = -1
    want = a.copy()
    want[[0, 2], [1, 3]] = [100, 200]
    want[a % 5 == 0] = -1
    np.testing.assert_array_equal(x.numpy(), want)
    with pytest.raises(ShapeError, match="setitem"):
        x[[0, 1]] = pg.Tensor(np.ones((3, 4), np.int32), device=device)
    with pytest.raises(ShapeError, match="the mask of shape"):
        _ = x[pg.Tensor(np.ones(3, bool), device=device), pg.Tensor(np.ones(5, bool),
                                                                    device=device)]


def test_mask_read_syncs_and_refuses_jit() -> None:
    fn = pg.jit(lambda x: x[x > 0])
    x = pg.Tensor(np.array([-1.0, 2.0, 3.0], np.float32))
    np.testing.assert_array_equal(fn(x).numpy(), [2.0, 3.0])
    with pytest.raises(JitError, match="getitem: its output shape depends"):
        fn(x)


def test_mask_assignment_under_jit_needs_no_sync() -> None:
    def clip(x: pg.Tensor) -> pg.Tensor:
        y = x * 1.0
        y[y < 0] = 0.0
        return y

    fn = pg.jit(clip)
    for values in ([-1.0, 2.0, -3.0], [4.0, -5.0, 6.0], [-7.0, 8.0, 9.0]):
        got = fn(pg.Tensor(np.array(values, np.float32)))
        np.testing.assert_array_equal(got.numpy(), np.maximum(values, 0))
