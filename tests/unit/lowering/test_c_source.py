"""module_to_c: C types and exact literals, and the C semantics the kernel ABI fixes, checked by
compiling hand-written pg_uop kernels with the C runtime (`compile_module(module, "c")`):
wrapping signed arithmetic, integer division edge cases that trap in plain C, bool buffers as
bytes, values escaping their loop, and f64 / f16 math."""

# ruff: noqa: E501  (IR text is kept one op per line, as opt-tool prints it)

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects.builtin import Float16Type, IndexType, f32, f64, i1, i32, i64
from xdsl.ir import Attribute
from xdsl.parser import Parser

from picograd.compiler.driver import compile_module
from picograd.dialects import make_context
from picograd.dialects.dtypes import ui8
from picograd.lowering.c.convert_uop_to_c import ConvertUopToCPass
from picograd.lowering.c.printer import CSourceError, c_literal, c_type, module_to_c


@pytest.mark.parametrize(("t", "want"), [
    (IndexType(), "int64_t"), (f32, "float"), (f64, "double"), (Float16Type(), "_Float16"),
    (i1, "bool"), (i32, "int32_t"), (i64, "int64_t"), (ui8, "uint8_t"),
])
def test_c_type(t: Attribute, want: str) -> None:
    assert c_type(t) == want


def test_c_type_rejects_non_scalars() -> None:
    from picograd.dialects.pg import BufferType

    with pytest.raises(CSourceError, match="no C type"):
        c_type(BufferType(4, f32))


@pytest.mark.parametrize(("value", "t", "want"), [
    (1.0, f32, "1.0f"), (0.1, f32, "0.100000001f"), (-2.5e-8, f32, "-2.50000003e-08f"),
    (0.1, f64, "0.10000000000000001"), (3.0, f64, "3.0"),
    (math.inf, f32, "INFINITY"), (-math.inf, f64, "-INFINITY"), (math.nan, f32, "NAN"),
    (1.5, Float16Type(), "(_Float16)1.5f"),
    (True, i1, "true"), (0, i1, "false"), (-7, i32, "-7"), (-(2**63), i64, "INT64_MIN"),
    (2**63 - 1, i64, "9223372036854775807"),
])
def test_c_literal(value: float, t: Attribute, want: str) -> None:
    assert c_literal(value, t) == want


def test_f32_literals_round_trip() -> None:
    values = np.random.default_rng(3).standard_normal(200).astype(np.float32) * np.float32(1e5)
    for v in [*values, np.float32(1e-45), np.finfo(np.float32).max]:
        text = c_literal(float(v), f32)
        assert text.endswith("f") and np.float32(float(text[:-1])) == v, text


def run_c(text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    ConvertUopToCPass().apply(ctx, module)
    module.verify()
    return compile_module(module, "c").run(inputs)


def binary_module(kind: str, t: str, n: int) -> str:
    b = f"!pg.buffer<{n}x{t}>"
    return f"""
    pg_uop.kernel @k(%a: {b}, %b: {b}, %out: {b}) {{
      %i = pg_uop.range 0 to {n} global
      %x = pg_uop.load %a[%i] : {b} -> {t}
      %y = pg_uop.load %b[%i] : {b} -> {t}
      %z = pg_uop.binary {kind} %x, %y : {t}
      pg_uop.store %z, %out[%i] : {t}, {b}
      pg_uop.end %i
    }}
    func.func @main(%a: {b}, %b: {b}) -> {b} {{
      %out = pg_sched.alloc : {b}
      pg_sched.launch @k(%a, %b, %out) : {b}, {b}, {b}
      func.return %out : {b}
    }}"""


@pytest.mark.parametrize(("t", "np_t"), [("i32", np.int32), ("i64", np.int64)])
def test_signed_division_never_traps(t: str, np_t: type) -> None:
    """MIN / -1 overflows (x86 raises SIGFPE); the C target wraps it to MIN like numpy, gives
    MIN % -1 = 0, and a zero divisor gives 0."""
    lo = np.iinfo(np_t).min
    a = np.array([lo, lo, 7, -7, 7, -7, 5, lo], np_t)
    b = np.array([-1, 1, -2, -2, 0, 0, -1, 2], np_t)
    (q,) = run_c(binary_module("div", t, 8), [a, b])
    (r,) = run_c(binary_module("mod", t, 8), [a, b])
    np.testing.assert_array_equal(q, np.array([lo, lo, -3, 3, 0, 0, -5, lo // 2], np_t))
    np.testing.assert_array_equal(r, np.array([0, 0, 1, -1, 0, 0, 0, 0], np_t))


def test_signed_arithmetic_wraps() -> None:
    a = np.array([2**31 - 1, -(2**31), 65536, -3], np.int32)
    b = np.array([1, -1, 65536, 5], np.int32)
    with np.errstate(over="ignore"):
        for kind, want in [("add", a + b), ("sub", a - b), ("mul", a * b)]:
            (out,) = run_c(binary_module(kind, "i32", 4), [a, b])
            np.testing.assert_array_equal(out, want, err_msg=kind)


def test_unsigned_bytes_wrap_and_divide() -> None:
    a = np.array([250, 3, 0, 200], np.uint8)
    b = np.array([10, 5, 0, 7], np.uint8)
    (s,) = run_c(binary_module("add", "ui8", 4), [a, b])
    (q,) = run_c(binary_module("div", "ui8", 4), [a, b])
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(q, np.array([25, 0, 0, 28], np.uint8))


def test_float_max_min_propagate_nan() -> None:
    a = np.array([np.nan, 1.0, 2.0, -0.0], np.float32)
    b = np.array([1.0, np.nan, 1.0, 3.0], np.float32)
    (mx,) = run_c(binary_module("max", "f32", 4), [a, b])
    (mn,) = run_c(binary_module("min", "f32", 4), [a, b])
    np.testing.assert_array_equal(mx, np.maximum(a, b))
    np.testing.assert_array_equal(mn, np.minimum(a, b))


BOOL_BYTES = """
pg_uop.kernel @k(%a: !pg.buffer<6xi1>, %b: !pg.buffer<6xi1>, %out: !pg.buffer<6xi1>,
                 %n: !pg.buffer<6xi32>) {
  %i = pg_uop.range 0 to 6 global
  %x = pg_uop.load %a[%i] : !pg.buffer<6xi1> -> i1
  %y = pg_uop.load %b[%i] : !pg.buffer<6xi1> -> i1
  %z = pg_uop.binary xor %x, %y : i1
  pg_uop.store %z, %out[%i] : i1, !pg.buffer<6xi1>
  %c = pg_uop.cast %x : i1 to i32
  pg_uop.store %c, %n[%i] : i32, !pg.buffer<6xi32>
  pg_uop.end %i
}
func.func @main(%a: !pg.buffer<6xi1>, %b: !pg.buffer<6xi1>) -> (!pg.buffer<6xi1>, !pg.buffer<6xi32>) {
  %out = pg_sched.alloc : !pg.buffer<6xi1>
  %n = pg_sched.alloc : !pg.buffer<6xi32>
  pg_sched.launch @k(%a, %b, %out, %n) : !pg.buffer<6xi1>, !pg.buffer<6xi1>, !pg.buffer<6xi1>, !pg.buffer<6xi32>
  func.return %out, %n : !pg.buffer<6xi1>, !pg.buffer<6xi32>
}
"""


def test_bool_buffers_are_bytes_compared_with_zero() -> None:
    """A byte of 2 or 255 is true: xor with true gives false, the cast gives 1; stores are 0/1."""
    a = np.array([0, 1, 2, 255, 0, 128], np.uint8).view(np.bool_)
    b = np.array([1, 1, 1, 1, 0, 0], np.uint8).view(np.bool_)
    out, n = run_c(BOOL_BYTES, [a, b])
    np.testing.assert_array_equal(out.view(np.uint8), [1, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(n, [0, 1, 1, 1, 0, 1])


MATH_F64 = """
pg_uop.kernel @k(%a: !pg.buffer<3xf64>, %out: !pg.buffer<3xf64>, %h: !pg.buffer<3xf16>) {
  %i = pg_uop.range 0 to 3 global
  %x = pg_uop.load %a[%i] : !pg.buffer<3xf64> -> f64
  %e = pg_uop.unary exp %x : f64
  %l = pg_uop.unary log %e : f64
  %s = pg_uop.unary sin %l : f64
  %r = pg_uop.unary recip %s : f64
  pg_uop.store %r, %out[%i] : f64, !pg.buffer<3xf64>
  %xh = pg_uop.cast %x : f64 to f16
  %q = pg_uop.unary sqrt %xh : f16
  pg_uop.store %q, %h[%i] : f16, !pg.buffer<3xf16>
  pg_uop.end %i
}
func.func @main(%a: !pg.buffer<3xf64>) -> (!pg.buffer<3xf64>, !pg.buffer<3xf16>) {
  %out = pg_sched.alloc : !pg.buffer<3xf64>
  %h = pg_sched.alloc : !pg.buffer<3xf16>
  pg_sched.launch @k(%a, %out, %h) : !pg.buffer<3xf64>, !pg.buffer<3xf64>, !pg.buffer<3xf16>
  func.return %out, %h : !pg.buffer<3xf64>, !pg.buffer<3xf16>
}
"""


def test_f64_and_f16_math() -> None:
    x = np.array([0.5, 1.0, 2.0])
    out, h = run_c(MATH_F64, [x])
    np.testing.assert_allclose(out, 1 / np.sin(np.log(np.exp(x))), rtol=1e-14)
    assert h.dtype == np.float16
    np.testing.assert_allclose(h, np.sqrt(x.astype(np.float16)), rtol=1e-3)


ESCAPE = """
pg_uop.kernel @k(%a: !pg.buffer<4xf32>, %out: !pg.buffer<2xf32>) {
  %c0 = pg_uop.const 0 : index
  %c1 = pg_uop.const 1 : index
  %c3 = pg_uop.const 3 : index
  %acc = pg_uop.acc 0.0 : f32
  %i = pg_uop.range 0 to 4 reduce
  %x = pg_uop.load %a[%c3] : !pg.buffer<4xf32> -> f32
  %e = pg_uop.unary neg %x : f32
  %v = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %v : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %i
  pg_uop.store %e, %out[%c0] : f32, !pg.buffer<2xf32>
  %s = pg_uop.acc_load %acc : f32
  pg_uop.store %s, %out[%c1] : f32, !pg.buffer<2xf32>
}
func.func @main(%a: !pg.buffer<4xf32>) -> !pg.buffer<2xf32> {
  %out = pg_sched.alloc : !pg.buffer<2xf32>
  pg_sched.launch @k(%a, %out) : !pg.buffer<4xf32>, !pg.buffer<2xf32>
  func.return %out : !pg.buffer<2xf32>
}
"""


def test_a_value_escaping_its_loop_compiles_and_keeps_its_value() -> None:
    (out,) = run_c(ESCAPE, [np.array([1, 2, 3, 4], np.float32)])
    np.testing.assert_array_equal(out, [-4, 10])


def test_module_to_c_prints_every_function_after_the_prelude() -> None:
    ctx = make_context()
    module = Parser(ctx, ESCAPE).parse_module()
    ConvertUopToCPass().apply(ctx, module)
    source = module_to_c(module)
    assert source.startswith("#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n")
    assert "void k(float* restrict p0, float* restrict p1, int64_t start, int64_t end) {" in source
    assert source.count("void ") == 1
