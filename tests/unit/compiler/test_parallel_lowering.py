"""Kernels lowered in two processes (`picograd/compiler/parallel_lowering.py`) give the
source a serial compile gives, byte for byte, and a child that fails is not trusted: its
kernels are lowered again in the parent, which raises any error itself."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import picograd as pg
from picograd.compiler import parallel_lowering
from picograd.compiler.pipelines import CPU_LLVM, kernel_local_tail, pipeline_head, run_pipeline
from picograd.frontend.realize import build_module, linearize

# A fresh interpreter (the test runner keeps a thread of its own, and a process with other
# threads does not fork): compile an MLP's Adam step serially, in two processes, and in two
# processes whose child fails; print whether the sources agree and how many forks there were.
CHILD = """
import os
import numpy as np
import picograd as pg
import picograd.compiler.driver as driver
import picograd.compiler.parallel_lowering as parallel_lowering
import picograd.frontend.realize as realize_mod
import picograd.nn as nn
import picograd.nn.functional as F
from picograd.optim import Adam
from picograd.runtimes import cpu_llvm

sources, forks = [], [0]
compile_ = cpu_llvm.CpuLlvmRuntime.compile
cpu_llvm.CpuLlvmRuntime.compile = lambda self, source: (sources.append(source),
                                                        compile_(self, source))[1]
collect = parallel_lowering._collect
def counted_collect(pid, fd):  # once per graph lowered in two processes
    forks[0] += 1
    return collect(pid, fd)
parallel_lowering._collect = counted_collect

def step():
    realize_mod.clear_cache()
    pg.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 48, device="CPU:LLVM"), nn.ReLU(),
                          nn.Linear(48, 10, device="CPU:LLVM"))
    opt = Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = pg.Tensor(rng.standard_normal((16, 64), dtype=np.float32), device="CPU:LLVM")
    y = pg.Tensor(rng.integers(0, 10, 16).astype(np.int32), device="CPU:LLVM")
    F.cross_entropy(model(x), y).backward()
    opt.step()
    return [p.numpy() for p in model.parameters()]

parallel_lowering.MIN_KERNELS = 10**9
serial = step()
serial_sources, sources[:] = list(sources), []
parallel_lowering.MIN_KERNELS = 1
parallel = step()
parallel_sources, sources[:] = list(sources), []
forked = forks[0]
parent = os.getpid()
route = driver.DIRECT_ROUTES["llvm"]
lower = route.lower
def failing(module):  # every child fails; the parent's lowering works
    if os.getpid() != parent:
        raise RuntimeError("a child that fails")
    return lower(module)
driver.DIRECT_ROUTES["llvm"] = type(route)(route.conversion, failing, route.assemble)
failed = step()
print(serial_sources == parallel_sources == sources, forked, forks[0] - forked,
      all((a == b).all() and (a == c).all() for a, b, c in zip(serial, parallel, failed)))
"""


def test_two_processes_print_the_serial_source_and_a_failed_child_is_redone() -> None:
    env = {**os.environ, "PG_CACHE": "0"}
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    same, forked, forked_failing, results = done.stdout.split()
    assert same == "True" and results == "True"
    assert int(forked) >= 2  # the parameters' graph and the step's lowered in two processes
    assert int(forked_failing) >= 2


def test_a_small_graph_is_lowered_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    module = ModuleOp([])
    assert parallel_lowering.lower_kernels(module, "cse", None, lambda m: []) == []


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity here")
def test_one_usable_cpu_lowers_here_however_many_the_machine_has(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A container's cpuset or `taskset` leaves a process one CPU of many: a second
    process would only wait for it (os.cpu_count() counts the machine's)."""
    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    module = ModuleOp([ModuleOp([]) for _ in range(parallel_lowering.MIN_KERNELS)])
    pieces = parallel_lowering.lower_kernels(
        module, "cse", None, lambda m: [{"n": n} for n, _ in enumerate(m.ops)])
    assert pieces == [{"n": n} for n in range(parallel_lowering.MIN_KERNELS)]


def test_the_kernel_local_tail_of_the_default_pipeline():
    head = pipeline_head(CPU_LLVM, "convert-uop-to-llvm")
    assert head is not None
    split = kernel_local_tail(head)
    assert split is not None
    graph, kernels = split
    assert graph.endswith("sched-dedup") and kernels.startswith("convert-sched-to-loop")
    assert kernel_local_tail("cse,uop-simplify") is None  # nothing before the tail
    assert kernel_local_tail("cse,tensor-simplify") is None  # no tail


def test_a_reduce_kernel_weighs_more_than_its_ops() -> None:
    """The split's estimate: a kernel with a reduce counts its ops once more per reduce
    (its body is emitted once per lane of a tile), an elementwise kernel its ops."""
    x = pg.Tensor(np.ones((64, 32), np.float32))
    nodes, entries, _, outputs = linearize([(x * 2).relu()._node, x.sum(1)._node])
    module = build_module(nodes, entries, outputs)
    head = pipeline_head(CPU_LLVM, "convert-uop-to-llvm")
    split = kernel_local_tail(head) if head is not None else None
    assert split is not None
    run_pipeline(module, split[0])  # the graph passes: one kernel each, at the sched stage
    kernels = [op for op in module.ops if not isinstance(op, func.FuncOp)]
    works = []
    for kernel in kernels:
        ops = sum(1 for _ in kernel.walk())
        reduces = sum(1 for op in kernel.walk() if op.name.endswith(".reduce"))
        assert parallel_lowering.lowering_work(kernel) == ops * (1 + reduces)
        works.append(reduces)
    assert sorted(works) == [0, 1]
