"""The WebGPU runtime's Vulkan runtime directory: one per user, never one per process."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

from picograd.runtimes import webgpu

_PROGRAM = ("import os, picograd.runtimes.webgpu as w; w.gpu(); "
            "print(os.environ['XDG_RUNTIME_DIR'])")


def _dirs(root: str) -> set[str]:
    return {n for n in os.listdir(root) if n.startswith("picograd-xdg-")}


def test_processes_share_one_private_directory(tmp_path: os.PathLike[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env["TMPDIR"] = str(tmp_path)
    seen = set()
    for _ in range(2):
        run = subprocess.run([sys.executable, "-c", _PROGRAM], env=env, capture_output=True,
                             text=True, timeout=120)
        if run.returncode != 0:
            pytest.skip(f"no WebGPU adapter here: {run.stderr.strip().splitlines()[-1:]}")
        seen.add(run.stdout.strip())
    assert seen == {os.path.join(str(tmp_path), f"picograd-xdg-{os.getuid()}")}
    assert _dirs(str(tmp_path)) == {f"picograd-xdg-{os.getuid()}"}
    assert os.stat(seen.pop()).st_mode & 0o777 == 0o700


def test_a_directory_open_to_others_is_not_trusted(tmp_path: os.PathLike[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    shared = os.path.join(str(tmp_path), f"picograd-xdg-{os.getuid()}")
    os.mkdir(shared)
    os.chmod(shared, 0o777)
    path = webgpu._runtime_dir()
    assert path != shared and os.path.isdir(path)
    assert os.stat(path).st_mode & 0o777 == 0o700
