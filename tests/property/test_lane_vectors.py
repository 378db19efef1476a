"""Vector lanes: random matmul-like and row-reduction kernels, their innermost range split
into 1, 2, 4 or 8 `upcast` lanes (with a remainder when the size does not divide), lowered by
`convert-loop-to-uop` with and without `vectorize` — the same results bit for bit, vector
ops exactly where `lane_plan` finds a vector form, and IR that verifies and round-trips.
And reductions split into partial reductions side by side (`split_reduce`)."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same, reduce_programs, round_trip
from xdsl.dialects.builtin import ModuleOp

from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import make_context, pg_uop
from picograd.dialects import pg_loop as L
from picograd.dialects.dtypes import is_float
from picograd.dialects.pg import RangeKind, ReduceKind
from picograd.interpreter import run
from picograd.passes.loop.lane_vectors import lane_plan
from picograd.passes.loop.loop_schedule import LoopSchedulePass
from picograd.passes.loop.schedule import (
    Action,
    apply_schedule,
    axes,
    recorded_schedule,
    reduces,
)
from picograd.passes.uop.convert_loop_to_uop import ConvertLoopToUopPass


def _lowered(module: ModuleOp, vectorize: bool) -> ModuleOp:
    lowered = module.clone()
    ConvertLoopToUopPass(vectorize=vectorize).apply(make_context(), lowered)
    lowered.verify()
    run_pipeline(lowered, "uop-simplify,cse")
    lowered.verify()
    return lowered


# half the programs are made of what has a vector form (f32, sum/prod of
# add/sub/mul/div/max/min)
VECTOR_FRIENDLY = reduce_programs(dtypes=("f32",), kinds=("sum", "prod"),
                                  combines=("add", "sub", "mul", "div", "max", "min"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(reduce_programs(), VECTOR_FRIENDLY), st.data())
def test_vector_lanes_compute_what_scalar_lanes_do(program: Program, data: st.DataObject):
    module = program.parse()
    kernel = next(op for op in module.ops if isinstance(op, L.KernelOp))
    inner = axes(kernel)[-1]
    size = inner.end.data - inner.start.data
    lanes = data.draw(st.sampled_from([n for n in (1, 2, 4, 8) if n <= size]), label="lanes")
    apply_schedule(kernel, [Action("split", len(axes(kernel)) - 1, lanes, RangeKind.UPCAST)])
    upcast = next(op for op in kernel.walk()
                  if isinstance(op, L.RangeOp) and op.kind.data == RangeKind.UPCAST)
    vectorizable = lane_plan(upcast) is not None
    event(f"vector form: {vectorizable}")

    scalar, vector = _lowered(module, False), _lowered(module, True)
    round_trip(vector)
    has_vectors = any(isinstance(op, pg_uop.VLoadOp | pg_uop.VStoreOp)
                      for op in vector.walk())
    assert has_vectors == vectorizable
    with warnings.catch_warnings():  # numpy warns on inf/nan inputs
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same(run(scalar, program.inputs), run(vector, program.inputs))
        assert_same(run(module, program.inputs), run(vector, program.inputs))


# row reductions (one column): every reduce reads along its range
VECTOR_ROWS = reduce_programs(dtypes=("f32",), kinds=("sum", "prod"),
                              combines=("add", "sub", "mul", "div"), columns=(1,))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(reduce_programs(), VECTOR_ROWS), st.data())
def test_split_reduce_is_computed_as_its_ir_says(program: Program, data: st.DataObject):
    """`split_reduce` reorders a reduction: integer results and float max/min stay the same
    (up to the sign of a zero), and the new order is exactly what the lowered kernels
    compute, with scalar lanes and with vectors, also when the range around it is split
    into upcast lanes (a tile of split reduces)."""
    module = program.parse()
    kernel = next(op for op in module.ops if isinstance(op, L.KernelOp))
    n = data.draw(st.integers(0, len(reduces(kernel)) - 1), label="reduce")
    red = reduces(kernel)[n]
    size = red.end.data - red.start.data
    factors = [f for f in range(2, size + 1) if size % f == 0]
    if not factors:
        event("no factor divides the reduce")
        return
    factor = data.draw(st.sampled_from(factors), label="factor")
    kind, t = red.kind.data, red.result.type
    around = red.parent_op()
    apply_schedule(kernel, [Action("split_reduce", n, factor)])
    if (isinstance(around, L.RangeOp) and around.kind.data == RangeKind.GLOBAL
            and data.draw(st.booleans(), label="tile")):
        # the range around it in upcast lanes too: a tile of split reduces, one loop
        rows = data.draw(st.integers(2, 4), label="rows")
        if rows <= around.end.data - around.start.data:
            apply_schedule(kernel, [Action("split", axes(kernel).index(around), rows,
                                           RangeKind.UPCAST)])
            event("a tile of split reduces")
    module.verify()
    round_trip(module)
    replayed = program.parse()
    LoopSchedulePass(actions=recorded_schedule(kernel)).apply(make_context(), replayed)
    assert str(replayed) == str(module)

    scalar, vector = _lowered(module, False), _lowered(module, True)
    event(f"vector form: {any(isinstance(op, pg_uop.VReduceOp) for op in vector.walk())}")
    with warnings.catch_warnings():  # numpy warns on inf/nan inputs
        warnings.simplefilter("ignore", RuntimeWarning)
        split = run(module, program.inputs)
        assert_same(split, run(scalar, program.inputs))
        assert_same(split, run(vector, program.inputs))
        if not is_float(t) or kind in (ReduceKind.MAX, ReduceKind.MIN):
            for want, got in zip(run(program.parse(), program.inputs), split, strict=True):
                np.testing.assert_array_equal(want, got)  # -0.0 == 0.0, NaN == NaN


ROW_SUM = """
pg_loop.kernel @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<2xf32>) {
  pg_loop.range %i = 0 to 2 global {
    %s = pg_loop.reduce sum %r = 0 to 16 : f32 {
      %c16 = pg_loop.const 16
      %row = pg_loop.index mul %i, %c16
      %at = pg_loop.index add %row, %r
      %x = pg_loop.load %a[%at] : !pg.buffer<32xf32> -> f32
      pg_loop.yield %x : f32
    }
    pg_loop.store %s, %out[%i] : f32, !pg.buffer<2xf32>
  }
}
func.func @main(%a: !pg.buffer<32xf32>) -> !pg.buffer<2xf32> {
  %out = pg_sched.alloc : !pg.buffer<2xf32>
  pg_sched.launch @k0(%a, %out) : !pg.buffer<32xf32>, !pg.buffer<2xf32>
  func.return %out : !pg.buffer<2xf32>
}
"""


def test_partial_sums_of_negative_zeros_start_from_the_identity():
    """A sum starts from +0.0, so a row of -0.0 sums to +0.0 however it is split: the
    vector path's horizontal sum (-0.0 here) must still be added to the identity."""
    module = Program(ROW_SUM, []).parse()
    kernel = next(op for op in module.ops if isinstance(op, L.KernelOp))
    apply_schedule(kernel, [Action("split_reduce", 0, 8)])
    a = np.full(32, -0.0, np.float32)
    a[16] = 1.0  # the second row sums to 1
    for lowered in (_lowered(module, False), _lowered(module, True)):
        (out,) = run(lowered, [a])
        assert out.view(np.uint32).tolist() == np.array([0.0, 1.0], np.float32).view(
            np.uint32).tolist()
    assert any(isinstance(op, pg_uop.VReduceOp) for op in _lowered(module, True).walk())
