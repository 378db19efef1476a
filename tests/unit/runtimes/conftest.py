"""Helpers for runtime tests: hand-written pg_uop modules lowered and compiled per target."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from xdsl.parser import Parser

from picograd.compiler.driver import compile_module
from picograd.dialects import make_context
from picograd.runtimes import Program


def _lower(module, ctx, target: str) -> None:
    if target == "llvm":
        from picograd.lowering.llvm.convert_uop_to_llvm import ConvertUopToLlvmPass

        ConvertUopToLlvmPass().apply(ctx, module)
    else:
        pytest.importorskip("picograd.lowering.c.printer", reason="the C printer is not there yet")
        convert = pytest.importorskip("picograd.lowering.c.convert_uop_to_c")
        convert.ConvertUopToCPass().apply(ctx, module)


def build_program(text: str, target: str = "llvm") -> Program:
    """Parse a stage-4 module (pg_uop kernels + @main), lower it to `target`, compile it."""
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    module.verify()
    _lower(module, ctx, target)
    module.verify()
    return compile_module(module, target)


@pytest.fixture(params=["llvm", "c"])
def target(request: pytest.FixtureRequest) -> str:
    """Both CPU renderers; the C one is skipped until its pass and printer exist."""
    return request.param


@pytest.fixture
def build(target: str) -> Callable[[str], Program]:
    return lambda text: build_program(text, target)


@pytest.fixture
def build_llvm() -> Callable[[str], Program]:
    """The LLVM renderer only (for behaviour the C target leaves undefined, and timings)."""
    return lambda text: build_program(text, "llvm")
