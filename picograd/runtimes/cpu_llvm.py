"""CPU runtime through LLVM: llvmlite parses the kernels' LLVM IR, optimises it at -O3 for the
host CPU (new pass manager) and JIT-compiles it with MCJIT.

Each `compile` makes one MCJIT engine for one module; the returned `LlvmBinary` keeps the
engine (and so the machine code) alive. A loaded kernel is a ctypes
`CFUNCTYPE(None, c_void_p, ...)` over the function's address.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import cache

import llvmlite.binding as llvm

from picograd.errors import CompileError, DeviceError
from picograd.runtimes.base import HostRuntime, Kernel, Launch, write_failed_source

OPT_LEVEL = 3


@cache
def _init_llvm() -> llvm.Target:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm.Target.from_default_triple()


@cache
def host_cpu() -> tuple[str, str]:
    """The host's CPU name and feature string (`+avx2,+fma,...`)."""
    _init_llvm()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def _target_machine() -> llvm.TargetMachine:
    # An MCJIT engine takes ownership of its target machine, so every module gets a new one.
    cpu, features = host_cpu()
    return _init_llvm().create_target_machine(cpu=cpu, features=features, opt=OPT_LEVEL,
                                              jit=True)


@dataclass(frozen=True)
class LlvmBinary:
    """JIT-compiled kernels; alive as long as this object is."""

    engine: llvm.ExecutionEngine
    module: llvm.ModuleRef  # the optimised module (owned by the engine), for inspection

    @property
    def optimized_ir(self) -> str:
        return str(self.module)

    def assembly(self) -> str:
        """Host assembly of the optimised module (for tests and debugging)."""
        return _target_machine().emit_assembly(self.module)


class CpuLlvmRuntime(HostRuntime[LlvmBinary]):
    renderer = "llvm"

    def compile(self, source: str) -> LlvmBinary:
        _init_llvm()
        try:
            module = llvm.parse_assembly(source)
            module.verify()
        except RuntimeError as e:
            raise CompileError("LLVM rejected the kernels' IR", log=str(e),
                               source_path=write_failed_source(source, ".ll")) from e
        tm = _target_machine()
        module.triple = tm.triple
        module.data_layout = str(tm.target_data)
        pto = llvm.create_pipeline_tuning_options(speed_level=OPT_LEVEL)
        pass_builder = llvm.create_pass_builder(tm, pto)
        pass_builder.getModulePassManager().run(module, pass_builder)
        engine = llvm.create_mcjit_compiler(module, tm)
        engine.finalize_object()
        return LlvmBinary(engine, module)

    def load(self, binary: LlvmBinary, name: str, num_args: int, launch: Launch | None = None
             ) -> Kernel:
        address = binary.engine.get_function_address(name)
        if not address:
            raise DeviceError(f"no kernel @{name} in the compiled LLVM module")
        return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * num_args)(address)
