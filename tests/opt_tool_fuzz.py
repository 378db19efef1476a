"""A mutation fuzzer for `opt-tool`: real dumped IR of every stage, broken on purpose.

    seeds = stage_seeds()                          # stage -> [Seed], from SEED_PROGRAM
    case = make_case(seeds["loop"], random.Random(7))
    result = run_case(case, workdir)               # Result("diagnostic", ...)

Issue 11 asks `opt-tool` to answer any bad input with a diagnostic and a non-zero exit: never
a traceback, never a hang. The seeds are generated at run time (not kept as files) by running
the default pipelines on one small program and stopping at each stage, so they follow the
IR as it changes. A case is a seed's text with one to three mutations (byte flips, truncation,
deep nesting, non-UTF-8 bytes, out-of-range constants, bad enum words, swapped SSA names,
lines duplicated, deleted or moved, unterminated strings, a line of another stage's IR) and a
command line for its stage (the next stage's passes, the rest of a target's pipeline with its
printer, a printer alone), sometimes with a bad pass option or an `-o` into a missing
directory. `run_case` calls `opt_tool.main` in this process (a few ms a case, against ~1 s
for a new interpreter) with a SIGALRM time limit, and classifies the outcome.

Used by tests/unit/tools/test_opt_tool_fuzz.py (a fixed budget in CI) and
scripts/fuzz_opt_tool.py (any number of cases, a table of outcomes). Unix only (SIGALRM).
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from picograd.compiler.pipelines import DEFAULT_PIPELINES, flatten, stage_pipeline
from picograd.tools.opt_tool import main

# A matmul feeding an elementwise chain and a max-reduction: every stage has kernels with
# ranges, reductions, loads, stores and constants, and the seeds stay small (<16 KB).
SEED_PROGRAM = """\
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x1xf32>) {
  %a3 = pg_tensor.reshape %a : tensor<4x8xf32> -> tensor<4x8x1xf32>
  %ae = pg_tensor.expand %a3 : tensor<4x8x1xf32> -> tensor<4x8x4xf32>
  %b3 = pg_tensor.reshape %b : tensor<8x4xf32> -> tensor<1x8x4xf32>
  %be = pg_tensor.expand %b3 : tensor<1x8x4xf32> -> tensor<4x8x4xf32>
  %p = pg_tensor.binary mul %ae, %be : tensor<4x8x4xf32>
  %s = pg_tensor.reduce sum %p {axes = array<i64: 1>} : tensor<4x8x4xf32> -> tensor<4x1x4xf32>
  %r = pg_tensor.reshape %s : tensor<4x1x4xf32> -> tensor<4x4xf32>
  %one = pg_tensor.const 1.0 : tensor<4x4xf32>
  %e = pg_tensor.unary exp %r : tensor<4x4xf32>
  %y = pg_tensor.binary add %e, %one : tensor<4x4xf32>
  %m = pg_tensor.reduce max %y {axes = array<i64: 1>} : tensor<4x4xf32> -> tensor<4x1xf32>
  func.return %y, %m : tensor<4x4xf32>, tensor<4x1xf32>
}
"""

STAGES = ("tensor", "sched", "loop", "uop", "llvm", "c", "ptx", "wgsl")
TARGETS = ("llvm", "c", "ptx", "wgsl")
# the `-t` printer of each target stage
PRINTERS = {"llvm": "llvm-ir", "c": "c", "ptx": "ptx", "wgsl": "wgsl"}
# The first pass of each target's pipeline that leaves a stage. The GPU pipelines map the
# uop stage onto work items (uop-gpu-map) before converting it.
_EXITS = {"tensor": ("tensor-simplify",), "sched": ("convert-sched-to-loop",),
          "loop": ("convert-loop-to-uop",),
          "uop": ("uop-contract", "convert-uop-to-llvm", "convert-uop-to-c", "uop-gpu-map",
                  "convert-uop-to-wgsl")}
_NEXT = {"tensor": "sched", "sched": "loop", "loop": "uop"}

OUTCOMES = ("ok", "diagnostic", "traceback", "hang")


# ── seeds ────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Seed:
    """A stage's IR (`text`) as one target's pipeline leaves it, and the command lines that
    take it on from there."""

    stage: str
    target: str
    text: bytes
    commands: tuple[tuple[str, ...], ...]


def split_pipeline(target: str, stage: str) -> tuple[str, str]:
    """`target`'s default pipeline cut where it leaves `stage`: (before, rest), flat."""
    elements = flatten(DEFAULT_PIPELINES[target]).split(",")
    exits = _EXITS[stage]
    cut = next(i for i, e in enumerate(elements) if re.match(r"[\w-]+", e).group() in exits)  # type: ignore[union-attr]
    return ",".join(elements[:cut]), ",".join(elements[cut:])


def _commands(stage: str, target: str) -> tuple[tuple[str, ...], ...]:
    printer = PRINTERS[target]
    wrong = tuple(("-t", p) for p in PRINTERS.values() if p != printer)
    if stage in TARGETS:  # a target's own IR: print it, or with another target's printer
        return (("-t", printer), (), *wrong)
    _, rest = split_pipeline(target, stage)
    out: list[tuple[str, ...]] = [("-p", rest, "-t", printer), (), wrong[0]]
    if stage in _NEXT:
        # the default pipeline's passes between this stage's end and the next one's
        step = stage_pipeline(_NEXT[stage])[len(stage_pipeline(stage)):].lstrip(",")
        out.append(("-p", step))
    if stage == "tensor":
        out += [(f"--emit={s}",) for s in STAGES[1:]]
    return tuple(out)


def _run_to_text(source: bytes, argv: list[str], workdir: Path) -> bytes:
    path = workdir / "seed-input.mlir"
    path.write_bytes(source)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(path), *argv])
    if status != 0:
        raise RuntimeError(f"seed pipeline {argv} failed:\n{err.getvalue()}")
    return out.getvalue().encode()


def stage_seeds(workdir: Path) -> dict[str, list[Seed]]:
    """stage -> its seeds: one per target for the shared stages (the targets' pipelines
    differ before them), one for each target's own stage."""
    program = SEED_PROGRAM.encode()
    seeds: dict[str, list[Seed]] = {s: [] for s in STAGES}
    for target in TARGETS:
        for stage in ("tensor", "sched", "loop", "uop"):
            before, _ = split_pipeline(target, stage)
            text = _run_to_text(program, ["-p", before], workdir) if before else program
            seeds[stage].append(Seed(stage, target, text, _commands(stage, target)))
        text = _run_to_text(program, ["-p", DEFAULT_PIPELINES[target]], workdir)
        seeds[target].append(Seed(target, target, text, _commands(target, target)))
    return seeds


# ── mutations ────────────────────────────────────────────────────────────────

Mutation = Callable[[bytes, random.Random], bytes]

_NUMBER = re.compile(rb"(?<![\w%@#])-?\d+(\.\d+)?(e[+-]?\d+)?")
_WORD = re.compile(rb"(?<![%@#\w.])[a-z_][a-z0-9_]*(?![\w(<])")
_SSA = re.compile(rb"%[\w.$-]+")
_BAD_NUMBERS = (b"0", b"-1", b"-4", b"99999999999999999999999", b"-9223372036854775809",
                b"18446744073709551616", b"1e999", b"-1e400", b"nan", b"0x7fffffffffffffffff",
                b"2147483648", b"1.7976931348623157e309", b"4294967296")
_BAD_WORDS = (b"globa", b"upcst", b"reduc", b"f33", b"i0", b"xor", b"sum2", b"", b"index",
              b"tensor", b"global", b"upcast", b"local", b"f16", b"i1", b"bf16")
_NESTERS = (b"[" * 4000 + b"]" * 4000, b"(" * 3000, b"tensor<" * 2000, b"{" * 3000,
            b"!pg.buffer<" * 1500, b"array<i64: " * 1000)


def _span(data: bytes, rng: random.Random) -> int:
    return rng.randrange(len(data) + 1)


def byte_flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if out:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[:_span(data, rng)]


def non_utf8(data: bytes, rng: random.Random) -> bytes:
    at = _span(data, rng)
    bad = (0x80, 0xC3, 0xE2, 0xFF, 0xFE, 0xED, 0xA0)  # continuation, lead and never-valid bytes
    junk = bytes(rng.choice(bad) for _ in range(rng.randint(1, 4)))
    return data[:at] + junk + data[at:]


def _module_body_line(lines: list[bytes]) -> int:
    """Where an op may go at module level: after `builtin.module {`, else at the top."""
    return 1 if lines and lines[0].startswith(b"builtin.module") else 0


def deep_nesting(data: bytes, rng: random.Random) -> bytes:
    """Thousands of levels of something xDSL's parser, verifier, printer or a pass walks
    recursively: brackets anywhere, an attribute, a loop nest, a chain of ops."""
    lines = _lines(data)
    at = _module_body_line(lines)
    depth = rng.choice((300, 1500, 5000))
    kind = rng.randrange(4)
    if kind == 0:
        cut = _span(data, rng)
        return data[:cut] + rng.choice(_NESTERS) + data[cut:]
    if kind == 1:
        nest = b"builtin.module attributes {x = " + b"[" * depth + b"]" * depth + b"} {\n}\n"
    elif kind == 2:
        inner = b"".join(b"  pg_loop.range %%d%d = 0 to 2 global {\n" % i for i in range(depth))
        nest = (b"pg_loop.kernel @deep(%o: !pg.buffer<2xf32>) {\n" + inner
                + b"}\n" * depth + b"}\n")
    else:  # 1500 passes Python's recursion limit; 5000 lines would take seconds to parse
        return _op_chain(data, min(depth, 1500))
    return b"".join(lines[:at]) + nest + b"".join(lines[at:])


def _op_chain(data: bytes, depth: int) -> bytes:
    """`%y`, the tensor seed's first result, through `depth` exps in a row."""
    if b"func.return %y," not in data:
        return data
    chain = [b"  %c0 = pg_tensor.unary exp %y : tensor<4x4xf32>\n"]
    chain += [b"  %%c%d = pg_tensor.unary exp %%c%d : tensor<4x4xf32>\n" % (i, i - 1)
              for i in range(1, depth)]
    ret = b"func.return %%c%d," % (depth - 1)
    return data.replace(b"  func.return %y,", b"".join(chain) + b"  " + ret)


def _replace_match(data: bytes, pattern: re.Pattern[bytes], rng: random.Random,
                   new: Callable[[bytes], bytes]) -> bytes:
    matches = list(pattern.finditer(data))
    if not matches:
        return data
    m = rng.choice(matches)
    return data[:m.start()] + new(m.group()) + data[m.end():]


def bad_constant(data: bytes, rng: random.Random) -> bytes:
    """A number (constant, size, bound, shape) out of range: huge, negative, zero, inf."""
    return _replace_match(data, _NUMBER, rng, lambda _: rng.choice(_BAD_NUMBERS))


def bad_word(data: bytes, rng: random.Random) -> bytes:
    """An enum word misspelt (`global` -> `globa`) or swapped for another one."""
    def mangle(word: bytes) -> bytes:
        if rng.random() < 0.5 or len(word) < 2:
            return rng.choice(_BAD_WORDS)
        i = rng.randrange(len(word))
        return word[:i] + word[i + 1:]
    return _replace_match(data, _WORD, rng, mangle)


def swap_ssa(data: bytes, rng: random.Random) -> bytes:
    """A use of another value (maybe defined later: use-before-def, or of another type)."""
    names = [m.group() for m in _SSA.finditer(data)]
    if not names:
        return data
    return _replace_match(data, _SSA, rng, lambda _: rng.choice(names))


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def edit_lines(data: bytes, rng: random.Random) -> bytes:
    """A line duplicated, deleted, or moved up (its value used before it is defined)."""
    lines = _lines(data)
    i = rng.randrange(len(lines))
    kind = rng.randrange(3)
    if kind == 0:
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif kind == 1:
        del lines[i]
    else:
        lines.insert(rng.randrange(i + 1), lines.pop(i))
    return b"".join(lines)


def unterminated_string(data: bytes, rng: random.Random) -> bytes:
    """A `"` that never closes, followed by text (xDSL's lexer backtracks on it), or a bad
    escape inside a string."""
    at = _span(data, rng)
    tail = rng.choice((b'"' + b"a" * 40, b'"split(0, 4, upcast); interchange(1)',
                       b'"\\q' + b"b" * 30, b'@"' + b"k" * 30, b'"\\'))
    return data[:at] + tail + data[at:]


def foreign_line(data: bytes, rng: random.Random, others: list[bytes] | None = None) -> bytes:
    """A line of another stage's IR (an op its passes and printers do not expect)."""
    pool = _lines(rng.choice(others)) if others else _lines(data)
    lines = _lines(data)
    lines.insert(rng.randrange(len(lines) + 1), rng.choice(pool))
    return b"".join(lines)


MUTATIONS: dict[str, Mutation] = {
    "byte-flip": byte_flip, "truncate": truncate, "non-utf8": non_utf8,
    "deep-nesting": deep_nesting, "bad-constant": bad_constant, "bad-word": bad_word,
    "swap-ssa": swap_ssa, "edit-lines": edit_lines, "unterminated-string": unterminated_string,
}


def mutate_command(command: tuple[str, ...], rng: random.Random, workdir: Path
                   ) -> tuple[str, ...]:
    """Sometimes a bad pass option (`loop-upcast{rows=0}`) or `-o` into a missing folder."""
    roll = rng.random()
    if roll < 0.06:
        return (*command, "-o", str(workdir / "missing" / "out.mlir"))
    if roll < 0.14:
        extra = rng.choice(("loop-upcast{rows=0}", "convert-tensor-to-sched{max-buffers=1}",
                            "loop-upcast{rows=-3 cols=2}", "loop-split{factor=0}",
                            "uop-gpu-map{target=globa}", "loop-optimize{vector-bytes=0}",
                            "convert-loop-to-uop{vectorize=maybe}",
                            "loop-simplify{max-iterations=-1}"))
        return ("-p", extra)
    return command


@dataclass(frozen=True)
class Case:
    stage: str
    text: bytes
    argv: tuple[str, ...]
    mutations: tuple[str, ...] = field(default=())


def make_case(seeds: list[Seed], rng: random.Random, workdir: Path,
              others: list[bytes] | None = None) -> Case:
    """A seed of one stage with 1-3 mutations, and a command line for it."""
    seed = rng.choice(seeds)
    text, names = seed.text, []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if others and rng.random() < 0.08:
            name, text = "foreign-line", foreign_line(text, rng, others)
        else:
            name = rng.choice(list(MUTATIONS))
            text = MUTATIONS[name](text, rng)
        names.append(name)
    argv = mutate_command(rng.choice(seed.commands), rng, workdir)
    return Case(seed.stage, text, argv, tuple(names))


# ── running ──────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Result:
    outcome: str  # one of OUTCOMES
    status: int | None
    error: str  # the escaped exception's type, or "" (for a traceback or a hang)
    stderr: str


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` swallows it."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    def on_alarm(signum: int, frame: object) -> None:
        raise _Timeout

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


_INTERNAL = re.compile(r"opt-tool: internal error: (\w+)")
_EXC_LINE = re.compile(r"^(\w+(?:\.\w+)*(?:Error|Exception|Exit|Interrupt)):", re.M)


def run_case(case: Case, workdir: Path, timeout: float = 5.0) -> Result:
    """Run `opt-tool <case file> <argv>` in this process and classify what happened."""
    path = workdir / f"case-{case.stage}.mlir"
    path.write_bytes(case.text)
    out, err = io.StringIO(), io.StringIO()
    status: int | None = None
    limit = sys.getrecursionlimit()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                _time_limit(timeout):
            status = main([str(path), *case.argv])
    except _Timeout:
        return Result("hang", None, "", err.getvalue())
    except SystemExit as e:  # argparse's usage errors exit 2 with a message
        status = e.code if isinstance(e.code, int) else 1
    except BaseException as e:  # the point: anything that escapes main
        detail = "".join(traceback.format_exception(e))
        return Result("traceback", None, type(e).__name__, err.getvalue() + detail)
    finally:
        sys.setrecursionlimit(limit)
    stderr = err.getvalue()
    internal = _INTERNAL.search(stderr)
    if internal:  # opt-tool's backstop caught an exception: a bug all the same
        return Result("traceback", status, internal.group(1), stderr)
    if "Traceback (most recent call last)" in stderr + out.getvalue():
        m = _EXC_LINE.search(stderr.split("Traceback (most recent call last)")[-1])
        return Result("traceback", status, m.group(1) if m else "printed", stderr)
    return Result("ok" if status == 0 else "diagnostic", status, "", stderr)
