"""Checkpoints and cache entries that are not what they should be (issue 11).

`load_checkpoint` checks the whole file before it changes anything: a malformed or
out-of-range hyper-parameter, step count, state tensor or extra value is a typed error that
names the file, the entry and what is wrong, and the model and optimizer are exactly as they
were. A FIFO, a directory, a socket or a symbolic link loop where a file is expected is an
error at once (never a wait on the FIFO) and leaks no descriptor; in the disk cache it is a
miss and the entry is rebuilt. BF16 tensors load as bfloat16 (not widened) and F8 as
float32, bit for bit torch's `.float()`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import save_file

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F
from picograd import disk_store
from picograd.errors import PicogradError
from picograd.nn.state import (
    FORMAT,
    CheckpointError,
    load_checkpoint,
    load_safetensors,
    safetensors_metadata,
    save_checkpoint,
)

torch = pytest.importorskip("torch", reason="torch is the oracle of the BF16 and F8 reads")

HERE = os.path.basename(__file__)
ROOT = Path(__file__).resolve().parents[2]  # child processes import this checkout's picograd
X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
Y = np.array([0, 1], np.int32)
OPTIMIZERS: dict[str, Callable[[list[pg.Tensor]], pg.optim.Optimizer]] = {
    "adam": lambda p: pg.optim.Adam(p, lr=1e-2),
    "sgd": lambda p: pg.optim.SGD(p, lr=0.1, momentum=0.9),
}


def _trained(seed: int, kind: str) -> tuple[nn.Module, pg.optim.Optimizer]:
    """A small model and its optimizer after one step (so both hold state)."""
    pg.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = OPTIMIZERS[kind](model.parameters())
    F.cross_entropy(model(pg.Tensor(X * seed)), pg.Tensor(Y)).backward()
    opt.step()
    opt.zero_grad()
    return model, opt


def _snapshot(model: nn.Module, opt: pg.optim.Optimizer) -> dict[str, Any]:
    """Every value a load could change: parameters, state (names and values), hparams, steps."""
    values = {f"model.{k}": v.numpy().copy() for k, v in model.state_dict().items()}
    for i, p in enumerate(opt.params):
        values |= {f"optim.{i}.{n}": t.numpy().copy() for n, t in opt.state[id(p)].items()}
    group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    return {"values": values, "group": group, "steps": opt.steps}


def _assert_unchanged(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert after["group"] == before["group"] and after["steps"] == before["steps"]
    assert after["values"].keys() == before["values"].keys()
    for name, value in before["values"].items():
        got = after["values"][name]
        assert got.dtype == value.dtype, name
        np.testing.assert_array_equal(got, value, err_msg=name)


Edit = Callable[[dict[str, np.ndarray], dict[str, str]], None]
_DROP = object()


def _hparams(**changes: object) -> Edit:
    """Change (or, with _DROP, remove) some of the saved hyper-parameters."""
    def edit(arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
        hparams = json.loads(metadata["optim.hparams"]) | changes
        metadata["optim.hparams"] = json.dumps({k: v for k, v in hparams.items()
                                                if v is not _DROP})
    return edit


def _meta(key: str, value: str | None) -> Edit:
    """Set (or, with None, remove) a metadata value."""
    def edit(arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
        metadata.pop(key)
        if value is not None:
            metadata[key] = value
    return edit


def _array(key: str, make: Callable[[dict[str, np.ndarray]], np.ndarray] | None) -> Edit:
    """Set tensor `key` to `make(arrays)` (or, with None, remove it)."""
    def edit(arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
        if make is None:
            del arrays[key]
        else:
            arrays[key] = make(arrays)
    return edit


# id: (optimizer, edit, error, what the message says besides the file name)
CASES: dict[str, tuple[str, Edit, type[Exception], str]] = {
    "hparams-not-json": ("adam", _meta("optim.hparams", "{lr: 1"), CheckpointError,
                         r"optim\.hparams is not JSON"),
    "hparams-missing": ("adam", _meta("optim.hparams", None), CheckpointError,
                        "optim.hparams: expected a JSON object of hyper-parameters, got None"),
    "hparams-not-an-object": ("adam", _meta("optim.hparams", "[0.1]"), CheckpointError,
                              r"expected a JSON object of hyper-parameters, got \[0\.1\]"),
    "hparams-a-name-missing": ("adam", _hparams(eps=_DROP), CheckpointError,
                               "optim.hparams: missing 'eps'"),
    "hparams-an-unknown-name": ("adam", _hparams(momentum=0.9), CheckpointError,
                                "optim.hparams: unknown hyper-parameter 'momentum'"),
    "lr-a-string": ("adam", _hparams(lr="0.1"), CheckpointError,
                    "lr is '0.1', expected a finite number >= 0"),
    "lr-negative": ("sgd", _hparams(lr=-0.1), CheckpointError, "lr is -0.1"),
    "lr-nan": ("adam", _hparams(lr=float("nan")), CheckpointError, "lr is nan"),
    "lr-a-bool": ("sgd", _hparams(lr=True), CheckpointError, "lr is True"),
    "betas-one-value": ("adam", _hparams(betas=[0.9]), CheckpointError,
                        r"betas is \[0\.9\], expected a pair of numbers in \[0, 1\)"),
    "betas-out-of-range": ("adam", _hparams(betas=[0.9, 1.0]), CheckpointError,
                           r"betas is \[0\.9, 1\.0\]"),
    "eps-negative": ("adam", _hparams(eps=-1e-8), CheckpointError, "eps is -1e-08"),
    "weight-decay-a-list": ("adam", _hparams(weight_decay=[0]), CheckpointError,
                            r"weight_decay is \[0\]"),
    "nesterov-a-string": ("sgd", _hparams(nesterov="yes"), CheckpointError,
                          "nesterov is 'yes', expected true or false"),
    "nesterov-without-momentum": ("sgd", _hparams(nesterov=True, momentum=0.0),
                                  CheckpointError, "nesterov needs a momentum > 0"),
    "steps-not-a-number": ("adam", _meta("optim.steps", "many"), CheckpointError,
                           "optim.steps is 'many', expected a count of steps"),
    "steps-negative": ("adam", _meta("optim.steps", "-3"), CheckpointError,
                       "optim.steps is '-3'"),
    "steps-a-float": ("sgd", _meta("optim.steps", "2.0"), CheckpointError,
                      "optim.steps is '2.0'"),
    "steps-missing": ("adam", _meta("optim.steps", None), CheckpointError, "optim.steps is ''"),
    "extra-not-json": ("adam", _meta("extra.epoch", "{oops"), CheckpointError,
                       r"extra\.epoch is not JSON"),
    "exp-avg-int32": ("adam", _array("optim.0.exp_avg",
                                     lambda a: a["optim.0.exp_avg"].astype(np.int32)),
                      CheckpointError,
                      "optim.0.exp_avg: dtype int32 cannot be loaded into a float32 tensor"),
    "momentum-buffer-bool": ("sgd", _array("optim.1.momentum_buffer",
                                           lambda a: np.ones(4, bool)),
                             CheckpointError, "optim.1.momentum_buffer: dtype bool"),
    "weight-int32": ("adam", _array("model.0.weight",
                                    lambda a: a["model.0.weight"].astype(np.int32)),
                     CheckpointError, "model.0.weight: dtype int32 cannot be loaded"),
    "unknown-state-name": ("adam", _array("optim.0.exp_avg_max",
                                          lambda a: a["optim.0.exp_avg"]),
                           nn.StateDictError,
                           "optim.0.exp_avg_max: unknown state 'exp_avg_max' "
                           r"\(Adam keeps exp_avg, exp_avg_sq\)"),
    "state-for-sgd-without-that-name": ("sgd", _array("optim.0.exp_avg",
                                                      lambda a: a["optim.0.momentum_buffer"]),
                                        nn.StateDictError, "unknown state 'exp_avg'"),
    "incomplete-state": ("adam", _array("optim.1.exp_avg_sq", None), nn.StateDictError,
                         "optim.1: missing state exp_avg_sq"),
    "an-entry-of-neither": ("adam", _array("junk.0", lambda a: np.zeros(1)), CheckpointError,
                            r"neither model\.\* nor optim\.\*: junk\.0"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_checkpoint_changes_nothing(case: str, tmp_path: Path) -> None:
    kind, edit, error, words = CASES[case]
    path = tmp_path / f"{case}.safetensors"
    save_checkpoint(path, *_trained(1, kind), epoch=3)
    arrays = {k: np.array(v) for k, v in load_safetensors(path).items()}
    metadata = safetensors_metadata(path)
    edit(arrays, metadata)
    save_file(arrays, str(path), metadata=metadata)

    model, opt = _trained(2, kind)  # other weights, state and steps than the file's
    opt.lr = 0.5
    before = _snapshot(model, opt)
    with pytest.raises(error, match=words) as info:
        load_checkpoint(path, model, opt)
    assert isinstance(info.value, PicogradError)
    message = str(info.value)
    assert str(path) in message and f"{HERE}:" in message  # the file and the user's line
    _assert_unchanged(before, _snapshot(model, opt))


def test_the_rules_cover_every_hyper_parameter() -> None:
    for make in (pg.optim.SGD, pg.optim.Adam, pg.optim.AdamW):
        opt = make(_trained(1, "adam")[0].parameters())
        group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
        assert opt.hparam_rules.keys() == group.keys(), make.__name__
        assert opt.hparam_problems(json.loads(json.dumps(group))) == [], make.__name__


def test_widening_dtypes_load(tmp_path: Path) -> None:
    """A float64 state and an int64 count that fits load (cast), as torch's `copy_` does;
    an int64 count that does not fit int32 is refused, not wrapped."""
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    opt = pg.optim.Adam(model.parameters())
    F.cross_entropy(model(pg.Tensor(X)), pg.Tensor(Y)).backward()
    opt.step()
    path = tmp_path / "c.safetensors"
    save_checkpoint(path, model, opt)
    arrays = {k: np.array(v) for k, v in load_safetensors(path).items()}
    metadata = safetensors_metadata(path)
    arrays["optim.0.exp_avg"] = arrays["optim.0.exp_avg"].astype(np.float64)
    arrays["model.1.num_batches_tracked"] = np.array(2**40, np.int64)
    save_file(arrays, str(path), metadata=metadata)
    with pytest.raises(CheckpointError, match=r"model\.1\.num_batches_tracked: values in "
                                              r"\[1099511627776, 1099511627776\] do not fit "
                                              "int32"):
        load_checkpoint(path, model, opt)
    arrays["model.1.num_batches_tracked"] = np.array(5, np.int64)
    save_file(arrays, str(path), metadata=metadata)
    load_checkpoint(path, model, opt)
    assert model.state_dict()["1.num_batches_tracked"].numpy() == 5
    state = opt.state[id(opt.params[0])]["exp_avg"]
    assert state.dtype == pg.float32
    np.testing.assert_array_equal(state.numpy(), arrays["optim.0.exp_avg"].astype(np.float32))


# ── not a regular file ──────────────────────────────────────────────────────


@pytest.fixture
def special(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A FIFO, a directory, a socket or a symbolic link loop named like a checkpoint."""
    path = tmp_path / "c.safetensors"
    server = None
    if request.param == "fifo":
        os.mkfifo(path)
    elif request.param == "directory":
        path.mkdir()
    elif request.param == "socket":
        server = socket.socket(socket.AF_UNIX)
        home = os.getcwd()
        os.chdir(tmp_path)  # a socket's path is short: bind the relative name
        try:
            server.bind(path.name)
        finally:
            os.chdir(home)
    else:
        path.symlink_to(path)
    yield path
    if server is not None:
        server.close()


# A child process makes each read, so that a read that waits on a FIFO (safetensors' own
# reader waits holding the GIL) fails the test after a timeout instead of hanging it.
CHILD = textwrap.dedent("""
    import json, os, sys
    import picograd.nn as nn
    from picograd import disk_store
    from picograd.nn import state
    what, path = sys.argv[1], sys.argv[2]
    calls = {"load_checkpoint": lambda: state.load_checkpoint(path, nn.Linear(3, 2)),
             "load_safetensors": lambda: state.load_safetensors(path),
             "safetensors_metadata": lambda: state.safetensors_metadata(path),
             "disk_store.read": lambda: disk_store.read(disk_store.GRAPHS, path)}
    before = len(os.listdir("/proc/self/fd"))
    try:
        result, error = repr(calls[what]()), None
    except Exception as e:
        result, error = None, [type(e).__name__, isinstance(e, state.CheckpointError), str(e)]
    leaked = len(os.listdir("/proc/self/fd")) - before
    print(json.dumps({"result": result, "error": error, "leaked": leaked}))
""")


def _in_child(what: str, path: str, timeout: float = 60) -> dict[str, Any]:
    """What `CHILD` reports for the call `what` on `path` (a cache key for disk_store.read)."""
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, what, path], capture_output=True,
                              text=True, timeout=timeout, check=False, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what}({path!r}) still waits after {timeout} s")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


KINDS = {"fifo": "is a FIFO (named pipe), not a safetensors file",
         "directory": "is a directory, not a safetensors file",
         "socket": "is a socket, not a safetensors file",
         "symlink-loop": "cannot be opened: Too many levels of symbolic links"}
PROC_FD = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")


@PROC_FD
@pytest.mark.parametrize("reader", ["load_checkpoint", "load_safetensors",
                                    "safetensors_metadata"])
@pytest.mark.parametrize("special", list(KINDS), indirect=True)
def test_a_path_that_is_not_a_file_is_an_error_at_once(special: Path, reader: str,
                                                       request: pytest.FixtureRequest) -> None:
    report = _in_child(reader, str(special), timeout=30)
    assert report["error"] is not None, report
    name, is_checkpoint_error, message = report["error"]
    assert is_checkpoint_error, f"{name}: {message}"
    kind = request.node.callspec.params["special"]
    assert f"{special}: {KINDS[kind]}" in message
    assert report["leaked"] == 0


# ── the disk cache ──────────────────────────────────────────────────────────


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = str(tmp_path / "cache")
    monkeypatch.setenv("PG_CACHE_DIR", path)
    monkeypatch.delenv("PG_CACHE", raising=False)
    return path


@PROC_FD
@pytest.mark.parametrize("kind", ["fifo", "empty-directory", "full-directory"])
def test_a_cache_entry_that_is_not_a_file_is_a_miss(cache: str, kind: str) -> None:
    key = disk_store.key_text("test", kind)
    disk_store.write(disk_store.GRAPHS, key, b"payload")
    [name] = [n for n in os.listdir(os.path.join(cache, disk_store.GRAPHS))
              if not n.startswith(".")]
    entry = Path(cache, disk_store.GRAPHS, name)
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)
    else:
        entry.mkdir()
        if kind == "full-directory":
            (entry / "x").write_bytes(b"")
    report = _in_child("disk_store.read", key, timeout=30)
    assert report == {"result": "None", "error": None, "leaked": 0}
    disk_store.write(disk_store.GRAPHS, key, b"payload")  # the rebuild
    if kind == "full-directory":  # not ours to empty: it stays, and every read misses
        assert entry.is_dir() and disk_store.read(disk_store.GRAPHS, key) is None
    else:
        assert disk_store.read(disk_store.GRAPHS, key) == b"payload"


SCRIPT = textwrap.dedent("""
    import numpy as np
    import picograd as pg
    x = pg.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device="CPU:C")
    print(((x * 0.5 + 1).relu().sum(axis=1) * 2).numpy().tolist())
""")


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_graph_and_kernel_entries_that_are_not_files_are_rebuilt(cache: str, kind: str) -> None:
    env = {**os.environ, "PG_CACHE_DIR": cache, "PG_PTXAS_CHECK": "0"}

    def run() -> str:
        try:
            done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                                  text=True, timeout=120, check=False, cwd=ROOT)
        except subprocess.TimeoutExpired:
            pytest.fail("a process with a FIFO or directory in its cache hangs")
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert run() == "[9.0, 18.0]\n"
    entries = [Path(cache, k, n) for k in (disk_store.GRAPHS, disk_store.KERNELS)
               for n in os.listdir(os.path.join(cache, k)) if not n.startswith(".")]
    assert len(entries) >= 2
    for entry in entries:
        entry.unlink()
        if kind == "fifo":
            os.mkfifo(entry)
        else:
            entry.mkdir()
    assert run() == "[9.0, 18.0]\n"
    assert all(entry.is_file() for entry in entries)  # rebuilt in place


# ── BF16 and F8 ─────────────────────────────────────────────────────────────

LOW_PRECISION = {"bf16": "bfloat16", "f8_e4m3": "float8_e4m3fn", "f8_e5m2": "float8_e5m2"}


@pytest.mark.parametrize("name", list(LOW_PRECISION))
def test_bf16_and_f8_load_kept_as_the_files_bits(name: str, tmp_path: Path) -> None:
    from safetensors.torch import save_file as torch_save_file

    dtype = getattr(torch, LOW_PRECISION[name])
    bits = 16 if name == "bf16" else 8
    every = torch.from_numpy(np.arange(2**bits, dtype=np.int64).astype(f"u{bits // 8}")
                             .view(f"i{bits // 8}").copy()).view(dtype)  # every code
    path = tmp_path / f"{name}.safetensors"
    torch_save_file({"every": every}, str(path))
    got = load_safetensors(path)["every"]
    if name == "bf16":  # kept bf16 (picograd.bfloat16's numpy twin), the file's own bits
        assert got.dtype == pg.bfloat16.np and not got.flags.writeable
        np.testing.assert_array_equal(got.view(np.uint16),
                                      every.view(torch.int16).numpy().view(np.uint16))
    else:  # kept float8 (picograd.float8_*'s numpy twins), the file's own bits
        assert got.dtype == getattr(pg, LOW_PRECISION[name]).np and not got.flags.writeable
        np.testing.assert_array_equal(got.view(np.uint8), every.view(torch.uint8).numpy())
        assert pg.Tensor(got).dtype is getattr(pg, LOW_PRECISION[name])
    got, want = got.astype(np.float32), every.float().numpy()
    keep = ~np.isnan(want)  # (ml_dtypes' NaN bits may differ from torch's: any NaN)
    np.testing.assert_array_equal(np.isnan(got), ~keep)
    np.testing.assert_array_equal(got[keep].view(np.uint32), want[keep].view(np.uint32))


def test_a_bf16_checkpoint_loads_into_a_float32_model(tmp_path: Path) -> None:
    from safetensors.torch import save_file as torch_save_file

    torch.manual_seed(0)
    source = torch.nn.Linear(3, 2).to(torch.bfloat16)
    path = tmp_path / "bf16.safetensors"
    torch_save_file({f"model.{k}": v for k, v in source.state_dict().items()}, str(path),
                    metadata={"picograd.format": FORMAT})
    model = nn.Linear(3, 2)
    assert load_checkpoint(path, model) == {}
    for name, value in source.state_dict().items():
        np.testing.assert_array_equal(model.state_dict()[name].numpy(), value.float().numpy())
    weight = pg.Tensor(load_safetensors(path)["model.weight"])  # kept bf16, not widened
    assert weight.dtype is pg.bfloat16
    assert weight.numpy().tobytes() == source.weight.detach().view(torch.int16).numpy().tobytes()


def test_a_dtype_without_a_reading_names_file_tensor_and_dtype(tmp_path: Path) -> None:
    """The other half of the BF16/F8 contract (a guard: this held before issue 11 too)."""
    header = json.dumps({"scale": {"dtype": "F8_E8M0", "shape": [2],
                                   "data_offsets": [0, 2]}}).encode()
    path = tmp_path / "e8m0.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + b"\x7f\x80")
    with pytest.raises(CheckpointError, match="tensor 'scale' has dtype F8_E8M0") as info:
        load_safetensors(path)
    assert str(path) in str(info.value)
