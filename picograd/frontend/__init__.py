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

# torch-style module-level creation functions: `pg.zeros(2, 3)` is `pg.Tensor.zeros(2, 3)`,
# `pg.zeros_like(t)` is `t.zeros_like()`.
tensor = Tensor
zeros, ones, full, empty = Tensor.zeros, Tensor.ones, Tensor.full, Tensor.empty
arange, linspace, eye = Tensor.arange, Tensor.linspace, Tensor.eye
rand, randn, randint = Tensor.rand, Tensor.randn, Tensor.randint
zeros_like, ones_like, full_like = Tensor.zeros_like, Tensor.ones_like, Tensor.full_like
empty_like, rand_like, randn_like = Tensor.empty_like, Tensor.rand_like, Tensor.randn_like
randint_like = Tensor.randint_like


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
    "arange",
    "bool_",
    "clear_cache",
    "compile_stats",
    "empty",
    "empty_like",
    "eye",
    "float32",
    "full",
    "full_like",
    "int32",
    "linspace",
    "manual_seed",
    "maximum",
    "minimum",
    "ones",
    "ones_like",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "tensor",
    "to_dtype",
    "where",
    "zeros",
    "zeros_like",
]
