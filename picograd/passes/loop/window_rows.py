"""Window reduces (a pool's 2 x 2 taps): the outputs of a short row unrolled whole.

A kernel whose innermost global range holds one reduce shorter than `min_reduce` (a
pooling window: too short to tile, see `loop_upcast.is_candidate`) and whose body has no
vector form along that range (the taps' loads step 2 or more per output, a max, a mask)
runs one output at a time: per output, a loop of a few loads and its index arithmetic.
When that range is `MIN_ROW` to `MAX_ROW` long it is split into upcast lanes whole, so a
row's outputs are computed side by side (independent chains, the window loop's overhead
shared by the row).

    pg_loop.range %i3 = 0 to 14 global {                    split(3, 14, upcast)
      %m = pg_loop.reduce max %r = 0 to 4 : f32 {...}  ->   14 accumulators per step of %r
      pg_loop.store %m, %out[...]

Measured (DEBUG=2 medians of 10 steps, 2-core Zen 4, one process per schedule, two rounds):
the ONNX CNN's first pool (relu of a conv plus bias, 2 x 2 max, (64, 32, 14, 14) out) 400
and 472 us untiled, 216 and 198 us with its 14-long rows unrolled; its second pool (rows
of 7) gained nothing from 7 lanes (224-306 against 234-261 us), hence `MIN_ROW`.

Guarantee: `split`'s (the same stores of the same values, each output's window reduced in
its own order).
"""

from __future__ import annotations

from picograd.dialects import pg_loop as L
from picograd.dialects.pg import RangeKind
from picograd.passes.loop.lane_vectors import body_vector_form
from picograd.passes.loop.loop_nest import axes
from picograd.passes.loop.schedule import Action

MIN_ROW = 8
MAX_ROW = 16


def window_rows(kernel: L.KernelOp, min_reduce: int) -> list[Action]:
    """`split(axis, n, upcast)` for each innermost global range of `n` (`MIN_ROW` to
    `MAX_ROW`) iterations whose body is one short reduce and pure ops around it, without a
    vector form along the range."""
    actions = []
    for axis, r in enumerate(axes(kernel)):
        body = list(r.body.block.ops)
        if r.kind.data != RangeKind.GLOBAL or any(isinstance(op, L.RangeOp) for op in body):
            continue
        reduces = [op for op in body if isinstance(op, L.ReduceOp)]
        n = r.end.data - r.start.data
        if (len(reduces) != 1 or reduces[0].end.data - reduces[0].start.data >= min_reduce
                or not MIN_ROW <= n <= MAX_ROW or body_vector_form(r)):
            continue
        actions.append(Action("split", axis, n, RangeKind.UPCAST))
    return actions
