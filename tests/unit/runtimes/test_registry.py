"""Device names, the PG_CPU_RENDERER switch, typed errors, and the LLVM runtime's own API."""

from __future__ import annotations

import os

import numpy as np
import pytest

from picograd.compiler.driver import compile_module
from picograd.errors import CompileError, DeviceError, PicogradError
from picograd.runtimes import (
    available_devices,
    canonical_device_name,
    get_device,
    register_device,
    registry,
)
from picograd.runtimes.cpu_c import CpuCRuntime
from picograd.runtimes.cpu_llvm import CpuLlvmRuntime


def test_cpu_names_and_the_renderer_switch(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("PG_CPU_RENDERER", raising=False)
    assert canonical_device_name("cpu") == "CPU:LLVM"
    assert isinstance(get_device("CPU"), CpuLlvmRuntime)
    assert get_device("CPU") is get_device("cpu:llvm")  # one runtime per device
    assert isinstance(get_device("CPU:C"), CpuCRuntime)
    monkeypatch.setenv("PG_CPU_RENDERER", "c")
    assert isinstance(get_device("CPU"), CpuCRuntime)
    assert get_device("CPU").name == "CPU:C"
    assert {"CPU", "CPU:LLVM", "CPU:C"} <= set(available_devices())


def test_unknown_devices_raise_device_error(monkeypatch: pytest.MonkeyPatch):
    with pytest.raises(DeviceError, match=r"unknown device 'TPU'; available: CPU, CPU:C"):
        get_device("TPU")
    monkeypatch.setenv("PG_CPU_RENDERER", "fortran")
    with pytest.raises(DeviceError, match="PG_CPU_RENDERER='fortran'"):
        get_device("CPU")
    with pytest.raises(PicogradError, match="unknown compile target 'fortran'"):
        compile_module(None, "fortran")  # type: ignore[arg-type]
    monkeypatch.delenv("PG_CPU_RENDERER")
    try:
        get_device("CUDA")
    except PicogradError:  # no GPU here: compiling for it names the missing device
        with pytest.raises(PicogradError):
            compile_module(None, "ptx")  # type: ignore[arg-type]


def test_registered_devices_are_built_lazily_once(monkeypatch: pytest.MonkeyPatch):
    # a private copy of the registry, so that the fake device does not outlive the test
    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))
    monkeypatch.setattr(registry, "_INSTANCES", dict(registry._INSTANCES))
    built = []

    class Fake(CpuLlvmRuntime):
        renderer = "fake"

        def __init__(self):
            built.append(self)

    register_device("FAKE:DEV", lambda: Fake)
    assert built == []
    assert get_device("fake:dev") is get_device("FAKE:DEV") and len(built) == 1


def test_llvm_runtime_compiles_ir_text():
    runtime = get_device("CPU:LLVM")
    ir = """
define void @twice(ptr noalias %a, ptr noalias %out) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%n, %loop]
  %p = getelementptr inbounds double, ptr %a, i64 %i
  %v = load double, ptr %p
  %w = fmul double %v, 2.0
  %q = getelementptr inbounds double, ptr %out, i64 %i
  store double %w, ptr %q
  %n = add i64 %i, 1
  %c = icmp slt i64 %n, 16
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
"""
    binary = runtime.compile(ir)
    twice = runtime.load(binary, "twice", 2)
    a, out = np.arange(16.0), np.zeros(16)
    twice(a.ctypes.data, out.ctypes.data)
    np.testing.assert_array_equal(out, 2 * a)
    assert "define void @twice" in binary.optimized_ir
    assert "twice" in binary.assembly()
    with pytest.raises(DeviceError, match="no kernel @nope"):
        runtime.load(binary, "nope", 0)


def test_llvm_rejects_bad_ir_with_a_compile_error():
    with pytest.raises(CompileError) as info:
        get_device("CPU:LLVM").compile("define void @f() { ret i32 0 }")
    assert info.value.source_path is not None and os.path.exists(info.value.source_path)
    assert info.value.log
