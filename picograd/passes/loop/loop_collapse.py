"""`loop-collapse`: one range of a kernel and the one range it holds become a single range.

Input and output: `pg_loop` kernels. Guarantee: the same stores of the same values (the
same iterations in the same order); then the kernel's index arithmetic is simplified as
`loop-simplify` would. Only two independent ranges of one kind starting at 0, the outer
holding nothing but the inner, collapse (see `schedule.collapse`).

    opt-tool -p 'loop-collapse{kernel=k0 axis=0}':
    pg_loop.range %h = 0 to 7 global {       pg_loop.range %h_w = 0 to 49 global {
      pg_loop.range %w = 0 to 7 global {       %at = %base + %h_w     (h * 7 + w, with
        %at = %base + %h * 7 + %w                ...                   h = h_w // 7 and
        ...                                  }                         w = h_w % 7, added
    } }                                                                back together)

Options: `kernel` (a symbol; empty: every kernel where it applies) and `axis` (the outer
range's pre-order number).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from picograd.passes.loop.kernel_select import schedule_kernels
from picograd.passes.loop.schedule import Action


@dataclass(frozen=True)
class LoopCollapsePass(ModulePass):
    """Collapse range `axis` of the selected kernels with the one range it holds."""

    name = "loop-collapse"

    kernel: str = ""
    axis: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        schedule_kernels(op, self.kernel, self.name, [Action("collapse", self.axis)])
