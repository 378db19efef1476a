"""`chunk_reduce` adds a sum up chunk by chunk: on random reduce kernels (f32 and i32 sums
over 1 to 9 iterations), every chunk size it takes gives what the kernel gave before. The
drawn floats are small dyadic values and infinities, whose sums are exact in f32 in any
order, so the results agree bit for bit (NaN with NaN); the accuracy the chunks buy on long
float sums is checked end to end (tests/e2e/test_sum_accuracy.py)."""

from __future__ import annotations

import warnings

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same, reduce_programs, round_trip

from picograd.dialects import pg_loop as L
from picograd.interpreter import run
from picograd.passes.loop.schedule import (
    Action,
    apply_schedule,
    chunk_reduce_problem,
    recorded_schedule,
    reduces,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reduce_programs(kinds=("sum",)), st.data())
def test_chunked_sums_are_the_kernel_s_sums(program: Program, data: st.DataObject):
    module = program.parse()
    k = next(op for op in module.ops if isinstance(op, L.KernelOp))
    red = reduces(k)[0]
    length = red.end.data - red.start.data
    for wrong in (1, length, length + 1):  # one chunk of each, one chunk, no fit
        assert chunk_reduce_problem(red, wrong) is not None
    sizes = [d for d in range(2, length) if length % d == 0]
    assume(sizes)
    size = data.draw(st.sampled_from(sizes), "size")
    assert chunk_reduce_problem(red, size) is None
    apply_schedule(k, [Action("chunk_reduce", 0, size)])
    module.verify()
    round_trip(module)
    outer, inner = reduces(k)[:2]
    assert (outer.end.data, inner.end.data) == (length // size, size)
    with warnings.catch_warnings():  # numpy warns on inf/nan inputs
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same(run(program.parse(), program.inputs), run(module, program.inputs))
    assert recorded_schedule(k) == f"chunk_reduce(0, {size})"
