"""`loop-optimize` on random transposing copies (the copy of `x.transpose(-1, -2)` as the
frontend builds it, batched or not, of f32 / f16 / i32, with an elementwise op of a second,
contiguous input or none): it blocks them (`transpose_tiles.py`) where both ranges divide
into 16 and the inner one is 64 or longer, and the interpreter gives the same bits before
and after, scheduled and lowered to pg_uop (lanes as scalars and as vectors); the output
verifies and round-trips, and its recorded schedule replays to the same IR."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same, round_trip
from strategies.base import NP

from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import make_context
from picograd.dialects import pg_loop as L
from picograd.interpreter import run
from picograd.passes.loop.loop_optimize import LoopOptimizePass
from picograd.passes.loop.loop_schedule import LoopSchedulePass
from picograd.passes.loop.schedule import recorded_schedule
from picograd.passes.uop.convert_loop_to_uop import ConvertLoopToUopPass

BLOCKS = "split({a}, 16, upcast); split({b}, 16, loop); interchange({c})"
SPECIALS = {"f32": (0.0, -0.0, np.inf, -np.inf, np.nan), "f16": (-0.0, np.inf, np.nan),
            "i32": (0, -1, 2**31 - 1, -2**31)}


@st.composite
def transposes(draw: st.DrawFn) -> tuple[Program, tuple[int, int]]:
    """A kernel storing `out[b, i, k] = f(x[b, k, i], y[b, i, k])` (f: x alone, x + y or x * y),
    and the sizes of its (i, k) ranges."""
    dtype = draw(st.sampled_from(("f32", "f16", "i32")))
    batch = draw(st.sampled_from((1, 2)))
    rows = draw(st.sampled_from((16, 32, 24)))
    cols = draw(st.sampled_from((64, 80, 48)))
    op = draw(st.sampled_from(("none", "add", "mul")))
    n = batch * rows * cols
    buf = f"!pg.buffer<{n}x{dtype}>"
    pad = "      " + ("  " if batch > 1 else "")
    base = ["%zero = pg_loop.const 0", f"%rc = pg_loop.const {rows * cols}",
            "%base = pg_loop.index mul %b, %rc"] if batch > 1 else ["%base = pg_loop.const 0"]
    body = [*base, f"%cr = pg_loop.const {rows}", "%kr = pg_loop.index mul %k, %cr",
            "%s0 = pg_loop.index add %kr, %i", "%src = pg_loop.index add %base, %s0",
            f"%x = pg_loop.load %in0[%src] : {buf} -> {dtype}",
            f"%cc = pg_loop.const {cols}", "%ic = pg_loop.index mul %i, %cc",
            "%d0 = pg_loop.index add %ic, %k", "%dst = pg_loop.index add %base, %d0"]
    value = "%x"
    if op != "none":
        body += [f"%y = pg_loop.load %in1[%dst] : {buf} -> {dtype}",
                 f"%v = pg_uop.binary {op} %x, %y : {dtype}"]
        value = "%v"
    body.append(f"pg_loop.store {value}, %out0[%dst] : {dtype}, {buf}")
    inputs = 1 if op == "none" else 2
    params = ", ".join(f"%in{j}: {buf}" for j in range(inputs))
    lines = [f"pg_loop.kernel @k0({params}, %out0: {buf}) {{"]
    indent = "  "
    if batch > 1:
        lines.append(f"{indent}pg_loop.range %b = 0 to {batch} global {{")
        indent += "  "
    lines += [f"{indent}pg_loop.range %i = 0 to {rows} global {{",
              f"{indent}  pg_loop.range %k = 0 to {cols} global {{",
              *(pad + line for line in body), f"{indent}  }}", f"{indent}}}"]
    if batch > 1:
        lines.append("  }")
    args = ", ".join(f"%in{j}" for j in range(inputs))
    lines += ["}", f"func.func @main({params}) -> {buf} {{",
              f"  %out0 = pg_sched.alloc : {buf}",
              f"  pg_sched.launch @k0({args}, %out0) : {', '.join([buf] * (inputs + 1))}",
              f"  func.return %out0 : {buf}", "}"]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    arrays = []
    for _ in range(inputs):
        if dtype == "i32":
            values = rng.integers(-1000, 1000, n).astype(np.int32)
        else:
            values = rng.standard_normal(n).astype(NP[dtype])
        spots = rng.integers(0, n, 8)
        values[spots] = rng.choice(np.array(SPECIALS[dtype], dtype=NP[dtype]), 8)
        arrays.append(values)
    return Program("\n".join(lines), arrays), (rows, cols)


def lower(module, vectorize: bool):
    lowered = module.clone()
    ConvertLoopToUopPass(vectorize=vectorize).apply(make_context(), lowered)
    lowered.verify()
    run_pipeline(lowered, "uop-simplify,cse")
    return lowered


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transposes())
def test_transposing_copies_are_blocked_and_keep_their_results(case):
    program, (rows, cols) = case
    module = program.parse()
    LoopOptimizePass(vector_bytes=64, registers=32).apply(make_context(), module)
    module.verify()
    round_trip(module)
    kernel = next(op for op in module.ops if isinstance(op, L.KernelOp))
    schedule = recorded_schedule(kernel)
    batched = "%b = 0 to" in program.text
    a = 1 if batched else 0
    blocked = BLOCKS.format(a=a, b=a + 2, c=a + 1)
    if rows % 16 == 0 and cols % 16 == 0 and cols >= 64:
        assert schedule == blocked
    else:
        assert blocked not in schedule
    replayed = program.parse()
    LoopSchedulePass(actions=schedule).apply(make_context(), replayed)
    assert str(replayed) == str(module)
    want = run(program.parse(), program.inputs)
    assert_same(want, run(module, program.inputs))
    for vectorize in (False, True):
        assert_same(want, run(lower(module, vectorize), program.inputs))
