"""`loop-schedule`: replay a kernel's schedule, a `;`-separated list of loop actions.

Input and output: `pg_loop` kernels. Guarantee: that of each action (`loop-split`,
`loop-interchange`, `loop-split-reduce`), applied in order; the actions are appended to the kernel's
`pg.schedule` attribute. A kernel's schedule as `DEBUG=3` prints it or `PG_DUMP` records it
is exactly the `actions` text:

    opt-tool kernels.loop.mlir -p 'loop-schedule{kernel=k0
        actions="split(1, 64, upcast); split(0, 4, upcast); interchange(1)"}'

Options: `kernel` (a symbol; empty: every kernel where it applies) and `actions`
(`split(axis, factor, kind)`, `interchange(axis)` and `split_reduce(reduce, factor)`,
separated by `;`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.passes.loop.kernel_select import schedule_kernels
from picograd.passes.loop.schedule import ScheduleError, parse_schedule


@dataclass(frozen=True)
class LoopSchedulePass(ModulePass):
    """Apply the `actions` of a schedule to the selected kernels."""

    name = "loop-schedule"

    kernel: str = ""
    actions: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            actions = parse_schedule(self.actions)
        except ScheduleError as e:
            raise PassFailedException(f"loop-schedule: {e}") from None
        schedule_kernels(op, self.kernel, self.name, actions)
