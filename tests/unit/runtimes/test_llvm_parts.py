"""A big graph's LLVM source is several modules, compiled at once in forked processes:
the policy, a multi-module source that loads and runs every kernel (and links for
`optimized_ir`), a failure in a child reported as a CompileError, and a graph of many
kernels realized end to end with its source split."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import picograd as pg
from picograd.errors import CompileError
from picograd.frontend.realize import compiled
from picograd.lowering.llvm import printer
from picograd.lowering.llvm.printer import (
    MAX_PARTS,
    MIN_SPLIT_KERNELS,
    MIN_SPLIT_OPS,
    PART_SEPARATOR,
    compile_parts,
)
from picograd.runtimes import cpu_llvm, get_device


def _scale(name: str, factor: float) -> str:
    return f"""
define void @{name}(ptr %a, ptr %out, i64 %start, i64 %end) {{
entry:
  %x = load double, ptr %a
  %y = fmul double %x, {factor:.1f}
  store double %y, ptr %out
  ret void
}}
"""


def test_only_big_graphs_split() -> None:
    assert compile_parts(MIN_SPLIT_KERNELS - 1, 10**6) == 1
    assert compile_parts(100, MIN_SPLIT_OPS - 1) == 1
    assert 1 <= compile_parts(100, 10**6) <= MAX_PARTS


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity here")
def test_a_graph_splits_into_the_cpus_this_process_may_use(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Not os.cpu_count(): a container's cpuset or `taskset` leaves a process one CPU of
    many, and a second module would only wait for it."""
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    assert compile_parts(100, 10**6) == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3, 5})
    assert compile_parts(100, 10**6) == 2


def test_a_source_of_several_modules_runs_every_kernel() -> None:
    runtime = get_device("CPU:LLVM")
    source = PART_SEPARATOR.join(_scale(f"k{n}", n + 1) for n in range(3))
    binary = runtime.compile(source)
    for n in range(3):
        a, out = np.array([2.0]), np.zeros(1)
        runtime.load(binary, f"k{n}", 2)(a.ctypes.data, out.ctypes.data)
        assert out[0] == 2.0 * (n + 1)
    assert all(f"define void @k{n}" in binary.optimized_ir for n in range(3))  # linked


def test_a_module_that_fails_in_a_child_is_a_compile_error() -> None:
    runtime = get_device("CPU:LLVM")
    source = _scale("good", 2) + PART_SEPARATOR + "define void @bad( {"
    with pytest.raises(CompileError, match="LLVM"):
        runtime.compile(source)


def test_a_graph_of_many_kernels_is_split_and_computes_what_numpy_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(printer, "MIN_SPLIT_OPS", 0)  # small kernels, split all the same
    monkeypatch.setattr(printer, "host_cpus", lambda: 2)  # and on a one-CPU machine too
    monkeypatch.setenv("PG_CACHE", "0")  # a cached program of this graph may be unsplit
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((64, 64)).astype(np.float32) for _ in range(12)]
    outs = []
    for n, a in enumerate(arrays):  # each a reduce of its own (a kernel each)
        t = pg.Tensor(a)
        outs.append((t @ t.T).relu().sum(1) * (n + 1))
    program, inputs = compiled(*outs)
    assert program.binary.source.count(PART_SEPARATOR) == 1
    got = program.run(inputs)
    for n, (a, out) in enumerate(zip(arrays, got, strict=True)):
        want = np.maximum(a @ a.T, 0).sum(1) * (n + 1)
        np.testing.assert_allclose(out.reshape(-1), want, rtol=1e-4, atol=1e-3)


def test_with_another_thread_running_the_modules_compile_in_this_process() -> None:
    """A thread of the program might hold llvmlite's lock, which a forked child would wait
    for forever: then nothing is forked, and the modules compile one after the other. (A
    pytest-xdist worker has a thread of its own: there every compile takes this path.)"""
    release = threading.Event()
    other = threading.Thread(target=release.wait, name="user-thread")
    other.start()
    try:
        assert not cpu_llvm._fork_is_safe()
        runtime = get_device("CPU:LLVM")
        binary = runtime.compile(PART_SEPARATOR.join(_scale(f"t{n}", n + 5) for n in range(2)))
        a, out = np.array([1.0]), np.zeros(1)
        runtime.load(binary, "t1", 2)(a.ctypes.data, out.ctypes.data)
        assert out[0] == 6.0
    finally:
        release.set()
        other.join()


CHILD = """
import numpy as np
from picograd.lowering.llvm.printer import PART_SEPARATOR
from picograd.runtimes import cpu_llvm, get_device
KERNEL = '''
define void @f{n}(ptr %a, ptr %o, i64 %s, i64 %e) {{
  %x = load double, ptr %a
  %y = fmul double %x, {factor}.0
  store double %y, ptr %o
  ret void
}}
'''
source = PART_SEPARATOR.join(KERNEL.format(n=n, factor=n + 2) for n in range(3))
assert cpu_llvm._fork_is_safe()  # a fresh process: the modules compile in forked children
runtime = get_device("CPU:LLVM")
binary = runtime.compile(source)
for n in range(3):
    a, out = np.array([1.5]), np.zeros(1)
    runtime.load(binary, f"f{n}", 2)(a.ctypes.data, out.ctypes.data)
    assert out[0] == 1.5 * (n + 2), out
print("ok")
"""


def test_forked_compiles_in_a_process_of_one_thread() -> None:
    """The test runner's workers keep a thread of their own, so the forked path runs in a
    fresh interpreter (no disk cache: every module is compiled)."""
    env = {**os.environ, "PG_CACHE": "0"}
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
