"""Schedules on random kernels: any sequence of `split` (any axis, factor, inner kind),
`interchange`, `collapse` (any axis), `block_reduce`, `split_reduce` and `chunk_reduce`
that applies, and `loop-optimize`
for any vector unit and cache, keep the interpreter's results bit for bit, before and
after `convert-loop-to-uop` lowers the lanes (as scalars, and as vectors where they have a
vector form) and unrolled ranges; the output verifies, round-trips, and replaying its
recorded `pg.schedule` with `loop-schedule` on the original kernel gives the same IR."""

from __future__ import annotations

import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same, loop_programs, reduce_programs, round_trip
from xdsl.dialects.builtin import ModuleOp

from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import make_context
from picograd.dialects import pg_loop as L
from picograd.dialects.pg import RangeKind
from picograd.interpreter import run
from picograd.passes.loop.loop_optimize import LoopOptimizePass
from picograd.passes.loop.loop_schedule import LoopSchedulePass
from picograd.passes.loop.schedule import (
    Action,
    ScheduleError,
    apply_schedule,
    axes,
    recorded_schedule,
)
from picograd.passes.uop.convert_loop_to_uop import ConvertLoopToUopPass

REORDERING = ("split_reduce", "chunk_reduce", "block_reduce")
KINDS = (RangeKind.GLOBAL, RangeKind.LOCAL, RangeKind.UPCAST, RangeKind.UNROLL, RangeKind.LOOP)


def kernel(module: ModuleOp) -> L.KernelOp:
    return next(op for op in module.ops if isinstance(op, L.KernelOp))


def lower(module: ModuleOp, vectorize: bool = False) -> ModuleOp:
    lowered = module.clone()
    ConvertLoopToUopPass(vectorize=vectorize).apply(make_context(), lowered)
    lowered.verify()
    run_pipeline(lowered, "uop-simplify,cse")
    return lowered


def check(program: Program, scheduled: ModuleOp) -> None:
    """`scheduled` verifies, round-trips and computes what the program does; lowered to
    pg_uop, what the program lowered computes (pg_uop's index division truncates where
    pg_loop's floors: the random index expressions of `loop_programs` may be negative, so
    the lowered runs are compared with each other). Its recorded schedule replays to the
    same IR. A schedule with `split_reduce`, `chunk_reduce` or `block_reduce` (which
    `loop-optimize` picks for long reduces and big matmuls) reorders reductions: then the
    lowered kernels compute what the scheduled IR says (tests/property/test_lane_vectors.py,
    test_block_reduce.py and test_chunk_reduce.py check the reordering itself)."""
    scheduled.verify()
    round_trip(scheduled)
    replayed = program.parse()
    LoopSchedulePass(actions=recorded_schedule(kernel(scheduled))).apply(make_context(),
                                                                         replayed)
    assert str(replayed) == str(scheduled)
    with warnings.catch_warnings():  # numpy warns on inf/nan inputs
        warnings.simplefilter("ignore", RuntimeWarning)
        lowered = run(lower(scheduled), program.inputs)
        schedule = recorded_schedule(kernel(scheduled))
        if any(a in schedule for a in REORDERING):  # reordered reductions
            assert_same(run(scheduled, program.inputs), lowered)
        else:
            assert_same(run(program.parse(), program.inputs), run(scheduled, program.inputs))
            assert_same(run(lower(program.parse()), program.inputs), lowered)
        # lanes as vectors: each lane the same ops in the same order as its scalar twin
        vectors = lower(scheduled, vectorize=True)
        round_trip(vectors)
        assert_same(lowered, run(vectors, program.inputs))


@st.composite
def scheduled(draw: st.DrawFn, programs: st.SearchStrategy[Program],
              collapses: bool = False) -> tuple[Program, str]:
    """A program and a schedule of up to four random actions that apply to it (drawn one
    by one against the kernel as the previous ones left it). With `collapses`, `collapse`,
    `unflatten`, `block_reduce`, `split_reduce` and `chunk_reduce` too: the first two
    simplify index arithmetic, exact in pg_loop's floor division but not under pg_uop's
    truncating one for the negative indices `loop_programs` store, so only for
    `reduce_programs`, whose reduces the last three reorder."""
    program = draw(programs)
    k = kernel(program.parse())
    for _ in range(draw(st.integers(1, 4))):
        count = len(axes(k))
        if count == 0:
            break
        axis = draw(st.integers(0, count - 1))
        kind = draw(st.sampled_from(
            ("split", "interchange", "collapse", "unflatten", "block_reduce", "split_reduce",
             "chunk_reduce") if collapses else ("split", "interchange")))
        action = (Action("split", axis, draw(st.integers(1, 5)), draw(st.sampled_from(KINDS)))
                  if kind == "split" else
                  Action(kind, axis, draw(st.integers(2, 4))) if kind == "unflatten" else
                  Action(kind, draw(st.integers(0, 1)), draw(st.integers(1, 4)), at=axis)
                  if kind == "block_reduce" else
                  Action(kind, draw(st.integers(0, 1)), draw(st.integers(2, 4)))
                  if kind in ("split_reduce", "chunk_reduce") else Action(kind, axis))
        try:
            apply_schedule(k, [action])
        except ScheduleError:
            continue  # checked before anything changes: the kernel is as it was
    return program, recorded_schedule(k)


def check_schedule(program: Program, actions: str) -> None:
    module = program.parse()
    LoopSchedulePass(kernel="k0", actions=actions).apply(make_context(), module)
    assert recorded_schedule(kernel(module)) == actions
    check(program, module)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scheduled(loop_programs()))
def test_actions_on_loop_nests(case: tuple[Program, str]):
    check_schedule(*case)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scheduled(reduce_programs(), collapses=True))
def test_actions_on_reduce_kernels(case: tuple[Program, str]):
    check_schedule(*case)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reduce_programs(transposed=(False, True), longest=24), st.sampled_from((8, 16, 32, 64)),
       st.integers(1, 32), st.sampled_from((0, 64, 1 << 26)), st.sampled_from((0, 64, 1 << 20)))
def test_loop_optimize(program: Program, vector_bytes: int, registers: int, big_work: int,
                       cache_bytes: int):
    module = program.parse()
    LoopOptimizePass(vector_bytes=vector_bytes, registers=registers, min_reduce=1,
                     big_work=big_work, cache_bytes=cache_bytes).apply(make_context(), module)
    check(program, module)
