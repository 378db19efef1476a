"""`tensor-split-reduce` on random pg_tensor graphs, every reduce split (`min-elements=2`)
into partials of 1 to 3 elements: integer graphs give the same results bit for bit (sums and
products wrap in any order, max and min are exact); every output verifies and round-trips.
(A float sum rounds differently in two steps: tests/e2e/test_sum_accuracy.py bounds it.)"""

from __future__ import annotations

import warnings

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same, round_trip, tensor_programs

from picograd.dialects import make_context
from picograd.dialects import pg_tensor as T
from picograd.interpreter import run
from picograd.passes.tensor.tensor_split_reduce import TensorSplitReducePass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.filter_too_much])
@given(tensor_programs(), st.integers(1, 3))
def test_split_reductions_reduce_the_same_elements(program: Program, work: int):
    assume(all(a.dtype.kind in "iub" for a in program.inputs))
    before, after = program.parse(), program.parse()
    reduces = sum(isinstance(op, T.ReduceOp) for op in before.walk())
    TensorSplitReducePass(min_elements=2, work=work).apply(make_context(), after)
    after.verify()
    round_trip(after)
    assert sum(isinstance(op, T.ReduceOp) for op in after.walk()) >= reduces
    with warnings.catch_warnings():  # numpy warns on integer overflow in reductions
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same(run(before, program.inputs), run(after, program.inputs))
