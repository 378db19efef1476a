"""The LLVM text route prints what the llvm dialect route prints, byte for byte, on random
programs: `uop_module_to_llvm_ir` of the pg_uop module the default CPU:LLVM pipeline makes
before its last pass, against `convert-uop-to-llvm` and `module_to_llvm_ir` on a copy.

Stage 1 programs (every dtype, elementwise, view and reduce ops) go through the whole
pipeline; stage 3 reduction kernels (matmul-like, row reductions of every kind) through the
loop-stage passes, where loop-optimize tiles them into vectors; stage 4 kernels (scalar ALU
expressions of every dtype, integer division by constants included) straight to the routes.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from strategies import Program, reduce_programs, tensor_programs, uop_programs
from xdsl.dialects.builtin import ModuleOp

from picograd.compiler.pipelines import CPU_LLVM, pipeline_head, run_pipeline, stage_pipeline
from picograd.dialects import make_context
from picograd.lowering.llvm.convert_uop_to_llvm import ConvertUopToLlvmPass
from picograd.lowering.llvm.printer import module_to_llvm_ir
from picograd.lowering.llvm.text_route import uop_module_to_llvm_ir

_HEAD = pipeline_head(CPU_LLVM, "convert-uop-to-llvm")
assert _HEAD is not None
HEAD: str = _HEAD  # the default pipeline but its last pass
LOOP = stage_pipeline("loop")
assert HEAD.startswith(LOOP + ",")
FROM_LOOP = HEAD[len(LOOP) + 1:]  # loop-optimize ... uop-contract


def assert_routes_agree(module: ModuleOp) -> None:
    slow = module.clone()
    ConvertUopToLlvmPass().apply(make_context(), slow)
    want = module_to_llvm_ir(slow)
    got = uop_module_to_llvm_ir(module)
    assert got == want


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tensor_programs(max_ops=8))
def test_tensor_programs(program: Program):
    module = program.parse()
    run_pipeline(module, HEAD)
    assert_routes_agree(module)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reduce_programs(longest=40))
def test_reduction_kernels(program: Program):
    module = program.parse()
    run_pipeline(module, FROM_LOOP)
    assert_routes_agree(module)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(uop_programs())
def test_uop_kernels(program: Program):
    module = program.parse()
    run_pipeline(module, "uop-contract")
    assert_routes_agree(module)
