"""Convolution and pooling (picograd.nn.conv) against torch.nn.functional: forward values and
the gradients of input, weight and bias on every device, over strides, paddings, dilations,
groups, non-square kernels and pair arguments; the layers' parameters and initialisation; a
small CNN's gradients next to its torch twin; and the errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd.frontend.realize import compiled
from picograd.nn import Conv2d
from picograd.nn import functional as F
from picograd.nn.conv import conv2d
from picograd.nn.layers import Flatten, Linear, ReLU, Sequential
from picograd.nn.pool import AvgPool2d, MaxPool2d, avg_pool2d, max_pool2d

torch = pytest.importorskip("torch", reason="torch is the oracle of the conv tests")
TF = torch.nn.functional

rng = np.random.default_rng(11)


def _random(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _close(ours: pg.Tensor, theirs: Any, tol: float = 1e-4) -> None:
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


# (input shape, weight shape, stride, padding, dilation, groups, bias)
CONV_CASES = {
    "basic": ((1, 1, 5, 5), (2, 1, 3, 3), 1, 0, 1, 1, True),
    "stride2_pad1_batch3": ((3, 3, 7, 6), (4, 3, 3, 3), 2, 1, 1, 1, True),
    "groups2_dilation2_pad2_nonsquare": ((2, 4, 8, 7), (4, 2, 3, 2), 1, 2, 2, 2, False),
    "pair_args": ((1, 4, 9, 8), (2, 4, 2, 3), (2, 1), (1, 0), (1, 2), 1, True),
    "pointwise_stride2_groups": ((3, 4, 6, 5), (6, 2, 1, 1), 2, 0, 1, 2, True),
    "stride3_dilation2_pad2": ((2, 3, 9, 10), (3, 1, 2, 3), 3, 2, 2, 3, True),
    # 7 x 9 = 63 output columns, computed as 64 (whole register tiles), the last dropped
    "tile_rounded_7x7": ((2, 8, 7, 7), (8, 8, 3, 3), 1, 1, 1, 1, True),
    # 40 x 3 = 120 columns computed as 128: the extra run reaches 4 rows past the windows
    "tile_rounded_narrow": ((1, 2, 42, 3), (3, 2, 3, 3), 1, 0, 1, 1, True),
}


@pytest.mark.parametrize("name", list(CONV_CASES))
def test_conv2d_matches_torch(device: str, name: str) -> None:
    xs, ws, stride, padding, dilation, groups, with_bias = CONV_CASES[name]
    xn, wn, bn = _random(*xs), _random(*ws), _random(ws[0])
    x = pg.Tensor(xn, device=device, requires_grad=True)
    w = pg.Tensor(wn, device=device, requires_grad=True)
    b = pg.Tensor(bn, device=device, requires_grad=True) if with_bias else None
    out = conv2d(x, w, b, stride, padding, dilation, groups)
    tx, tw = torch.tensor(xn, requires_grad=True), torch.tensor(wn, requires_grad=True)
    tb = torch.tensor(bn, requires_grad=True) if with_bias else None
    want = TF.conv2d(tx, tw, tb, stride, padding, dilation, groups)
    assert out.shape == tuple(want.shape)
    upstream = _random(*out.shape)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    pg.realize(out, x.grad, w.grad, *([b.grad] if b is not None else []))  # one graph
    _close(out, want)
    _close(x.grad, tx.grad)
    _close(w.grad, tw.grad)
    if b is not None:
        assert tb is not None
        _close(b.grad, tb.grad)


def _kernels(t: pg.Tensor) -> int:
    return compiled(t)[0].num_kernels


@pytest.mark.parametrize("k", [3, 5])
def test_conv2d_kernel_counts(k: int) -> None:
    # forward: the input planes, one reduce over every tap, the crop with the bias; the input
    # gradient (a transposed convolution of the gradient laid out once) does not grow with
    # the kernel's taps, the weight gradient is one reduce per tap and one over the batch
    x = pg.Tensor(_random(2, 4, 12, 12), requires_grad=True)
    w = pg.Tensor(_random(6, 4, k, k), requires_grad=True)
    b = pg.Tensor(_random(6), requires_grad=True)
    out = conv2d(x, w, b, padding=1)
    assert _kernels(out) == 3
    out.sum().backward()
    assert x.grad is not None and w.grad is not None
    assert _kernels(x.grad) == 4
    assert _kernels(w.grad) == k * k + 3


def test_max_pool_fuses_into_its_producer(device: str) -> None:
    # windows that tile the input read each element of relu(conv + bias) once: the pool
    # computes it (no kernel of its own), and keeps torch's values
    xn, wn, bn = _random(2, 4, 12, 12), _random(6, 4, 3, 3), _random(6)
    x, w, b = (pg.Tensor(a, device=device) for a in (xn, wn, bn))
    out = max_pool2d(conv2d(x, w, b, padding=1).relu(), 2)
    assert _kernels(out) == _kernels(conv2d(x, w, b, padding=1))
    want = TF.max_pool2d(TF.conv2d(*map(torch.tensor, (xn, wn, bn)), padding=1).relu(), 2)
    _close(out, want)


# (kernel_size, stride, padding)
POOL_CASES = {
    "k2": (2, None, 0),
    "k3_s2_p1": (3, 2, 1),
    "k2x3_s1x2_p1x0": ((2, 3), (1, 2), (1, 0)),
}


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("name", list(POOL_CASES))
def test_pool2d_matches_torch(device: str, kind: str, name: str) -> None:
    kernel, stride, padding = POOL_CASES[name]
    ours, theirs = (max_pool2d, TF.max_pool2d) if kind == "max" else (avg_pool2d, TF.avg_pool2d)
    xn = _random(2, 3, 7, 6)
    x = pg.Tensor(xn, device=device, requires_grad=True)
    tx = torch.tensor(xn, requires_grad=True)
    out, want = ours(x, kernel, stride, padding), theirs(tx, kernel, stride, padding)
    assert out.shape == tuple(want.shape)
    upstream = _random(*out.shape)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    pg.realize(out, x.grad)
    _close(out, want, 1e-5)
    _close(x.grad, tx.grad, 1e-5)


@pytest.mark.parametrize("kernel", [2, 3, (2, 3)])
def test_tiled_max_pool_gradient_goes_where_torchs_goes(kernel: Any) -> None:
    # windows with ties, NaNs (two in one window: torch picks the last), all -inf, and
    # rows and columns past the last whole window (their gradient is 0)
    xn = np.round(_random(2, 3, 7, 8)).astype(np.float32)  # many ties
    xn[0, 0, :2, :3] = np.nan
    xn[0, 1, 3:6, 3:6] = -np.inf
    xn[1, 2, 0, 1] = np.nan
    x = pg.Tensor(xn, device="CPU:LLVM", requires_grad=True)
    tx = torch.tensor(xn, requires_grad=True)
    out, want = max_pool2d(x, kernel), TF.max_pool2d(tx, kernel)
    upstream = _random(*out.shape)
    (out * pg.Tensor(upstream, device="CPU:LLVM")).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    assert x.grad is not None and tx.grad is not None
    program = compiled(out, x.grad)[0]  # as a training step computes them: together
    assert program.num_kernels == 3  # the pooled maxima, each window's pick, the gradient
    np.testing.assert_array_equal(out.numpy(), want.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_a_small_cnn_matches_its_torch_twin(device: str) -> None:
    pg.manual_seed(5)
    ours = Sequential(Conv2d(1, 4, 3, padding=1, device=device), ReLU(), MaxPool2d(2),
                      Conv2d(4, 4, 3, stride=2, groups=2, device=device), ReLU(), AvgPool2d(2),
                      Flatten(), Linear(4, 3, device=device))
    theirs = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(4, 4, 3, stride=2, groups=2), torch.nn.ReLU(), torch.nn.AvgPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(4, 3))
    theirs.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in ours.state_dict().items()})
    xn, yn = _random(2, 1, 10, 10), np.array([0, 2], np.int32)
    loss = F.cross_entropy(ours(pg.Tensor(xn, device=device)), pg.Tensor(yn, device=device))
    loss.backward()
    tloss = TF.cross_entropy(theirs(torch.from_numpy(xn)), torch.from_numpy(yn).long())
    tloss.backward()
    pg.realize(loss, *(p.grad for p in ours.parameters()))
    assert loss.item() == pytest.approx(tloss.item(), rel=1e-5, abs=1e-6)
    tparams = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        _close(p.grad, tparams[name].grad)


# ── layers ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("groups,bias", [(1, True), (2, False)])
def test_conv2d_layer_parameters_and_init(groups: int, bias: bool) -> None:
    pg.manual_seed(0)
    layer = Conv2d(4, 6, (3, 2), stride=2, padding=1, groups=groups, bias=bias)
    fan_in = 4 // groups * 3 * 2
    bound = 1 / math.sqrt(fan_in)
    assert layer.weight.shape == (6, 4 // groups, 3, 2)
    assert layer.weight.requires_grad
    params = layer.parameters()
    assert len(params) == (2 if bias else 1)
    for p in params:
        values = p.numpy()
        assert np.abs(values).max() <= bound
    w = layer.weight.numpy()
    assert w.max() > 0.7 * bound and w.min() < -0.7 * bound  # spread over the whole range
    if bias:
        assert layer.bias is not None and layer.bias.shape == (6,)
    else:
        assert layer.bias is None
    assert repr(layer) == ("Conv2d(4, 6, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1)"
                           + (", groups=2, bias=False)" if groups == 2 else ")"))


def test_conv2d_layer_forward_is_the_functional_form() -> None:
    layer = Conv2d(3, 2, 3, padding=1, dilation=2)
    assert layer.bias is not None
    x = pg.Tensor(_random(1, 3, 6, 6))
    want = TF.conv2d(torch.from_numpy(x.numpy()), torch.from_numpy(layer.weight.numpy()),
                     torch.from_numpy(layer.bias.numpy()), padding=1, dilation=2)
    _close(layer(x), want)


def test_pool_layers() -> None:
    xn = _random(1, 2, 6, 6)
    _close(MaxPool2d(3, 2, 1)(pg.Tensor(xn)), TF.max_pool2d(torch.from_numpy(xn), 3, 2, 1))
    _close(AvgPool2d(2)(pg.Tensor(xn)), TF.avg_pool2d(torch.from_numpy(xn), 2))
    assert repr(MaxPool2d(2)) == repr(torch.nn.MaxPool2d(2))
    assert repr(AvgPool2d(3, 1, 1)) == repr(torch.nn.AvgPool2d(3, 1, 1))


# ── errors ───────────────────────────────────────────────────────────────────

X = pg.Tensor.zeros(2, 3, 8, 8)
W = pg.Tensor.zeros(4, 3, 3, 3)
NOT_AN_INT: Any = 1.5


@pytest.mark.parametrize("make,words", [
    (lambda: conv2d(X, pg.Tensor.zeros(4, 2, 3, 3)), ("conv2d", "(2, 3, 8, 8)", "(4, 2, 3, 3)")),
    (lambda: conv2d(X, pg.Tensor.zeros(4, 3, 3, 3), groups=3),
     ("conv2d", "(2, 3, 8, 8)", "(4, 3, 3, 3)", "groups=3")),
    (lambda: conv2d(X, pg.Tensor.zeros(4, 1, 3, 3), groups=3), ("conv2d", "not divisible")),
    (lambda: conv2d(X, W, pg.Tensor.zeros(3)), ("conv2d", "bias", "(3,)")),
    (lambda: conv2d(X, W, padding=-1), ("conv2d", "padding", "-1")),
    (lambda: conv2d(X, W, stride=0), ("conv2d", "stride", "0")),
    (lambda: conv2d(X, W, stride=(1, 2, 3)), ("conv2d", "stride", "pair")),
    (lambda: conv2d(X, W, dilation=NOT_AN_INT), ("conv2d", "dilation", "1.5")),
    (lambda: conv2d(X, W, dilation=5), ("conv2d", "smaller than the kernel")),
    (lambda: conv2d(pg.Tensor.zeros(3, 8, 8), W), ("conv2d", "4-D", "(3, 8, 8)")),
    (lambda: conv2d(X, pg.Tensor.zeros(4, 3, 3)), ("conv2d", "4-D weight", "(4, 3, 3)")),
    (lambda: max_pool2d(X, 2, padding=2), ("max_pool2d", "padding", "half")),
    (lambda: avg_pool2d(X, 0), ("avg_pool2d", "kernel_size", "0")),
    (lambda: max_pool2d(X, 3, stride=-1), ("max_pool2d", "stride", "-1")),
    (lambda: avg_pool2d(X, 9), ("avg_pool2d", "smaller than the kernel")),
    (lambda: Conv2d(3, 4, 3, groups=2), ("Conv2d", "groups=2")),
    (lambda: Conv2d(3, 4, 3, padding=-2), ("Conv2d", "padding", "-2")),
])
def test_errors_name_the_op_and_the_shapes(make, words: tuple[str, ...]) -> None:
    with pytest.raises(pg.ShapeError) as info:
        make()
    message = str(info.value)
    for word in words:
        assert word in message
    assert __file__ in message  # located at the user's line


def test_integer_convolution_is_a_dtype_error() -> None:
    with pytest.raises(pg.DTypeError, match=r"conv2d.*int32"):
        conv2d(pg.Tensor.zeros(1, 1, 4, 4, dtype=pg.int32), pg.Tensor.zeros(1, 1, 3, 3))


def test_operands_on_different_devices_are_a_device_error() -> None:
    with pytest.raises(pg.DeviceError):
        conv2d(pg.Tensor.zeros(1, 1, 4, 4), pg.Tensor.zeros(1, 1, 3, 3, device="CPU:C"))
