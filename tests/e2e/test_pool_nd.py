"""1-, 2- and 3-D max, average and power-average pooling (picograd.nn.pool) against torch:
values, indices and input gradients on every device, over ceil_mode, count_include_pad,
divisor_override, dilation, unbatched inputs, ties (the gradient goes to torch's pick) and
a kernel as large as the input (11 x 28: 308 taps, once a compiler recursion crash)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd import nn
from picograd.nn import functional as F
from picograd.nn.pool import (
    AvgPool1d,
    AvgPool3d,
    LPPool1d,
    MaxPool1d,
    MaxPool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)

torch = pytest.importorskip("torch", reason="torch is the oracle of the pooling tests")
TF = torch.nn.functional

rng = np.random.default_rng(5)


def _check(device: str, ours: Any, theirs: Any, shape: tuple[int, ...], *args: Any,
           ties: bool = True, **kwargs: Any) -> None:
    xn = rng.standard_normal(shape).astype(np.float32)
    if ties:
        xn = np.round(xn * 2).astype(np.float32)  # many tied maxima
    x = pg.Tensor(xn, device=device, requires_grad=True)
    tx = torch.tensor(xn, requires_grad=True)
    out, want = ours(x, *args, **kwargs), theirs(tx, *args, **kwargs)
    indices = want_indices = None
    if isinstance(out, tuple):
        (out, indices), (want, want_indices) = out, want
    assert out.shape == tuple(want.shape)
    upstream = rng.standard_normal(out.shape).astype(np.float32)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert x.grad is not None and tx.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)
    if indices is not None:
        assert want_indices is not None
        np.testing.assert_array_equal(indices.numpy(), want_indices.numpy())


def test_a_kernel_as_large_as_the_input(device: str) -> None:
    # 308 taps: a chain of one add per tap nested past the compiler's recursion limit
    _check(device, avg_pool2d, TF.avg_pool2d, (32, 2, 11, 28), kernel_size=(11, 28),
           ties=False)
    _check(device, max_pool2d, TF.max_pool2d, (2, 2, 20, 28), kernel_size=(20, 28))


# (function, torch's, input shape, args, kwargs)
MAX_CASES = {
    "1d_dilated_ceil": (max_pool1d, TF.max_pool1d, (2, 3, 10), (3, 2, 1, 2, True, True), {}),
    "1d_tiled": (max_pool1d, TF.max_pool1d, (2, 3, 9), (2,), {"return_indices": True}),
    "2d_padded": (max_pool2d, TF.max_pool2d, (2, 3, 7, 6), (3, 2, 1),
                  {"return_indices": True}),
    "2d_ceil_dilated": (max_pool2d, TF.max_pool2d, (1, 2, 8, 7), ((2, 3), (2, 1), (1, 1), 2,
                                                                  True, True), {}),
    "3d_mixed": (max_pool3d, TF.max_pool3d, (1, 2, 5, 6, 5),
                 ((2, 3, 2), (1, 2, 2), (1, 1, 0), 1, True, True), {}),
    "3d_dilated": (max_pool3d, TF.max_pool3d, (1, 2, 6, 6, 5), (2, 1, 0, 2), {}),
    "2d_unbatched": (max_pool2d, TF.max_pool2d, (3, 7, 6), (3, 2, 1), {"return_indices": True}),
}


@pytest.mark.parametrize("name", list(MAX_CASES))
def test_max_pool_matches_torch(device: str, name: str) -> None:
    ours, theirs, shape, args, kwargs = MAX_CASES[name]
    _check(device, ours, theirs, shape, *args, **kwargs)


AVG_CASES = {
    "1d_exclude_pad_ceil": (avg_pool1d, TF.avg_pool1d, (2, 3, 10), (3, 2, 1, True, False)),
    "2d_ceil": (avg_pool2d, TF.avg_pool2d, (2, 3, 7, 6), (3, 2, 1, True, True)),
    "2d_divisor": (avg_pool2d, TF.avg_pool2d, (2, 3, 7, 6), (3, 2, 1, False, True, 5)),
    "3d_exclude_pad": (avg_pool3d, TF.avg_pool3d, (1, 2, 5, 6, 5), (3, 2, 1, True, False)),
    "3d_pairs": (avg_pool3d, TF.avg_pool3d, (2, 1, 4, 5, 6), ((2, 1, 3), (1, 2, 2), (1, 0, 1))),
}


@pytest.mark.parametrize("name", list(AVG_CASES))
def test_avg_pool_matches_torch(device: str, name: str) -> None:
    ours, theirs, shape, args = AVG_CASES[name]
    _check(device, ours, theirs, shape, *args, ties=False)


def test_lp_pool_matches_torch(device: str) -> None:
    _check(device, lp_pool2d, TF.lp_pool2d, (2, 3, 7, 6), 2.0, 3, 2, ties=False)
    _check(device, lp_pool1d, TF.lp_pool1d, (2, 3, 9), 3.0, 2, ceil_mode=True, ties=False)


def test_a_window_of_only_minus_inf_picks_an_element_inside_the_input() -> None:
    xn = np.full((1, 1, 4, 4), -np.inf, np.float32)
    x = pg.Tensor(xn, requires_grad=True)
    tx = torch.tensor(xn, requires_grad=True)
    out, idx = max_pool2d(x, 3, 2, 1, return_indices=True)
    want, want_idx = TF.max_pool2d(tx, 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), want_idx.numpy())
    out.sum().backward()
    want.sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_layers_and_functional_names() -> None:
    xn = rng.standard_normal((2, 3, 8)).astype(np.float32)
    x, tx = pg.Tensor(xn), torch.tensor(xn)
    for ours, theirs in ((MaxPool1d(3, 2, 1, ceil_mode=True), torch.nn.MaxPool1d(3, 2, 1,
                                                                                ceil_mode=True)),
                         (AvgPool1d(3, 2, 1, count_include_pad=False),
                          torch.nn.AvgPool1d(3, 2, 1, count_include_pad=False)),
                         (LPPool1d(2, 3), torch.nn.LPPool1d(2, 3))):
        np.testing.assert_allclose(ours(x).numpy(), theirs(tx).numpy(), rtol=1e-5, atol=1e-5)
    x3 = rng.standard_normal((1, 2, 4, 4, 4)).astype(np.float32)
    _, idx = MaxPool3d(2, return_indices=True)(pg.Tensor(x3))
    _, want_idx = torch.nn.MaxPool3d(2, return_indices=True)(torch.tensor(x3))
    np.testing.assert_array_equal(idx.numpy(), want_idx.numpy())
    np.testing.assert_allclose(AvgPool3d(2, divisor_override=3)(pg.Tensor(x3)).numpy(),
                               torch.nn.AvgPool3d(2, divisor_override=3)(torch.tensor(x3)),
                               rtol=1e-5, atol=1e-5)
    assert F.max_pool1d is max_pool1d and F.avg_pool3d is avg_pool3d
    for ours, theirs in ((AvgPool1d(3, 1, 1), torch.nn.AvgPool1d(3, 1, 1)),
                         (LPPool1d(2, 3, 2), torch.nn.LPPool1d(2, 3, 2)),
                         (MaxPool3d(2, 1), torch.nn.MaxPool3d(2, 1)),
                         (AvgPool3d(2), torch.nn.AvgPool3d(2)),
                         (nn.MaxUnpool1d(3, 2, 1), torch.nn.MaxUnpool1d(3, 2, 1)),
                         (nn.MaxUnpool3d(2), torch.nn.MaxUnpool3d(2)),
                         (nn.AdaptiveAvgPool2d((2, 3)), torch.nn.AdaptiveAvgPool2d((2, 3)))):
        assert repr(ours) == repr(theirs)


@pytest.mark.parametrize(("make", "words"), [
    (lambda: max_pool1d(pg.Tensor.zeros(5), 2), ("max_pool1d", "2-D or 3-D")),
    (lambda: avg_pool3d(pg.Tensor.zeros(1, 1, 2, 2, 2), 3), ("avg_pool3d", "smaller")),
    (lambda: max_pool3d(pg.Tensor.zeros(1, 1, 4, 4, 4), 2, padding=2), ("padding", "half")),
])
def test_errors_name_the_op(make: Any, words: tuple[str, ...]) -> None:
    with pytest.raises(pg.ShapeError) as info:
        make()
    for word in words:
        assert word in str(info.value)


# ── adaptive pooling and max_unpool ──────────────────────────────────────────

ADAPTIVE = {
    "avg_1d": (F.adaptive_avg_pool1d, TF.adaptive_avg_pool1d, (2, 3, 10), (4,)),
    "avg_2d_none": (F.adaptive_avg_pool2d, TF.adaptive_avg_pool2d, (2, 3, 7, 6), ((3, None),)),
    "avg_3d": (F.adaptive_avg_pool3d, TF.adaptive_avg_pool3d, (1, 2, 5, 6, 7), ((2, 4, 3),)),
    "max_1d": (F.adaptive_max_pool1d, TF.adaptive_max_pool1d, (2, 3, 10), (4, True)),
    "max_2d": (F.adaptive_max_pool2d, TF.adaptive_max_pool2d, (2, 3, 7, 6), ((3, 4), True)),
    "max_3d": (F.adaptive_max_pool3d, TF.adaptive_max_pool3d, (1, 2, 5, 6, 7), ((2, 4, 3),
                                                                                True)),
    "max_2d_unbatched_to_1": (F.adaptive_max_pool2d, TF.adaptive_max_pool2d, (3, 7, 6),
                              (1, True)),
}


@pytest.mark.parametrize("name", list(ADAPTIVE))
def test_adaptive_pool_matches_torch(device: str, name: str) -> None:
    ours, theirs, shape, args = ADAPTIVE[name]
    _check(device, ours, theirs, shape, *args)


UNPOOL = {
    "1d": (max_pool1d, TF.max_pool1d, F.max_unpool1d, TF.max_unpool1d, (2, 3, 9), 3, 2, 1),
    "2d": (max_pool2d, TF.max_pool2d, F.max_unpool2d, TF.max_unpool2d, (2, 3, 6, 7), 2, 2, 0),
    "3d": (max_pool3d, TF.max_pool3d, F.max_unpool3d, TF.max_unpool3d, (1, 2, 4, 5, 4), 2, 2,
           1),
}


@pytest.mark.parametrize("name", list(UNPOOL))
def test_max_unpool_inverts_max_pool_as_torch(device: str, name: str) -> None:
    pool, tpool, unpool, tunpool, shape, k, s, p = UNPOOL[name]
    xn = rng.standard_normal(shape).astype(np.float32)
    pooled, indices = pool(pg.Tensor(xn, device=device), k, s, p, return_indices=True)
    want_pooled, want_indices = tpool(torch.tensor(xn), k, s, p, return_indices=True)
    y = pg.Tensor(pooled.numpy(), device=device, requires_grad=True)
    ty = want_pooled.clone().requires_grad_()
    out = unpool(y, indices, k, s, p, output_size=shape[2:])
    want = tunpool(ty, want_indices, k, s, p, output_size=shape[2:])
    assert out.shape == tuple(want.shape)
    upstream = rng.standard_normal(out.shape).astype(np.float32)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(out.numpy(), want.detach().numpy())
    assert y.grad is not None
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy())


def test_adaptive_and_unpool_layers() -> None:
    xn = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    x, tx = pg.Tensor(xn), torch.tensor(xn)
    np.testing.assert_allclose(nn.AdaptiveAvgPool2d((2, 3))(x).numpy(),
                               torch.nn.AdaptiveAvgPool2d((2, 3))(tx).numpy(), rtol=1e-5,
                               atol=1e-5)
    values, indices = nn.AdaptiveMaxPool2d(2, return_indices=True)(x)
    want, want_indices = torch.nn.AdaptiveMaxPool2d(2, return_indices=True)(tx)
    np.testing.assert_array_equal(indices.numpy(), want_indices.numpy())
    restored = nn.MaxUnpool2d(2)(*nn.MaxPool2d(2, return_indices=True)(x), output_size=(5, 7))
    theirs = torch.nn.MaxUnpool2d(2)(*torch.nn.MaxPool2d(2, return_indices=True)(tx),
                                     output_size=(5, 7))
    np.testing.assert_array_equal(restored.numpy(), theirs.numpy())
    np.testing.assert_array_equal(values.numpy(), want.numpy())
