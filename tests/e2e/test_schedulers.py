"""Every lr scheduler against torch's: two parameter groups, the same constructor arguments,
the sequence of `get_last_lr()` (and of the momentum OneCycleLR and CyclicLR cycle) over
enough epochs to pass each milestone, restart and phase; state_dict round trips."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import picograd as pg

Make = Callable[[Any, Any], Any]  # (lr_scheduler module, optimizer) -> scheduler


def _seq(lib: Any, opt: Any, scheds: list[Any]) -> list[Any]:
    return [lib.SequentialLR(opt, scheds, milestones=[3])]


SCHEDULERS: dict[str, Make] = {
    "step": lambda L, o: L.StepLR(o, step_size=3, gamma=0.5),
    "multistep": lambda L, o: L.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3),
    "exponential": lambda L, o: L.ExponentialLR(o, gamma=0.8),
    "linear": lambda L, o: L.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=6),
    "constant": lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=4),
    "lambda": lambda L, o: L.LambdaLR(o, lr_lambda=[lambda e: 1 / (e + 1), lambda e: 0.9**e]),
    "multiplicative": lambda L, o: L.MultiplicativeLR(o, lr_lambda=lambda e: 0.95),
    "cosine": lambda L, o: L.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
    "warm-restarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                 eta_min=0.001),
    "one-cycle": lambda L, o: L.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=14),
    "one-cycle-3-phase-linear": lambda L, o: L.OneCycleLR(
        o, max_lr=1.0, total_steps=14, three_phase=True, anneal_strategy="linear"),
    "cyclic": lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                      step_size_down=2),
    "cyclic-triangular2": lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1,
                                                  step_size_up=2, mode="triangular2"),
    "cyclic-exp-range": lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2,
                                                mode="exp_range", gamma=0.9),
    "polynomial": lambda L, o: L.PolynomialLR(o, total_iters=6, power=2.0),
    "sequential": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, start_factor=0.1, total_iters=3), L.ExponentialLR(o, gamma=0.7)],
        milestones=[3]),
    "sequential-cosine": lambda L, o: L.SequentialLR(
        o, [L.ConstantLR(o, factor=0.2, total_iters=2), L.CosineAnnealingLR(o, T_max=6)],
        milestones=[4]),
    "chained": lambda L, o: L.ChainedScheduler(
        [L.ExponentialLR(o, gamma=0.9), L.StepLR(o, step_size=3, gamma=0.5)]),
}
EPOCHS = 13


def _optimizers() -> tuple[pg.optim.SGD, torch.optim.SGD]:
    ours = pg.optim.SGD([{"params": [pg.zeros(2)]}, {"params": [pg.zeros(3)], "lr": 0.05}],
                        lr=0.1, momentum=0.9)
    theirs = torch.optim.SGD([{"params": [torch.zeros(2, requires_grad=True)]},
                              {"params": [torch.zeros(3, requires_grad=True)], "lr": 0.05}],
                             lr=0.1, momentum=0.9)
    return ours, theirs


def _trace(sched: Any, opt: Any) -> tuple[list[list[float]], list[list[float]]]:
    lrs, momenta = [sched.get_last_lr()], [[g["momentum"] for g in opt.param_groups]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "scheduler.step() before optimizer.step()"
        for _ in range(EPOCHS):
            sched.step()
            lrs.append(sched.get_last_lr())
            momenta.append([g["momentum"] for g in opt.param_groups])
    return lrs, momenta


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_lrs_match_torch(name: str) -> None:
    ours, theirs = _optimizers()
    got = _trace(SCHEDULERS[name](pg.optim.lr_scheduler, ours), ours)
    want = _trace(SCHEDULERS[name](torch.optim.lr_scheduler, theirs), theirs)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-15)
    assert [g["lr"] for g in ours.param_groups] == pytest.approx(want[0][-1], rel=1e-12)


def test_reduce_on_plateau_matches_torch() -> None:
    metrics = [1.0, 0.9, 0.9, 0.9, 0.95, 0.91, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.1, 0.1]
    for kwargs in ({"factor": 0.5, "patience": 1, "cooldown": 2, "min_lr": [0.0, 0.02]},
                   {"mode": "max", "threshold_mode": "abs", "threshold": 0.05, "patience": 0}):
        ours, theirs = _optimizers()
        sched = pg.optim.lr_scheduler.ReduceLROnPlateau(ours, **kwargs)
        tsched = torch.optim.lr_scheduler.ReduceLROnPlateau(theirs, **kwargs)
        for m in metrics:
            sched.step(m)
            tsched.step(m)
            assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12)
            assert sched.num_bad_epochs == tsched.num_bad_epochs


def test_state_dict_round_trip_resumes_the_sequence() -> None:
    ours, _ = _optimizers()
    sched = pg.optim.lr_scheduler.CosineAnnealingWarmRestarts(ours, T_0=3, T_mult=2)
    for _ in range(4):
        sched.step()
    saved = sched.state_dict()
    assert "optimizer" not in saved and saved["last_epoch"] == 4
    expected = []
    for _ in range(5):
        sched.step()
        expected.append(sched.get_last_lr())
    other, _ = _optimizers()
    resumed = pg.optim.lr_scheduler.CosineAnnealingWarmRestarts(other, T_0=3, T_mult=2)
    resumed.load_state_dict(saved)
    got = []
    for _ in range(5):
        resumed.step()
        got.append(resumed.get_last_lr())
    assert got == expected


def test_bad_arguments_are_refused_as_torch_refuses() -> None:
    ours, theirs = _optimizers()
    for make in (lambda L, o: L.ReduceLROnPlateau(o, factor=1.5),
                 lambda L, o: L.LinearLR(o, start_factor=0.0),
                 lambda L, o: L.OneCycleLR(o, max_lr=1.0),
                 lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=0)):
        with pytest.raises(ValueError):
            make(torch.optim.lr_scheduler, theirs)
        with pytest.raises(pg.OptimizerError):
            make(pg.optim.lr_scheduler, ours)


def test_one_cycle_past_its_total_steps_is_refused() -> None:
    ours, _ = _optimizers()
    sched = pg.optim.lr_scheduler.OneCycleLR(ours, max_lr=1.0, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(pg.OptimizerError, match="total_steps"):
        sched.step()


def test_cosine_reaches_eta_min_at_t_max() -> None:
    ours, _ = _optimizers()
    sched = pg.optim.lr_scheduler.CosineAnnealingLR(ours, T_max=4, eta_min=0.001)
    for _ in range(4):
        sched.step()
    assert math.isclose(sched.get_last_lr()[0], 0.001, rel_tol=1e-12)
