"""Every optimiser against torch's: the same parameters, the same loss, several steps; also
parameter groups, `maximize`, the implementation flags torch takes (foreach, fused, ...),
state dicts in torch's layout (torch's own loaded into picograd and on from there) and that a
training loop whose lr changes every step compiles its step once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import picograd as pg
from picograd.nn.state import load_checkpoint, save_checkpoint

RNG = np.random.default_rng(7)
W0 = RNG.standard_normal((3, 4)).astype(np.float32)
B0 = RNG.standard_normal(3).astype(np.float32)
X = RNG.standard_normal((4, 2)).astype(np.float32)

# name -> (class name, keyword arguments): the same for torch.optim and picograd.optim
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "sgd-maximize": ("SGD", {"lr": 0.1, "momentum": 0.9, "maximize": True}),
    "adam-amsgrad": ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    "adamw-amsgrad": ("AdamW", {"lr": 0.05, "amsgrad": True}),
    "adam-flags": ("Adam", {"lr": 0.05, "foreach": False, "capturable": False,
                            "differentiable": False, "fused": None}),
    "rmsprop": ("RMSprop", {"lr": 0.01}),
    "rmsprop-centered-momentum": ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9,
                                              "weight_decay": 0.1}),
    "adagrad": ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1,
                            "weight_decay": 0.05}),
    "adadelta": ("Adadelta", {"lr": 1.0, "rho": 0.8, "weight_decay": 0.1}),
    "adamax": ("Adamax", {"lr": 0.02, "weight_decay": 0.1}),
    "nadam": ("NAdam", {"lr": 0.02, "weight_decay": 0.1}),
    "nadam-decoupled": ("NAdam", {"lr": 0.02, "weight_decay": 0.1,
                                  "decoupled_weight_decay": True}),
    "radam": ("RAdam", {"lr": 0.02, "weight_decay": 0.1}),
    "radam-decoupled": ("RAdam", {"lr": 0.02, "weight_decay": 0.1,
                                  "decoupled_weight_decay": True}),
}
STEPS = 7  # RAdam turns from its plain to its rectified update at step 6


def _loss(lib: Any, w: Any, b: Any, x: Any) -> Any:
    return (((w @ x + b.reshape(3, 1)).tanh() - 0.5) ** 2).sum()


def _pair(device: str) -> tuple[list[pg.Tensor], list[torch.Tensor]]:
    ours = [pg.Tensor(W0, requires_grad=True, device=device),
            pg.Tensor(B0, requires_grad=True, device=device)]
    theirs = [torch.tensor(W0, requires_grad=True), torch.tensor(B0, requires_grad=True)]
    return ours, theirs


def _run(opt: Any, params: list[Any], lib: Any, x: Any, steps: int,
         after: Callable[[], None] = lambda: None) -> list[float]:
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = _loss(lib, params[0], params[1], x)
        loss.backward()
        opt.step()
        after()
        losses.append(float(loss.item()))
    return losses


def _assert_params_match(ours: list[pg.Tensor], theirs: list[torch.Tensor]) -> None:
    for p, q in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_steps_match_torch(name: str) -> None:
    kind, kwargs = CONFIGS[name]
    ours, theirs = _pair("CPU")
    got = _run(getattr(pg.optim, kind)(ours, **kwargs), ours, pg, pg.Tensor(X), STEPS)
    want = _run(getattr(torch.optim, kind)(theirs, **kwargs), theirs, torch,
                torch.tensor(X), STEPS)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    _assert_params_match(ours, theirs)


@pytest.mark.parametrize("kind", ["RMSprop", "NAdam", "RAdam"])
def test_on_every_device(device: str, kind: str) -> None:
    ours, theirs = _pair(device)
    kwargs = {"lr": 0.02, "weight_decay": 0.1}
    _run(getattr(pg.optim, kind)(ours, **kwargs), ours, pg, pg.Tensor(X, device=device), STEPS)
    _run(getattr(torch.optim, kind)(theirs, **kwargs), theirs, torch, torch.tensor(X), STEPS)
    _assert_params_match(ours, theirs)


def _lamb_reference(steps: int, lr: float, wd: float) -> tuple[np.ndarray, np.ndarray]:
    """LAMB by the paper's formula, with torch computing the gradients (in float64)."""
    params = [torch.tensor(W0.astype(np.float64), requires_grad=True),
              torch.tensor(B0.astype(np.float64), requires_grad=True)]
    x = torch.tensor(X.astype(np.float64))
    b1, b2, eps = 0.9, 0.999, 1e-6
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    for t in range(1, steps + 1):
        for p in params:
            p.grad = None
        _loss(torch, params[0], params[1], x).backward()
        with torch.no_grad():
            for i, p in enumerate(params):
                g = p.grad
                assert g is not None
                m[i] = b1 * m[i] + (1 - b1) * g
                v[i] = b2 * v[i] + (1 - b2) * g * g
                r = (m[i] / (1 - b1**t)) / ((v[i] / (1 - b2**t)).sqrt() + eps) + wd * p
                p_norm, r_norm = p.norm(), r.norm()
                trust = p_norm / r_norm if p_norm > 0 and r_norm > 0 else 1.0
                p -= lr * trust * r
    return params[0].detach().numpy(), params[1].detach().numpy()


def test_lamb_matches_the_papers_formula() -> None:
    ours, _ = _pair("CPU")
    _run(pg.optim.LAMB(ours, lr=0.05, weight_decay=0.01), ours, pg, pg.Tensor(X), 5)
    want = _lamb_reference(5, 0.05, 0.01)
    for p, q in zip(ours, want, strict=True):
        np.testing.assert_allclose(p.numpy(), q, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["Adam", "NAdam"])
def test_param_groups_have_their_own_hyper_parameters(kind: str) -> None:
    ours, theirs = _pair("CPU")
    second = {"lr": 0.2, "betas": (0.6, 0.99)}
    opt = getattr(pg.optim, kind)([{"params": [ours[0]]}, {"params": [ours[1]], **second}],
                                  lr=0.05)
    topt = getattr(torch.optim, kind)([{"params": [theirs[0]]},
                                       {"params": [theirs[1]], **second}], lr=0.05)
    assert [g["lr"] for g in opt.param_groups] == [0.05, 0.2]
    _run(opt, ours, pg, pg.Tensor(X), 4)
    _run(topt, theirs, torch, torch.tensor(X), 4)
    _assert_params_match(ours, theirs)


def test_a_parameter_in_two_groups_is_refused() -> None:
    p = pg.zeros(2)
    with pytest.raises(pg.OptimizerError, match="more than one parameter group"):
        pg.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


@pytest.mark.parametrize("kind,kwargs", [("Adam", {"lr": 0.05, "amsgrad": True}),
                                         ("SGD", {"lr": 0.05, "momentum": 0.9}),
                                         ("NAdam", {"lr": 0.05}),
                                         ("RMSprop", {"lr": 0.01, "centered": True})])
def test_torch_state_dict_loads_and_training_goes_on_alike(kind: str,
                                                           kwargs: dict[str, Any]) -> None:
    ours, theirs = _pair("CPU")
    topt = getattr(torch.optim, kind)(theirs, **kwargs)
    _run(topt, theirs, torch, torch.tensor(X), 3)
    for p, q in zip(ours, theirs, strict=True):
        p.assign(pg.Tensor(q.detach().numpy()))
    opt = getattr(pg.optim, kind)(ours, **kwargs)
    opt.load_state_dict(topt.state_dict())
    assert opt.steps == (0 if kind == "SGD" else 3)
    _run(opt, ours, pg, pg.Tensor(X), 3)
    _run(topt, theirs, torch, torch.tensor(X), 3)
    _assert_params_match(ours, theirs)
    # and picograd's state dict has torch's layout: torch takes it back
    saved = opt.state_dict()
    assert saved["param_groups"][0]["params"] == [0, 1]
    assert set(saved["state"][0]) == set(topt.state_dict()["state"][0])
    as_torch = {"state": {i: {k: torch.tensor(v.numpy()) for k, v in s.items()}
                          for i, s in saved["state"].items()},
                "param_groups": saved["param_groups"]}
    fresh = getattr(torch.optim, kind)(theirs, **kwargs)
    fresh.load_state_dict(as_torch)
    for k, v in fresh.state_dict()["state"][1].items():
        np.testing.assert_allclose(np.asarray(v), saved["state"][1][k].numpy(), rtol=1e-6)


def test_a_mismatched_state_dict_is_refused() -> None:
    ours, _ = _pair("CPU")
    opt = pg.optim.Adam(ours)
    with pytest.raises(pg.CheckpointError, match="parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="does not match"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0], "lr": 0.1}]})


def test_a_changing_lr_and_momentum_do_not_recompile_the_step() -> None:
    ours, theirs = _pair("CPU")
    opt = pg.optim.SGD(ours, lr=0.1, momentum=0.9)
    sched = pg.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=8)
    topt = torch.optim.SGD(theirs, lr=0.1, momentum=0.9)
    tsched = torch.optim.lr_scheduler.OneCycleLR(topt, max_lr=0.5, total_steps=8)
    counts = []

    def counted_step() -> None:
        sched.step()
        counts.append(pg.compile_stats().compiles)

    _run(opt, ours, pg, pg.Tensor(X), 6, counted_step)
    _run(topt, theirs, torch, torch.tensor(X), 6, tsched.step)
    assert counts[2:] == [counts[1]] * 4, counts
    _assert_params_match(ours, theirs)


class _Pair(pg.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = pg.Tensor(W0, requires_grad=True)
        self.b = pg.Tensor(B0, requires_grad=True)


@pytest.mark.parametrize("kind", ["NAdam", "RAdam", "RMSprop", "Adagrad"])
def test_a_checkpoint_resumes_exactly(tmp_path: Any, kind: str) -> None:
    x = pg.Tensor(X)
    straight = _Pair()
    opt = getattr(pg.optim, kind)(straight.parameters(), lr=0.02)
    _run(opt, [straight.w, straight.b], pg, x, 6)
    first = _Pair()
    opt1 = getattr(pg.optim, kind)(first.parameters(), lr=0.02)
    _run(opt1, [first.w, first.b], pg, x, 3)
    save_checkpoint(tmp_path / "run.safetensors", first, opt1)
    resumed = _Pair()
    opt2 = getattr(pg.optim, kind)(resumed.parameters(), lr=0.02)
    load_checkpoint(tmp_path / "run.safetensors", resumed, opt2)
    _run(opt2, [resumed.w, resumed.b], pg, x, 3)
    np.testing.assert_array_equal(resumed.w.numpy(), straight.w.numpy())
    np.testing.assert_array_equal(resumed.b.numpy(), straight.b.numpy())


def test_a_checkpoint_keeps_every_parameter_groups_hyper_parameters(tmp_path: Any) -> None:
    model = _Pair()
    opt = pg.optim.Adam([{"params": [model.w]}, {"params": [model.b], "lr": 0.3,
                                                 "betas": (0.5, 0.9)}], lr=0.01)
    _run(opt, [model.w, model.b], pg, pg.Tensor(X), 2)
    save_checkpoint(tmp_path / "groups.safetensors", model, opt)
    fresh = _Pair()
    other = pg.optim.Adam([{"params": [fresh.w]}, {"params": [fresh.b]}], lr=0.5)
    load_checkpoint(tmp_path / "groups.safetensors", fresh, other)
    assert [g["lr"] for g in other.param_groups] == [0.01, 0.3]
    assert other.param_groups[1]["betas"] == (0.5, 0.9)
    one_group = pg.optim.Adam(_Pair().parameters(), lr=0.5)
    with pytest.raises(pg.CheckpointError, match="besides the first"):
        load_checkpoint(tmp_path / "groups.safetensors", _Pair(), one_group)
