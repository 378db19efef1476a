"""`loop-simplify` on random pg_loop kernels (index expressions, masks, reductions): same
results bit for bit, terminates, idempotent, output verifies and round-trips."""

from __future__ import annotations

import warnings

from hypothesis import HealthCheck, given, settings
from strategies import Program, assert_same, loop_programs, round_trip

from picograd.dialects import make_context
from picograd.interpreter import run
from picograd.passes.loop.loop_simplify import LoopSimplifyPass, loop_simplify_rules


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop_programs())
def test_loop_simplify_preserves_semantics(program: Program):
    before, after = program.parse(), program.parse()
    LoopSimplifyPass().apply(make_context(), after)
    after.verify()
    with warnings.catch_warnings():  # numpy warns on inf/nan inputs
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same(run(before, program.inputs), run(after, program.inputs))
    round_trip(after)
    assert loop_simplify_rules.apply(after) == 0  # a fixpoint: nothing left to rewrite
