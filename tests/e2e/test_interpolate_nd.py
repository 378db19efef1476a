"""Resizing and padding in 1, 2 and 3 D against torch: F.interpolate's modes (nearest,
nearest-exact, linear, bilinear, bicubic, trilinear, area) with align_corners, scale_factor
and recompute_scale_factor, uint8 inputs (nearest); F.pad with asymmetric and negative
sizes in every mode; pixel_shuffle / pixel_unshuffle and their layers. Values and input
gradients on every device."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd import nn
from picograd.nn import functional as F

torch = pytest.importorskip("torch", reason="torch is the oracle of the resize tests")
TF = torch.nn.functional

rng = np.random.default_rng(8)


def _check(device: str, ours: Any, theirs: Any, shape: tuple[int, ...], **kwargs: Any) -> None:
    xn = rng.standard_normal(shape).astype(np.float32)
    x = pg.Tensor(xn, device=device, requires_grad=True)
    tx = torch.tensor(xn, requires_grad=True)
    out, want = ours(x, **kwargs), theirs(tx, **kwargs)
    assert out.shape == tuple(want.shape)
    upstream = rng.standard_normal(out.shape).astype(np.float32)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


INTERPOLATE = {
    "nearest_1d": ((2, 3, 5), {"size": 8, "mode": "nearest"}),
    "nearest_3d": ((1, 2, 3, 4, 5), {"size": (5, 3, 7), "mode": "nearest"}),
    "nearest_exact_3d_scale": ((1, 2, 3, 4, 5), {"scale_factor": 2.3,
                                                 "mode": "nearest-exact"}),
    "bicubic": ((2, 3, 5, 4), {"size": (7, 3), "mode": "bicubic"}),
    "bicubic_align_scale": ((1, 2, 5, 4), {"scale_factor": 1.7, "mode": "bicubic",
                                           "align_corners": True}),
    "trilinear": ((1, 2, 3, 4, 5), {"size": (5, 3, 7), "mode": "trilinear"}),
    "trilinear_align_scale": ((1, 2, 3, 4, 5), {"scale_factor": 1.5, "mode": "trilinear",
                                                "align_corners": True}),
    "bilinear_recompute": ((1, 2, 5, 4), {"scale_factor": 1.6, "mode": "bilinear",
                                          "recompute_scale_factor": True}),
    "area_1d": ((2, 3, 7), {"size": 3, "mode": "area"}),
    "area_2d": ((1, 2, 6, 7), {"size": (4, 3), "mode": "area"}),
    "area_3d_scale": ((1, 2, 6, 7, 5), {"scale_factor": 0.5, "mode": "area"}),
}


@pytest.mark.parametrize("name", list(INTERPOLATE))
def test_interpolate_matches_torch(device: str, name: str) -> None:
    shape, kwargs = INTERPOLATE[name]
    _check(device, F.interpolate, TF.interpolate, shape, **kwargs)


def test_upsample_takes_every_mode(device: str) -> None:
    for mode, shape in (("trilinear", (1, 2, 2, 3, 2)), ("bicubic", (1, 2, 3, 3)),
                        ("area", (1, 2, 4, 6)), ("nearest", (1, 2, 2, 2, 3))):
        kwargs: dict[str, Any] = {"scale_factor": 0.5 if mode == "area" else 2.0,
                                  "mode": mode}
        ours, theirs = nn.Upsample(**kwargs), torch.nn.Upsample(**kwargs)
        _check(device, ours, theirs, shape)


def test_nearest_on_uint8_picks_torchs_elements(device: str) -> None:
    xn = rng.integers(0, 255, (1, 2, 3, 5)).astype(np.uint8)
    for mode in ("nearest", "nearest-exact"):
        got = F.interpolate(pg.Tensor(xn, device=device), scale_factor=2.5, mode=mode)
        want = TF.interpolate(torch.from_numpy(xn), scale_factor=2.5, mode=mode)
        assert got.dtype == pg.uint8
        np.testing.assert_array_equal(got.numpy(), want.numpy())


PADS = {
    "constant_negative": ((2, 3, 6, 5), (-1, 2, 3, -2), "constant"),
    "reflect_asymmetric": ((2, 3, 6, 5), (1, 3, 0, 2), "reflect"),
    "reflect_negative": ((2, 3, 6, 5), (-3, 3, 1, -2), "reflect"),
    "replicate_negative": ((2, 3, 6, 5), (-3, 4, 2, -1), "replicate"),
    "circular_negative": ((2, 3, 6, 5), (-1, 2, 2, -1), "circular"),
    "reflect_3d": ((1, 2, 4, 5, 3), (1, 2, -1, 2, 2, 0), "reflect"),
    "replicate_1d": ((2, 3, 4), (3, -1), "replicate"),
}


@pytest.mark.parametrize("name", list(PADS))
def test_pad_matches_torch(device: str, name: str) -> None:
    shape, sizes, mode = PADS[name]
    _check(device, lambda x: F.pad(x, sizes, mode), lambda x: TF.pad(x, sizes, mode), shape)


def test_pixel_shuffle_round_trip(device: str) -> None:
    _check(device, lambda x: F.pixel_shuffle(x, 2), lambda x: TF.pixel_shuffle(x, 2),
           (2, 8, 3, 2))
    _check(device, lambda x: F.pixel_unshuffle(x, 3), lambda x: TF.pixel_unshuffle(x, 3),
           (2, 2, 6, 3))
    xn = rng.standard_normal((1, 9, 2, 2)).astype(np.float32)
    up = nn.PixelShuffle(3)(pg.Tensor(xn))
    np.testing.assert_array_equal(up.numpy(), torch.nn.PixelShuffle(3)(torch.tensor(xn)))
    np.testing.assert_array_equal(nn.PixelUnshuffle(3)(up).numpy(), xn)
    assert repr(nn.PixelShuffle(3)) == repr(torch.nn.PixelShuffle(3))


@pytest.mark.parametrize(("make", "words"), [
    (lambda: F.interpolate(pg.Tensor.zeros(1, 1, 2, 2, dtype=pg.int32), scale_factor=2),
     ("interpolate", "int32")),
    (lambda: F.pad(pg.Tensor.zeros(1, 1, 4), (-4, 4), "reflect"), ("pad", "reflect")),
    (lambda: F.pixel_shuffle(pg.Tensor.zeros(1, 3, 2, 2), 2), ("pixel_shuffle",)),
])
def test_errors_name_the_op(make: Any, words: tuple[str, ...]) -> None:
    with pytest.raises(pg.PicogradError) as info:
        make()
    for word in words:
        assert word in str(info.value)
