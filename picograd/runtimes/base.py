"""The interface every device runtime implements.

A runtime owns one device's memory (allocate / free / copy in / copy out), turns rendered
source into something runnable (compile -> binary, load -> kernel), launches kernels on
buffers and waits for them (synchronize), and names the toolchain its binaries depend on
(`toolchain_fingerprint`, part of every disk-cache key). `picograd.runtimes.program` builds
on it; `picograd.runtimes.registry` finds a runtime by device name.

A runtime whose device or driver is missing raises `DeviceError` when it is constructed, so
`get_device("CUDA")` on a machine without a GPU says why.
"""

from __future__ import annotations

import functools
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

    def total_memory(self) -> int | None:
        """The device's memory in bytes (what no tensor of it can exceed), or None when the
        runtime cannot tell."""
        return None

    @abstractmethod
    def toolchain_fingerprint(self) -> str:
        """The versions of the tools that turn this runtime's source into machine code and
        the machine that code is made for: a compiled artefact kept on disk is reused only
        under the same fingerprint."""


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

    def total_memory(self) -> int | None:
        return host_memory()


@functools.cache
def host_memory() -> int | None:
    """The host's physical memory in bytes (sysconf, else /proc/meminfo), None if unknown."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # no such sysconf name on this system
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def write_failed_source(source: str, suffix: str) -> str:
    """Keep the source a compiler rejected in a temporary file and return its path."""
    fd, path = tempfile.mkstemp(prefix="picograd-failed-", suffix=suffix)
    with os.fdopen(fd, "w") as f:
        f.write(source)
    return path
