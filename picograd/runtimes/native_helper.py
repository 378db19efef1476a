"""A few lines of LLVM IR as a callable: the pool's native helpers (`spin_wait.py`,
`chunk_claim.py`) that must run without the GIL.

    native_function(ir, name, prototype) -> ctypes function   (compiled once per IR text)

llvmlite (already a dependency) compiles the module at -O2 for the default target, the
object code is kept in the disk store (`disk_store.KERNELS`) and loaded into an MCJIT
engine that is kept alive for the life of the process, with the function pointer.
One compile at a time: llvmlite must not compile on two threads at once (a pool thread and
its caller could otherwise both ask for the same helper first).
"""

from __future__ import annotations

import platform
import threading
from collections.abc import Callable
from typing import Any

import llvmlite
import llvmlite.binding as llvm

from picograd import disk_store

OPT_LEVEL = 2

_lock = threading.Lock()
_compiled: dict[str, tuple[llvm.ExecutionEngine, Any]] = {}  # IR text -> (engine, function)


def native_function(ir: str, name: str, prototype: Callable[[int], Any]) -> Any:
    """The function `name` of the LLVM IR module `ir`, called through ctypes `prototype`."""
    with _lock:
        if ir not in _compiled:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            machine = llvm.Target.from_default_triple().create_target_machine(opt=OPT_LEVEL)
            engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
            engine.add_object_file(llvm.ObjectFileRef.from_data(_object_code(ir, machine)))
            engine.finalize_object()
            _compiled[ir] = (engine, prototype(engine.get_function_address(name)))
        return _compiled[ir][1]


def _object_code(ir: str, machine: llvm.TargetMachine) -> bytes:
    """The machine code of `ir` for `machine` (the default target, generic CPU): from the
    disk store when a process made it before (a warm process's first launches compiled the
    helpers again, 20-30 ms), else compiled and stored. MCJIT would run the same code
    generator on the module; no optimisation pass runs either way."""
    key = disk_store.key_text("native-helper", ir, OPT_LEVEL, llvmlite.__version__,
                              llvm.llvm_version_info, llvm.get_default_triple(),
                              platform.machine(), disk_store.picograd_version()
                              ) if disk_store.enabled() else None
    code = disk_store.read(disk_store.KERNELS, key) if key is not None else None
    if code is None:
        module = llvm.parse_assembly(ir)
        module.verify()
        code = machine.emit_object(module)
        if key is not None:
            disk_store.write(disk_store.KERNELS, key, code)
    return code
