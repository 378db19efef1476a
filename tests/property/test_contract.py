"""`uop-contract` and `pg_uop.fma`: the interpreter's fused multiply-add is `a * b + c`
rounded once (checked against exact rational arithmetic, edges included), and random sums of
products, register-tiled and vectorised as `loop-optimize` does, contracted and compiled for
LLVM, give the contracted IR's results bit for bit."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from strategies import Program, assert_same, reduce_programs

from picograd.compiler.driver import compile_module
from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import pg_uop
from picograd.interpreter import run
from picograd.interpreter.alu import fused_multiply_add


def _rounded_once(a: float, b: float, c: float, dtype: type) -> float:
    """`a * b + c` exactly, rounded to `dtype` (nearest, ties to even), by exact rationals."""
    if not all(np.isfinite([a, b, c])):
        with np.errstate(invalid="ignore", over="ignore"):
            return float(np.float64(a) * np.float64(b) + np.float64(c))  # no rounding involved
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return float(np.float64(a) * np.float64(b) + np.float64(c))  # IEEE's sign of zero
    info = np.finfo(dtype)
    with np.errstate(over="ignore"):
        near = dtype(float(exact))  # within an ulp of the answer: its neighbours decide
    candidates = [near, np.nextafter(near, dtype(np.inf)), np.nextafter(near, dtype(-np.inf))]
    finite = [v for v in candidates if np.isfinite(v)]
    best = min(finite, key=lambda v: (abs(Fraction(float(v)) - exact),
                                      int(np.array(v).view(f"i{info.bits // 8}")) & 1))
    top_ulp = Fraction(2) ** (info.maxexp - 1 - info.nmant)
    limit = Fraction(float(info.max)) + top_ulp / 2
    if abs(exact) >= limit:  # rounds past the largest finite value
        return float("inf") if exact > 0 else float("-inf")
    return float(best)


def _floats(dtype: type) -> st.SearchStrategy[float]:
    width = {np.float16: 16, np.float32: 32}[dtype]
    return st.floats(width=width, allow_nan=True, allow_infinity=True)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([np.float16, np.float32]), st.data())
def test_fma_rounds_once(dtype: type, data: st.DataObject):
    a, b = data.draw(_floats(dtype), label="a"), data.draw(_floats(dtype), label="b")
    # c near -a*b half the time: the cancellations where one rounding matters most
    with np.errstate(over="ignore", invalid="ignore"):
        product = -np.float64(a) * np.float64(b)
        near = st.just(float(dtype(product))) if np.isfinite(dtype(product)) else _floats(dtype)
    c = data.draw(st.one_of(_floats(dtype), near), label="c")
    got = fused_multiply_add(dtype(a), dtype(b), dtype(c))
    want = dtype(_rounded_once(float(dtype(a)), float(dtype(b)), float(dtype(c)), dtype))
    assert got.dtype == dtype
    assert (np.isnan(got) and np.isnan(want)) or np.array_equal(
        np.array(got).view(f"i{np.dtype(dtype).itemsize}"),
        np.array(want).view(f"i{np.dtype(dtype).itemsize}")), (a, b, c, got, want)


def test_fma_on_vectors_and_f64():
    a = np.array([1 + 2.0**-23, 2e38, np.inf], np.float32)
    b = np.array([1 - 2.0**-23, 2.0, 0.0], np.float32)
    c = np.array([-1.0, -3e38, 1.0], np.float32)
    got = fused_multiply_add(a, b, c)
    assert got[0] == np.float32(-(2.0**-46))  # the unfused result is 0
    exact = Fraction(float(a[1])) * 2 + Fraction(float(c[1]))  # the product alone overflows
    assert got[1] == np.float32(float(exact)) and np.isfinite(got[1])
    assert np.isnan(got[2])
    d = fused_multiply_add(np.float64(1 + 2.0**-52), np.float64(1 - 2.0**-52), np.float64(-1))
    assert d == -(2.0**-104)


SUMS_OF_PRODUCTS = reduce_programs(dtypes=("f32",), kinds=("sum",), combines=("mul",))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SUMS_OF_PRODUCTS, st.sampled_from([16, 32, 64]))
def test_contracted_kernels_compile_to_what_the_ir_says(program: Program, vector_bytes: int):
    module = program.parse()
    schedule = f"loop-optimize{{vector-bytes={vector_bytes} registers=32 min-reduce=1}}"
    run_pipeline(module, f"{schedule},convert-loop-to-uop{{vectorize=true}},uop-simplify,cse,"
                         "uop-contract")
    module.verify()
    contracted = any(isinstance(op, pg_uop.FmaOp) for op in module.walk())
    event(f"contracted: {contracted}")
    with warnings.catch_warnings():  # numpy warns on inf/nan inputs
        warnings.simplefilter("ignore", RuntimeWarning)
        want = [r.ravel() for r in run(module, program.inputs)]
        lowered = run_pipeline(module.clone(), "convert-uop-to-llvm")
        got = [r.ravel() for r in compile_module(lowered, "llvm").run(program.inputs)]
    assert_same(want, got)
