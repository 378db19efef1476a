"""WebGPU runtime: WGSL compute shaders run through wgpu (wgpu-native over Vulkan, Metal or
D3D12; Mesa's software Vulkan adapter, llvmpipe, where there is no GPU).

    runtime = WebGpuRuntime()                      # DeviceError if wgpu or an adapter is missing
    shader = runtime.compile(module_to_wgsl(m))    # CompileError: wgpu's message + WGSL lines
    k0 = runtime.load(shader, "k0", 2, ((4, 1, 1), (64, 1, 1)))   # grid, block
    runtime.launch(k0, [a, out]); runtime.synchronize()

* The adapter and device are created once per process (both are slow to create) and shared
  by every `WebGpuRuntime`. The device asks for the adapter's own limits on storage
  buffers, buffer sizes and workgroups instead of WebGPU's small defaults.
* Buffers are storage buffers (`WebGpuBuffer`: the GPU buffer, its element count and host
  dtype). Bool elements are stored as u32 (bool is not host-shareable in WGSL), float16 as
  float32 and int8, uint8, int16 as int32 (the types WGSL lacks are emulated, one element
  per 32-bit word: see `picograd/lowering/wgsl/printer.py`), so every element is 4 bytes;
  `copy_in`/`copy_out` convert (exactly: the kernels keep every element within its type).
  A buffer larger than the adapter allows (`buffer_limit`) is an `OutOfMemoryError` naming
  the sizes and the limit, before wgpu is asked.
* A kernel is a compute pipeline for one entry point of the shader module, with a layout
  that binds exactly its `num_args` buffers at bindings 0..n-1 of group 0 (an explicit
  layout rather than "auto", so an argument the kernel never touches is still accepted).
  Calling it with buffers records one dispatch of `grid` work groups and submits it; the
  bind group of each tuple of buffers is cached. Submissions run in order, so a launch
  sees the writes of the ones before it; `synchronize` waits for all of them.
"""

from __future__ import annotations

import atexit
import functools
import itertools
import os
import re
import shutil
import stat
import tempfile
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from picograd.errors import CompileError, DeviceError, OutOfMemoryError
from picograd.runtimes.base import Kernel, Launch, Runtime, host_memory, write_failed_source

# Adapter limits the device asks for (WebGPU's defaults are far lower than any adapter's).
RAISED_LIMITS = (
    "max-storage-buffers-per-shader-stage",
    "max-storage-buffer-binding-size",
    "max-buffer-size",
    "max-bindings-per-bind-group",
    "max-compute-workgroup-storage-size",
    "max-compute-invocations-per-workgroup",
    "max-compute-workgroup-size-x",
    "max-compute-workgroup-size-y",
    "max-compute-workgroup-size-z",
    "max-compute-workgroups-per-dimension",
)
# Host dtypes a buffer may hold, and the 32-bit word each element is stored as: WGSL's
# scalars, bools (u32), and the emulated narrow types (widened).
_STORAGE = {np.dtype(np.float32): np.dtype(np.float32), np.dtype(np.int32): np.dtype(np.int32),
            np.dtype(np.bool_): np.dtype(np.uint32), np.dtype(np.float16): np.dtype(np.float32),
            np.dtype(np.int8): np.dtype(np.int32), np.dtype(np.uint8): np.dtype(np.int32),
            np.dtype(np.int16): np.dtype(np.int32)}
_BIND_GROUPS_PER_KERNEL = 64  # cached bind groups (tuples of buffers) per kernel
_SOURCE_LINE = re.compile(r"┌─ [^:\s]*:(\d+):(\d+)")


@dataclass(frozen=True)
class Gpu:
    """The process-wide wgpu adapter and device."""

    wgpu: Any  # the wgpu module
    adapter: Any
    device: Any

    @property
    def description(self) -> str:
        info = self.adapter.info
        return f"{info.get('device', '?')} ({info.get('backend_type', '?')})"


def _runtime_dir() -> str:
    """One private runtime directory per user, shared by every process (a directory per
    process would be left behind by each). One that another user owns, or that is not a
    private directory, is not trusted: then a fresh one, removed at exit."""
    path = os.path.join(tempfile.gettempdir(), f"picograd-xdg-{os.getuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return _temporary_dir()
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return _temporary_dir()
    return path


def _temporary_dir() -> str:
    path = tempfile.mkdtemp(prefix="picograd-xdg-")
    atexit.register(shutil.rmtree, path, True)
    return path


@functools.cache
def gpu() -> Gpu:
    """The WebGPU adapter and device of this process; DeviceError saying why there is none."""
    try:
        import wgpu
    except ImportError as e:
        raise DeviceError(f"WEBGPU needs the 'wgpu' package (pip install wgpu): {e}") from e
    # The Vulkan loader complains on stderr without a runtime directory; give it one.
    if not os.path.isdir(os.environ.get("XDG_RUNTIME_DIR", "")):
        os.environ["XDG_RUNTIME_DIR"] = _runtime_dir()
    try:
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    except Exception as e:  # wgpu-native reports a missing driver as a plain RuntimeError
        raise DeviceError(f"WEBGPU: no WebGPU adapter ({e}); without a GPU install a software "
                          "Vulkan driver (mesa-vulkan-drivers, see "
                          "scripts/install_system_deps.sh)") from e
    if adapter is None:
        raise DeviceError("WEBGPU: wgpu found no adapter; without a GPU install a software "
                          "Vulkan driver (mesa-vulkan-drivers, see scripts/install_system_deps.sh)")
    limits = {k: adapter.limits[k] for k in RAISED_LIMITS if k in adapter.limits}
    try:
        device = adapter.request_device_sync(label="picograd", required_limits=limits)
    except Exception as e:
        raise DeviceError(f"WEBGPU: the adapter refused a device: {e}") from e
    return Gpu(wgpu, adapter, device)


_serials = itertools.count()


@dataclass(eq=False)
class WebGpuBuffer:
    """A storage buffer of `size` elements of host dtype `dtype` (4 bytes each)."""

    buffer: Any  # wgpu.GPUBuffer
    size: int
    dtype: np.dtype
    serial: int = field(default_factory=lambda: next(_serials))  # a key that is never reused

    @property
    def nbytes(self) -> int:
        return self.size * 4


@dataclass(frozen=True)
class WebGpuShader:
    """A compiled WGSL module and its source (for the messages of later failures)."""

    module: Any  # wgpu.GPUShaderModule
    source: str


class WebGpuKernel:
    """One entry point as a compute pipeline; calling it dispatches `grid` work groups."""

    def __init__(self, gpu: Gpu, pipeline: Any, layout: Any, name: str, num_args: int,
                 grid: tuple[int, int, int]):
        self.gpu, self.pipeline, self.layout = gpu, pipeline, layout
        self.name, self.num_args, self.grid = name, num_args, grid
        self._bind_groups: OrderedDict[tuple[int, ...], Any] = OrderedDict()

    def __call__(self, *buffers: WebGpuBuffer) -> None:
        if len(buffers) != self.num_args:
            raise DeviceError(f"kernel {self.name!r} takes {self.num_args} buffers, "
                              f"got {len(buffers)}")
        device = self.gpu.device
        encoder = device.create_command_encoder()
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(self.pipeline)
        if buffers:
            compute.set_bind_group(0, self._bind_group(buffers))
        compute.dispatch_workgroups(*self.grid)
        compute.end()
        device.queue.submit([encoder.finish()])

    def _bind_group(self, buffers: Sequence[WebGpuBuffer]) -> Any:
        key = tuple(b.serial for b in buffers)
        group = self._bind_groups.get(key)
        if group is not None:
            self._bind_groups.move_to_end(key)
            return group
        entries = [{"binding": i, "resource": {"buffer": b.buffer, "offset": 0,
                                               "size": b.buffer.size}}
                   for i, b in enumerate(buffers)]
        group = self.gpu.device.create_bind_group(layout=self.layout, entries=entries)
        self._bind_groups[key] = group
        if len(self._bind_groups) > _BIND_GROUPS_PER_KERNEL:
            self._bind_groups.popitem(last=False)
        return group


def _offending_lines(message: str, source: str) -> str:
    """The WGSL lines a wgpu message points at, numbered, for the CompileError."""
    lines = source.splitlines()
    numbers = sorted({int(m.group(1)) for m in _SOURCE_LINE.finditer(message)})
    shown = [f"{n:5} | {lines[n - 1]}" for n in numbers if 0 < n <= len(lines)]
    return "offending WGSL lines:\n" + "\n".join(shown) if shown else ""


class WebGpuRuntime(Runtime[WebGpuBuffer, WebGpuShader]):
    """Device "WEBGPU": WGSL through wgpu."""

    device = "WEBGPU"
    renderer = "wgsl"

    def __init__(self) -> None:
        self.gpu = gpu()
        self._usage = (self.gpu.wgpu.BufferUsage.STORAGE | self.gpu.wgpu.BufferUsage.COPY_SRC
                       | self.gpu.wgpu.BufferUsage.COPY_DST)
        self._fence: WebGpuBuffer | None = None  # what `synchronize` reads back

    # ── memory ──────────────────────────────────────────────────────────────

    def allocate(self, size: int, dtype: np.dtype) -> WebGpuBuffer:
        dtype = np.dtype(dtype)
        if dtype not in _STORAGE:
            raise DeviceError(f"WEBGPU buffers hold float32, int32, bool, float16, int8, uint8 "
                              f"or int16, not {dtype} (WGSL has no 64-bit scalars)")
        nbytes = max(4, size * 4)  # WebGPU refuses empty bindings
        limit, name = self.buffer_limit()
        if nbytes > limit:
            raise OutOfMemoryError(
                f"WEBGPU: out of memory: a buffer of {size:,} x {dtype} ({nbytes:,} bytes: 4 "
                f"per element) exceeds the adapter's {name} of {limit:,} bytes")
        try:
            buffer = self.gpu.device.create_buffer(label="picograd", size=nbytes,
                                                   usage=self._usage)
        except self.gpu.wgpu.GPUError as e:  # the driver's own allocation failed
            raise OutOfMemoryError(f"WEBGPU: out of memory: a buffer of {size:,} x {dtype} "
                                   f"({nbytes:,} bytes) could not be created: {e}") from None
        return WebGpuBuffer(buffer, size, dtype)

    def buffer_limit(self) -> tuple[int, str]:
        """The most bytes one buffer may hold, and the limit's name: every buffer is bound
        whole as a storage buffer, so the smaller of max-buffer-size and
        max-storage-buffer-binding-size (128 MiB on llvmpipe)."""
        limits = self.gpu.device.limits
        return min((limits[k], k) for k in ("max-buffer-size", "max-storage-buffer-binding-size"))

    def total_memory(self) -> int | None:
        """A CPU adapter (llvmpipe) uses host memory; wgpu does not report a GPU's."""
        return host_memory() if self.gpu.adapter.info.get("adapter_type") == "CPU" else None

    def free(self, buffer: WebGpuBuffer) -> None:
        buffer.buffer.destroy()

    def copy_in(self, buffer: WebGpuBuffer, host: np.ndarray) -> None:
        if np.size(host) != buffer.size:
            raise DeviceError(f"copy_in: {np.size(host)} elements into a buffer of {buffer.size}")
        if buffer.size == 0:
            return
        flat = np.reshape(np.asarray(host), -1)
        if buffer.dtype == np.bool_:
            flat = flat.astype(np.bool_)  # any nonzero value is true, as on the host runtimes
        data = np.ascontiguousarray(flat.astype(_STORAGE[buffer.dtype], copy=False))
        self.gpu.device.queue.write_buffer(buffer.buffer, 0, data)

    def copy_out(self, buffer: WebGpuBuffer) -> np.ndarray:
        if buffer.size == 0:
            return np.empty(0, buffer.dtype)
        data = self.gpu.device.queue.read_buffer(buffer.buffer, 0, buffer.nbytes)
        stored = np.frombuffer(data, _STORAGE[buffer.dtype])
        return stored != 0 if buffer.dtype == np.bool_ else stored.astype(buffer.dtype)

    def address(self, buffer: WebGpuBuffer) -> int:
        raise DeviceError("WEBGPU buffers have no device address: kernels take the buffers "
                          "themselves (Runtime.kernel_arg)")

    def kernel_arg(self, buffer: WebGpuBuffer) -> object:
        return buffer

    # ── code ────────────────────────────────────────────────────────────────

    def toolchain_fingerprint(self) -> str:
        return f"wgpu {self.gpu.wgpu.__version__}"

    def compile(self, source: str) -> WebGpuShader:
        try:
            module = self.gpu.device.create_shader_module(label="picograd", code=source)
        except self.gpu.wgpu.GPUError as e:
            raise self._compile_error("WGSL compilation failed", str(e), source) from None
        return WebGpuShader(module, source)

    def load(self, binary: WebGpuShader, name: str, num_args: int, launch: Launch | None = None
             ) -> Kernel:
        if launch is None:
            raise DeviceError(f"WEBGPU kernel {name!r} needs its launch (grid, block)")
        grid, block = launch
        self._check_launch(name, num_args, grid, block)
        wgpu, device = self.gpu.wgpu, self.gpu.device
        entries = [{"binding": i, "visibility": wgpu.ShaderStage.COMPUTE,
                    "buffer": {"type": wgpu.BufferBindingType.storage}} for i in range(num_args)]
        try:
            layout = device.create_bind_group_layout(entries=entries)
            pipeline = device.create_compute_pipeline(
                label=name,
                layout=device.create_pipeline_layout(
                    bind_group_layouts=[layout] if num_args else []),
                compute={"module": binary.module, "entry_point": name})
        except wgpu.GPUError as e:
            raise self._compile_error(f"WebGPU cannot build a pipeline for kernel {name!r}",
                                      str(e), binary.source) from None
        return WebGpuKernel(self.gpu, pipeline, layout, name, num_args, grid)

    def _check_launch(self, name: str, num_args: int, grid: Sequence[int],
                      block: Sequence[int]) -> None:
        limits = self.gpu.device.limits
        problems = []
        if num_args > limits["max-storage-buffers-per-shader-stage"]:
            problems.append(f"{num_args} buffers (at most "
                            f"{limits['max-storage-buffers-per-shader-stage']})")
        max_groups = limits["max-compute-workgroups-per-dimension"]
        if any(g > max_groups for g in grid):
            problems.append(f"grid {list(grid)} (at most {max_groups} per dimension)")
        max_items = limits["max-compute-invocations-per-workgroup"]
        if int(np.prod(block)) > max_items:
            problems.append(f"block {list(block)} (at most {max_items} work items)")
        if problems:
            raise DeviceError(f"WEBGPU kernel {name!r} exceeds the adapter's limits: "
                              f"{'; '.join(problems)}")

    @staticmethod
    def _compile_error(what: str, message: str, source: str) -> CompileError:
        path = write_failed_source(source, ".wgsl")
        log = "\n".join(part for part in (message.strip(), _offending_lines(message, source))
                        if part)
        return CompileError(what, log=log, source_path=path)

    def launch(self, kernel: Kernel, args: Sequence[WebGpuBuffer]) -> None:
        kernel(*args)

    def synchronize(self) -> None:
        """Wait for every submitted launch: a read-back is queued after them and waits."""
        if self._fence is None:
            self._fence = self.allocate(1, np.dtype(np.int32))
        self.gpu.device.queue.read_buffer(self._fence.buffer, 0, 4)
