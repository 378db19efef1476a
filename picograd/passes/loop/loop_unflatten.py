"""`loop-unflatten`: one range of a kernel becomes two nested ranges (`loop-collapse`'s
inverse).

Input and output: `pg_loop` kernels. Guarantee: the same stores of the same values (the
same iterations in the same order); then the kernel's index arithmetic is simplified as
`loop-simplify` would, so the division and remainder of the range's index by `size` become
the two new indices. Only an independent range starting at 0 whose iterations `size`
divides unflattens (see `schedule.unflatten`).

    opt-tool -p 'loop-unflatten{kernel=k0 axis=0 size=2}':
    pg_loop.range %h = 0 to 8 global {        pg_loop.range %h_o = 0 to 4 global {
      %row = %h // 2                            pg_loop.range %h_global = 0 to 2 global {
      %tap = %h % 2                               %row = %h_o
      ...                                         %tap = %h_global
    }                                             ...
                                              } }

Options: `kernel` (a symbol; empty: every kernel where it applies), `axis` (the range's
pre-order number) and `size` (the inner range's iterations).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from picograd.passes.loop.kernel_select import schedule_kernels
from picograd.passes.loop.schedule import Action


@dataclass(frozen=True)
class LoopUnflattenPass(ModulePass):
    """Unflatten range `axis` of the selected kernels into ranges of `size` iterations."""

    name = "loop-unflatten"

    kernel: str = ""
    axis: int = 0
    size: int = 2

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        schedule_kernels(op, self.kernel, self.name, [Action("unflatten", self.axis, self.size)])
