"""The C runtime on hand-written C source: compile, load, launch, and compiler failures."""

from __future__ import annotations

import os

import numpy as np
import pytest

from picograd.errors import CompileError, DeviceError
from picograd.runtimes import get_device
from picograd.runtimes.cpu_c import CpuCRuntime

SOURCE = """
#include <math.h>
#include <stdbool.h>
void k0(const float* restrict a, float* restrict out) {
  for (long i = 0; i < 8; i++) out[i] = sqrtf(a[i]) + 1.0f;
}
void k1(const bool* restrict a, int* restrict out) {
  for (long i = 0; i < 4; i++) out[i] = a[i] ? -7 / 2 : -7 % 2;
}
"""


def test_compile_load_and_launch_hand_written_c():
    runtime = get_device("CPU:C")
    assert isinstance(runtime, CpuCRuntime) and runtime.renderer == "c"
    library = runtime.compile(SOURCE)
    k0 = runtime.load(library, "k0", 2)
    k1 = runtime.load(library, "k1", 2)
    a = runtime.allocate(8, np.dtype(np.float32))
    runtime.copy_in(a, np.arange(8, dtype=np.float32).reshape(2, 4))
    out = runtime.allocate(8, np.dtype(np.float32))
    runtime.launch(k0, [a, out])
    runtime.synchronize()
    np.testing.assert_allclose(runtime.copy_out(out), np.sqrt(np.arange(8)) + 1, rtol=1e-6)
    flags = np.array([True, False, True, False])
    ints = np.empty(4, np.int32)
    k1(flags.ctypes.data, ints.ctypes.data)
    np.testing.assert_array_equal(ints, [-3, -1, -3, -1])  # C truncation semantics


def test_compiler_failure_carries_message_and_source_path():
    broken = "void k0(float* a) { a[0] = undefined_name; }\n"
    with pytest.raises(CompileError) as info:
        get_device("CPU:C").compile(broken)
    error = info.value
    assert "undefined_name" in error.log
    assert error.source_path is not None and os.path.exists(error.source_path)
    with open(error.source_path) as f:
        assert f.read() == broken
    assert error.source_path in str(error) and "undefined_name" in str(error)
    assert isinstance(error, DeviceError)


def test_missing_compiler_and_missing_kernel():
    with pytest.raises(CompileError, match="cannot run the C compiler"):
        CpuCRuntime(compiler="/nonexistent/cc").compile(SOURCE)
    runtime = CpuCRuntime()
    with pytest.raises(DeviceError, match="no kernel 'k9'"):
        runtime.load(runtime.compile(SOURCE), "k9", 1)


def test_a_float16_round_trip_rounds() -> None:
    """float32 -> float16 -> float32 must round (2049 -> 2048): GCC 12's SLP vectoriser used
    to fold the pair away under -march=native (see F16_FLAGS)."""
    import numpy as np
    from xdsl.parser import Parser

    from picograd.compiler.driver import compile_module
    from picograd.compiler.pipelines import CPU_C, run_pipeline
    from picograd.dialects import make_context

    text = """
    func.func @main(%in0: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %h = pg_tensor.cast %in0 : tensor<2x3xf32> to tensor<2x3xf16>
      %f = pg_tensor.cast %h : tensor<2x3xf16> to tensor<2x3xf32>
      func.return %f : tensor<2x3xf32>
    }"""
    module = Parser(make_context(), text).parse_module()
    run_pipeline(module, CPU_C)
    x = np.array([0, 2049, 4097, 1, 0.1, 65519], np.float32)
    (got,) = compile_module(module, "c").run([x])
    np.testing.assert_array_equal(got, x.astype(np.float16).astype(np.float32))
