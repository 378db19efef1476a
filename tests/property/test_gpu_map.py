"""`uop-gpu-map` on random pg_tensor programs: the mapped kernels verify, round-trip, and the
interpreter (work items in lockstep between barriers) gives the sequential kernels' results,
for both GPU targets, also after `uop-simplify`, and after the default GPU tail
`uop-gpu-map,uop-legalize,uop-simplify`.

Small block sizes and reduction thresholds make the tiny shapes of the strategies hit the
guards, two-group grids, ragged strided loops, non-power-of-two trees and group reductions.
Results are compared bit for bit, except where a float reduction was spread over a work
group: its sum may round differently. Those programs are compared exactly (NaN equals NaN,
-0.0 equals 0.0) when every float value they make is an integer of magnitude <= 256 (then
sums are exact in any order), and skipped otherwise.
"""

from __future__ import annotations

import importlib.util
import math
import warnings
from collections.abc import Sequence

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same, round_trip, scalars, tensor_programs
from strategies.base import NP, ElementwiseBuilder, Value, int_list, ttype
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.utils.exceptions import PassFailedException

from picograd.compiler.pipelines import GPU_PTX, run_pipeline
from picograd.dialects import pg_tensor as pt
from picograd.dialects import pg_uop as pu
from picograd.dialects.capabilities import TRANSCENDENTALS
from picograd.dialects.dtypes import is_float
from picograd.dialects.pg import BinaryKind, BufferType, RangeKind, UnaryKind
from picograd.interpreter import run

# the GPU pipelines up to their mapping: stage 4 without the CPU's `loop-optimize` lanes
UOP = GPU_PTX.split(",uop-gpu-map")[0]
HAS_LEGALIZE = importlib.util.find_spec("picograd.passes.uop.uop_legalize") is not None
EXACT_LIMIT = 256  # float values up to this magnitude, integers, add exactly in any order
NICE_FLOATS = (-3.0, -2.0, -1.0, -0.0, 0.0, 1.0, 2.0, 3.0, math.inf, -math.inf, math.nan)


def interpret(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [r.ravel() for r in run(module, inputs)]


@st.composite
def programs(draw) -> Program:
    """A random program; float inputs are often small integers, so that float group
    reductions can be compared exactly."""
    program = draw(tensor_programs(max_ops=5))
    if program.inputs[0].dtype.kind == "f" and draw(st.integers(0, 3)) > 0:
        program.inputs = [
            np.array(draw(st.lists(st.sampled_from(NICE_FLOATS), min_size=x.size,
                                   max_size=x.size)), dtype=x.dtype).reshape(x.shape)
            for x in program.inputs]
    return program


def inexact(program: Program) -> bool:
    """Whether some float value of the program may be rounded (so that the order of a sum
    matters): a float op that rounds, or a float value that is not a small integer."""
    module = program.parse()
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    rounding = (UnaryKind.EXP, UnaryKind.LOG, UnaryKind.SQRT, UnaryKind.SIN, UnaryKind.RECIP,
                UnaryKind.EXP2, UnaryKind.LOG2)
    for op in main.walk():
        rounds = (isinstance(op, pt.UnaryOp) and op.kind.data in rounding) or (
            isinstance(op, pt.BinaryOp) and op.kind.data == BinaryKind.DIV)
        if rounds and is_float(pt.dtype_of(op.results[0])):
            return True
    values = [r for op in main.body.block.ops for r in op.results
              if isinstance(r.type, TensorType) and is_float(r.type.element_type)]
    values += [a for a in main.body.block.args
               if isinstance(a.type, TensorType) and is_float(a.type.element_type)]
    if not values:
        return False
    ret = main.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    ret.detach()
    ret.erase()
    main.body.block.add_op(func.ReturnOp(*values))
    main.function_type = FunctionType.from_lists(main.function_type.inputs.data,
                                                 [v.type for v in values])
    for x in interpret(module, program.inputs):
        finite = x[np.isfinite(x)].astype(np.float64)
        if finite.size and (np.abs(finite).max() > EXACT_LIMIT
                            or not np.array_equal(finite, np.round(finite))):
            return True
    return False


def float_group_reduction(module: ModuleOp) -> bool:
    return any(isinstance(op, pu.SharedOp) and isinstance(op.result.type, BufferType)
               and is_float(op.result.type.element_type) for op in module.walk())


def float_group_sum(module: ModuleOp) -> bool:
    """Whether a work group adds or multiplies float partials (whose order then matters;
    max and min give the same value in any order)."""
    for op in module.walk():
        if isinstance(op, pu.BinaryOp) and op.kind.data in (BinaryKind.ADD, BinaryKind.MUL) \
                and is_float(op.result.type) and isinstance(op.lhs.owner, pu.LoadOp) \
                and isinstance(op.lhs.owner.buffer.owner, pu.SharedOp):
            return True
    return False


def agree(expected: list[np.ndarray], got: list[np.ndarray], where: str, exact: bool) -> None:
    if exact:
        try:
            assert_same(expected, got)
        except AssertionError as e:
            raise AssertionError(f"after {where}: {e}") from None
        return
    for want, have in zip(expected, got, strict=True):
        assert want.dtype == have.dtype and want.shape == have.shape, where
        equal_nan = want.dtype.kind == "f"
        assert np.array_equal(want, have, equal_nan=equal_nan), (where, want, have)


@st.composite
def reduction_programs(draw) -> Program:
    """A few elementwise ops, one or two reductions over longer axes (up to 9 elements), and
    maybe an op on the reduced value: the shapes that group reductions are made for."""
    dtype = draw(st.sampled_from(("f32", "f64", "i32", "i8", "i1")))
    shape = draw(st.sampled_from(((5,), (8,), (2, 5), (3, 4), (1, 9), (2, 3, 2), (4, 1))))
    b = ElementwiseBuilder(draw, "pg_tensor")
    b.values.append(Value("%in0", dtype, shape))
    for _ in range(draw(st.integers(0, 2))):
        b.elementwise(b.recent())
    for _ in range(draw(st.integers(1, 2))):
        x = b.recent()
        assert x.shape is not None
        axes = sorted(draw(st.sets(st.sampled_from(range(len(x.shape))), min_size=1)))
        kinds = ("max", "min") if x.dtype == "i1" else ("sum", "max", "min", "prod")
        reduced = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        b.emit(f"pg_tensor.reduce {draw(st.sampled_from(kinds))} {x.name} {{axes = "
               f"{int_list(axes)}}} : {x.type} -> {ttype(x.dtype, reduced)}", x.dtype, reduced)
        if draw(st.booleans()):
            b.elementwise(b.values[-1])
    result = b.values[-1]
    text = "\n".join([f"func.func @main(%in0: {ttype(dtype, shape)}) -> ({result.type}) {{",
                      *b.lines, f"  func.return {result.name} : {result.type}", "}"])
    inputs = [np.array(draw(st.lists(nice_scalars(dtype), min_size=math.prod(shape),
                                     max_size=math.prod(shape))),
                       dtype=NP[dtype]).reshape(shape)]
    return Program(text, inputs)


@st.composite
def fused_row_programs(draw) -> Program:
    """Fused row kernels (softmax- and layernorm-like): per row, one or two reductions over
    the columns, the second maybe of the input minus the first's result, then an
    elementwise epilogue of every column with the last result, which the scheduler fuses
    into the reductions' kernel as a column loop."""
    dtype = draw(st.sampled_from(("f32", "f64", "i32", "i8")))
    rows, cols = draw(st.sampled_from((2, 3, 4))), draw(st.sampled_from((3, 5, 8, 9)))
    shape, reduced = (rows, cols), (rows, 1)
    b = ElementwiseBuilder(draw, "pg_tensor")
    x = Value("%in0", dtype, shape)
    b.values.append(x)
    kinds = ("sum", "max", "min")
    combines = ("add", "sub", "mul", "max", "min")

    def reduce_and_expand(v: Value) -> Value:
        kind = draw(st.sampled_from(kinds))
        r = b.emit(f"pg_tensor.reduce {kind} {v.name} {{axes = array<i64: 1>}} : {v.type} "
                   f"-> {ttype(dtype, reduced)}", dtype, reduced)
        return b.emit(f"pg_tensor.expand {r.name} : {r.type} -> {ttype(dtype, shape)}",
                      dtype, shape)

    row = reduce_and_expand(x)
    if draw(st.booleans()):
        x = b.emit(f"pg_tensor.binary sub {x.name}, {row.name} : {x.type}", dtype, shape)
        row = reduce_and_expand(x)
    y = b.emit(f"pg_tensor.binary {draw(st.sampled_from(combines))} {x.name}, {row.name} : "
               f"{x.type}", dtype, shape)
    text = "\n".join([f"func.func @main(%in0: {ttype(dtype, shape)}) -> ({y.type}) {{",
                      *b.lines, f"  func.return {y.name} : {y.type}", "}"])
    inputs = [np.array(draw(st.lists(nice_scalars(dtype), min_size=rows * cols,
                                     max_size=rows * cols)), dtype=NP[dtype]).reshape(shape)]
    return Program(text, inputs)


def nice_scalars(dtype: str) -> st.SearchStrategy:
    if dtype == "i1":
        return st.booleans()
    if dtype.startswith("f"):  # mostly values whose sums are exact in any order
        nice = st.sampled_from(NICE_FLOATS)
        return st.one_of(nice, nice, nice, scalars(dtype))
    return scalars(dtype)


def check_mapping(program: Program, target: str, local: int, threshold: int) -> None:
    """Map the program's kernels; compare the interpreter before and after, and after
    `uop-simplify`; the mapped module verifies and round-trips."""
    module = program.parse()
    run_pipeline(module, UOP)
    expected = interpret(module, program.inputs)
    spec = f"uop-gpu-map{{target={target} local-size={local} reduce-threshold={threshold}}}"
    run_pipeline(module, spec)
    module.verify()
    round_trip(module)
    exact = True
    if float_group_reduction(module):  # max/min may pick -0.0 or 0.0: compared by value
        exact = False
        if float_group_sum(module) and inexact(program):
            event("float group reduction of rounded values: not compared")
            return
        event("float group reduction, compared exactly")
    if any(isinstance(op, pu.BarrierOp) for op in module.walk()):
        event("group reduction")
        if any(isinstance(op, pu.RangeOp) and op.kind.data == RangeKind.LOOP
               and (op.result.name_hint or "").endswith("_step") for op in module.walk()):
            event("epilogue loop spread over the group")  # named by emit_strided
    if any(isinstance(op, pu.IfOp) for op in module.walk()):
        event("guarded")
    agree(expected, interpret(module, program.inputs), spec, exact)
    run_pipeline(module, "uop-simplify")
    module.verify()
    agree(expected, interpret(module, program.inputs), f"{spec},uop-simplify", exact)


TARGETS = st.sampled_from(("ptx", "wgsl"))
LOCAL_SIZES = st.sampled_from((1, 2, 3, 4))
THRESHOLDS = st.sampled_from((1, 2, 4, 256))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), TARGETS, LOCAL_SIZES, THRESHOLDS)
def test_gpu_map_preserves_semantics(program: Program, target: str, local: int,
                                     threshold: int):
    check_mapping(program, target, local, threshold)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reduction_programs(), TARGETS, LOCAL_SIZES, THRESHOLDS)
def test_group_reductions_preserve_semantics(program: Program, target: str, local: int,
                                             threshold: int):
    check_mapping(program, target, local, threshold)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fused_row_programs(), TARGETS, LOCAL_SIZES, THRESHOLDS)
def test_fused_row_kernels_preserve_semantics(program: Program, target: str, local: int,
                                              threshold: int):
    """The epilogue loop after a row's last group reduction runs on the whole work group."""
    check_mapping(program, target, local, threshold)


def uses_math(module: ModuleOp) -> bool:
    return any(isinstance(op, pu.UnaryOp) and op.kind.data.value in TRANSCENDENTALS
               for op in module.walk())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tensor_programs(max_ops=5), st.sampled_from(("ptx", "wgsl")))
def test_default_gpu_tail_is_exact(program: Program, target: str):
    """The default GPU pipeline's tail, default options: no group reduction at these
    sizes, so bit for bit, except where `uop-legalize` rewrote exp/log (rtol 1e-5, floats
    only: one ulp may flip a comparison). Programs that uop-legalize rejects (a dtype or
    function the target lacks) stop there."""
    module = program.parse()
    run_pipeline(module, UOP)
    expected = interpret(module, program.inputs)
    run_pipeline(module, f"uop-gpu-map{{target={target}}}")
    module.verify()
    round_trip(module)
    agree(expected, interpret(module, program.inputs), "uop-gpu-map", exact=True)
    if not HAS_LEGALIZE:
        run_pipeline(module, "uop-simplify")
        agree(expected, interpret(module, program.inputs), "uop-simplify", exact=True)
        return
    libm = uses_math(module)
    try:
        run_pipeline(module, f"uop-legalize{{target={target}}}")
    except PassFailedException as e:  # a dtype or function the target lacks
        assert str(e).startswith("uop-legalize"), e
        event("uop-legalize rejects the program")
        return
    run_pipeline(module, "uop-simplify")
    module.verify()
    got = interpret(module, program.inputs)
    if not libm:
        agree(expected, got, "uop-legalize,uop-simplify", exact=True)
        return
    for want, have in zip(expected, got, strict=True):
        if want.dtype.kind == "f":
            np.testing.assert_allclose(have, want, rtol=1e-5, equal_nan=True)
