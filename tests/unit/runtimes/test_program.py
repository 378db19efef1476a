"""compile_module + Program.run on hand-written pg_uop modules, checked against numpy.

Every test runs on both CPU renderers (`target` fixture); the C one is skipped until the C
pass and printer exist."""

from __future__ import annotations

import time

import numpy as np
import pytest

from picograd.errors import DeviceError, PicogradError


def one_kernel(body: str, args: list[tuple[str, str]], n: int, result: str = "out") -> str:
    """A kernel `@k0(args...)` with body lines inside `range 0 to n`, and an @main that takes
    every argument except `result` as input and returns `result` (allocated)."""
    sig = ", ".join(f"%{name}: !pg.buffer<{size}>" for name, size in args)
    inputs = [(name, size) for name, size in args if name != result]
    out_type = dict(args)[result]
    main_sig = ", ".join(f"%{name}: !pg.buffer<{size}>" for name, size in inputs)
    types = ", ".join(f"!pg.buffer<{size}>" for _, size in args)
    return f"""
pg_uop.kernel @k0({sig}) {{
  %i = pg_uop.range 0 to {n} global
{body}
  pg_uop.end %i
}}
func.func @main({main_sig}) -> !pg.buffer<{out_type}> {{
  %{result} = pg_sched.alloc : !pg.buffer<{out_type}>
  pg_sched.launch @k0({", ".join("%" + name for name, _ in args)}) : {types}
  func.return %{result} : !pg.buffer<{out_type}>
}}
"""


def test_elementwise_f32(build):
    body = """
  %x = pg_uop.load %a[%i] : !pg.buffer<64xf32> -> f32
  %y = pg_uop.load %b[%i] : !pg.buffer<64xf32> -> f32
  %p = pg_uop.binary mul %x, %y : f32
  %e = pg_uop.unary exp %x : f32
  %s = pg_uop.binary add %p, %e : f32
  %q = pg_uop.unary sqrt %y : f32
  %l = pg_uop.unary log %y : f32
  %t = pg_uop.unary sin %x : f32
  %r = pg_uop.unary recip %y : f32
  %d = pg_uop.binary div %q, %y : f32
  %u = pg_uop.binary sub %s, %d : f32
  %v = pg_uop.binary add %u, %l : f32
  %w = pg_uop.binary add %v, %t : f32
  %z = pg_uop.binary add %w, %r : f32
  %n = pg_uop.unary neg %z : f32
  pg_uop.store %n, %out[%i] : f32, !pg.buffer<64xf32>"""
    program = build(one_kernel(body, [("a", "64xf32"), ("b", "64xf32"), ("out", "64xf32")], 64))
    rng = np.random.default_rng(0)
    a = rng.standard_normal(64).astype(np.float32)
    b = rng.uniform(0.5, 2.0, 64).astype(np.float32)
    (out,) = program.run([a, b])
    want = -(a * b + np.exp(a) - np.sqrt(b) / b + np.log(b) + np.sin(a) + 1 / b)
    assert out.dtype == np.float32 and out.shape == (64,)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_max_min_propagate_nan_like_numpy(build):
    body = """
  %x = pg_uop.load %a[%i] : !pg.buffer<6xf32> -> f32
  %y = pg_uop.load %b[%i] : !pg.buffer<6xf32> -> f32
  %hi = pg_uop.binary max %x, %y : f32
  %lo = pg_uop.binary min %x, %y : f32
  %d = pg_uop.binary sub %hi, %lo : f32
  pg_uop.store %d, %out[%i] : f32, !pg.buffer<6xf32>"""
    program = build(one_kernel(body, [("a", "6xf32"), ("b", "6xf32"), ("out", "6xf32")], 6))
    a = np.array([1, np.nan, 3, -np.inf, 0, 2], np.float32)
    b = np.array([2, 1, np.nan, 1, -1, 2], np.float32)
    (out,) = program.run([a, b])
    np.testing.assert_array_equal(out, np.maximum(a, b) - np.minimum(a, b))


REDUCE = """
pg_uop.kernel @k0(%a: !pg.buffer<32xf32>, %s: !pg.buffer<4xf32>, %m: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %sum = pg_uop.acc 0.0 : f32
  %max = pg_uop.acc -inf : f32
  %j = pg_uop.range 0 to 8 reduce
  %c8 = pg_uop.const 8 : index
  %o = pg_uop.binary mul %i, %c8 : index
  %idx = pg_uop.binary add %o, %j : index
  %v = pg_uop.load %a[%idx] : !pg.buffer<32xf32> -> f32
  %s0 = pg_uop.acc_load %sum : f32
  %s1 = pg_uop.binary add %s0, %v : f32
  pg_uop.acc_store %sum, %s1 : f32
  %m0 = pg_uop.acc_load %max : f32
  %m1 = pg_uop.binary max %m0, %v : f32
  pg_uop.acc_store %max, %m1 : f32
  pg_uop.end %j
  %rs = pg_uop.acc_load %sum : f32
  pg_uop.store %rs, %s[%i] : f32, !pg.buffer<4xf32>
  %rm = pg_uop.acc_load %max : f32
  pg_uop.store %rm, %m[%i] : f32, !pg.buffer<4xf32>
  pg_uop.end %i
}
func.func @main(%a: !pg.buffer<32xf32>) -> (!pg.buffer<4xf32>, !pg.buffer<4xf32>) {
  %s = pg_sched.alloc : !pg.buffer<4xf32>
  %m = pg_sched.alloc : !pg.buffer<4xf32>
  pg_sched.launch @k0(%a, %s, %m) : !pg.buffer<32xf32>, !pg.buffer<4xf32>, !pg.buffer<4xf32>
  func.return %s, %m : !pg.buffer<4xf32>, !pg.buffer<4xf32>
}
"""


def test_reduce_sum_and_max_with_accumulators(build):
    program = build(REDUCE)
    a = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    s, m = program.run([a])  # any shape with 32 elements is accepted
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(m, a.max(axis=1))
    s2, _ = program.run([a * 2])  # the accumulators restart on every run and every row
    np.testing.assert_allclose(s2, 2 * a.sum(axis=1), rtol=1e-5)


def test_masked_load_pads_with_other(build):
    body = """
  %c4 = pg_uop.const 4 : index
  %m = pg_uop.cmp lt %i, %c4 : index
  %v = pg_uop.load %a[%i] if %m else 2.5 : !pg.buffer<4xf32> -> f32
  pg_uop.store %v, %out[%i] : f32, !pg.buffer<6xf32>"""
    program = build(one_kernel(body, [("a", "4xf32"), ("out", "6xf32")], 6))
    (out,) = program.run([np.arange(4, dtype=np.float32)])
    np.testing.assert_array_equal(out, [0, 1, 2, 3, 2.5, 2.5])


def _c_div(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q = np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))
    return q, a - q * b


def _divmod_module(t: str, n: int) -> str:
    body = f"""
  %x = pg_uop.load %a[%i] : !pg.buffer<{n}x{t}> -> {t}
  %y = pg_uop.load %b[%i] : !pg.buffer<{n}x{t}> -> {t}
  %q = pg_uop.binary div %x, %y : {t}
  %r = pg_uop.binary mod %x, %y : {t}
  %k = pg_uop.const 1000 : {t}
  %s = pg_uop.binary mul %q, %k : {t}
  %o = pg_uop.binary add %s, %r : {t}
  pg_uop.store %o, %out[%i] : {t}, !pg.buffer<{n}x{t}>"""
    return one_kernel(body, [("a", f"{n}x{t}"), ("b", f"{n}x{t}"), ("out", f"{n}x{t}")], n)


def test_int32_div_and_mod_follow_c(build):
    a = np.array([7, -7, 7, -7, 0, 100, -100, 5], np.int32)
    b = np.array([2, 2, -2, -2, 3, 7, 7, -9], np.int32)
    (out,) = build(_divmod_module("i32", 8)).run([a, b])
    q, r = _c_div(a, b)
    np.testing.assert_array_equal(out, q * 1000 + r)  # -7 / 2 = -3, -7 % 2 = -1


def test_integer_division_never_traps(build):
    """x / 0 and x % 0 give 0 (like numpy); MIN / -1 wraps to MIN and MIN % -1 is 0, where the
    x86 instruction would raise SIGFPE and kill the process."""
    lo = np.iinfo(np.int32).min
    a = np.array([7, -7, 0, 5, lo, lo, 9], np.int32)
    b = np.array([0, 0, 0, 2, -1, 0, -1], np.int32)
    (out,) = build(_divmod_module("i32", 7)).run([a, b])
    q = np.array([0, 0, 0, 2, lo, 0, -9], np.int32)
    r = np.array([0, 0, 0, 1, 0, 0, 0], np.int32)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, q * np.int32(1000) + r)


def test_bool_buffers_hold_bytes(build):
    body = """
  %x = pg_uop.load %a[%i] : !pg.buffer<5xi1> -> i1
  %f = pg_uop.load %f32in[%i] : !pg.buffer<5xf32> -> f32
  %z = pg_uop.const 0.0 : f32
  %pos = pg_uop.cmp gt %f, %z : f32
  %nx = pg_uop.unary not %x : i1
  %r = pg_uop.binary xor %nx, %pos : i1
  pg_uop.store %r, %out[%i] : i1, !pg.buffer<5xi1>"""
    args = [("a", "5xi1"), ("f32in", "5xf32"), ("out", "5xi1")]
    program = build(one_kernel(body, args, 5))
    a = np.array([True, False, True, False, True])
    f = np.array([1, 1, -1, -1, 0], np.float32)
    (out,) = program.run([a, f])
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, np.logical_xor(~a, f > 0))
    assert set(out.view(np.uint8).tolist()) <= {0, 1}


# ── casts: every (source, destination) pair in one module ────────────────────

DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
          "i8": np.int8, "ui8": np.uint8, "i16": np.int16, "i32": np.int32, "i64": np.int64}
INT_VALUES = {"i8": [-128, -100, -3, -1, 0, 1, 2, 7, 100, 127],
              "ui8": [0, 1, 2, 7, 100, 127, 128, 200, 255],
              "i16": [-30000, -300, -1, 0, 1, 255, 256, 1000, 30000],
              "i32": [-(2**31), -70000, -1, 0, 1, 300, 2049, 70000, 2**31 - 1],
              "i64": [-(2**40), -1, 0, 1, 255, 2**31, 2**40]}
FLOAT_VALUES = [-100.7, -3.7, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.9, 100.2, 127.0]


def _cast_inputs(src: str, dst: str) -> np.ndarray:
    """Values whose conversion C defines, so numpy's `astype` is the reference."""
    if src == "i1":
        return np.array([True, False, True], np.bool_)
    if src in INT_VALUES:
        values = INT_VALUES[src]
        if dst == "f16":  # keep to f16's range
            values = [v for v in values if abs(v) < 60000]
        return np.array(values, DTYPES[src])
    values = [v for v in FLOAT_VALUES if dst != "ui8" or v >= 0]
    if dst in ("i1", "f16", "f32", "f64"):
        values += [float("nan"), float("inf"), float("-inf")]
    return np.array(values, DTYPES[src])


def _cast_module() -> tuple[str, list[np.ndarray], list[np.ndarray]]:
    kernels, params, allocs, launches, results = [], [], [], [], []
    inputs, wants = [], []
    for n, (src, dst) in enumerate((s, d) for s in DTYPES for d in DTYPES):
        x = _cast_inputs(src, dst)
        a, o = f"!pg.buffer<{x.size}x{src}>", f"!pg.buffer<{x.size}x{dst}>"
        kernels.append(f"""
pg_uop.kernel @k{n}(%a: {a}, %o: {o}) {{
  %i = pg_uop.range 0 to {x.size} global
  %v = pg_uop.load %a[%i] : {a} -> {src}
  %c = pg_uop.cast %v : {src} to {dst}
  pg_uop.store %c, %o[%i] : {dst}, {o}
  pg_uop.end %i
}}""")
        params.append(f"%in{n}: {a}")
        allocs.append(f"  %out{n} = pg_sched.alloc : {o}")
        launches.append(f"  pg_sched.launch @k{n}(%in{n}, %out{n}) : {a}, {o}")
        results.append((f"%out{n}", o))
        inputs.append(x)
        with np.errstate(all="ignore"):
            wants.append(x.astype(DTYPES[dst]))
    main = "\n".join([
        f"func.func @main({', '.join(params)}) -> ({', '.join(t for _, t in results)}) {{",
        *allocs, *launches,
        f"  func.return {', '.join(v for v, _ in results)} : {', '.join(t for _, t in results)}",
        "}"])
    return "\n".join([*kernels, main]), inputs, wants


def test_every_cast_matches_numpy(build):
    text, inputs, wants = _cast_module()
    outs = build(text).run(inputs)
    pairs = [(s, d) for s in DTYPES for d in DTYPES]
    for (src, dst), x, out, want in zip(pairs, inputs, outs, wants, strict=True):
        assert out.dtype == want.dtype
        np.testing.assert_array_equal(out, want, err_msg=f"cast {src} -> {dst} of {x}")


# ── schedules ────────────────────────────────────────────────────────────────

TWO_KERNELS = """
pg_uop.kernel @k0(%a: !pg.buffer<8xf32>, %t: !pg.buffer<8xf32>) {
  %i = pg_uop.range 0 to 8 global
  %v = pg_uop.load %a[%i] : !pg.buffer<8xf32> -> f32
  %w = pg_uop.binary mul %v, %v : f32
  pg_uop.store %w, %t[%i] : f32, !pg.buffer<8xf32>
  pg_uop.end %i
}
pg_uop.kernel @k1(%t: !pg.buffer<8xf32>, %b: !pg.buffer<8xf32>, %out: !pg.buffer<8xf32>) {
  %i = pg_uop.range 0 to 8 global
  %v = pg_uop.load %t[%i] : !pg.buffer<8xf32> -> f32
  %u = pg_uop.load %b[%i] : !pg.buffer<8xf32> -> f32
  %w = pg_uop.binary add %v, %u : f32
  pg_uop.store %w, %out[%i] : f32, !pg.buffer<8xf32>
  pg_uop.end %i
}
func.func @main(%a: !pg.buffer<8xf32>, %b: !pg.buffer<8xf32>)
    -> (!pg.buffer<8xf32>, !pg.buffer<8xf32>) {
  %t = pg_sched.alloc : !pg.buffer<8xf32>
  %out = pg_sched.alloc : !pg.buffer<8xf32>
  pg_sched.launch @k0(%a, %t) : !pg.buffer<8xf32>, !pg.buffer<8xf32>
  pg_sched.launch @k1(%t, %b, %out) : !pg.buffer<8xf32>, !pg.buffer<8xf32>, !pg.buffer<8xf32>
  func.return %out, %b : !pg.buffer<8xf32>, !pg.buffer<8xf32>
}
"""


def test_two_kernels_through_an_intermediate_buffer(build):
    program = build(TWO_KERNELS)
    assert program.num_kernels == 2
    a = np.arange(8, dtype=np.float64)  # cast to the buffer's f32 on the way in
    b = np.ones((2, 4), np.float32)
    out, b_back = program.run([a, b])
    np.testing.assert_array_equal(out, a.astype(np.float32) ** 2 + 1)
    np.testing.assert_array_equal(b_back, b.ravel())
    assert not np.shares_memory(b_back, b)  # an input returned as a result is a copy
    out2, _ = program.run([a, b])
    assert not np.shares_memory(out, out2)  # every run allocates its results


def test_run_checks_the_inputs(build_llvm):
    program = build_llvm(TWO_KERNELS)
    with pytest.raises(DeviceError, match="takes 2 inputs, got 1"):
        program.run([np.zeros(8)])
    with pytest.raises(DeviceError, match=r"input 1 has 7 elements.*!pg.buffer<8xf32>"):
        program.run([np.zeros(8), np.zeros(7)])
    assert issubclass(DeviceError, PicogradError)


def test_benchmark_runs_before_each_outside_the_timed_runs(build_llvm):
    program = build_llvm(TWO_KERNELS)
    inputs = [np.arange(8, dtype=np.float32), np.ones(8, np.float32)]
    calls = []

    def neighbour_work() -> None:  # much longer than the two 8-element kernels
        calls.append(None)
        time.sleep(0.05)

    seconds = program.benchmark(inputs, 3, before_each=neighbour_work)
    assert len(calls) == 4  # the warm-up run and the 3 timed ones
    assert 0 < seconds < 0.05


def test_llvm_optimises_for_the_host(build_llvm):
    body = """
  %x = pg_uop.load %a[%i] : !pg.buffer<4096xf32> -> f32
  %y = pg_uop.binary mul %x, %x : f32
  pg_uop.store %y, %out[%i] : f32, !pg.buffer<4096xf32>"""
    program = build_llvm(one_kernel(body, [("a", "4096xf32"), ("out", "4096xf32")], 4096))
    assert "x float>" in program.binary.optimized_ir  # the loop was vectorised
    x = np.linspace(-2, 2, 4096, dtype=np.float32)
    np.testing.assert_array_equal(program.run([x])[0], x * x)


def test_values_cross_loop_ends_and_empty_ranges_do_not_run(build):
    text = """
pg_uop.kernel @k0(%out: !pg.buffer<2xf32>, %e: !pg.buffer<2xf32>) {
  %i = pg_uop.range 0 to 2 global
  %acc = pg_uop.acc 0.0 : f32
  %j = pg_uop.range 0 to 4 reduce
  %two = pg_uop.const 2.0 : f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %two : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %j
  %r = pg_uop.acc_load %acc : f32
  %s = pg_uop.binary mul %r, %two : f32
  pg_uop.store %s, %out[%i] : f32, !pg.buffer<2xf32>
  %none = pg_uop.acc 1.0 : f32
  %k = pg_uop.range 3 to 3 reduce
  pg_uop.acc_store %none, %two : f32
  pg_uop.end %k
  %one = pg_uop.acc_load %none : f32
  pg_uop.store %one, %e[%i] : f32, !pg.buffer<2xf32>
  pg_uop.end %i
}
func.func @main() -> (!pg.buffer<2xf32>, !pg.buffer<2xf32>) {
  %out = pg_sched.alloc : !pg.buffer<2xf32>
  %e = pg_sched.alloc : !pg.buffer<2xf32>
  pg_sched.launch @k0(%out, %e) : !pg.buffer<2xf32>, !pg.buffer<2xf32>
  func.return %out, %e : !pg.buffer<2xf32>, !pg.buffer<2xf32>
}
"""
    out, e = build(text).run([])
    np.testing.assert_array_equal(out, [16, 16])
    np.testing.assert_array_equal(e, [1, 1])


def test_inputs_the_lean_run_cannot_take_as_they_are_are_converted(build_llvm):
    """`Program.run` takes arrays of the buffer's dtype and element count as they are
    (`_run_lean`); a read-only, strided, wrongly typed or wrongly shaped one goes the full
    way (converted, or refused), and every way gives the same values."""
    program = build_llvm(TWO_KERNELS)
    a = np.arange(8, dtype=np.float32)
    b = np.ones(8, np.float32)
    want = a**2 + 1
    read_only = a.copy()
    read_only.flags.writeable = False
    strided = np.repeat(a, 2)[::2]  # the same values, every other element of a buffer
    for first in (a, read_only, strided, a.astype(np.float64), a.reshape(2, 4), list(a)):
        out, b_back = program.run([first, b])  # type: ignore[list-item]
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(b_back, b)
        assert not np.shares_memory(b_back, b)
    with pytest.raises(DeviceError, match=r"input 1 has 7 elements"):
        program.run([a, np.zeros(7, np.float32)])
