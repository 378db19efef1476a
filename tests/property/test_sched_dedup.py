"""`sched-dedup` on random graphs computed twice (once per copy of the inputs, so every kernel
has a twin): the same results as without it, one kernel per group of identical ones (at most
half as many), output verifies and round-trips; and convert-tensor-to-sched, which shares
one kernel between values built alike, gives the same module by itself."""

from __future__ import annotations

import re
import warnings

from hypothesis import HealthCheck, given, settings
from strategies import Program, assert_same, round_trip, tensor_programs

from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import pg_sched as S
from picograd.interpreter import run

_SIGNATURE = re.compile(r"func\.func @main\((?P<args>.*)\) -> \((?P<results>.*)\) \{")
_RETURN = re.compile(r"func\.return (?P<values>[^:]*) : (?P<types>.*)")


def _twice(program: Program) -> Program:
    """`program` computed on its inputs and again on a renamed copy of them."""
    lines = program.text.strip().splitlines()
    head, body, ret = _SIGNATURE.match(lines[0]), lines[1:-2], _RETURN.search(lines[-2])
    assert head is not None and ret is not None, program.text
    copy = lambda text: re.sub(r"%(\w+)", r"%\1_b", text)  # noqa: E731
    text = "\n".join([
        f"func.func @main({head['args']}, {copy(head['args'])}) -> "
        f"({head['results']}, {head['results']}) {{",
        *body, *map(copy, body),
        f"  func.return {ret['values']}, {copy(ret['values'])} : {ret['types']}, "
        f"{ret['types']}",
        "}"])
    return Program(text, program.inputs + [x.copy() for x in program.inputs])


def _kernels(module) -> list[S.KernelOp]:
    return [op for op in module.ops if isinstance(op, S.KernelOp)]


def _types(kernel: S.KernelOp) -> list:
    return [r.type for op in kernel.body.walk() for r in op.results]


def _distinct(kernels: list[S.KernelOp]) -> int:
    """Kernels that differ in structure or in a result type (which xDSL's structural
    equivalence does not compare: a load or reshape as 4 or as 4x1)."""
    firsts: list[S.KernelOp] = []
    for k in kernels:
        if not any(f.body.is_structurally_equivalent(k.body) and _types(f) == _types(k)
                   for f in firsts):
            firsts.append(k)
    return len(firsts)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tensor_programs())
def test_sched_dedup_merges_twins_and_preserves_semantics(program: Program):
    doubled = _twice(program)
    before = run_pipeline(doubled.parse(), "convert-tensor-to-sched{share-kernels=false}")
    after = run_pipeline(doubled.parse(), "convert-tensor-to-sched{share-kernels=false},"
                         "sched-dedup")
    # convert-tensor-to-sched's own sharing makes exactly what sched-dedup makes
    assert str(run_pipeline(doubled.parse(), "convert-tensor-to-sched")) == str(after)
    after.verify()
    kernels = _kernels(after)
    assert len(kernels) == _distinct(_kernels(before)) == _distinct(kernels)
    assert 2 * len(kernels) <= len(_kernels(before))  # every twin of the copy is gone
    with warnings.catch_warnings():  # numpy warns on the inf/nan the inputs are made of
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same(run(before, doubled.inputs), run(after, doubled.inputs))
    round_trip(after)
