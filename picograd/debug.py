"""Debug output: the DEBUG levels, VIZ pages and per-stage compile timing.

Every environment flag picograd reads is listed once, in `FLAGS` (docs/debugging.md shows
the same table). DEBUG, VIZ and VIZ_DIR are read once, when this module is imported; tests
and notebooks change them with `set_level(n)`, `set_viz(on, directory)` or, scoped,

    with picograd.debug.flags(debug=2, viz=True, viz_dir=tmp):
        ...

DEBUG levels are cumulative and print to stderr, each line starting with `[pg]`:

    1  per compiled graph: its id, kernel count, cache summary, peak bytes before/after
       memory planning (when the Program reports them), time per compile stage
    2  one line per kernel launch: time, GFLOP/s, GB/s (each launch synchronises the device)
    3  the loop-stage passes that changed the IR, and what (ranges and op counts per kernel)
    4  the target source of every compiled graph
    5  the IR after every pass (what PG_DUMP writes to files)

How it hooks in: `realize._compile` asks `start_compile` for a `CompileTrace` (None when
DEBUG=0 and VIZ is off, so an ordinary compile does no extra work), chains
`CompileTrace.after_pass` into the pipeline and calls `finish` with the compiled Program;
`compile_module` marks its render and toolchain steps with `lap`. Per-launch timing wraps
the Program's kernels in `_TimedKernel` only while DEBUG >= 2: `Program.run` itself never
tests a flag, so DEBUG=0 costs nothing at run time.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import time
import warnings
import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Operation
    from xdsl.passes import ModulePass

    from picograd.runtimes.program import Program


@dataclass(frozen=True)
class Flag:
    name: str
    default: str
    meaning: str


# The one table of environment flags (docs/debugging.md renders it with `flags_markdown`).
FLAGS: tuple[Flag, ...] = (
    Flag("DEBUG", "0", "debug output on stderr, levels 1-5 (cumulative, see below)"),
    Flag("VIZ", "0", "1: write an HTML page per compiled graph (tensor graph, kernels, IR "
         "of every kernel after every pass)"),
    Flag("VIZ_DIR", "./picograd-viz", "where VIZ writes graph-<n>.html and index.html"),
    Flag("PG_DUMP", "(unset)", "a directory: every compile writes its input IR, pipeline and "
         "the IR after each pass there, for opt-tool to reproduce"),
    Flag("PG_CACHE", "1", "0: do not read or write the on-disk cache of compiled graphs and "
         "kernels (DEBUG>=2 and VIZ do not read it either: they need the IR)"),
    Flag("PG_CACHE_DIR", "$XDG_CACHE_HOME/picograd, else ~/.cache/picograd",
         "where that cache lives (made with mode 0700)"),
    Flag("PG_CPU_RENDERER", "llvm", "what device CPU means: llvm (CPU:LLVM) or c (CPU:C)"),
    Flag("PG_THREADS", "the CPU count", "threads one large CPU kernel may use (its outer range "
         "runs in chunks on a thread pool, picograd/runtimes/parallel.py); 1: never split"),
    Flag("PG_MEMORY_PLAN", "1", "0: every intermediate buffer gets its own memory (no "
         "sharing by lifetime)"),
    Flag("CC", "cc", "the C compiler of CPU:C"),
    Flag("PTXAS", "(PATH)", "the ptxas binary that checks CUDA kernels"),
)

LEVELS: tuple[tuple[int, str], ...] = (
    (1, "per compiled graph: id, kernels, schedule/disk cache hits, peak bytes before/after "
        "memory planning, time per compile stage; the VIZ page's path"),
    (2, "one line per kernel launch: time (us), GFLOP/s, GB/s (synchronises every launch)"),
    (3, "the loop-stage passes that changed the IR: ranges and op counts per kernel"),
    (4, "the target source (LLVM IR, C, PTX, WGSL) of every compiled graph"),
    (5, "the IR after every pass"),
)


def _env_int(name: str) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return 0
    try:
        return int(raw)
    except ValueError:
        warnings.warn(f"{name}={raw!r} is not an integer; picograd ignores it", stacklevel=2)
        return 0


LEVEL: int = _env_int("DEBUG")
VIZ: bool = _env_int("VIZ") > 0
VIZ_DIR: str = os.environ.get("VIZ_DIR") or "picograd-viz"

_TRACED: weakref.WeakKeyDictionary[Program, _Launches] = weakref.WeakKeyDictionary()


def set_level(level: int) -> None:
    """Set DEBUG; kernels of graphs compiled with DEBUG or VIZ on start or stop timing."""
    global LEVEL
    LEVEL = level
    for program, launches in list(_TRACED.items()):
        launches.instrument(program, on=level >= 2)


def set_viz(on: bool, directory: str | None = None) -> None:
    global VIZ, VIZ_DIR
    VIZ = on
    if directory is not None:
        VIZ_DIR = directory


@contextlib.contextmanager
def flags(debug: int | None = None, viz: bool | None = None,
          viz_dir: str | None = None) -> Iterator[None]:
    """Override DEBUG / VIZ / VIZ_DIR inside a `with` block."""
    saved = LEVEL, VIZ, VIZ_DIR
    try:
        if debug is not None:
            set_level(debug)
        if viz is not None or viz_dir is not None:
            set_viz(VIZ if viz is None else viz, viz_dir)
        yield
    finally:
        set_level(saved[0])
        set_viz(saved[1], saved[2])


def log(message: str) -> None:
    print(f"[pg] {message}", file=sys.stderr, flush=True)


def flags_markdown() -> str:
    """The flag table and the DEBUG levels as Markdown (docs/debugging.md)."""
    rows = ["| flag | default | meaning |", "|---|---|---|"]
    rows += [f"| `{f.name}` | `{f.default}` | {f.meaning} |" for f in FLAGS]
    rows += ["", "| DEBUG | adds |", "|---|---|"]
    rows += [f"| {n} | {text} |" for n, text in LEVELS]
    return "\n".join(rows) + "\n"


# ── timing ───────────────────────────────────────────────────────────────────

_ACTIVE: CompileTrace | None = None  # the compile `lap` marks


def lap(name: str) -> None:
    """Mark the end of compile step `name` (the time since the previous mark), when a traced
    compile is running; a no-op otherwise."""
    if _ACTIVE is not None:
        _ACTIVE.lap(name)


def pass_timing_report(times: Sequence[tuple[str, float]]) -> str:
    """A table of wall time per pass and the total, like MLIR's -mlir-timing."""
    total = sum(t for _, t in times)
    bar = "===" + "-" * 73 + "==="
    lines = [bar, "Pass execution timing report".center(len(bar)).rstrip(), bar,
             f"  Total Execution Time: {total:.4f} seconds", "",
             "  ----Wall Time----  ----Name----"]
    for name, t in [*times, ("Total", total)]:
        share = 100.0 * t / total if total > 0 else 0.0
        lines.append(f"  {t:8.4f} ({share:5.1f}%)  {name}")
    return "\n".join(lines) + "\n"


def _converts(pass_name: str) -> tuple[str, str] | None:
    """("loop", "uop") for convert-loop-to-uop; None for a pass that stays in its stage."""
    parts = pass_name.split("-")
    if len(parts) == 4 and parts[0] == "convert" and parts[2] == "to":
        return parts[1], parts[3]
    return None


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


# ── IR summaries ─────────────────────────────────────────────────────────────


def _name(op: Operation) -> str | None:
    from xdsl.dialects.builtin import StringAttr

    sym = op.properties.get("sym_name")
    return sym.data if isinstance(sym, StringAttr) else None


def kernels_of(module: ModuleOp) -> dict[str, Operation]:
    """The top-level ops with a symbol name other than @main (the kernels), by name."""
    out: dict[str, Operation] = {}
    for op in module.ops:
        name = _name(op)
        if name is not None and name != "main":
            out[name] = op
    return out


def _trip(op: Operation) -> int:
    from xdsl.dialects.builtin import IntAttr

    start, end = op.properties.get("start"), op.properties.get("end")
    if isinstance(start, IntAttr) and isinstance(end, IntAttr):
        return max(end.data - start.data, 0)
    return 1


def kernel_flops(kernel: Operation) -> int:
    """A cheap estimate of a loop-stage kernel's float operations: every float ALU op (and
    each reduction step) counted once per iteration of the ranges around it."""
    from picograd.dialects.dtypes import is_float

    def count(op: Operation, trips: int) -> int:
        total = 0
        is_alu = op.name.startswith("pg_uop.") and not op.name.endswith(".const")
        if (is_alu or op.name == "pg_loop.reduce") and op.results and is_float(
                op.results[0].type):
            total += trips * (_trip(op) if op.name == "pg_loop.reduce" else 1)
        inner = trips * _trip(op) if op.regions else trips
        for region in op.regions:
            for block in region.blocks:
                total += sum(count(child, inner) for child in block.ops)
        return total

    return sum(count(op, 1) for op in kernel.regions[0].ops) if kernel.regions else 0


@dataclass(frozen=True)
class _LoopShape:
    """What DEBUG=3 compares between loop-stage passes, per kernel."""

    ranges: str  # `trip kind` per range, outermost first
    ops: Counter[str]  # op name -> count
    text: str


def _loop_shape(kernel: Operation) -> _LoopShape:
    ranges: list[str] = []
    ops: Counter[str] = Counter()
    for op in kernel.walk():
        if op is kernel:
            continue
        ops[op.name] += 1
        if op.name in ("pg_loop.range", "pg_loop.reduce"):
            kind = op.properties.get("kind" if op.name == "pg_loop.range" else "range_kind")
            label = str(getattr(kind, "data", "")).split(".")[-1].lower()
            ranges.append(f"{_trip(op)} {label}".strip())
    return _LoopShape("[" + ", ".join(ranges) + "]", ops, str(kernel))


def _loop_change(before: dict[str, _LoopShape], after: dict[str, _LoopShape]) -> list[str]:
    notes: list[str] = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old is None or new is None:
            notes.append(f"@{name} {'added' if old is None else 'removed'}")
            continue
        changes: list[str] = []
        if old.ranges != new.ranges:
            changes.append(f"ranges {old.ranges} -> {new.ranges}")
        delta = [(op, new.ops[op] - old.ops[op]) for op in sorted(set(old.ops) | set(new.ops))]
        changes += [f"{d:+d} {op}" for op, d in delta if d]
        if not changes and old.text != new.text:
            changes.append("operands rewritten, same ops")
        if changes:
            notes.append(f"@{name} " + ", ".join(changes))
    return notes


# ── per-launch timing (DEBUG >= 2) ───────────────────────────────────────────


@dataclass(frozen=True)
class LaunchInfo:
    name: str
    flops: int
    bytes: int  # the sizes of the kernel's buffer arguments


class _TimedKernel:
    """A kernel that synchronises, times and reports every launch."""

    def __init__(self, kernel: Callable[..., None], info: LaunchInfo, runtime: Any,
                 graph: int):
        self.kernel, self.info, self.runtime, self.graph = kernel, info, runtime, graph

    def __call__(self, *args: object) -> None:
        self.runtime.synchronize()  # earlier work (copies, launches) is not ours to time
        start = time.perf_counter()
        self.kernel(*args)
        self.runtime.synchronize()
        seconds = max(time.perf_counter() - start, 1e-9)
        info = self.info
        log(f"graph {self.graph} launch {info.name:<8} {seconds * 1e6:9.1f} us "
            f"{info.flops / seconds / 1e9:8.3f} GFLOP/s {info.bytes / seconds / 1e9:8.3f} GB/s")


@dataclass
class _Launches:
    """What a traced Program needs to time its launches: one LaunchInfo per launch."""

    graph: int
    infos: list[LaunchInfo]

    def instrument(self, program: Program, on: bool) -> None:
        launches = getattr(program, "_launches", None)
        if launches is None or len(launches) != len(self.infos):
            return  # a Program shape this module does not know: no launch lines
        rebuilt = []
        for (kernel, *rest), info in zip(launches, self.infos, strict=True):
            if isinstance(kernel, _TimedKernel):
                kernel = kernel.kernel
            if on:
                kernel = _TimedKernel(kernel, info, program.runtime, self.graph)
            rebuilt.append((kernel, *rest))
        program._launches = tuple(rebuilt)  # pyright: ignore[reportAttributeAccessIssue]


def _launch_infos(module: ModuleOp, flops: dict[str, int]) -> list[LaunchInfo]:
    from picograd.dialects.dtypes import to_numpy_dtype
    from picograd.dialects.pg import BufferType
    from picograd.dialects.pg_sched import LaunchOp

    infos: list[LaunchInfo] = []
    for op in module.walk():
        if isinstance(op, LaunchOp):
            size = 0
            for arg in op.args:
                t = arg.type
                if isinstance(t, BufferType):
                    size += t.size.data * to_numpy_dtype(t.element_type).itemsize
            infos.append(LaunchInfo(op.kernel_name, flops.get(op.kernel_name, 0), size))
    return infos


# ── one traced compile ───────────────────────────────────────────────────────

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
    loop_shapes: dict[str, _LoopShape] = field(default_factory=dict)
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
        if LEVEL >= 5:
            log(f"graph {self.graph} input IR:\n{module!s}")
        if VIZ:
            self.snapshots.append(("input", _texts(module)))

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
        conversion = _converts(name)
        if conversion is not None:
            self.steps.append((f"{self.stage}->{conversion[1]}", self._pending))
            self._pending, self.stage = 0.0, conversion[1]
        if self.stage == "loop":
            kernels = kernels_of(ir)
            self.flops = {k: kernel_flops(op) for k, op in kernels.items()}
            if LEVEL >= 3:
                shapes = {k: _loop_shape(op) for k, op in kernels.items()}
                if conversion is None:
                    notes = _loop_change(self.loop_shapes, shapes)
                    self.loop_notes += [f"{name}: {n}" for n in notes]
                    if not notes:
                        self.loop_notes.append(f"{name}: no change")
                self.loop_shapes = shapes
        if LEVEL >= 5:
            log(f"graph {self.graph} IR after {name}:\n{ir!s}")
        if VIZ:
            self.snapshots.append((name, _texts(ir)))

    def finish(self, module: ModuleOp | None, program: Program) -> None:
        """Report the compile (DEBUG), write its page (VIZ) and set up launch timing.
        `module` is None when the disk cache supplied the Program (no IR was built)."""
        global _ACTIVE
        _ACTIVE = None
        if module is None:
            self.lap("disk cache load")
            if LEVEL >= 1:
                self._report(program, None, " (from the disk cache)")
            return
        if self._pending:
            self.steps.append((self.stage, self._pending))
        compiled = any(name == "toolchain compile" for name, _ in self.steps)
        self.lap("load + plan" if compiled else "render + compile + load")
        launches = _Launches(self.graph, _launch_infos(module, self.flops))
        _TRACED[program] = launches
        launches.instrument(program, on=LEVEL >= 2)
        source = _source(module, program) if LEVEL >= 4 or VIZ else ""
        page = None
        if VIZ:
            from picograd import viz

            page = viz.write_page(self, source, launches.infos)
        if LEVEL >= 1:
            self._report(program, page)
        if LEVEL >= 3:
            for note in self.loop_notes:
                log(f"graph {self.graph} {note}")
        if LEVEL >= 4:
            log(f"graph {self.graph} source ({getattr(program.runtime, 'renderer', '?')}):\n"
                f"{source}")

    def _report(self, program: Program, page: str | None, origin: str = "") -> None:
        from picograd.frontend.realize import compile_stats

        stats = compile_stats()  # counted after this compile returns: add it
        parts = [f"graph {self.graph} {self.device}: {program.num_kernels} kernels from "
                 f"{len(self.entries)} nodes{origin}",
                 f"schedule cache {stats.cache_hits} hits / {stats.compiles + 1} compiles"]
        disk = _disk_cache_summary()
        if disk:
            parts.append(disk)
        peak = getattr(program, "peak_bytes", None)
        if isinstance(peak, tuple) and len(peak) == 2:
            parts.append(f"peak {peak[0]} B -> {peak[1]} B after memory planning")
        log("; ".join(parts))
        total = sum(t for _, t in self.steps)
        log(f"graph {self.graph} times: " + ", ".join(f"{n} {_ms(t)}" for n, t in self.steps)
            + f"; total {_ms(total)}")
        if page is not None:
            log(f"graph {self.graph} viz: {page}")


def _texts(module: ModuleOp) -> dict[str, str]:
    """Every top-level symbol op (the kernels and @main) printed on its own."""
    texts: dict[str, str] = {}
    for op in module.ops:
        name = _name(op)
        if name is not None:
            texts[name] = str(op)
    return texts


def _source(module: ModuleOp, program: Program) -> str:
    from picograd.runtimes.program import render

    runtime = program.runtime
    try:
        return render(module, runtime.renderer, getattr(runtime, "arch", None))
    except Exception as e:  # a debug aid never breaks a realize
        return f"(cannot render: {e})"


def _disk_cache_summary() -> str:
    module = sys.modules.get("picograd.runtimes.disk_cache")
    stats = getattr(module, "stats", None)
    if not callable(stats):
        return ""
    counts = stats()
    hits, misses = getattr(counts, "hits", None), getattr(counts, "misses", None)
    if hits is None or misses is None:
        return ""
    return f"disk cache {hits} hits / {misses} misses"


def start_compile(device: str, entries: Sequence[tuple], outputs: Sequence[int]
                  ) -> CompileTrace | None:
    """A trace of the compile that starts now (`entries` and `outputs` as realize's
    `linearize` returns them), or None when DEBUG=0 and VIZ is off."""
    global _ACTIVE
    _ACTIVE = None if LEVEL <= 0 and not VIZ else CompileTrace(next(_GRAPH_IDS), device,
                                                                entries, outputs)
    return _ACTIVE


def needs_ir() -> bool:
    """Whether a compile must build and lower the IR even when the disk cache holds the
    Program: launch timing (DEBUG >= 2) and VIZ read it."""
    return LEVEL >= 2 or VIZ


def watch(trace: CompileTrace | None, module: ModuleOp,
          after: Callable[[ModulePass, ModuleOp], None] | None
          ) -> Callable[[ModulePass, ModuleOp], None] | None:
    """The pipeline's after-pass hook: `after` itself when nothing is traced."""
    return after if trace is None else trace.watch(module, after)


def finish(trace: CompileTrace | None, module: ModuleOp | None, program: Program) -> None:
    if trace is not None:
        trace.finish(module, program)
