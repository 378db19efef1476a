"""Every environment flag picograd reads, in one table, and the functions that read them.

This module is a leaf: it imports nothing of picograd, so any layer may read a flag without
reaching upward. `docs/debugging.md` shows `flags_markdown()` between its `flags:begin` and
`flags:end` markers; `python -m picograd.flags docs/debugging.md` rewrites that part (a unit
test keeps the two equal).

    debug_level()   DEBUG             viz_enabled()   VIZ          viz_dir()   VIZ_DIR
    dump_dir()      PG_DUMP           pipeline_override()  PG_PIPELINE
    cache_enabled() PG_CACHE          cache_dir()     PG_CACHE_DIR
    cache_graphs()  PG_CACHE_GRAPHS
    cpu_renderer()  PG_CPU_RENDERER   threads()       PG_THREADS
    memory_plan_enabled() PG_MEMORY_PLAN             c_compiler()    CC
    pool_limit_bytes() PG_POOL_MB
    ptxas_override()  PTXAS
    beam_width()    BEAM              beam_cache_enabled() PG_BEAM_CACHE
    beam_budget()   PG_BEAM_BUDGET

Each function reads the environment when called, except where its docstring says otherwise:
DEBUG, VIZ and VIZ_DIR are read once by `picograd.debug` (which tests change with
`debug.set_level` / `debug.flags(...)`).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class Flag:
    name: str
    default: str
    meaning: str


FLAGS: tuple[Flag, ...] = (
    Flag("DEBUG", "0", "debug output on stderr, levels 1-5 (cumulative, see below)"),
    Flag("VIZ", "0", "1: write an HTML page per compiled graph (tensor graph, kernels, IR "
         "of every kernel after every pass)"),
    Flag("VIZ_DIR", "./picograd-viz", "where VIZ writes graph-<n>.html and index.html"),
    Flag("PG_DUMP", "(unset)", "a directory: every compile writes its input IR, pipeline and "
         "the IR after each pass there, for opt-tool to reproduce"),
    Flag("PG_PIPELINE", "(unset)", "a pass pipeline string that every realize runs instead of "
         "its device's default pipeline (like `realize(pipeline=...)`)"),
    Flag("PG_CACHE", "1", "0: do not read or write the on-disk cache of compiled graphs and "
         "kernels (DEBUG>=2 and VIZ do not read it either: they need the IR)"),
    Flag("PG_CACHE_DIR", "$XDG_CACHE_HOME/picograd, else ~/.cache/picograd",
         "where that cache lives (made with mode 0700)"),
    Flag("PG_CACHE_GRAPHS", "512", "compiled graphs kept in memory (each ~0.3 MB); past it "
         "the least recently realized is dropped and recompiled (or loaded from disk) when "
         "next realized"),
    Flag("PG_CPU_RENDERER", "llvm", "what device CPU means: llvm (CPU:LLVM) or c (CPU:C)"),
    Flag("PG_THREADS", "the CPUs the process may use", "threads one large CPU kernel may use "
         "(its outer range runs in chunks that the caller and the pool threads claim as they "
         "come, picograd/runtimes/parallel.py); `picograd.set_num_threads` overrides it; 1: "
         "never split"),
    Flag("PG_MEMORY_PLAN", "1", "0: every intermediate buffer gets its own memory (no "
         "sharing by lifetime)"),
    Flag("PG_POOL_MB", "1024", "megabytes of idle buffers each device's pool keeps for later "
         "runs (picograd/runtimes/pool.py); 0: no pooling"),
    Flag("CC", "clang, else cc", "the C compiler of CPU:C (clang when on PATH: GCC keeps "
         "vectors wider than the CPU's registers in memory, 4x slower matmuls)"),
    Flag("PTXAS", "(PATH)", "the ptxas binary that checks CUDA kernels"),
    Flag("BEAM", "0", "a width: every compile searches each kernel's schedule (beam search "
         "from the heuristic's, candidates timed on the device; docs/design.md, \"BEAM "
         "search\"); `picograd.beam(width)` for a block of code"),
    Flag("PG_BEAM_CACHE", "1", "0: BEAM neither reads nor writes its tuned schedules on disk "
         "(`python -m picograd.tools.schedules list | export | import | clear`)"),
    Flag("PG_BEAM_BUDGET", "20,300", "seconds of search per kernel and per graph"),
)

LEVELS: tuple[tuple[int, str], ...] = (
    (1, "per compiled graph: id, kernels, the bound variables it reads and their ranges, "
        "schedule/disk cache hits, peak bytes before/after memory planning, time per compile "
        "stage; the VIZ page's path"),
    (2, "one line per kernel launch: time (us), GFLOP/s, GB/s (synchronises every launch); "
        "per run of a graph that reads bound variables, their values; one per buffer a run "
        "takes from its device's pool (reused or allocated)"),
    (3, "the loop-stage passes that changed the IR: ranges and op counts per kernel"),
    (4, "the target source (LLVM IR, C, PTX, WGSL) of every compiled graph"),
    (5, "the IR after every pass"),
)

_NAMES = frozenset(f.name for f in FLAGS)


_ENCODED = {name: name.encode() for name in _NAMES}  # as `os.environ` keys them on POSIX


# `os.environ` keeps the encoded names in a dict on POSIX (`_data`); it is read directly
# (`_raw`) where it is one. `os.environ.get` of an unset name raises and catches a KeyError
# inside it (about 1 us, as much as the rest of a cached realize's lookups, and a realize
# reads PG_PIPELINE).
_ENVIRON_CLASS = type(os.environ)
_DIRECT = os.name == "posix" and isinstance(getattr(os.environ, "_data", None), dict)


def _raw(name: str) -> str | None:
    assert name in _NAMES, f"{name} is not in picograd.flags.FLAGS"
    environ = os.environ
    if _DIRECT and environ.__class__ is _ENVIRON_CLASS:  # (not replaced by a test's mapping)
        value = environ._data.get(_ENCODED[name])  # type: ignore[attr-defined]
        return None if value is None else os.fsdecode(value)
    return environ.get(name)


def env_int(name: str) -> int:
    """Flag `name` as an integer: 0 when unset or empty; a warning and 0 when not a number."""
    raw = (_raw(name) or "").strip()
    if not raw:
        return 0
    try:
        return int(raw)
    except ValueError:
        warnings.warn(f"{name}={raw!r} is not an integer; picograd ignores it", stacklevel=3)
        return 0


def beam_width() -> int:
    """BEAM: the beam width of every compile's schedule search (0: the heuristic's)."""
    return max(0, env_int("BEAM"))


def beam_cache_enabled() -> bool:
    return _raw("PG_BEAM_CACHE") != "0"


def beam_budget() -> tuple[float, float]:
    """PG_BEAM_BUDGET: (seconds per kernel, seconds per graph) of BEAM search."""
    raw = _raw("PG_BEAM_BUDGET") or "20,300"
    try:
        per_kernel, per_graph = (float(part) for part in raw.split(","))
    except ValueError:
        warnings.warn(f"picograd: PG_BEAM_BUDGET={raw!r} is not two numbers "
                      "(seconds per kernel, per graph): using 20,300", stacklevel=2)
        return 20.0, 300.0
    return max(per_kernel, 0.0), max(per_graph, 0.0)


def debug_level() -> int:
    return env_int("DEBUG")


def viz_enabled() -> bool:
    return env_int("VIZ") > 0


def viz_dir() -> str:
    return _raw("VIZ_DIR") or "picograd-viz"


def dump_dir() -> str | None:
    """PG_DUMP: the directory every compile dumps its IR into, or None."""
    return _raw("PG_DUMP") or None


def pipeline_override() -> str | None:
    """PG_PIPELINE: the pipeline string every realize runs instead of the default, or None."""
    text = (_raw("PG_PIPELINE") or "").strip()
    return text or None


def cache_enabled() -> bool:
    return (_raw("PG_CACHE") or "1").strip() != "0"


def cache_dir() -> str:
    """Where the disk cache lives (not created here)."""
    explicit = _raw("PG_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.abspath(base), "picograd")


def cpu_renderer() -> str:
    """PG_CPU_RENDERER upper-cased ("LLVM" by default); the registry checks the name."""
    return (_raw("PG_CPU_RENDERER") or "llvm").strip().upper() or "LLVM"


def cpu_renderer_raw() -> str:
    """PG_CPU_RENDERER as the user wrote it (for messages)."""
    return _raw("PG_CPU_RENDERER") or ""


def threads() -> str:
    """PG_THREADS as written ("" when unset); `picograd.runtimes.parallel` parses it."""
    return (_raw("PG_THREADS") or "").strip()


def memory_plan_enabled() -> bool:
    return (_raw("PG_MEMORY_PLAN") or "1").strip() not in ("0", "false", "off", "")


def pool_limit_bytes() -> int:
    """PG_POOL_MB in bytes (1024 MB when unset; a negative number counts as 0)."""
    raw = (_raw("PG_POOL_MB") or "").strip()
    return max(env_int("PG_POOL_MB"), 0) * 2**20 if raw else 1024 * 2**20


def cache_graphs() -> int:
    """PG_CACHE_GRAPHS (512 when unset; at least 1)."""
    raw = (_raw("PG_CACHE_GRAPHS") or "").strip()
    return max(env_int("PG_CACHE_GRAPHS"), 1) if raw else 512


def c_compiler() -> str:
    return _raw("CC") or _default_c_compiler()


@functools.cache
def _default_c_compiler() -> str:
    """clang (or Debian's clang-19) when installed, else the system's cc. The C target's
    kernels hold register tiles in vectors of several registers (`vector_size(128)` on
    AVX-512): clang keeps them in registers, GCC 12 in memory (measured: a 512 x 384 x 384
    matmul at 40 GFLOP/s with GCC, 140-160 with clang, on Zen 4)."""
    return next((name for name in ("clang", "clang-19") if shutil.which(name)), "cc")


def ptxas_override() -> str | None:
    """PTXAS: the ptxas to use instead of the default search, or None."""
    return _raw("PTXAS") or None


def flags_markdown() -> str:
    """The flag table and the DEBUG levels as Markdown (docs/debugging.md)."""
    rows = ["| flag | default | meaning |", "|---|---|---|"]
    rows += [f"| `{f.name}` | `{f.default}` | {f.meaning} |" for f in FLAGS]
    rows += ["", "| DEBUG | adds |", "|---|---|"]
    rows += [f"| {n} | {text} |" for n, text in LEVELS]
    return "\n".join(rows) + "\n"


BEGIN, END = "<!-- flags:begin -->", "<!-- flags:end -->"


def update_doc(path: str) -> bool:
    """Rewrite the generated part of the Markdown file `path`; whether it changed."""
    with open(path) as f:
        text = f.read()
    block = f"{BEGIN}\n{flags_markdown()}{END}"
    new, count = re.subn(re.escape(BEGIN) + r".*?" + re.escape(END), lambda m: block, text,
                         flags=re.DOTALL)
    if count != 1:
        raise SystemExit(f"{path}: expected one {BEGIN} ... {END} block, found {count}")
    if new != text:
        with open(path, "w") as f:
            f.write(new)
    return new != text


if __name__ == "__main__":
    if len(sys.argv) > 1:
        for doc in sys.argv[1:]:
            print(f"{doc}: {'updated' if update_doc(doc) else 'up to date'}")
    else:
        print(flags_markdown(), end="")
