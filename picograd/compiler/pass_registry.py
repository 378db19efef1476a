"""Every picograd pass by name, loaded lazily.

    PICOGRAD_PASSES["loop-simplify"]()   -> LoopSimplifyPass (imports passes/loop/simplify.py)
    all_passes()                         -> xDSL's passes plus ours, name -> getter

A getter imports its pass module only when called, so building the registry (and starting
`opt-tool`) costs nothing per pass. The names are the contract of docs/design.md; they are
unique across picograd and xDSL (tests/unit/passes/test_pipelines.py checks it).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

PassGetter = Callable[[], type[ModulePass]]

# name -> (module, class); the single table the getters are built from.
_PASS_TABLE: dict[str, tuple[str, str]] = {
    "tensor-simplify": ("picograd.passes.tensor.tensor_simplify", "TensorSimplifyPass"),
    "matmul-layout": ("picograd.passes.tensor.matmul_layout", "MatmulLayoutPass"),
    "tensor-split-reduce": (
        "picograd.passes.tensor.tensor_split_reduce", "TensorSplitReducePass"),
    "tensor-legalize-bf16": (
        "picograd.passes.tensor.tensor_legalize_bf16", "TensorLegalizeBf16Pass"),
    "convert-tensor-to-sched": (
        "picograd.passes.sched.convert_tensor_to_sched", "ConvertTensorToSchedPass"),
    "sched-dedup": ("picograd.passes.sched.sched_dedup", "SchedDedupPass"),
    "convert-sched-to-loop": (
        "picograd.passes.loop.convert_sched_to_loop", "ConvertSchedToLoopPass"),
    "loop-simplify": ("picograd.passes.loop.loop_simplify", "LoopSimplifyPass"),
    "loop-upcast": ("picograd.passes.loop.loop_upcast", "LoopUpcastPass"),
    "loop-split": ("picograd.passes.loop.loop_split", "LoopSplitPass"),
    "loop-split-reduce": ("picograd.passes.loop.loop_split_reduce", "LoopSplitReducePass"),
    "loop-block-reduce": ("picograd.passes.loop.loop_block_reduce", "LoopBlockReducePass"),
    "loop-chunk-reduce": ("picograd.passes.loop.loop_chunk_reduce", "LoopChunkReducePass"),
    "loop-stash": ("picograd.passes.loop.loop_stash", "LoopStashPass"),
    "loop-collapse": ("picograd.passes.loop.loop_collapse", "LoopCollapsePass"),
    "loop-unflatten": ("picograd.passes.loop.loop_unflatten", "LoopUnflattenPass"),
    "loop-interchange": ("picograd.passes.loop.loop_interchange", "LoopInterchangePass"),
    "loop-schedule": ("picograd.passes.loop.loop_schedule", "LoopSchedulePass"),
    "loop-optimize": ("picograd.passes.loop.loop_optimize", "LoopOptimizePass"),
    "loop-unswitch": ("picograd.passes.loop.loop_unswitch", "LoopUnswitchPass"),
    "convert-loop-to-uop": ("picograd.passes.uop.convert_loop_to_uop", "ConvertLoopToUopPass"),
    "uop-simplify": ("picograd.passes.uop.uop_simplify", "UopSimplifyPass"),
    "uop-contract": ("picograd.passes.uop.uop_contract", "UopContractPass"),
    "convert-uop-to-llvm": ("picograd.lowering.llvm.convert_uop_to_llvm", "ConvertUopToLlvmPass"),
    "convert-uop-to-c": ("picograd.lowering.c.convert_uop_to_c", "ConvertUopToCPass"),
    "uop-gpu-map": ("picograd.passes.uop.uop_gpu_map", "UopGpuMapPass"),
    "uop-legalize": ("picograd.passes.uop.uop_legalize", "UopLegalizePass"),
    "convert-uop-to-ptx": ("picograd.lowering.ptx.convert_uop_to_ptx", "ConvertUopToPtxPass"),
    "convert-uop-to-wgsl": ("picograd.lowering.wgsl.convert_uop_to_wgsl", "ConvertUopToWgslPass"),
}


def _getter(module: str, cls: str) -> PassGetter:
    def get() -> type[ModulePass]:
        return getattr(importlib.import_module(module), cls)

    get.__qualname__ = get.__name__ = f"get_{cls}"
    return get


PICOGRAD_PASSES: dict[str, PassGetter] = {
    name: _getter(module, cls) for name, (module, cls) in _PASS_TABLE.items()
}


def pass_location(name: str) -> tuple[str, str]:
    """The `(module, class)` a picograd pass name is defined by (KeyError if not ours)."""
    return _PASS_TABLE[name]


@functools.cache
def all_passes() -> dict[str, PassGetter]:
    """xDSL's passes (`xdsl.transforms.get_all_passes()`) plus picograd's, by name.

    Computed once per process; callers must not mutate the returned dict.
    """
    # lazy: xDSL's pass table is only needed when a name is looked up (opt-tool starts fast)
    from xdsl.transforms import get_all_passes

    return {**get_all_passes(), **PICOGRAD_PASSES}
