"""Candidate kernels compiled together and timed on the real device with the real shapes.

    Bench(runtime, lower, launch, registers)      one kernel's test bed
    bench.compile(kernels) -> list[Kernel | None]  candidates (pg_loop, scheduled) -> callables
    bench.time(kernel) -> float                    median seconds per launch
    bench.outputs(kernel) -> list[np.ndarray]      every buffer after one launch on fresh inputs
    same_results(a, b, dtypes) -> bool             within the accumulation tolerance

A kernel's candidates share one test bed: buffers of the kernel's argument types on its
device, filled once with seeded random values (floats normal, integers 1-7, booleans
random), passed the way the graph's `@main` passes them (a buffer given twice is one
buffer). Each candidate, renamed `beam_0`, is lowered through the rest of the pipeline
(`lower`: the compile driver's, a direct route where the target has one) and compiled in a
forked child with a time limit (LLVM takes minutes on some wide tiles: such a candidate is
dropped, not waited for); a candidate the lowering or the toolchain rejects is None. Timing
is serial: one warm-up launch, then launches until `MIN_REPEATS` and `MIN_SECONDS` are reached, the
median kept, so the noise of one launch does not pick the winner.

Kernels that read an index from a buffer (a gather: `x[idx]`) are not searched: random
indices could read outside a buffer (`gathers`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Region, SSAValue

from picograd import disk_store
from picograd.dialects import pg_loop as L
from picograd.dialects import pg_sched as S
from picograd.dialects.capabilities import host_cpus
from picograd.dialects.dtypes import is_float, to_numpy_dtype
from picograd.dialects.pg import BufferType
from picograd.runtimes import Runtime, forked
from picograd.runtimes.base import HostRuntime, Kernel, Launch
from picograd.runtimes.parallel import fork_is_safe

MIN_REPEATS = 3
MAX_REPEATS = 200
MIN_SECONDS = 0.02
SEED = 20261204

# a module of pg_loop kernels (and its @main) -> the target's source text and the GPU
# launch dimensions of its kernels by name (none on CPUs)
Lower = Callable[[ModuleOp], tuple[str, dict[str, Launch]]]


def gathers(kernel: L.KernelOp) -> bool:
    """Whether a load's index depends on a value loaded from a buffer."""
    memo: dict[SSAValue, bool] = {}

    def loaded(value: SSAValue) -> bool:
        if value not in memo:
            memo[value] = False  # (no cycles in SSA; a guard for block arguments)
            op = value.owner
            memo[value] = isinstance(op, L.LoadOp) or any(
                loaded(v) for v in getattr(op, "operands", ()))
        return memo[value]

    return any(isinstance(op, L.LoadOp) and loaded(op.index) for op in kernel.walk())


def _host_values(t: BufferType, rng: np.random.Generator) -> np.ndarray:
    dtype = to_numpy_dtype(t.element_type)
    size = t.size.data
    if dtype == np.bool_:
        return rng.integers(0, 2, size).astype(np.bool_)
    if is_float(t.element_type):
        return rng.standard_normal(size).astype(dtype)
    return rng.integers(1, 8, size).astype(dtype)


class Bench:
    """The test bed of one kernel whose launch in `@main` passed `launch_args` (see the
    module docstring)."""

    def __init__(self, runtime: Runtime, lower: Lower, launch_args: Sequence[SSAValue]):
        self.runtime = runtime
        self.lower = lower
        distinct: list[SSAValue] = []
        for value in launch_args:
            if value not in distinct:
                distinct.append(value)
        self.types = [v.type for v in distinct]
        self.positions = [distinct.index(v) for v in launch_args]
        rng = np.random.default_rng(SEED)
        self.initial = [_host_values(t, rng) for t in self.types]  # type: ignore[arg-type]
        self.buffers = [runtime.allocate(a.size, a.dtype) for a in self.initial]
        self.reset()
        self._binaries: list[object] = []  # keeps the compiled candidates alive
        self._dims: dict[str | None, Launch | None] = {}  # source -> its GPU launch

    def reset(self) -> None:
        for buffer, host in zip(self.buffers, self.initial, strict=True):
            self.runtime.copy_in(buffer, host)

    def close(self) -> None:
        for buffer in self.buffers:
            self.runtime.free(buffer)
        self.buffers = []

    def _module(self, kernels: Sequence[L.KernelOp]) -> ModuleOp:
        """The candidates renamed `beam_<n>` and an `@main` launching each on the buffers."""
        block = Block(arg_types=self.types)
        args = [block.args[p] for p in self.positions]
        renamed = []
        for n, kernel in enumerate(kernels):
            copy = kernel.clone()
            copy.properties["sym_name"] = StringAttr(f"beam_{n}")
            renamed.append(copy)
            block.add_op(S.LaunchOp(f"beam_{n}", args))
        block.add_op(func.ReturnOp())
        main = func.FuncOp("main", (list(self.types), []), Region(block))
        return ModuleOp([*renamed, main])

    def compile(self, kernels: Sequence[L.KernelOp], limit: float | None = None
                ) -> list[Kernel | None]:
        """The candidates as launchable kernels; None for one that does not lower, does not
        compile, or (given a `limit` in seconds) whose compile takes longer: those compile
        first in forked children (as many at once as there are CPUs), which are killed at
        the limit, and the rest then compiles here from the disk cache the children filled.
        Without the disk cache or a safe fork, and on GPUs (a forked child cannot use the
        parent's driver context), everything compiles here, with no limit."""
        sources: list[str | None] = []
        for kernel in kernels:
            try:
                source, dims = self.lower(self._module([kernel]))
            except Exception:  # a candidate the lowering rejects is dropped
                source, dims = None, {}
            sources.append(source)
            self._dims[source] = dims.get("beam_0")
        if (limit is not None and isinstance(self.runtime, HostRuntime) and disk_store.enabled()
                and fork_is_safe() and hasattr(os, "fork")):
            sources = self._within(sources, limit)
        return [self._load(source) if source is not None else None for source in sources]

    def _within(self, sources: list[str | None], limit: float) -> list[str | None]:
        """`sources` with those whose compile did not finish within `limit` seconds in a
        child (or failed there) replaced by None."""
        out = list(sources)
        pending = [n for n, source in enumerate(sources) if source is not None]
        at_once = max(1, host_cpus())
        for at in range(0, len(pending), at_once):
            started = [(n, forked.start(self._compiler(sources[n])))  # type: ignore[arg-type]
                       for n in pending[at:at + at_once]]
            deadline = time.perf_counter() + limit
            for n, (pid, read_end) in started:
                if not forked.collect_by(pid, read_end, deadline).ok:
                    out[n] = None
        return out

    def _compiler(self, source: str) -> Callable[[], bytes]:
        def work() -> bytes:
            self.runtime.compile(source)  # (its machine code goes to the disk cache)
            return b""
        return work

    def _load(self, source: str) -> Kernel | None:
        try:
            binary = self.runtime.compile(source)
        except Exception:  # a candidate the toolchain rejects is dropped
            return None
        self._binaries.append(binary)
        return self.runtime.load(binary, "beam_0", len(self.positions),
                                 self._dims.get(source))

    def _launch(self, kernel: Kernel) -> None:
        self.runtime.launch(kernel, [self.buffers[p] for p in self.positions])

    def time(self, kernel: Kernel, cutoff: float | None = None) -> float:
        """The median seconds of one launch (see the module docstring); a kernel whose
        warm-up launch takes longer than `cutoff` seconds is not timed further (that time
        is returned: a candidate several times slower than the best loses anyway)."""
        t0 = time.perf_counter()
        self._launch(kernel)  # warm-up: caches, page faults, lazy state
        self.runtime.synchronize()
        if cutoff is not None and (warm := time.perf_counter() - t0) > cutoff:
            return warm
        times: list[float] = []
        start = time.perf_counter()
        while len(times) < MAX_REPEATS and (len(times) < MIN_REPEATS
                                            or time.perf_counter() - start < MIN_SECONDS):
            t0 = time.perf_counter()
            self._launch(kernel)
            self.runtime.synchronize()
            times.append(time.perf_counter() - t0)
        return float(np.median(times))

    def outputs(self, kernel: Kernel) -> list[np.ndarray]:
        """Every buffer after one launch of `kernel` on the initial values."""
        self.reset()
        self._launch(kernel)
        self.runtime.synchronize()
        out = [self.runtime.copy_out(b) for b in self.buffers]
        self.reset()
        return out


# How far a reordered float reduction may move a result, relative to the largest magnitude
# in its buffer (docs/design.md, "BEAM search"): a few hundred ulps of f32 covers a sum of
# thousands of terms added in another order.
RELATIVE_TOLERANCE = {np.dtype(np.float64): 1e-9, np.dtype(np.float32): 1e-4,
                      np.dtype(np.float16): 1e-2}
LOW_PRECISION_TOLERANCE = 3e-2  # bfloat16, float8 (stored in 16 or 8 bits)


def same_results(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    """Whether two candidates' buffers agree: integers and booleans exactly, floats within
    the accumulation tolerance (NaN where the other has NaN)."""
    for x, y in zip(a, b, strict=True):
        if x.dtype.kind not in "fc" and x.dtype.name not in ("bfloat16",) and \
                not x.dtype.name.startswith("float8"):
            if not np.array_equal(x, y):
                return False
            continue
        xf, yf = x.astype(np.float64), y.astype(np.float64)
        if not np.array_equal(np.isnan(xf), np.isnan(yf)):
            return False
        finite = ~np.isnan(xf)
        if not finite.any():
            continue
        scale = float(np.max(np.abs(yf[finite]), initial=0.0))
        if np.isinf(scale):
            if not np.array_equal(xf, yf, equal_nan=True):
                return False
            continue
        tol = RELATIVE_TOLERANCE.get(x.dtype, LOW_PRECISION_TOLERANCE) * max(scale, 1e-30)
        if np.max(np.abs(xf[finite] - yf[finite])) > tol:
            return False
    return True
