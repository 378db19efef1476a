"""picograd's frontend: the lazy `Tensor`, its dtypes, autograd and realization.

    dtype.py        DType, torch's promotion (`result_type`)
    lazy.py         LazyOp (a node of the pending graph) and the user-error helpers
    base.py         TensorBase: what every op mixin builds on
    ops_*.py        the op mixins, one per family (movement, elementwise, reduce, math,
                    activation, shape, index, stats, linalg) that `Tensor` combines
    creation.py     zeros/ones/full/arange/linspace/eye/rand... (class methods)
    random.py       the counter-based generator computed on the device, `manual_seed`
    autograd.py     grad mode, the backward rules of the primitives, `backward()`
    tensor.py       Tensor: construction, conversion (`numpy`, `item`, `to`), `assign`
    realize.py      the structural key and the pg_tensor module; asks the compile driver
                    (`picograd.compiler.driver`) for the Program and runs it
    capture.py      what a recorder of realizes (`picograd.jit`) is told

The frontend sits above the compiler; `picograd.nn`, `optim`, `data` and `jit` sit above it.
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
