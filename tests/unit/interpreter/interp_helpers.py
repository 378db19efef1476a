"""Helpers for the interpreter tests: wrap one kernel in a `@main`, parse and run text."""

from __future__ import annotations

import numpy as np
from xdsl.parser import Parser

from picograd.dialects import make_context
from picograd.interpreter import run


def run_text(text: str, *inputs: np.ndarray) -> list[np.ndarray]:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return run(module, inputs)


def one_kernel(kernel: str, inputs: list[str], outputs: list[str]) -> str:
    """`kernel` (named @k) launched by @main on its inputs and freshly allocated outputs."""
    params = ", ".join(f"%in{i}: {t}" for i, t in enumerate(inputs))
    allocs = "\n".join(f"  %out{i} = pg_sched.alloc : {t}" for i, t in enumerate(outputs))
    names = [f"%in{i}" for i in range(len(inputs))] + [f"%out{i}" for i in range(len(outputs))]
    outs = ", ".join(f"%out{i}" for i in range(len(outputs)))
    return f"""{kernel}
func.func @main({params}) -> ({", ".join(outputs)}) {{
{allocs}
  pg_sched.launch @k({", ".join(names)}) : {", ".join([*inputs, *outputs])}
  func.return {outs} : {", ".join(outputs)}
}}"""
