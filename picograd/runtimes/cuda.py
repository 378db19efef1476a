"""CUDA runtime: NVIDIA GPUs through PTX and the CUDA driver API (cuda-python).

    CudaRuntime()            device 0; DeviceError when cuda-python, the driver or a GPU is
                             missing (the reason is in the message)
    runtime.arch             the PTX target used on this device, e.g. "sm_90"
    compile(ptx) -> CudaModule        cuModuleLoadDataEx (the driver JIT-compiles the PTX)
    load(module, name, n, (grid, block)) -> kernel(*device_addresses)   cuLaunchKernel

Buffers are `cuMemAlloc` allocations (`CudaBuffer`); a kernel is called with their device
addresses (`kernel_arg` is the address), one 64-bit parameter each, as the PTX entries of
`picograd.lowering.ptx.printer` declare them. Launches are asynchronous; `copy_out` and
`synchronize` wait for them.

Retargeting. `compile` takes PTX rendered for any architecture of
`ptx_source.PTX_ISA_VERSIONS` (the renderer's default is sm_80) and rewrites its `.version`
and `.target` lines for `self.arch` (`retarget_ptx`): the newest architecture of the table
that the device's compute capability runs. The statements picograd emits are the same for
every target, so that is the only difference, and the driver gets PTX tuned for the GPU it
runs on.

Errors carry the driver's error name and string. An allocation the device has no memory for
(CUDA_ERROR_OUT_OF_MEMORY) is an `OutOfMemoryError` naming the request and the device's
free and total memory (`allocation_error`); `total_memory` is cuDeviceTotalMem. A PTX the
driver refuses raises `CompileError` with the JIT error log, the kernel it names and the
offending PTX lines (`ptxas.describe_ptx_failure`), and keeps the PTX in a file; a failed
launch names the kernel and its grid and block; an asynchronous failure found by
`synchronize` names the kernels launched since the previous one.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np

from picograd.errors import CompileError, DeviceError, OutOfMemoryError
from picograd.lowering.ptx.printer import arch_for_capability, retarget_ptx
from picograd.runtimes.base import Kernel, Launch, Runtime, write_failed_source
from picograd.runtimes.ptxas import check_ptx, describe_ptx_failure, ptxas_path
from picograd.runtimes.toolchain import version_output

JIT_LOG_BYTES = 16384


def load_driver() -> Any:
    """cuda-python's driver module (`cuda.bindings.driver`, or `cuda.cuda` before 12.6)."""
    try:
        from cuda.bindings import driver  # pyright: ignore[reportMissingImports]

        return driver
    except ImportError:
        pass
    try:
        from cuda import cuda as driver  # pyright: ignore

        return driver
    except ImportError as e:
        raise DeviceError("device CUDA needs cuda-python (`pip install cuda-python`), which "
                          f"is not installed: {e}") from None


@dataclass
class CudaBuffer:
    """`size` elements of `dtype` in device memory at `address`."""

    handle: Any  # the driver's CUdeviceptr
    address: int
    size: int
    dtype: np.dtype

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize


class CudaModule:
    """A loaded PTX module; unloaded when it is garbage-collected."""

    def __init__(self, runtime: CudaRuntime, handle: Any, source: str):
        self.runtime = runtime
        self.handle = handle
        self.source = source  # the PTX as the driver got it

    def __del__(self) -> None:
        # Interpreter shutdown, or a context that is gone already: nothing left to free. No
        # `contextlib.suppress`: at shutdown module globals may already be None (seen on an
        # H200: "'NoneType' object has no attribute 'suppress'" for every loaded module).
        try:  # noqa: SIM105
            self.runtime.driver.cuModuleUnload(self.handle)
        except Exception:
            pass


class CudaRuntime(Runtime[CudaBuffer, CudaModule]):
    """Device `ordinal`'s primary context. `driver` replaces cuda-python's driver module
    (tests pass a fake)."""

    device = "CUDA"
    renderer = "ptx"

    def __init__(self, ordinal: int = 0, driver: Any | None = None):
        self.driver = driver if driver is not None else load_driver()
        self._pending: list[str] = []  # kernels launched since the last synchronize
        try:
            self._call("cuInit", 0)
            self.cu_device = self._call("cuDeviceGet", ordinal)
            self.context = self._call("cuDevicePrimaryCtxRetain", self.cu_device)
            self._call("cuCtxSetCurrent", self.context)
            attribute = self.driver.CUdevice_attribute
            major = self._call("cuDeviceGetAttribute",
                               attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                               self.cu_device)
            minor = self._call("cuDeviceGetAttribute",
                               attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                               self.cu_device)
            raw_name = self._call("cuDeviceGetName", 256, self.cu_device)
        except DeviceError as e:
            raise DeviceError(f"device CUDA is not available: {e}") from None
        except Exception as e:  # e.g. libcuda.so cannot be loaded
            raise DeviceError(f"device CUDA is not available: the CUDA driver failed: "
                              f"{type(e).__name__}: {e}") from None
        self.capability = (int(major), int(minor))
        self.arch = arch_for_capability(*self.capability)
        name = raw_name if isinstance(raw_name, bytes | bytearray) else str(raw_name).encode()
        self.device_name = bytes(name).split(b"\0", 1)[0].decode(errors="replace")

    # ── driver calls ────────────────────────────────────────────────────────

    def _error_text(self, error: Any) -> str:
        """`CUDA_ERROR_X: the driver's description` for a CUresult."""
        texts = []
        for getter in ("cuGetErrorName", "cuGetErrorString"):
            try:
                status, text = getattr(self.driver, getter)(error)
                ok = status == self.driver.CUresult.CUDA_SUCCESS
                texts.append(text.decode() if ok and isinstance(text, bytes) else str(error))
            except Exception:
                texts.append(str(error))
        return texts[0] if texts[0] == texts[1] else f"{texts[0]}: {texts[1]}"

    def _status(self, function: str, *args: Any) -> tuple[Any, tuple[Any, ...]]:
        """Call a driver function: (CUresult, its other results)."""
        result = getattr(self.driver, function)(*args)
        if not isinstance(result, tuple):
            result = (result,)
        return result[0], result[1:]

    def _failed(self, status: Any) -> bool:
        return status != self.driver.CUresult.CUDA_SUCCESS

    def _call(self, function: str, *args: Any, context: str = "") -> Any:
        """Call a driver function; DeviceError naming it and the error if it fails. Returns
        its one result (None if it has none, a tuple if several)."""
        status, values = self._status(function, *args)
        if self._failed(status):
            where = f" ({context})" if context else ""
            raise DeviceError(f"{function} failed{where}: {self._error_text(status)}")
        if not values:
            return None
        return values[0] if len(values) == 1 else values

    # ── memory ──────────────────────────────────────────────────────────────

    def allocate(self, size: int, dtype: np.dtype) -> CudaBuffer:
        dtype = np.dtype(dtype)
        nbytes = max(size * dtype.itemsize, 1)  # cuMemAlloc refuses 0 bytes
        status, values = self._status("cuMemAlloc", nbytes)
        if self._failed(status):
            raise self.allocation_error(status, size, dtype, nbytes)
        handle = values[0]
        return CudaBuffer(handle, int(handle), size, dtype)

    def allocation_error(self, status: Any, size: int, dtype: np.dtype,
                         nbytes: int) -> DeviceError:
        """The error for a failed cuMemAlloc: `OutOfMemoryError` naming the request and the
        device's free and total memory for CUDA_ERROR_OUT_OF_MEMORY, else DeviceError."""
        what = f"cuMemAlloc of {size:,} x {dtype} ({nbytes:,} bytes)"
        if status != getattr(self.driver.CUresult, "CUDA_ERROR_OUT_OF_MEMORY", None):
            return DeviceError(f"{what} failed: {self._error_text(status)}")
        try:
            free, total = self._call("cuMemGetInfo")
            held = f"; the device has {int(free):,} of its {int(total):,} bytes free"
        except Exception:  # the context may be unusable after the failure: say less
            held = ""
        return OutOfMemoryError(f"CUDA: out of memory: {what} failed{held} "
                                f"({self._error_text(status)})")

    def total_memory(self) -> int | None:
        """cuDeviceTotalMem: the GPU's memory in bytes (None if the driver cannot say)."""
        try:
            return int(self._call("cuDeviceTotalMem", self.cu_device))
        except Exception:
            return None

    def free(self, buffer: CudaBuffer) -> None:
        self._call("cuMemFree", buffer.handle)

    def copy_in(self, buffer: CudaBuffer, host: np.ndarray) -> None:
        if np.size(host) != buffer.size:
            raise DeviceError(f"copy_in: {np.size(host)} elements into a buffer of "
                              f"{buffer.size}")
        array = np.ascontiguousarray(np.reshape(host, -1), dtype=buffer.dtype)
        if buffer.nbytes:
            self._call("cuMemcpyHtoD", buffer.handle, array.ctypes.data, buffer.nbytes)

    def copy_out(self, buffer: CudaBuffer) -> np.ndarray:
        out = np.empty(buffer.size, buffer.dtype)
        if buffer.nbytes:  # synchronous: waits for the kernels that write the buffer
            self._call("cuMemcpyDtoH", out.ctypes.data, buffer.handle, buffer.nbytes,
                       context=self._launched())
            self._pending.clear()
        return out

    def address(self, buffer: CudaBuffer) -> int:
        return buffer.address

    # ── code ────────────────────────────────────────────────────────────────

    def compile(self, source: str) -> CudaModule:
        ptx = retarget_ptx(source, self.arch)
        status, handle, log = self._load_ptx(ptx.encode() + b"\0")
        if not self._failed(status):
            return CudaModule(self, handle, ptx)
        if not log.strip() and ptxas_path() is not None:
            try:  # the driver gave no log: ptxas says the same thing, with line numbers
                check_ptx(ptx, self.arch)
            except CompileError as e:
                log = e.log
        kept = write_failed_source(ptx, ".ptx")
        headline = (f"the CUDA driver rejected the PTX for {self.arch} "
                    f"({self._error_text(status)})")
        raise CompileError(describe_ptx_failure(ptx, log, headline), log=log, source_path=kept)

    def _load_ptx(self, image: bytes) -> tuple[Any, Any, str]:
        """cuModuleLoadDataEx with JIT error and info log buffers: (status, module, log)."""
        option = self.driver.CUjit_option
        options = [option.CU_JIT_ERROR_LOG_BUFFER, option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   option.CU_JIT_INFO_LOG_BUFFER, option.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES]
        # The driver writes the logs into the buffers (char* options); cuda-python releases
        # differ in which Python objects they take for them.
        for make_buffer in (bytearray, lambda n: b"\0" * n):
            error_log, info_log = make_buffer(JIT_LOG_BYTES), make_buffer(JIT_LOG_BYTES)
            values = [error_log, JIT_LOG_BYTES, info_log, JIT_LOG_BYTES]
            try:
                status, result = self._status("cuModuleLoadDataEx", image, len(options),
                                              options, values)
            except TypeError:
                continue
            log = "\n".join(bytes(b).split(b"\0", 1)[0].decode(errors="replace").strip()
                            for b in (error_log, info_log))
            return status, result[0] if result else None, log.strip()
        status, result = self._status("cuModuleLoadDataEx", image, 0, [], [])
        return status, result[0] if result else None, ""

    def load(self, binary: CudaModule, name: str, num_args: int, launch: Launch | None = None
             ) -> Kernel:
        try:
            function = self._call("cuModuleGetFunction", binary.handle, name.encode())
        except DeviceError as e:
            raise DeviceError(f"no kernel {name!r} in the loaded PTX module: {e}") from None
        grid, block = launch if launch is not None else ((1, 1, 1), (1, 1, 1))
        where = f"kernel {name}, grid {list(grid)}, block {list(block)}"

        def kernel(*addresses: int) -> None:
            if len(addresses) != num_args:
                raise DeviceError(f"kernel {name} takes {num_args} buffers, got "
                                  f"{len(addresses)}")
            # kernelParams: an array of pointers, each to one 64-bit argument value.
            values = (ctypes.c_uint64 * max(num_args, 1))(*addresses)
            base = ctypes.addressof(values)
            pointers = (ctypes.c_void_p * max(num_args, 1))(
                *[base + 8 * i for i in range(num_args)])
            self._call("cuLaunchKernel", function, *grid, *block, 0, 0,
                       ctypes.addressof(pointers) if num_args else 0, 0, context=where)
            self._pending.append(name)

        return kernel

    def toolchain_fingerprint(self) -> str:
        """The driver compiles the PTX when it loads it: its version, the card's arch and
        the ptxas that checks the PTX."""
        version = self._call("cuDriverGetVersion") if hasattr(self.driver, "cuDriverGetVersion") \
            else "?"
        ptxas = ptxas_path()
        return (f"cuda driver {version} {self.arch} "
                f"{version_output([ptxas, '--version']) if ptxas else 'no ptxas'}")

    def synchronize(self) -> None:
        self._call("cuCtxSynchronize", context=self._launched())
        self._pending.clear()

    def _launched(self) -> str:
        if not self._pending:
            return ""
        return "a kernel launched before failed; kernels since the last synchronize: " + \
            ", ".join(dict.fromkeys(self._pending))


__all__ = ["CudaBuffer", "CudaModule", "CudaRuntime", "load_driver"]
