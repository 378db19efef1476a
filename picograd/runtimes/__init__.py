"""Device runtimes: memory, compilation and kernel launch, and the compiled `Program`.

    get_device("CPU" | "CPU:LLVM" | "CPU:C" | "CUDA" | "WEBGPU")   a device's `Runtime`
    Program.from_module / run / benchmark / to_bytes / from_bytes   a compiled graph
    base.py       Runtime (the interface) and HostRuntime (memory in host arrays)
    registry.py   device names -> runtimes, loaded on first use
    cpu_llvm.py, cpu_c.py, cuda.py, webgpu.py   one runtime per device
    program.py, memory_plan.py, parallel.py, ptxas.py   what the runtimes share

A runtime knows only itself: rendering and the pipeline belong to the compile driver
(`picograd.compiler`), which hands a runtime source text and gets a `Program` back.
"""

from picograd.errors import CompileError, DeviceError, PicogradError
from picograd.runtimes.base import HostRuntime, Runtime
from picograd.runtimes.program import Program
from picograd.runtimes.registry import (
    available_devices,
    canonical_device_name,
    device_for_target,
    get_device,
    register_device,
)

__all__ = [
    "CompileError",
    "DeviceError",
    "HostRuntime",
    "PicogradError",
    "Program",
    "Runtime",
    "available_devices",
    "canonical_device_name",
    "device_for_target",
    "get_device",
    "register_device",
]
