"""The attention kernel (`pg_tensor.attention`, lowered by `convert-sched-to-loop` to tiles of
rows in a scratch buffer) on random shapes and masks: the loop stage's interpreter, the
program compiled for the host (LLVM) and the PTX the GPU pipeline makes (run by the
simulator) agree with stage 1's interpreter, for any number of rows in flight
(`attention-rows`: one tile per work item up to every row at once). Masks put -inf on random
scores and on whole rows (weights 0, output 0, as torch).

The sums run in another order than the interpreter's numpy ones (lanes, a tile's rows, the
weights normalised before the product with v), so values compare with a tolerance; the NaN
positions (none here: no inf or NaN inputs) must agree exactly.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ptx_sim import simulate
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from picograd.compiler.driver import compile_module
from picograd.compiler.pipelines import CPU_LLVM, GPU_PTX, run_pipeline
from picograd.dialects import make_context
from picograd.interpreter import run


def _type(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _module(lead: tuple[int, ...], big_l: int, big_s: int, e: int, ev: int,
            scale: float) -> str:
    q, k, v = (*lead, big_l, e), (*lead, big_s, e), (*lead, big_s, ev)
    b, r = (*lead, big_l, big_s), (*lead, big_l, ev)
    types = ", ".join(map(_type, (q, k, v, b)))
    return (f"builtin.module {{\n  func.func @main(%q: {_type(q)}, %k: {_type(k)}, "
            f"%v: {_type(v)}, %b: {_type(b)}) -> {_type(r)} {{\n"
            f"    %r = pg_tensor.attention %q, %k, %v, %b scale {scale!r} : {types} -> "
            f"{_type(r)}\n    func.return %r : {_type(r)}\n  }}\n}}\n")


def _parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def _close(want: np.ndarray, got: np.ndarray, where: str) -> None:
    got = np.asarray(got).reshape(want.shape)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=where)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=where)


@st.composite
def attentions(draw: st.DrawFn) -> tuple[str, list[np.ndarray], int]:
    lead = draw(st.sampled_from([(), (2,), (1, 3)]))
    big_l, big_s = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    e, ev = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in
               ((*lead, big_l, e), (*lead, big_s, e), (*lead, big_s, ev)))
    bias = rng.standard_normal((*lead, big_l, big_s)).astype(np.float32)
    bias[rng.random(bias.shape) < draw(st.sampled_from([0.0, 0.3]))] = -np.inf
    if draw(st.booleans()):
        bias[..., rng.integers(big_l), :] = -np.inf  # a query with no key
    scale = draw(st.sampled_from([0.5, 1 / np.sqrt(e), 1.0]))
    rows = draw(st.sampled_from([1, 4, 8, 4096]))
    return _module(lead, big_l, big_s, e, ev, float(np.float32(scale))), [q, k, v, bias], rows


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=attentions())
def test_attention_kernel_matches_the_interpreter(case: tuple[str, list[np.ndarray], int]
                                                  ) -> None:
    text, inputs, rows = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        (want,) = run(_parse(text), inputs)
        schedule = (f"tensor-simplify,matmul-layout,convert-tensor-to-sched{{attention-rows="
                    f"{rows}}},sched-dedup,convert-sched-to-loop,loop-simplify")
        loops = run_pipeline(_parse(text), schedule)
        (at_loops,) = run(loops, inputs)
    _close(want, at_loops, "the loop stage")
    rest = CPU_LLVM.replace("convert-tensor-to-sched", f"convert-tensor-to-sched{{"
                                                      f"attention-rows={rows}}}")
    (compiled,) = compile_module(run_pipeline(_parse(text), rest), "llvm").run(inputs)
    _close(want, compiled, "compiled for the host")
    ptx = GPU_PTX.replace("attention-rows=4096", f"attention-rows={rows}")
    (simulated,) = simulate(run_pipeline(_parse(text), ptx), inputs)
    _close(want, simulated, "the PTX pipeline (simulated)")
