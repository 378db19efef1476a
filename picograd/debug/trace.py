"""One traced compile: what DEBUG and VIZ record while the compile driver works.

    start_compile(device, entries, outputs) -> CompileTrace | None   (None when all is off)
    needs_ir()                          whether a disk-cache hit must still build the IR
    watch(trace, module, after) -> the pipeline's after-pass hook
    lap(name)                           end a compile step of the running trace
    finish(trace, module, program, cache_summary)   report, VIZ page, launch timing
    report_variables(program, values)   DEBUG>=2: the bound variables of one run

The compile driver (`picograd.compiler`) calls these hooks; nothing below it imports this
package.
"""

from __future__ import annotations

import itertools
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from picograd.debug import viz
from picograd.debug.ir_summary import (
    LoopShape,
    converts,
    kernel_flops,
    kernels_of,
    layout_of,
    loop_change,
    loop_shape,
    policy_of,
    schedule_of,
    texts,
)
from picograd.debug.launch_timing import Launches, launch_infos, report_pools
from picograd.debug.settings import SETTINGS, log
from picograd.lowering.render import render
from picograd.runtimes import Program

_TRACED: weakref.WeakKeyDictionary[Program, Launches] = weakref.WeakKeyDictionary()
_ACTIVE: CompileTrace | None = None  # the compile `lap` marks


def retime(level: int) -> None:
    """Switch launch timing of every traced Program on (level >= 2) or off."""
    for program, launches in list(_TRACED.items()):
        launches.instrument(program, on=level >= 2)


SETTINGS.level_listeners.append(retime)
SETTINGS.level_listeners.append(report_pools)
report_pools(SETTINGS.level)


def lap(name: str) -> None:
    """Mark the end of compile step `name` (the time since the previous mark), when a traced
    compile is running; a no-op otherwise."""
    if _ACTIVE is not None:
        _ACTIVE.lap(name)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


_GRAPH_IDS = itertools.count()


@dataclass
class CompileTrace:
    """What DEBUG and VIZ record about one compile: step times, loop-stage changes, IR."""

    graph: int
    device: str
    entries: Sequence[tuple]  # realize's key entries: (node sig, source positions)
    outputs: Sequence[int]
    steps: list[tuple[str, float]] = field(default_factory=list)
    passes: list[tuple[str, float]] = field(default_factory=list)
    stage: str = "tensor"
    flops: dict[str, int] = field(default_factory=dict)
    schedules: dict[str, str] = field(default_factory=dict)  # kernel -> its `pg.schedule`
    layouts: dict[str, str] = field(default_factory=dict)  # kernel -> its `layout_of`
    policies: dict[str, str] = field(default_factory=dict)  # kernel -> its `policy_of`
    loop_shapes: dict[str, LoopShape] = field(default_factory=dict)
    loop_notes: list[str] = field(default_factory=list)
    snapshots: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    _mark: float = field(default_factory=time.perf_counter)
    _pending: float = 0.0  # pass time of the current stage, not yet in `steps`

    def lap(self, name: str) -> float:
        now = time.perf_counter()
        seconds, self._mark = now - self._mark, now
        self.steps.append((name, seconds))
        return seconds

    def watch(self, module: ModuleOp, after: Callable[[ModulePass, ModuleOp], None] | None
              ) -> Callable[[ModulePass, ModuleOp], None]:
        """Called once the IR is built: the after-pass hook that records every pass (and
        then calls `after`, the PG_DUMP hook, when there is one)."""
        self.lap("build IR")
        if SETTINGS.level >= 5:
            log(f"graph {self.graph} input IR:\n{module!s}")
        if SETTINGS.viz:
            self.snapshots.append(("input", texts(module)))

        def after_pass(pass_: ModulePass, ir: ModuleOp) -> None:
            self._record(pass_.name, ir)
            if after is not None:
                after(pass_, ir)
            self._mark = time.perf_counter()  # the hook's own work is not the pass's

        return after_pass

    def _record(self, name: str, ir: ModuleOp) -> None:
        seconds = time.perf_counter() - self._mark
        self.passes.append((name, seconds))
        self._pending += seconds
        conversion = converts(name)
        if conversion is not None:
            self.steps.append((f"{self.stage}->{conversion[1]}", self._pending))
            self._pending, self.stage = 0.0, conversion[1]
        if self.stage == "loop":
            kernels = kernels_of(ir)
            self.flops = {k: kernel_flops(op) for k, op in kernels.items()}
            self.schedules = {k: schedule_of(op) for k, op in kernels.items()}
            self.layouts = {k: layout_of(op) for k, op in kernels.items()}
            self.policies = {k: policy_of(op) for k, op in kernels.items()}
            if SETTINGS.level >= 3:
                shapes = {k: loop_shape(op) for k, op in kernels.items()}
                if conversion is None:
                    notes = loop_change(self.loop_shapes, shapes)
                    self.loop_notes += [f"{name}: {n}" for n in notes]
                    if not notes:
                        self.loop_notes.append(f"{name}: no change")
                self.loop_shapes = shapes
        if SETTINGS.level >= 5:
            log(f"graph {self.graph} IR after {name}:\n{ir!s}")
        if SETTINGS.viz:
            self.snapshots.append((name, texts(ir)))

    def finish(self, module: ModuleOp | None, program: Program, cache_summary: str = ""
               ) -> None:
        """Report the compile (DEBUG), write its page (VIZ) and set up launch timing.
        `module` is None when the disk cache supplied the Program (no IR was built)."""
        global _ACTIVE
        _ACTIVE = None
        if module is None:
            self.lap("disk cache load")
            if SETTINGS.level >= 1:
                self._report(program, None, cache_summary, " (from the disk cache)")
            return
        if self._pending:
            self.steps.append((self.stage, self._pending))
        compiled = any(name == "toolchain compile" for name, _ in self.steps)
        self.lap("load + plan" if compiled else "render + compile + load")
        launches = Launches(self.graph, launch_infos(module, self.flops, self.schedules,
                                                          self.layouts, self.policies))
        _TRACED[program] = launches
        launches.instrument(program, on=SETTINGS.level >= 2)
        source = _source(module, program) if SETTINGS.level >= 4 or SETTINGS.viz else ""
        page = None
        if SETTINGS.viz:
            page = viz.write_page(self, source, launches.infos, SETTINGS.viz_dir)
        if SETTINGS.level >= 1:
            self._report(program, page, cache_summary)
        if SETTINGS.level >= 3:
            for note in self.loop_notes:
                log(f"graph {self.graph} {note}")
        if SETTINGS.level >= 4:
            log(f"graph {self.graph} source ({getattr(program.runtime, 'renderer', '?')}):\n"
                f"{source}")

    def _report(self, program: Program, page: str | None, cache_summary: str,
                origin: str = "") -> None:
        parts = [f"graph {self.graph} {self.device}: {program.num_kernels} kernels from "
                 f"{len(self.entries)} nodes{origin}"]
        variables = [sig[1] for sig, _ in self.entries if sig[0] == "var"]
        if variables:
            parts.append("variables " + ", ".join(map(str, dict.fromkeys(variables))))
        if cache_summary:
            parts.append(cache_summary)
        before, after = program.peak_bytes
        parts.append(f"peak {before} B -> {after} B after memory planning")
        log("; ".join(parts))
        total = sum(t for _, t in self.steps)
        log(f"graph {self.graph} times: " + ", ".join(f"{n} {_ms(t)}" for n, t in self.steps)
            + f"; total {_ms(total)}")
        if page is not None:
            log(f"graph {self.graph} viz: {page}")


def _source(module: ModuleOp, program: Program) -> str:
    runtime = program.runtime
    try:
        return render(module, runtime.renderer, getattr(runtime, "arch", None))
    except Exception as e:  # a debug aid never breaks a realize
        return f"(cannot render: {e})"


def start_compile(device: str, entries: Sequence[tuple], outputs: Sequence[int]
                  ) -> CompileTrace | None:
    """A trace of the compile that starts now (`entries` and `outputs` as realize's
    `linearize` returns them), or None when DEBUG=0 and VIZ is off."""
    global _ACTIVE
    on = SETTINGS.level > 0 or SETTINGS.viz
    _ACTIVE = CompileTrace(next(_GRAPH_IDS), device, entries, outputs) if on else None
    return _ACTIVE


def needs_ir() -> bool:
    """Whether a compile must build and lower the IR even when the disk cache holds the
    Program: launch timing (DEBUG >= 2) and VIZ read it."""
    return SETTINGS.level >= 2 or SETTINGS.viz


def watch(trace: CompileTrace | None, module: ModuleOp,
          after: Callable[[ModulePass, ModuleOp], None] | None
          ) -> Callable[[ModulePass, ModuleOp], None] | None:
    """The pipeline's after-pass hook: `after` itself when nothing is traced."""
    return after if trace is None else trace.watch(module, after)


def finish(trace: CompileTrace | None, module: ModuleOp | None, program: Program,
           cache_summary: str = "") -> None:
    """End `trace` (if any) with the compiled `program`; `cache_summary` is the driver's
    line about its caches for DEBUG=1."""
    if trace is not None:
        trace.finish(module, program, cache_summary)


def report_variables(program: Program, values: Sequence[tuple[str, int]]) -> None:
    """DEBUG>=2: the values of the bound variables a run of `program` reads, one line
    before its launch lines (`graph 3 variables pos=17`)."""
    if SETTINGS.level >= 2 and values:
        launches = _TRACED.get(program)
        graph = launches.graph if launches is not None else "?"
        log(f"graph {graph} variables " + " ".join(f"{n}={v}" for n, v in values))
