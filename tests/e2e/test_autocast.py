"""pg.autocast against torch.autocast (CPU, float16): which ops compute in half and which
in float32, the values, float32 gradients for float32 parameters; GradScaler against
torch.amp.GradScaler("cpu"): the same scales, skipped steps and parameters over a run with
overflowing steps."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import picograd as pg
import picograd.nn.functional as F

RNG = np.random.default_rng(5)
A = RNG.standard_normal((4, 8)).astype(np.float32)
B = RNG.standard_normal((8, 3)).astype(np.float32)
IMG = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
KER = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
BIAS = RNG.standard_normal(3).astype(np.float32)


def _dtype_name(t: Any) -> str:
    return str(t.dtype).replace("torch.", "").replace("picograd.", "")


def _classes(lib: Any, like: Any) -> Any:
    labels = np.array([0, 1, 2, 1])
    if lib is torch:
        return torch.tensor(labels)
    return pg.Tensor(labels.astype(np.int32), device=like.device)  # WEBGPU holds no int64


# op name -> f(lib, functional, a, b, img, kernel, bias)
CASES = {
    "matmul": lambda t, f, a, b, i, k, c: a @ b,
    "linear": lambda t, f, a, b, i, k, c: f.linear(a, b.transpose(0, 1), c),
    "conv2d": lambda t, f, a, b, i, k, c: f.conv2d(i, k, c, padding=1),
    "conv_transpose2d": lambda t, f, a, b, i, k, c: f.conv_transpose2d(
        i, k[:2], c[:2], stride=2),
    "attention with a float mask": lambda t, f, a, b, i, k, c: f.scaled_dot_product_attention(
        a.reshape(1, 4, 8), a.reshape(1, 4, 8), a.reshape(1, 4, 8), attn_mask=a[:, :4]),
    "add (not listed: inputs' dtype)": lambda t, f, a, b, i, k, c: a + 1.0,
    "mse_loss of a matmul": lambda t, f, a, b, i, k, c: f.mse_loss(a @ b, (a @ b) * 0.5),
    "cross_entropy of a matmul": lambda t, f, a, b, i, k, c: f.cross_entropy(
        a @ b, _classes(t, a)),
    "bce_with_logits of a matmul": lambda t, f, a, b, i, k, c: (
        f.binary_cross_entropy_with_logits(a @ b, (a @ b).sigmoid())),
}


@pytest.mark.parametrize("name", list(CASES))
def test_ops_take_torchs_dtypes_and_values(device: str, name: str) -> None:
    make = CASES[name]
    theirs_in = [torch.tensor(v) for v in (A, B, IMG, KER, BIAS)]
    ours_in = [pg.Tensor(v, device=device) for v in (A, B, IMG, KER, BIAS)]
    with torch.autocast("cpu", dtype=torch.float16):
        want = make(torch, TF, *theirs_in)
    kind = "cpu" if device.startswith("CPU") else device.lower()  # a region is per device type
    with pg.autocast(kind, dtype=pg.float16):
        got = make(pg, F, *ours_in)
    assert _dtype_name(got) == _dtype_name(want), name
    tol = 2e-3 if want.dtype == torch.float16 else 1e-3
    np.testing.assert_allclose(got.numpy().astype(np.float32), want.float().numpy(),
                               rtol=tol, atol=tol)


def test_outside_the_region_and_disabled_nothing_changes() -> None:
    a, b = pg.Tensor(A), pg.Tensor(B)
    assert (a @ b).dtype == pg.float32
    with pg.autocast("cpu", dtype=pg.float16):
        assert pg.is_autocast_enabled("cpu")
        with pg.autocast("cpu", enabled=False):
            assert (a @ b).dtype == pg.float32
        assert (a @ b).dtype == pg.float16
        # a region for another device type leaves CPU tensors alone
        with pg.autocast("cuda", dtype=pg.float16, enabled=False):
            assert (a @ b).dtype == pg.float16
    assert not pg.is_autocast_enabled("cpu")


def test_a_bad_dtype_is_refused() -> None:
    with pytest.raises(pg.DTypeError, match="autocast: dtype must be"):
        pg.autocast("cpu", dtype=pg.int32)
    with pytest.raises(pg.DTypeError, match="device_type"):
        pg.autocast("tpu")


def test_gradients_are_float32_and_match_torch() -> None:
    w = pg.Tensor(B, requires_grad=True)
    tw = torch.tensor(B, requires_grad=True)
    y = np.array([0, 2, 1, 1])
    with pg.autocast("cpu", dtype=pg.float16):
        loss = F.cross_entropy(pg.Tensor(A) @ w, pg.Tensor(y))
    with torch.autocast("cpu", dtype=torch.float16):
        tloss = TF.cross_entropy(torch.tensor(A) @ tw, torch.tensor(y))
    loss.backward()
    tloss.backward()
    assert w.grad is not None and tw.grad is not None
    assert w.grad.dtype == pg.float32 and loss.dtype == pg.float32
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=5e-3, atol=5e-4)


def _scaler_run(lib: Any, scaler: Any, scales: list[float]) -> tuple[list[float], Any]:
    """Six SGD steps of a linear model with a GradScaler whose first steps overflow."""
    w = lib.tensor(B.copy(), requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.05)
    x = lib.tensor(A * 1000.0)
    losses = []
    for _ in range(6):
        opt.zero_grad()
        loss = ((x @ w) ** 2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(float(scaler.get_scale()))
        losses.append(float(loss.item()))
    return losses, w


def test_grad_scaler_matches_torch() -> None:
    kwargs = {"init_scale": 2.0**120, "growth_factor": 4.0, "backoff_factor": 0.125,
              "growth_interval": 2}
    ours_scales: list[float] = []
    theirs_scales: list[float] = []
    _, w = _scaler_run(pg, pg.optim.GradScaler("cpu", **kwargs), ours_scales)
    _, tw = _scaler_run(torch, torch.amp.GradScaler("cpu", **kwargs), theirs_scales)
    assert ours_scales == theirs_scales
    assert ours_scales[0] < 2.0**120  # the first steps overflowed and were skipped
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_grad_scaler_unscale_twice_and_state_dict() -> None:
    w = pg.Tensor(B, requires_grad=True)
    opt = pg.optim.SGD([w], lr=0.1)
    scaler = pg.optim.GradScaler(init_scale=8.0)
    scaler.scale((pg.Tensor(A) @ w).sum()).backward()
    scaler.unscale_(opt)
    assert w.grad is not None
    want = (A.sum(0)[:, None] * np.ones((1, 3))).astype(np.float32)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-6)
    with pytest.raises(pg.OptimizerError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    saved = scaler.state_dict()
    torch_keys = set(torch.amp.GradScaler("cpu").state_dict())
    assert set(saved) == torch_keys
    other = pg.optim.GradScaler()
    other.load_state_dict(saved)
    assert other.get_scale() == scaler.get_scale() == 8.0
