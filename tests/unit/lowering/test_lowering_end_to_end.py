"""End to end on both CPU renderers: hand-written pg_tensor graphs through the default pipeline
(CPU_C / CPU_LLVM), compiled by `compile_module` and compared with numpy. Covers fusion with
broadcasting, a matmul built from views, every movement op in one chain, reductions on inner
and outer axes, multiple outputs, a returned input, and the scalar semantics the kernel ABI
fixes (C casts, truncating integer division, bools as bytes)."""

# ruff: noqa: E501  (IR text is kept one op per line, as opt-tool prints it)

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from ir_programs import matmul_text

Run = Callable[[str, Sequence[np.ndarray]], list[np.ndarray]]  # the `run` fixture (conftest.py)

RNG = np.random.default_rng(0)


def randn(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def check(out: np.ndarray, want: np.ndarray, **tol: float) -> None:
    assert out.dtype == want.dtype, (out.dtype, want.dtype)
    np.testing.assert_allclose(out, np.ravel(want), **tol)


# ── fusion ───────────────────────────────────────────────────────────────────

RELU_SUM = """
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>) -> tensor<4x1xf32> {
  %b1 = pg_tensor.reshape %b : tensor<8xf32> -> tensor<1x8xf32>
  %be = pg_tensor.expand %b1 : tensor<1x8xf32> -> tensor<4x8xf32>
  %ce = pg_tensor.expand %c : tensor<4x1xf32> -> tensor<4x8xf32>
  %m = pg_tensor.binary mul %a, %be : tensor<4x8xf32>
  %s = pg_tensor.binary add %m, %ce : tensor<4x8xf32>
  %z = pg_tensor.const 0.0 : tensor<4x8xf32>
  %r = pg_tensor.binary max %s, %z : tensor<4x8xf32>
  %t = pg_tensor.reduce sum %r {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %t : tensor<4x1xf32>
}
"""


def test_broadcast_relu_sum(run: Run) -> None:
    a, b, c = randn(4, 8), randn(8), randn(4, 1)
    (out,) = run(RELU_SUM, [a, b, c])
    check(out, np.maximum(a * b + c, 0).sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)


MATMUL = matmul_text(64, 64, 64)


def test_matmul_from_views(run: Run) -> None:
    a, b = randn(64, 64), randn(64, 64)
    (out,) = run(MATMUL, [a, b])
    check(out, a @ b, rtol=1e-4, atol=1e-4)


MOVEMENT_CHAIN = """
func.func @main(%x: tensor<5x6xf32>) -> tensor<1x3xf32> {
  %p = pg_tensor.pad %x low [1, 2] high [2, 1] value 0.5 : tensor<5x6xf32> -> tensor<8x9xf32>
  %f = pg_tensor.flip %p {axes = array<i64: 0, 1>} : tensor<8x9xf32>
  %s = pg_tensor.slice %f {start = array<i64: 1, 0>, step = array<i64: 2, 3>} : tensor<8x9xf32> -> tensor<4x3xf32>
  %r = pg_tensor.reduce max %s {axes = array<i64: 0>} : tensor<4x3xf32> -> tensor<1x3xf32>
  func.return %r : tensor<1x3xf32>
}
"""


def test_pad_flip_slice_reduce(run: Run) -> None:
    # negative inputs, so that the pad value 0.5 wins wherever it is read
    x = -np.abs(randn(5, 6)) - 1
    (out,) = run(MOVEMENT_CHAIN, [x])
    p = np.pad(x, ((1, 2), (2, 1)), constant_values=0.5)
    want = p[::-1, ::-1][1::2, 0::3].max(axis=0, keepdims=True)
    check(out, want)
    # and with inputs larger than the pad value
    (out,) = run(MOVEMENT_CHAIN, [x + 10])
    check(out, np.pad(x + 10, ((1, 2), (2, 1)), constant_values=0.5)[::-1, ::-1][1::2, ::3]
          .max(axis=0, keepdims=True))


PERMUTE_REDUCE_OUTER = """
func.func @main(%x: tensor<3x4x5xf32>) -> (tensor<1x4x1xf32>, tensor<5x4x1xf32>) {
  %s = pg_tensor.reduce sum %x {axes = array<i64: 0, 2>} : tensor<3x4x5xf32> -> tensor<1x4x1xf32>
  %t = pg_tensor.permute %x {perm = array<i64: 2, 1, 0>} : tensor<3x4x5xf32> -> tensor<5x4x3xf32>
  %m = pg_tensor.reduce min %t {axes = array<i64: 2>} : tensor<5x4x3xf32> -> tensor<5x4x1xf32>
  func.return %s, %m : tensor<1x4x1xf32>, tensor<5x4x1xf32>
}
"""


def test_reduce_outer_axes_and_permute(run: Run) -> None:
    x = randn(3, 4, 5)
    s, m = run(PERMUTE_REDUCE_OUTER, [x])
    check(s, x.sum(axis=(0, 2), keepdims=True), rtol=1e-5, atol=1e-5)
    check(m, x.transpose(2, 1, 0).min(axis=2, keepdims=True))


REDUCE_THEN_ELEMENTWISE = """
func.func @main(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = pg_tensor.reduce max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %me = pg_tensor.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %d = pg_tensor.binary sub %x, %me : tensor<4x8xf32>
  %e = pg_tensor.unary exp %d : tensor<4x8xf32>
  func.return %e, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
"""


def test_elementwise_after_reduce_and_returned_input(run: Run) -> None:
    x = randn(4, 8)
    e, same = run(REDUCE_THEN_ELEMENTWISE, [x])
    check(e, np.exp(x - x.max(axis=1, keepdims=True)), rtol=1e-5)
    check(same, x)


# ── scalar semantics ─────────────────────────────────────────────────────────

DTYPES = {"f32": np.float32, "i32": np.int32, "i1": np.bool_}
CAST_INPUTS = {
    "f32": np.array([-2.75, -1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 3.9, 1e6], np.float32),
    "i32": np.array([-2147483648, -7, -1, 0, 1, 2, 255, 256, 2147483647], np.int32),
    "i1": np.array([True, False, True, True, False, False, True, False, True]),
}


def c_cast(x: np.ndarray, dst: str) -> np.ndarray:
    """C semantics: float -> int truncates toward zero, anything -> bool is `!= 0`."""
    if dst == "i1":
        return x != 0
    if x.dtype == np.float32 and dst == "i32":
        return np.trunc(x).astype(np.int32)
    return x.astype(DTYPES[dst])


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_cast(run: Run, src: str, dst: str) -> None:
    text = f"""
    func.func @main(%x: tensor<9x{src}>) -> tensor<9x{dst}> {{
      %y = pg_tensor.cast %x : tensor<9x{src}> to tensor<9x{dst}>
      func.return %y : tensor<9x{dst}>
    }}"""
    x = CAST_INPUTS[src]
    (out,) = run(text, [x])
    want = c_cast(x, dst)
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)


INT_DIV_MOD = """
func.func @main(%a: tensor<8xi32>, %b: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>) {
  %q = pg_tensor.binary div %a, %b : tensor<8xi32>
  %r = pg_tensor.binary mod %a, %b : tensor<8xi32>
  func.return %q, %r : tensor<8xi32>, tensor<8xi32>
}
"""


def test_int_div_mod_truncate(run: Run) -> None:
    a = np.array([7, -7, 7, -7, 6, -6, 1, 0], np.int32)
    b = np.array([-2, -2, 2, 2, -3, -4, -5, -3], np.int32)
    q, r = run(INT_DIV_MOD, [a, b])
    want_q = np.array([int(x / y) for x, y in zip(a.tolist(), b.tolist(), strict=True)], np.int32)
    np.testing.assert_array_equal(q, want_q)
    np.testing.assert_array_equal(r, np.fmod(a, b))


def _cmp_module(dtype: str) -> str:
    lines = [f"  %{k} = pg_tensor.cmp {k} %a, %b : tensor<6x{dtype}> -> tensor<6xi1>"
             for k in ("lt", "le", "gt", "ge", "eq", "ne")]
    types = ", ".join(["tensor<6xi1>"] * 6)
    return (f"func.func @main(%a: tensor<6x{dtype}>, %b: tensor<6x{dtype}>) -> ({types}) {{\n"
            + "\n".join(lines)
            + f"\n  func.return %lt, %le, %gt, %ge, %eq, %ne : {types}\n}}")


@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_comparisons(run: Run, dtype: str) -> None:
    a = np.array([1, 2, 3, -4, 0, 5], DTYPES[dtype])
    b = np.array([2, 2, 1, -4, -0, -5], DTYPES[dtype])
    outs = run(_cmp_module(dtype), [a, b])
    wants = [a < b, a <= b, a > b, a >= b, a == b, a != b]
    for out, want in zip(outs, wants, strict=True):
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(out, want)


WHERE = """
func.func @main(%c: tensor<4x3xi1>, %x: tensor<4x3xf32>, %y: tensor<3xi32>)
    -> (tensor<4x3xf32>, tensor<4x3xi1>) {
  %y1 = pg_tensor.reshape %y : tensor<3xi32> -> tensor<1x3xi32>
  %ye = pg_tensor.expand %y1 : tensor<1x3xi32> -> tensor<4x3xi32>
  %yf = pg_tensor.cast %ye : tensor<4x3xi32> to tensor<4x3xf32>
  %w = pg_tensor.where %c, %x, %yf : tensor<4x3xi1>, tensor<4x3xf32>
  %n = pg_tensor.unary not %c : tensor<4x3xi1>
  %f = pg_tensor.const 0 : tensor<4x3xi1>
  %b = pg_tensor.where %n, %c, %f : tensor<4x3xi1>, tensor<4x3xi1>
  %o = pg_tensor.binary or %b, %n : tensor<4x3xi1>
  func.return %w, %o : tensor<4x3xf32>, tensor<4x3xi1>
}
"""


def test_where_and_bool_buffers(run: Run) -> None:
    c = RNG.random((4, 3)) < 0.5
    x, y = randn(4, 3), np.array([-3, 0, 9], np.int32)
    w, o = run(WHERE, [c, x, y])
    check(w, np.where(c, x, y.astype(np.float32)))
    np.testing.assert_array_equal(o, np.ravel(~c))
    assert o.dtype == np.bool_


def test_bool_inputs_are_bytes(run: Run) -> None:
    """A bool input byte that is not 0 or 1 still reads as true (loads compare with 0)."""
    c = np.array([0, 1, 2, 255, 0, 7, 1, 0, 3, 0, 0, 128], np.uint8).view(np.bool_).reshape(4, 3)
    x, y = randn(4, 3), np.zeros(3, np.int32)
    w, _ = run(WHERE, [c, x, y])
    check(w, np.where(c.view(np.uint8) != 0, x, np.float32(0)))


MATH = """
func.func @main(%x: tensor<7xf32>) -> (tensor<7xf32>, tensor<7xf32>, tensor<7xf32>, tensor<7xf32>) {
  %e = pg_tensor.unary exp %x : tensor<7xf32>
  %l = pg_tensor.unary log %x : tensor<7xf32>
  %s = pg_tensor.unary sqrt %x : tensor<7xf32>
  %n = pg_tensor.unary sin %x : tensor<7xf32>
  func.return %e, %l, %s, %n : tensor<7xf32>, tensor<7xf32>, tensor<7xf32>, tensor<7xf32>
}
"""


def test_math_functions(run: Run) -> None:
    x = np.array([0.001, 0.5, 1.0, 2.0, 3.14159, 10.0, 40.0], np.float32)
    outs = run(MATH, [x])
    for out, want in zip(outs, [np.exp(x), np.log(x), np.sqrt(x), np.sin(x)], strict=True):
        check(out, want, rtol=2e-6, atol=1e-6)
