"""nn and optim: a small MLP trained side by side with its torch twin (same initial weights,
same batches) gives the same losses and weights for every optimiser; a training loop compiles
a bounded number of graphs; state dicts round-trip and report mismatches."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F

torch = pytest.importorskip("torch", reason="torch is the oracle of the nn tests")

rng = np.random.default_rng(3)
X = rng.standard_normal((16, 6)).astype(np.float32)
Y = rng.integers(0, 4, 16).astype(np.int32)


def _models(device: str):
    pg.manual_seed(1)
    ours = nn.Sequential(nn.Linear(6, 12, device=device), nn.ReLU(), nn.Linear(12, 4,
                                                                                  device=device))
    theirs = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 4))
    theirs.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in ours.state_dict().items()})
    return ours, theirs


OPTIMIZERS: dict[str, tuple[Callable, Callable]] = {
    "sgd": (lambda p: pg.optim.SGD(p, lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    "sgd_momentum_wd": (
        lambda p: pg.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=1e-2),
        lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=1e-2)),
    "sgd_nesterov": (
        lambda p: pg.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True),
        lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True)),
    "adam": (lambda p: pg.optim.Adam(p, lr=1e-2), lambda p: torch.optim.Adam(p, lr=1e-2)),
    "adam_wd": (lambda p: pg.optim.Adam(p, lr=1e-2, weight_decay=0.1),
                lambda p: torch.optim.Adam(p, lr=1e-2, weight_decay=0.1)),
    "adamw": (lambda p: pg.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
              lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1)),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_training_matches_torch(device: str, name: str) -> None:
    ours, theirs = _models(device)
    make_ours, make_theirs = OPTIMIZERS[name]
    opt, topt = make_ours(ours.parameters()), make_theirs(theirs.parameters())
    x, y = pg.Tensor(X, device=device), pg.Tensor(Y, device=device)
    tx, ty = torch.from_numpy(X), torch.from_numpy(Y).long()
    for _ in range(4):
        loss = F.cross_entropy(ours(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        tloss = torch.nn.functional.cross_entropy(theirs(tx), ty)
        topt.zero_grad()
        tloss.backward()
        topt.step()
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-5, abs=1e-6)
    for k, v in ours.state_dict().items():
        np.testing.assert_allclose(v.numpy(), theirs.state_dict()[k].numpy(), rtol=1e-4,
                                   atol=1e-5)


def test_a_training_loop_stops_compiling_after_two_steps() -> None:
    ours, _ = _models("CPU")
    opt = pg.optim.Adam(ours.parameters(), lr=1e-3)
    scheduler = pg.optim.StepLR(opt, step_size=2, gamma=0.5)
    counts = []
    for _ in range(5):
        before = pg.compile_stats().compiles
        loss = F.cross_entropy(ours(pg.Tensor(X)), pg.Tensor(Y))
        loss.backward()
        opt.step()
        opt.zero_grad()
        scheduler.step()
        loss.item()  # realized by the step: no graph of its own
        counts.append(pg.compile_stats().compiles - before)
    assert counts[2:] == [0, 0, 0], counts  # lr and bias corrections are inputs, not constants
    assert opt.lr == pytest.approx(1e-3 * 0.25)


def test_cosine_schedule() -> None:
    opt = pg.optim.SGD([pg.Tensor([1.0], requires_grad=True)], lr=1.0)
    cos = pg.optim.CosineAnnealingLR(opt, T_max=4)
    lrs = []
    for _ in range(4):
        cos.step()
        lrs.append(opt.lr)
    np.testing.assert_allclose(lrs, [0.8535534, 0.5, 0.1464466, 0.0], atol=1e-6)


def test_state_dict_round_trip_and_mismatches() -> None:
    a, _ = _models("CPU")
    b, _ = _models("CPU")
    for p in b.parameters():
        p._node = (p * 0)._node  # a different model
    b.load_state_dict(a.state_dict())
    for k, v in a.state_dict().items():
        np.testing.assert_array_equal(b.state_dict()[k].numpy(), v.numpy())
    bad = {**{k: v.numpy() for k, v in a.state_dict().items()}, "extra.weight": np.zeros(3)}
    del bad["0.bias"]
    bad["2.weight"] = np.zeros((5, 12), np.float32)
    with pytest.raises(nn.StateDictError) as e:
        b.load_state_dict(bad)
    message = str(e.value)
    assert "missing keys: 0.bias" in message and "unexpected keys: extra.weight" in message
    assert "2.weight: checkpoint (5, 12), model (4, 12)" in message
    del bad["2.weight"]
    missing, unexpected = b.load_state_dict(bad, strict=False)
    assert (missing, unexpected) == (["0.bias", "2.weight"], ["extra.weight"])


def test_modules_list_parameters_and_switch_modes() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.ReLU(), nn.Linear(4, 2,
                                                                                 bias=False))
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "3.weight"]
    model.eval()
    assert not model[1].training
    x = pg.Tensor(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(model(x).numpy(), model(x).numpy())  # no dropout in eval
    assert "Linear(in_features=3, out_features=4, bias=True)" in repr(model)


LOGITS = rng.standard_normal((6, 5)).astype(np.float32)
CLASSES = np.array([0, 4, 2, 2, 1, 3], np.int32)
PROBS = rng.uniform(0.05, 0.95, (4, 3)).astype(np.float32)
BINARY = rng.integers(0, 2, (4, 3)).astype(np.float32)

LOSSES: dict[str, tuple[Callable, Callable, np.ndarray, np.ndarray]] = {
    "cross_entropy": (F.cross_entropy, torch.nn.functional.cross_entropy, LOGITS, CLASSES),
    "cross_entropy_smoothing_ignore": (
        lambda x, y: F.cross_entropy(x, y, ignore_index=2, label_smoothing=0.1),
        lambda x, y: torch.nn.functional.cross_entropy(x, y, ignore_index=2,
                                                       label_smoothing=0.1), LOGITS, CLASSES),
    "cross_entropy_sum": (lambda x, y: F.cross_entropy(x, y, reduction="sum"),
                          lambda x, y: torch.nn.functional.cross_entropy(x, y, reduction="sum"),
                          LOGITS, CLASSES),
    "nll_loss_none": (lambda x, y: F.nll_loss(F.log_softmax(x, 1), y, reduction="none"),
                      lambda x, y: torch.nn.functional.nll_loss(x.log_softmax(1), y,
                                                                reduction="none"),
                      LOGITS, CLASSES),
    "binary_cross_entropy": (F.binary_cross_entropy, torch.nn.functional.binary_cross_entropy,
                             PROBS, BINARY),
    "binary_cross_entropy_with_logits": (
        F.binary_cross_entropy_with_logits,
        torch.nn.functional.binary_cross_entropy_with_logits, LOGITS[:4, :3] * 4, BINARY),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_losses_match_torch(device: str, name: str) -> None:
    ours_fn, theirs_fn, x, y = LOSSES[name]
    ours = pg.Tensor(x, device=device, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    ty = torch.from_numpy(y).long() if y.dtype == np.int32 else torch.from_numpy(y)
    loss, ref = ours_fn(ours, pg.Tensor(y, device=device)), theirs_fn(theirs, ty)
    loss.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(loss.numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_loss_errors_name_the_shapes() -> None:
    with pytest.raises(pg.ShapeError, match=r"cross_entropy: .*\(6, 5\) and \(5,\)"):
        F.cross_entropy(pg.Tensor(LOGITS), pg.Tensor(CLASSES[:5]))
    with pytest.raises(pg.ShapeError, match="reduction must be one of"):
        F.cross_entropy(pg.Tensor(LOGITS), pg.Tensor(CLASSES), reduction="avg")
