"""The pg_uop interpreter on GPU-form kernels: work groups run their items in lockstep between
barriers, each group with fresh shared buffers."""

from __future__ import annotations

import numpy as np
import pytest
from interp_helpers import one_kernel, run_text
from xdsl.utils.exceptions import InterpretationError

# out[g*4 + l] = a[g*4 + (3 - l)]: each group reverses its slice through shared memory.
REVERSE = """
pg_uop.kernel @k(%a: !pg.buffer<12xf32>, %out: !pg.buffer<12xf32>) {
  %g = pg_uop.special group_id 0 size 3
  %l = pg_uop.special local_id 0 size 4
  %s = pg_uop.shared : !pg.buffer<4xf32>
  %c3 = pg_uop.const 3 : index
  %c4 = pg_uop.const 4 : index
  %base = pg_uop.binary mul %g, %c4 : index
  %mine = pg_uop.binary add %base, %l : index
  %v = pg_uop.load %a[%mine] : !pg.buffer<12xf32> -> f32
  pg_uop.store %v, %s[%l] : f32, !pg.buffer<4xf32>
  BARRIER
  %other = pg_uop.binary sub %c3, %l : index
  %w = pg_uop.load %s[%other] : !pg.buffer<4xf32> -> f32
  pg_uop.store %w, %out[%mine] : f32, !pg.buffer<12xf32>
}"""


def reverse(barrier: str) -> list[np.ndarray]:
    text = one_kernel(REVERSE.replace("BARRIER", barrier), ["!pg.buffer<12xf32>"],
                      ["!pg.buffer<12xf32>"])
    return run_text(text, np.arange(12, dtype=np.float32))


def test_shared_memory_reversal_within_each_group() -> None:
    (out,) = reverse("pg_uop.barrier")
    np.testing.assert_array_equal(out, np.arange(12).reshape(3, 4)[:, ::-1].ravel())


def test_without_the_barrier_reads_see_garbage() -> None:
    # Item 0 runs to the end before item 3 writes: it reads the NaN a fresh buffer holds.
    # The kernel still has a shared buffer, so it runs group by group in lockstep.
    (out,) = reverse("")
    assert np.isnan(out[0]) and out[3] == 0.0


def test_shared_buffers_are_fresh_per_group() -> None:
    # Only group 0 writes; group 1 must not see its values (integers start at the minimum).
    text = one_kernel("""
    pg_uop.kernel @k(%out: !pg.buffer<4xi32>) {
      %g = pg_uop.special group_id 0 size 2
      %l = pg_uop.special local_id 0 size 2
      %s = pg_uop.shared : !pg.buffer<2xi32>
      %c0 = pg_uop.const 0 : index
      %c2 = pg_uop.const 2 : index
      %first = pg_uop.cmp eq %g, %c0 : index
      pg_uop.if %first
      %seven = pg_uop.const 7 : i32
      pg_uop.store %seven, %s[%l] : i32, !pg.buffer<2xi32>
      pg_uop.endif
      pg_uop.barrier
      %v = pg_uop.load %s[%l] : !pg.buffer<2xi32> -> i32
      %base = pg_uop.binary mul %g, %c2 : index
      %idx = pg_uop.binary add %base, %l : index
      pg_uop.store %v, %out[%idx] : i32, !pg.buffer<4xi32>
    }""", [], ["!pg.buffer<4xi32>"])
    (out,) = run_text(text)
    lowest = np.iinfo(np.int32).min
    np.testing.assert_array_equal(out, [7, 7, lowest, lowest])


def test_barriers_in_uniform_ifs_and_loops() -> None:
    # A rotation by one, twice (a loop of 2 with barriers inside), in groups that pass a
    # guard on the group id; the last group is skipped as a whole.
    text = one_kernel("""
    pg_uop.kernel @k(%a: !pg.buffer<9xi32>, %out: !pg.buffer<9xi32>) {
      %g = pg_uop.special group_id 0 size 3
      %l = pg_uop.special local_id 0 size 3
      %s = pg_uop.shared : !pg.buffer<3xi32>
      %c1 = pg_uop.const 1 : index
      %c2 = pg_uop.const 2 : index
      %c3 = pg_uop.const 3 : index
      %ok = pg_uop.cmp lt %g, %c2 : index
      pg_uop.if %ok
      %base = pg_uop.binary mul %g, %c3 : index
      %mine = pg_uop.binary add %base, %l : index
      %v = pg_uop.load %a[%mine] : !pg.buffer<9xi32> -> i32
      %acc = pg_uop.acc 0 : i32
      pg_uop.acc_store %acc, %v : i32
      %t = pg_uop.range 0 to 2 loop
      %x = pg_uop.acc_load %acc : i32
      pg_uop.store %x, %s[%l] : i32, !pg.buffer<3xi32>
      pg_uop.barrier
      %n = pg_uop.binary add %l, %c1 : index
      %next = pg_uop.binary mod %n, %c3 : index
      %y = pg_uop.load %s[%next] : !pg.buffer<3xi32> -> i32
      pg_uop.acc_store %acc, %y : i32
      pg_uop.barrier
      pg_uop.end %t
      %r = pg_uop.acc_load %acc : i32
      pg_uop.store %r, %out[%mine] : i32, !pg.buffer<9xi32>
      pg_uop.endif
    }""", ["!pg.buffer<9xi32>"], ["!pg.buffer<9xi32>"])
    (out,) = run_text(text, np.arange(9, dtype=np.int32))
    np.testing.assert_array_equal(out, [2, 0, 1, 5, 3, 4, 0, 0, 0])


def test_a_barrier_under_a_divergent_if_is_an_error() -> None:
    text = one_kernel("""
    pg_uop.kernel @k(%out: !pg.buffer<2xf32>) {
      %l = pg_uop.special local_id 0 size 2
      %c1 = pg_uop.const 1 : index
      %low = pg_uop.cmp lt %l, %c1 : index
      pg_uop.if %low
      pg_uop.barrier
      pg_uop.endif
    }""", [], ["!pg.buffer<2xf32>"])
    with pytest.raises(InterpretationError, match=r"@k: in work group \[\].*work item 1 "
                       "reached the end of the kernel.*uniform control flow"):
        run_text(text)


def test_barriers_with_global_ids_are_rejected() -> None:
    text = one_kernel("""
    pg_uop.kernel @k(%out: !pg.buffer<2xf32>) {
      %i = pg_uop.special global_id 0 size 2
      pg_uop.barrier
    }""", [], ["!pg.buffer<2xf32>"])
    with pytest.raises(InterpretationError, match="group_id and local_id"):
        run_text(text)


def test_bool_shared_buffers_start_true() -> None:
    text = one_kernel("""
    pg_uop.kernel @k(%out: !pg.buffer<1xi1>) {
      %s = pg_uop.shared : !pg.buffer<2xi1>
      %c1 = pg_uop.const 1 : index
      %c0 = pg_uop.const 0 : index
      %v = pg_uop.load %s[%c1] : !pg.buffer<2xi1> -> i1
      pg_uop.store %v, %out[%c0] : i1, !pg.buffer<1xi1>
    }""", [], ["!pg.buffer<1xi1>"])
    (out,) = run_text(text)
    assert out.tolist() == [True]
