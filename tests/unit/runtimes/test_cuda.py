"""The CUDA runtime and the PTX checks around it.

Without a GPU: constructing `CudaRuntime` raises DeviceError (never ImportError), ptxas
failures are reported with the kernel and the offending PTX lines, and the runtime's logic
(architecture choice, retargeting, memory, JIT errors, parameter packing, launch errors)
runs against a fake driver whose kernels are executed by the `ptx_sim` simulator, through
`compile_module(module, "ptx")`. With a GPU: the same programs run on it.
"""

from __future__ import annotations

import ctypes
import enum
import os
import sys
from typing import Any

import numpy as np
import pytest
from ptx_sim import run_entry
from xdsl.parser import Parser

from picograd.compiler.driver import compile_module
from picograd.dialects import make_context
from picograd.dialects import pg_ptx as P
from picograd.errors import CompileError, DeviceError, OutOfMemoryError
from picograd.lowering.ptx.convert_uop_to_ptx import ConvertUopToPtxPass
from picograd.lowering.ptx.printer import arch_for_capability, module_to_ptx, retarget_ptx
from picograd.runtimes import registry
from picograd.runtimes.cuda import CudaRuntime
from picograd.runtimes.pool import pool_of
from picograd.runtimes.ptxas import check_ptx, describe_ptx_failure, ptxas_path


def cuda_unavailable() -> str | None:
    try:
        CudaRuntime()
    except DeviceError as e:
        return str(e)
    return None


NO_GPU = cuda_unavailable()

PROGRAM = """
pg_uop.kernel @axpy(%x: !pg.buffer<300xf32>, %y: !pg.buffer<300xf32>, %out: !pg.buffer<300xf32>) {
  %g = pg_uop.special group_id 0 size 3
  %l = pg_uop.special local_id 0 size 128
  %c128 = pg_uop.const 128 : index
  %base = pg_uop.binary mul %g, %c128 : index
  %i = pg_uop.binary add %base, %l : index
  %n = pg_uop.const 300 : index
  %ok = pg_uop.cmp lt %i, %n : index
  pg_uop.if %ok
  %a = pg_uop.load %x[%i] : !pg.buffer<300xf32> -> f32
  %b = pg_uop.load %y[%i] : !pg.buffer<300xf32> -> f32
  %two = pg_uop.const 2.0 : f32
  %ax = pg_uop.binary mul %a, %two : f32
  %r = pg_uop.binary add %ax, %b : f32
  pg_uop.store %r, %out[%i] : f32, !pg.buffer<300xf32>
  pg_uop.endif
}
func.func @main(%x: !pg.buffer<300xf32>, %y: !pg.buffer<300xf32>) -> !pg.buffer<300xf32> {
  %t = pg_sched.alloc : !pg.buffer<300xf32>
  pg_sched.launch @axpy(%x, %y, %t) : !pg.buffer<300xf32>, !pg.buffer<300xf32>, !B
  %out = pg_sched.alloc : !pg.buffer<300xf32>
  pg_sched.launch @axpy(%t, %y, %out) : !pg.buffer<300xf32>, !pg.buffer<300xf32>, !B
  func.return %out : !pg.buffer<300xf32>
}
""".replace("!B", "!pg.buffer<300xf32>")

BROKEN_PTX = """.version 7.0
.target sm_80
.address_size 64

.visible .entry good(
)
{
	ret;
}

.visible .entry broken(
	.param .u64 broken_param_0
)
{
	.reg .b32 %r<2>;

	mov.b32 %r0, 1;
	frobnicate.b32 %r1, %r0;
	ret;
}
"""


def lowered_program():
    ctx = make_context()
    module = Parser(ctx, PROGRAM).parse_module()
    ConvertUopToPtxPass().apply(ctx, module)
    module.verify()
    return module


# ── without a GPU ────────────────────────────────────────────────────────────


@pytest.mark.skipif(NO_GPU is None, reason="a CUDA device is present")
def test_construction_without_a_gpu_raises_device_error() -> None:
    with pytest.raises(DeviceError, match="device CUDA"):
        CudaRuntime()
    with pytest.raises(DeviceError, match="CUDA"):
        registry.get_device("CUDA")


def test_a_missing_cuda_python_is_a_device_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cuda", None)  # `import cuda...` raises ImportError
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    with pytest.raises(DeviceError, match="needs cuda-python"):
        CudaRuntime()


def test_a_driver_that_cannot_load_is_a_device_error() -> None:
    class Broken:
        def __getattr__(self, name: str) -> Any:
            raise RuntimeError("libcuda.so.1: cannot open shared object file")

    with pytest.raises(DeviceError, match=r"libcuda\.so\.1"):
        CudaRuntime(driver=Broken())


def test_describe_ptx_failure_quotes_lines_and_names_the_kernel() -> None:
    log = "ptxas application ptx input, line 18; error   : Not a name of any known instruction"
    text = describe_ptx_failure(BROKEN_PTX, log, "rejected")
    assert text.splitlines() == ["rejected (kernel broken)",
                                 "  line 18: \tfrobnicate.b32 %r1, %r0;"]


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed")
def test_ptxas_errors_carry_the_kernel_the_lines_and_the_kept_source() -> None:
    with pytest.raises(CompileError) as info:
        check_ptx(BROKEN_PTX, "sm_80")
    error = info.value
    message = str(error)
    assert "ptxas rejected the PTX for sm_80 (kernel broken)" in message
    assert "line 18: \tfrobnicate.b32 %r1, %r0;" in message
    assert error.source_path is not None and os.path.exists(error.source_path)
    with open(error.source_path) as f:
        assert f.read() == BROKEN_PTX
    assert f"-arch=sm_80 {error.source_path}" in error.log  # the repro command
    os.unlink(error.source_path)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed")
def test_ptxas_accepts_the_lowered_program() -> None:
    module = lowered_program()
    for arch in ("sm_80", "sm_90"):
        check_ptx(module_to_ptx(module, arch), arch)


def test_arch_for_capability() -> None:
    assert arch_for_capability(8, 0) == "sm_80"
    assert arch_for_capability(8, 6) == "sm_86"
    assert arch_for_capability(8, 8) == "sm_87"  # the newest the table has below it
    assert arch_for_capability(9, 0) == "sm_90"
    assert arch_for_capability(12, 1) == "sm_120"
    with pytest.raises(DeviceError, match="older than"):
        arch_for_capability(7, 0)


def test_retarget_changes_only_version_and_target() -> None:
    source = module_to_ptx(lowered_program(), "sm_80")
    moved = retarget_ptx(source, "sm_90")
    assert ".version 7.8\n.target sm_90\n" in moved
    assert moved.replace(".version 7.8\n.target sm_90", ".version 7.0\n.target sm_80") == source


# ── a fake driver: device memory in host arrays, kernels run by ptx_sim ──────


class Result(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_NO_DEVICE = 100
    CUDA_ERROR_INVALID_PTX = 218
    CUDA_ERROR_NOT_FOUND = 500
    CUDA_ERROR_LAUNCH_FAILED = 719


class FakeDriver:
    """The part of cuda-python's driver module CudaRuntime uses."""

    CUresult = Result

    class CUdevice_attribute(enum.IntEnum):
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76

    class CUjit_option(enum.IntEnum):
        CU_JIT_INFO_LOG_BUFFER = 3
        CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
        CU_JIT_ERROR_LOG_BUFFER = 5
        CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6

    def __init__(self, entries: dict[str, P.EntryOp], capability: tuple[int, int] = (9, 0),
                 no_device: bool = False):
        self.entries = entries
        self.capability = capability
        self.no_device = no_device
        self.memory: dict[int, np.ndarray] = {}  # device address -> its bytes
        self.images: list[bytes] = []
        self.launches: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []
        self.fail_sync = False
        self.total_bytes = 1 << 40  # what cuMemAlloc refuses beyond (with what it holds)

    ok = (Result.CUDA_SUCCESS,)

    def cuInit(self, flags: int):
        return (Result.CUDA_ERROR_NO_DEVICE,) if self.no_device else self.ok

    def cuDeviceGet(self, ordinal: int):
        return Result.CUDA_SUCCESS, ordinal

    def cuDevicePrimaryCtxRetain(self, device: int):
        return Result.CUDA_SUCCESS, "context"

    def cuCtxSetCurrent(self, context: str):
        return self.ok

    def cuDeviceGetAttribute(self, attribute: int, device: int):
        major = attribute == self.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        return Result.CUDA_SUCCESS, self.capability[0 if major else 1]

    def cuDeviceGetName(self, length: int, device: int):
        return Result.CUDA_SUCCESS, b"Fake GPU\0\0\0"

    def cuGetErrorName(self, error: Result):
        return Result.CUDA_SUCCESS, Result(error).name.encode()

    def cuGetErrorString(self, error: Result):
        return Result.CUDA_SUCCESS, f"description of {Result(error).name}".encode()

    def cuDeviceTotalMem(self, device: int):
        return Result.CUDA_SUCCESS, self.total_bytes

    def cuMemGetInfo(self):
        held = sum(a.size for a in self.memory.values())
        return Result.CUDA_SUCCESS, self.total_bytes - held, self.total_bytes

    def cuMemAlloc(self, nbytes: int):
        if nbytes + sum(a.size for a in self.memory.values()) > self.total_bytes:
            return Result.CUDA_ERROR_OUT_OF_MEMORY, None
        data = np.zeros(nbytes, np.uint8)
        self.memory[data.ctypes.data] = data
        return Result.CUDA_SUCCESS, data.ctypes.data

    def cuMemFree(self, address: int):
        del self.memory[address]
        return self.ok

    def cuMemcpyHtoD(self, dst: int, src: int, nbytes: int):
        assert self.memory[dst].size >= nbytes
        ctypes.memmove(dst, src, nbytes)
        return self.ok

    def cuMemcpyDtoH(self, dst: int, src: int, nbytes: int):
        assert self.memory[src].size >= nbytes
        ctypes.memmove(dst, src, nbytes)
        return self.ok

    def cuModuleLoadDataEx(self, image: bytes, count: int, options: list, values: list):
        assert image.endswith(b"\0") and count == len(options) == len(values)
        self.images.append(image)
        if b"frobnicate" in image:
            log = values[options.index(self.CUjit_option.CU_JIT_ERROR_LOG_BUFFER)]
            line = image.decode().splitlines().index("\tfrobnicate.b32 %r1, %r0;") + 1
            message = f"ptxas application ptx input, line {line}; error   : Unknown\0".encode()
            log[: len(message)] = message
            return Result.CUDA_ERROR_INVALID_PTX, None
        return Result.CUDA_SUCCESS, image

    def cuModuleGetFunction(self, module: bytes, name: bytes):
        if f".entry {name.decode()}(".encode() not in module:
            return Result.CUDA_ERROR_NOT_FOUND, None
        return Result.CUDA_SUCCESS, name.decode()

    def cuModuleUnload(self, module: bytes):
        return self.ok

    def cuLaunchKernel(self, function: str, gx: int, gy: int, gz: int, bx: int, by: int,
                       bz: int, shared: int, stream: int, params: int, extra: int):
        entry = self.entries[function]
        assert (gx, gy, gz) == entry.grid_dims and (bx, by, bz) == entry.block_dims
        n = len(entry.args)
        pointers = (ctypes.c_void_p * n).from_address(params)
        addresses = [ctypes.c_uint64.from_address(p).value for p in pointers]
        self.launches.append((function, (gx, gy, gz), (bx, by, bz)))
        run_entry(entry, [self.memory[a] for a in addresses])
        return self.ok

    def cuCtxSynchronize(self):
        return (Result.CUDA_ERROR_LAUNCH_FAILED,) if self.fail_sync else self.ok


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeDriver:
    """A fake driver, and `get_device("CUDA")` a runtime over it."""
    module = lowered_program()
    driver = FakeDriver({op.sym_name.data: op for op in module.ops
                         if isinstance(op, P.EntryOp)})
    monkeypatch.setitem(registry._INSTANCES, "CUDA", CudaRuntime(driver=driver))
    return driver


def test_runtime_over_the_fake_driver(fake: FakeDriver) -> None:
    runtime = registry.get_device("CUDA")
    assert isinstance(runtime, CudaRuntime)
    assert runtime.arch == "sm_90" and runtime.capability == (9, 0)
    assert runtime.device_name == "Fake GPU"
    buffer = runtime.allocate(5, np.dtype(np.int16))
    runtime.copy_in(buffer, np.arange(5))
    np.testing.assert_array_equal(runtime.copy_out(buffer), np.arange(5, dtype=np.int16))
    with pytest.raises(DeviceError, match="6 elements into a buffer of 5"):
        runtime.copy_in(buffer, np.arange(6))
    runtime.free(buffer)
    assert not fake.memory


def test_program_runs_on_the_fake_driver(fake: FakeDriver) -> None:
    """compile_module(.., "ptx"): PTX retargeted for the device, kernels found by name,
    grid and block from the entries, device addresses as parameters, buffers given back to
    the device's pool: a second run allocates nothing, clearing the pool frees everything."""
    program = compile_module(lowered_program(), "ptx")
    x = np.linspace(-3, 3, 300, dtype=np.float32)
    y = np.arange(300, dtype=np.float32)
    (got,) = program.run([x, y])
    np.testing.assert_array_equal(got, (x * 2 + y) * 2 + y)
    assert b".version 7.8\n.target sm_90\n" in fake.images[-1]
    assert fake.launches == [("axpy", (3, 1, 1), (128, 1, 1))] * 2
    held = dict(fake.memory)
    assert held  # idle in the pool
    (again,) = program.run([y, x])
    np.testing.assert_array_equal(again, (y * 2 + x) * 2 + x)
    assert fake.memory.keys() == held.keys()  # the same device buffers, nothing new
    pool_of(registry.get_device("CUDA")).clear()
    assert not fake.memory


def test_jit_errors_carry_the_log_the_kernel_and_the_lines(fake: FakeDriver) -> None:
    runtime = registry.get_device("CUDA")
    with pytest.raises(CompileError) as info:
        runtime.compile(BROKEN_PTX)
    message = str(info.value)
    assert message.startswith("the CUDA driver rejected the PTX for sm_90 "
                              "(CUDA_ERROR_INVALID_PTX: description of CUDA_ERROR_INVALID_PTX)"
                              " (kernel broken)")
    assert "line 18: \tfrobnicate.b32 %r1, %r0;" in message
    assert "ptxas application ptx input, line 18; error" in info.value.log
    assert info.value.source_path is not None
    with open(info.value.source_path) as f:
        assert ".target sm_90" in f.read()
    os.unlink(info.value.source_path)


def test_unknown_kernel_and_failed_launches_are_named(fake: FakeDriver) -> None:
    runtime = registry.get_device("CUDA")
    binary = runtime.compile(module_to_ptx(lowered_program()))
    with pytest.raises(DeviceError, match=r"no kernel 'nope'.*CUDA_ERROR_NOT_FOUND"):
        runtime.load(binary, "nope", 3)
    kernel = runtime.load(binary, "axpy", 3, ((3, 1, 1), (128, 1, 1)))
    buffers = [runtime.allocate(300, np.dtype(np.float32)) for _ in range(3)]
    for b in buffers:
        runtime.copy_in(b, np.zeros(300))
    with pytest.raises(DeviceError, match="kernel axpy takes 3 buffers, got 2"):
        kernel(*[runtime.kernel_arg(b) for b in buffers[:2]])
    runtime.launch(kernel, buffers)
    fake.fail_sync = True
    with pytest.raises(DeviceError, match=r"cuCtxSynchronize failed.*kernels since the last "
                                          r"synchronize: axpy.*CUDA_ERROR_LAUNCH_FAILED"):
        runtime.synchronize()


def test_no_device_is_a_device_error() -> None:
    with pytest.raises(DeviceError, match="cuInit failed: CUDA_ERROR_NO_DEVICE"):
        CudaRuntime(driver=FakeDriver({}, no_device=True))


def test_a_device_older_than_the_table_is_a_device_error() -> None:
    with pytest.raises(DeviceError, match=r"compute capability 7\.0 is older"):
        CudaRuntime(driver=FakeDriver({}, capability=(7, 0)))


# ── on a GPU ─────────────────────────────────────────────────────────────────


@pytest.mark.skipif(NO_GPU is not None, reason=f"no CUDA device: {NO_GPU}")
def test_program_runs_on_the_gpu() -> None:
    program = compile_module(lowered_program(), "ptx")
    x = np.linspace(-3, 3, 300, dtype=np.float32)
    y = np.arange(300, dtype=np.float32)
    (got,) = program.run([x, y])
    np.testing.assert_array_equal(got, (x * 2 + y) * 2 + y)


def test_out_of_device_memory_is_a_typed_error_naming_the_sizes(fake: FakeDriver) -> None:
    """CUDA_ERROR_OUT_OF_MEMORY from cuMemAlloc is OutOfMemoryError (still a MemoryError)
    naming the request and the device's free and total memory; other failures stay
    DeviceError. cuDeviceTotalMem is the runtime's total_memory."""
    runtime = registry.get_device("CUDA")
    assert isinstance(runtime, CudaRuntime)
    fake.total_bytes = 4096
    assert runtime.total_memory() == 4096
    held = runtime.allocate(1000, np.dtype(np.float32))
    with pytest.raises(OutOfMemoryError, match=r"CUDA: out of memory: cuMemAlloc of 100 x "
                                               r"float32 \(400 bytes\) failed; the device has "
                                               r"96 of its 4,096 bytes free"):
        runtime.allocate(100, np.dtype(np.float32))
    runtime.free(held)
    other = runtime.allocation_error(Result.CUDA_ERROR_INVALID_VALUE, 1, np.dtype(np.int8), 1)
    assert type(other) is DeviceError and "CUDA_ERROR_INVALID_VALUE" in str(other)


def test_a_run_out_of_device_memory_frees_the_idle_pool_first(fake: FakeDriver) -> None:
    """The pool gives its idle buffers back to the driver and tries once more before the
    allocation fails; a run that still does not fit is an OutOfMemoryError."""
    program = compile_module(lowered_program(), "ptx")
    x = np.linspace(-3, 3, 300, dtype=np.float32)
    program.run([x, x])
    held = sum(a.size for a in fake.memory.values())
    assert held  # idle in the pool
    runtime = registry.get_device("CUDA")
    fake.total_bytes = held + 1200  # a new 300-element buffer fits only without the pool
    runtime.allocate(300, np.dtype(np.float32))  # takes the spare room
    pool = pool_of(runtime)
    pool.take(301, np.dtype(np.float32))  # no idle buffer of that size: the pool is freed
    assert pool.stats().idle_buffers == 0
    fake.total_bytes = 0
    with pytest.raises(OutOfMemoryError, match="out of memory"):
        program.run([x, x])
