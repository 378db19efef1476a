"""`tensor-simplify` on random pg_tensor graphs: same results bit for bit (NaN, inf and -0.0
included), terminates, idempotent, output verifies and round-trips."""

from __future__ import annotations

import warnings

from hypothesis import HealthCheck, given, settings
from strategies import Program, assert_same, round_trip, tensor_programs

from picograd.dialects import make_context
from picograd.interpreter import run
from picograd.passes.tensor.tensor_simplify import TensorSimplifyPass, tensor_simplify_rules


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tensor_programs())
def test_tensor_simplify_preserves_semantics(program: Program):
    before, after = program.parse(), program.parse()
    TensorSimplifyPass().apply(make_context(), after)
    after.verify()
    with warnings.catch_warnings():  # numpy warns on the inf/nan the inputs are made of
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same(run(before, program.inputs), run(after, program.inputs))
    round_trip(after)
    assert tensor_simplify_rules.apply(after) == 0  # a fixpoint: nothing left to rewrite
