"""`loop-stash`: a value a reduce combines and the range after it computes again, computed
once.

Input and output: `pg_loop` kernels. Guarantee: the same stores of the same values (each
value is computed by the same ops, once instead of twice, and read back exactly). A
softmax row sums `exp(x - max)` and its output loop computes `exp(x - max) / sum` again: a
new range before the reduce computes the exps once and stores them where the output loop
stores; the reduce and the output loop read them back (a 4 KiB row stays in L1). See
`reduce_actions.stash` for when it applies.

    opt-tool -p 'loop-stash{kernel=k0 reduce=1}':
    %s = pg_loop.reduce sum %r {               pg_loop.range %j { store exp(x[j] - m), out[j] }
      yield exp(x[r] - m) }                    %s = pg_loop.reduce sum %r { yield out[r] }
    pg_loop.range %i {                         pg_loop.range %i {
      store exp(x[i] - m) / %s, out[i] }         store out[i] / %s, out[i] }

Options: `kernel` (a symbol; empty: every kernel where it applies) and `reduce` (the
reduce's pre-order number in the kernel).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from picograd.passes.loop.kernel_select import schedule_kernels
from picograd.passes.loop.schedule import Action


@dataclass(frozen=True)
class LoopStashPass(ModulePass):
    """Compute once what reduce `reduce` of the selected kernels and the range after it share.

    The values go to the buffer that range stores to; both read them back."""

    name = "loop-stash"

    kernel: str = ""
    reduce: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        schedule_kernels(op, self.kernel, self.name, [Action("stash", self.reduce)])
