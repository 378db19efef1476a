"""Executable reference semantics of picograd's IR at stages 1-4.

    run(module, inputs, entry="main") -> list[np.ndarray]

runs `@entry` (a `func.func`) with xDSL's interpreter framework. One module per stage:

    alu.py      elementwise C semantics shared by every stage
    tensor.py   pg_tensor (stage 1) on shaped numpy arrays
    sched.py    pg_sched (stage 2): buffers, launches, and the kernel-runner registry
    loop.py     pg_loop kernels (stage 3)
    uop.py      pg_uop kernels (stage 4) and the scalar ALU ops of stages 3-4

Stage-5 kernels (`llvm.func`, `pg_c.func`) are run by `picograd.runtimes`, not here.
The stage modules are imported on the first `run`, so importing this package is cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute
from xdsl.utils.exceptions import InterpretationError

from picograd.dialects.dtypes import to_numpy_dtype
from picograd.dialects.pg import BufferType

__all__ = ["run"]


def run(module: ModuleOp, inputs: Sequence[np.ndarray], entry: str = "main") -> list[np.ndarray]:
    """Interpret `@entry` of `module` (stages 1-4) on `inputs`; return its results.

    Tensor arguments (stage 1) take arrays of the tensor's shape (or any shape with as many
    elements) and give arrays of the result types' shapes. Buffer arguments (stage 2 on) take
    any array with the buffer's element count, flattened; buffer results are flat 1-D
    arrays. Inputs are cast to the argument's element type and copied, so the caller's
    arrays are never written. Results are fresh arrays. Errors in the program (division by
    zero, out-of-bounds access, unknown ops) raise `InterpretationError`.
    """
    # lazy: passes import this package's modules (alu) without loading every interpreter
    from xdsl.dialects import func
    from xdsl.interpreter import Interpreter
    from xdsl.interpreters.func import FuncFunctions
    from xdsl.traits import SymbolTable

    # lazy: as above, the interpreters load on the first run
    from picograd.interpreter.loop import LoopFunctions
    from picograd.interpreter.sched import SchedFunctions
    from picograd.interpreter.tensor import TensorFunctions
    from picograd.interpreter.uop import ScalarFunctions, UopFunctions, VectorFunctions

    main = SymbolTable.lookup_symbol(module, entry)
    if not isinstance(main, func.FuncOp):
        raise InterpretationError(f"the module has no func.func @{entry}")
    arg_types = main.function_type.inputs.data
    if len(inputs) != len(arg_types):
        raise InterpretationError(f"@{entry} takes {len(arg_types)} inputs, got {len(inputs)}")
    args = tuple(_argument(entry, n, x, t) for n, (x, t) in enumerate(zip(inputs, arg_types,
                                                                          strict=True)))

    interp = Interpreter(module)
    for functions in (FuncFunctions(), TensorFunctions(), SchedFunctions(), LoopFunctions(),
                      ScalarFunctions(), UopFunctions(), VectorFunctions()):
        interp.register_implementations(functions)
    with np.errstate(all="ignore"):  # overflow, inf and NaN are the semantics (alu.py)
        results = interp.call_op(main, args)
    # Copies: a result may be an input buffer, or a view of one at stage 1.
    return [np.array(r, copy=True) for r in results]


def _argument(entry: str, n: int, x: Any, t: Attribute) -> np.ndarray:
    """Input `n` as the run-time value of an argument of type `t` (a private copy)."""
    if isinstance(t, TensorType):
        shape, dtype = tuple(t.get_shape()), to_numpy_dtype(t.element_type)
    elif isinstance(t, BufferType):
        shape, dtype = (t.size.data,), to_numpy_dtype(t.element_type)
    else:
        raise InterpretationError(f"@{entry} argument {n}: unsupported type {t}")
    array = np.asarray(x)
    if array.size != int(np.prod(shape, dtype=np.int64)):
        raise InterpretationError(f"@{entry} argument {n}: {t} needs {int(np.prod(shape))} "
                                  f"elements, got an array of shape {array.shape}")
    return array.astype(dtype, copy=True).reshape(shape)
