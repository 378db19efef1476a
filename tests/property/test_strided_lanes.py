"""Vector lanes that read every 2nd element (`vload ... step(2)`, a 2 x 2 pool's taps):
random kernels `out[i] = f(x[s*i + a], x[s*i + b])` (s = 1, 2 or 3; s = 3 keeps scalar
lanes), their range split into up to 16 lanes (with a remainder; a lane count that is not a
power of two stays scalar), compute the same bits
lowered with scalar lanes and with vectors, in the interpreter and compiled for CPU:LLVM
(two vector loads and a shuffle) and CPU:C (a lane-by-lane vector)."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same

from picograd.compiler.driver import compile_module
from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import make_context, pg_uop
from picograd.dialects import pg_loop as L
from picograd.interpreter import run
from picograd.passes.loop.schedule import Action, apply_schedule
from picograd.passes.uop.convert_loop_to_uop import ConvertLoopToUopPass

TAILS = {"llvm": "uop-simplify,cse,uop-contract,convert-uop-to-llvm",
         "c": "uop-simplify,cse,convert-uop-to-c"}


@st.composite
def strided_programs(draw: st.DrawFn) -> tuple[Program, int, int]:
    n, step = draw(st.integers(1, 40)), draw(st.sampled_from((1, 2, 2, 3)))
    a, b = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    f = draw(st.sampled_from(("max", "add", "mul", "min")))
    size = step * (n - 1) + 3
    t, o = f"!pg.buffer<{size}xf32>", f"!pg.buffer<{n}xf32>"
    text = "\n".join([
        "builtin.module {",
        f"pg_loop.kernel @k0(%x: {t}, %out: {o}) {{",
        f"  pg_loop.range %i = 0 to {n} global {{",
        f"    %s = pg_loop.const {step}", "    %si = pg_loop.index mul %i, %s",
        f"    %ca = pg_loop.const {a}", "    %ia = pg_loop.index add %si, %ca",
        f"    %cb = pg_loop.const {b}", "    %ib = pg_loop.index add %si, %cb",
        f"    %xa = pg_loop.load %x[%ia] : {t} -> f32",
        f"    %xb = pg_loop.load %x[%ib] : {t} -> f32",
        f"    %y = pg_uop.binary {f} %xa, %xb : f32",
        f"    pg_loop.store %y, %out[%i] : f32, {o}", "  }", "}",
        f"func.func @main(%0: {t}) -> {o} {{", f"  %1 = pg_sched.alloc : {o}",
        f"  pg_sched.launch @k0(%0, %1) : {t}, {o}", f"  func.return %1 : {o}", "}", "}",
    ])
    values = st.sampled_from((0.0, -0.0, 1.0, -1.0, 0.5, 3.0, np.inf, -np.inf, np.nan))
    x = np.array(draw(st.lists(values, min_size=size, max_size=size)), np.float32)
    lanes = draw(st.sampled_from((2, 4, 8, 16)))
    return Program(text, [x]), min(lanes, n), step


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strided_programs())
def test_strided_vector_lanes_compute_what_scalar_lanes_do(
        case: tuple[Program, int, int]) -> None:
    program, lanes, step = case
    module = program.parse()
    kernel = next(op for op in module.ops if isinstance(op, L.KernelOp))
    apply_schedule(kernel, [Action("split", 0, lanes)])
    with warnings.catch_warnings():  # numpy warns on inf/nan inputs
        warnings.simplefilter("ignore", RuntimeWarning)
        want = run(program.parse(), program.inputs)
        for vectorize in (False, True):
            lowered = module.clone()
            ConvertLoopToUopPass(vectorize=vectorize).apply(make_context(), lowered)
            lowered.verify()
            strided = [op for op in lowered.walk()
                       if isinstance(op, pg_uop.VLoadOp) and op.stride == 2]
            vector_lanes = lanes > 1 and lanes & (lanes - 1) == 0  # see lane_vectors
            assert bool(strided) == (vectorize and step == 2 and vector_lanes)
            assert_same(want, run(lowered, program.inputs))
            for target, tail in TAILS.items():
                compiled = lowered.clone()
                run_pipeline(compiled, tail)
                got = compile_module(compiled, target).run(program.inputs)
                assert_same(want, got)
