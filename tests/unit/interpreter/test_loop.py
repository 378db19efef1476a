"""The pg_loop interpreter on hand-written kernels (stage 3)."""

from __future__ import annotations

import numpy as np
import pytest
from interp_helpers import one_kernel, run_text
from xdsl.utils.exceptions import InterpretationError


def test_docstring_example_row_sums() -> None:  # picograd/dialects/pg_loop.py
    text = one_kernel("""
    pg_loop.kernel @k(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
      pg_loop.range %i = 0 to 4 global {
        %s = pg_loop.reduce sum %j = 0 to 8 : f32 {
          %c8 = pg_loop.const 8
          %o = pg_loop.index mul %i, %c8
          %idx = pg_loop.index add %o, %j
          %v = pg_loop.load %a[%idx] : !pg.buffer<32xf32> -> f32
          pg_loop.yield %v : f32
        }
        pg_loop.store %s, %out[%i] : f32, !pg.buffer<4xf32>
      }
    }""", ["!pg.buffer<32xf32>"], ["!pg.buffer<4xf32>"])
    a = np.arange(32, dtype=np.float32)
    (out,) = run_text(text, a)
    np.testing.assert_array_equal(out, a.reshape(4, 8).sum(axis=1))


def test_index_div_and_mod_are_floor_division_and_floor_modulo() -> None:
    # For i in [0, 6): store (i - 3) div 2 and (i - 3) mod 2 (floor, unlike C's truncation).
    text = one_kernel("""
    pg_loop.kernel @k(%d: !pg.buffer<6xi64>, %m: !pg.buffer<6xi64>) {
      pg_loop.range %i = 0 to 6 global {
        %c3 = pg_loop.const 3
        %c2 = pg_loop.const 2
        %x = pg_loop.index sub %i, %c3
        %q = pg_loop.index div %x, %c2
        %r = pg_loop.index mod %x, %c2
        %qi = pg_uop.cast %q : index to i64
        %ri = pg_uop.cast %r : index to i64
        pg_loop.store %qi, %d[%i] : i64, !pg.buffer<6xi64>
        pg_loop.store %ri, %m[%i] : i64, !pg.buffer<6xi64>
      }
    }""", [], ["!pg.buffer<6xi64>", "!pg.buffer<6xi64>"])
    d, m = run_text(text)
    x = np.arange(6) - 3
    np.testing.assert_array_equal(d, x // 2)
    np.testing.assert_array_equal(m, x % 2)
    assert m.min() >= 0


PAD = one_kernel("""
    pg_loop.kernel @k(%a: !pg.buffer<3xi8>, %out: !pg.buffer<5xi8>) {
      pg_loop.range %i = 0 to 5 global {
        %c1 = pg_loop.const 1
        %c4 = pg_loop.const 4
        %ge = pg_loop.cmp ge %i, %c1
        %lt = pg_loop.cmp lt %i, %c4
        %in = pg_loop.and %ge, %lt
        %j = pg_loop.index sub %i, %c1
        %v = pg_loop.load %a[%j] if %in else -7 : !pg.buffer<3xi8> -> i8
        pg_loop.store %v, %out[%i] : i8, !pg.buffer<5xi8>
      }
    }""", ["!pg.buffer<3xi8>"], ["!pg.buffer<5xi8>"])


def test_masked_load_gives_other_without_reading_out_of_bounds() -> None:
    (out,) = run_text(PAD, np.array([10, 20, 30], dtype=np.int8))
    np.testing.assert_array_equal(out, [-7, 10, 20, 30, -7])


def test_unmasked_out_of_bounds_load_is_an_error() -> None:
    text = PAD.replace(" if %in else -7", "")
    with pytest.raises(InterpretationError, match="index -1 out of bounds"):
        run_text(text, np.zeros(3, dtype=np.int8))


@pytest.mark.parametrize(("kind", "dtype", "expected"), [
    ("sum", "i8", np.int8(-106)),  # 100 + 50: wraps like C
    ("prod", "i8", np.int8(-120)),  # 100 * 50 = 5000 = 19*256 - 120
    ("max", "f32", np.float32(100)),
    ("min", "i1", np.bool_(True)),  # all
    ("max", "i1", np.bool_(True)),  # any
])
def test_reduce_kinds_and_types(kind: str, dtype: str, expected: np.generic) -> None:
    text = one_kernel(f"""
    pg_loop.kernel @k(%a: !pg.buffer<2x{dtype}>, %out: !pg.buffer<1x{dtype}>) {{
      pg_loop.range %i = 0 to 1 global {{
        %s = pg_loop.reduce {kind} %j = 0 to 2 : {dtype} {{
          %v = pg_loop.load %a[%j] : !pg.buffer<2x{dtype}> -> {dtype}
          pg_loop.yield %v : {dtype}
        }}
        pg_loop.store %s, %out[%i] : {dtype}, !pg.buffer<1x{dtype}>
      }}
    }}""", [f"!pg.buffer<2x{dtype}>"], [f"!pg.buffer<1x{dtype}>"])
    (out,) = run_text(text, np.array([100, 50]))
    assert out.dtype == expected.dtype and out[0] == expected


def test_empty_reduce_gives_the_identity_and_empty_range_runs_nothing() -> None:
    text = one_kernel("""
    pg_loop.kernel @k(%out: !pg.buffer<2xf32>) {
      pg_loop.range %i = 0 to 1 global {
        %s = pg_loop.reduce max %j = 0 to 0 : f32 {
          %z = pg_uop.const 1.0 : f32
          pg_loop.yield %z : f32
        }
        pg_loop.store %s, %out[%i] : f32, !pg.buffer<2xf32>
        pg_loop.range %k = 3 to 3 loop {
          pg_loop.store %s, %out[%k] : f32, !pg.buffer<2xf32>
        }
      }
    }""", [], ["!pg.buffer<2xf32>"])
    (out,) = run_text(text)
    np.testing.assert_array_equal(out, [-np.inf, 0])
