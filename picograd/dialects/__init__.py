"""picograd's IR stages as xDSL dialects, what they share, and the context that knows them.

The dialects (`make_context()` registers each, loaded on first use):

    pg.py          shared types and enums (!pg.buffer, #pg.unary, ...)
    pg_tensor.py   the realize graph on tensors                 (stage 1)
    pg_sched.py    buffers, kernels, launch order               (stage 2)
    pg_loop.py     ranges, index arithmetic, masked access      (stage 3)
    pg_uop.py      one flat block of micro-ops per kernel       (stage 4)
    pg_c.py        C statements (CPU:C)                         (stage 5)
    pg_ptx.py      PTX statements (CUDA)                        (stage 5)
    pg_wgsl.py     WGSL statements (WebGPU)                     (stage 5)

(CPU:LLVM's stage 5 is xDSL's own `llvm` dialect.)

What the dialects are built from, and the tables that passes, lowerings and runtimes read:

    dtypes.py        element types and their numpy twins
    syntax.py        parsing and printing helpers of the custom syntax
    flat_ops.py      bases of the flat-kernel dialects: kernels, loops, guards
    flat_cells.py    bases of their constants and mutable cells (locals, registers)
    flat_memory.py   bases of their loads, stores and work-group buffers
    target_ops.py    bases of the value ops pg_c and pg_wgsl spell as operators and calls
    ptx_isa.py       the PTX ISA as pg_ptx uses it: register classes, opcodes, memory types
    capabilities.py  one capability table per target (dtypes, math, limits)
    abi.py           the kernel ABI names that the lowerings emit and the runtimes look up
    dominance.py     the SSA dominance check xDSL's verifier leaves out (use before def)
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.ir import Dialect


def _pg() -> Dialect:
    # lazy: a context loads each dialect on first use (xDSL's register_dialect factories)
    from picograd.dialects.pg import PG

    return PG


def _pg_tensor() -> Dialect:
    # lazy: a context loads each dialect on first use (xDSL's register_dialect factories)
    from picograd.dialects.pg_tensor import PG_TENSOR

    return PG_TENSOR


def _pg_sched() -> Dialect:
    # lazy: a context loads each dialect on first use (xDSL's register_dialect factories)
    from picograd.dialects.pg_sched import PG_SCHED

    return PG_SCHED


def _pg_loop() -> Dialect:
    # lazy: a context loads each dialect on first use (xDSL's register_dialect factories)
    from picograd.dialects.pg_loop import PG_LOOP

    return PG_LOOP


def _pg_uop() -> Dialect:
    # lazy: a context loads each dialect on first use (xDSL's register_dialect factories)
    from picograd.dialects.pg_uop import PG_UOP

    return PG_UOP


def _pg_c() -> Dialect:
    # lazy: a context loads each dialect on first use (xDSL's register_dialect factories)
    from picograd.dialects.pg_c import PG_C

    return PG_C


def _pg_ptx() -> Dialect:
    # lazy: a context loads each dialect on first use (xDSL's register_dialect factories)
    from picograd.dialects.pg_ptx import PG_PTX

    return PG_PTX


def _pg_wgsl() -> Dialect:
    # lazy: a context loads each dialect on first use (xDSL's register_dialect factories)
    from picograd.dialects.pg_wgsl import PG_WGSL

    return PG_WGSL


# Loaded lazily: parsing a pg_tensor file never imports the C dialect.
PICOGRAD_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "pg": _pg,
    "pg_tensor": _pg_tensor,
    "pg_sched": _pg_sched,
    "pg_loop": _pg_loop,
    "pg_uop": _pg_uop,
    "pg_c": _pg_c,
    "pg_ptx": _pg_ptx,
    "pg_wgsl": _pg_wgsl,
}


def register_dialects(ctx: Context) -> None:
    for name, factory in PICOGRAD_DIALECTS.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)


def make_context() -> Context:
    """A context with builtin, func, llvm and every picograd dialect registered."""
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    register_dialects(ctx)
    return ctx
