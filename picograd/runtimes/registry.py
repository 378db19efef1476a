"""The device registry: device names to runtimes, built on first use.

    get_device("CPU" | "CPU:LLVM" | "CPU:C" | "CUDA" | "WEBGPU")  -> the device's Runtime
    canonical_device_name("cpu") -> "CPU:LLVM"         register_device(name, factory)
    device_for_target("ptx") -> "CUDA"                 available_devices()

Device names (case-insensitive strings; anything else is a DeviceError):

    CPU        the CPU with the renderer chosen by PG_CPU_RENDERER (llvm, the default, or c)
    CPU:LLVM   the CPU through LLVM IR and llvmlite's MCJIT        (renderer "llvm")
    CPU:C      the CPU through C source and the system C compiler  (renderer "c")
    CUDA       an NVIDIA GPU through PTX and the CUDA driver        (renderer "ptx")
    WEBGPU     a WebGPU adapter through WGSL (wgpu; Mesa's software Vulkan without a GPU)
                                                                    (renderer "wgsl")

A device's runtime module is imported when the device is first named: that loads its
optional package (wgpu, cuda-python) only for a program that uses it.
"""

from __future__ import annotations

from collections.abc import Callable

from picograd import flags
from picograd.errors import DeviceError
from picograd.runtimes.base import Runtime


def _cpu_llvm() -> type[Runtime]:
    # lazy: the runtime module loads its device's package
    from picograd.runtimes.cpu_llvm import CpuLlvmRuntime

    return CpuLlvmRuntime


def _cpu_c() -> type[Runtime]:
    # lazy: the runtime module loads its device's package
    from picograd.runtimes.cpu_c import CpuCRuntime

    return CpuCRuntime


def _cuda() -> type[Runtime]:
    # lazy: the runtime module loads its device's package
    from picograd.runtimes.cuda import CudaRuntime

    return CudaRuntime


def _webgpu() -> type[Runtime]:
    # lazy: the runtime module loads its device's package
    from picograd.runtimes.webgpu import WebGpuRuntime

    return WebGpuRuntime


# Imported lazily: naming a device loads only its runtime (and its dependencies).
_FACTORIES: dict[str, Callable[[], type[Runtime]]] = {
    "CPU:LLVM": _cpu_llvm, "CPU:C": _cpu_c, "CUDA": _cuda, "WEBGPU": _webgpu,
}
_INSTANCES: dict[str, Runtime] = {}


def register_device(name: str, factory: Callable[[], type[Runtime]]) -> None:
    """Make `get_device(name)` build `factory()()` on first use."""
    _FACTORIES[name.upper()] = factory


def available_devices() -> list[str]:
    return sorted({"CPU", *_FACTORIES})


def canonical_device_name(name: object) -> str:
    """`cpu` -> `CPU:LLVM` (or `CPU:C` under PG_CPU_RENDERER=c), `cpu:c` -> `CPU:C`, ...;
    `DeviceError` for a name that is not a string or not a device's."""
    if not isinstance(name, str):  # a torch habit (`device=0` for cuda:0): say what a name is
        raise DeviceError(f"a device is named by a string, got {name!r} "
                          f"({type(name).__name__}); available: {', '.join(available_devices())}")
    key = name.strip().upper()
    if key == "CPU":
        key = f"CPU:{flags.cpu_renderer()}"
        if key not in _FACTORIES:
            raise DeviceError(f"PG_CPU_RENDERER={flags.cpu_renderer_raw()!r} is not a CPU "
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


_TARGET_DEVICES = {"llvm": "CPU:LLVM", "c": "CPU:C", "ptx": "CUDA", "wgsl": "WEBGPU"}


def device_for_target(target: str) -> str:
    """The device whose runtime compiles `target` source ("llvm", "c", "ptx", "wgsl")."""
    device = _TARGET_DEVICES.get(target)
    if device is None:
        raise DeviceError(f"unknown compile target {target!r}; use one of "
                          f"{', '.join(_TARGET_DEVICES)}")
    return device
