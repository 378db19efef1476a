"""A few lines of LLVM IR as a callable: the pool's native helpers (`spin_wait.py`,
`chunk_claim.py`) that must run without the GIL.

    native_function(ir, name, prototype) -> ctypes function   (compiled once per IR text)

llvmlite (already a dependency) compiles the module with MCJIT at -O2 for the default
target; the engine is kept alive for the life of the process, with the function pointer.
One compile at a time: llvmlite must not compile on two threads at once (a pool thread and
its caller could otherwise both ask for the same helper first).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import llvmlite.binding as llvm

_lock = threading.Lock()
_compiled: dict[str, tuple[llvm.ExecutionEngine, Any]] = {}  # IR text -> (engine, function)


def native_function(ir: str, name: str, prototype: Callable[[int], Any]) -> Any:
    """The function `name` of the LLVM IR module `ir`, called through ctypes `prototype`."""
    with _lock:
        if ir not in _compiled:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            module = llvm.parse_assembly(ir)
            module.verify()
            machine = llvm.Target.from_default_triple().create_target_machine(opt=2)
            engine = llvm.create_mcjit_compiler(module, machine)
            engine.finalize_object()
            _compiled[ir] = (engine, prototype(engine.get_function_address(name)))
        return _compiled[ir][1]
