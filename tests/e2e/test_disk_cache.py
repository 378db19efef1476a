"""The disk cache end to end: a warm graph builds no IR (in this process after clear_cache, and
in a fresh process), corrupt entries are rebuilt, two processes compiling the same graph at
once both succeed, PG_CACHE=0 and PG_DUMP bypass it."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import picograd as pg
import picograd.frontend.realize as realize_mod
from picograd import disk_store

from .helpers import assert_matches

rng = np.random.default_rng(7)


@pytest.fixture
def cache(tmp_path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = str(tmp_path / "cache")
    monkeypatch.setenv("PG_CACHE_DIR", path)
    monkeypatch.delenv("PG_CACHE", raising=False)
    monkeypatch.delenv("PG_DUMP", raising=False)
    realize_mod.clear_cache()
    yield path
    realize_mod.clear_cache()


def _graph(a: np.ndarray, device: str) -> pg.Tensor:
    x = pg.Tensor(a, device=device)
    return ((x * 0.5 + 1).relu().sum(axis=1, keepdim=True) * x).exp().sum(axis=0)


def _expected(a: np.ndarray) -> np.ndarray:
    return np.exp(np.maximum(a * 0.5 + 1, 0).sum(axis=1, keepdims=True) * a).sum(axis=0)


def _entries(root: str, kind: str) -> list[str]:
    folder = os.path.join(root, kind)
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if not n.startswith("."))


def _no_ir(*args: object) -> None:
    raise AssertionError("a disk cache hit must not build IR")


def test_a_warm_graph_builds_no_ir(device: str, cache: str,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    a = rng.standard_normal((3, 5)).astype(np.float32)
    assert_matches(_graph(a, device), _expected(a), rtol=1e-5)
    assert len(_entries(cache, "graphs")) == 1
    realize_mod.clear_cache()
    monkeypatch.setattr(realize_mod, "build_module", _no_ir)
    before = pg.compile_stats().compiles
    b = rng.standard_normal((3, 5)).astype(np.float32)
    assert_matches(_graph(b, device), _expected(b), rtol=1e-5)
    assert pg.compile_stats().compiles == before + 1  # a process-level miss, a disk hit


def test_warm_cpu_graph_runs_no_toolchain(cache: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import picograd.runtimes.cpu_c as cpu_c_mod
    import picograd.runtimes.cpu_llvm as cpu_llvm_mod

    a = rng.standard_normal((3, 5)).astype(np.float32)
    for device in ("CPU:LLVM", "CPU:C"):
        _graph(a, device).realize()
    realize_mod.clear_cache()
    monkeypatch.setattr(realize_mod, "build_module", _no_ir)
    monkeypatch.setattr(cpu_llvm_mod, "_optimize", _no_ir)
    monkeypatch.setattr(cpu_c_mod.subprocess, "run", _no_ir)
    for device in ("CPU:LLVM", "CPU:C"):
        assert_matches(_graph(a, device), _expected(a), rtol=1e-5)


@pytest.mark.parametrize("how", ["flip", "truncate", "magic"])
def test_corrupt_graph_and_kernel_entries_are_rebuilt(cache: str, how: str) -> None:
    device = "CPU:C"
    a = rng.standard_normal((3, 5)).astype(np.float32)
    _graph(a, device).realize()
    paths = _entries(cache, "graphs") + _entries(cache, "kernels")
    assert len(paths) >= 2
    for path in paths:
        with open(path, "rb") as f:
            entry = f.read()
        entry = {"flip": entry[:-1] + bytes([entry[-1] ^ 0x20]),
                 "truncate": entry[: len(entry) // 2], "magic": b"XXXXXXXX" + entry[8:]}[how]
        with open(path, "wb") as f:
            f.write(entry)
    realize_mod.clear_cache()
    assert_matches(_graph(a, device), _expected(a), rtol=1e-5)
    realize_mod.clear_cache()
    assert_matches(_graph(a, device), _expected(a), rtol=1e-5)  # from the rewritten entries
    assert _entries(cache, "graphs") + _entries(cache, "kernels") == paths


def test_pg_cache_0_writes_nothing(device: str, cache: str,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_CACHE", "0")
    a = rng.standard_normal((3, 5)).astype(np.float32)
    assert_matches(_graph(a, device), _expected(a), rtol=1e-5)
    assert not os.path.exists(cache)


def test_pg_dump_bypasses_the_disk_cache(cache: str, tmp_path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    a = rng.standard_normal((3, 5)).astype(np.float32)
    _graph(a, "CPU:LLVM").realize()
    realize_mod.clear_cache()
    monkeypatch.setenv("PG_DUMP", str(tmp_path / "dump"))
    _graph(a, "CPU:LLVM").realize()
    [graph_dir] = os.listdir(tmp_path / "dump")
    assert "input.mlir" in os.listdir(tmp_path / "dump" / graph_dir)


SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import picograd as pg
    import picograd.frontend.realize as realize_mod

    device, warm = sys.argv[1], sys.argv[2] == "warm"
    if warm:
        def no_ir(*args):
            raise AssertionError("a warm process must not build IR")
        realize_mod.build_module = no_ir
    a = np.arange(15, dtype=np.float32).reshape(3, 5) / 10
    x = pg.Tensor(a, device=device)
    y = ((x * 0.5 + 1).relu().sum(axis=1, keepdim=True) * x).exp().sum(axis=0)
    print(repr(y.numpy().tolist()))
""")


def _run_script(device: str, mode: str, cache: str) -> str:
    env = {**os.environ, "PG_CACHE_DIR": cache, "PG_PTXAS_CHECK": "0"}
    env.pop("PG_CACHE", None)
    done = subprocess.run([sys.executable, "-c", SCRIPT, device, mode], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_fresh_process_with_a_warm_cache_builds_no_ir(device: str, cache: str) -> None:
    cold = _run_script(device, "cold", cache)
    assert _run_script(device, "warm", cache) == cold
    a = np.arange(15, dtype=np.float32).reshape(3, 5) / 10
    np.testing.assert_allclose(eval(cold), _expected(a), rtol=1e-5)


def _compile_in_child(cache: str, device: str, queue) -> None:
    os.environ["PG_CACHE_DIR"] = cache
    a = np.arange(15, dtype=np.float32).reshape(3, 5) / 10
    queue.put(_graph(a, device).numpy().tolist())


@pytest.mark.parametrize("device_name", ["CPU:LLVM", "CPU:C"])
def test_two_processes_compiling_the_same_graph_at_once(cache: str, device_name: str) -> None:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    children = [context.Process(target=_compile_in_child, args=(cache, device_name, queue))
                for _ in range(2)]
    for child in children:
        child.start()
    results = [queue.get(timeout=300) for _ in children]
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    a = np.arange(15, dtype=np.float32).reshape(3, 5) / 10
    for result in results:
        np.testing.assert_allclose(result, _expected(a), rtol=1e-5)
    assert len(_entries(cache, "graphs")) == 1  # both wrote the same key
    for path in _entries(cache, "graphs") + _entries(cache, "kernels"):
        assert _is_whole(path)
    assert not [n for n in os.listdir(os.path.join(cache, "kernels")) if n.startswith(".tmp")]


def _is_whole(path: str) -> bool:
    with open(path, "rb") as f:
        entry = f.read()
    magic, _, _, digest, size = disk_store.HEADER.unpack_from(entry)
    payload = entry[disk_store.HEADER.size:]
    return magic == disk_store.MAGIC and len(payload) == size and (
        hashlib.sha256(payload).digest() == digest)


def test_a_cache_dir_that_is_a_symbolic_link_is_used(tmp_path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """PG_CACHE_DIR naming a link to a private directory: the cache lives there (it used to
    be "not a directory" and off)."""
    target = tmp_path / "real"
    target.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(target)
    monkeypatch.setenv("PG_CACHE_DIR", str(link))
    monkeypatch.delenv("PG_CACHE", raising=False)
    monkeypatch.delenv("PG_DUMP", raising=False)
    realize_mod.clear_cache()
    a = rng.standard_normal((3, 5)).astype(np.float32)
    assert_matches(_graph(a, "CPU"), _expected(a), rtol=1e-4, atol=1e-5)
    assert _entries(str(target), "graphs")
    realize_mod.clear_cache()
