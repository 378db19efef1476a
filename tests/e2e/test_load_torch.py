"""picograd.nn.state.load_torch reads torch.save files (zip and legacy layouts) without
torch and without running the pickle's code: state dicts of a CNN and of a small
transformer-style MLP saved by torch give torch's outputs after `load_state_dict`; strided,
shared, half and bf16 storages, Parameters and nested containers come back as torch holds
them; a pickle that would run code is refused, naming the global, and runs nothing."""

from __future__ import annotations

import os
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import picograd as pg
import picograd.nn as nn
from picograd.nn.state import load_torch

LAYOUTS = {"zip": True, "legacy": False}


def _save(obj: Any, path: Path, zip_layout: bool) -> Path:
    torch.save(obj, path, _use_new_zipfile_serialization=zip_layout)
    return path


def _cnn(lib: Any) -> Any:
    n = lib.nn if lib is torch else nn
    return n.Sequential(n.Conv2d(3, 4, 3, padding=1), n.BatchNorm2d(4), n.ReLU(),
                        n.MaxPool2d(2), n.Flatten(), n.Linear(4 * 4 * 4, 5))


def _mlp(lib: Any) -> Any:
    n = lib.nn if lib is torch else nn
    return n.Sequential(n.LayerNorm(6), n.Linear(6, 12), n.GELU(), n.Linear(12, 6),
                        n.LayerNorm(6), n.Linear(6, 3))


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("arch,shape", [("cnn", (2, 3, 8, 8)), ("mlp", (4, 6))])
def test_a_torch_state_dict_gives_torchs_outputs(tmp_path: Path, layout: str, arch: str,
                                                 shape: tuple[int, ...]) -> None:
    torch.manual_seed(0)
    make = _cnn if arch == "cnn" else _mlp
    theirs = make(torch)
    if arch == "cnn":  # running statistics that are not the initial ones
        theirs.train()
        theirs(torch.randn(8, *shape[1:]))
    theirs.eval()
    path = _save(theirs.state_dict(), tmp_path / "model.pt", LAYOUTS[layout])
    state = load_torch(path)
    assert isinstance(state, OrderedDict)
    assert list(state) == list(theirs.state_dict())
    ours = make(pg)
    ours.load_state_dict(state)
    ours.eval()
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want = theirs(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours(pg.Tensor(x)).numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_storages_views_dtypes_and_containers(tmp_path: Path, layout: str) -> None:
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    obj = {
        "transposed": base.t(),                      # strides (1, 6)
        "slice": base[1:3, 2:5],                     # an offset into a shared storage
        "whole": base,
        "half": torch.tensor([1.5, -2.25, 65504.0], dtype=torch.float16),
        "bf16": torch.tensor([1.0, -3.5, 1e30, 2.0**-100], dtype=torch.bfloat16),
        "int64": torch.tensor([-(2**40), 7]),
        "int8": torch.tensor([-128, 127], dtype=torch.int8),
        "bool": torch.tensor([True, False]),
        "param": torch.nn.Parameter(torch.ones(2, 2)),
        "empty": torch.zeros(0, 3),
        "scalar": torch.tensor(3.25),
        "nested": [1, 2.5, "name", (None, True), {"epoch": 3}],
    }
    got = load_torch(_save(obj, tmp_path / "mixed.pt", LAYOUTS[layout]))
    for key in ("transposed", "slice", "whole", "half", "int64", "int8", "bool", "empty",
                "scalar"):
        want = obj[key].numpy()
        assert got[key].dtype == want.dtype and got[key].shape == want.shape, key
        np.testing.assert_array_equal(got[key], want)
    # bfloat16 stays bfloat16 (16 bits, the same bits as torch's)
    assert got["bf16"].dtype.name == "bfloat16"
    np.testing.assert_array_equal(got["bf16"].view(np.uint16),
                                  obj["bf16"].view(torch.int16).numpy().view(np.uint16))
    np.testing.assert_array_equal(got["param"], np.ones((2, 2), np.float32))
    assert got["nested"] == obj["nested"]


class _RunsCode:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_pickle_that_would_run_code_is_refused_without_running(tmp_path: Path,
                                                                 layout: str) -> None:
    marker = tmp_path / "ran"
    path = _save({"weight": torch.ones(2), "payload": _RunsCode(marker)},
                 tmp_path / "evil.pt", LAYOUTS[layout])
    with pytest.raises(pg.CheckpointError, match=r"refused the global (posix|os|nt)\.system"):
        load_torch(path)
    assert not marker.exists()


def test_other_globals_are_refused_by_name(tmp_path: Path) -> None:
    from collections import Counter

    path = _save({"counts": Counter("aab")}, tmp_path / "counter.pt", True)
    with pytest.raises(pg.CheckpointError, match=r"collections\.Counter") as info:
        load_torch(path)
    assert isinstance(info.value, ValueError)


def test_a_raw_pickle_in_a_zip_is_refused_too(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "handmade.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("handmade/data.pkl", pickle.dumps(_RunsCode(marker), protocol=2))
    with pytest.raises(pg.CheckpointError, match="system"):
        load_torch(path)
    assert not marker.exists()


def test_a_file_of_neither_layout_is_a_checkpoint_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.pt"
    path.write_bytes(b"not a checkpoint at all")
    with pytest.raises(pg.CheckpointError, match=r"junk\.pt"):
        load_torch(path)


def test_load_torch_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = ("import sys, picograd.nn.state; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_a_torch_training_checkpoint_resumes_in_picograd(tmp_path: Path) -> None:
    """model + AdamW state saved by torch, loaded by load_torch: the next steps agree."""
    torch.manual_seed(0)
    theirs = _mlp(torch)
    topt = torch.optim.AdamW(theirs.parameters(), lr=1e-2, amsgrad=True)
    x = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)
    y = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32)

    def torch_step() -> None:
        topt.zero_grad()
        ((theirs(torch.tensor(x)) - torch.tensor(y)) ** 2).mean().backward()
        topt.step()

    for _ in range(3):
        torch_step()
    path = _save({"model": theirs.state_dict(), "optim": topt.state_dict(), "epoch": 3},
                 tmp_path / "run.pt", True)
    saved = load_torch(path)
    assert saved["epoch"] == 3
    ours = _mlp(pg)
    ours.load_state_dict(saved["model"])
    opt = pg.optim.AdamW(ours.parameters(), lr=1e-2, amsgrad=True)
    opt.load_state_dict(saved["optim"])
    assert opt.steps == 3
    for _ in range(2):
        opt.zero_grad()
        ((ours(pg.Tensor(x)) - pg.Tensor(y)) ** 2).mean().backward()
        opt.step()
        torch_step()
    for name, value in ours.state_dict().items():
        np.testing.assert_allclose(value.numpy(), theirs.state_dict()[name].detach().numpy(),
                                   rtol=1e-4, atol=1e-5, err_msg=name)
