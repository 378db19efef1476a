"""Default pipelines, pipeline-string parsing, and `run_pipeline`.

A pipeline string names passes with options, either in xDSL's flat form or MLIR's anchored
form; both mean the same thing:

    tensor-simplify,loop-simplify{max-iterations=8},cse
    builtin.module(tensor-simplify,loop-simplify{max-iterations=8},cse)
    builtin.module(tensor-simplify,func.func(cse))

Anchors (`builtin.module(...)`, `func.func(...)`, `any(...)`) are accepted for compatibility
with MLIR tooling, but every picograd and xDSL pass is a module pass: the passes inside any
anchor run, in order, on the whole module. `canonical_form` prints the anchored form with
one `builtin.module` anchor.

Parsing happens once per distinct string (`parse_pipeline` is cached): `realize()` calls
`run_pipeline` with the same default string on every compile.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, get_pass_option_infos
from xdsl.utils.arg_spec import ArgSpec
from xdsl.utils.arg_spec import parse_pipeline as parse_flat_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException

from picograd.compiler.pass_registry import PassGetter, all_passes
from picograd.dialects import make_context
from picograd.dialects.capabilities import host_cache_bytes, host_vector_registers
from picograd.dialects.dominance import verify_dominance
from picograd.errors import PicogradError


def _join(*parts: str | tuple[str, ...]) -> str:
    return ",".join(p for part in parts for p in ((part,) if isinstance(part, str) else part))


def _tensor_to_loop(max_buffers: int | None = None, attention_rows: int | None = None,
                    alias_bytes: int | None = None, panel_cols: int | None = None,
                    a_min_reuse: int | None = None,
                    chunk_ratio: int | None = None) -> tuple[str, ...]:
    """pg_tensor -> simplified pg_loop: matmul operands in the layout their kernels want
    (on CPUs also with rows that do not alias in the caches, `alias_bytes`, and in column
    panels of the register tile's width, `panel_cols`, and A row-major where it is read
    `a_min_reuse` times along a strided reduce), long
    reductions in two steps (many partials, then their reduction), fusion into kernels (at
    most `max_buffers` buffers per kernel where the target has such a limit; an attention's
    score rows in flight, `attention_rows`, where the target wants more work items than the
    CPUs' threads; on CPUs a float sum split only at a divisor within `chunk_ratio` of the
    wanted partials that leaves lengths loop-optimize chunks, else padded:
    tensor_split_reduce.py), one kernel per group of identical ones, then index arithmetic."""
    options = " ".join(f"{name}={value}" for name, value in (
        ("max-buffers", max_buffers), ("attention-rows", attention_rows)) if value is not None)
    schedule = f"convert-tensor-to-sched{{{options}}}" if options else "convert-tensor-to-sched"
    layout_options = " ".join(f"{name}={value}" for name, value in (
        ("alias-bytes", alias_bytes), ("panel-cols", panel_cols),
        ("a-min-reuse", a_min_reuse)) if value)
    layout = f"matmul-layout{{{layout_options}}}" if layout_options else "matmul-layout"
    split = (f"tensor-split-reduce{{chunk-ratio={chunk_ratio} float-work={CPU_FLOAT_WORK}}}"
             if chunk_ratio else "tensor-split-reduce")
    return ("tensor-simplify", layout, split, schedule, "sched-dedup",
            "convert-sched-to-loop", "loop-simplify")


# tensor-split-reduce's `chunk-ratio` on CPUs: a float sum whose nearest divisor split is
# more than 2x off the wanted partials is padded instead (a prime chunk length would leave
# one accumulator per partial that loop-optimize cannot chunk). Not on GPUs: their work
# groups add each partial as a tree, and many padded partials were less accurate there.
CPU_CHUNK_RATIO = 2
CPU_FLOAT_WORK = 256

# CPU caches map addresses 4 KiB apart to the same sets (L1: 64 sets of 64-byte lines; the
# L2 of the CPUs measured, 128 KiB per way): matmul-layout pads B's rows that far apart.
CPU_ALIAS_BYTES = 4096
# A matmul's A operand read along a strided reduce (a weight gradient's `x.T @ dy`) is
# copied row-major where the product reads it this many times (its columns) or more.
CPU_A_MIN_REUSE = 64


def _panel_cols() -> int:
    """The f32 columns of `loop-optimize`'s matmul tile on the host (4 rows of as many of 4,
    2 or 1 vectors as fit half the vector registers: `big_tile_cols`), which `matmul-layout`
    lays B's column panels out for; `loop-optimize` takes the width of the panels it finds
    as the tile's, so a different width only costs speed."""
    vector_bytes, registers = host_vector_registers()
    vectors = next(v for v in (4, 2, 1) if 4 * v <= max(1, registers // 2) or v == 1)
    return vector_bytes // 4 * vectors


# A GPU runs an attention's tiles of rows as its work items: many more than a CPU's threads.
GPU_ATTENTION_ROWS = 4096

# pg_loop -> pg_uop, simplified, with common subexpressions merged. The CPU targets take
# upcast lanes as vectors where they have a vector form (LLVM vectors, C vector extensions).
_LOOP_TO_UOP = ("convert-loop-to-uop", "uop-simplify", "cse")
_CPU_LOOP_TO_UOP = ("convert-loop-to-uop{vectorize=true}", "uop-simplify", "cse")


def _gpu_map(target: str) -> tuple[str, ...]:
    """Global ranges onto work groups and items, then legalised for `target`'s capability
    table. No `cse` after the mapping: it could merge an op under a guard (`pg_uop.if`)
    with one after its `endif`."""
    return (f"uop-gpu-map{{target={target}}}", f"uop-legalize{{target={target}}}",
            "uop-simplify")



# loop-optimize's `min-work` on CPUs: a candidate of fewer iterations (reduce included)
# stays untiled where a tile would not change how its sum adds (`small_untiled`). Its
# kernel runs in microseconds either way; the MLP step's four (128, 10) loss reductions
# with 8 row lanes each cost 0.15-0.2 s of CPU time of its cold compile.
MIN_TILE_WORK = 16384


def _cpu_schedule() -> str:
    """`loop-optimize` for the host's vector registers and L2 cache (CPU only), leaving a
    small kernel untiled where that changes no sum (`MIN_TILE_WORK`): each
    kernel's schedule (register tiles that the C and LLVM compilers vectorise, loop order,
    cache blocks) is picked from them; the numbers are in the pipeline string, so a dumped
    pipeline replays the same schedules on another machine."""
    vector_bytes, registers = host_vector_registers()
    return (f"loop-optimize{{vector-bytes={vector_bytes} registers={registers} "
            f"cache-bytes={host_cache_bytes()} min-work={MIN_TILE_WORK}}}")


# A matmul-like kernel on CUDA computes a tile of outputs per work item (accumulators in
# registers: 8 x 8 takes 16 loads per 64 multiply-adds, 4 x 4 8 per 16, untiled 2 per 1):
# the largest tile that divides its ranges and leaves at least 65536 work items to fill
# the GPU. On an H100, fp32 TFLOP/s at 512 / 1024 / 2048 / 4096: untiled 3.4 / 4.2 / 4.3 /
# 4.2; 4 x 4 from 16384 tiles 1.9 / 7.9 / 9.9 / 11.3; 8 x 8 from 4096 1.1 / 5.1 / 13.1 /
# 13.8; this choice 3.4 / 8.0 / 13.0 / 13.7 (torch's cuBLAS 8 / 28 / 48 / 51).
_GPU_TILE = ("loop-upcast{rows=8 cols=8 min-tiles=65536}",
             "loop-upcast{rows=4 cols=4 min-tiles=65536}")

# WebGPU's kernels are split to fit its 8 storage-buffer bindings
# (`capabilities("wgsl").max_buffers`).
_CPU_TO_UOP = (*_tensor_to_loop(alias_bytes=CPU_ALIAS_BYTES, panel_cols=_panel_cols(),
                                a_min_reuse=CPU_A_MIN_REUSE, chunk_ratio=CPU_CHUNK_RATIO),
               _cpu_schedule(), "loop-unswitch",
               *_CPU_LOOP_TO_UOP)
CPU_LLVM = _join(_CPU_TO_UOP, "uop-contract", "convert-uop-to-llvm")
CPU_C = _join(_CPU_TO_UOP, "convert-uop-to-c")
GPU_PTX = _join(_tensor_to_loop(attention_rows=GPU_ATTENTION_ROWS), _GPU_TILE, _LOOP_TO_UOP,
                _gpu_map("ptx"), "convert-uop-to-ptx")
GPU_WGSL = _join(_tensor_to_loop(max_buffers=8, attention_rows=GPU_ATTENTION_ROWS),
                 _LOOP_TO_UOP, _gpu_map("wgsl"), "convert-uop-to-wgsl")

DEFAULT_PIPELINES: dict[str, str] = {"llvm": CPU_LLVM, "c": CPU_C, "ptx": GPU_PTX,
                                     "wgsl": GPU_WGSL}

# The stages `stage_pipeline` can stop after, in pipeline order. "llvm", "c", "ptx" and
# "wgsl" are the whole default pipeline of that target.
STAGES = ("tensor", "sched", "loop", "uop", "llvm", "c", "ptx", "wgsl")

# A stage ends just before the first pass that converts out of it.
_STAGE_EXITS: dict[str, tuple[str, ...]] = {
    "tensor": ("convert-tensor-to-sched",),
    "sched": ("convert-sched-to-loop",),
    "loop": ("convert-loop-to-uop",),
    # uop-contract is the LLVM target's first step: it changes rounding (a sum of products
    # rounds once per step), so the stages every target shares end before it
    "uop": ("uop-contract", "convert-uop-to-llvm", "convert-uop-to-c"),
}
_TARGET_STAGES = ("llvm", "c", "ptx", "wgsl")

AfterPass = Callable[[ModulePass, ModuleOp], None]


# ── errors ───────────────────────────────────────────────────────────────────


class PipelineError(PicogradError):
    """A pipeline string that cannot be turned into passes, or a pipeline that broke the IR."""


class PipelineSyntaxError(PipelineError):
    """The pipeline string is malformed (unbalanced anchors, a stray character...)."""


class UnknownPassError(PipelineError):
    """A pipeline names a pass nobody registered; `suggestions` are the nearest names."""

    def __init__(self, name: str, suggestions: Sequence[str]):
        self.name = name
        self.suggestions = tuple(suggestions)
        hint = (f"did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions
                else "`opt-tool --list-passes` lists the known passes")
        super().__init__(f"unknown pass '{name}'; {hint}")


class PassOptionError(PipelineError):
    """A pass was given an option it does not have, or a value of the wrong type."""


class PassDepthError(PipelineError):
    """A pass recursed deeper than Python allows: the IR nests, or chains ops, too deeply
    for it (thousands of levels)."""

    def __init__(self, pass_name: str):
        self.pass_name = pass_name
        super().__init__(f"pass '{pass_name}': the IR is nested or chained too deeply for "
                         "this pass (Python's recursion limit was reached)")


class PipelineVerifyError(PipelineError):
    """With `verify_each`, the IR did not verify after `pass_name` (None: the input)."""

    def __init__(self, pass_name: str | None, message: str):
        self.pass_name = pass_name
        where = "the input" if pass_name is None else f"the IR after pass '{pass_name}'"
        super().__init__(f"{where} does not verify: {message}")


# ── parsing ──────────────────────────────────────────────────────────────────

_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
_SPACE = re.compile(r"\s*")


class _Splitter:
    """Flattens a possibly anchored pipeline string into its pass elements (`name{opts}`).

    Only the structure is read here: anchors, commas, and where each option block or
    xDSL's `mlir-opt[...]` block ends (quotes respected). The elements themselves are
    parsed by xDSL's flat-pipeline parser.
    """

    def __init__(self, spec: str):
        self.spec = spec
        self.pos = 0

    def error(self, message: str) -> PipelineSyntaxError:
        caret = " " * self.pos + "^"
        return PipelineSyntaxError(f"bad pass pipeline: {message}\n  {self.spec}\n  {caret}")

    def skip_space(self) -> None:
        self.pos = _SPACE.match(self.spec, self.pos).end()  # type: ignore[union-attr]

    def peek(self) -> str:
        return self.spec[self.pos] if self.pos < len(self.spec) else ""

    def elements(self, inside_anchor: bool = False) -> list[str]:
        out: list[str] = []
        self.skip_space()
        if not inside_anchor and not self.peek():
            return out
        if inside_anchor and self.peek() == ")":
            self.pos += 1
            return out
        while True:
            out.extend(self.element())
            self.skip_space()
            c = self.peek()
            if c == ",":
                self.pos += 1
                self.skip_space()
            elif c == ")" and inside_anchor:
                self.pos += 1
                return out
            elif not c and not inside_anchor:
                return out
            else:
                raise self.error("expected ',' or ')'" if inside_anchor else "expected ','")

    def element(self) -> list[str]:
        m = _NAME.match(self.spec, self.pos)
        if m is None:
            raise self.error("expected a pass name")
        name, self.pos = m.group(), m.end()
        if self.peek() == "(":
            if "." not in name and name != "any":
                raise self.error(f"'{name}' is not an op anchor (builtin.module, func.func, any)")
            self.pos += 1
            return self.elements(inside_anchor=True)
        if "." in name:
            raise self.error(f"'{name}' is an op name: an anchor needs '(' and ')'")
        start = self.pos
        if self.peek() == "{":
            self.skip_block("{", "}")
        elif self.peek() == "[":
            self.skip_block("[", "]")
        return [name + self.spec[start:self.pos]]

    def skip_block(self, open_: str, close: str) -> None:
        depth, quoted = 0, False
        while self.pos < len(self.spec):
            c = self.spec[self.pos]
            self.pos += 1
            if quoted:
                if c == "\\":
                    self.pos += 1
                elif c == '"':
                    quoted = False
            elif c == '"':
                quoted = True
            elif c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return
        raise self.error(f"missing '{close}'")


def flatten(spec: str) -> str:
    """The flat (xDSL) form of a flat or anchored pipeline string, options untouched."""
    return ",".join(_Splitter(spec).elements())


def _arg_specs(spec: str) -> list[ArgSpec]:
    flat = flatten(spec)
    try:
        return list(parse_flat_pipeline(flat))
    except ArgSpecParseError as e:  # a BaseException in xDSL: rewrap as a user error
        raise PipelineSyntaxError(f"bad pass pipeline '{spec}':\n{e}") from None


def _instantiate(arg: ArgSpec, available: dict[str, PassGetter]) -> ModulePass:
    getter = available.get(arg.name)
    if getter is None:
        close = difflib.get_close_matches(arg.name, list(available), n=3, cutoff=0.6)
        raise UnknownPassError(arg.name, close)
    cls = getter()
    try:
        return cls.from_pass_spec(arg)
    except (ValueError, TypeError) as e:
        infos = get_pass_option_infos(cls)
        known = ", ".join(
            f"{i.name.replace('_', '-')}: {i.expected_type}"
            + (f" = {i.default_value}" if i.default_value is not None else "")
            for i in infos
        ) or "none"
        raise PassOptionError(f"pass '{arg.name}': {e} (its options: {known})") from None


def parse_pipeline(spec: str, available: dict[str, PassGetter] | None = None
                   ) -> tuple[ModulePass, ...]:
    """The passes a pipeline string names, instantiated with their options.

    `available` defaults to `all_passes()`, and then the result is cached per string.
    Raises `PipelineSyntaxError`, `UnknownPassError` or `PassOptionError`.
    """
    if available is None:
        return _parse_cached(spec)
    return tuple(_instantiate(a, available) for a in _arg_specs(spec))


@functools.lru_cache(maxsize=256)
def _parse_cached(spec: str) -> tuple[ModulePass, ...]:
    # Passes are frozen dataclasses, so sharing instances between runs is safe.
    available = all_passes()
    return tuple(_instantiate(a, available) for a in _arg_specs(spec))


def canonical_form(spec: str) -> str:
    """`builtin.module(p1,p2{k=v})`: the anchored form, options as the passes print them
    (non-default values only)."""
    return "builtin.module(" + ",".join(_pass_text(p) for p in parse_pipeline(spec)) + ")"


def _pass_text(pass_: ModulePass) -> str:
    """`name{option-name=value ...}` with MLIR's hyphenated option names (xDSL prints the
    Python field names, `vector_bytes`; both parse)."""
    text = str(pass_)
    for info in get_pass_option_infos(type(pass_)):
        field = info[0]
        if "_" in field:
            text = re.sub(rf"([{{ ]){field}=", rf"\g<1>{field.replace('_', '-')}=", text)
    return text


def pass_names(spec: str) -> list[str]:
    """The pass names of a pipeline string, in order (no pass is looked up)."""
    return [a.name for a in _arg_specs(spec)]


def stage_pipeline(stage: str) -> str:
    """The default pipeline up to the end of `stage` (one of `STAGES`), as a flat string.

    A target stage gives that target's whole pipeline; an earlier stage cuts CPU_LLVM's
    (every pipeline agrees with it up to the end of "uop", but for the CPU-only
    `loop-optimize` and the GPU mapping).
    """
    if stage not in STAGES:
        raise PipelineError(f"unknown stage '{stage}'; stages are {', '.join(STAGES)}")
    full = DEFAULT_PIPELINES[stage if stage in _TARGET_STAGES else "llvm"]
    exits = _STAGE_EXITS.get(stage, ())
    elements = _Splitter(full).elements()
    for i, element in enumerate(elements):
        if _NAME.match(element).group() in exits:  # type: ignore[union-attr]
            return ",".join(elements[:i])
    return full


def pipeline_head(spec: str, last: str) -> str | None:
    """The flat form of `spec` without its last pass, when that pass is `last` (without
    options); else None. The compile driver runs a pipeline that ends in a target's
    conversion this way when it prints the kernels straight from pg_uop."""
    elements = _Splitter(spec).elements()
    if not elements or elements[-1] != last:
        return None
    return ",".join(elements[:-1])


# The passes that decide each kernel's schedule: the CPU heuristic (`loop-optimize`) and the
# GPU one (`loop-upcast`'s register tiles). BEAM search replaces what they chose.
DECISION_PASSES = frozenset({"loop-optimize", "loop-upcast"})


def decision_split(spec: str) -> tuple[str, str, str] | None:
    """(`spec` before its schedule decisions, the decision passes, the rest), all flat:
    the decisions are the run of `DECISION_PASSES` that starts at the first of them.
    None when the pipeline has none, or nothing after them (it does not lower)."""
    elements = _Splitter(spec).elements()
    names = [_NAME.match(e).group() for e in elements]  # type: ignore[union-attr]
    first = next((i for i, name in enumerate(names) if name in DECISION_PASSES), None)
    if first is None:
        return None
    end = first
    while end < len(names) and names[end] in DECISION_PASSES:
        end += 1
    if end == len(names):
        return None
    return (",".join(elements[:first]), ",".join(elements[first:end]),
            ",".join(elements[end:]))


# Passes that rewrite each kernel on its own, whatever the other kernels are (`@main`, the
# schedule, they leave as it is or rewrite alike): a pipeline's tail of them may run on
# parts of a graph's kernels in separate processes (`picograd/compiler/parallel_lowering.py`).
KERNEL_LOCAL_PASSES = frozenset({
    "convert-sched-to-loop", "loop-simplify", "loop-optimize", "loop-unswitch",
    "convert-loop-to-uop",
    "uop-simplify", "cse", "uop-contract"})


def kernel_local_tail(spec: str) -> tuple[str, str] | None:
    """(`spec` up to its tail of `KERNEL_LOCAL_PASSES`, that tail), both flat; None when
    the pipeline does not end in such passes, or has nothing before them."""
    elements = _Splitter(spec).elements()
    cut = len(elements)
    while cut > 0 and _NAME.match(elements[cut - 1]).group() in KERNEL_LOCAL_PASSES:  # type: ignore[union-attr]
        cut -= 1
    if cut == len(elements) or cut == 0:
        return None
    return ",".join(elements[:cut]), ",".join(elements[cut:])


# ── running ──────────────────────────────────────────────────────────────────


@functools.cache
def default_context() -> Context:
    """The context `run_pipeline` uses when given none: every dialect, registered lazily.

    Shared by the whole process; passes only read it (or load dialects, which is idempotent).
    """
    return make_context()


def verify_module(module: ModuleOp) -> None:
    """xDSL's verification plus SSA dominance, which xDSL does not check (a value used
    before its definition verifies there, and breaks the lowerings after)."""
    module.verify()
    verify_dominance(module)


def _verify(module: ModuleOp, pass_name: str | None) -> None:
    try:
        verify_module(module)
    except DiagnosticException as e:
        raise PipelineVerifyError(pass_name, str(e)) from e


def run_pipeline(module: ModuleOp, spec: str, *, ctx: Context | None = None,
                 verify_each: bool = False, after_pass: AfterPass | None = None) -> ModuleOp:
    """Run the passes of `spec` (flat or anchored) on `module`, in place, and return it.

    `after_pass(pass_, module)` is called after every pass (before verification, so that a
    dump shows IR that fails to verify). With `verify_each`, the input and the IR after each
    pass are verified, and a failure raises `PipelineVerifyError` naming the pass (the
    xDSL `VerifyException` is its `__cause__`). Errors a pass raises propagate unchanged,
    but a RecursionError, which becomes a `PassDepthError` naming the pass.
    """
    passes = parse_pipeline(spec)
    ctx = ctx if ctx is not None else default_context()
    if verify_each:
        _verify(module, None)
    for pass_ in passes:
        try:
            pass_.apply(ctx, module)
        except RecursionError:  # the stack is unwound here: report it, do not crash
            raise PassDepthError(pass_.name) from None
        if after_pass is not None:
            after_pass(pass_, module)
        if verify_each:
            _verify(module, pass_.name)
    return module
