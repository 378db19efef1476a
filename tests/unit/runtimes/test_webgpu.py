"""The WebGPU runtime: hand-written GPU-form pg_uop kernels lowered by convert-uop-to-wgsl,
printed as WGSL, compiled and run (Mesa's software Vulkan adapter where there is no GPU),
compared with the pg_uop interpreter; the runtime's memory API; and its errors.

Skipped, with the reason, where wgpu or an adapter is missing. One adapter and device
serve the whole process (`picograd.runtimes.webgpu.gpu`).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from picograd import interpreter
from picograd.compiler.driver import compile_module
from picograd.dialects import make_context
from picograd.errors import CompileError, DeviceError, PicogradError
from picograd.lowering.wgsl.convert_uop_to_wgsl import ConvertUopToWgslPass
from picograd.runtimes import get_device


@pytest.fixture(scope="module")
def runtime():
    try:
        from picograd.runtimes.webgpu import WebGpuRuntime

        return WebGpuRuntime()
    except (PicogradError, ImportError) as e:
        pytest.skip(f"WEBGPU is not available: {e}")


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def interpret(text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return interpreter.run(parse(text), inputs)


def on_webgpu(text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Lower the stage-4 module to pg_wgsl, compile it for WebGPU and run `@main`."""
    module = parse(text)
    ConvertUopToWgslPass().apply(make_context(), module)
    module.verify()
    return compile_module(module, "wgsl").run(inputs)


def elementwise(name: str, arg_types: list[str], out_types: list[str], body: str,
                groups: int, items: int) -> str:
    """A kernel over `groups` x `items` work items (%i = group * items + local) and an
    @main that launches it on fresh outputs."""
    n = groups * items
    args = ", ".join(f"%in{k}: !pg.buffer<{n}x{t}>" for k, t in enumerate(arg_types))
    outs = ", ".join(f"%out{k}: !pg.buffer<{n}x{t}>" for k, t in enumerate(out_types))
    types = [f"!pg.buffer<{n}x{t}>" for t in arg_types + out_types]
    allocs = "\n".join(f"  %out{k} = pg_sched.alloc : !pg.buffer<{n}x{t}>"
                       for k, t in enumerate(out_types))
    all_args = ", ".join([f"%in{k}" for k in range(len(arg_types))]
                         + [f"%out{k}" for k in range(len(out_types))])
    results = ", ".join(f"%out{k}" for k in range(len(out_types)))
    result_types = ", ".join(types[len(arg_types):])
    return f"""
pg_uop.kernel @{name}({", ".join(a for a in (args, outs) if a)}) {{
  %g = pg_uop.special group_id 0 size {groups}
  %l = pg_uop.special local_id 0 size {items}
  %items = pg_uop.const {items} : index
  %base = pg_uop.binary mul %g, %items : index
  %i = pg_uop.binary add %base, %l : index
{body}
}}
func.func @main({args}) -> ({result_types}) {{
{allocs}
  pg_sched.launch @{name}({all_args}) : {", ".join(types)}
  func.return {results} : {result_types}
}}"""


def load(buf: int, t: str, n: int, name: str) -> str:
    return f"  %{name} = pg_uop.load %in{buf}[%i] : !pg.buffer<{n}x{t}> -> {t}"


def store(value: str, out: int, t: str, n: int) -> str:
    return f"  pg_uop.store %{value}, %out{out}[%i] : {t}, !pg.buffer<{n}x{t}>"


# ── kernels against the interpreter ──────────────────────────────────────────

SPECIAL_F32 = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, -3.5, 1e30]


def test_every_float_op_matches_the_interpreter(runtime) -> None:
    n = 32
    ops = [("binary add %x, %y", "f32"), ("binary sub %x, %y", "f32"),
           ("binary mul %x, %y", "f32"), ("binary div %x, %y", "f32"),
           ("binary max %x, %y", "f32"), ("binary min %x, %y", "f32"),
           ("unary neg %x", "f32"), ("unary exp %p", "f32"), ("unary log %p", "f32"),
           ("unary sqrt %p", "f32"), ("unary sin %p", "f32"), ("unary exp2 %p", "f32"),
           ("unary log2 %p", "f32"), ("unary recip %y", "f32"),
           ("where %lt, %x, %y", "f32"), ("cast %x : f32 to i1", "i1"),
           ("cast %p : f32 to i32", "i32"), ("cast %lt : i1 to f32", "f32")]
    cmps = ["lt", "le", "gt", "ge", "eq", "ne"]
    body = [load(0, "f32", n, "x"), load(1, "f32", n, "y"), load(2, "f32", n, "p"),
            "  %lt = pg_uop.cmp lt %x, %y : f32",
            "  %cut = pg_uop.const 20 : index",
            "  %m = pg_uop.cmp lt %i, %cut : index",
            f"  %w = pg_uop.load %in1[%i] if %m else 2.5 : !pg.buffer<{n}xf32> -> f32"]
    outs: list[str] = []
    for k, (op, t) in enumerate(ops):
        suffix = "" if op.startswith("cast") else f" : {t}"
        body.append(f"  %r{k} = pg_uop.{op}{suffix}")
        body.append(store(f"r{k}", k, t, n))
        outs.append(t)
    for c in cmps:
        k = len(outs)
        body.append(f"  %r{k} = pg_uop.cmp {c} %x, %y : f32")
        body.append(store(f"r{k}", k, "i1", n))
        outs.append("i1")
    body.append(store("w", len(outs), "f32", n))
    outs.append("f32")
    text = elementwise("floats", ["f32", "f32", "f32"], outs, "\n".join(body), 4, 8)
    rng = np.random.default_rng(0)
    x = np.concatenate([SPECIAL_F32, rng.normal(size=n - 8) * 4]).astype(np.float32)
    y = np.concatenate([[1.0, np.nan, 2.0, -1.0, np.inf, 3.0, 0.5, -2.0],
                        rng.normal(size=n - 8) * 4]).astype(np.float32)
    y[y == 0] = 1.0
    p = rng.uniform(0.1, 3.0, n).astype(np.float32)  # in range of every function
    want = interpret(text, [x, y, p])
    got = on_webgpu(text, [x, y, p])
    for k, (w, g) in enumerate(zip(want, got, strict=True)):
        assert g.dtype == w.dtype, k
        if w.dtype == np.float32:  # WGSL's exp/log/sin are not correctly rounded
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, equal_nan=True,
                                       err_msg=f"output {k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"output {k}")


def test_every_int_op_matches_the_interpreter(runtime) -> None:
    n = 16
    kinds = ["add", "sub", "mul", "div", "mod", "max", "min", "and", "or", "xor"]
    body = [load(0, "i32", n, "x"), load(1, "i32", n, "y")]
    outs: list[str] = []
    for k, kind in enumerate(kinds):
        body += [f"  %r{k} = pg_uop.binary {kind} %x, %y : i32", store(f"r{k}", k, "i32", n)]
        outs.append("i32")
    extra = [("unary neg %x : i32", "i32"), ("unary not %x : i32", "i32"),
             ("cast %x : i32 to f32", "f32"), ("cast %x : i32 to i1", "i1"),
             ("cmp lt %x, %y : i32", "i1"), ("cmp ge %x, %y : i32", "i1"),
             ("cmp eq %x, %y : i32", "i1"), ("cmp ne %x, %y : i32", "i1"),
             ("where %c, %x, %y : i32", "i32")]
    body.append("  %c = pg_uop.cmp gt %x, %y : i32")
    for op, t in extra:
        k = len(outs)
        body += [f"  %r{k} = pg_uop.{op}", store(f"r{k}", k, t, n)]
        outs.append(t)
    # index arithmetic (i32 on WGSL): div and mod of the work-item index
    k = len(outs)
    body += ["  %three = pg_uop.const 3 : index",
             "  %q = pg_uop.binary div %i, %three : index",
             "  %rem = pg_uop.binary mod %i, %three : index",
             "  %qr = pg_uop.binary add %q, %rem : index",
             f"  %r{k} = pg_uop.cast %qr : index to i32", store(f"r{k}", k, "i32", n)]
    outs.append("i32")
    text = elementwise("ints", ["i32", "i32"], outs, "\n".join(body), 2, 8)
    x = np.array([-2**31, 2**31 - 1, 7, -7, 7, -7, 0, 5, 123456, -99, 3, 1, 2, 100, -1, 42],
                 np.int32)
    y = np.array([-1, 1, 2, 2, -2, -2, 3, -5, 1000, 7, 3, -1, 9, -100, 5, 6], np.int32)
    want = interpret(text, [x, y])  # no zero divisor: the interpreter traps on those
    got = on_webgpu(text, [x, y])
    for k, (w, g) in enumerate(zip(want, got, strict=True)):
        np.testing.assert_array_equal(g, w, err_msg=f"output {k}")


def test_int_division_by_zero_and_overflow_give_the_cpu_results(runtime) -> None:
    n = 8
    body = "\n".join([load(0, "i32", n, "x"), load(1, "i32", n, "y"),
                      "  %q = pg_uop.binary div %x, %y : i32", store("q", 0, "i32", n),
                      "  %r = pg_uop.binary mod %x, %y : i32", store("r", 1, "i32", n)])
    text = elementwise("divide", ["i32", "i32"], ["i32", "i32"], body, 1, 8)
    x = np.array([7, -7, -2**31, -2**31, 0, 5, -9, 2**31 - 1], np.int32)
    y = np.array([0, 0, -1, 0, 0, -1, 4, -1], np.int32)
    q, r = on_webgpu(text, [x, y])
    # x / 0 = 0 and x % 0 = 0 (WGSL alone gives x / 0 = x); MIN / -1 = MIN, MIN % -1 = 0.
    np.testing.assert_array_equal(q, [0, 0, -2**31, 0, 0, -5, -2, -(2**31 - 1)])
    np.testing.assert_array_equal(r, [0, 0, 0, 0, 0, 0, -1, 0])


def test_every_bool_op_matches_the_interpreter(runtime) -> None:
    n = 4
    ops = [("binary and %a, %b : i1", "i1"), ("binary or %a, %b : i1", "i1"),
           ("binary xor %a, %b : i1", "i1"), ("binary max %a, %b : i1", "i1"),
           ("binary min %a, %b : i1", "i1"), ("unary not %a : i1", "i1"),
           ("cmp lt %a, %b : i1", "i1"), ("cmp le %a, %b : i1", "i1"),
           ("cmp gt %a, %b : i1", "i1"), ("cmp ge %a, %b : i1", "i1"),
           ("cmp eq %a, %b : i1", "i1"), ("cmp ne %a, %b : i1", "i1"),
           ("where %a, %a, %b : i1", "i1"), ("cast %a : i1 to i32", "i32"),
           ("cast %b : i1 to f32", "f32")]
    body = [load(0, "i1", n, "a"), load(1, "i1", n, "b")]
    for k, (op, t) in enumerate(ops):
        body += [f"  %r{k} = pg_uop.{op}", store(f"r{k}", k, t, n)]
    text = elementwise("bools", ["i1", "i1"], [t for _, t in ops], "\n".join(body), 2, 2)
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    want = interpret(text, [a, b])
    got = on_webgpu(text, [a, b])
    for k, (w, g) in enumerate(zip(want, got, strict=True)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w, err_msg=f"output {k} ({ops[k][0]})")


ROW_SUMS_2D = """
pg_uop.kernel @rows(%a: !pg.buffer<96xf32>, %out: !pg.buffer<12xf32>, %big: !pg.buffer<12xi1>) {
  %gx = pg_uop.special group_id 0 size 2
  %gy = pg_uop.special group_id 1 size 3
  %lx = pg_uop.special local_id 0 size 2
  %ly = pg_uop.special local_id 1 size 1
  %c2 = pg_uop.const 2 : index
  %c4 = pg_uop.const 4 : index
  %c8 = pg_uop.const 8 : index
  %row0 = pg_uop.binary mul %gy, %c4 : index
  %col = pg_uop.binary mul %gx, %c2 : index
  %row1 = pg_uop.binary add %row0, %col : index
  %row2 = pg_uop.binary add %row1, %lx : index
  %row = pg_uop.binary add %row2, %ly : index
  %acc = pg_uop.acc 0.0 : f32
  %k = pg_uop.range 0 to 8 reduce
  %o = pg_uop.binary mul %row, %c8 : index
  %idx = pg_uop.binary add %o, %k : index
  %v = pg_uop.load %a[%idx] : !pg.buffer<96xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %v : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %k
  %sum = pg_uop.acc_load %acc : f32
  %zero = pg_uop.const 0.0 : f32
  %pos = pg_uop.cmp gt %sum, %zero : f32
  %huge = pg_uop.const 1.0e30 : f32
  %finite = pg_uop.cmp lt %sum, %huge : f32
  pg_uop.if %finite
  %twice = pg_uop.binary add %sum, %sum : f32
  pg_uop.endif
  %res = pg_uop.where %pos, %twice, %sum : f32
  pg_uop.store %res, %out[%row] : f32, !pg.buffer<12xf32>
  %o8 = pg_uop.binary div %o, %c8 : index
  pg_uop.store %pos, %big[%o8] : i1, !pg.buffer<12xi1>
}
func.func @main(%a: !pg.buffer<96xf32>) -> (!pg.buffer<12xf32>, !pg.buffer<12xi1>) {
  %out = pg_sched.alloc : !pg.buffer<12xf32>
  %big = pg_sched.alloc : !pg.buffer<12xi1>
  pg_sched.launch @rows(%a, %out, %big) : !pg.buffer<96xf32>, !pg.buffer<12xf32>, !pg.buffer<12xi1>
  func.return %out, %big : !pg.buffer<12xf32>, !pg.buffer<12xi1>
}
"""


def test_2d_launch_loop_accumulator_and_values_escaping_a_loop_and_an_if(runtime) -> None:
    # %o is computed in the reduce loop and used after it, %twice in the if (always taken:
    # the interpreter has no value for it otherwise): both escape.
    text = ROW_SUMS_2D
    a = np.random.default_rng(1).normal(size=96).astype(np.float32)
    want = interpret(text, [a])
    got = on_webgpu(text, [a])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_array_equal(got[1], want[1])
    sums = a.reshape(12, 8).sum(axis=1)
    np.testing.assert_allclose(got[0], np.where(sums > 0, 2 * sums, sums), rtol=1e-5)


def tree_sum(items: int) -> str:
    """A work-group sum in shared memory: halve the active items at each step, with a
    barrier (in uniform control flow) between steps; item 0 writes the group's total."""
    steps = []
    stride = items // 2
    while stride >= 1:
        steps.append(f"""
  %s{stride} = pg_uop.const {stride} : index
  %on{stride} = pg_uop.cmp lt %l, %s{stride} : index
  pg_uop.if %on{stride}
  %j{stride} = pg_uop.binary add %l, %s{stride} : index
  %a{stride} = pg_uop.load %sh[%l] : !pg.buffer<{items}xf32> -> f32
  %b{stride} = pg_uop.load %sh[%j{stride}] : !pg.buffer<{items}xf32> -> f32
  %c{stride} = pg_uop.binary add %a{stride}, %b{stride} : f32
  pg_uop.store %c{stride}, %sh[%l] : f32, !pg.buffer<{items}xf32>
  pg_uop.endif
  pg_uop.barrier""")
        stride //= 2
    n = 4 * items
    return f"""
pg_uop.kernel @tree(%x: !pg.buffer<{n}xf32>, %out: !pg.buffer<4xf32>) {{
  %g = pg_uop.special group_id 0 size 4
  %l = pg_uop.special local_id 0 size {items}
  %sh = pg_uop.shared : !pg.buffer<{items}xf32>
  %items = pg_uop.const {items} : index
  %base = pg_uop.binary mul %g, %items : index
  %i = pg_uop.binary add %base, %l : index
  %v = pg_uop.load %x[%i] : !pg.buffer<{n}xf32> -> f32
  pg_uop.store %v, %sh[%l] : f32, !pg.buffer<{items}xf32>
  pg_uop.barrier
  {"".join(steps)}
  %zero = pg_uop.const 0 : index
  %first = pg_uop.cmp eq %l, %zero : index
  pg_uop.if %first
  %total = pg_uop.load %sh[%zero] : !pg.buffer<{items}xf32> -> f32
  pg_uop.store %total, %out[%g] : f32, !pg.buffer<4xf32>
  pg_uop.endif
}}
func.func @main(%x: !pg.buffer<{n}xf32>) -> !pg.buffer<4xf32> {{
  %out = pg_sched.alloc : !pg.buffer<4xf32>
  pg_sched.launch @tree(%x, %out) : !pg.buffer<{n}xf32>, !pg.buffer<4xf32>
  func.return %out : !pg.buffer<4xf32>
}}"""


def test_shared_memory_and_barriers_reduce_a_work_group(runtime) -> None:
    text = tree_sum(64)
    x = np.arange(256, dtype=np.float32)  # small integers: every order sums exactly
    want = interpret(text, [x])
    (got,) = on_webgpu(text, [x])
    np.testing.assert_array_equal(got, want[0])
    np.testing.assert_array_equal(got, x.reshape(4, 64).sum(axis=1))


TWO_KERNELS = """
pg_uop.kernel @k0(%a: !pg.buffer<8xi32>, %t: !pg.buffer<8xi32>) {
  %l = pg_uop.special local_id 0 size 8
  %x = pg_uop.load %a[%l] : !pg.buffer<8xi32> -> i32
  %y = pg_uop.binary mul %x, %x : i32
  pg_uop.store %y, %t[%l] : i32, !pg.buffer<8xi32>
}
pg_uop.kernel @k1(%t: !pg.buffer<8xi32>, %out: !pg.buffer<8xf32>) {
  %g = pg_uop.special group_id 0 size 8
  %x = pg_uop.load %t[%g] : !pg.buffer<8xi32> -> i32
  %f = pg_uop.cast %x : i32 to f32
  %s = pg_uop.unary sqrt %f : f32
  pg_uop.store %s, %out[%g] : f32, !pg.buffer<8xf32>
}
func.func @main(%a: !pg.buffer<8xi32>) -> !pg.buffer<8xf32> {
  %t = pg_sched.alloc : !pg.buffer<8xi32>
  %out = pg_sched.alloc : !pg.buffer<8xf32>
  pg_sched.launch @k0(%a, %t) : !pg.buffer<8xi32>, !pg.buffer<8xi32>
  pg_sched.launch @k1(%t, %out) : !pg.buffer<8xi32>, !pg.buffer<8xf32>
  pg_sched.launch @k0(%a, %t) : !pg.buffer<8xi32>, !pg.buffer<8xi32>
  func.return %out : !pg.buffer<8xf32>
}
"""


def test_kernels_of_one_module_share_binding_numbers_and_run_in_order(runtime) -> None:
    a = np.arange(-4, 4, dtype=np.int32)
    (got,) = on_webgpu(TWO_KERNELS, [a])
    np.testing.assert_array_equal(got, np.abs(a).astype(np.float32))


# ── property: random integer expressions, interpreter == WebGPU ──────────────

_INT_KINDS = ("add", "sub", "mul", "div", "mod", "max", "min", "and", "or", "xor")


def _int_expressions():
    leaves = st.sampled_from(["%x", "%y", "c:0", "c:-1", "c:7", "c:-2147483648",
                              "c:2147483647"])
    return st.recursive(
        leaves,
        lambda sub: st.one_of(
            st.tuples(st.sampled_from(_INT_KINDS), sub, sub),
            st.tuples(st.sampled_from(("neg", "not")), sub),
            st.tuples(st.sampled_from(("lt", "eq", "ge")), sub, sub, sub, sub)),
        max_leaves=8)


def _emit(expr, lines: list[str]) -> str:
    """Append the pg_uop ops computing `expr`; return its value name."""
    def fresh(prefix: str) -> str:
        return f"%{prefix}{len(lines)}"  # unique: one line per name

    if isinstance(expr, str):
        if not expr.startswith("c:"):
            return expr
        name = fresh("c")
        lines.append(f"  {name} = pg_uop.const {expr[2:]} : i32")
        return name
    args = [_emit(e, lines) for e in expr[1:]]
    if len(args) == 1:
        name = fresh("e")
        lines.append(f"  {name} = pg_uop.unary {expr[0]} {args[0]} : i32")
    elif len(args) == 2:
        a, b = args
        if expr[0] in ("div", "mod"):  # the interpreter traps on a zero divisor
            one = fresh("one")
            lines.append(f"  {one} = pg_uop.const 1 : i32")
            b = fresh("nz")
            lines.append(f"  {b} = pg_uop.binary or {args[1]}, {one} : i32")
        name = fresh("e")
        lines.append(f"  {name} = pg_uop.binary {expr[0]} {a}, {b} : i32")
    else:
        a, b, c, d = args
        cond = fresh("cond")
        lines.append(f"  {cond} = pg_uop.cmp {expr[0]} {a}, {b} : i32")
        name = fresh("e")
        lines.append(f"  {name} = pg_uop.where {cond}, {c}, {d} : i32")
    return name


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expr=_int_expressions())
def test_random_int_expressions_match_the_interpreter(runtime, expr) -> None:
    lines = [load(0, "i32", 8, "x"), load(1, "i32", 8, "y")]
    result = _emit(expr, lines)
    lines.append(f"  pg_uop.store {result}, %out0[%i] : i32, !pg.buffer<8xi32>")
    text = elementwise("expr", ["i32", "i32"], ["i32"], "\n".join(lines), 2, 4)
    x = np.array([0, 1, -1, 7, -2**31, 2**31 - 1, 12345, -678], np.int32)
    y = np.array([3, -1, 0, -7, -1, 2, 99, 2**31 - 1], np.int32)
    np.testing.assert_array_equal(on_webgpu(text, [x, y])[0], interpret(text, [x, y])[0])


# ── the runtime API ──────────────────────────────────────────────────────────


def test_registered_as_device_webgpu(runtime) -> None:
    device = get_device("webgpu")
    assert device.device == "WEBGPU" and device.renderer == "wgsl"


@pytest.mark.parametrize(("dtype", "values"), [
    (np.float32, [1.5, -0.0, np.inf, np.nan]), (np.int32, [-2**31, 0, 7, 2**31 - 1]),
    (np.bool_, [True, False, False, True]), (np.float16, [65504, -6e-8, np.inf, np.nan]),
    (np.int8, [-128, 127, 0, -1]), (np.uint8, [0, 255, 128, 1]),
    (np.int16, [-32768, 32767, 0, -1]),
])
def test_copy_in_and_out_round_trip(runtime, dtype, values) -> None:
    host = np.array(values, dtype=dtype)
    buffer = runtime.allocate(4, np.dtype(dtype))
    try:
        runtime.copy_in(buffer, host.reshape(2, 2))
        out = runtime.copy_out(buffer)
        assert out.dtype == host.dtype and out.shape == (4,)
        np.testing.assert_array_equal(out, host)
    finally:
        runtime.free(buffer)


def test_bool_buffers_take_any_nonzero_as_true_and_empty_buffers_work(runtime) -> None:
    buffer = runtime.allocate(3, np.dtype(np.bool_))
    runtime.copy_in(buffer, np.array([0, 5, -1], np.int32))
    np.testing.assert_array_equal(runtime.copy_out(buffer), [False, True, True])
    empty = runtime.allocate(0, np.dtype(np.float32))
    runtime.copy_in(empty, np.zeros(0, np.float32))
    assert runtime.copy_out(empty).shape == (0,)


def test_memory_errors_name_the_problem(runtime) -> None:
    with pytest.raises(DeviceError, match="uint8 or int16, not float64"):
        runtime.allocate(4, np.dtype(np.float64))
    buffer = runtime.allocate(4, np.dtype(np.float32))
    with pytest.raises(DeviceError, match="3 elements into a buffer of 4"):
        runtime.copy_in(buffer, np.zeros(3, np.float32))
    with pytest.raises(DeviceError, match="no device address"):
        runtime.address(buffer)
    assert runtime.kernel_arg(buffer) is buffer


HAND_WRITTEN = """
@group(0) @binding(0) var<storage, read_write> k_p0: array<f32>;
@compute @workgroup_size(4, 1, 1)
fn k(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let i = i32(wid.x * 4u + lid.x);
  k_p0[i] = k_p0[i] * 2.0f;
}
"""


def test_hand_written_wgsl_load_launch_synchronize(runtime) -> None:
    shader = runtime.compile(HAND_WRITTEN)
    kernel = runtime.load(shader, "k", 1, ((2, 1, 1), (4, 1, 1)))
    buffer = runtime.allocate(8, np.dtype(np.float32))
    runtime.copy_in(buffer, np.arange(8, dtype=np.float32))
    runtime.launch(kernel, [buffer])
    runtime.launch(kernel, [buffer])  # the cached bind group
    runtime.synchronize()
    np.testing.assert_array_equal(runtime.copy_out(buffer), 4 * np.arange(8))
    with pytest.raises(DeviceError, match="takes 1 buffers, got 2"):
        kernel(buffer, buffer)


def test_bad_wgsl_raises_compile_error_with_the_offending_lines(runtime) -> None:
    broken = HAND_WRITTEN.replace("* 2.0f", "* undefined_name")
    with pytest.raises(CompileError) as info:
        runtime.compile(broken)
    error = info.value
    assert "undefined_name" in error.log
    assert "    6 |   k_p0[i] = k_p0[i] * undefined_name;" in error.log
    assert error.source_path is not None and os.path.exists(error.source_path)
    with open(error.source_path) as f:
        assert f.read() == broken


def test_pipeline_errors_name_the_kernel(runtime) -> None:
    shader = runtime.compile(HAND_WRITTEN)
    with pytest.raises(CompileError, match="kernel 'missing'"):
        runtime.load(shader, "missing", 1, ((1, 1, 1), (4, 1, 1)))
    with pytest.raises(DeviceError, match="needs its launch"):
        runtime.load(shader, "k", 1)
    with pytest.raises(DeviceError, match=r"grid \[100000, 1, 1\]"):
        runtime.load(shader, "k", 1, ((100000, 1, 1), (4, 1, 1)))


# ── the emulated types (f16 in f32, i8 / ui8 / i16 in i32) ───────────────────


def _one_op_program(n: int, src: str, dst: str, op: str) -> str:
    """A whole-pipeline pg_tensor program: `op` (cast or bitcast) of n values."""
    return f"""func.func @main(%a: tensor<{n}x{src}>) -> tensor<{n}x{dst}> {{
  %r = pg_tensor.{op} %a : tensor<{n}x{src}> to tensor<{n}x{dst}>
  func.return %r : tensor<{n}x{dst}>
}}"""


def _through_wgsl(text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    from picograd.compiler.pipelines import GPU_WGSL, run_pipeline

    module = run_pipeline(parse(text), GPU_WGSL, ctx=make_context())
    return compile_module(module, "wgsl").run(inputs)


def _f16_rounding_cases() -> np.ndarray:
    """Every non-negative f16, every halfway point between two (ties), one f32 ulp either
    side of each, the overflow threshold, f32 subnormals and random bit patterns; and their
    negations."""
    h = np.arange(0, 0x7C01, dtype=np.uint16).view(np.float16).astype(np.float64)
    mid = ((h[:-2] + h[1:-1]) / 2).astype(np.float32)
    special = np.array([65519.996, 65520.0, 65536.0, 1e30, np.inf, np.nan, 2**-25, 2**-26,
                        1e-45, 3e-39], np.float32)
    bits = np.random.default_rng(5).integers(0, 2**32, 50_000, dtype=np.uint64)
    cases = np.concatenate([h.astype(np.float32), mid, np.nextafter(mid, np.float32(0)),
                            np.nextafter(mid, np.float32(np.inf)), special,
                            bits.astype(np.uint32).view(np.float32)])
    return np.concatenate([cases, -cases])


def test_f32_to_f16_rounds_to_nearest_even_like_numpy(runtime) -> None:
    x = _f16_rounding_cases()
    (got,) = _through_wgsl(_one_op_program(x.size, "f32", "f16", "cast"), [x])
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint16), want[~nan].view(np.uint16))


def test_f16_i16_bitcasts_keep_all_65536_bit_patterns(runtime) -> None:
    bits = np.arange(-32768, 32768, dtype=np.int32).astype(np.int16)
    (halves,) = _through_wgsl(_one_op_program(bits.size, "i16", "f16", "bitcast"), [bits])
    np.testing.assert_array_equal(halves.view(np.int16), bits)
    (back,) = _through_wgsl(_one_op_program(bits.size, "f16", "i16", "bitcast"),
                            [bits.view(np.float16)])
    np.testing.assert_array_equal(back, bits)


def test_i8_ui8_bitcasts_are_the_wrapping_casts(runtime) -> None:
    x = np.arange(256).astype(np.uint8)
    (signed,) = _through_wgsl(_one_op_program(256, "ui8", "i8", "bitcast"), [x])
    np.testing.assert_array_equal(signed, x.view(np.int8))
    (unsigned,) = _through_wgsl(_one_op_program(256, "i8", "ui8", "bitcast"), [signed])
    np.testing.assert_array_equal(unsigned, x)


@pytest.mark.parametrize("t", ["i8", "ui8", "i16"])
def test_narrow_int_ops_wrap_like_the_interpreter(runtime, t: str) -> None:
    """Every binary kind on the edges of the type, shifts by amounts past its width."""
    dtype = {"i8": np.int8, "ui8": np.uint8, "i16": np.int16}[t]
    info = np.iinfo(dtype)
    edges = [info.min, info.max, 0, 1, 2, info.max - 1, info.min + 1, 3]
    x = np.array([a for a in edges for _ in edges], dtype)
    y = np.array([b if b != 0 else 7 for _ in edges for b in edges], dtype)
    kinds = ("add", "sub", "mul", "div", "mod", "max", "min", "and", "or", "xor", "shl",
             "shr")
    n, tt = x.size, f"tensor<{x.size}x{t}>"
    lines = [f"  %{k} = pg_tensor.binary {k} %x, %y : {tt}" for k in kinds]
    lines += [f"  %neg = pg_tensor.unary neg %x : {tt}", f"  %not = pg_tensor.unary not %x : {tt}"]
    names = [*kinds, "neg", "not"]
    text = "\n".join([f"func.func @main(%x: {tt}, %y: {tt}) -> ({', '.join([tt] * len(names))}) {{",
                      *lines, f"  func.return {', '.join('%' + k for k in names)} : "
                      f"{', '.join([tt] * len(names))}", "}"])
    want = interpreter.run(parse(text), [x, y])
    got = _through_wgsl(text, [x, y])
    for name, w, g in zip(names, want, got, strict=True):
        assert g.dtype == dtype, name
        np.testing.assert_array_equal(g.ravel(), w.ravel(), err_msg=name)
    assert n == 64
