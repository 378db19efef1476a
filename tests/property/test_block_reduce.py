"""`block_reduce` sums each stored element's values block by block: on random matmul-like
kernels (f32 and i32 sums over 1 to 9 iterations, one or two ranges around), every block
size and axis it takes gives what the kernel gave before. The drawn floats are small
dyadic values and infinities, whose products and sums are exact in f32 in any order, so the
results agree bit for bit (NaN with NaN); compiled, the blocked kernel computes what the
interpreter says (CPU:LLVM and CPU:C through `loop-optimize`'s own choice are in
test_loop_schedule.py and the e2e matmul tests)."""

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
    axes,
    block_reduce_problem,
    recorded_schedule,
    reduces,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reduce_programs(kinds=("sum",)), st.data())
def test_blocked_sums_store_what_the_kernel_stored(program: Program, data: st.DataObject):
    module = program.parse()
    k = next(op for op in module.ops if isinstance(op, L.KernelOp))
    red = reduces(k)[0]
    length = red.end.data - red.start.data
    sizes = [d for d in range(1, length) if length % d == 0]
    assume(sizes)
    size = data.draw(st.sampled_from(sizes), "size")
    axis = data.draw(st.integers(0, len(axes(k)) - 1), "axis")
    assume(block_reduce_problem(red, size, axes(k)[axis]) is None)
    apply_schedule(k, [Action("block_reduce", 0, size, at=axis)])
    module.verify()
    round_trip(module)
    assert "loop" in {r.kind.data.value for r in axes(k)}
    with warnings.catch_warnings():  # numpy warns on inf/nan inputs
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same(run(program.parse(), program.inputs), run(module, program.inputs))
    assert recorded_schedule(k) == f"block_reduce(0, {size}, {axis})"
