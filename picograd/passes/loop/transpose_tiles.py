"""Cache tiles for transposing copies: the schedule `loop-optimize` gives a kernel that
writes along one range and reads along the range around it.

A kernel such as `x.T.contiguous()` of a (3200, 256) `x` stores `out[i, k]` along its
innermost range `k` and loads `x[k, i]`, 256 elements apart per step of `k`. Every load of
a row of the output is then in a cache line of its own, and the 15 other elements of that
line are wanted again only 3200 steps later, by the next 15 rows — long after the line
left the L1 cache (and, where the lines lie a multiple of 4 KiB apart, the L2 too). LLVM's
vectoriser makes gathers of it, and the kernel ran at 1.8 GB/s of the machine's ~20.

Tiled, the kernel walks the output in 16 x 16 blocks: the outer range `i` is split into 16
upcast lanes and the inner `k` into loops of 16, and the lanes move inside the `k` blocks:

    for i0 in 0..256/16:          (global)
      for k0 in 0..3200/16:       (global)
        for il in 0..16:          (upcast: unrolled lanes)
          for kl in 0..16:        (loop)
            out[(16 i0 + il) * 3200 + 16 k0 + kl] = x[(16 k0 + kl) * 256 + 16 i0 + il]

so a block's 16 input lines are read by its 16 output rows while they are in the L1
cache. Measured (2-core Emerald Rapids, f32, one process, kernel only): (3200, 256) -> (256,
3200) 1.6 -> 0.35 ms, (3200, 1024) 10.9 -> 1.4, (256, 3200) 0.85 -> 0.49; 8 lanes or 8-
or 32-long loops were within noise or slower. The lanes are scalar (a range inside them
has no vector form, see `lane_vectors.py`): the gain is the cache's, not the vector unit's.

The schedule is `split(a, 16, upcast); split(a + 2, 16, loop); interchange(a + 1)` with `a`
the outer range's axis. Both splits are exact (`split`'s guarantee), and the interchange
moves independent lanes; the stores are the same stores of the same values.
"""

from __future__ import annotations

from xdsl.ir import BlockArgument, SSAValue

from picograd.dialects import pg_loop as L
from picograd.dialects.pg import BinaryKind, RangeKind
from picograd.passes.loop.lane_vectors import body_vector_form
from picograd.passes.loop.loop_nest import PURE, axes
from picograd.passes.loop.schedule import Action

TILE = 16  # rows (lanes) and columns (loop) of one block
# The shortest inner range worth blocking: a shorter one's lines (one per step) stay in
# the L1 cache from one row to the next anyway.
MIN_INNER = 64
# The most ops the inner range's body may hold: the lanes are emitted once each (16
# copies of the body), and every op costs compile time in each later pass.
MAX_BODY_OPS = 32


def index_stride(index: SSAValue, var: SSAValue) -> int | None:
    """How much `index` grows per step of the range index `var` (0 where it does not
    depend on it), or None where it is not affine in `var` (a division, a remainder, a
    product of two varying indices)."""
    if index is var:
        return 1
    if isinstance(index, BlockArgument):
        return 0  # another range's index
    op = index.owner
    if isinstance(op, L.ConstOp):
        return 0
    if not isinstance(op, L.IndexOp):
        return None  # e.g. an index loaded from memory
    lhs, rhs = index_stride(op.lhs, var), index_stride(op.rhs, var)
    if lhs is None or rhs is None:
        return None
    kind = op.kind.data
    if kind == BinaryKind.ADD:
        return lhs + rhs
    if kind == BinaryKind.SUB:
        return lhs - rhs
    if lhs == rhs == 0:
        return 0
    if kind == BinaryKind.MUL:
        factor = op.rhs.owner if lhs else op.lhs.owner
        if (lhs == 0 or rhs == 0) and isinstance(factor, L.ConstOp):
            return (lhs + rhs) * factor.value.data
    return None


def _size(r: L.RangeOp) -> int:
    return r.end.data - r.start.data


def transposing(inner: L.RangeOp, outer: L.RangeOp) -> bool:
    """Whether the innermost range `inner` (of at most `MAX_BODY_OPS` ops), alone in
    `outer`'s body beside pure index ops, stores along itself (stride 1) and loads some
    value along `outer` (stride 1) that it steps through from line to line (a stride of a
    64-byte line of f32 or more)."""
    body = list(inner.body.block.ops)
    if len(body) > MAX_BODY_OPS or any(isinstance(op, L.RangeOp | L.ReduceOp) for op in body):
        return False
    if any(not isinstance(op, PURE) and op is not inner for op in outer.body.block.ops):
        return False
    stores = [op for op in body if isinstance(op, L.StoreOp)]
    if not stores or any(index_stride(s.index, inner.index) != 1 for s in stores):
        return False
    for load in (op for op in body if isinstance(op, L.LoadOp)):
        along = index_stride(load.index, inner.index)
        if (along is not None and abs(along) >= TILE
                and index_stride(load.index, outer.index) == 1):
            return True
    return False


def transpose_tiles(kernel: L.KernelOp) -> list[Action]:
    """The actions that block the kernel's transposing copy (module docstring), or none:
    for a kernel not tiled yet whose innermost range `transposing` reads along the global
    range around it, both ranges divisible into blocks, the inner one at least `MIN_INNER`
    long, and the inner range's body without a vector form of its own (where it has one,
    `elementwise_lanes` vectorises it instead)."""
    ranges = axes(kernel)
    if any(r.kind.data != RangeKind.GLOBAL for r in ranges):
        return []
    for axis in range(len(ranges) - 1):
        outer, inner = ranges[axis], ranges[axis + 1]
        if (inner.parent_op() is outer and _size(outer) % TILE == 0
                and _size(inner) % TILE == 0 and _size(inner) >= MIN_INNER
                and transposing(inner, outer) and not body_vector_form(inner)):
            return [Action("split", axis, TILE, RangeKind.UPCAST),
                    Action("split", axis + 2, TILE, RangeKind.LOOP),
                    Action("interchange", axis + 1)]
    return []
