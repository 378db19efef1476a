"""The compile driver: a pg_tensor module in, a runnable `Program` out.

    program_for(key, build, device, pipeline=None, entries=(), outputs=()) -> Program
    pipeline_for(device, pipeline) -> str           the pipeline program_for chooses
    pipeline_scope(pipeline)                        a `with` block's default pipeline
    touch((pipeline, key), program) -> bool         a hit of a Program the caller kept
    compile_module(module, target) -> Program       stage-5 module -> Program (no pipeline)
    default_pipeline(device) -> str                 what realize() runs when not told
    compile_stats() -> CompileStats                 clear_cache()

`program_for` is the one way a graph becomes a Program, for `realize()` and for tools:

1. the pipeline: the caller's string, else that of the innermost `pipeline_scope`, else
   `$PG_PIPELINE`, else the device's default (`picograd.compiler.pipelines.DEFAULT_PIPELINES`);
2. the in-memory cache, keyed by (pipeline, the caller's structural key): a hit builds no IR;
   it keeps the `PG_CACHE_GRAPHS` most recently realized graphs (a program that serves
   shapes which change every call would otherwise grow it without bound);
3. the disk cache (`picograd.compiler.disk_cache`): a hit builds no IR either, unless
   PG_DUMP, DEBUG>=2 or VIZ need it;
4. otherwise `build()` makes the pg_tensor module (a tensor of more elements than the
   target's index reaches, 2**31 - 1 on PTX and WGSL, is a DeviceError at the user's line),
   the pipeline runs on it (PG_DUMP writes the input, the pipeline and the IR after every
   pass; `picograd.debug` records the compile through its hooks), `lowering.render` prints
   it and the device's runtime compiles it. A target with a direct route
   (`lowering.render.DIRECT_ROUTES`: CPU:LLVM) skips the pipeline's last pass and prints
   its kernels straight from pg_uop, the same text, unless PG_DUMP, DEBUG>=2 or VIZ need
   the target stage's IR.

The structural key is the caller's: `realize()` keys a graph by its device, its nodes'
signatures and their sources (`picograd.frontend.realize.linearize`), so equal keys mean
equal modules. `entries` and `outputs` only feed DEBUG and VIZ (the graph drawn on a page).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.utils.exceptions import PassFailedException

from picograd import disk_store, flags
from picograd.compiler import disk_cache
from picograd.compiler.beam.search import BeamContext, choose_schedules
from picograd.compiler.beam.store import schedule_key
from picograd.compiler.dump import Dump
from picograd.compiler.parallel_lowering import lower_kernels
from picograd.compiler.pipelines import (
    DEFAULT_PIPELINES,
    AfterPass,
    PipelineError,
    decision_split,
    kernel_local_tail,
    parse_pipeline,
    pipeline_head,
    run_pipeline,
)
from picograd.debug import trace as debug
from picograd.dialects.capabilities import capabilities, host_vector_registers
from picograd.errors import ArgumentTypeError, DeviceError, user_location
from picograd.lowering.render import DIRECT_ROUTES, DirectRoute, render
from picograd.runtimes import (
    Program,
    Runtime,
    canonical_device_name,
    device_for_target,
    get_device,
)
from picograd.runtimes.base import Launch
from picograd.runtimes.program import launch_dims


@dataclass
class CompileStats:
    compiles: int = 0  # graphs compiled (cache misses)
    cache_hits: int = 0  # realizes that reused a compiled graph
    kernels: int = 0  # kernels in the compiled graphs


_STATS = CompileStats()
_CACHE: dict[tuple, Program] = {}


def compile_stats() -> CompileStats:
    """A snapshot of how many graphs were compiled and how many realizes hit the cache."""
    return dataclasses.replace(_STATS)


def clear_cache() -> None:
    """Forget every compiled graph (the counters are kept)."""
    _CACHE.clear()


_DEFAULTS: dict[str, str] = {}  # canonical device name -> its default pipeline


def default_pipeline(device: str) -> str:
    """The pipeline realize() runs on `device` when neither the call nor PG_PIPELINE names
    one. Remembered per canonical name (what realize passes), so a cached realize does not
    look the runtime up; an alias such as "CPU" follows PG_CPU_RENDERER every time."""
    spec = _DEFAULTS.get(device)
    if spec is None:
        spec = DEFAULT_PIPELINES[get_device(device).renderer]
        if canonical_device_name(device) == device:
            _DEFAULTS[device] = spec
    return spec


def program_for(key: tuple, build: Callable[[], ModuleOp], device: str,
                pipeline: str | None = None, entries: Sequence[tuple] = (),
                outputs: Sequence[int] = ()) -> Program:
    """The Program of the graph `key` on `device` under `pipeline` (see the module
    docstring); `build()` makes its pg_tensor module when it must be compiled."""
    spec = pipeline_for(device, pipeline)
    beam = beam_width()
    cache_key = (compile_mode(spec, beam), key)
    program = _CACHE.pop(cache_key, None)
    if program is not None:
        _STATS.cache_hits += 1
        _CACHE[cache_key] = program  # the most recently used goes last
        return program
    program = _CACHE[cache_key] = _compile(key, build, device, spec, entries, outputs, beam)
    while len(_CACHE) > flags.cache_graphs():  # the least recently used goes
        del _CACHE[next(iter(_CACHE))]
    _STATS.compiles += 1
    _STATS.kernels += program.num_kernels
    return program


def touch(cache_key: tuple, program: Program) -> bool:
    """Whether `program` is still the cached Program of `cache_key` (`(pipeline, key)`, as
    `program_for` keys it): then counts the hit and makes it the most recently used, as
    `program_for`'s hit does. A caller that kept the Program it got (a realize plan) asks
    this instead of `program_for`, which would hash and compare the key again; after
    `clear_cache` or an eviction it answers False, and the caller asks `program_for`."""
    if _CACHE.get(cache_key) is not program:
        return False
    del _CACHE[cache_key]
    _CACHE[cache_key] = program  # the most recently used goes last
    _STATS.cache_hits += 1
    return True


# the pipelines of the `pipeline_scope` blocks being run, innermost last
_SCOPED_PIPELINES: list[str] = []
# the widths of the `beam_scope` blocks being run, innermost last
_SCOPED_BEAMS: list[int] = []


def beam_width() -> int:
    """The BEAM width of a compile now: the innermost `beam_scope`'s, else `$BEAM`."""
    return _SCOPED_BEAMS[-1] if _SCOPED_BEAMS else flags.beam_width()


def compile_mode(spec: str, beam: int) -> str | tuple[str, int]:
    """What a compiled Program is cached under besides the graph: its pipeline, and the
    BEAM width when there is one (a searched Program is another Program)."""
    return spec if not beam else (spec, beam)


@contextlib.contextmanager
def beam_scope(width: int | None) -> Iterator[None]:
    """Compiles inside the block search their kernels' schedules with beam `width` (0: the
    heuristic's; None: no change), whatever `$BEAM` says."""
    if width is None:
        yield
        return
    if isinstance(width, bool) or not isinstance(width, int) or width < 0:
        raise ArgumentTypeError(f"beam: the width must be an integer of 0 or more, got "
                                f"{width!r}\n  at {user_location()}")
    _SCOPED_BEAMS.append(width)
    try:
        yield
    finally:
        _SCOPED_BEAMS.pop()


def pipeline_for(device: str, pipeline: str | None) -> str:
    """The pipeline a realize on `device` runs: `pipeline`, else the innermost
    `pipeline_scope`'s, else `$PG_PIPELINE`, else the device's default (`program_for`'s
    first step)."""
    return (pipeline or (_SCOPED_PIPELINES[-1] if _SCOPED_PIPELINES else None)
            or flags.pipeline_override() or default_pipeline(device))


@contextlib.contextmanager
def pipeline_scope(pipeline: str | None) -> Iterator[None]:
    """Realizes inside the block that name no pipeline run `pipeline` (None: no change):
    how code that does not make the realize calls itself picks one (picograd.jit's, or a
    `torch.compile(..., options={"pipeline": ...})` graph's)."""
    if pipeline is None:
        yield
        return
    _SCOPED_PIPELINES.append(pipeline)
    try:
        yield
    finally:
        _SCOPED_PIPELINES.pop()


def _cache_summary() -> str:
    """DEBUG=1's line about the caches, counting the compile being reported."""
    disk = disk_store.stats()
    return (f"schedule cache {_STATS.cache_hits} hits / {_STATS.compiles + 1} compiles; "
            f"disk cache {disk.hits} hits / {disk.misses} misses")


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector during a compile. The IR is a large graph of
    objects with reference cycles that lives until the compile ends; the collector rescanned
    it about a dozen times per CNN compile (about a fifth of its time, see
    ../shared/docs/kernel-optimizer.md) and found nothing to free. It runs again afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _compile(key: tuple, build: Callable[[], ModuleOp], device: str, spec: str,
             entries: Sequence[tuple], outputs: Sequence[int], beam: int = 0) -> Program:
    runtime = get_device(device)
    dump_dir = flags.dump_dir()
    trace = debug.start_compile(device, entries, outputs)  # None unless DEBUG/VIZ
    # a disk hit builds no IR (so PG_DUMP, which dumps the IR, bypasses the disk cache)
    disk_key = (None if dump_dir or debug.needs_ir() else
                disk_cache.graph_key(key, spec if not beam else f"{spec} beam={beam}",
                                     runtime.renderer, runtime))
    program = disk_cache.load_program(disk_key, runtime)
    if program is not None:
        debug.finish(trace, None, program, _cache_summary())
        return program
    # Only PG_DUMP, DEBUG>=2 and VIZ look at the target stage's IR: otherwise a target that
    # prints its kernels straight from pg_uop skips building it (the pipeline's last pass)
    direct = None if dump_dir or debug.needs_ir() else DIRECT_ROUTES.get(runtime.renderer)
    head = pipeline_head(spec, direct.conversion) if direct is not None else None
    with _no_cyclic_gc():
        module = build()
        _check_index_width(module, device, runtime.renderer)
        after_pass = Dump(dump_dir, key, module, spec).after_pass if dump_dir else None
        hook = debug.watch(trace, module, after_pass)
        try:
            split = decision_split(spec) if beam else None
            if split is not None:
                source = _beam_source(module, spec, split, runtime, direct, hook, beam)
            elif direct is not None and head is not None:
                source = _direct_source(module, spec, head, runtime.renderer, direct, hook)
            else:
                run_pipeline(module, spec, after_pass=hook)
                _check_lowered(module, spec, runtime.renderer)
                source = render(module, runtime.renderer, getattr(runtime, "arch", None))
        except PassFailedException as e:  # e.g. a schedule action a kernel cannot take
            raise PipelineError(f"{e} (pipeline '{spec}')") from e
        program = _build_program(module, runtime, source)
    debug.finish(trace, module, program, _cache_summary())
    disk_cache.store_program(disk_key, program)
    return program


def _direct_source(module: ModuleOp, spec: str, head: str, target: str, direct: DirectRoute,
                   hook: AfterPass | None) -> str:
    """Run `head` (the pipeline but its conversion pass) and print the pg_uop kernels
    through `direct`; the kernel-local passes at its end run on two processes' halves of
    the kernels where that pays (`parallel_lowering`)."""

    def lower(lowered: ModuleOp) -> list[dict]:
        _check_lowered(lowered, spec, target, _UOP_KERNEL)
        return direct.lower(lowered)

    split = kernel_local_tail(head)
    if split is None:
        run_pipeline(module, head, after_pass=hook)
        return direct.assemble(lower(module))
    graph_passes, kernel_passes = split
    run_pipeline(module, graph_passes, after_pass=hook)
    return direct.assemble(lower_kernels(module, kernel_passes, hook, lower))


def _beam_source(module: ModuleOp, spec: str, split: tuple[str, str, str], runtime: Runtime,
                 direct: DirectRoute | None, hook: AfterPass | None, beam: int) -> str:
    """The source of a graph whose kernels' schedules BEAM search chooses: the pipeline up
    to its schedule decisions, then `choose_schedules` (picograd/compiler/beam), then the
    rest of the pipeline, which also lowers every candidate the search compiles."""
    before, decisions, rest = split
    run_pipeline(module, before, after_pass=hook)
    target, arch = runtime.renderer, getattr(runtime, "arch", None)
    rest_head = pipeline_head(rest, direct.conversion) if direct is not None else None

    def lower(candidates: ModuleOp, hook: AfterPass | None = None
              ) -> tuple[str, dict[str, Launch]]:
        if direct is not None and rest_head is not None:
            route = direct

            def pieces(lowered: ModuleOp) -> list[dict]:
                _check_lowered(lowered, spec, target, _UOP_KERNEL)
                return route.lower(lowered)
            return route.assemble(lower_kernels(candidates, rest_head, hook, pieces)), {}
        run_pipeline(candidates, rest, after_pass=hook)
        _check_lowered(candidates, spec, target)
        return render(candidates, target, arch), launch_dims(candidates)

    vector_bytes, registers = host_vector_registers()
    per_kernel, per_graph = flags.beam_budget()
    context = BeamContext(
        beam, runtime, lower,
        lambda text: schedule_key(text, f"{decisions},{rest}", runtime.name,
                                  disk_cache.capabilities_text(target),
                                  f"{arch} {runtime.toolchain_fingerprint()}"),
        vector_lanes=max(1, vector_bytes // 4), registers=registers,
        kernel_budget=per_kernel, graph_budget=per_graph)
    choose_schedules(module, decisions, context)
    if hook is not None:  # the IR after the decision step is BEAM's (PG_DUMP, DEBUG, VIZ)
        hook(parse_pipeline(decisions)[-1], module)
    return lower(module, hook)[0]


def _check_index_width(module: ModuleOp, device: str, target: str) -> None:
    """A target whose kernels index with 32-bit integers (PTX, WGSL) cannot reach the
    elements of a tensor of 2**31 or more: a DeviceError naming its shape, size and the
    limit, at the user's line, instead of a failure deep in the lowering (PTX) or indices
    that wrap (WGSL)."""
    bits = capabilities(target).index_bits
    if bits >= 64:
        return
    limit = 2 ** (bits - 1) - 1
    for op in module.walk():
        values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
        for value in values:
            t = value.type
            if isinstance(t, TensorType) and (n := math.prod(t.get_shape())) > limit:
                raise DeviceError(
                    f"device {device} indexes tensors with {bits}-bit integers ({target}): a "
                    f"tensor of shape {tuple(t.get_shape())} has {n:,} elements, more than "
                    f"the {limit:,} it can index\n  at {user_location()}")


# The op every kernel is after convert-uop-to-<target>.
_KERNEL_OPS = {"llvm": "llvm.func", "c": "pg_c.func", "ptx": "pg_ptx.entry", "wgsl": "pg_wgsl.fn"}
_SCHEDULE_OPS = {"pg_sched.alloc", "pg_sched.launch", "func.return"}


_UOP_KERNEL = "pg_uop.kernel"  # the kernels before the last pass (a direct route's input)


def _check_lowered(module: ModuleOp, spec: str, target: str, kernel_op: str | None = None
                   ) -> None:
    """A user's pipeline must take the graph all the way to `target`'s kernels (or to
    `kernel_op`, the pg_uop kernels a direct route prints, before the last pass)."""
    kernel_op = kernel_op or _KERNEL_OPS.get(target)
    for op in module.ops:
        inner = op.regions[0].ops if isinstance(op, func.FuncOp) and op.regions else ()
        left = next((o.name for o in inner if o.name not in _SCHEDULE_OPS), None)
        if not isinstance(op, func.FuncOp) and op.name != kernel_op:
            left = op.name
        if left is not None:
            raise PipelineError(
                f"the pipeline '{spec}' left {left} in the graph: a pipeline realize() runs "
                f"must lower to the {target} target (end with convert-uop-to-{target}), as "
                f"the default does: '{DEFAULT_PIPELINES[target]}'")


def _build_program(module: ModuleOp, runtime: Runtime, source: str) -> Program:
    """Compile `source`, the kernels of `module` (a stage-5 module, or a pg_uop one that a
    direct route printed), and plan its `@main`."""
    debug.lap("render")  # DEBUG=1's time per stage (a no-op unless DEBUG or VIZ is on)
    binary = runtime.compile(source)
    debug.lap("toolchain compile")
    return Program.from_module(runtime, module, source, binary)


def compile_module(module: ModuleOp, target: str) -> Program:
    """Compile the kernels of a stage-5 `module` for `target` ("llvm", "c", "ptx", "wgsl")
    on that target's device and plan its `@main` (no pipeline runs, nothing is cached)."""
    runtime = get_device(device_for_target(target))
    return _build_program(module, runtime,
                          render(module, runtime.renderer, getattr(runtime, "arch", None)))
