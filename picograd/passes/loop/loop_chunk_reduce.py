"""`loop-chunk-reduce`: one sum of a kernel is added up chunk by chunk, for accuracy.

Input and output: `pg_loop` kernels. Guarantee: the reduce adds the same values, in chunks:
the sum over each `size` consecutive iterations, then those sums in chunk order. A float sum
rounds differently, with a smaller error bound (`size + n / size` roundings of a partial
instead of `n`; docs/design.md, "Float sums: accumulation and error bound"); an integer sum
gives the same value. `size` must divide the reduce's iterations. See
`reduce_actions.chunk_reduce`.

    opt-tool -p 'loop-chunk-reduce{kernel=k0 reduce=0 size=16}':
    %s = pg_loop.reduce sum %r = 0 to 64     %s = pg_loop.reduce sum %r_c = 0 to 4 : f32 {
        : f32 { ...body(%r)... }               %p = pg_loop.reduce sum %r_in = 0 to 16 : f32 {
                                                 %r = %r_c * 16 + %r_in ; ...body(%r)...
                                               }
                                               pg_loop.yield %p : f32
                                             }

Options: `kernel` (a symbol; empty: every kernel where it applies), `reduce` (the reduce's
pre-order number in the kernel) and `size` (the iterations of one chunk).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from picograd.passes.loop.kernel_select import schedule_kernels
from picograd.passes.loop.schedule import Action


@dataclass(frozen=True)
class LoopChunkReducePass(ModulePass):
    """Add reduce `reduce` of the selected kernels up in chunks of `size` iterations."""

    name = "loop-chunk-reduce"

    kernel: str = ""
    reduce: int = 0
    size: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        schedule_kernels(op, self.kernel, self.name,
                         [Action("chunk_reduce", self.reduce, self.size)])
