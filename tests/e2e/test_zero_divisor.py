"""Integer `//` and `%` by zero raise `ZeroDivisorError` (a ZeroDivisionError), as torch's
"ZeroDivisionError": at the op for a constant or realized divisor, when a result is read
for a divisor computed on the device, and on every jit replay. Float division by zero gives
inf / NaN, as in torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd.errors import ZeroDivisorError

OPS: dict[str, Callable[[Any, Any], Any]] = {
    "floor_divide": lambda x, y: x // y,
    "remainder": lambda x, y: x % y,
}


def _ints(values: list[int], device: str) -> pg.Tensor:
    return pg.Tensor(np.array(values, np.int32), device=device)


@pytest.mark.parametrize("op", list(OPS))
def test_a_zero_constant_or_realized_divisor_raises_at_the_op(device: str, op: str) -> None:
    x = _ints([7, -7], device)
    with pytest.raises(ZeroDivisorError, match=f"{op}: integer division by zero") as info:
        OPS[op](x, 0)
    assert "test_zero_divisor.py" in str(info.value)
    with pytest.raises(ZeroDivisionError):  # what a Python user catches
        OPS[op](x, _ints([3, 0], device))
    with pytest.raises(ZeroDivisorError):
        OPS[op](7, _ints([0, 1], device))  # the reflected form


@pytest.mark.parametrize("op", list(OPS))
def test_a_computed_zero_divisor_raises_when_read(device: str, op: str) -> None:
    x = _ints([7, -7], device)
    out = OPS[op](x, _ints([3, 1], device) - 1)  # [2, 0], computed on the device
    with pytest.raises(ZeroDivisorError, match=f"{op}: integer division by zero"):
        out.numpy()
    with pytest.raises(ZeroDivisorError):
        (out + 1).numpy()


@pytest.mark.parametrize("op", list(OPS))
def test_a_computed_nonzero_divisor_gives_torchs_result(device: str, op: str) -> None:
    x, y = np.array([7, -7, 7, -7], np.int32), np.array([2, 2, -2, -2], np.int32)
    got = OPS[op](_ints(list(x), device), _ints(list(y + 1), device) - 1).numpy()
    np.testing.assert_array_equal(got, OPS[op](x, y))  # numpy floors as torch does


def test_empty_divisors_divide_nothing(device: str) -> None:
    empty = pg.Tensor(np.zeros((2, 0), np.int32), device=device)
    assert (empty // (empty + 1)).numpy().shape == (2, 0)
    assert (empty % (empty * 1)).numpy().shape == (2, 0)  # computed, empty: no check


def test_float_division_by_zero_is_not_an_error(device: str) -> None:
    x = pg.Tensor(np.array([1.0, -1.0], np.float32), device=device)
    np.testing.assert_array_equal((x // 0).numpy(), [np.inf, -np.inf])


def test_jit_replays_check_new_divisors(device: str) -> None:
    x = _ints([9, 8], device)

    @pg.jit
    def divide(y: pg.Tensor) -> Any:
        return x // y

    for d in (1, 2, 3):  # eager, capture, replay
        np.testing.assert_array_equal(divide(_ints([d, d], device).realize()).numpy(),
                                      [9 // d, 8 // d])
    with pytest.raises(ZeroDivisorError):
        divide(_ints([3, 0], device).realize())
