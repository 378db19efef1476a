"""`loop-upcast` on random reduce kernels (matmul-like and row reductions, any sizes, any
reduce kind, one or two reduces, lane counts that do or do not divide the ranges): after the
pass, and after lowering its lanes with `convert-loop-to-uop`, the interpreter gives the
original kernel's results bit for bit; the output verifies and round-trips."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same, round_trip

from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import make_context
from picograd.interpreter import run
from picograd.passes.loop.loop_upcast import LoopUpcastPass
from picograd.passes.uop.convert_loop_to_uop import ConvertLoopToUopPass

KINDS = ("sum", "prod", "max", "min")
COMBINES = ("mul", "add", "max")


@st.composite
def reduce_kernels(draw: st.DrawFn) -> Program:
    """`out[i0, i1] = red_r f(a[i0, r], b[r, i1])` (or `out[i1] = red_r a[i1, r]` with one
    global range), sometimes plus a second reduce combined in the epilogue."""
    two_d = draw(st.booleans())
    m = draw(st.integers(1, 6)) if two_d else 1
    n, k = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    dtype = draw(st.sampled_from(("f32", "i32")))
    kind, kind2 = draw(st.sampled_from(KINDS)), draw(st.sampled_from(KINDS))
    combine = draw(st.sampled_from(COMBINES))
    second = draw(st.booleans())
    a_t, b_t, o_t = (f"!pg.buffer<{m * k}x{dtype}>", f"!pg.buffer<{k * n}x{dtype}>",
                     f"!pg.buffer<{m * n}x{dtype}>")
    row = "%i0" if two_d else "%zero"
    body = [
        f"%s = pg_loop.reduce {kind} %r = 0 to {k} : {dtype} {{",
        f"  %ck = pg_loop.const {k}", f"  %cn = pg_loop.const {n}",
        f"  %ar = pg_loop.index mul {row}, %ck", "  %ai = pg_loop.index add %ar, %r",
        f"  %x = pg_loop.load %a[%ai] : {a_t} -> {dtype}",
        "  %br = pg_loop.index mul %r, %cn", "  %bi = pg_loop.index add %br, %i1",
        f"  %y = pg_loop.load %b[%bi] : {b_t} -> {dtype}",
        f"  %xy = pg_uop.binary {combine} %x, %y : {dtype}",
        f"  pg_loop.yield %xy : {dtype}", "}",
    ]
    result = "%s"
    if second:
        body += [
            f"%t = pg_loop.reduce {kind2} %q = 0 to {k} : {dtype} {{",
            f"  %ck2 = pg_loop.const {k}", f"  %tr = pg_loop.index mul {row}, %ck2",
            "  %ti = pg_loop.index add %tr, %q",
            f"  %z = pg_loop.load %a[%ti] : {a_t} -> {dtype}",
            f"  pg_loop.yield %z : {dtype}", "}",
            f"%st = pg_uop.binary add %s, %t : {dtype}",
        ]
        result = "%st"
    body += [f"%cn_o = pg_loop.const {n}", f"%or = pg_loop.index mul {row}, %cn_o",
             "%oi = pg_loop.index add %or, %i1",
             f"pg_loop.store {result}, %out[%oi] : {dtype}, {o_t}"]
    inner = [f"pg_loop.range %i1 = 0 to {n} global {{", *("  " + b for b in body), "}"]
    nest = ([f"pg_loop.range %i0 = 0 to {m} global {{", *("  " + b for b in inner), "}"]
            if two_d else ["%zero = pg_loop.const 0", *inner])
    text = "\n".join([
        "builtin.module {",
        f"pg_loop.kernel @k0(%a: {a_t}, %b: {b_t}, %out: {o_t}) {{",
        *("  " + line for line in nest), "}",
        f"func.func @main(%0: {a_t}, %1: {b_t}) -> {o_t} {{",
        f"  %2 = pg_sched.alloc : {o_t}",
        f"  pg_sched.launch @k0(%0, %1, %2) : {a_t}, {b_t}, {o_t}",
        f"  func.return %2 : {o_t}", "}", "}",
    ])
    np_t = np.float32 if dtype == "f32" else np.int32
    values = st.integers(-3, 3) if dtype == "i32" else st.sampled_from(
        (0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.5, np.inf, np.nan))
    a = np.array(draw(st.lists(values, min_size=m * k, max_size=m * k)), dtype=np_t)
    b = np.array(draw(st.lists(values, min_size=k * n, max_size=k * n)), dtype=np_t)
    return Program(text, [a, b])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reduce_kernels(), st.integers(1, 4), st.integers(1, 4))
def test_loop_upcast_preserves_semantics(program: Program, rows: int, cols: int):
    before, tiled = program.parse(), program.parse()
    LoopUpcastPass(rows=rows, cols=cols, min_reduce=1).apply(make_context(), tiled)
    tiled.verify()
    round_trip(tiled)
    lowered = program.parse()
    LoopUpcastPass(rows=rows, cols=cols, min_reduce=1).apply(make_context(), lowered)
    ConvertLoopToUopPass().apply(make_context(), lowered)
    lowered.verify()
    run_pipeline(lowered, "uop-simplify,cse")
    with warnings.catch_warnings():  # numpy warns on inf/nan inputs
        warnings.simplefilter("ignore", RuntimeWarning)
        want = run(before, program.inputs)
        assert_same(want, run(tiled, program.inputs))
        assert_same(want, run(lowered, program.inputs))
