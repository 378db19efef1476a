"""`opt-tool` in-process (`main(argv)`): input, pipelines, dumps, targets, errors.

The lit tests in tests/filecheck/tools run the real command line; these cover the cases
that need a test pass or an exact exit status.
"""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from picograd.compiler import pipelines
from picograd.compiler.pass_registry import PICOGRAD_PASSES, all_passes
from picograd.dialects.pg import UnaryKind
from picograd.dialects.pg_tensor import UnaryOp
from picograd.errors import PicogradError
from picograd.tools.opt_tool import main

GRAPH = """\
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = pg_tensor.const 1.0 : tensor<4xf32>
  %a = pg_tensor.binary mul %x, %one : tensor<4xf32>
  %e1 = pg_tensor.unary exp %a : tensor<4xf32>
  %e2 = pg_tensor.unary exp %x : tensor<4xf32>
  func.return %e1, %e2 : tensor<4xf32>, tensor<4xf32>
}
"""


@dataclass(frozen=True)
class FailingPass(ModulePass):
    """Test pass: raises a user error."""

    name = "test-fail"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise PicogradError("the graph is too big")


@dataclass(frozen=True)
class BreakIR(ModulePass):
    """Test pass: erases each function's terminator, which leaves invalid IR."""

    name = "test-break-ir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp):
                f.body.block.last_op.detach()  # type: ignore[union-attr]


@dataclass(frozen=True)
class AddBadOp(ModulePass):
    """Test pass: adds an op that does not verify (`not` on a float tensor)."""

    name = "test-add-bad-op"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        main_ = next(f for f in op.ops if isinstance(f, func.FuncOp))
        block = main_.body.block
        assert block.last_op is not None  # a verified function ends in func.return
        block.insert_op_before(UnaryOp(UnaryKind.NOT, block.args[0]), block.last_op)


@dataclass(frozen=True)
class CrashingPass(ModulePass):
    """Test pass: a bug, an exception that is not a user error."""

    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("a bug in a pass")


@dataclass(frozen=True)
class RecursingPass(ModulePass):
    """Test pass: recurses without end, as a recursive pass on a very deep graph would."""

    name = "test-recurse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.apply(ctx, op)


@pytest.fixture
def test_passes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for cls in (FailingPass, BreakIR, AddBadOp, CrashingPass, RecursingPass):
        monkeypatch.setitem(all_passes(), cls.name, lambda cls=cls: cls)
    pipelines._parse_cached.cache_clear()
    yield
    pipelines._parse_cached.cache_clear()


@pytest.fixture
def graph(tmp_path: Path) -> str:
    path = tmp_path / "graph.mlir"
    path.write_text(GRAPH)
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_reads_a_file_and_runs_a_flat_pipeline(capsys, graph) -> None:
    rc, out, err = run(capsys, graph, "-p", "tensor-simplify,cse")
    assert (rc, err) == (0, "")
    assert "pg_tensor.binary" not in out
    assert out.count("pg_tensor.unary exp") == 1


def test_anchored_pipeline_gives_the_same_result(capsys, graph) -> None:
    flat = run(capsys, graph, "-p", "tensor-simplify,cse")
    anchored = run(capsys, graph, "--pass-pipeline=builtin.module(tensor-simplify,func.func(cse))")
    assert flat == anchored


def test_reads_stdin(capsys, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GRAPH.encode())))
    rc, out, _ = run(capsys, "-p", "tensor-simplify")
    assert rc == 0 and "func.func @main" in out


def test_writes_the_output_file(capsys, graph, tmp_path) -> None:
    target = tmp_path / "out.mlir"
    rc, out, _ = run(capsys, graph, "-o", str(target))
    assert (rc, out) == (0, "")
    assert "pg_tensor.unary exp" in target.read_text()


def test_print_ir_after_all_dumps_every_pass_to_stderr(capsys, graph) -> None:
    rc, out, err = run(capsys, graph, "-p", "tensor-simplify,cse", "--print-ir-after-all")
    assert rc == 0
    headers = [line for line in err.splitlines() if line.startswith("// -----// IR Dump")]
    assert headers == ["// -----// IR Dump After tensor-simplify //----- //",
                       "// -----// IR Dump After cse //----- //"]
    last_dump = err.split("// -----// IR Dump After cse //----- //\n")[1]
    assert last_dump.rstrip("\n") == out.rstrip("\n")
    assert "IR Dump" not in out


def test_unknown_pass_suggests_names(capsys, graph) -> None:
    rc, out, err = run(capsys, graph, "-p", "uop-simplfy")
    assert rc == 1 and out == ""
    assert err == ("opt-tool: error: unknown pass 'uop-simplfy'; did you mean "
                   "'uop-simplify', 'loop-simplify', 'tensor-simplify'?\n")


def test_emit_cannot_be_combined_with_a_pipeline(capsys, graph) -> None:
    with pytest.raises(SystemExit) as info:
        main([graph, "--emit=loop", "-p", "cse"])
    assert info.value.code == 2
    assert "--emit runs the default pipeline" in capsys.readouterr().err


@pytest.mark.usefixtures("test_passes")
def test_a_pass_raising_a_picograd_error_is_reported(capsys, graph) -> None:
    rc, out, err = run(capsys, graph, "-p", "cse,test-fail,dce")
    assert (rc, out) == (1, "")
    assert err == "error: pass 'test-fail' failed: the graph is too big\n"


@pytest.mark.usefixtures("test_passes")
def test_broken_ir_is_caught_after_the_last_pass(capsys, graph) -> None:
    rc, _, err = run(capsys, graph, "-p", "test-break-ir,cse")
    assert rc == 1
    # The op that now ends the block came from the source, so the error points at it.
    assert err.startswith(f"{graph}:5:9: error: IR after pass 'cse' does not verify: "
                          "Operation pg_tensor.unary terminates block")


@pytest.mark.usefixtures("test_passes")
def test_verify_each_blames_the_pass_that_broke_the_ir(capsys, graph) -> None:
    rc, _, err = run(capsys, graph, "-p", "test-break-ir,cse", "--verify-each")
    assert rc == 1
    assert err.startswith(f"{graph}:5:9: error: IR after pass 'test-break-ir' does not verify")


@pytest.mark.usefixtures("test_passes")
def test_an_invalid_op_made_by_a_pass_is_shown_in_the_ir(capsys, graph) -> None:
    rc, _, err = run(capsys, graph, "-p", "test-add-bad-op")
    assert rc == 1
    first, *dump = err.splitlines()
    assert first == ("error: IR after pass 'test-add-bad-op' does not verify: 'pg_tensor.unary': "
                     "'not' needs a bool or integer tensor, got f32")
    # No source line to point at: xDSL's dump of the IR marks the op instead.
    marked = next(i for i, line in enumerate(dump) if "^^^" in line)
    assert '"pg_tensor.unary"' in dump[marked - 1]


def test_invalid_input_is_a_located_diagnostic(capsys, tmp_path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(GRAPH.replace("unary exp %x", "unary not %x"))
    rc, out, err = run(capsys, str(path))
    assert (rc, out) == (1, "")
    assert err == (f"{path}:5:9: error: 'pg_tensor.unary': 'not' needs a bool or integer "
                   "tensor, got f32\n"
                   "  %e2 = pg_tensor.unary not %x : tensor<4xf32>\n"
                   "        ^^^^^^^^^^^^^^^\n")


def test_verify_diagnostics_prints_to_stdout_and_succeeds(capsys, tmp_path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(GRAPH.replace("unary exp %x", "unary not %x") + "// -----\n" + GRAPH)
    rc, out, err = run(capsys, str(path), "--split-input-file", "--verify-diagnostics")
    assert (rc, err) == (0, "")
    assert f"{path}:5:9: error: 'pg_tensor.unary'" in out
    assert out.count("func.func @main") == 1  # the valid second chunk


def test_missing_input_file(capsys, tmp_path) -> None:
    rc, out, err = run(capsys, str(tmp_path / "nope.mlir"))
    assert (rc, out) == (1, "")
    assert err.startswith("opt-tool: error: ") and "nope.mlir" in err


def test_llvm_ir_target_prints_llvm_ir(capsys, tmp_path) -> None:
    path = tmp_path / "k.mlir"
    path.write_text("llvm.func @k(%p: !llvm.ptr) {\n  llvm.return\n}\n")
    rc, out, _ = run(capsys, str(path), "-t", "llvm-ir")
    assert rc == 0
    assert 'define void @"k"(ptr' in out


def test_list_passes_shows_every_picograd_pass_with_its_summary(capsys) -> None:
    rc, out, _ = run(capsys, "--list-passes")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "picograd passes:"
    for line, (name, getter) in zip(lines[1:], PICOGRAD_PASSES.items(), strict=False):
        summary = getter().__doc__.strip().splitlines()[0]  # type: ignore[union-attr]
        assert line.split(None, 1) == [name, summary]
    xdsl = lines[lines.index("xDSL passes:") + 1:]
    assert "  cse" in xdsl and all(n.strip() not in PICOGRAD_PASSES for n in xdsl)


def test_startup_imports_no_pass_and_no_printer() -> None:
    code = ("import sys, picograd.tools.opt_tool; "
            "print(sorted(m for m in sys.modules if m.startswith(('picograd.passes.', "
            "'picograd.lowering', 'picograd.dialects.pg_'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_runs_as_a_module(graph) -> None:
    result = subprocess.run([sys.executable, "-m", "picograd.tools.opt_tool", graph, "-p",
                             "loop-simplfy"], capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "did you mean 'loop-simplify'" in result.stderr and "Traceback" not in result.stderr


# ── bad input (issue 11; tests/unit/tools/test_opt_tool_fuzz.py fuzzes for more) ──────────


def test_non_utf8_input_is_a_located_diagnostic(capsys, tmp_path) -> None:
    path = tmp_path / "latin1.mlir"
    path.write_bytes(GRAPH.replace("@main", "@m\xe9in").encode("latin-1"))
    rc, out, err = run(capsys, str(path))
    assert (rc, out) == (1, "")
    assert err.startswith(f"{path}:1:13: error: invalid UTF-8: byte 0xe9")


def test_unterminated_string_is_refused_before_xdsl_backtracks(capsys, tmp_path) -> None:
    path = tmp_path / "string.mlir"
    # 60 characters: xDSL's lexer would take longer than the universe's age on it
    path.write_text('builtin.module attributes {a = "' + "a" * 60 + "} {\n}\n")
    rc, _, err = run(capsys, str(path))
    assert rc == 1
    assert err.startswith(f"{path}:1:32: error: unterminated string literal")


def test_a_deep_loop_nest_is_refused_at_the_first_level_too_deep(capsys, tmp_path) -> None:
    depth = 1000
    ranges = "".join(f"pg_loop.range %i{n} = 0 to 2 global {{\n" for n in range(depth))
    path = tmp_path / "deep.mlir"
    path.write_text("pg_loop.kernel @k(%o: !pg.buffer<2xf32>) {\n" + ranges + "}\n" * depth
                    + "}\n")
    rc, _, err = run(capsys, str(path))
    assert rc == 1
    assert err.startswith(f"{path}:101:") and "brackets nested more than 100 deep" in err


def test_a_chain_too_long_for_a_recursive_pass_names_the_pass(capsys, graph, test_passes
                                                               ) -> None:
    rc, out, err = run(capsys, graph, "-p", "test-recurse")
    assert (rc, out) == (1, "")
    assert err == ("error: pass 'test-recurse' failed: pass 'test-recurse': the IR is nested "
                   "or chained too deeply for this pass (Python's recursion limit was "
                   "reached)\n")


def test_an_exception_nothing_expects_is_one_line_not_a_traceback(capsys, graph, test_passes
                                                                  ) -> None:
    rc, _, err = run(capsys, graph, "-p", "test-crash")
    assert rc == 70
    assert err == ("opt-tool: internal error: RuntimeError: a bug in a pass (please report "
                   "it with the input and command line)\n")


def test_output_into_a_missing_folder(capsys, graph, tmp_path) -> None:
    rc, out, err = run(capsys, graph, "-o", str(tmp_path / "nope" / "out.mlir"))
    assert (rc, out) == (1, "")
    assert err.startswith("opt-tool: error: cannot write the output file: ")


def test_a_printer_given_an_earlier_stage_refuses_it(capsys, graph) -> None:
    rc, out, err = run(capsys, graph, "-t", "c")
    assert (rc, out) == (1, "")
    assert err.startswith(f"{graph}:2:10: error: cannot print as 'c': the c printer prints "
                          "pg_c.func ops, and this module holds 'pg_tensor.const'")
