"""Comparing realized tensors with numpy: ints and bools exactly, floats with a tolerance."""

from __future__ import annotations

import numpy as np

import picograd as pg

_PG_OF_NP = {"f": pg.float32, "i": pg.int32, "u": pg.int32, "b": pg.bool}


def assert_matches(got: pg.Tensor, want: np.ndarray | float | int | bool,
                   rtol: float = 1e-5, atol: float = 1e-5) -> None:
    """`got` realizes to `want`: same shape, the dtype picograd maps `want`'s to, same values."""
    want = np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != numpy's {want.shape}"
    assert got.dtype == _PG_OF_NP[want.dtype.kind], f"dtype {got.dtype} vs numpy {want.dtype}"
    values = got.numpy()
    assert values.shape == want.shape
    assert values.dtype == got.dtype.np
    if want.dtype.kind == "f":
        np.testing.assert_allclose(values, want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(values, want)
