"""The schedule passes' errors: a malformed action list, an unknown kernel, an action that
does not apply to the kernel named (no such axis or reduce, a factor that does not fit);
opt-tool reports each as one line, no traceback."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from picograd.compiler.pipelines import PipelineError, run_pipeline
from picograd.dialects import make_context
from picograd.dialects.pg import RangeKind
from picograd.passes.loop.schedule import Action, ScheduleError, parse_schedule

MATMUL = Path(__file__).parents[2] / "filecheck" / "passes" / "loop-schedule.mlir"


def module():
    return Parser(make_context(), MATMUL.read_text()).parse_module()


@pytest.mark.parametrize(("actions", "message"), [
    ("split(1, 8)", "malformed action 'split(1, 8)': write split(axis, factor, kind)"),
    ("split(1, 8, reduce)", "split(1, 8, reduce): a reduce is not a loop range"),
    ("interchange(x)", "malformed action 'interchange(x)'"),
    ("split(0, 4, upcast); interchange(7)", "interchange(7): no axis 7 (the kernel has axes"),
    ("split_reduce(1, 2)", "split_reduce(1, 2): no reduce 1 (the kernel has reduces 0 to 0)"),
    ("split_reduce(0, 3)", "split_reduce(0, 3): factor 3 does not divide the reduce's 8"),
    ("split_reduce(0, 1)", "split_reduce(0, 1): factor 1 is below 2"),
    ("split_reduce(0, 2); split_reduce(0, 2)",
     "split_reduce(0, 2): it is a reduce over upcast lanes already"),
])
def test_bad_schedules_name_the_action(actions: str, message: str) -> None:
    with pytest.raises(PassFailedException, match=re.escape(message)):
        run_pipeline(module(), f'loop-schedule{{kernel=mm actions="{actions}"}}')


def test_unknown_kernel_lists_the_kernels() -> None:
    with pytest.raises(PassFailedException, match=r"no pg_loop kernel @nope \(kernels: @mm\)"):
        run_pipeline(module(), 'loop-schedule{kernel=nope actions="interchange(0)"}')


def test_actions_print_as_they_parse() -> None:
    text = "split(1, 64, upcast); split(0, 4, unroll); interchange(1); split_reduce(0, 16)"
    actions = parse_schedule(text)
    assert actions[1] == Action("split", 0, 4, RangeKind.UNROLL)
    assert actions[3] == Action("split_reduce", 0, 16)
    assert "; ".join(map(str, actions)) == text
    with pytest.raises(ScheduleError):
        parse_schedule("tile(0)")


def test_opt_tool_prints_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "picograd.tools.opt_tool", str(MATMUL), "-p",
         'loop-schedule{kernel=mm actions="split(1, 8)"}'],
        capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "malformed action 'split(1, 8)'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("spec", ["loop-optimize{registers=0}", "loop-upcast{cols=0}",
                                  "loop-split{kernel=mm factor=0}"])
def test_opt_tool_refuses_bad_options_in_one_line(spec: str) -> None:
    result = subprocess.run([sys.executable, "-m", "picograd.tools.opt_tool", str(MATMUL),
                             "-p", spec], capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert result.stderr.startswith("error: pass") and "Traceback" not in result.stderr


def test_pipeline_errors_are_picograd_errors() -> None:
    with pytest.raises(PipelineError):
        run_pipeline(module(), "loop-schedule{kernel=mm actions=3 bogus=1}")
