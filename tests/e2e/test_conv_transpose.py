"""Transposed convolution (picograd.nn.conv.conv_transpose2d, ConvTranspose2d) against torch:
forward values and the gradients of input, weight and bias on every device over strides,
paddings, output paddings, dilations, groups and pair arguments; the layer's parameters,
initialisation, state dict and output_size; and the errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd.nn import ConvTranspose2d
from picograd.nn import functional as F

torch = pytest.importorskip("torch", reason="torch is the oracle of the conv tests")
TF = torch.nn.functional

rng = np.random.default_rng(12)


def _random(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _close(ours: pg.Tensor, theirs: Any, tol: float = 1e-4) -> None:
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


# (input shape, weight shape, stride, padding, output_padding, groups, dilation, bias)
CASES = {
    "basic": ((1, 2, 4, 4), (2, 3, 3, 3), 1, 0, 0, 1, 1, True),
    "stride2_pad1_outpad1_batch2": ((2, 2, 3, 4), (2, 3, 3, 2), 2, 1, 1, 1, 1, True),
    "pairs_groups2": ((1, 4, 3, 3), (4, 1, 3, 3), (2, 3), (1, 0), (1, 2), 2, 1, False),
    "dilation2_crop": ((2, 2, 5, 4), (2, 2, 2, 3), 1, 2, 0, 1, 2, True),
    "stride3_dilation_pairs": ((1, 3, 3, 3), (3, 2, 3, 3), 3, (0, 2), (2, 1), 1, (2, 1), True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_conv_transpose2d_matches_torch(device: str, name: str) -> None:
    xs, ws, stride, padding, output_padding, groups, dilation, with_bias = CASES[name]
    xn, wn, bn = _random(*xs), _random(*ws), _random(ws[1] * groups)
    x = pg.Tensor(xn, device=device, requires_grad=True)
    w = pg.Tensor(wn, device=device, requires_grad=True)
    b = pg.Tensor(bn, device=device, requires_grad=True) if with_bias else None
    out = F.conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation)
    tx, tw = torch.tensor(xn, requires_grad=True), torch.tensor(wn, requires_grad=True)
    tb = torch.tensor(bn, requires_grad=True) if with_bias else None
    want = TF.conv_transpose2d(tx, tw, tb, stride, padding, output_padding, groups, dilation)
    assert out.shape == tuple(want.shape)
    upstream = _random(*out.shape)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    pg.realize(out, x.grad, w.grad, *([b.grad] if b is not None else []))
    _close(out, want)
    _close(x.grad, tx.grad)
    _close(w.grad, tw.grad)
    if b is not None:
        assert tb is not None
        _close(b.grad, tb.grad)


def test_layer_parameters_init_and_state_dict() -> None:
    pg.manual_seed(1)
    layer = ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2)
    assert layer.weight.shape == (4, 3, 3, 2)
    assert layer.bias is not None and layer.bias.shape == (6,)
    bound = 1 / math.sqrt(3 * 3 * 2)  # torch's fan_in of this weight: out/groups * kh * kw
    w = layer.weight.numpy()
    assert np.abs(w).max() <= bound and w.max() > 0.7 * bound and w.min() < -0.7 * bound
    theirs = torch.nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1,
                                      groups=2)
    assert list(theirs.state_dict()) == list(layer.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in
                            layer.state_dict().items()})
    xn = _random(2, 4, 3, 3)
    _close(layer(pg.Tensor(xn)), theirs(torch.from_numpy(xn)))
    assert repr(layer) == ("ConvTranspose2d(4, 6, kernel_size=(3, 2), stride=(2, 2), "
                           "padding=(1, 1), output_padding=(1, 1), groups=2)")
    assert ConvTranspose2d(2, 2, 3, bias=False).bias is None


def test_output_size_picks_the_output_padding() -> None:
    layer = ConvTranspose2d(2, 2, 3, stride=2, padding=1)
    theirs = torch.nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in
                            layer.state_dict().items()})
    xn = _random(1, 2, 4, 4)
    for size in ((7, 7), (8, 7), (1, 2, 8, 8)):
        out = layer(pg.Tensor(xn), output_size=size)
        _close(out, theirs(torch.from_numpy(xn), output_size=list(size)))
    with pytest.raises(pg.ShapeError, match="output_size"):
        layer(pg.Tensor(xn), output_size=(9, 9))


X = pg.Tensor.zeros(2, 3, 4, 4)
W = pg.Tensor.zeros(3, 2, 3, 3)


@pytest.mark.parametrize("make,words", [
    (lambda: F.conv_transpose2d(X, pg.Tensor.zeros(2, 2, 3, 3)), ("(2, 3, 4, 4)", "(2, 2, 3, 3)")),
    (lambda: F.conv_transpose2d(X, W, groups=2), ("groups=2", "not divisible")),
    (lambda: F.conv_transpose2d(X, W, pg.Tensor.zeros(3)), ("bias", "(2,)")),
    (lambda: F.conv_transpose2d(X, W, stride=2, output_padding=2), ("output_padding", "smaller")),
    (lambda: F.conv_transpose2d(X, W, output_padding=-1), ("output_padding", "-1")),
    (lambda: F.conv_transpose2d(X, W, padding=4), ("empty output",)),
    (lambda: F.conv_transpose2d(pg.Tensor.zeros(4, 4), W), ("4-D", "(4, 4)")),
    (lambda: F.conv_transpose2d(X, pg.Tensor.zeros(3, 2, 3)), ("4-D weight", "(3, 2, 3)")),
    (lambda: ConvTranspose2d(3, 4, 3, groups=2), ("ConvTranspose2d", "groups=2")),
])
def test_errors_name_the_op_and_the_shapes(make, words: tuple[str, ...]) -> None:
    with pytest.raises(pg.ShapeError) as info:
        make()
    message = str(info.value)
    assert "onvTranspose2d" in message or "conv_transpose2d" in message
    for word in words:
        assert word in message
    assert __file__ in message


def test_integer_input_is_a_dtype_error() -> None:
    with pytest.raises(pg.DTypeError, match=r"conv_transpose2d.*int32"):
        F.conv_transpose2d(pg.Tensor.zeros(1, 1, 4, 4, dtype=pg.int32), pg.Tensor.zeros(1, 1, 3, 3))
