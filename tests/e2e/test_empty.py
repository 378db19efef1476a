"""Reductions over an empty axis and products with an empty contracted dim give torch's
identities on every device (a sum 0, a product 1): an empty value, realized input or
intermediate, is read as a constant (a buffer holds at least one element), a reduce over
an empty axis is its identity."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg

torch = pytest.importorskip("torch", reason="torch is the oracle of the empty-axis tests")

CASES: dict[str, tuple[tuple[int, ...], Callable[[Any], Any]]] = {
    "sum": ((4, 0), lambda t: t.sum(1)),
    "sum_all": ((4, 0), lambda t: t.sum()),
    "prod": ((3, 0, 2), lambda t: t.prod(1)),
    "exp_sum_plus_one": ((4, 0), lambda t: t.exp().sum(1) + 1),
    "matmul": ((5, 0), lambda t: t @ t.T),
    "batched_matmul": ((2, 40, 0), lambda t: t @ t.transpose(-1, -2)),
    # an empty intermediate (not a realized input) read by a reduce that is not empty
    "sum_of_empty_sums": ((0, 5), lambda t: t.sum(1).sum()),
    "prod_of_empty_cumsum": ((0, 5), lambda t: (t.cumsum(1) + 2).prod()),
}


@pytest.mark.parametrize("name", list(CASES))
def test_empty_axes_give_the_identity(device: str, name: str) -> None:
    shape, f = CASES[name]
    a = np.ones(shape, np.float32)
    for t in (pg.Tensor(a, device=device), pg.Tensor.full(shape, 1.0, device=device)):
        np.testing.assert_array_equal(f(t).numpy(), f(torch.tensor(a)).numpy())
