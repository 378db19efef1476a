"""Checkpoints: training 2 steps, saving, loading into a fresh model and optimizer and
training 2 more gives bit for bit what 4 uninterrupted steps give (for each optimizer, with
a learning rate changed mid-run); plain safetensors round-trip tensors, arrays and metadata;
mismatched models, optimizers and files raise errors that list what is wrong."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F
from picograd.nn.state import (
    CheckpointError,
    load_checkpoint,
    load_safetensors,
    safetensors_metadata,
    save_checkpoint,
    save_safetensors,
)

rng = np.random.default_rng(5)
BATCHES = [(rng.standard_normal((8, 6)).astype(np.float32), rng.integers(0, 4, 8).astype(np.int32))
           for _ in range(4)]

OPTIMIZERS: dict[str, Callable[[list[pg.Tensor]], pg.optim.Optimizer]] = {
    "adam": lambda p: pg.optim.Adam(p, lr=1e-2),
    "adamw": lambda p: pg.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
    "sgd_momentum": lambda p: pg.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
}


def _model(seed: int, device: str = "CPU", out: int = 4) -> nn.Module:
    pg.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 12, device=device), nn.ReLU(),
                         nn.Linear(12, out, device=device))


def _train(model: nn.Module, opt: pg.optim.Optimizer, steps: range, device: str) -> list[float]:
    losses: list[float] = []
    for i in steps:
        if i == 1:
            opt.lr /= 2  # as a scheduler would: the checkpoint must carry the new lr
        x, y = BATCHES[i]
        loss = F.cross_entropy(model(pg.Tensor(x, device=device)), pg.Tensor(y, device=device))
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(float(loss.item()))
    return losses


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_resuming_from_a_checkpoint_is_exact(device: str, name: str, tmp_path: Path) -> None:
    make = OPTIMIZERS[name]
    model = _model(1, device)
    opt = make(model.parameters())
    uninterrupted = _train(model, opt, range(4), device)

    first = _model(1, device)
    first_opt = make(first.parameters())
    resumed = _train(first, first_opt, range(2), device)
    path = tmp_path / "run.safetensors"
    save_checkpoint(path, first, first_opt, epoch=2, best=0.5, tag="run-a")

    fresh = _model(7, device)  # other initial weights, default hyper-parameters, no state
    fresh_opt = make(fresh.parameters())
    fresh_opt.lr = 123.0
    extra = load_checkpoint(path, fresh, fresh_opt)
    assert extra == {"epoch": 2, "best": 0.5, "tag": "run-a"}
    assert fresh_opt.steps == 2 and fresh_opt.lr == first_opt.lr
    assert fresh_opt.param_groups[0].keys() == opt.param_groups[0].keys()
    resumed += _train(fresh, fresh_opt, range(2, 4), device)

    assert resumed == uninterrupted
    for (k, v), w in zip(model.state_dict().items(), fresh.state_dict().values(), strict=True):
        np.testing.assert_array_equal(w.numpy(), v.numpy(), err_msg=k)
    for p, q in zip(opt.params, fresh_opt.params, strict=True):
        for state_name, t in opt.state[id(p)].items():
            np.testing.assert_array_equal(fresh_opt.state[id(q)][state_name].numpy(), t.numpy())


def test_checkpoint_layout(tmp_path: Path) -> None:
    model = _model(1)
    opt = pg.optim.Adam(model.parameters())
    _train(model, opt, range(1), "CPU")
    save_checkpoint(tmp_path / "c.safetensors", model, opt, epoch=1)
    names = set(load_safetensors(tmp_path / "c.safetensors"))
    assert {"model.0.weight", "model.2.bias", "optim.0.exp_avg", "optim.3.exp_avg_sq"} <= names
    meta = safetensors_metadata(tmp_path / "c.safetensors")
    assert meta["optim.type"] == "Adam" and meta["optim.steps"] == "1"
    assert meta["extra.epoch"] == "1"


def test_a_model_only_checkpoint_loads_without_an_optimizer(tmp_path: Path) -> None:
    model = _model(1)
    save_checkpoint(tmp_path / "m.safetensors", model)
    fresh = _model(2)
    assert load_checkpoint(tmp_path / "m.safetensors", fresh) == {}
    np.testing.assert_array_equal(fresh.state_dict()["0.weight"].numpy(),
                                  model.state_dict()["0.weight"].numpy())
    with pytest.raises(CheckpointError, match="holds no optimizer state"):
        load_checkpoint(tmp_path / "m.safetensors", fresh, pg.optim.Adam(fresh.parameters()))


def test_safetensors_round_trip(tmp_path: Path) -> None:
    strided = np.arange(6, dtype=np.float32).reshape(2, 3).T  # saved in its logical order
    state = {"t": pg.Tensor([[1.0, 2.0]]) * 3, "a": strided, "i": np.arange(4, dtype=np.int32),
             "s": np.float32(2.5)}
    save_safetensors(state, tmp_path / "x.safetensors", metadata={"note": "hi"})
    back = load_safetensors(tmp_path / "x.safetensors")
    np.testing.assert_array_equal(back["t"], [[3.0, 6.0]])
    np.testing.assert_array_equal(back["a"], strided)
    assert back["i"].dtype == np.int32 and back["s"].shape == ()
    assert safetensors_metadata(tmp_path / "x.safetensors") == {"note": "hi"}
    assert not list(tmp_path.glob("*.tmp"))


def test_a_mismatched_model_lists_every_name(tmp_path: Path) -> None:
    model = _model(1)
    save_checkpoint(tmp_path / "c.safetensors", model)
    other = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 5), nn.Linear(5, 2))
    with pytest.raises(nn.StateDictError) as info:
        load_checkpoint(tmp_path / "c.safetensors", other)
    message = str(info.value)
    assert "missing keys: 3.weight, 3.bias" in message
    assert "2.weight: checkpoint (4, 12), model (5, 12)" in message
    assert "2.bias: checkpoint (4,), model (5,)" in message


def test_a_mismatched_optimizer_is_refused(tmp_path: Path) -> None:
    model = _model(1)
    opt = pg.optim.Adam(model.parameters())
    _train(model, opt, range(1), "CPU")
    path = tmp_path / "c.safetensors"
    save_checkpoint(path, model, opt)
    with pytest.raises(CheckpointError, match="holds Adam state, the optimizer is SGD"):
        load_checkpoint(path, _model(1), pg.optim.SGD(_model(1).parameters()))
    fewer = _model(1)
    fewer_opt = pg.optim.Adam(fewer.parameters()[:2])  # over the first layer only
    with pytest.raises(nn.StateDictError) as info:
        load_checkpoint(path, fewer, fewer_opt)
    assert "optim.2.exp_avg: no parameter 2 among 2" in str(info.value)
    assert "optim.3.exp_avg_sq" in str(info.value)
    # nothing was loaded: the model keeps its weights, the optimizer its (empty) state
    np.testing.assert_array_equal(fewer.state_dict()["0.weight"].numpy(),
                                  _model(1).state_dict()["0.weight"].numpy())
    assert fewer_opt.state == {} and fewer_opt.steps == 0


def test_bad_files_and_values_name_the_file(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\xff" * 64)
    with pytest.raises(CheckpointError, match=r"garbage\.safetensors: not a readable"):
        load_checkpoint(garbage, _model(1))
    plain = tmp_path / "plain.safetensors"
    save_safetensors(_model(1).state_dict(), plain)
    with pytest.raises(CheckpointError, match=r"plain\.safetensors: not a picograd checkpoint"):
        load_checkpoint(plain, _model(1))
    with pytest.raises(CheckpointError, match="extra value 'when'"):
        save_checkpoint(tmp_path / "c.safetensors", _model(1), when=object())
    with pytest.raises(CheckpointError, match="metadata must map str to str"):
        save_safetensors({"a": np.zeros(2)}, tmp_path / "m.safetensors",
                         metadata={"n": 1})  # pyright: ignore[reportArgumentType]
    with pytest.raises(CheckpointError, match=r"cannot save .*Unknown dtype"):
        save_safetensors({"s": np.array(["text"])}, tmp_path / "s.safetensors")
    assert not list(tmp_path.glob("*.tmp"))
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "missing.safetensors", _model(1))
