"""`F.grid_sample` and `F.affine_grid` (picograd.nn.grid_sample) against torch's: values and
the gradients of input and grid over modes x padding modes x align_corners x 4-D / 5-D
input, with grids reaching well outside [-1, 1]; NaN and infinite grid values; 'nearest'
rounding halves to even; unit-size and empty inputs; affine_grid's grid and theta's
gradient, also through grid_sample (a spatial transformer); the align_corners warning;
and the errors, each the built-in class torch raises.

The full matrix runs on the default device and skips the ptxas check of every graph
(conftest); a few cases of it, covering each mode, padding and rank, run on every device
with that check."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd.nn import functional as F
from tests.e2e.helpers import assert_forward_and_grads_match

torch = pytest.importorskip("torch", reason="torch is the oracle of the grid_sample tests")
TF = torch.nn.functional

rng = np.random.default_rng(29)

INPUT = {4: (2, 3, 4, 5), 5: (2, 2, 3, 4, 5)}
GRID = {4: (2, 3, 4, 2), 5: (2, 2, 3, 4, 3)}
MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")
MATRIX = [(nd, mode, padding, align)
          for nd, mode, padding, align in itertools.product((4, 5), MODES, PADDINGS,
                                                            (False, True))
          if not (nd == 5 and mode == "bicubic")]


def _ids(case: tuple[Any, ...]) -> str:
    nd, mode, padding, align = case
    return f"{nd}d-{mode}-{padding}-{'align' if align else 'noalign'}"


def _random(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _check_against_torch(device: str, nd: int, mode: str, padding: str, align: bool,
                         reach: float) -> None:
    """Forward and the gradients of input and grid, for a grid uniform in
    [-reach, reach]."""
    xn = _random(*INPUT[nd])
    gn = rng.uniform(-reach, reach, GRID[nd]).astype(np.float32)
    x = pg.Tensor(xn, device=device, requires_grad=True)
    g = pg.Tensor(gn, device=device, requires_grad=True)
    tx, tg = torch.tensor(xn, requires_grad=True), torch.tensor(gn, requires_grad=True)
    out = F.grid_sample(x, g, mode, padding, align)
    want = TF.grid_sample(tx, tg, mode, padding, align)
    assert_forward_and_grads_match(out, want, [x, g], [tx, tg], _random(*want.shape), device)


@pytest.mark.no_ptx_check  # test_grid_sample_on_every_device takes these ops through ptxas
@pytest.mark.parametrize("case", MATRIX, ids=[_ids(c) for c in MATRIX])
def test_grid_sample_matches_torch(case: tuple[int, str, str, bool]) -> None:
    _check_against_torch("CPU", *case, reach=2.5)


EVERY_DEVICE = [(4, "bilinear", "zeros", False), (4, "bicubic", "reflection", True),
                (4, "nearest", "border", False), (5, "bilinear", "reflection", False),
                (5, "nearest", "zeros", True)]


@pytest.mark.parametrize("case", EVERY_DEVICE, ids=[_ids(c) for c in EVERY_DEVICE])
def test_grid_sample_on_every_device(device: str, case: tuple[int, str, str, bool]) -> None:
    _check_against_torch(device, *case, reach=2.5)


FAR = [(4, "bilinear", "reflection", False), (4, "bilinear", "border", True),
       (4, "bicubic", "reflection", False), (4, "bicubic", "zeros", True),
       (5, "bilinear", "reflection", True), (5, "bilinear", "border", False)]


@pytest.mark.no_ptx_check  # the graphs of the matrix, with other values
@pytest.mark.parametrize("case", FAR, ids=[_ids(c) for c in FAR])
def test_grid_far_outside_the_input(case: tuple[int, str, str, bool]) -> None:
    """A grid out to 8 (many pixel spans past the edges): reflection bounces several
    times, border clamps (with zero grid gradient there), zeros reads nothing."""
    _check_against_torch("CPU", *case, reach=8.0)


# ── NaN and infinity ─────────────────────────────────────────────────────────

NON_FINITE = (float("nan"), float("inf"), -float("inf"), 0.3, 40.0)


def _non_finite_case(device: str, nd: int, mode: str, padding: str) -> None:
    shape = (INPUT[nd][0], 2, *INPUT[nd][2:])
    xn = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    points = np.array(list(itertools.product(NON_FINITE, repeat=nd - 2)), np.float32)
    gn = points.reshape(1, *(1,) * (nd - 3), -1, nd - 2).repeat(shape[0], 0)
    out = F.grid_sample(pg.Tensor(xn, device=device), pg.Tensor(gn, device=device), mode,
                        padding, align_corners=False)
    want = TF.grid_sample(torch.tensor(xn), torch.tensor(gn), mode, padding,
                          align_corners=False)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


NON_FINITE_MATRIX = [(nd, mode, padding) for nd, mode, padding
                     in itertools.product((4, 5), MODES, PADDINGS)
                     if not (nd == 5 and mode == "bicubic")]


@pytest.mark.no_ptx_check
@pytest.mark.parametrize("nd,mode,padding", NON_FINITE_MATRIX)
def test_nan_and_inf_in_the_grid_read_as_torch(nd: int, mode: str, padding: str) -> None:
    """NaN / inf coordinates: NaN for 4-D 'zeros' bilinear and every bicubic, 0 for the
    others under 'zeros'; border and reflection send them to torch's pixels (which
    differ between its 4-D and 5-D kernels)."""
    _non_finite_case("CPU", nd, mode, padding)


@pytest.mark.parametrize("nd,mode,padding", [(4, "bilinear", "zeros"),
                                             (4, "bicubic", "border"),
                                             (5, "bilinear", "reflection"),
                                             (5, "nearest", "border")])
def test_nan_and_inf_on_every_device(device: str, nd: int, mode: str, padding: str) -> None:
    _non_finite_case(device, nd, mode, padding)


# ── rounding, unit sizes, empty inputs ───────────────────────────────────────


def test_nearest_rounds_halves_to_even() -> None:
    """Source positions 0.5, 1.5, 2.5 (align_corners=False, width 4) read pixels 0, 2, 2,
    as torch's nearbyint."""
    row = pg.Tensor(np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4))
    grid = pg.Tensor(np.array([[[[-0.5, 0.0], [0.0, 0.0], [0.5, 0.0]]]], np.float32))
    out = F.grid_sample(row, grid, "nearest", align_corners=False)
    assert out.numpy().ravel().tolist() == [0.0, 2.0, 2.0]


@pytest.mark.no_ptx_check
@pytest.mark.parametrize("nd", [4, 5])
@pytest.mark.parametrize("padding", PADDINGS)
def test_nearest_ties_match_torch(nd: int, padding: str) -> None:
    """A grid of exact ties (steps of 0.25 on sides of 2, 4 and 8 pixels) in every
    padding, with both corner alignments."""
    shape = (1, 2, 4, 8) if nd == 4 else (1, 2, 2, 4, 8)
    xn = _random(*shape)
    steps = np.arange(-6, 7, dtype=np.float32) / 4
    points = np.array(list(itertools.product(steps, repeat=nd - 2)), np.float32)
    gn = points.reshape(1, *(1,) * (nd - 3), -1, nd - 2)
    for align in (False, True):
        out = F.grid_sample(pg.Tensor(xn), pg.Tensor(gn), "nearest", padding, align)
        want = TF.grid_sample(torch.tensor(xn), torch.tensor(gn), "nearest", padding, align)
        np.testing.assert_array_equal(out.numpy(), want.numpy())


UNIT = [((1, 2, 1, 1), "bicubic", "reflection"), ((1, 2, 1, 3), "bilinear", "reflection"),
        ((1, 2, 3, 1), "bicubic", "border"), ((1, 1, 1, 1, 3), "bilinear", "reflection"),
        ((1, 1, 1, 2, 1), "nearest", "reflection")]


@pytest.mark.no_ptx_check
@pytest.mark.parametrize("shape,mode,padding", UNIT)
@pytest.mark.parametrize("align", [False, True])
def test_unit_sized_inputs(shape: tuple[int, ...], mode: str, padding: str,
                           align: bool) -> None:
    """Sides of one pixel: an empty reflection span with align_corners (everything reads
    pixel 0, zero grid gradient), a zero unnormalising scale."""
    nd = len(shape)
    xn = _random(*shape)
    gn = rng.uniform(-3, 3, (1, 2, 3, 2) if nd == 4 else (1, 1, 2, 3, 3)).astype(np.float32)
    x, g = pg.Tensor(xn, requires_grad=True), pg.Tensor(gn, requires_grad=True)
    tx, tg = torch.tensor(xn, requires_grad=True), torch.tensor(gn, requires_grad=True)
    out = F.grid_sample(x, g, mode, padding, align)
    want = TF.grid_sample(tx, tg, mode, padding, align)
    assert_forward_and_grads_match(out, want, [x, g], [tx, tg], _random(*want.shape), "CPU")


@pytest.mark.parametrize("shape,grid", [((0, 2, 3, 4), (0, 2, 2, 2)),
                                        ((1, 0, 3, 4), (1, 2, 2, 2)),
                                        ((1, 2, 3, 4), (1, 0, 2, 2)),
                                        ((1, 2, 2, 3, 4), (1, 2, 0, 2, 3))])
def test_empty_batch_channels_or_grid(shape: tuple[int, ...], grid: tuple[int, ...]) -> None:
    x = pg.Tensor(np.zeros(shape, np.float32), requires_grad=True)
    g = pg.Tensor(np.zeros(grid, np.float32), requires_grad=True)
    out = F.grid_sample(x, g, align_corners=False)
    want = TF.grid_sample(torch.zeros(shape), torch.zeros(grid), align_corners=False)
    assert out.shape == tuple(want.shape)
    out.sum().backward()
    assert x.grad is not None and g.grad is not None
    assert x.grad.shape == shape and g.grad.shape == grid
    assert not x.grad.numpy().any() and not g.grad.numpy().any()


def test_float64() -> None:
    xn, gn = rng.standard_normal((1, 2, 4, 5)), rng.uniform(-2, 2, (1, 3, 3, 2))
    out = F.grid_sample(pg.Tensor(xn, dtype=pg.float64), pg.Tensor(gn, dtype=pg.float64),
                        "bicubic", "reflection", False)
    want = TF.grid_sample(torch.tensor(xn), torch.tensor(gn), "bicubic", "reflection", False)
    assert out.dtype == pg.float64
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


# ── affine_grid ──────────────────────────────────────────────────────────────


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 3), (2, 1, 3, 4, 2),
                                  (1, 2, 1, 1, 1)])
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_matches_torch(size: tuple[int, ...], align: bool) -> None:
    k = len(size) - 2
    thn = _random(size[0], k, k + 1)
    theta, ttheta = pg.Tensor(thn, requires_grad=True), torch.tensor(thn, requires_grad=True)
    with warnings.catch_warnings():  # unit sizes with align_corners warn, as torch
        warnings.simplefilter("ignore")
        out, want = F.affine_grid(theta, size, align), TF.affine_grid(ttheta, size, align)
    assert_forward_and_grads_match(out, want, [theta], [ttheta], _random(*want.shape), "CPU")


@pytest.mark.parametrize("nd,mode,padding", [(4, "bilinear", "zeros"),
                                             (4, "bicubic", "border"),
                                             (5, "bilinear", "reflection")])
def test_spatial_transformer(device: str, nd: int, mode: str, padding: str) -> None:
    """affine_grid then grid_sample: the gradients of theta and of the input."""
    k = nd - 2
    shape = INPUT[nd]
    thn = (np.eye(k, k + 1) * 1.2 + 0.3 * rng.standard_normal((shape[0], k, k + 1))
           ).astype(np.float32)
    xn = _random(*shape)
    theta = pg.Tensor(thn, device=device, requires_grad=True)
    x = pg.Tensor(xn, device=device, requires_grad=True)
    ttheta, tx = torch.tensor(thn, requires_grad=True), torch.tensor(xn, requires_grad=True)
    out = F.grid_sample(x, F.affine_grid(theta, shape, False), mode, padding, False)
    want = TF.grid_sample(tx, TF.affine_grid(ttheta, shape, False), mode, padding, False)
    assert_forward_and_grads_match(out, want, [theta, x], [ttheta, tx],
                                   _random(*want.shape), device)


def test_align_corners_defaults_to_false_with_torchs_warning() -> None:
    xn, gn = _random(1, 1, 3, 3), rng.uniform(-1, 1, (1, 2, 2, 2)).astype(np.float32)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        out = F.grid_sample(pg.Tensor(xn), pg.Tensor(gn))
    np.testing.assert_array_equal(
        out.numpy(), F.grid_sample(pg.Tensor(xn), pg.Tensor(gn), align_corners=False).numpy())
    theta = pg.Tensor(_random(1, 2, 3))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        grid = F.affine_grid(theta, (1, 1, 3, 3))
    np.testing.assert_array_equal(grid.numpy(),
                                  F.affine_grid(theta, (1, 1, 3, 3), False).numpy())


# ── errors ───────────────────────────────────────────────────────────────────


def _z(lib: Any, *shape: int, dtype: str = "float32") -> Any:
    return lib.tensor(np.zeros(shape, dtype=dtype))


def _f(lib: Any) -> Any:
    return TF if lib is torch else F


Case = tuple[str, Callable[[Any], Any], type[pg.PicogradError]]

ERRORS: list[Case] = [
    ("mode", lambda t: _f(t).grid_sample(_z(t, 1, 1, 2, 2), _z(t, 1, 1, 1, 2),
                                         mode="bicubical", align_corners=False),
     pg.ShapeError),
    ("padding", lambda t: _f(t).grid_sample(_z(t, 1, 1, 2, 2), _z(t, 1, 1, 1, 2),
                                            padding_mode="wrap", align_corners=False),
     pg.ShapeError),
    ("3-D input", lambda t: _f(t).grid_sample(_z(t, 1, 2, 2), _z(t, 1, 1, 2),
                                              align_corners=False), pg.ShapeError),
    ("ranks differ", lambda t: _f(t).grid_sample(_z(t, 1, 1, 2, 2), _z(t, 1, 1, 1, 1, 2),
                                                 align_corners=False), pg.ShapeError),
    ("batch", lambda t: _f(t).grid_sample(_z(t, 2, 1, 2, 2), _z(t, 1, 1, 1, 2),
                                          align_corners=False), pg.ShapeError),
    ("grid's last dim", lambda t: _f(t).grid_sample(_z(t, 1, 1, 2, 2), _z(t, 1, 1, 1, 3),
                                                    align_corners=False), pg.ShapeError),
    ("empty spatial dim", lambda t: _f(t).grid_sample(_z(t, 1, 1, 0, 2), _z(t, 1, 1, 1, 2),
                                                      align_corners=False), pg.ShapeError),
    ("bicubic 5-D", lambda t: _f(t).grid_sample(_z(t, 1, 1, 2, 2, 2), _z(t, 1, 1, 1, 1, 3),
                                                mode="bicubic", align_corners=False),
     pg.ShapeError),
    ("dtypes differ", lambda t: _f(t).grid_sample(_z(t, 1, 1, 2, 2),
                                                  _z(t, 1, 1, 1, 2, dtype="float64"),
                                                  align_corners=False), pg.DTypeError),
    ("theta shape", lambda t: _f(t).affine_grid(_z(t, 1, 3, 3), (1, 1, 2, 2),
                                                align_corners=False), pg.ShapeError),
    ("theta shape 3-D", lambda t: _f(t).affine_grid(_z(t, 1, 2, 3), (1, 1, 2, 2, 2),
                                                    align_corners=False), pg.ShapeError),
    ("int theta", lambda t: _f(t).affine_grid(_z(t, 1, 2, 3, dtype="int32"), (1, 1, 2, 2),
                                              align_corners=False), pg.ShapeError),
    ("zero size", lambda t: _f(t).affine_grid(_z(t, 1, 2, 3), (1, 1, 0, 2),
                                              align_corners=False), pg.ShapeError),
    ("theta batch", lambda t: _f(t).affine_grid(_z(t, 2, 2, 3), (1, 1, 2, 2),
                                                align_corners=False), pg.ShapeError),
]


def _torch_error(make: Callable[[Any], Any]) -> type[BaseException]:
    try:
        make(torch)
    except Exception as error:
        return type(error)
    raise AssertionError("torch raised nothing: the case is not a mistake")


@pytest.mark.parametrize("name,make,ours", ERRORS, ids=[name for name, _, _ in ERRORS])
def test_errors_are_typed_and_the_class_torch_raises(
        name: str, make: Callable[[Any], Any], ours: type[pg.PicogradError]) -> None:
    expected = _torch_error(make)
    with pytest.raises(ours) as info:
        make(pg)
    assert isinstance(info.value, expected), (
        f"{name}: torch raises {expected.__name__}, picograd {type(info.value).__mro__}")
    message = str(info.value)
    assert "grid_sample" in message or "affine_grid" in message
    assert __file__ in message.splitlines()[-1]  # the user's line


def test_errors_where_torch_raises_not_implemented() -> None:
    """torch raises NotImplementedError for these, and so does picograd (its
    UnimplementedDTypeError and UnimplementedCaseError, also a DTypeError and a
    ShapeError)."""
    with pytest.raises(pg.UnimplementedDTypeError, match=r"grid_sample.*int32"):
        F.grid_sample(_z(pg, 1, 1, 2, 2, dtype="int32"), _z(pg, 1, 1, 1, 2, dtype="int32"),
                      align_corners=False)
    with pytest.raises(pg.UnimplementedCaseError, match=r"affine_grid.*\(1, 1, 2\)"):
        F.affine_grid(_z(pg, 1, 2, 3), (1, 1, 2), align_corners=False)
    with pytest.raises(pg.ArgumentTypeError):
        F.grid_sample(np.zeros((1, 1, 2, 2)), _z(pg, 1, 1, 1, 2),  # type: ignore[arg-type]
                      align_corners=False)
