"""The pg_uop interpreter on hand-written flat kernels (stage 4)."""

from __future__ import annotations

import numpy as np
import pytest
from interp_helpers import one_kernel, run_text
from xdsl.utils.exceptions import InterpretationError


def test_docstring_example_row_sums() -> None:  # picograd/dialects/pg_uop.py
    text = one_kernel("""
    pg_uop.kernel @k(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
      %i = pg_uop.range 0 to 4 global
      %acc = pg_uop.acc 0.0 : f32
      %j = pg_uop.range 0 to 8 reduce
      %c8 = pg_uop.const 8 : index
      %o = pg_uop.binary mul %i, %c8 : index
      %idx = pg_uop.binary add %o, %j : index
      %v = pg_uop.load %a[%idx] : !pg.buffer<32xf32> -> f32
      %old = pg_uop.acc_load %acc : f32
      %new = pg_uop.binary add %old, %v : f32
      pg_uop.acc_store %acc, %new : f32
      pg_uop.end %j
      %r = pg_uop.acc_load %acc : f32
      pg_uop.store %r, %out[%i] : f32, !pg.buffer<4xf32>
      pg_uop.end %i
    }""", ["!pg.buffer<32xf32>"], ["!pg.buffer<4xf32>"])
    a = np.arange(32, dtype=np.float32)
    (out,) = run_text(text, a)  # the accumulator restarts from 0 for every row
    np.testing.assert_array_equal(out, a.reshape(4, 8).sum(axis=1))


def test_values_from_inside_a_loop_stay_visible_after_its_end() -> None:
    # CSE on the flat block may make an op after `end` use a value defined inside the loop.
    text = one_kernel("""
    pg_uop.kernel @k(%out: !pg.buffer<3xi32>) {
      %i = pg_uop.range 0 to 2 loop
      %c = pg_uop.const 7 : i32
      %x = pg_uop.cast %i : index to i32
      pg_uop.store %x, %out[%i] : i32, !pg.buffer<3xi32>
      pg_uop.end %i
      %two = pg_uop.const 2 : index
      %y = pg_uop.binary add %x, %c : i32
      pg_uop.store %y, %out[%two] : i32, !pg.buffer<3xi32>
    }""", [], ["!pg.buffer<3xi32>"])
    (out,) = run_text(text)
    np.testing.assert_array_equal(out, [0, 1, 8])  # %x holds its last value, 1


def test_empty_range_skips_its_body_and_nested_loops() -> None:
    text = one_kernel("""
    pg_uop.kernel @k(%out: !pg.buffer<2xf32>) {
      %one = pg_uop.const 1.0 : f32
      %i = pg_uop.range 0 to 0 loop
      %j = pg_uop.range 0 to 2 loop
      pg_uop.store %one, %out[%j] : f32, !pg.buffer<2xf32>
      pg_uop.end %j
      pg_uop.end %i
      %k = pg_uop.range 1 to 2 loop
      pg_uop.store %one, %out[%k] : f32, !pg.buffer<2xf32>
      pg_uop.end %k
    }""", [], ["!pg.buffer<2xf32>"])
    (out,) = run_text(text)
    np.testing.assert_array_equal(out, [0, 1])


def test_specials_run_every_work_item() -> None:
    # out[g * 4 + l] = g * 10 + l over 3 groups of 4 work items.
    text = one_kernel("""
    pg_uop.kernel @k(%out: !pg.buffer<12xi64>) {
      %g = pg_uop.special group_id 0 size 3
      %l = pg_uop.special local_id 0 size 4
      pg_uop.barrier
      %c4 = pg_uop.const 4 : index
      %c10 = pg_uop.const 10 : index
      %base = pg_uop.binary mul %g, %c4 : index
      %idx = pg_uop.binary add %base, %l : index
      %t = pg_uop.binary mul %g, %c10 : index
      %v = pg_uop.binary add %t, %l : index
      %vi = pg_uop.cast %v : index to i64
      pg_uop.store %vi, %out[%idx] : i64, !pg.buffer<12xi64>
    }""", [], ["!pg.buffer<12xi64>"])
    (out,) = run_text(text)
    g, lid = np.divmod(np.arange(12), 4)
    np.testing.assert_array_equal(out, g * 10 + lid)


def test_one_special_with_two_sizes_is_an_error() -> None:
    text = one_kernel("""
    pg_uop.kernel @k(%out: !pg.buffer<4xf32>) {
      %a = pg_uop.special global_id 0 size 4
      %b = pg_uop.special global_id 0 size 2
    }""", [], ["!pg.buffer<4xf32>"])
    with pytest.raises(InterpretationError, match="two sizes"):
        run_text(text)


def test_masked_load_and_c_integer_semantics() -> None:
    # out[i] = (i < 2 ? a[i] : -1) / 2 and % 2 on i32, C style (truncating).
    text = one_kernel("""
    pg_uop.kernel @k(%a: !pg.buffer<2xi32>, %d: !pg.buffer<3xi32>, %m: !pg.buffer<3xi32>) {
      %i = pg_uop.range 0 to 3 global
      %c2 = pg_uop.const 2 : index
      %in = pg_uop.cmp lt %i, %c2 : index
      %v = pg_uop.load %a[%i] if %in else -1 : !pg.buffer<2xi32> -> i32
      %two = pg_uop.const 2 : i32
      %q = pg_uop.binary div %v, %two : i32
      %r = pg_uop.binary mod %v, %two : i32
      pg_uop.store %q, %d[%i] : i32, !pg.buffer<3xi32>
      pg_uop.store %r, %m[%i] : i32, !pg.buffer<3xi32>
      pg_uop.end %i
    }""", ["!pg.buffer<2xi32>"], ["!pg.buffer<3xi32>", "!pg.buffer<3xi32>"])
    d, m = run_text(text, np.array([-7, 5], dtype=np.int32))
    np.testing.assert_array_equal(d, [-3, 2, 0])
    np.testing.assert_array_equal(m, [-1, 1, -1])


def test_integer_division_by_zero_is_an_error() -> None:
    text = one_kernel("""
    pg_uop.kernel @k(%out: !pg.buffer<1xi32>) {
      %i = pg_uop.range 0 to 1 global
      %one = pg_uop.const 1 : i32
      %zero = pg_uop.const 0 : i32
      %q = pg_uop.binary div %one, %zero : i32
      pg_uop.store %q, %out[%i] : i32, !pg.buffer<1xi32>
      pg_uop.end %i
    }""", [], ["!pg.buffer<1xi32>"])
    with pytest.raises(InterpretationError, match="division by zero"):
        run_text(text)
