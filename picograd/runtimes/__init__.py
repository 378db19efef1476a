"""Device runtimes: memory, compilation and kernel launch, and the compiled `Program`.

    compile_module(module, target) -> Program     target "llvm" or "c"; module at stage 5
    Program.run(inputs) -> list[np.ndarray]        executes @main's schedule
    get_device("CPU" | "CPU:LLVM" | "CPU:C")      a device's `Runtime` (DeviceError if unknown)
"""

from picograd.errors import CompileError, DeviceError, PicogradError
from picograd.runtimes.base import (
    HostRuntime,
    Runtime,
    available_devices,
    canonical_device_name,
    get_device,
    register_device,
)
from picograd.runtimes.program import Program, compile_module

__all__ = [
    "CompileError",
    "DeviceError",
    "HostRuntime",
    "PicogradError",
    "Program",
    "Runtime",
    "available_devices",
    "canonical_device_name",
    "compile_module",
    "get_device",
    "register_device",
]
