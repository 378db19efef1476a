"""Debug output: the DEBUG levels, VIZ pages and per-stage compile timing.

Every environment flag picograd reads is listed once, in `picograd.flags.FLAGS` (re-exported
here; docs/debugging.md shows the same table). DEBUG, VIZ and VIZ_DIR are read once, when
this package is imported; tests and notebooks change them with `set_level(n)`,
`set_viz(on, directory)` or, scoped,

    with picograd.debug.flags(debug=2, viz=True, viz_dir=tmp):
        ...

DEBUG levels are cumulative and print to stderr, each line starting with `[pg]`:

    1  per compiled graph: its id, kernel count, cache summary, peak bytes before/after
       memory planning (when the Program reports them), time per compile stage
    2  one line per kernel launch: time, GFLOP/s, GB/s (each launch synchronises the device)
    3  the loop-stage passes that changed the IR, and what (ranges and op counts per kernel)
    4  the target source of every compiled graph
    5  the IR after every pass (what PG_DUMP writes to files)

How it hooks in: the compile driver (`picograd.compiler.driver`) asks `start_compile` for a
`CompileTrace` (None when DEBUG=0 and VIZ is off, so an ordinary compile does no extra
work), chains its after-pass hook (`watch`) into the pipeline, marks its render and toolchain
steps with `lap` and calls `finish` with the compiled Program. Per-launch timing wraps the
Program's kernels (`Program.wrap_kernels`) only while DEBUG >= 2: `Program.run` itself never
tests a flag, so DEBUG=0 costs nothing at run time. Nothing below the compile driver imports
this package.

    settings.py      SETTINGS (level, viz, viz_dir) and `log`
    trace.py         CompileTrace and the driver's hooks
    ir_summary.py    kernels by name, FLOP estimates, loop-stage changes (DEBUG=3)
    launch_timing.py per-launch timing (DEBUG>=2)
    viz.py           the VIZ pages
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from picograd.debug.settings import SETTINGS, Settings, log
from picograd.flags import FLAGS, LEVELS, Flag, flags_markdown

if TYPE_CHECKING:  # the names, for type checkers; at run time __getattr__ imports them
    from picograd.debug.trace import CompileTrace, finish, lap, needs_ir, start_compile, watch

# The compile driver's hooks live in trace.py, which loads the printers and the runtimes;
# `opt-tool` (which needs only `pass_timing_report`) starts without them.
_TRACE_NAMES = frozenset({"CompileTrace", "finish", "lap", "needs_ir", "start_compile",
                          "watch"})


def __getattr__(name: str) -> Any:
    if name not in _TRACE_NAMES:
        raise AttributeError(f"module 'picograd.debug' has no attribute '{name}'")
    return getattr(importlib.import_module("picograd.debug.trace"), name)


def set_level(level: int) -> None:
    """Set DEBUG; kernels of graphs compiled with DEBUG or VIZ on start or stop timing."""
    SETTINGS.set_level(level)


def set_viz(on: bool, directory: str | None = None) -> None:
    SETTINGS.viz = on
    if directory is not None:
        SETTINGS.viz_dir = directory


@contextlib.contextmanager
def flags(debug: int | None = None, viz: bool | None = None,
          viz_dir: str | None = None) -> Iterator[None]:
    """Override DEBUG / VIZ / VIZ_DIR inside a `with` block."""
    saved = SETTINGS.level, SETTINGS.viz, SETTINGS.viz_dir
    try:
        if debug is not None:
            set_level(debug)
        if viz is not None or viz_dir is not None:
            set_viz(SETTINGS.viz if viz is None else viz, viz_dir)
        yield
    finally:
        set_level(saved[0])
        set_viz(saved[1], saved[2])


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


__all__ = [
    "FLAGS", "LEVELS", "SETTINGS", "CompileTrace", "Flag", "Settings", "finish",
    "flags", "flags_markdown", "lap", "log", "needs_ir", "pass_timing_report", "set_level",
    "set_viz", "start_compile", "watch",
]
