"""nn.utils.clip_grad_norm_ / clip_grad_value_ / parameters_to_vector against torch's: the
returned norm and the clipped gradients for several norm types, gradients below the limit
left alone, the typed error for a non-finite norm, and clipping inside a training step that
still compiles once."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import picograd as pg

RNG = np.random.default_rng(3)
GRADS = [RNG.standard_normal((3, 4)).astype(np.float32) * 2,
         RNG.standard_normal(5).astype(np.float32)]


def _params(device: str, grads: list[np.ndarray]) -> tuple[list[pg.Tensor], list[torch.Tensor]]:
    ours, theirs = [], []
    for g in grads:
        p = pg.Tensor(np.zeros_like(g), requires_grad=True, device=device)
        p.grad = pg.Tensor(g, device=device)
        q = torch.zeros(g.shape, requires_grad=True)
        q.grad = torch.tensor(g)
        ours.append(p)
        theirs.append(q)
    return ours, theirs


@pytest.mark.parametrize("norm_type,max_norm", [(2.0, 1.0), (1.0, 3.0), (3.0, 0.5),
                                                (float("inf"), 0.7), (2.0, 1e3)])
def test_clip_grad_norm_matches_torch(device: str, norm_type: float, max_norm: float) -> None:
    ours, theirs = _params(device, GRADS)
    total = pg.nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    want = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert total.item() == pytest.approx(want.item(), rel=1e-5)
    for p, q in zip(ours, theirs, strict=True):
        assert p.grad is not None and q.grad is not None
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_a_nonfinite_norm_raises_when_asked() -> None:
    grads = [GRADS[0].copy(), GRADS[1]]
    grads[0][1, 2] = np.nan
    ours, theirs = _params("CPU", grads)
    with pytest.raises(RuntimeError):
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    with pytest.raises(pg.NonFiniteNormError, match="nan") as info:
        pg.nn.utils.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    assert isinstance(info.value, RuntimeError)
    assert "test_clip_grad.py" in str(info.value)
    # without the check, both clip into NaNs alike
    total = pg.nn.utils.clip_grad_norm_(ours, 1.0)
    assert np.isnan(total.item())


def test_no_gradients_give_a_zero_norm() -> None:
    p = pg.Tensor(np.zeros(3, np.float32), requires_grad=True)
    assert pg.nn.utils.clip_grad_norm_([p], 1.0).item() == 0.0
    assert torch.nn.utils.clip_grad_norm_([torch.zeros(3, requires_grad=True)], 1.0).item() == 0


def test_clip_grad_value_matches_torch(device: str) -> None:
    ours, theirs = _params(device, GRADS)
    pg.nn.utils.clip_grad_value_(ours, 0.8)
    torch.nn.utils.clip_grad_value_(theirs, 0.8)
    for p, q in zip(ours, theirs, strict=True):
        assert p.grad is not None and q.grad is not None
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_parameters_to_vector_and_back() -> None:
    ours, theirs = _params("CPU", GRADS)
    vec = pg.nn.utils.parameters_to_vector(ours) + 1.5
    tvec = torch.nn.utils.parameters_to_vector(theirs) + 1.5
    np.testing.assert_array_equal(vec.numpy(), tvec.detach().numpy())
    pg.nn.utils.vector_to_parameters(vec * 2, ours)
    torch.nn.utils.vector_to_parameters(tvec * 2, theirs)
    for p, q in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(p.numpy(), q.detach().numpy())


def test_clipping_in_a_training_step_matches_torch_and_compiles_once() -> None:
    w0 = RNG.standard_normal((4, 3)).astype(np.float32)
    x = RNG.standard_normal((5, 4)).astype(np.float32) * 3
    w = pg.Tensor(w0, requires_grad=True)
    tw = torch.tensor(w0, requires_grad=True)
    opt, topt = pg.optim.SGD([w], lr=0.1), torch.optim.SGD([tw], lr=0.1)
    compiles = []
    for _ in range(4):
        ((pg.Tensor(x) @ w) ** 2).sum().backward()
        pg.nn.utils.clip_grad_norm_([w], 1.0)
        opt.step()
        opt.zero_grad()
        compiles.append(pg.compile_stats().compiles)
        ((torch.tensor(x) @ tw) ** 2).sum().backward()
        torch.nn.utils.clip_grad_norm_([tw], 1.0)
        topt.step()
        topt.zero_grad()
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert compiles[2:] == [compiles[1]] * 2, compiles
