"""CPU runtime through LLVM: llvmlite parses the kernels' LLVM IR, optimises it at -O3 for the
host CPU (new pass manager) and JIT-compiles it with MCJIT.

Each `compile` optimises the module, emits its object code with the host target machine
and loads that object into one MCJIT engine; the returned `LlvmBinary` keeps the engine (and
so the machine code) alive. A source of several modules (a big graph, see
`picograd/lowering/llvm/printer.py`) has them optimised and compiled at once, all but the
first in forked processes that send their object code back through a pipe (llvmlite runs
one LLVM call at a time per process, so threads would not overlap); the engine loads every
object. The object code of each module is kept in the disk cache
(`picograd/disk_store.py`) under its IR text, the optimisation level, the
llvmlite/LLVM versions and the host CPU: a warm compile only loads it. A loaded kernel is a
ctypes `CFUNCTYPE(None, c_void_p, ..., c_int64, c_int64)` over the function's address,
called through `picograd/runtimes/parallel.py` (one call, or chunks of the outer range on a
thread pool for a large splittable kernel, read from its exported `{name}_pg_outer`).
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from functools import cache

import llvmlite
import llvmlite.binding as llvm

from picograd import disk_store
from picograd.dialects.abi import outer_symbol
from picograd.errors import CompileError, DeviceError
from picograd.lowering.llvm.printer import PART_SEPARATOR
from picograd.runtimes import forked, parallel
from picograd.runtimes.base import HostRuntime, Kernel, Launch, write_failed_source

OPT_LEVEL = 3
# llvmlite leaves the SLP vectoriser off by default; loop-optimize's register tiles (straight-line
# code, one accumulator per lane) only become vector FMAs with it.
SLP_VECTORIZE = True


@cache
def _init_llvm() -> llvm.Target:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm.Target.from_default_triple()


# x86 tuning flags added to the host's features: no vector gathers or scatters of LLVM's
# own choosing. Its loop vectoriser took a loop the schedule left scalar across rows of
# strided loads (a 2 x 2 max-pool's windows) and emitted `vgatherqps` / `vscatterqps`, which
# on the Zen 4 measured ran at a fraction of scalar loads: the CNN's pool kernels took
# 620-917 us with them, a third of that without, and the Fashion-MNIST CNN's Adam step
# 23-24 ms against 12-13. picograd's own vector lanes load contiguous vectors.
X86_TUNING = ",+prefer-no-gather,+prefer-no-scatter"


@cache
def host_cpu() -> tuple[str, str]:
    """The host's CPU name and feature string (`+avx2,+fma,...`, with `X86_TUNING` on x86)."""
    _init_llvm()
    features = llvm.get_host_cpu_features().flatten()
    if "+sse2" in features.split(","):
        features += X86_TUNING
    return llvm.get_host_cpu_name(), features


def _target_machine() -> llvm.TargetMachine:
    # An MCJIT engine takes ownership of its target machine, so every module gets a new one.
    cpu, features = host_cpu()
    return _init_llvm().create_target_machine(cpu=cpu, features=features, opt=OPT_LEVEL,
                                              jit=True)


@dataclass
class LlvmBinary:
    """JIT-compiled kernels; alive as long as this object is."""

    engine: llvm.ExecutionEngine
    source: str  # the LLVM IR it was compiled from
    module: llvm.ModuleRef | None = None  # the optimised module (None: loaded from the cache)

    @property
    def optimized_ir(self) -> str:
        return str(self._optimized())

    def assembly(self) -> str:
        """Host assembly of the optimised module (for tests and debugging)."""
        return _target_machine().emit_assembly(self._optimized())

    def _optimized(self) -> llvm.ModuleRef:
        if self.module is None:  # the machine code came from the disk cache: optimise again
            self.module = _optimize(self.source)
        return self.module


def _optimize(source: str) -> llvm.ModuleRef:
    """The parsed, verified and -O3 optimised module of `source` (its modules linked)."""
    parts = source.split(PART_SEPARATOR)
    module = _optimize_part(parts[0])
    for part in parts[1:]:
        module.link_in(_optimize_part(part))
    return module


def _optimize_part(source: str) -> llvm.ModuleRef:
    """The parsed, verified and -O3 optimised module of one module's IR text."""
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
    pto.slp_vectorization = SLP_VECTORIZE
    pass_builder = llvm.create_pass_builder(tm, pto)
    pass_builder.getModulePassManager().run(module, pass_builder)
    return module


def _compile_parts(parts: list[str]) -> tuple[list[bytes], llvm.ModuleRef]:
    """The object code of each module of `parts`, and the first's optimised module: the
    others are compiled in forked processes at the same time (sequentially where `fork`
    does not exist)."""
    children = []
    if hasattr(os, "fork") and _fork_is_safe():
        for part in parts[1:]:
            children.append(_fork_compile(part))
    try:
        first = _optimize_part(parts[0])
        codes = [_target_machine().emit_object(first)]
    except BaseException:
        for pid, fd in children:  # no child is left behind
            os.close(fd)
            os.waitpid(pid, 0)
        raise
    if not children:
        codes += [_target_machine().emit_object(_optimize_part(part)) for part in parts[1:]]
        return codes, first
    for (pid, fd), part in zip(children, parts[1:], strict=True):
        codes.append(_collect(pid, fd, part))
    return codes, first


def _fork_is_safe() -> bool:
    """Whether a forked child can call LLVM: only the calling thread and the kernel pool's
    run (another thread of the program might hold llvmlite's lock, which the child would
    then wait for forever). Where other threads run (a notebook kernel's, a test runner's),
    the modules compile one after the other."""
    return parallel.fork_is_safe()


def _fork_compile(part: str) -> tuple[int, int]:
    """Start a child that compiles `part` and sends its object code back (`forked.py`):
    (its pid, the pipe's read end)."""
    return forked.start(lambda: _target_machine().emit_object(_optimize_part(part)))


def _collect(pid: int, fd: int, part: str) -> bytes:
    """The object code a `_fork_compile` child sends; CompileError with its error."""
    outcome = forked.collect(pid, fd)
    if not outcome.ok:
        log = outcome.data.decode(errors="replace") or (
            "the compiling process ended without its result")
        raise CompileError("LLVM failed to compile the kernels' IR", log=log,
                           source_path=write_failed_source(part, ".ll"))
    return outcome.data


class CpuLlvmRuntime(HostRuntime[LlvmBinary]):
    renderer = "llvm"

    def toolchain_fingerprint(self) -> str:
        cpu, features = host_cpu()  # LLVM's host CPU code runs only there
        return (f"llvmlite {llvmlite.__version__} llvm {llvm.llvm_version_info} "
                f"{platform.machine()} {cpu} {features}")

    def compile(self, source: str) -> LlvmBinary:
        parts = source.split(PART_SEPARATOR)
        keys = [disk_store.key_text(
            "llvm-object", part, OPT_LEVEL, SLP_VECTORIZE, self.toolchain_fingerprint(),
            disk_store.picograd_version()) if disk_store.enabled() else None for part in parts]
        codes = [disk_store.read(disk_store.KERNELS, key) if key else None for key in keys]
        missing = [n for n, code in enumerate(codes) if code is None]
        module = None
        if missing:
            built, first = _compile_parts([parts[n] for n in missing])
            module = first if len(parts) == 1 else None  # several: re-optimised on demand
            for n, code in zip(missing, built, strict=True):
                codes[n] = code
                if (key := keys[n]) is not None:
                    disk_store.write(disk_store.KERNELS, key, code)
        _init_llvm()
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _target_machine())
        for code in codes:
            assert code is not None
            engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        return LlvmBinary(engine, source, module)

    def load(self, binary: LlvmBinary, name: str, num_args: int, launch: Launch | None = None
             ) -> Kernel:
        address = binary.engine.get_function_address(name)
        if not address:
            raise DeviceError(f"no kernel @{name} in the compiled LLVM module")
        outer = parallel.read_outer(binary.engine.get_global_value_address(outer_symbol(name)))
        return parallel.c_kernel(address, num_args, outer)
