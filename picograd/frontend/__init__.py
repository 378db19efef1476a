"""picograd's frontend: the lazy `Tensor`, its dtypes, and realization.

Modules: dtype.py (DType, promotion), lazy.py (LazyOp graph nodes, error helpers), base.py
(TensorBase), ops_movement.py / ops_elementwise.py / ops_reduce.py (the op mixins),
tensor.py (Tensor: creation, conversion), realize.py (cache key, IR, compile, PG_DUMP).
"""

from __future__ import annotations

from picograd.frontend.dtype import DTYPES, DType, bool_, float32, int32, to_dtype
from picograd.frontend.ops_elementwise import Operand
from picograd.frontend.random import manual_seed

# `realize` the function stays in picograd.frontend.realize: importing it here would shadow
# the submodule `picograd.frontend.realize`.
from picograd.frontend.realize import CompileStats, clear_cache, compile_stats
from picograd.frontend.tensor import Tensor


def where(cond: Tensor, x: Operand, y: Operand) -> Tensor:
    """`cond ? x : y` elementwise (broadcasting all three)."""
    return cond.where(x, y)


def maximum(x: Tensor, y: Operand) -> Tensor:
    return x.maximum(y)


def minimum(x: Tensor, y: Operand) -> Tensor:
    return x.minimum(y)


__all__ = [
    "DTYPES",
    "CompileStats",
    "DType",
    "Tensor",
    "bool_",
    "clear_cache",
    "compile_stats",
    "float32",
    "int32",
    "manual_seed",
    "maximum",
    "minimum",
    "to_dtype",
    "where",
]
