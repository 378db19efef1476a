"""`loop-split-reduce`: one reduce of a kernel becomes partial reductions side by side.

Input and output: `pg_loop` kernels. Guarantee: the reduce combines the same values, in
another order: `factor` partial reductions over every `factor`-th iteration (upcast lanes,
which read consecutive elements together), then the partials in lane order. A float sum
rounds differently (as any vectorised sum does); integer sums and max/min give the same
values. `factor` must divide the reduce's iterations. See `schedule.split_reduce`.

    opt-tool -p 'loop-split-reduce{kernel=k0 reduce=0 factor=4}':
    %s = pg_loop.reduce sum %r = 0 to 64     %s = pg_loop.reduce sum %r_lane = 0 to 4 as upcast
        : f32 { ...body(%r)... }                 : f32 {
                                               %p = pg_loop.reduce sum %r_o = 0 to 16 : f32 {
                                                 %r = %r_o * 4 + %r_lane ; ...body(%r)...
                                               }
                                               pg_loop.yield %p : f32
                                             }

Options: `kernel` (a symbol; empty: every kernel where it applies), `reduce` (the reduce's
pre-order number in the kernel) and `factor` (the number of partial reductions).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from picograd.passes.loop.kernel_select import schedule_kernels
from picograd.passes.loop.schedule import Action


@dataclass(frozen=True)
class LoopSplitReducePass(ModulePass):
    """Split reduce `reduce` of the selected kernels into `factor` partial reductions."""

    name = "loop-split-reduce"

    kernel: str = ""
    reduce: int = 0
    factor: int = 8

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        schedule_kernels(op, self.kernel, self.name,
                         [Action("split_reduce", self.reduce, self.factor)])
