"""The interface every device runtime implements, and the registry that finds them by name.

A runtime owns one device's memory (allocate / free / copy in / copy out), turns rendered
source into something runnable (compile -> binary, load -> kernel), launches kernels on
buffers and waits for them (synchronize). `picograd.runtimes.program` builds on it.

Device names (case-insensitive):

    CPU        the CPU with the renderer chosen by PG_CPU_RENDERER (llvm, the default, or c)
    CPU:LLVM   the CPU through LLVM IR and llvmlite's MCJIT        (renderer "llvm")
    CPU:C      the CPU through C source and the system C compiler  (renderer "c")
    CUDA       an NVIDIA GPU through PTX and the CUDA driver        (renderer "ptx")
    WEBGPU     a WebGPU adapter through WGSL (wgpu; Mesa's software Vulkan without a GPU)
                                                                    (renderer "wgsl")

A runtime whose device or driver is missing raises `DeviceError` when it is constructed, so
`get_device("CUDA")` on a machine without a GPU says why.
"""

from __future__ import annotations

import os
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import ClassVar, Generic, TypeVar

import numpy as np

from picograd.errors import DeviceError

BufferT = TypeVar("BufferT")
BinaryT = TypeVar("BinaryT")

# A loaded kernel: called with one `Runtime.kernel_arg(buffer)` per kernel argument (a device
# address on the CPU, a buffer object on WebGPU).
Kernel = Callable[..., None]

# (grid, block): work groups per dimension and work items per group, for GPU kernels.
Launch = tuple[tuple[int, int, int], tuple[int, int, int]]


class Runtime(ABC, Generic[BufferT, BinaryT]):
    """One device. Subclasses set `device` ("CPU") and `renderer` (the `compile_module`
    target and the pipeline's last stage: "llvm", "c", ...)."""

    device: ClassVar[str]
    renderer: ClassVar[str]

    @property
    def name(self) -> str:
        return f"{self.device}:{self.renderer.upper()}"

    # ── memory ──────────────────────────────────────────────────────────────

    @abstractmethod
    def allocate(self, size: int, dtype: np.dtype) -> BufferT:
        """A buffer of `size` elements of `dtype` (contents undefined)."""

    @abstractmethod
    def free(self, buffer: BufferT) -> None: ...

    @abstractmethod
    def copy_in(self, buffer: BufferT, host: np.ndarray) -> None:
        """Copy `host` (any shape, as many elements as the buffer) into `buffer`."""

    @abstractmethod
    def copy_out(self, buffer: BufferT) -> np.ndarray:
        """A new flat host array holding the buffer's contents."""

    @abstractmethod
    def address(self, buffer: BufferT) -> int:
        """The device address a kernel receives for `buffer`."""

    # ── code ────────────────────────────────────────────────────────────────

    @abstractmethod
    def compile(self, source: str) -> BinaryT:
        """Compile rendered source (all kernels of a graph). Raises `CompileError`."""

    @abstractmethod
    def load(self, binary: BinaryT, name: str, num_args: int, launch: Launch | None = None
             ) -> Kernel:
        """The kernel `name` of `binary`, callable with `num_args` kernel arguments
        (`kernel_arg`), launched over `launch` = (grid, block) on a GPU (CPU kernels loop
        over their ranges themselves and ignore it). The caller keeps `binary` alive as
        long as the kernel is used."""

    def kernel_arg(self, buffer: BufferT) -> object:
        """What a loaded kernel is called with for `buffer` (its device address)."""
        return self.address(buffer)

    def launch(self, kernel: Kernel, args: Sequence[BufferT]) -> None:
        kernel(*[self.kernel_arg(b) for b in args])

    def synchronize(self) -> None:
        """Wait until every launched kernel has finished (CPU launches are synchronous)."""


class HostRuntime(Runtime[np.ndarray, BinaryT]):
    """A runtime whose device memory is host memory: buffers are flat numpy arrays."""

    device = "CPU"

    def allocate(self, size: int, dtype: np.dtype) -> np.ndarray:
        return np.empty(size, dtype)

    def free(self, buffer: np.ndarray) -> None:
        """Nothing to do: numpy frees the array with its last reference."""

    def copy_in(self, buffer: np.ndarray, host: np.ndarray) -> None:
        if np.size(host) != buffer.size:
            raise DeviceError(f"copy_in: {np.size(host)} elements into a buffer of {buffer.size}")
        np.copyto(buffer, np.reshape(host, -1), casting="unsafe")

    def copy_out(self, buffer: np.ndarray) -> np.ndarray:
        return buffer.copy()

    def address(self, buffer: np.ndarray) -> int:
        return buffer.ctypes.data


def write_failed_source(source: str, suffix: str) -> str:
    """Keep the source a compiler rejected in a temporary file and return its path."""
    fd, path = tempfile.mkstemp(prefix="picograd-failed-", suffix=suffix)
    with os.fdopen(fd, "w") as f:
        f.write(source)
    return path


# ── registry ─────────────────────────────────────────────────────────────────


def _cpu_llvm() -> type[Runtime]:
    from picograd.runtimes.cpu_llvm import CpuLlvmRuntime

    return CpuLlvmRuntime


def _cpu_c() -> type[Runtime]:
    from picograd.runtimes.cpu_c import CpuCRuntime

    return CpuCRuntime


def _cuda() -> type[Runtime]:
    from picograd.runtimes.cuda import CudaRuntime

    return CudaRuntime


def _webgpu() -> type[Runtime]:
    from picograd.runtimes.webgpu import WebGpuRuntime

    return WebGpuRuntime


# Imported lazily: naming a device loads only its runtime (and its dependencies).
_FACTORIES: dict[str, Callable[[], type[Runtime]]] = {
    "CPU:LLVM": _cpu_llvm, "CPU:C": _cpu_c, "CUDA": _cuda, "WEBGPU": _webgpu,
}
_INSTANCES: dict[str, Runtime] = {}
CPU_RENDERER_ENV = "PG_CPU_RENDERER"


def register_device(name: str, factory: Callable[[], type[Runtime]]) -> None:
    """Make `get_device(name)` build `factory()()` on first use."""
    _FACTORIES[name.upper()] = factory


def available_devices() -> list[str]:
    return sorted({"CPU", *_FACTORIES})


def canonical_device_name(name: str) -> str:
    """`cpu` -> `CPU:LLVM` (or `CPU:C` under PG_CPU_RENDERER=c), `cpu:c` -> `CPU:C`, ..."""
    key = name.strip().upper()
    if key == "CPU":
        renderer = os.environ.get(CPU_RENDERER_ENV, "llvm").strip().upper() or "LLVM"
        key = f"CPU:{renderer}"
        if key not in _FACTORIES:
            raise DeviceError(f"{CPU_RENDERER_ENV}={os.environ[CPU_RENDERER_ENV]!r} is not a CPU "
                              "renderer; use 'llvm' or 'c'")
    if key not in _FACTORIES:
        raise DeviceError(f"unknown device {name!r}; available: {', '.join(available_devices())}")
    return key


def get_device(name: str) -> Runtime:
    """The runtime of device `name` (one shared instance per canonical name).

    Raises `DeviceError` for an unknown name, or for a known device that is not present
    (its runtime's package, driver or adapter is missing: the message says which).
    """
    key = canonical_device_name(name)
    runtime = _INSTANCES.get(key)
    if runtime is None:
        try:
            cls = _FACTORIES[key]()
        except ImportError as e:
            raise DeviceError(f"device {key} needs a package that is not installed: {e}") from e
        runtime = _INSTANCES[key] = cls()
    return runtime
