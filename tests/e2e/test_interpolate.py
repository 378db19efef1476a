"""`F.interpolate` (picograd.nn.resize) against torch's: forward values and the input's
gradient on every device for 'nearest', 'nearest-exact', 'linear' and 'bilinear' (with and
without align_corners), by size and by scale factor, up and down; `nn.Upsample`; and the
errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd.nn import Upsample
from picograd.nn import functional as F

torch = pytest.importorskip("torch", reason="torch is the oracle of the interpolate tests")
TF = torch.nn.functional

rng = np.random.default_rng(13)


def _random(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _close(ours: pg.Tensor, theirs: Any) -> None:
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-5)


# (input shape, keyword arguments)
CASES = {
    "nearest_x2": ((1, 2, 3, 3), {"scale_factor": 2}),
    "nearest_x2.3": ((1, 2, 3, 3), {"scale_factor": 2.3}),
    "nearest_down_size": ((2, 1, 5, 7), {"size": (3, 4)}),
    "nearest_up_size": ((1, 1, 3, 3), {"size": (7, 5)}),
    "nearest_exact": ((1, 2, 6, 5), {"scale_factor": 1.3, "mode": "nearest-exact"}),
    "nearest_1d": ((1, 2, 5), {"scale_factor": 1.7}),
    "linear_1d": ((2, 2, 5), {"size": 8, "mode": "linear"}),
    "bilinear": ((1, 1, 4, 5), {"size": (7, 9), "mode": "bilinear"}),
    "bilinear_align": ((1, 1, 4, 5), {"size": (7, 9), "mode": "bilinear", "align_corners": True}),
    "bilinear_down_align": ((1, 2, 7, 6), {"size": (3, 2), "mode": "bilinear",
                                           "align_corners": True}),
    "bilinear_scales": ((2, 1, 4, 5), {"scale_factor": (1.5, 0.7), "mode": "bilinear"}),
    "bilinear_recompute": ((2, 1, 4, 5), {"scale_factor": (1.5, 0.7), "mode": "bilinear",
                                          "recompute_scale_factor": True}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_interpolate_matches_torch(device: str, name: str) -> None:
    shape, kwargs = CASES[name]
    xn = _random(*shape)
    x = pg.Tensor(xn, device=device, requires_grad=True)
    tx = torch.tensor(xn, requires_grad=True)
    out, want = F.interpolate(x, **kwargs), TF.interpolate(tx, **kwargs)
    assert out.shape == tuple(want.shape)
    upstream = _random(*out.shape)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    pg.realize(out, x.grad)
    _close(out, want)
    _close(x.grad, tx.grad)


def test_upsample_layer() -> None:
    xn = _random(1, 2, 3, 4)
    layer = Upsample(scale_factor=2, mode="bilinear", align_corners=False)
    want = torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
    _close(layer(pg.Tensor(xn)), want(torch.from_numpy(xn)))
    assert repr(Upsample(size=(4, 4))) == "Upsample(size=(4, 4), mode='nearest')"


X = pg.Tensor.zeros(1, 2, 4, 4)


@pytest.mark.parametrize("make,words", [
    (lambda: F.interpolate(X), ("exactly one of size and scale_factor",)),
    (lambda: F.interpolate(X, size=4, scale_factor=2), ("exactly one",)),
    (lambda: F.interpolate(X, size=(2, 2, 2)), ("size", "(1, 2, 4, 4)")),
    (lambda: F.interpolate(X, scale_factor=-1.0), ("scale_factor", "-1.0")),
    (lambda: F.interpolate(X, scale_factor=0.1), ("empty",)),
    (lambda: F.interpolate(X, size=3, mode="bicubical"), ("mode", "'bicubical'")),
    (lambda: F.interpolate(X[0], size=3, mode="bicubic"), ("'bicubic'", "4-D", "(2, 4, 4)")),
    (lambda: F.interpolate(X, size=3, mode="linear"), ("'linear'", "3-D", "(1, 2, 4, 4)")),
    (lambda: F.interpolate(X, size=3, align_corners=True), ("align_corners", "'nearest'")),
])
def test_errors_name_the_op_and_the_arguments(make, words: tuple[str, ...]) -> None:
    with pytest.raises(pg.ShapeError) as info:
        make()
    message = str(info.value)
    assert "interpolate" in message
    for word in words:
        assert word in message
    assert __file__ in message


def test_integer_input_is_a_dtype_error() -> None:
    with pytest.raises(pg.DTypeError, match=r"interpolate.*int32"):
        F.interpolate(pg.Tensor.zeros(1, 1, 2, 2, dtype=pg.int32), scale_factor=2)
