"""Shifts, bitcasts and iota keep their meaning through every lowering.

Random pg_tensor programs mixing `binary shl/shr` (any amount: negative and >= the width
included, taken modulo the width), `bitcast` (f32 <-> i32, f64 <-> i64, f16 <-> i16,
i8 <-> ui8) and `iota` (i32 / i64, any axis, also seen through views): after every pass of
the CPU pipeline the interpreter gives stage 1's results bit for bit, and so do the
programs compiled for the "llvm" and "c" targets and the PTX of the GPU pipeline (run by
the simulator of tests/ptx_sim.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ptx_sim import simulate
from strategies import Program, assert_same
from strategies.base import Draw
from xdsl.dialects.builtin import ModuleOp

from picograd.compiler.driver import compile_module
from picograd.compiler.pipelines import CPU_C, CPU_LLVM, GPU_PTX, run_pipeline, stage_pipeline
from picograd.dialects import make_context
from picograd.interpreter import run
from picograd.lowering.ptx.convert_uop_to_ptx import ConvertUopToPtxPass

UOP = stage_pipeline("uop")
TO_TARGET = {"llvm": CPU_LLVM[len(UOP) + 1:], "c": CPU_C[len(UOP) + 1:]}
TO_GPU_UOP = GPU_PTX[: -len(",convert-uop-to-ptx")]
INTS = ("i8", "ui8", "i16", "i32", "i64")
WIDTH = {"i8": 8, "ui8": 8, "i16": 16, "i32": 32, "i64": 64}
TWIN = {"i32": "f32", "i64": "f64", "i16": "f16", "i8": "ui8", "ui8": "i8"}
NP = {"i8": np.int8, "ui8": np.uint8, "i16": np.int16, "i32": np.int32, "i64": np.int64}
SHAPES = ((4,), (2, 3), (3, 1), (1, 2, 2), (2, 2, 3))


def _t(dtype: str, shape: Sequence[int]) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{dtype}>"


@st.composite
def bit_programs(draw: Draw) -> Program:
    dtype = draw(st.sampled_from(INTS))
    shape = draw(st.sampled_from(SHAPES))
    t = _t(dtype, shape)
    lines: list[str] = []
    values = ["%x", "%n"]

    def emit(text: str, of_t: bool = False) -> str:
        """Append an op; only values of type `t` join the pool operands are drawn from."""
        name = f"%v{len(lines)}"
        lines.append(f"  {name} = {text}")
        if of_t:
            values.append(name)
        return name

    for _ in range(draw(st.integers(1, 5))):
        x = values[-1 - draw(st.integers(0, min(3, len(values) - 1)))]
        what = draw(st.sampled_from(("shl", "shr", "shr", "xor", "bitcast", "iota")))
        if what in ("shl", "shr", "xor"):
            y = draw(st.sampled_from(values))
            emit(f"pg_tensor.binary {what} {x}, {y} : {t}", True)
        elif what == "bitcast":
            twin = _t(TWIN[dtype], shape)
            there = emit(f"pg_tensor.bitcast {x} : {t} to {twin}")
            if TWIN[dtype][0] == "f":  # a float op in between would canonicalise NaNs
                emit(f"pg_tensor.bitcast {there} : {twin} to {t}", True)
            else:
                other = emit(f"pg_tensor.binary add {there}, {there} : {twin}")
                emit(f"pg_tensor.bitcast {other} : {twin} to {t}", True)
        else:
            axis = draw(st.integers(0, len(shape) - 1))
            kind = draw(st.sampled_from(("i32", "i64")))
            it = emit(f"pg_tensor.iota {{axis = {axis} : i64}} : {_t(kind, shape)}")
            if len(shape) > 1 and draw(st.booleans()):  # a view of it
                order = list(reversed(range(len(shape))))
                swapped = _t(kind, [shape[d] for d in order])
                it = emit(f"pg_tensor.permute {it} {{perm = array<i64: "
                          f"{', '.join(map(str, order))}>}} : {_t(kind, shape)} -> {swapped}")
                it = emit(f"pg_tensor.permute {it} {{perm = array<i64: "
                          f"{', '.join(map(str, order))}>}} : {swapped} -> {_t(kind, shape)}")
            cast = emit(f"pg_tensor.cast {it} : {_t(kind, shape)} to {t}")
            emit(f"pg_tensor.binary xor {x}, {cast} : {t}", True)
    text = "\n".join([f"func.func @main(%x: {t}, %n: {t}) -> {t} {{", *lines,
                      f"  func.return {values[-1]} : {t}", "}"])
    n, np_dtype = int(np.prod(shape)), NP[dtype]
    info = np.iinfo(np_dtype)
    edges = st.sampled_from((0, 1, -1, 7, int(info.min), int(info.max)))
    values = draw(st.lists(st.one_of(edges, st.integers(int(info.min), int(info.max))),
                           min_size=n, max_size=n))
    amounts = draw(st.lists(st.integers(-3, WIDTH[dtype] + 3), min_size=n, max_size=n))
    return Program(text, [np.array(values).astype(np_dtype).reshape(shape),
                          np.array(amounts).astype(np_dtype).reshape(shape)])


def interpret(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [r.ravel() for r in run(module, inputs)]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bit_programs())
def test_cpu_passes_and_targets_keep_bit_ops(program: Program) -> None:
    module = program.parse()
    module.verify()
    expected = interpret(module, program.inputs)

    def check(pass_, after: ModuleOp) -> None:
        after.verify()
        assert_same(expected, interpret(after, program.inputs))

    run_pipeline(module, UOP, after_pass=check)
    for rest in TO_TARGET.values():
        lowered = run_pipeline(module.clone(), rest, ctx=make_context())
        target = "llvm" if rest == TO_TARGET["llvm"] else "c"
        got = [r.ravel() for r in compile_module(lowered, target).run(program.inputs)]
        assert_same(expected, got)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bit_programs())
def test_ptx_keeps_bit_ops(program: Program) -> None:
    module = program.parse()
    expected = interpret(module, program.inputs)
    run_pipeline(module, TO_GPU_UOP)
    assert_same(expected, interpret(module, program.inputs))
    ConvertUopToPtxPass().apply(make_context(), module)
    module.verify()
    assert_same(expected, simulate(module, program.inputs))
