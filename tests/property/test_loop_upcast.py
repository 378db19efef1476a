"""`loop-upcast` on random reduce kernels (matmul-like and row reductions, any sizes, any
reduce kind, one or two reduces, lane counts that do or do not divide the ranges, with and
without a minimum count of whole tiles): after the pass, and after lowering its lanes with
`convert-loop-to-uop`, the interpreter gives the original kernel's results bit for bit; the
output verifies and round-trips."""

from __future__ import annotations

import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same, reduce_programs, round_trip

from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import make_context
from picograd.interpreter import run
from picograd.passes.loop.loop_upcast import LoopUpcastPass
from picograd.passes.uop.convert_loop_to_uop import ConvertLoopToUopPass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reduce_programs(), st.integers(1, 4), st.integers(1, 4), st.sampled_from([0, 1, 4]))
def test_loop_upcast_preserves_semantics(program: Program, rows: int, cols: int,
                                         min_tiles: int):
    before, tiled = program.parse(), program.parse()
    tile = LoopUpcastPass(rows=rows, cols=cols, min_reduce=1, min_tiles=min_tiles)
    tile.apply(make_context(), tiled)
    tiled.verify()
    round_trip(tiled)
    lowered = program.parse()
    tile.apply(make_context(), lowered)
    ConvertLoopToUopPass().apply(make_context(), lowered)
    lowered.verify()
    run_pipeline(lowered, "uop-simplify,cse")
    with warnings.catch_warnings():  # numpy warns on inf/nan inputs
        warnings.simplefilter("ignore", RuntimeWarning)
        want = run(before, program.inputs)
        assert_same(want, run(tiled, program.inputs))
        assert_same(want, run(lowered, program.inputs))
