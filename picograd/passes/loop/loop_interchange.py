"""`loop-interchange`: one range of a kernel moves inside the ranges its body holds.

Input and output: `pg_loop` kernels. Guarantee: the same stores of the same values; only
ranges whose iterations are independent (global, local, upcast) move, their pure ops copied
along (see `schedule.interchange`).

    opt-tool -p 'loop-interchange{kernel=k0 axis=0}':
    pg_loop.range %i = 0 to 4 global {        pg_loop.range %j = 0 to 8 global {
      pg_loop.range %j = 0 to 8 global {        pg_loop.range %i = 0 to 4 global {
        ...body(%i, %j)...                          ...body(%i, %j)...
    } }                                       } }

Options: `kernel` (a symbol; empty: every kernel where it applies) and `axis` (the range's
pre-order number).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from picograd.passes.loop.kernel_select import schedule_kernels
from picograd.passes.loop.schedule import Action


@dataclass(frozen=True)
class LoopInterchangePass(ModulePass):
    """Move range `axis` of the selected kernels inside the ranges it holds."""

    name = "loop-interchange"

    kernel: str = ""
    axis: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        schedule_kernels(op, self.kernel, self.name, [Action("interchange", self.axis)])
