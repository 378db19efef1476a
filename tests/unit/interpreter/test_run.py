"""`picograd.interpreter.run`: the API contract of docs/design.md ("Interpreter API")."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import InterpretationError

from picograd.dialects import make_context
from picograd.interpreter import run


def parse(text: str):
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


ADD_ONE = """
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %one = pg_tensor.const 1.0 : tensor<2x3xf32>
  %r = pg_tensor.binary add %a, %one : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
"""

# Stage 2: @main returns its input buffer unchanged and a fresh one the kernel fills.
COPY = """
pg_loop.kernel @k0(%a: !pg.buffer<4xi32>, %out: !pg.buffer<4xi32>) {
  pg_loop.range %i = 0 to 4 global {
    %v = pg_loop.load %a[%i] : !pg.buffer<4xi32> -> i32
    pg_loop.store %v, %out[%i] : i32, !pg.buffer<4xi32>
  }
}
func.func @main(%a: !pg.buffer<4xi32>) -> (!pg.buffer<4xi32>, !pg.buffer<4xi32>) {
  %out = pg_sched.alloc : !pg.buffer<4xi32>
  pg_sched.launch @k0(%a, %out) : !pg.buffer<4xi32>, !pg.buffer<4xi32>
  func.return %a, %out : !pg.buffer<4xi32>, !pg.buffer<4xi32>
}
"""


def test_stage1_results_are_shaped_arrays_of_the_result_type() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    (r,) = run(parse(ADD_ONE), [a])
    assert r.shape == (2, 3) and r.dtype == np.float32
    np.testing.assert_array_equal(r, a + 1)


def test_stage1_inputs_are_cast_and_reshaped() -> None:
    (r,) = run(parse(ADD_ONE), [np.arange(6)])  # int64, flat
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, np.arange(6, dtype=np.float32).reshape(2, 3) + 1)


def test_buffer_inputs_are_flattened_and_results_are_flat_copies() -> None:
    a = np.arange(4, dtype=np.int64).reshape(2, 2)
    same, copied = run(parse(COPY), [a])
    assert same.shape == copied.shape == (4,) and same.dtype == copied.dtype == np.int32
    np.testing.assert_array_equal(copied, [0, 1, 2, 3])
    same[0] = 99  # results own their memory: neither the input nor the other result changes
    assert a[0, 0] == 0 and copied[0] == 0


def test_wrong_number_of_inputs() -> None:
    with pytest.raises(InterpretationError, match="takes 1 inputs, got 2"):
        run(parse(ADD_ONE), [np.zeros(6), np.zeros(6)])


def test_wrong_element_count() -> None:
    with pytest.raises(InterpretationError, match="needs 6 elements"):
        run(parse(ADD_ONE), [np.zeros(5)])


def test_missing_entry() -> None:
    with pytest.raises(InterpretationError, match=r"no func\.func @other"):
        run(parse(ADD_ONE), [np.zeros(6)], entry="other")


def test_importing_the_package_does_not_load_the_interpreters() -> None:
    code = ("import sys, picograd.interpreter; "
            "print(any(m.startswith(('picograd.interpreter.', 'xdsl.interpreter')) "
            "for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
