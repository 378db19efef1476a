"""picograd.debug and picograd.flags without a device: the flag table, overrides, timing
report, estimates."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from picograd import debug, flags
from picograd.debug import ir_summary
from picograd.dialects import make_context

DOCS = Path(__file__).resolve().parents[3] / "docs" / "debugging.md"

LOOP_IR = """
pg_loop.kernel @k0(%a: !pg.buffer<6xf32>, %out: !pg.buffer<2xf32>) {
  pg_loop.range %i = 0 to 2 global {
    %s = pg_loop.reduce sum %r = 0 to 3 : f32 {
      %c3 = pg_loop.const 3
      %o = pg_loop.index mul %i, %c3
      %f = pg_loop.index add %o, %r
      %v = pg_loop.load %a[%f] : !pg.buffer<6xf32> -> f32
      %two = pg_uop.const 2.0 : f32
      %m = pg_uop.binary mul %v, %two : f32
      pg_loop.yield %m : f32
    }
    %e = pg_uop.unary exp %s : f32
    pg_loop.store %e, %out[%i] : f32, !pg.buffer<2xf32>
  }
}
"""


def _parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def test_every_flag_is_documented() -> None:
    text = DOCS.read_text()
    for flag in flags.FLAGS:
        assert f"`{flag.name}`" in text, flag.name
    for level, _ in flags.LEVELS:
        assert f"| {level} |" in text
    assert flags.flags_markdown().strip() in text  # the doc shows the table as generated


def test_env_int_warns_on_garbage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBUG", "yes please")
    with pytest.warns(UserWarning, match="DEBUG='yes please' is not an integer"):
        assert flags.env_int("DEBUG") == 0
    monkeypatch.setenv("DEBUG", " 3 ")
    assert flags.env_int("DEBUG") == 3
    monkeypatch.delenv("DEBUG")
    assert flags.env_int("DEBUG") == 0


def test_flags_override_and_restore(tmp_path: Path) -> None:
    def current() -> tuple[int, bool, str]:
        return debug.SETTINGS.level, debug.SETTINGS.viz, debug.SETTINGS.viz_dir

    before = current()
    with debug.flags(debug=4, viz=True, viz_dir=str(tmp_path)):
        assert current() == (4, True, str(tmp_path))
        assert debug.needs_ir()
    assert current() == before


def test_nothing_is_traced_when_off() -> None:
    with debug.flags(debug=0, viz=False):
        assert debug.start_compile("CPU:LLVM", [], []) is None
        assert not debug.needs_ir()
        debug.lap("render")  # no compile is traced: a no-op
        hook = debug.watch(None, ModuleOp([]), None)
        assert hook is None


def test_pass_timing_report() -> None:
    report = debug.pass_timing_report([("a-pass", 0.003), ("b-pass", 0.001)])
    lines = report.splitlines()
    assert "Pass execution timing report" in lines[1]
    assert "Total Execution Time: 0.0040 seconds" in report
    assert lines[-3].endswith("( 75.0%)  a-pass")
    assert lines[-2].endswith("( 25.0%)  b-pass")
    assert lines[-1].endswith("(100.0%)  Total")
    assert "0.0%" in debug.pass_timing_report([("nothing", 0.0)])


@pytest.mark.parametrize(("name", "expected"), [
    ("convert-loop-to-uop", ("loop", "uop")),
    ("convert-uop-to-wgsl", ("uop", "wgsl")),
    ("loop-simplify", None),
    ("cse", None),
])
def test_converts(name: str, expected: tuple[str, str] | None) -> None:
    assert ir_summary.converts(name) == expected


def test_kernel_flops_counts_float_ops_per_iteration() -> None:
    kernel = ir_summary.kernels_of(_parse(LOOP_IR))["k0"]
    # per outer iteration (2): 3 reduce steps x (mul + the reduction add) + 1 exp
    assert ir_summary.kernel_flops(kernel) == 2 * (3 * 2 + 1)


def test_loop_change_describes_ranges_and_ops() -> None:
    kernel = ir_summary.kernels_of(_parse(LOOP_IR))["k0"]
    shape = ir_summary.loop_shape(kernel)
    assert shape.ranges == "[2 global, 3 reduce]"
    assert ir_summary.loop_change({"k0": shape}, {"k0": shape}) == []
    fewer = ir_summary.LoopShape("[6 global]", shape.ops - Counter({"pg_loop.index": 1}), "x")
    (note,) = ir_summary.loop_change({"k0": shape}, {"k0": fewer})
    assert note.startswith(f"@k0 ranges {shape.ranges} -> [6 global]")
    assert "-1 pg_loop.index" in note
    assert ir_summary.loop_change({}, {"k0": shape}) == ["@k0 added"]
