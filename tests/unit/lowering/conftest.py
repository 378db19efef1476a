"""Helpers for end-to-end lowering tests: hand-written pg_tensor modules run through a default
CPU pipeline, compiled by the runtime and compared with numpy."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from picograd.compiler.driver import compile_module
from picograd.compiler.pipelines import CPU_C, CPU_LLVM, run_pipeline
from picograd.dialects import make_context

PIPELINES = {"c": CPU_C, "llvm": CPU_LLVM}

Run = Callable[[str, Sequence[np.ndarray]], list[np.ndarray]]


def lower(text: str, target: str) -> ModuleOp:
    """Parse a stage-1 module and run `target`'s default pipeline on it, verifying each pass."""
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    return run_pipeline(module, PIPELINES[target], ctx=ctx, verify_each=True)


def compile_and_run(text: str, inputs: Sequence[np.ndarray], target: str) -> list[np.ndarray]:
    return compile_module(lower(text, target), target).run(inputs)


@pytest.fixture(params=["c", "llvm"])
def target(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def run(target: str) -> Run:
    """`run(text, inputs)`: the flat result buffers of the module compiled for `target`."""
    return lambda text, inputs: compile_and_run(text, inputs, target)
