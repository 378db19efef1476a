"""InstanceNorm1d/2d/3d, LocalResponseNorm, BatchNorm3d, GroupNorm, the padding layers and
Unflatten against torch: values and gradients on every device, running statistics in
training and eval, state dict names, reprs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd import nn
from picograd.nn import functional as F

torch = pytest.importorskip("torch", reason="torch is the oracle of the norm tests")
TF = torch.nn.functional

rng = np.random.default_rng(13)


def _random(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _twin(device: str, ours: Any, theirs: Any, shape: tuple[int, ...],
          tol: float = 1e-4) -> None:
    """Same output and input/parameter gradients; torch's layer has our state dict."""
    assert list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in
                            ours.state_dict().items()})
    xn = _random(*shape)
    x = pg.Tensor(xn, device=device, requires_grad=True)
    tx = torch.tensor(xn, requires_grad=True)
    out, want = ours(x), theirs(tx)
    upstream = _random(*out.shape)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=tol, atol=tol)
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters(),
                                  strict=True):
        assert p.grad is not None, name
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=tol, atol=tol)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize(("n", "shape"), [(1, (2, 3, 5)), (2, (2, 3, 4, 5)),
                                          (3, (2, 3, 3, 2, 4)), (1, (3, 6))])
def test_instance_norm_affine(device: str, n: int, shape: tuple[int, ...]) -> None:
    ours = getattr(nn, f"InstanceNorm{n}d")(3, affine=True, device=device)
    theirs = getattr(torch.nn, f"InstanceNorm{n}d")(3, affine=True)
    _twin(device, ours, theirs, shape)


def test_instance_norm_running_stats() -> None:
    ours = nn.InstanceNorm2d(3, momentum=0.3, track_running_stats=True)
    theirs = torch.nn.InstanceNorm2d(3, momentum=0.3, track_running_stats=True)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for _ in range(2):
        xn = _random(2, 3, 4, 4) * 2 + 1
        ours(pg.Tensor(xn)).numpy()
        theirs(torch.tensor(xn))
    assert ours.running_mean is not None and ours.running_var is not None
    np.testing.assert_allclose(ours.running_mean.numpy(), theirs.running_mean, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var, rtol=1e-5,
                               atol=1e-6)
    ours.eval()
    theirs.eval()
    xn = _random(2, 3, 4, 4)
    np.testing.assert_allclose(ours(pg.Tensor(xn)).numpy(), theirs(torch.tensor(xn)).numpy(),
                               rtol=1e-5, atol=1e-5)


def test_batch_norm_3d_and_group_norm(device: str) -> None:
    ours, theirs = nn.BatchNorm3d(3, device=device), torch.nn.BatchNorm3d(3)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    xn = _random(2, 3, 2, 3, 2)
    x = pg.Tensor(xn, device=device, requires_grad=True)
    tx = torch.tensor(xn, requires_grad=True)
    out, want = ours(x), theirs(tx)
    (out * out).sum().backward()
    (want * want).sum().backward()
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-4)
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-4)
    assert ours.running_var is not None
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var, rtol=1e-5)
    gn = nn.GroupNorm(2, 4, device=device)
    tgn = torch.nn.GroupNorm(2, 4)
    assert list(gn.state_dict()) == list(tgn.state_dict())
    gx = _random(2, 4, 3, 2, 2)
    np.testing.assert_allclose(gn(pg.Tensor(gx, device=device)).numpy(),
                               tgn(torch.tensor(gx)).detach().numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(2, 7, 3), (1, 6, 3, 4), (1, 5, 2, 3, 2)])
def test_local_response_norm(device: str, shape: tuple[int, ...]) -> None:
    _twin(device, nn.LocalResponseNorm(3, alpha=0.1, beta=0.6, k=2.0),
          torch.nn.LocalResponseNorm(3, alpha=0.1, beta=0.6, k=2.0), shape)
    xn = _random(*shape)
    np.testing.assert_allclose(F.local_response_norm(pg.Tensor(xn, device=device), 4).numpy(),
                               TF.local_response_norm(torch.tensor(xn), 4).numpy(),
                               rtol=1e-5, atol=1e-6)


PAD_LAYERS = [("ZeroPad1d", (1, 2), (2, 3, 4)), ("ZeroPad2d", (1, -1, 2, 0), (1, 2, 3, 4)),
              ("ZeroPad3d", 1, (1, 1, 2, 2, 2)), ("ConstantPad2d", (2, 1, 0, 1), (1, 2, 3, 4)),
              ("ReflectionPad1d", 2, (2, 3, 4)), ("ReflectionPad2d", (1, 2, 2, 0), (1, 2, 3, 4)),
              ("ReflectionPad3d", 1, (1, 1, 2, 3, 2)), ("ReplicationPad1d", (3, 1), (2, 3, 4)),
              ("ReplicationPad2d", 2, (1, 2, 3, 4)), ("ReplicationPad3d", (1, 0, 2, 1, 0, 1),
                                                      (1, 1, 2, 3, 2)),
              ("CircularPad1d", (2, 1), (2, 3, 4)), ("CircularPad2d", 1, (1, 2, 3, 4)),
              ("CircularPad3d", (1, 1, 0, 2, 1, 0), (1, 1, 2, 3, 2))]


@pytest.mark.parametrize(("name", "padding", "shape"), PAD_LAYERS)
def test_padding_layers(device: str, name: str, padding: Any, shape: tuple[int, ...]) -> None:
    args = (padding, 2.5) if name.startswith("Constant") else (padding,)
    _twin(device, getattr(nn, name)(*args), getattr(torch.nn, name)(*args), shape)


def test_unflatten() -> None:
    xn = _random(2, 6, 3)
    ours, theirs = nn.Unflatten(1, (2, 3)), torch.nn.Unflatten(1, (2, 3))
    np.testing.assert_array_equal(ours(pg.Tensor(xn)).numpy(), theirs(torch.tensor(xn)))
    assert repr(ours) == repr(theirs)
