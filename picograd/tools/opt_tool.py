"""`opt-tool`: picograd's `mlir-opt`, an `xDSLOptMain` that knows picograd's dialects,
passes and output formats.

    opt-tool in.mlir -p tensor-simplify,cse                 flat pipeline (xDSL form)
    opt-tool in.mlir --pass-pipeline='builtin.module(cse)'  anchored pipeline (MLIR form)
    opt-tool in.mlir --emit=loop                            default pipeline up to a stage
    opt-tool in.mlir --emit=llvm | c | ptx | wgsl           ... down to LLVM IR / C / PTX / WGSL
    opt-tool in.mlir -p <stage-5 pipeline> -t llvm-ir       print LLVM IR (or -t c, ptx, wgsl)
    opt-tool --list-passes
    opt-tool kernels.loop.mlir --print-schedules           each kernel's schedule, who chose it
    opt-tool in.mlir --emit=llvm --print-ir-after-all       IR after each pass, on stderr
    opt-tool in.mlir --emit=llvm --time-passes              wall time per pass, on stderr
    opt-tool in.mlir --split-input-file --verify-diagnostics   one diagnostic per case

Reads stdin when no file is given. Verification: the input and the final IR are verified,
SSA dominance included (`--verify-each`: after every pass too; `--disable-verify`: never).
Every error (malformed, non-UTF-8 or invalid IR, an unknown pass or bad option, a pass that
fails, a printer given IR of another stage, an output file that cannot be written) is one
diagnostic on stderr and a non-zero exit status, not a traceback; parse and verifier errors
name `file:line:col` and show the line with a caret. With `--verify-diagnostics` (or
`--parsing-diagnostics`) they go to stdout instead, and the tool goes on with the next chunk
and exits 0 (for FileCheck tests of error messages). An exception none of that expects is
still one line, `opt-tool: internal error: ...`, and exit status 70: a bug to report
(scripts/fuzz_opt_tool.py and tests/unit/tools/test_opt_tool_fuzz.py look for them).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import IO

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain

from picograd.compiler.pass_registry import PICOGRAD_PASSES, all_passes
from picograd.compiler.pipelines import (
    STAGES,
    PipelineError,
    PipelineVerifyError,
    parse_pipeline,
    run_pipeline,
    stage_pipeline,
    verify_module,
)
from picograd.debug import pass_timing_report
from picograd.debug.ir_summary import policy_of, schedule_of
from picograd.dialects import register_dialects
from picograd.errors import PicogradError
from picograd.tools.diagnostics import (
    describe_verify_error,
    format_at,
    format_parse_error,
    parse_with_locations,
)
from picograd.tools.targets import EMIT_TARGETS, PICOGRAD_TARGETS

DUMP_HEADER = "// -----// IR Dump After {} //----- //"


class ChunkError(Exception):
    """One input chunk failed; `text` is the finished diagnostic."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


class PicogradOptMain(xDSLOptMain):
    version_format = "opt-tool (picograd, xdsl {xdsl_version})"
    passes: tuple[ModulePass, ...]
    spec: str

    # ── registration ─────────────────────────────────────────────────────────

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        register_dialects(self.ctx)

    def register_all_frontends(self) -> None:
        super().register_all_frontends()
        # Parsing goes through `parse_chunk` below, which keeps source locations.
        self.available_frontends["mlir"] = self._unused_frontend

    @staticmethod
    def _unused_frontend(io: IO[bytes]) -> ModuleOp:
        raise AssertionError("opt-tool parses in parse_chunk")

    def register_all_passes(self) -> None:
        # The same registry `run_pipeline` resolves names in.
        for name, getter in all_passes().items():
            self.register_pass(name, getter)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        for name, target in PICOGRAD_TARGETS.items():
            # A factory without parameters: xDSL calls one with parameters a legacy printer.
            self.available_targets[name] = _constant(target)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        self.arg_parser = arg_parser
        # xDSL's own --time-passes is kept: `process` prints a table per chunk for it.
        arg_parser.add_argument("--pass-pipeline", dest="passes", type=str,
                                help="pipeline, flat (a,b{k=v}) or anchored "
                                     "(builtin.module(a,b{k=v})); same as -p")
        arg_parser.add_argument("--emit", choices=STAGES, default=None,
                                help="run the default pipeline to the end of this stage and "
                                     "print it (llvm, c: LLVM IR text, C source)")
        arg_parser.add_argument("--print-ir-after-all", action="store_true",
                                help="print the IR after every pass to stderr")
        arg_parser.add_argument("--verify-each", action="store_true",
                                help="verify the IR after every pass, not only at the end")
        arg_parser.add_argument("--list-passes", action="store_true",
                                help="list the registered passes and exit")
        arg_parser.add_argument("--print-schedules", action="store_true",
                                help="print each kernel's schedule, who chose it and the "
                                     "loop-schedule pipeline that replays them all, "
                                     "instead of the IR")

    # ── pipeline ─────────────────────────────────────────────────────────────

    def setup_pipeline(self) -> None:
        """Resolve the pipeline string once; raises `PipelineError` for bad pipelines."""
        spec: str = self.args.passes or ""
        if self.args.emit is not None:
            if spec:
                self.arg_parser.error("--emit runs the default pipeline; it cannot be "
                                      "combined with -p/--pass-pipeline")
            spec = stage_pipeline(self.args.emit)
            if self.args.target == "mlir":
                self.args.target = EMIT_TARGETS.get(self.args.emit, "mlir")
        self.spec = spec
        self.passes = parse_pipeline(spec)
        self.pipeline = PassPipeline(self.passes)

    # ── running ──────────────────────────────────────────────────────────────

    def run(self) -> int:  # type: ignore[override]
        """Process every input chunk; returns the exit status."""
        if self.args.list_passes:
            sys.stdout.write(list_passes_text(self.available_passes))
            return 0
        try:
            chunks, _ = self.prepare_input()
        except (OSError, ValueError) as e:
            print(f"opt-tool: error: {e}", file=sys.stderr)
            return 1
        try:
            output = self.prepare_output()
        except OSError as e:  # -o into a missing folder, or one not writable
            print(f"opt-tool: error: cannot write the output file: {e}", file=sys.stderr)
            return 1
        failed = False
        try:
            for i, (chunk, offset) in enumerate(chunks):
                if i > 0:
                    output.write("// -----\n")
                try:
                    output.write(self.process(chunk.read(), offset))
                except ChunkError as e:
                    if self.args.verify_diagnostics or self.args.parsing_diagnostics:
                        output.write(e.text + "\n")
                    else:
                        sys.stdout.flush()
                        print(e.text, file=sys.stderr)
                        failed = True
                finally:
                    chunk.close()
                output.flush()
        finally:
            if output is not sys.stdout:
                output.close()
        return 1 if failed else 0

    def process(self, source: bytes, line_offset: int) -> str:
        """Parse, verify, run the pipeline on and print one chunk; raises ChunkError."""
        try:
            module, spans = parse_with_locations(
                self.ctx, source, self.get_input_name(),
                implicit_module=not self.args.no_implicit_module)
        except ParseError as e:
            raise ChunkError(format_parse_error(e, line_offset)) from None

        def check(prefix: str) -> None:
            try:
                verify_module(module)
            except DiagnosticException as e:
                raise ChunkError(describe_verify_error(
                    module, e, spans, prefix=prefix, line_offset=line_offset)) from None

        verify = not self.args.disable_verify
        if verify:
            check("")
        done: list[ModulePass] = []
        self._times: list[tuple[str, float]] = []
        self._mark = time.perf_counter()
        try:
            run_pipeline(module, self.spec, ctx=self.ctx,
                         verify_each=verify and self.args.verify_each,
                         after_pass=self._after_pass(done))
        except PipelineVerifyError as e:
            cause = e.__cause__ if isinstance(e.__cause__, Exception) else e
            raise ChunkError(describe_verify_error(
                module, cause, spans, prefix=f"IR after pass '{e.pass_name}' does not verify: ",
                line_offset=line_offset)) from None
        except (PicogradError, DiagnosticException) as e:
            raise ChunkError(f"error: pass '{self.passes[len(done)].name}' failed: {e}") from None
        if verify and self.passes:
            check(f"IR after pass '{self.passes[-1].name}' does not verify: ")
        if self.args.time_passes:
            sys.stdout.flush()
            sys.stderr.write(pass_timing_report(self._times))
        if self.args.print_schedules:
            return schedules_text(module)
        try:
            return self.output_resulting_program(module)
        except (PicogradError, DiagnosticException) as e:
            message = f"cannot print as '{self.args.target}': {e}"
            op = getattr(e, "op", None)  # the op a printer refused (WrongStageError)
            if isinstance(op, Operation) and op in spans:
                raise ChunkError(format_at(spans[op], message, line_offset)) from None
            raise ChunkError(f"error: {message}") from None

    def _after_pass(self, done: list[ModulePass]) -> Callable[[ModulePass, ModuleOp], None]:
        def after(pass_: ModulePass, module: ModuleOp) -> None:
            # with --verify-each a pass's time includes verifying the IR before it
            self._times.append((pass_.name, time.perf_counter() - self._mark))
            done.append(pass_)
            if self.args.print_ir_after_all:
                sys.stdout.flush()  # keep stdout and stderr in order when both go to a pipe
                print(DUMP_HEADER.format(pass_.name), file=sys.stderr)
                print(module, file=sys.stderr, flush=True)
            self._mark = time.perf_counter()  # printing is not the next pass's time

        return after


def schedules_text(module: ModuleOp) -> str:
    """One line per pg_loop kernel, `@k2 by beam: split(1, 64, upcast); ...`, then the
    `loop-schedule` pipeline that gives a module of those kernels before their schedules
    the same ones (an empty line for a module with no schedule)."""
    lines, replay = [], []
    for op in module.ops:
        # (by name: the dialect modules load on first use, not at opt-tool's start)
        sym = op.properties.get("sym_name")
        if op.name == "pg_loop.kernel" and isinstance(sym, StringAttr):
            name, schedule = sym.data, schedule_of(op)
            lines.append(f"@{name} by {policy_of(op) or 'nothing'}: {schedule or '(none)'}")
            if schedule:
                replay.append(f'loop-schedule{{kernel={name} actions="{schedule}"}}')
    lines.append(",".join(replay))
    return "\n".join(lines) + "\n"


def _constant(target: type[Target]) -> Callable[[], type[Target]]:
    return lambda: target


def _first_doc_line(cls: type) -> str:
    doc = (cls.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def list_passes_text(available: dict[str, Callable[[], type[ModulePass]]]) -> str:
    """picograd's passes with the first line of their docstring, then xDSL's names."""
    lines = ["picograd passes:"]
    for name, getter in PICOGRAD_PASSES.items():
        try:
            summary = _first_doc_line(getter())
        except ImportError as e:
            summary = f"(cannot be imported: {e})"
        lines.append(f"  {name:<24} {summary}")
    lines.append("xDSL passes:")
    lines += [f"  {name}" for name in sorted(available) if name not in PICOGRAD_PASSES]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """The `opt-tool` console script; returns the exit status."""
    try:
        try:
            tool = PicogradOptMain(description="picograd pass driver", args=argv)
        except PipelineError as e:
            print(f"opt-tool: error: {e}", file=sys.stderr)
            return 1
        return tool.run()
    except Exception as e:
        # The backstop of issue 11: every known bad input has its own diagnostic above;
        # one that escapes them is a bug to report, still not a traceback on a user's screen.
        sys.stdout.flush()
        print(f"opt-tool: internal error: {type(e).__name__}: {e} (please report it with the "
              "input and command line)", file=sys.stderr)
        return 70  # EX_SOFTWARE


if __name__ == "__main__":
    sys.exit(main())
