"""Row-wise reduction fusion on random softmax- and layernorm-like graphs: rows of reductions
over the trailing axes, elementwise ops between them at the row and the full shape, and
reduced values broadcast back (`expand`) into the full-shape computation.

Each graph uses every value at most twice, so the cost rule materialises nothing and the
whole graph must be one kernel (none when `tensor-simplify` reduces it to an input; with a
buffer limit, kernels that fit it). After `convert-tensor-to-sched` and after
`convert-sched-to-loop` the interpreter gives stage 1's results bit for bit (the reductions
keep their order); so does the graph compiled for the CPU when it calls no libm function.
With `exp` or `sin` (libm may differ from numpy in the last ulp, which an `exp` of a row
sum or a cancellation magnifies), and after the WebGPU pipeline's work-group mapping (its
sums may reassociate), results are compared up to 1e-3 of the largest finite magnitude of
the output: a wrong row or order is off by far more.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same
from strategies.base import int_list, ttype
from xdsl.dialects.builtin import ModuleOp

from picograd.compiler.driver import compile_module
from picograd.compiler.pipelines import CPU_LLVM, GPU_WGSL, run_pipeline
from picograd.dialects import make_context
from picograd.dialects import pg_sched as S
from picograd.interpreter import run

# (full shape, reduced axes): the reduced axes are trailing, at least one kept axis > 1
LAYOUTS = (((3, 4), (1,)), ((2, 5), (1,)), ((2, 3, 4), (2,)), ((2, 3, 4), (1, 2)),
           ((1, 4, 3), (2,)), ((4, 1, 3), (1, 2)))
FULL_UNARY = ("neg", "exp", "sin")
ROW_UNARY = ("sqrt", "neg", "exp")
BINARY = ("add", "sub", "mul", "max", "div")
LIBM = ("exp", "sin")
REDUCE = ("sum", "max", "min")


def interpret(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [r.ravel() for r in run(module, inputs)]


# Above this magnitude a sin's argument carries no digits that two correct exp's agree on:
# one ulp of exp(exp(3)) = 5.3e8 is 32 (found by the test: sin(5.3e8) 0.99 vs 0.77).
SIN_CONDITIONED = 1e3


def largest_sin_argument(program: Program) -> float:
    """The largest finite magnitude a `sin` of `program` is applied to (0 with none), by
    interpreting the program up to each `sin`'s operand."""
    header, *body = program.text.splitlines()
    largest = 0.0
    for at, line in enumerate(body):
        if " = pg_tensor.unary sin " in line:
            operand, ttext = line.split(" sin ")[1].split(" : ")
            head = header[:header.rindex("->")] + f"-> {ttext} {{"
            text = "\n".join([head, *body[:at], f"  func.return {operand} : {ttext}", "}"])
            (values,) = interpret(Program(text, program.inputs).parse(), program.inputs)
            finite = np.abs(values[np.isfinite(values)])
            largest = max(largest, float(finite.max()) if finite.size else 0.0)
    return largest


@st.composite
def row_programs(draw) -> Program:
    """`@main(%x[, %y])` of shape `full`: random full-shape ops and row reductions whose
    results come back through an expand; returns a full-shape or a row-shape value."""
    full, axes = draw(st.sampled_from(LAYOUTS))
    rows = tuple(1 if a in axes else n for a, n in enumerate(full))
    tf, tr = ttype("f32", full), ttype("f32", rows)
    n_inputs = draw(st.integers(1, 2))
    uses: dict[str, int] = {f"%in{i}": 0 for i in range(n_inputs)}
    full_values = list(uses)
    lines: list[str] = []

    def pick() -> str:  # a full-shape value used less than twice (the latest when possible)
        free = [v for v in full_values if uses[v] < 2]
        name = free[-1] if draw(st.booleans()) else draw(st.sampled_from(free))
        uses[name] += 1
        return name

    def emit(text: str) -> str:
        name = f"%v{len(lines)}"
        lines.append(f"  {name} = {text}")
        return name

    def row_value(x: str) -> str:  # a reduction of `x`, maybe followed by a row-shape op
        r = emit(f"pg_tensor.reduce {draw(st.sampled_from(REDUCE))} {x} "
                 f"{{axes = {int_list(list(axes))}}} : {tf} -> {tr}")
        if draw(st.booleans()):
            r = emit(f"pg_tensor.unary {draw(st.sampled_from(ROW_UNARY))} {r} : {tr}")
        return r

    reduced = False
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            a = pick()
            if draw(st.booleans()):
                new = emit(f"pg_tensor.unary {draw(st.sampled_from(FULL_UNARY))} {a} : {tf}")
            else:
                new = emit(f"pg_tensor.binary {draw(st.sampled_from(BINARY))} {a}, {pick()} "
                           f": {tf}")
        else:  # a row reduction, an op at the row shape, broadcast back and combined
            reduced = True
            back = emit(f"pg_tensor.expand {row_value(pick())} : {tr} -> {tf}")
            new = emit(f"pg_tensor.binary {draw(st.sampled_from(BINARY))} {pick()}, {back} "
                       f": {tf}")
        uses[new] = 0
        full_values.append(new)
    if not reduced or draw(st.booleans()):  # a reduction epilogue: one element per row
        result, rtype = row_value(pick()), tr
    else:
        result, rtype = full_values[-1], tf
    params = ", ".join(f"%in{i}: {tf}" for i in range(n_inputs))
    text = "\n".join([f"func.func @main({params}) -> {rtype} {{", *lines,
                      f"  func.return {result} : {rtype}", "}"])
    values = st.floats(-3, 3, width=32)
    inputs = [np.array(draw(st.lists(values, min_size=int(np.prod(full)),
                                     max_size=int(np.prod(full)))),
                       np.float32).reshape(full) for _ in range(n_inputs)]
    return Program(text, inputs)


def roughly(expected: list[np.ndarray], got: list[np.ndarray]) -> None:
    """Equal up to 1e-3 of the output's largest finite magnitude (inf and NaN exactly)."""
    for want, have in zip(expected, got, strict=True):
        finite = np.abs(want[np.isfinite(want)])
        scale = float(finite.max()) if finite.size else 0.0
        np.testing.assert_allclose(have, want, rtol=1e-3, atol=1e-3 * scale + 1e-6,
                                   equal_nan=True)


CPU_LLVM_UOP = CPU_LLVM[:CPU_LLVM.index(",convert-uop-to-llvm")]


def kernel_count(module: ModuleOp) -> int:
    return sum(isinstance(op, S.KernelOp) for op in module.ops)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row_programs())
def test_row_fusion_makes_one_kernel_computing_stage_1s_results(program: Program):
    module = program.parse()
    module.verify()
    expected = interpret(module, program.inputs)
    sched = run_pipeline(module.clone(), "tensor-simplify,convert-tensor-to-sched",
                         ctx=make_context())
    sched.verify()
    assert kernel_count(sched) <= 1, str(sched)  # none when it simplifies to an input
    assert_same(expected, interpret(sched, program.inputs))
    loop = run_pipeline(sched, "convert-sched-to-loop", ctx=make_context())
    loop.verify()
    assert_same(expected, interpret(loop, program.inputs))
    # CPU:LLVM contracts sums of products (uop-contract: one rounding per step), so its
    # kernels compute the contracted IR's results, which are stage 1's up to rounding
    contracted = run_pipeline(module.clone(), CPU_LLVM_UOP, ctx=make_context())
    want = interpret(contracted, program.inputs)
    roughly(expected, want)
    compiled = run_pipeline(contracted, "convert-uop-to-llvm", ctx=make_context())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = [r.ravel() for r in compile_module(compiled, "llvm").run(program.inputs)]
    if any(f"unary {kind}" in program.text for kind in LIBM):
        if largest_sin_argument(program) <= SIN_CONDITIONED:
            roughly(want, got)
    else:
        assert_same(want, got)


GPU_UOP = GPU_WGSL[:GPU_WGSL.index(",convert-uop-to-wgsl")]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row_programs(), st.sampled_from((3, 4, 8)))
def test_row_fusion_under_a_buffer_limit_and_the_gpu_mapping(program: Program, limit: int):
    module = program.parse()
    expected = interpret(module, program.inputs)
    spec = GPU_UOP.replace("max-buffers=8", f"max-buffers={limit}")
    mapped = run_pipeline(module, spec, ctx=make_context())
    mapped.verify()
    for op in mapped.ops:
        if not isinstance(op, S.KernelOp) and op.name == "pg_uop.kernel":
            assert len(op.regions[0].block.args) <= limit
    roughly(expected, interpret(mapped, program.inputs))
