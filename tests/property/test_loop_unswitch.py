"""`loop-unswitch` on random pg_loop kernels: the same results bit for bit, every comparison
of a split range's index with a constant decided, output verifies and round-trips.

Two sources: `loop_programs` (index expressions whose masks sometimes compare a range with a
constant) and concatenation-shaped kernels drawn here: 1-3 nested ranges of any kind the
pass splits, masked loads and selects under comparisons of one of them with constants
(every comparison kind, the constant on either side, inside or outside its bounds)."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same, loop_programs, round_trip
from strategies.base import Draw, arrays
from xdsl.ir import BlockArgument, SSAValue

from picograd.dialects import make_context
from picograd.dialects import pg_loop as L
from picograd.interpreter import run
from picograd.passes.loop.loop_simplify import loop_simplify_rules
from picograd.passes.loop.loop_unswitch import LoopUnswitchPass
from picograd.passes.rules import constant_scalar

_KINDS = ("lt", "le", "gt", "ge", "eq", "ne")


@st.composite
def piece_programs(draw: Draw) -> Program:
    """A kernel storing, per iteration of 1-3 nested ranges, a chain of selects between
    masked loads whose masks compare one range's index with constants."""
    sizes = [draw(st.integers(1, 6)) for _ in range(draw(st.integers(1, 3)))]
    kinds = ["global"] + [draw(st.sampled_from(("global", "loop"))) for _ in sizes[1:]]
    n = int(np.prod(sizes))
    lines = [f"pg_loop.kernel @k0(%in0: !pg.buffer<{n}xf32>, %out0: !pg.buffer<{n}xf32>) {{"]
    for i, (size, kind) in enumerate(zip(sizes, kinds, strict=True)):
        lines.append(f"{'  ' * (i + 1)}pg_loop.range %r{i} = 0 to {size} {kind} {{")
    pad = "  " * (len(sizes) + 1)
    lines.append(f"{pad}%pos0 = pg_loop.const 0")
    for i, size in enumerate(sizes):  # the row-major position of the iteration
        lines += [f"{pad}%sz{i} = pg_loop.const {size}",
                  f"{pad}%mul{i} = pg_loop.index mul %pos{i}, %sz{i}",
                  f"{pad}%pos{i + 1} = pg_loop.index add %mul{i}, %r{i}"]
    at = f"%pos{len(sizes)}"
    lines.append(f"{pad}%v0 = pg_uop.const {draw(st.sampled_from(('0.0', '-1.5')))} : f32")
    for j in range(draw(st.integers(1, 4))):
        var = f"%r{draw(st.integers(0, len(sizes) - 1))}"
        c = f"%c{j}"
        lines.append(f"{pad}{c} = pg_loop.const {draw(st.integers(-1, 7))}")
        lhs, rhs = (var, c) if draw(st.booleans()) else (c, var)
        lines += [f"{pad}%m{j} = pg_loop.cmp {draw(st.sampled_from(_KINDS))} {lhs}, {rhs}",
                  f"{pad}%l{j} = pg_loop.load %in0[{at}] if %m{j} else {j}.5 : "
                  f"!pg.buffer<{n}xf32> -> f32",
                  f"{pad}%v{j + 1} = pg_uop.where %m{j}, %l{j}, %v{j} : f32"]
    lines.append(f"{pad}pg_loop.store %v{j + 1}, %out0[{at}] : f32, !pg.buffer<{n}xf32>")
    lines += [f"{'  ' * (i + 1)}}}" for i in reversed(range(len(sizes)))] + ["}"]
    t = f"!pg.buffer<{n}xf32>"
    lines += [f"func.func @main(%in0: {t}) -> ({t}) {{", f"  %out0 = pg_sched.alloc : {t}",
              f"  pg_sched.launch @k0(%in0, %out0) : {t}, {t}",
              f"  func.return %out0 : {t}", "}"]
    return Program("\n".join(lines), [arrays(draw, "f32", (n,))])


def _check(program: Program) -> None:
    before, after = program.parse(), program.parse()
    LoopUnswitchPass().apply(make_context(), after)
    after.verify()
    with warnings.catch_warnings():  # numpy warns on inf/nan inputs
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same(run(before, program.inputs), run(after, program.inputs))
    round_trip(after)
    # split ranges leave no comparison with a constant undecided (the pass simplifies only
    # kernels it split: the pipeline's loop-simplify decided the rest before it)
    loop_simplify_rules.apply(after)
    for op in after.walk():
        if isinstance(op, L.CmpOp):
            for index, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
                assert not (_inner_range_index(index) and constant_scalar(other) is not None), (
                    str(op.parent_op()))


def _inner_range_index(v: SSAValue) -> bool:
    """Whether `v` is the index of a range that is not its kernel's outermost (those the
    pass splits; an outermost one stays whole unless it can move inward)."""
    if not isinstance(v, BlockArgument):
        return False
    r = v.owner.parent_op()
    return isinstance(r, L.RangeOp) and not isinstance(r.parent_op(), L.KernelOp)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(piece_programs())
def test_unswitch_of_piecewise_kernels_preserves_semantics(program: Program):
    _check(program)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop_programs())
def test_unswitch_of_random_index_kernels_preserves_semantics(program: Program):
    _check(program)
