"""1-, 2- and 3-D convolutions and transposed convolutions (picograd.nn.conv_nd) and their
layers (picograd.nn.conv_layers) against torch: values and the gradients of input, weight
and bias on every device over strides, 'same'/'valid' padding, dilations, groups, output
paddings and unbatched inputs; padding modes; torch's state dicts load unchanged."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd import nn
from picograd.nn import functional as F

torch = pytest.importorskip("torch", reason="torch is the oracle of the conv tests")
TF = torch.nn.functional

rng = np.random.default_rng(21)


def _random(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _check(device: str, ours: Any, theirs: Any, xs: tuple[int, ...], ws: tuple[int, ...],
           bias: int | None, *args: Any, tol: float = 1e-4) -> None:
    xn, wn = _random(*xs), _random(*ws)
    bn = _random(bias) if bias else None
    x = pg.Tensor(xn, device=device, requires_grad=True)
    w = pg.Tensor(wn, device=device, requires_grad=True)
    b = pg.Tensor(bn, device=device, requires_grad=True) if bn is not None else None
    tx, tw = torch.tensor(xn, requires_grad=True), torch.tensor(wn, requires_grad=True)
    tb = torch.tensor(bn, requires_grad=True) if bn is not None else None
    out, want = ours(x, w, b, *args), theirs(tx, tw, tb, *args)
    assert out.shape == tuple(want.shape)
    upstream = _random(*out.shape)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    pairs = [(out, want), (x.grad, tx.grad), (w.grad, tw.grad)]
    if b is not None:
        pairs.append((b.grad, tb.grad))  # type: ignore[union-attr]
    for got, expected in pairs:
        assert got is not None
        np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), rtol=tol, atol=tol)


# (input shape, weight shape, bias size, stride, padding, dilation, groups)
CONV1D = {
    "basic": ((2, 3, 9), (4, 3, 3), 4, 1, 0, 1, 1),
    "stride2_dilation2_groups": ((2, 4, 11), (6, 2, 3), 6, 2, 2, 2, 2),
    "same_even_kernel": ((1, 2, 8), (3, 2, 4), None, 1, "same", 1, 1),
    "valid_unbatched": ((3, 7), (2, 3, 2), 2, 1, "valid", 1, 1),
}
CONV3D = {
    "basic": ((1, 2, 4, 5, 4), (3, 2, 2, 3, 2), 3, 1, 0, 1, 1),
    "stride_pad_groups": ((2, 4, 5, 5, 6), (4, 2, 3, 2, 3), 4, (2, 1, 2), (1, 0, 1), 1, 2),
    "dilated_same": ((1, 2, 5, 6, 5), (2, 2, 3, 2, 2), None, 1, "same", (2, 1, 1), 1),
}


@pytest.mark.parametrize("name", list(CONV1D))
@pytest.mark.filterwarnings("ignore:Using padding=.same.")
def test_conv1d_matches_torch(device: str, name: str) -> None:
    xs, ws, bias, *args = CONV1D[name]
    _check(device, F.conv1d, TF.conv1d, xs, ws, bias, *args)


@pytest.mark.parametrize("name", list(CONV3D))
def test_conv3d_matches_torch(device: str, name: str) -> None:
    xs, ws, bias, *args = CONV3D[name]
    _check(device, F.conv3d, TF.conv3d, xs, ws, bias, *args)


def test_conv2d_takes_same_padding_and_unbatched_inputs(device: str) -> None:
    _check(device, F.conv2d, TF.conv2d, (3, 6, 7), (2, 3, 2, 3), 2, 1, "same", (2, 1))


# (input shape, weight shape, bias size, stride, padding, output_padding, groups, dilation)
TRANSPOSE = {
    "1d": ((2, 4, 5), (4, 3, 3), 3, 2, 1, 1, 1, 1),
    "1d_groups_dilation": ((1, 4, 6), (4, 2, 2), 4, 3, 0, 2, 2, 2),
    "3d": ((1, 2, 3, 4, 3), (2, 3, 2, 3, 2), 3, (2, 1, 2), (0, 1, 1), (1, 0, 1), 1, 1),
    "3d_groups_dilation": ((2, 4, 3, 3, 3), (4, 1, 2, 2, 3), None, 1, 1, 0, 2, (1, 2, 1)),
}


@pytest.mark.parametrize("name", list(TRANSPOSE))
def test_conv_transpose_matches_torch(device: str, name: str) -> None:
    xs, ws, bias, *args = TRANSPOSE[name]
    n = len(xs) - 2
    ours, theirs = ((F.conv_transpose1d, TF.conv_transpose1d) if n == 1 else
                    (F.conv_transpose3d, TF.conv_transpose3d))
    _check(device, ours, theirs, xs, ws, bias, *args)


def _twin(ours: Any, theirs: Any) -> None:
    """torch's layer loads our state dict (same names and shapes)."""
    assert list(theirs.state_dict()) == list(ours.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in
                            ours.state_dict().items()})
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_layers_padding_modes(device: str, mode: str) -> None:
    for ours, theirs, xs in (
            (nn.Conv1d(2, 4, 3, padding=2, padding_mode=mode, device=device),
             torch.nn.Conv1d(2, 4, 3, padding=2, padding_mode=mode), (2, 2, 7)),
            (nn.Conv2d(2, 2, (3, 2), padding="same", padding_mode=mode, device=device),
             torch.nn.Conv2d(2, 2, (3, 2), padding="same", padding_mode=mode), (1, 2, 5, 6)),
            (nn.Conv3d(2, 2, 2, stride=(1, 2, 1), padding=1, padding_mode=mode, bias=False,
                       device=device),
             torch.nn.Conv3d(2, 2, 2, stride=(1, 2, 1), padding=1, padding_mode=mode,
                             bias=False), (1, 2, 3, 4, 4))):
        _twin(ours, theirs)
        xn = _random(*xs)
        x = pg.Tensor(xn, device=device, requires_grad=True)
        tx = torch.tensor(xn, requires_grad=True)
        out, want = ours(x), theirs(tx)
        out.sum().backward()
        want.sum().backward()
        assert x.grad is not None and ours.weight.grad is not None
        np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                                   rtol=1e-4, atol=1e-4)


def test_transposed_layers_and_output_size() -> None:
    for ours, theirs, xs, size in (
            (nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, groups=2),
             torch.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, groups=2), (2, 4, 5), (10,)),
            (nn.ConvTranspose3d(2, 3, (2, 3, 2), stride=2, output_padding=1, bias=False),
             torch.nn.ConvTranspose3d(2, 3, (2, 3, 2), stride=2, output_padding=1, bias=False),
             (1, 2, 2, 3, 2), None)):
        assert ours.weight.shape == tuple(theirs.weight.shape)
        _twin(ours, theirs)
        xn = _random(*xs)
        got = ours(pg.Tensor(xn), output_size=size)
        want = theirs(torch.from_numpy(xn), output_size=None if size is None else list(size))
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("make", "words"), [
    (lambda: F.conv1d(pg.Tensor.zeros(1, 2, 5), pg.Tensor.zeros(3, 2, 3), stride=2,
                      padding="same"), ("conv1d", "strided")),
    (lambda: F.conv3d(pg.Tensor.zeros(1, 2, 2, 5, 5), pg.Tensor.zeros(3, 2, 3, 3, 3)),
     ("conv3d", "smaller than the kernel")),
    (lambda: F.conv3d(pg.Tensor.zeros(1, 3, 4, 4, 4), pg.Tensor.zeros(3, 2, 3, 3, 3)),
     ("conv3d", "input channels")),
    (lambda: F.conv1d(pg.Tensor.zeros(5), pg.Tensor.zeros(3, 2, 3)), ("conv1d", "2-D or 3-D")),
    (lambda: nn.Conv1d(2, 3, 3, padding_mode="mirror"), ("Conv1d", "padding_mode")),
    (lambda: F.conv_transpose3d(pg.Tensor.zeros(1, 2, 2, 2, 2), pg.Tensor.zeros(2, 1, 2, 2, 2),
                                stride=2, output_padding=2), ("output_padding", "smaller")),
])
def test_errors_name_the_op(make: Any, words: tuple[str, ...]) -> None:
    with pytest.raises(pg.ShapeError) as info:
        make()
    for word in words:
        assert word in str(info.value)
