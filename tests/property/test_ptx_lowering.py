"""`convert-uop-to-ptx` on random pg_tensor programs taken through the GPU pipeline: the
pg_ptx module verifies, and simulated (`tests/ptx_sim.py`: work items in lockstep
between barriers, unspecified PTX behaviour an error) it gives the results of the GPU-form
pg_uop module it was lowered from, run by the interpreter.

Results are compared bit for bit (NaN equals NaN), with two exceptions:

* `sin` is range-reduced in f32 before the simulator's exact sine (the hardware's
  `sin.approx` is not exact either): programs using it compare float results with a
  tolerance and skip the others (a last-bit difference may flip a comparison); programs
  taking the sine of a value beyond 1e6, where the f32 reduction loses its accuracy, are
  skipped;
* a float-to-int cast of NaN, inf or an out-of-range value is undefined (numpy and PTX's
  saturating `cvt.rzi` disagree): programs that make one are skipped, as are programs the
  interpreter refuses (an integer division by zero, which the PTX defines as 0) and
  programs with f64 math other than sqrt, which the pipeline rejects for PTX.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from ptx_sim import simulate
from strategies import Program, assert_same, tensor_programs
from test_lowering import makes_undefined_cast
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import InterpretationError, PassFailedException

from picograd.compiler.pipelines import GPU_PTX, run_pipeline
from picograd.dialects import make_context
from picograd.dialects import pg_uop as pu
from picograd.dialects.pg import UnaryKind
from picograd.interpreter import run
from picograd.lowering.ptx.convert_uop_to_ptx import ConvertUopToPtxPass

LAST = ",convert-uop-to-ptx"
MAP = "uop-gpu-map{target=ptx}"
assert GPU_PTX.endswith(LAST) and MAP in GPU_PTX
TO_GPU_UOP = GPU_PTX[: -len(LAST)]


def interpret(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [r.ravel() for r in run(module, inputs)]


def uses_sin(module: ModuleOp) -> bool:
    return any(isinstance(op, pu.UnaryOp) and op.kind.data == UnaryKind.SIN
               for op in module.walk())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=tensor_programs(max_ops=5), local=st.sampled_from((0, 2, 3, 4, 32)),
       threshold=st.sampled_from((2, 3, 256)))
def test_ptx_matches_the_gpu_form(program: Program, local: int, threshold: int) -> None:
    """Small work groups and reduction thresholds make the small shapes of the strategy
    hit guards, several groups, ragged loops and group reductions."""
    if makes_undefined_cast(program):
        event("skipped: undefined float -> int cast")
        assume(False)
    module = program.parse()
    try:
        run_pipeline(module, TO_GPU_UOP.replace(
            MAP, f"uop-gpu-map{{target=ptx local-size={local} reduce-threshold={threshold}}}"))
    except PassFailedException as e:
        assert "is not supported by PTX" in str(e), e
        event("skipped: f64 math PTX does not have")
        assume(False)
    try:
        want = interpret(module, program.inputs)
    except InterpretationError:
        event("skipped: the interpreter refuses (division by zero)")
        assume(False)
    approximate = uses_sin(module)
    if any(isinstance(op, pu.SharedOp) for op in module.walk()):
        event("a group reduction (shared memory, barriers)")
    ctx = make_context()
    ConvertUopToPtxPass().apply(ctx, module)
    module.verify()
    text = str(module)
    assert str(Parser(ctx, text).parse_module()) == text
    got = simulate(module, program.inputs)
    if not approximate:
        assert_same(want, got)
        return
    event("sin: float results within a tolerance")
    for w, g in zip(want, got, strict=True):
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-3, equal_nan=True)
