"""`uop-legalize` on random pg_tensor programs taken through the default pipeline to stage 4.

For PTX and WGSL: the pass fails exactly where the program needs a dtype or function that
the target's table lacks and no rule provides (checked against the table directly, not
through the pass's own guards); otherwise it terminates at a fixpoint, and the output
verifies, round-trips and uses only what the table has. Then, with the interpreter:

* bit for bit, the same results as before, wherever no rewrite changes rounding (no exp or
  log on f32 for PTX, no f16 exp, log or sin): the rewrites of f16, i8, ui8 and i16
  arithmetic into f32 / i32 (WGSL emulates those types) included;
* bit for bit, the same results as before when the interpreter computes the functions the
  way the rules do (`PTX_MATH`: exp as exp2(x * log2(e)) in f32, f16 math in f32;
  `WGSL_MATH`: f16 math in f32).
  That checks every rewrite's wiring exactly; how far that rounding is from the true
  function, per op, is bounded in tests/unit/passes/test_uop_legalize.py. A tolerance on the
  whole program would not do: chained math magnifies a last-ulp difference without bound
  (exp(exp(exp(exp(0)))), then log and sin, already differs by 4.6e-6 relative).

Rewritten programs are also compiled for the CPU ("llvm", "c") and run: the machine code's
exp2, log2 and f16 casts must agree bit for bit with the interpreter when it calls the same
C library functions the compiled code calls (`LIBM_MATH`). Programs over the narrow types
(`narrow_programs`) legalised for WGSL are compiled and run on WEBGPU, where a device is
available: they must give the interpreter's results bit for bit.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from strategies import Program, arrays, assert_same, round_trip, tensor_programs
from strategies.base import NP, Draw, ElementwiseBuilder, Value, int_list
from test_lowering import interpret, makes_undefined_cast
from xdsl.dialects.builtin import IndexType, ModuleOp, f16, f32
from xdsl.ir import Attribute
from xdsl.utils.exceptions import PassFailedException

from picograd.compiler.driver import compile_module
from picograd.compiler.pipelines import GPU_PTX, GPU_WGSL, run_pipeline
from picograd.dialects import make_context, pg_uop
from picograd.dialects.capabilities import TRANSCENDENTALS, Capabilities, capabilities
from picograd.dialects.pg import UnaryKind
from picograd.errors import PicogradError
from picograd.interpreter import alu
from picograd.passes.uop.uop_legalize import UopLegalizePass, legalize_rules

# the GPU pipelines up to their mapping: stage 4 without the CPU's `loop-optimize` lanes
UOP = GPU_PTX.split(",uop-gpu-map")[0]
TO_CPU = {"llvm": "convert-uop-to-llvm", "c": "convert-uop-to-c"}
VIA = {"exp": "exp2", "log": "log2"}


# ── programs heavy in math ───────────────────────────────────────────────────


class _MathBuilder(ElementwiseBuilder):
    """Elementwise chains that keep returning to float math, in f16, f32 and f64."""

    UNARY = {**ElementwiseBuilder.UNARY,
             "f": ("exp", "log", "sqrt", "sin", "exp2", "log2", "neg", "recip")}
    CAST_TO = ("f16", "f32", "f64", "f32", "i32", "i1")

    def __init__(self, draw: Draw):
        super().__init__(draw, "pg_tensor")

    def step(self) -> None:
        x = self.recent()
        op = self.draw(st.sampled_from(("unary",) * 4 + ("binary", "cast", "where")))
        if op == "unary" and x.dtype[0] != "f":
            op = "cast"
        getattr(self, op)(x)


@st.composite
def math_programs(draw: Draw, max_ops: int = 8) -> Program:
    """`func.func @main` over one float tensor, mostly transcendental functions."""
    dtype = draw(st.sampled_from(("f32", "f32", "f16", "f64")))
    shape = draw(st.sampled_from(((4,), (2, 3))))
    b = _MathBuilder(draw)
    b.values.append(Value("%in0", dtype, shape))
    for _ in range(draw(st.integers(2, max_ops))):
        b.step()
    results = b.values[-2:] if len(b.values) > 2 and draw(st.booleans()) else b.values[-1:]
    types = ", ".join(r.type for r in results)
    text = "\n".join([
        f"func.func @main(%in0: {b.values[0].type}) -> ({types}) {{", *b.lines,
        f"  func.return {', '.join(r.name for r in results)} : {types}", "}"])
    return Program(text, [arrays(draw, dtype, shape)])


# ── programs over the types WGSL emulates ────────────────────────────────────

NP.setdefault("i16", np.int16)  # (strategies.base lists no i16 yet)
NARROW = ("f16", "i8", "ui8", "i16")


class _NarrowBuilder(ElementwiseBuilder):
    """Elementwise chains and reductions that stay mostly in f16, i8, ui8 and i16, with
    shifts; no transcendental functions (WGSL's f32 ones are not correctly rounded, which
    the compiled check could not tell from a wrong emulation)."""

    UNARY = {**ElementwiseBuilder.UNARY, "f": ("neg", "recip", "neg")}
    BINARY = {**ElementwiseBuilder.BINARY,
              **{f: (*ElementwiseBuilder.BINARY["i"], "shl", "shr") for f in "iu"}}
    CAST_TO = (*NARROW, *NARROW, "f32", "i32", "i1")

    def __init__(self, draw: Draw):
        super().__init__(draw, "pg_tensor")

    def step(self) -> None:
        x = self.recent()
        what = self.draw(st.sampled_from(("elementwise",) * 5 + ("reduce",)))
        if what == "reduce" and x.shape is not None and len(x.shape) == 2:
            kinds = ("max", "min") if x.dtype == "i1" else ("sum", "max", "min", "prod")
            shape = (x.shape[0], 1)
            self.emit(f"pg_tensor.reduce {self.draw(st.sampled_from(kinds))} {x.name} "
                      f"{{axes = {int_list([1])}}} : {x.type} -> "
                      f"tensor<{shape[0]}x1x{x.dtype}>", x.dtype, shape)
        else:
            self.elementwise(x)


@st.composite
def narrow_programs(draw: Draw, max_ops: int = 8) -> Program:
    """`func.func @main` over one or two tensors of f16, i8, ui8 or i16."""
    dtypes = draw(st.lists(st.sampled_from(NARROW), min_size=1, max_size=2))
    shape = draw(st.sampled_from(((4,), (2, 3))))
    b = _NarrowBuilder(draw)
    for n, dtype in enumerate(dtypes):
        b.values.append(Value(f"%in{n}", dtype, shape))
    for _ in range(draw(st.integers(2, max_ops))):
        b.step()
    results = b.values[-2:] if len(b.values) > 2 and draw(st.booleans()) else b.values[-1:]
    types = ", ".join(r.type for r in results)
    args = ", ".join(f"{v.name}: {v.type}" for v in b.values[:len(dtypes)])
    text = "\n".join([f"func.func @main({args}) -> ({types}) {{", *b.lines,
                      f"  func.return {', '.join(r.name for r in results)} : {types}", "}"])
    return Program(text, [arrays(draw, d, shape) for d in dtypes])


PROGRAMS = st.one_of(tensor_programs(max_ops=6), math_programs())


# ── what the table allows, asked directly ────────────────────────────────────


def kernels(module: ModuleOp) -> list[pg_uop.KernelOp]:
    return [op for op in module.ops if isinstance(op, pg_uop.KernelOp)]


def math_ops(module: ModuleOp) -> list[tuple[str, Attribute]]:
    return [(str(op.kind.data), op.result.type) for k in kernels(module) for op in k.walk()
            if isinstance(op, pg_uop.UnaryOp) and str(op.kind.data) in TRANSCENDENTALS]


def dtypes_used(module: ModuleOp) -> set[Attribute]:
    """Every element type a kernel's buffers, registers or values hold (`index` aside)."""
    used: set[Attribute] = set()
    for k in kernels(module):
        types = [a.type for a in k.args] + [r.type for op in k.walk() for r in op.results]
        for t in types:
            inner = getattr(t, "element_type", t)
            if not isinstance(inner, IndexType):
                used.add(inner)
    return used


def reachable(caps: Capabilities, function: str, dtype: Attribute) -> bool:
    """The target can compute `function` on `dtype`, natively, through exp2/log2, or (f16)
    through f32."""
    def direct(t: Attribute) -> bool:
        via = VIA.get(function)
        return caps.has_math(function, t) or (via is not None and caps.has_math(via, t))
    return direct(dtype) or (dtype == f16 and caps.supports(f32) and direct(f32))


def should_fail(module: ModuleOp, caps: Capabilities) -> bool:
    if any(not caps.supports(t) for t in dtypes_used(module)):
        return True
    if caps.max_buffers is not None and any(len(k.args) > caps.max_buffers
                                            for k in kernels(module)):
        return True
    return not all(reachable(caps, f, t) for f, t in math_ops(module))


def changes_rounding(module: ModuleOp, caps: Capabilities) -> bool:
    """Whether legalising for `caps` rewrites an op into one that rounds differently
    (f16 sqrt, exp2 and log2 promoted to f32 are exact: numpy computes them so)."""
    needs = [(f, t) for f, t in math_ops(module) if not caps.has_math(f, t)]
    return any(f in VIA or (t == f16 and f == "sin") for f, t in needs)


# ── the interpreter computing math another way ───────────────────────────────

Fn = Callable[[np.ndarray], np.ndarray]
LOG2_E, LN_2 = np.float32(1 / math.log(2)), np.float32(math.log(2))


def _f16_in_f32(fn: Fn) -> Fn:
    def computed(v: np.ndarray) -> np.ndarray:
        if v.dtype == np.float16:
            return fn(v.astype(np.float32)).astype(np.float16)
        return fn(v)
    return computed


def _f32_only(rewritten: Fn, native: Fn) -> Fn:
    return lambda v: rewritten(v) if v.dtype == np.float32 else native(v)


# How PTX computes each function after legalisation (f64 is never rewritten).
PTX_MATH: dict[UnaryKind, Fn] = {
    UnaryKind.EXP: _f16_in_f32(_f32_only(lambda v: np.exp2(v * LOG2_E), np.exp)),
    UnaryKind.LOG: _f16_in_f32(_f32_only(lambda v: np.log2(v) * LN_2, np.log)),
    **{UnaryKind(f): _f16_in_f32(getattr(np, f)) for f in ("sqrt", "sin", "exp2", "log2")},
}


def _libm(name: str) -> Fn:
    """`name` from the C library, elementwise, in the value's own width."""
    lib = ctypes.CDLL(ctypes.util.find_library("m"))
    single, double = getattr(lib, name + "f"), getattr(lib, name)
    single.restype, single.argtypes = ctypes.c_float, [ctypes.c_float]
    double.restype, double.argtypes = ctypes.c_double, [ctypes.c_double]

    def call(v: np.ndarray) -> np.ndarray:
        fn = single if v.dtype == np.float32 else double
        out = np.array([fn(float(a)) for a in np.ravel(v)], dtype=v.dtype).reshape(np.shape(v))
        return out if np.ndim(v) else out[()]
    return call


# How WGSL computes each function after legalisation: f16 in f32, f32 natively.
WGSL_MATH = {UnaryKind(f): _f16_in_f32(getattr(np, f)) for f in TRANSCENDENTALS}
REWRITTEN_MATH = {"ptx": PTX_MATH, "wgsl": WGSL_MATH}

# What the compiled code calls (`expf`, `llvm.exp2.f32` -> `exp2f`, ...).
LIBM_MATH = {UnaryKind(f): _libm(f) for f in ("exp2", "log2", "sin", "exp", "log")}


@contextmanager
def interpreting_math_as(functions: dict[UnaryKind, Fn]) -> Iterator[None]:
    """Swap the interpreter's float functions (its table is private: this is a test)."""
    with patch.dict(alu._FLOAT_UNARY, functions):  # pyright: ignore[reportPrivateUsage]
        yield


# ── the checks ───────────────────────────────────────────────────────────────


def legalize_and_check(program: Program, target: str) -> tuple[ModuleOp, bool] | None:
    """Legalise stage 4 of `program` for `target` and check it. Returns the legal module and
    whether rounding changed, or None where the pass (rightly) failed."""
    module = run_pipeline(program.parse(), UOP)
    caps = capabilities(target)
    legal = module.clone()
    try:
        UopLegalizePass(target).apply(make_context(), legal)
    except PassFailedException as e:
        assert should_fail(module, caps), f"failed although legal for {target}: {e}"
        assert str(e).startswith(f"uop-legalize{{target={target}}}: @"), str(e)
        assert target.upper() in str(e), str(e)
        event(f"{target}: rejected")
        return None
    assert not should_fail(module, caps), f"{target} lacks something the pass let through"
    legal.verify()
    round_trip(legal)
    for k in kernels(legal):
        assert legalize_rules(target).apply(k) == 0  # a fixpoint
    assert all(caps.has_math(f, t) for f, t in math_ops(legal))
    assert dtypes_used(legal) <= caps.dtypes
    assert not any(isinstance(op, pg_uop.UnaryOp | pg_uop.BinaryOp)
                   and caps.wide_type(op.result.type) is not None
                   for k in kernels(legal) for op in k.walk())  # emulated: no arithmetic
    rounding = changes_rounding(module, caps)
    if not rounding:
        assert_same(interpret(module, program.inputs), interpret(legal, program.inputs))
        return legal, False
    event(f"{target}: rewritten, rounding changed")
    with interpreting_math_as(REWRITTEN_MATH[target]):
        assert_same(interpret(module, program.inputs), interpret(legal, program.inputs))
    return legal, True


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROGRAMS)
def test_legalize_for_ptx_preserves_semantics(program: Program):
    result = legalize_and_check(program, "ptx")
    if result is None or not result[1] or makes_undefined_cast(program):
        return  # rejected, or nothing new to compile (tests/property/test_lowering.py's)
    legal = result[0]
    event("ptx: compiled for the CPU")
    with interpreting_math_as(LIBM_MATH):
        reference = interpret(legal, program.inputs)
    for target, lowering in TO_CPU.items():
        lowered = run_pipeline(legal.clone(), lowering, ctx=make_context())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = [r.ravel() for r in compile_module(lowered, target).run(program.inputs)]
        assert_same(reference, got)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROGRAMS)
def test_legalize_for_wgsl_rejects_or_preserves_semantics(program: Program):
    legalize_and_check(program, "wgsl")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(narrow_programs())
def test_legalize_for_wgsl_emulates_narrow_types_exactly(program: Program):
    result = legalize_and_check(program, "wgsl")
    assert result is not None and not result[1]  # every narrow type is emulated, no math


@pytest.fixture(scope="module")
def webgpu() -> None:
    try:
        from picograd.runtimes.webgpu import gpu

        gpu()
    except (PicogradError, ImportError) as e:
        pytest.skip(f"WEBGPU is not available: {e}")


@settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(narrow_programs())
def test_narrow_types_on_webgpu_match_the_interpreter(webgpu: None, program: Program):
    if makes_undefined_cast(program):
        return  # NaN, inf or out of range to an integer: undefined in C, so on every target
    expected = interpret(program.parse(), program.inputs)
    lowered = run_pipeline(program.parse(), GPU_WGSL, ctx=make_context())
    got = [r.ravel() for r in compile_module(lowered, "wgsl").run(program.inputs)]
    assert_same(expected, got)
