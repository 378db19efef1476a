"""DEBUG>=2: time every kernel launch of a traced Program; report the buffer pools.

    launch_infos(module, flops) -> [LaunchInfo]     what each launch of `@main` does
    Launches(graph, infos).instrument(program, on)  wrap (or unwrap) the Program's kernels
    report_pools(level)                             pool lines on (level >= 2) or off

Only Programs compiled while DEBUG or VIZ was on are traced; `Program.run` itself never
tests a flag, so DEBUG=0 costs nothing at run time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from picograd.debug.settings import log
from picograd.dialects.dtypes import to_numpy_dtype
from picograd.dialects.pg import BufferType
from picograd.dialects.pg_sched import LaunchOp
from picograd.runtimes import Program, parallel
from picograd.runtimes.pool import set_reporter


@dataclass(frozen=True)
class LaunchInfo:
    name: str
    flops: int
    bytes: int  # the sizes of the kernel's buffer arguments
    schedule: str = ""  # the loop actions the kernel went through (`pg.schedule`)
    layout: str = ""  # how it reads its operands (`ir_summary.layout_of`)
    policy: str = ""  # who chose the schedule (`ir_summary.policy_of`)


class _TimedKernel:
    """A kernel that synchronises, times and reports every launch."""

    def __init__(self, kernel: Callable[..., None], info: LaunchInfo, runtime: Any,
                 graph: int):
        self.kernel, self.info, self.runtime, self.graph = kernel, info, runtime, graph
        how = [f"schedule \"{info.schedule}\" by {info.policy or 'heuristic'}"
               ] if info.schedule else []
        if info.layout:
            how.append(info.layout)
        if threading := parallel.plan(kernel):  # a CPU kernel: one call or chunks
            how.append(threading)
        self.how = "  " + "; ".join(how) if how else ""

    def __call__(self, *args: object) -> None:
        self.runtime.synchronize()  # earlier work (copies, launches) is not ours to time
        start = time.perf_counter()
        self.kernel(*args)
        self.runtime.synchronize()
        seconds = max(time.perf_counter() - start, 1e-9)
        info = self.info
        log(f"graph {self.graph} launch {info.name:<8} {seconds * 1e6:9.1f} us "
            f"{info.flops / seconds / 1e9:8.3f} GFLOP/s {info.bytes / seconds / 1e9:8.3f} GB/s"
            f"{self.how}")


@dataclass
class Launches:
    """What a traced Program needs to time its launches: one LaunchInfo per launch."""

    graph: int
    infos: list[LaunchInfo]

    def instrument(self, program: Program, on: bool) -> None:
        if program.num_kernels != len(self.infos):
            return  # a Program shape this module does not know: no launch lines
        runtime = program.runtime
        program.wrap_kernels(
            (lambda i, kernel: _TimedKernel(kernel, self.infos[i], runtime, self.graph))
            if on else None)


def launch_infos(module: ModuleOp, flops: dict[str, int],
                 schedules: dict[str, str] | None = None,
                 layouts: dict[str, str] | None = None,
                 policies: dict[str, str] | None = None) -> list[LaunchInfo]:
    infos: list[LaunchInfo] = []
    for op in module.walk():
        if isinstance(op, LaunchOp):
            size = 0
            for arg in op.args:
                t = arg.type
                if isinstance(t, BufferType):
                    size += t.size.data * to_numpy_dtype(t.element_type).itemsize
            name = op.kernel_name
            infos.append(LaunchInfo(name, flops.get(name, 0), size,
                                    (schedules or {}).get(name, ""),
                                    (layouts or {}).get(name, ""),
                                    (policies or {}).get(name, "")))
    return infos


def report_pools(level: int) -> None:
    """At level >= 2, a line for every buffer a run takes from a device's pool: reused or
    allocated, with the pool's hits, misses and idle bytes (picograd/runtimes/pool.py)."""
    set_reporter(log if level >= 2 else None)
