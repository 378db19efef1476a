"""Compile a stage-5 module once; run its `@main` schedule many times.

    compile_module(module, target) -> Program        target: "llvm", "c", "ptx" or "wgsl"
    Program.run(inputs) -> list[np.ndarray]

`compile_module` renders every kernel (`module_to_llvm_ir`, `module_to_c`, `module_to_ptx`
or `module_to_wgsl`), compiles them together on the runtime of that renderer, loads one
callable per kernel (with its grid and block on a GPU, read from the target function's
`grid` / `block` properties) and turns `@main` into a launch plan: which slots hold inputs,
which intermediates to allocate, which kernel to call with which slots, which slots are
results. On the CPU `run` is then only numpy placement, `np.empty` and a loop of ctypes
calls; on a GPU it allocates device buffers, copies the inputs in, launches, copies the
results out and frees the buffers.

`@main` may hold only `pg_sched.alloc`, `pg_sched.launch` and `func.return`; its arguments
are the inputs (read-only), its results flat arrays (an input returned unchanged is copied).
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, StringAttr
from xdsl.ir import Attribute, SSAValue

from picograd import debug as _debug
from picograd.dialects.dtypes import to_numpy_dtype
from picograd.dialects.pg import BufferType
from picograd.dialects.pg_sched import AllocOp, LaunchOp
from picograd.errors import DeviceError
from picograd.runtimes.base import HostRuntime, Kernel, Launch, Runtime, get_device
from picograd.runtimes.memory_plan import MemoryPlan, distinct

TARGET_DEVICES = {"llvm": "CPU:LLVM", "c": "CPU:C", "ptx": "CUDA", "wgsl": "WEBGPU"}

_c_char = ctypes.c_char


def _address(array: np.ndarray) -> int:
    # ~4x cheaper than `array.ctypes.data`; read-only arrays refuse from_buffer.
    try:
        return ctypes.addressof(_c_char.from_buffer(array))  # pyright: ignore[reportArgumentType]
    except TypeError:
        return array.ctypes.data


def render(module: ModuleOp, target: str, arch: str | None = None) -> str:
    """The source of every kernel of `module` for `target` ("llvm" IR, "c", "ptx" or
    "wgsl"); `arch` is the PTX `.target` (default sm_80)."""
    if target == "llvm":
        from picograd.lowering.llvm_ir import module_to_llvm_ir

        return module_to_llvm_ir(module)
    if target == "c":
        from picograd.lowering.c_source import module_to_c

        return module_to_c(module)
    if target == "ptx":
        from picograd.lowering.ptx_source import module_to_ptx

        return module_to_ptx(module, arch or "sm_80")
    if target == "wgsl":
        from picograd.lowering.wgsl_source import module_to_wgsl

        return module_to_wgsl(module)
    raise DeviceError(f"unknown compile target {target!r}; use one of {', '.join(TARGET_DEVICES)}")


@dataclass(frozen=True)
class _Slot:
    size: int
    dtype: np.dtype
    type: Attribute  # the !pg.buffer type, for messages


class Program:
    """A compiled realize graph: machine code for its kernels plus `@main`'s launch plan.

    Slots number the buffers of `@main`: inputs first (argument order), then allocations
    (program order). `launches` holds (kernel, argument slots) in program order.
    """

    def __init__(self, runtime: Runtime, binary: Any, inputs: Sequence[_Slot],
                 allocs: Sequence[_Slot], launches: Sequence[tuple[Kernel, tuple[int, ...]]],
                 results: Sequence[int]):
        self.runtime = runtime
        self.binary = binary  # keeps the machine code alive
        self._inputs = tuple((s.size, s.dtype, s.type) for s in inputs)
        self._allocs = tuple((s.size, s.dtype) for s in allocs)
        self._launches = tuple(launches)
        self._results = tuple(results)
        # (target source, kernels by name, GPU launch dims): what the disk cache saves
        self.recipe: tuple[str, dict[str, Kernel], dict[str, Launch]] | None = None
        # intermediates share memory by lifetime (picograd/runtimes/memory_plan.py)
        self._memory = MemoryPlan(len(self._inputs), self._allocs,
                                  [slots for _, slots in self._launches], self._results)

    @property
    def num_kernels(self) -> int:
        return len(self._launches)

    @property
    def peak_bytes(self) -> tuple[int, int]:
        """(bytes of all intermediate buffers, bytes they take after memory planning)."""
        plan = self._memory
        if isinstance(self.runtime, HostRuntime):
            return plan.peak_bytes
        return plan.before_bytes, plan.group_bytes

    def _host_inputs(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(inputs) != len(self._inputs):
            raise DeviceError(f"the program takes {len(self._inputs)} inputs, got {len(inputs)}")
        arrays: list[np.ndarray] = []
        for i, value in enumerate(inputs):
            size, dtype, buffer_type = self._inputs[i]
            array = np.ascontiguousarray(value, dtype=dtype).reshape(-1)
            if array.size != size:
                raise DeviceError(f"input {i} has {array.size} elements, its buffer {buffer_type} "
                                  f"holds {size}")
            arrays.append(array)
        return arrays

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Execute the schedule on `inputs` (any shape, the buffer's element count; cast to
        the buffer's dtype) and return the result buffers as flat arrays."""
        buffers = self._host_inputs(inputs)
        if not isinstance(self.runtime, HostRuntime):
            return self._run_on_device(buffers)
        buffers.extend(self._memory.host_buffers())
        addresses = [_address(b) for b in buffers]
        for kernel, slots in self._launches:
            kernel(*[addresses[s] for s in slots])
        num_inputs = len(self._inputs)
        return [buffers[s] if s >= num_inputs else buffers[s].copy() for s in self._results]

    def benchmark(self, inputs: Sequence[np.ndarray], repeats: int = 10) -> float:
        """The median time in seconds of one run of the kernels, with the inputs already in
        device memory (allocation and copies are outside the timed part)."""
        runtime = self.runtime
        buffers: list[Any] = []
        try:
            for array in self._host_inputs(inputs):
                buffers.append(runtime.allocate(array.size, array.dtype))
                runtime.copy_in(buffers[-1], array)
            buffers.extend(self._memory.device_buffers(runtime))
            times = []
            for _ in range(repeats + 1):  # the first run warms caches and lazy state up
                start = time.perf_counter()
                for kernel, slots in self._launches:
                    runtime.launch(kernel, [buffers[s] for s in slots])
                runtime.synchronize()
                times.append(time.perf_counter() - start)
            return float(np.median(times[1:]))
        finally:
            for buffer in distinct(buffers):
                runtime.free(buffer)

    def _run_on_device(self, host_inputs: list[np.ndarray]) -> list[np.ndarray]:
        runtime = self.runtime
        buffers: list[Any] = []
        try:
            for array in host_inputs:
                buffers.append(runtime.allocate(array.size, array.dtype))
                runtime.copy_in(buffers[-1], array)
            buffers.extend(self._memory.device_buffers(runtime))
            for kernel, slots in self._launches:
                runtime.launch(kernel, [buffers[s] for s in slots])
            runtime.synchronize()
            return [runtime.copy_out(buffers[s]) for s in self._results]
        finally:
            for buffer in distinct(buffers):
                runtime.free(buffer)


def _slot(value: SSAValue) -> _Slot:
    t = value.type
    assert isinstance(t, BufferType)
    return _Slot(t.size.data, to_numpy_dtype(t.element_type), t)


def _main(module: ModuleOp) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "main":
            return op
    raise DeviceError("the module has no func.func @main schedule")


def launch_dims(module: ModuleOp) -> dict[str, Launch]:
    """(grid, block) of every GPU kernel of a stage-5 module, by symbol name: the `grid` and
    `block` properties of its target function (CPU kernels have none)."""
    dims: dict[str, Launch] = {}
    for op in module.ops:
        grid, block = op.properties.get("grid"), op.properties.get("block")
        name = op.properties.get("sym_name")
        if isinstance(grid, DenseArrayBase) and isinstance(block, DenseArrayBase) and isinstance(
                name, StringAttr):
            g, b = grid.get_values(), block.get_values()
            dims[name.data] = ((int(g[0]), int(g[1]), int(g[2])), (int(b[0]), int(b[1]), int(b[2])))
    return dims


def compile_module(module: ModuleOp, target: str) -> Program:
    """Compile the kernels of a stage-5 module for `target` ("llvm", "c", "ptx", "wgsl") and
    plan `@main`."""
    runtime = get_device(TARGET_DEVICES[target])
    source = render(module, target, getattr(runtime, "arch", None))
    _debug.lap("render")  # DEBUG=1's time per stage (a no-op unless DEBUG or VIZ is on)
    binary = runtime.compile(source)
    _debug.lap("toolchain compile")
    dims = launch_dims(module)
    main = _main(module)
    block = main.body.block
    slots: dict[SSAValue, int] = {arg: i for i, arg in enumerate(block.args)}
    allocs: list[_Slot] = []
    launches: list[tuple[Kernel, tuple[int, ...]]] = []
    kernels: dict[str, Kernel] = {}
    results: list[int] = []
    for op in block.ops:
        if isinstance(op, AllocOp):
            slots[op.result] = len(slots)
            allocs.append(_slot(op.result))
        elif isinstance(op, LaunchOp):
            name = op.kernel_name
            if name not in kernels:
                kernels[name] = runtime.load(binary, name, len(op.args), dims.get(name))
            launches.append((kernels[name], tuple(slots[a] for a in op.args)))
        elif isinstance(op, func.ReturnOp):
            results = [slots[v] for v in op.arguments]
        else:
            raise DeviceError(f"@main may hold only pg_sched.alloc, pg_sched.launch and "
                              f"func.return, found {op.name}")
    program = Program(runtime, binary, [_slot(a) for a in block.args], allocs, launches, results)
    program.recipe = (source, kernels, dims)
    return program
