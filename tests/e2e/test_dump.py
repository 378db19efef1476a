"""PG_DUMP: every compiled graph is dumped so that opt-tool reproduces its pipeline."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import picograd as pg
from picograd import frontend
from picograd.compiler.pipelines import DEFAULT_PIPELINES, pass_names
from picograd.runtimes import get_device


def _opt_tool() -> list[str]:
    exe = shutil.which("opt-tool")
    return [exe] if exe else [sys.executable, "-m", "picograd.tools.opt_tool"]


def test_dump_reproduces_with_opt_tool(device: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # an earlier test's pending initial values (an unused module's parameters) are computed
    # by the next realize: that graph is not one of this test's
    (pg.Tensor([1.0], device=device) + 1).realize()
    monkeypatch.setenv("PG_DUMP", str(tmp_path))
    frontend.clear_cache()  # the graph must compile to be dumped
    a = pg.Tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device=device)
    y = (a.pad(((0, 1), (1, 0))) * 2 - 1).relu().sum(axis=1)
    z = a.T @ a
    y.realize()
    z.realize()
    graphs = sorted(p for p in tmp_path.iterdir() if p.is_dir())
    assert len(graphs) == 2

    spec = DEFAULT_PIPELINES[get_device(device).renderer]
    for graph in graphs:
        assert (graph / "pipeline.txt").read_text() == spec
        assert "pg_tensor." in (graph / "input.mlir").read_text()
        stages = sorted(p.name for p in graph.glob("[0-9][0-9]-*.mlir"))
        assert stages == [f"{i:02d}-{name}.mlir" for i, name in enumerate(pass_names(spec), 1)]
        done = subprocess.run(
            [*_opt_tool(), str(graph / "input.mlir"), f"--pass-pipeline={spec}"],
            capture_output=True, text=True, check=False, env={**os.environ, "PG_DUMP": ""})
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == (graph / stages[-1]).read_text().strip()


def test_no_dump_without_the_variable(device: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PG_DUMP", raising=False)
    monkeypatch.chdir(tmp_path)
    frontend.clear_cache()
    (pg.Tensor([1.0, 2.0], device=device) * 3).realize()
    assert list(tmp_path.iterdir()) == []
