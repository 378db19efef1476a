"""`loop-split`: one range of a kernel becomes an outer range of blocks around an inner one.

Input and output: `pg_loop` kernels. Guarantee: the same stores of the same values (each
iteration of the split range still runs once; the remainder, when `factor` does not divide
the range, runs after the blocks in a copy of the original range). See `schedule.split`.

    opt-tool -p 'loop-split{kernel=k0 axis=0 factor=4 kind=upcast}':
    pg_loop.range %i = 0 to 10 global {     pg_loop.range %i_o = 0 to 2 global {
      ...body(%i)...                          pg_loop.range %i_upcast = 0 to 4 upcast {
    }                                           %i = %i_o * 4 + %i_upcast ; ...body(%i)...
                                            } }
                                            pg_loop.range %i_1 = 8 to 10 global { ...body... }

Options: `kernel` (a symbol; empty: every kernel where it applies), `axis` (the range's
pre-order number in the kernel), `factor` (the inner range's size) and `kind` (the inner
range's kind: global, local, upcast, unroll or loop).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects.pg import RangeKind
from picograd.passes.loop.kernel_select import schedule_kernels
from picograd.passes.loop.schedule import Action


@dataclass(frozen=True)
class LoopSplitPass(ModulePass):
    """Split range `axis` of the selected kernels by `factor` into an inner `kind` range."""

    name = "loop-split"

    kernel: str = ""
    axis: int = 0
    factor: int = 4
    kind: str = "upcast"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            kind = RangeKind(self.kind)
        except ValueError:
            raise PassFailedException(
                f"loop-split: unknown range kind {self.kind!r}; kinds are global, local, "
                "upcast, unroll and loop") from None
        schedule_kernels(op, self.kernel, self.name,
                         [Action("split", self.axis, self.factor, kind)])
