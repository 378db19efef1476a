"""Comparing realized tensors with numpy: ints and bools exactly, floats with a tolerance."""

from __future__ import annotations

from typing import Any

import numpy as np

import picograd as pg

# numpy's default widths (what numpy computes python data in) map to picograd's defaults
# (a float64 `want` is float32 for python data, float64 for a float64 input: either is
# accepted; pass `dtype=` to pin one); the other dtypes to their twins
_PG_OF_NP: dict[np.dtype, tuple[pg.DType, ...]] = {
    np.dtype(np.float64): (pg.float32, pg.float64), np.dtype(np.int64): (pg.int32,),
    np.dtype(np.uint16): (pg.int32,), np.dtype(np.uint32): (pg.int32,),
    **{t.np: (t,) for t in (pg.float16, pg.float32, pg.int8, pg.uint8, pg.int16, pg.int32,
                            pg.bool)}}


def assert_matches(got: pg.Tensor, want: np.ndarray | float | int | bool,
                   rtol: float = 1e-5, atol: float = 1e-5, dtype: pg.DType | None = None
                   ) -> None:
    """`got` realizes to `want`: same shape, the dtype picograd maps `want`'s to (or
    `dtype`), same values."""
    want = np.asarray(want)
    expected = (dtype,) if dtype is not None else _PG_OF_NP[want.dtype]
    assert got.shape == want.shape, f"shape {got.shape} != numpy's {want.shape}"
    assert got.dtype in expected, f"dtype {got.dtype} vs numpy {want.dtype}"
    values = got.numpy()
    assert values.shape == want.shape
    assert values.dtype == got.dtype.np
    if want.dtype.kind == "f":
        np.testing.assert_allclose(values.astype(np.float64), want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(values, want)


def assert_forward_and_grads_match(out: pg.Tensor, want: Any, ours: list[pg.Tensor],
                                   theirs: list[Any], upstream: np.ndarray, device: str,
                                   rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """`out` (picograd) equals `want` (torch), and so do the gradients of `ours` and
    `theirs` after back-propagating the same `upstream` gradient through both."""
    import torch

    assert out.shape == tuple(want.shape)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    pg.realize(out, *(t.grad for t in ours))
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=rtol, atol=atol)
    for t, tt in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(t.grad.numpy(), tt.grad.detach().numpy(), rtol=rtol,
                                   atol=atol)
