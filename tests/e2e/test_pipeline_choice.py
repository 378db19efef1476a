"""A user-chosen pipeline: `realize(pipeline=...)`, `Tensor.realize(pipeline=...)` and
`$PG_PIPELINE` run any pipeline string, and the string is part of the compile cache key."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import picograd as pg
from picograd.compiler.driver import default_pipeline
from picograd.compiler.pipelines import PipelineError, pass_names
from picograd.frontend.realize import compile_stats

from .test_dump import _opt_tool

A = np.arange(12, dtype=np.float32).reshape(3, 4) / 4


def _graph(device: str) -> pg.Tensor:
    x = pg.Tensor(A, device=device)
    return (x * 2 - 1).relu().sum(axis=1)


def _without(spec: str, name: str) -> str:
    """`spec` without the passes called `name` (still a pipeline that compiles)."""
    return ",".join(p for p in spec.split(",") if not p.startswith(name))


def test_the_same_graph_under_two_pipelines_compiles_twice(device: str) -> None:
    want = np.maximum(A * 2 - 1, 0).sum(axis=1)
    default = default_pipeline(device)
    other = _without(default, "uop-simplify")
    assert other != default
    before = compile_stats().compiles
    y = _graph(device)
    pg.realize(y)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
    z = _graph(device)
    pg.realize(z, pipeline=other)
    np.testing.assert_allclose(z.numpy(), want, rtol=1e-6)
    assert compile_stats().compiles == before + 2  # not the default pipeline's program again
    again = _graph(device)
    hits = compile_stats().cache_hits
    again.realize(pipeline=other)
    assert compile_stats().cache_hits == hits + 1 and compile_stats().compiles == before + 2


def test_pg_pipeline_is_the_default_when_set(device: str, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    spec = _without(default_pipeline(device), "tensor-simplify")
    _graph(device).realize()  # compiled (or cached) under the default pipeline
    before = compile_stats().compiles
    monkeypatch.setenv("PG_PIPELINE", spec)
    y = _graph(device).realize()
    assert compile_stats().compiles == before + 1
    np.testing.assert_allclose(y.numpy(), np.maximum(A * 2 - 1, 0).sum(axis=1), rtol=1e-6)


def test_an_unknown_pass_is_a_pipeline_error(device: str) -> None:
    with pytest.raises(PipelineError, match="unknown pass 'loop-simplfy'"):
        _graph(device).realize(pipeline="tensor-simplify,loop-simplfy")


def test_a_dumped_custom_pipeline_reproduces_with_opt_tool(device: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    spec = _without(default_pipeline(device), "uop-simplify")
    monkeypatch.setenv("PG_DUMP", str(tmp_path))
    x = pg.Tensor(A + 1, device=device)  # a graph no other test compiles under `spec`
    (x.exp() * 3).sum(axis=0).realize(pipeline=spec)
    (graph,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert (graph / "pipeline.txt").read_text() == spec
    stages = sorted(p.name for p in graph.glob("[0-9][0-9]-*.mlir"))
    assert len(stages) == len(pass_names(spec))
    done = subprocess.run([*_opt_tool(), str(graph / "input.mlir"), f"--pass-pipeline={spec}"],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "PG_DUMP": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (graph / stages[-1]).read_text().strip()


def test_a_pipeline_that_stops_short_of_the_target_is_a_pipeline_error(device: str) -> None:
    with pytest.raises(PipelineError, match=r"left pg_\w+\.\w+ in the graph.*must lower"):
        _graph(device).realize(pipeline="tensor-simplify,convert-tensor-to-sched")


def test_a_pipeline_that_is_not_a_string_is_a_pipeline_error(device: str) -> None:
    with pytest.raises(PipelineError, match=r"pipeline must be a pass pipeline string, got "
                                            r"int 5\n  at .*test_pipeline_choice.py"):
        _graph(device).realize(pipeline=5)  # type: ignore[arg-type]
