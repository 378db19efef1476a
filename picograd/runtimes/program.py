"""A compiled realize graph: machine code for its kernels plus `@main`'s launch plan.

    Program.from_module(runtime, module, source, binary) -> Program   plan a stage-5 module
    Program.run(inputs) -> list[np.ndarray]        executes @main's schedule
    Program.to_bytes() / Program.from_bytes(runtime, data)   the source and plan, for the
                                                   disk cache (which stores the bytes)

`from_module` loads one callable per kernel of `binary` (with its grid and block on a GPU,
read from the target function's `grid` / `block` properties) and turns `@main` into a launch
plan: which slots hold inputs, which intermediates to allocate, which kernel to call with
which slots, which slots are results. On the CPU `run` is then only numpy placement, an
arena from the device's buffer pool (`pool.py`) and a loop of ctypes calls; on a GPU it
takes device buffers from the pool, copies the inputs in, launches, copies the results out
and gives the buffers back. Rendering and compiling
the source is the compile driver's job (`picograd.compiler.compile_module`).

`@main` may hold only `pg_sched.alloc`, `pg_sched.launch` and `func.return`; its arguments
are the inputs (read-only), its results flat arrays (an input returned unchanged is copied).

Kept copies: a launch marked `invariant` (a layout copy of inputs only, such as a weight's
transposed copy from `matmul-layout`) whose output is an intermediate writes into a buffer
of its own that the CPU Program keeps after the run, with weak references to the input
arrays it read. The next run that passes the very same arrays skips the launch and reads the
kept buffer. This relies on the frontend's rule that a realized buffer is never written in
place (a new value is a new array: `assign`, `load_state_dict`); the buffers that are
written in place (random keys, optimiser scalars) are never a matmul operand's layout copy.
GPU runtimes run the copy every time.
"""

from __future__ import annotations

import ctypes
import json
import operator
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, StringAttr
from xdsl.ir import Attribute, SSAValue

from picograd.dialects.dtypes import to_numpy_dtype
from picograd.dialects.pg import BufferType
from picograd.dialects.pg_sched import AllocOp, LaunchOp, hinted_node
from picograd.errors import DeviceError, OutOfMemoryError
from picograd.runtimes.base import HostRuntime, Kernel, Launch, Runtime
from picograd.runtimes.memory_plan import MemoryPlan, distinct
from picograd.runtimes.pool import pool_of

# float8 arrays (e5m2 is numpy kind "f", e4m3fn "V"): passed as their bits, as bfloat16's
_FLOAT8 = frozenset({np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)})

_c_char = ctypes.c_char
_from_buffer = _c_char.from_buffer
_addressof = ctypes.addressof
_BYTES = np.dtype(np.uint8)
_empty = np.empty


def tuple_getter(positions: Sequence[int]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """A function from a list to its items at `positions`, always as a tuple (itemgetter
    gives a bare item for one position): the run's addresses of a launch's slots, a realize
    plan's leaf nodes. Cheaper than a comprehension, a call of its own on Python 3.11."""
    if len(positions) <= 1:
        if not positions:
            return lambda items: ()
        position = positions[0]
        return lambda items: (items[position],)
    return operator.itemgetter(*positions)


def _address(array: np.ndarray) -> int:
    # ~4x cheaper than `array.ctypes.data`; read-only arrays refuse from_buffer.
    try:
        return ctypes.addressof(_c_char.from_buffer(array))  # pyright: ignore[reportArgumentType]
    except TypeError:
        return array.ctypes.data


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
                 results: Sequence[int], invariant: Sequence[int] = (),
                 holds: dict[int, int] | None = None):
        self.runtime = runtime
        self.binary = binary  # keeps the machine code alive
        self._inputs = tuple((s.size, s.dtype, s.type) for s in inputs)
        self._allocs = tuple((s.size, s.dtype) for s in allocs)
        self._launches = tuple(launches)
        self._plain = tuple(kernel for kernel, _ in self._launches)  # before `wrap_kernels`
        self._results = tuple(results)
        self._invariant = tuple(invariant)
        # node position -> the alloc slot that holds its value (`pg_sched.node_hint`)
        self.holds: dict[int, int] = dict(holds or {})
        # (target source, kernels by name, GPU launch dims): what the disk cache saves
        self.recipe: tuple[str, dict[str, Kernel], dict[str, Launch]] | None = None
        # launch index -> its output slot, for the kept copies (module docstring)
        self._keep = {i: self._launches[i][1][-1] for i in self._invariant
                      if self._launches[i][1][-1] not in self._results
                      and all(s < len(self._inputs) for s in self._launches[i][1][:-1])}
        # launch index -> (weak references to the inputs it read, its kept output)
        self._kept: dict[int, tuple[tuple[weakref.ref, ...], np.ndarray]] = {}
        # intermediates share memory by lifetime (picograd/runtimes/memory_plan.py); a kept
        # copy outlives the run, so it is planned like a result
        self._memory = self._plan(())
        self._plans: dict[tuple[int, ...], MemoryPlan] = {(): self._memory}
        # a host program without kept copies runs through `_run_lean` (a realize's case)
        self._lean = isinstance(runtime, HostRuntime) and not self._keep
        self._prepare_lean()

    def _plan(self, export: tuple[int, ...]) -> MemoryPlan:
        return MemoryPlan(len(self._inputs), self._allocs,
                          [slots for _, slots in self._launches],
                          self._results + tuple(self._keep.values()) + export)

    def _memory_for(self, export: tuple[int, ...]) -> MemoryPlan:
        """The memory plan of a run that also returns the intermediates `export`: those
        escape like results (one plan per export set, made on first use)."""
        plan = self._plans.get(export)
        if plan is None:
            plan = self._plans[export] = self._plan(export)
        return plan

    def alloc_spec(self, slot: int) -> tuple[int, np.dtype]:
        """(elements, dtype) of the buffer of alloc slot `slot`."""
        return self._allocs[slot - len(self._inputs)]

    # ── building, saving and restoring ──────────────────────────────────────

    @classmethod
    def from_module(cls, runtime: Runtime, module: ModuleOp, source: str, binary: Any
                    ) -> Program:
        """The Program of a stage-5 `module` whose kernels `runtime` compiled from `source`
        into `binary`: loads every launched kernel and plans `@main`."""
        dims = launch_dims(module)
        block = _main(module).body.block
        slots: dict[SSAValue, int] = {arg: i for i, arg in enumerate(block.args)}
        allocs: list[_Slot] = []
        launches: list[tuple[Kernel, tuple[int, ...]]] = []
        kernels: dict[str, Kernel] = {}
        results: list[int] = []
        invariant: list[int] = []
        holds: dict[int, int] = {}
        for op in block.ops:
            if isinstance(op, AllocOp):
                node = hinted_node(op.result.name_hint)
                if node is not None:
                    holds[node] = len(slots)
                slots[op.result] = len(slots)
                allocs.append(_slot(op.result))
            elif isinstance(op, LaunchOp):
                name = op.kernel_name
                if name not in kernels:
                    kernels[name] = runtime.load(binary, name, len(op.args), dims.get(name))
                if op.invariant is not None:
                    invariant.append(len(launches))
                launches.append((kernels[name], tuple(slots[a] for a in op.args)))
            elif isinstance(op, func.ReturnOp):
                results = [slots[v] for v in op.arguments]
            else:
                raise DeviceError(f"@main may hold only pg_sched.alloc, pg_sched.launch and "
                                  f"func.return, found {op.name}")
        program = cls(runtime, binary, [_slot(a) for a in block.args], allocs, launches,
                      results, invariant, holds)
        program.recipe = (source, kernels, dims)
        return program

    def to_bytes(self) -> bytes | None:
        """The target source and the launch plan as JSON (no machine code: `from_bytes`
        compiles the source again, which the runtimes' own kernel cache usually answers);
        None for a Program that was not built from source."""
        if self.recipe is None:
            return None
        source, kernels, dims = self.recipe
        names = {id(kernel): name for name, kernel in kernels.items()}
        plan = {
            "source": source,
            "inputs": [[size, dtype.str, str(t)] for size, dtype, t in self._inputs],
            "allocs": [[size, dtype.str] for size, dtype in self._allocs],
            "launches": [[names[id(kernel)], list(slots)]
                         for kernel, (_, slots) in zip(self._plain, self._launches,
                                                       strict=True)],
            "results": list(self._results),
            "invariant": list(self._invariant),
            "holds": [[node, slot] for node, slot in self.holds.items()],
            "dims": {name: [list(grid), list(block)] for name, (grid, block) in dims.items()},
        }
        return json.dumps(plan).encode()

    @classmethod
    def from_bytes(cls, runtime: Runtime, data: bytes) -> Program:
        """The Program `to_bytes` saved, compiled from its source on `runtime`. Raises
        ValueError when `data` is not such a plan."""
        try:
            plan = json.loads(data)
            dims = {str(name): _as_launch(d) for name, d in plan["dims"].items()}
            source = str(plan["source"])
            # The slot type is only printed in messages: its text stands in for the attribute.
            inputs = [_Slot(int(size), np.dtype(str(dtype)), cast(Attribute, str(text)))
                      for size, dtype, text in plan["inputs"]]
            allocs = [_Slot(int(size), np.dtype(str(dtype)), cast(Attribute, ""))
                      for size, dtype in plan["allocs"]]
            launch_plan = [(str(name), tuple(int(s) for s in slots))
                           for name, slots in plan["launches"]]
            results = [int(s) for s in plan["results"]]
            invariant = [int(i) for i in plan.get("invariant", [])]
            holds = {int(node): int(slot) for node, slot in plan.get("holds", [])}
        except (ValueError, TypeError, KeyError) as e:
            raise ValueError(f"not a saved Program plan: {e}") from e
        binary = runtime.compile(source)
        kernels: dict[str, Kernel] = {}
        launches = []
        for name, slots in launch_plan:
            if name not in kernels:
                kernels[name] = runtime.load(binary, name, len(slots), dims.get(name))
            launches.append((kernels[name], slots))
        program = cls(runtime, binary, inputs, allocs, launches, results, invariant, holds)
        program.recipe = (source, kernels, dims)
        return program

    def wrap_kernels(self, wrap: Callable[[int, Kernel], Kernel] | None) -> None:
        """Call every launch through `wrap(launch index, kernel)` (DEBUG's launch timing);
        None restores the plain kernels."""
        self._launches = tuple(
            (kernel if wrap is None else wrap(i, kernel), slots)
            for i, (kernel, (_, slots)) in enumerate(zip(self._plain, self._launches,
                                                         strict=True)))
        self._prepare_lean()

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
        """The inputs as C-contiguous arrays of their buffers' dtypes (any shape of the
        buffer's element count: a kernel reads only the address). A realize passes its
        leaves' buffers, which are that already: they are taken as they are."""
        if len(inputs) != len(self._inputs):
            raise DeviceError(f"the program takes {len(self._inputs)} inputs, got {len(inputs)}")
        arrays: list[np.ndarray] = []
        for i, value in enumerate(inputs):
            size, dtype, buffer_type = self._inputs[i]
            if (value.__class__ is np.ndarray and (value.dtype.kind == "V" or value.dtype
                                                    in _FLOAT8)
                    and value.dtype.itemsize == dtype.itemsize):
                value = value.view(dtype)  # bfloat16, float8: the kernels read its bits as ints
            if (value.__class__ is not np.ndarray or value.dtype != dtype
                    or not value.flags.c_contiguous):
                value = np.ascontiguousarray(value, dtype=dtype)
            if value.size != size:
                raise DeviceError(f"input {i} has {value.size} elements, its buffer {buffer_type} "
                                  f"holds {size}")
            arrays.append(value)
        return arrays

    def run(self, inputs: Sequence[np.ndarray], export: Sequence[int] = ()
            ) -> list[np.ndarray]:
        """Execute the schedule on `inputs` (any shape, the buffer's element count; cast to
        the buffer's dtype) and return the result buffers as flat arrays, followed by the
        intermediates of alloc slots `export` (a realize hands stored values that live
        tensors reference back to their nodes: `holds`)."""
        if self._lean and not export:
            results = self._run_lean(inputs)
            if results is not None:
                return results
        return self._run_full(inputs, export)

    def _run_lean(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray] | None:
        """`run` on the host without exports or kept copies, for inputs that are already
        what the kernels read (numpy arrays of the buffer's dtype and element count, as a
        realize's leaves are): no conversion, no placement, the arena from the pool only
        when there are intermediates. None, before any kernel ran, for an input that is
        not such an array (read-only or not C-contiguous: `from_buffer` refuses both), which
        `_run_full` then converts. Everything it looks up per launch was worked out once
        (`_prepare_lean`): on Python 3.11 a comprehension is a call of its own, so there are
        none here."""
        specs = self._lean_inputs
        if len(inputs) != len(specs):
            return None
        addresses: list[int] = []
        append = addresses.append
        try:
            for value, (size, dtype) in zip(inputs, specs, strict=False):  # (lengths: checked)
                if value.__class__ is not np.ndarray or value.dtype is not dtype or (
                        value.size != size):
                    return None
                append(_addressof(_from_buffer(value)))  # pyright: ignore[reportArgumentType]
        except TypeError:
            return None
        memory = self._memory
        if self._lean_arena:
            arena, pool = self._take_arena(memory)
        else:
            arena = pool = None
        try:
            made = self._lean_buffers(memory, arena)
            for buffer in made:
                append(_addressof(_from_buffer(buffer)))  # pyright: ignore[reportArgumentType]
            for kernel, arguments in self._lean_launches:
                kernel(*arguments(addresses))
        finally:
            if arena is not None and pool is not None:  # no result lives in the arena
                pool.give(arena)
        results = []
        for made_index, input_index in self._lean_results:
            results.append(made[made_index] if input_index < 0 else
                           inputs[input_index].reshape(-1).copy())
        return results

    def _lean_buffers(self, memory: MemoryPlan, arena: np.ndarray | None) -> list[np.ndarray]:
        """The alloc slots' buffers of a lean run: views of `arena`, or fresh arrays when no
        intermediate lives in one."""
        try:
            if arena is None:
                made = []
                for size, dtype in memory.allocs:
                    made.append(_empty(size, dtype))
                return made
            return memory.host_buffers(arena)
        except MemoryError:
            raise _out_of_memory(self.runtime, memory) from None

    def _prepare_lean(self) -> None:
        """What `_run_lean` reads, worked out once: (size, dtype) per input, per launch its
        kernel and a getter of its argument addresses (an `itemgetter`, cheaper than a
        comprehension), per result (alloc index, -1) or (-1, input index) for an input
        returned unchanged, and whether intermediates live in an arena."""
        self._lean_inputs = tuple((size, dtype) for size, dtype, _ in self._inputs)
        self._lean_launches = tuple((kernel, tuple_getter(slots))
                                    for kernel, slots in self._launches)
        n = len(self._inputs)
        self._lean_results = tuple((s - n, -1) if s >= n else (-1, s) for s in self._results)
        self._lean_arena = bool(self._memory.arena_request)

    def _take_arena(self, memory: MemoryPlan) -> tuple[Any, Any]:
        """The arena of a host run planned by `memory` and the pool to give it back to;
        (None, None) for a run without intermediates in an arena."""
        request = memory.arena_request
        if not request:
            return None, None
        pool = pool_of(self.runtime)
        try:
            return pool.take(request, _BYTES), pool
        except MemoryError:
            raise _out_of_memory(self.runtime, memory) from None

    def _run_full(self, inputs: Sequence[np.ndarray], export: Sequence[int]
                  ) -> list[np.ndarray]:
        """`run` in every case: inputs converted, exports, kept copies, device runtimes."""
        buffers = self._host_inputs(inputs)
        if export:
            export = tuple(export)
            memory, wanted = self._memory_for(export), self._results + export
        else:
            memory, wanted = self._memory, self._results
        if not isinstance(self.runtime, HostRuntime):
            return self._run_on_device(buffers, memory, wanted)
        arena, pool = self._take_arena(memory)
        try:
            try:
                buffers.extend(memory.host_buffers(arena))
            except MemoryError:
                raise _out_of_memory(self.runtime, memory) from None
            skip, made = self._reuse_kept(inputs, buffers) if self._keep else ((), {})
            try:
                addresses = [_addressof(_from_buffer(b))  # pyright: ignore[reportArgumentType]
                             for b in buffers]
            except TypeError:  # a read-only input
                addresses = [_address(b) for b in buffers]
            if skip:
                for i, (kernel, slots) in enumerate(self._launches):
                    if i not in skip:
                        kernel(*[addresses[s] for s in slots])
            else:
                for kernel, slots in self._launches:
                    kernel(*[addresses[s] for s in slots])
        finally:
            if arena is not None and pool is not None:  # no result, export or kept copy
                pool.give(arena)                         # lives in the arena
        if made:
            self._kept.update(made)  # only once every launch has run
        num_inputs = len(self._inputs)
        return [buffers[s] if s >= num_inputs else buffers[s].reshape(-1).copy()
                for s in wanted]

    def _reuse_kept(self, inputs: Sequence[Any], buffers: list[np.ndarray]
                    ) -> tuple[set[int], dict[int, tuple[tuple[weakref.ref, ...], np.ndarray]]]:
        """Point the output slot of every kept copy whose inputs are the arrays it was made
        from at the kept buffer, and return those launches (to skip) and, for the others,
        what to keep once this run has made their outputs (references to this run's inputs,
        where they are numpy arrays)."""
        skip: set[int] = set()
        made: dict[int, tuple[tuple[weakref.ref, ...], np.ndarray]] = {}
        for i, out in self._keep.items():
            reads = [inputs[s] for s in self._launches[i][1][:-1]]
            kept = self._kept.get(i)
            if kept is not None and all(ref() is x for ref, x in zip(kept[0], reads, strict=True)):
                buffers[out] = kept[1]
                skip.add(i)
                continue
            self._kept.pop(i, None)
            if all(isinstance(x, np.ndarray) for x in reads):
                made[i] = (tuple(weakref.ref(x) for x in reads), buffers[out])
        return skip, made

    def benchmark(self, inputs: Sequence[np.ndarray], repeats: int = 10,
                  before_each: Callable[[], object] | None = None) -> float:
        """The median time in seconds of one run of the kernels, with the inputs already in
        device memory (allocation and copies are outside the timed part). `before_each`, when
        given, is called right before every run, outside the timed part (bench/ passes other
        libraries' work, to time the kernels as they run beside it). A kept copy (a weight's
        layout copy) runs in the first, untimed run only: `run` too makes it once for the
        same inputs (module docstring)."""
        runtime = self.runtime
        kept = self._keep if isinstance(runtime, HostRuntime) else {}
        timed = [launch for i, launch in enumerate(self._launches) if i not in kept]
        pool = pool_of(runtime)
        buffers: list[Any] = []
        try:
            for array in self._host_inputs(inputs):
                buffers.append(pool.take(array.size, array.dtype))
                runtime.copy_in(buffers[-1], array)
            buffers.extend(self._memory.device_buffers(pool))
            times = []
            for run in range(repeats + 1):  # the first run warms caches and lazy state up
                if before_each is not None:
                    before_each()
                start = time.perf_counter()
                for kernel, slots in timed if run else self._launches:
                    runtime.launch(kernel, [buffers[s] for s in slots])
                runtime.synchronize()
                times.append(time.perf_counter() - start)
            return float(np.median(times[1:]))
        finally:
            for buffer in distinct(buffers):
                pool.give(buffer)

    def _run_on_device(self, host_inputs: list[np.ndarray], memory: MemoryPlan,
                       wanted: tuple[int, ...]) -> list[np.ndarray]:
        runtime = self.runtime
        pool = pool_of(runtime)
        buffers: list[Any] = []
        try:
            for array in host_inputs:
                buffers.append(pool.take(array.size, array.dtype))
                runtime.copy_in(buffers[-1], array)
            buffers.extend(memory.device_buffers(pool))
            for kernel, slots in self._launches:
                runtime.launch(kernel, [buffers[s] for s in slots])
            runtime.synchronize()
            return [runtime.copy_out(buffers[s]) for s in wanted]
        finally:
            for buffer in distinct(buffers):
                pool.give(buffer)


def _out_of_memory(runtime: Runtime, memory: MemoryPlan) -> OutOfMemoryError:
    """The typed error for a host allocation numpy could not make."""
    sizes = [size * dtype.itemsize for size, dtype in memory.allocs]
    count = f"{len(sizes)} buffer{'s' if len(sizes) != 1 else ''}"
    return OutOfMemoryError(
        f"{type(runtime).__name__}: out of memory: a realize needs {count} of "
        f"{sum(sizes):,} bytes in all (the largest {max(sizes, default=0):,} bytes; "
        f"{memory.arena_request:,} bytes of them in one arena shared by lifetime)")


def _as_launch(value: Any) -> Launch:
    grid, block = value
    return (int(grid[0]), int(grid[1]), int(grid[2])), (int(block[0]), int(block[1]),
                                                        int(block[2]))


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


