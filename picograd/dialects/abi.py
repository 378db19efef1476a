"""The kernel ABI: the names the target lowerings emit and the runtimes look up.

A CPU kernel takes its buffers' addresses, then two trailing `i64` arguments `(start, end)`
that bound its outermost global range. A kernel whose outer range may be run in chunks on
several threads (`picograd.lowering.outer_range`) carries its split as discardable
attributes on its target function, which the printers turn into an exported `int64_t[2]`
constant `{trip, work}` named `outer_symbol(kernel)`:

    llvm.func @k0(..., %start: i64, %end: i64) attributes {pg.outer = 64 : i64,
                                                          pg.work = 4096 : i64}
    const int64_t k0_pg_outer[2] = {64, 4096};      (C; LLVM IR: @k0_pg_outer global)

`picograd/runtimes/parallel.py` reads that constant and calls the kernel once with
`(0, trip)` or once per contiguous chunk. Lowerings, printers and runtimes import these names
from here, so none of them has to import another.
"""

# The loop actions a pg_loop kernel went through, `split(1, 64, upcast); interchange(1)`
# (picograd/passes/loop/schedule.py), read by DEBUG=3.
SCHEDULE_ATTR = "pg.schedule"
# The width of the column panels a matmul kernel reads B in (`loop-optimize` sets it where
# its tile takes `matmul-layout`'s panels), read by DEBUG=2.
PANELS_ATTR = "pg.b_panels"
# Which policy chose a kernel's schedule where it was not the default heuristic's: `beam`
# (searched now), `beam-cache` (a stored search result), `heuristic` (BEAM left it), read
# by DEBUG=2.
POLICY_ATTR = "pg.schedule_policy"
OUTER_ATTR = "pg.outer"  # trip count of the splittable outer range
WORK_ATTR = "pg.work"  # estimated dynamic op count of the whole kernel
START_NAME, END_NAME = "start", "end"  # names of the two trailing arguments


def outer_symbol(kernel: str) -> str:
    """The exported `int64_t[2]` constant `{trip, work}` of a splittable kernel."""
    return f"{kernel}_pg_outer"
