"""Which CPU kernels may run their outermost loop in chunks on several threads.

    outer_split(kernel) -> OuterSplit | None

A CPU kernel takes two trailing `i64` arguments `(start, end)` that bound its outermost
global range (the kernel ABI, `picograd.dialects.abi`); `picograd/runtimes/parallel.py` calls
it once with `(0, trip)` or, for a large kernel, once per contiguous chunk on a thread pool.
That is only correct when the chunks are independent and together do exactly the kernel's
work, so a kernel is split only when its body is exactly one top-level `pg_uop.range ...
global` (iterations of a global range are independent: on a GPU each is its own work item)
and everything else at the top level is pure (`pg_uop.const` and ALU ops, recomputed by
each chunk). A reduction into a scalar (a top-level `acc`), a store after the loop or a second
top-level loop make the kernel unsplittable: it ignores `(start, end)`.

The target function records the split as discardable attributes, which its renderer turns
into an exported `{name}_pg_outer` constant `{trip, work}` for the runtime to read:

    llvm.func @k0(..., %start: i64, %end: i64) attributes {pg.outer = 64 : i64,
                                                          pg.work = 4096 : i64}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Operation

from picograd.dialects import pg_uop
from picograd.dialects.abi import OUTER_ATTR, WORK_ATTR
from picograd.dialects.flat_vectors import lanes_of
from picograd.dialects.pg import RangeKind


@dataclass(frozen=True)
class OuterSplit:
    range: pg_uop.RangeOp  # the top-level global range that takes (start, end)
    trip: int  # its trip count
    work: int  # lane-ops executed by one full call (each op's lanes times its trip counts)

    def mark(self, op: Operation) -> None:
        """Record the split on the target function `op`."""
        op.attributes[OUTER_ATTR] = IntegerAttr(self.trip, i64)
        op.attributes[WORK_ATTR] = IntegerAttr(self.work, i64)


def _pure(op: Operation) -> bool:
    # a broadcast of a constant is hoisted to the top (an attention kernel's scale)
    return isinstance(op, (pg_uop.ConstOp, pg_uop.BroadcastOp, pg_uop.FmaOp,
                           *pg_uop.ALU_OPS))


def _lanes(op: Operation) -> int:
    """The lanes `op` computes: a vector op does the work of that many scalar ones (the
    runtime's threshold for splitting a kernel is in scalar ops)."""
    return max((lanes_of(v.type) for v in (*op.results, *op.operands)), default=1)


def outer_split(kernel: pg_uop.KernelOp) -> OuterSplit | None:
    """The splittable outer range of `kernel` (see the module docstring), or None."""
    outer: pg_uop.RangeOp | None = None
    trips: list[int] = []  # trip counts of the open ranges, outermost first
    work = 0
    for op in kernel.body.block.ops:
        if isinstance(op, pg_uop.RangeOp):
            if not trips:
                if outer is not None or op.kind.data != RangeKind.GLOBAL:
                    return None  # a second top-level loop, or one that is not parallel
                outer = op
            trips.append(op.end.data - op.start.data)
        elif isinstance(op, pg_uop.EndOp):
            trips.pop()
        elif trips:
            count = _lanes(op)
            for trip in trips:
                count *= trip
            work += count
        elif not _pure(op):
            return None  # a load, store or accumulator outside the loop
    if outer is None or outer.end.data <= outer.start.data:
        return None
    return OuterSplit(outer, outer.end.data - outer.start.data, work)
