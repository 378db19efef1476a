"""The loops of a stored `pg_tensor.attention` (`convert-sched-to-loop`): tiles of queries,
a scratch row of scores per query, register tiles for the scores and the output.

    lower_attention(op, out, scratch, kernel_block, buffers)
"""

from __future__ import annotations

from math import prod

from xdsl.ir import Block, SSAValue

from picograd.dialects import pg_loop as L
from picograd.dialects import pg_sched as S
from picograd.dialects import pg_tensor as T
from picograd.dialects import pg_uop as U
from picograd.dialects.pg import BinaryKind, BufferType, CmpKind, RangeKind, ReduceKind, UnaryKind
from picograd.dialects.pg_tensor import dtype_of, shape_of
from picograd.passes.loop.element_lowering import KernelLowering, NestScopes


def _lanes(n: int) -> int:
    """The vector lanes an attention loop over n elements takes: the largest power of two
    up to 32 that divides n (1: none). With a tile of 4 rows that is 8 AVX-512 or 16 AVX2
    registers of accumulators: independent chains of multiply-adds."""
    return next((w for w in (32, 16, 8, 4, 2) if n % w == 0), 1)


class _AttentionRows:
    """Emits the loops of one attention kernel (see `lower_attention`)."""

    def __init__(self, op: T.AttentionOp, lowering: KernelLowering, scratch: SSAValue):
        self.op, self.lowering, self.scratch = op, lowering, scratch
        self.math = lowering.math
        self.t = dtype_of(op.result)
        self.opened: list[bool] = []  # per open scope: whether it is a range of its own

    def open(self, loop: L.RangeOp | L.ReduceOp, name: str) -> L.RangeOp | L.ReduceOp:
        loop.index.name_hint = name
        self.lowering.scopes.add(loop)
        self.lowering.scopes.push(loop.body.block, loop.index)
        self.opened.append(True)
        return loop

    def loop(self, n: int, name: str, kind: RangeKind = RangeKind.LOOP) -> SSAValue:
        """An index over [0, n): a range of `kind` (none when n is 1), its body now open
        until the matching `close`."""
        if n == 1:
            self.opened.append(False)
            return self.math.const(0)
        return self.open(L.RangeOp(0, n, kind), name).index

    def reduce(self, kind: ReduceKind, n: int, name: str) -> L.ReduceOp:
        loop = self.open(L.ReduceOp(kind, 0, n, self.t), name)
        assert isinstance(loop, L.ReduceOp)
        return loop

    def close(self, value: SSAValue | None = None) -> None:
        if value is not None:
            self.lowering.scopes.add(L.YieldOp(value))
        if self.opened.pop():
            self.lowering.scopes.pop()

    def blocks(self, n: int, name: str) -> SSAValue:
        """The start of a block of `_lanes(n)` elements, in a sequential loop over them."""
        return self.math.mul(self.loop(n // _lanes(n), f"{name}_o"), _lanes(n))

    def lane(self, n: int, start: SSAValue, name: str) -> SSAValue:
        """`start` plus the lane index of an upcast range over `_lanes(n)` vector lanes."""
        return self.math.add(start, self.loop(_lanes(n), f"{name}_lane", RangeKind.UPCAST))

    def lanes(self, n: int, name: str) -> SSAValue:
        """An index over [0, n): blocks of vector lanes (two ranges to close)."""
        return self.lane(n, self.blocks(n, name), name)

    def const(self, value: float) -> SSAValue:
        return self.lowering.add(U.ConstOp(value, self.t))

    def alu(self, kind: BinaryKind, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.lowering.add(U.BinaryOp(kind, a, b))

    def read(self, base: SSAValue, j: SSAValue) -> SSAValue:
        return self.lowering.add(L.LoadOp(self.scratch, self.math.add(base, j)))

    def write(self, value: SSAValue, base: SSAValue, j: SSAValue) -> None:
        self.lowering.scopes.add(L.StoreOp(value, self.scratch, self.math.add(base, j)))


def lower_attention(op: T.AttentionOp, out: SSAValue, scratch: SSAValue, kernel_block: Block,
                     buffers: dict[SSAValue, SSAValue]) -> None:
    """Append the loops of an attention stored to `out`. Its rows go in tiles of `tile`
    queries of one head (`pg_sched.attention_tile`), split evenly among global work items,
    as many as `scratch` has tiles of rows for; a work item takes its tiles one after
    another, in its `tile` rows of `scratch` (S scores each):

        scores   x[t, j] = scale * sum_e q[t, e] k[j, e] + bias[t, j]   (t in the tile)
        per row  m = max_j x[j];  x[j] = exp(x[j] - (m == -inf ? 0 : m))
                 l = sum_j x[j];  x[j] = x[j] / (l == 0 ? 1 : l)
        output   out[t, d] = sum_j x[t, j] v[j, d]

    The scores and the output are register tiles (the tile's rows x vector lanes along j,
    resp. d: the multiply-adds of the rows interleave, and k's and v's loads are shared
    by the rows); they are contiguous where k is stored transposed and v as is. A -inf
    score gets weight exp(-inf) = 0, and a row of them weights 0 and output 0 (torch's safe
    softmax). Each score is computed once, and only the tile's rows are ever in memory."""
    q, v = shape_of(op.query), shape_of(op.value)
    lead, (big_l, e_size), (big_s, ev) = q[:-2], q[-2:], v[-2:]
    rows = prod(lead) * big_l
    tile = S.attention_tile(big_l)
    assert isinstance(scratch.type, BufferType)
    items = scratch.type.size.data // (tile * max(big_s, 1))
    assert items and (rows // tile) % items == 0, "convert-tensor-to-sched sized it"
    scopes = NestScopes(kernel_block)
    scopes.output_loops = 0
    lowering = KernelLowering(buffers, scopes)
    math = lowering.math
    emit = _AttentionRows(op, lowering, scratch)
    item = math.const(0)
    if items > 1:
        loop = L.RangeOp(0, items, RangeKind.GLOBAL)
        loop.index.name_hint = "w"
        kernel_block.add_op(loop)
        scopes.push(loop.body.block, loop.index)
        scopes.output_loops = 1
        item = loop.index
    per_item = rows // tile // items
    group = math.add(math.mul(item, per_item), emit.loop(per_item, "g"))
    *at_lead, tile_at = math.delinear(group, (*lead, big_l // tile))

    def query(t: SSAValue) -> SSAValue:
        return math.add(math.mul(tile_at, tile), t)

    def base(t: SSAValue) -> SSAValue:
        return math.mul(math.add(math.mul(item, tile), t), big_s)

    j0 = emit.blocks(big_s, "j")  # scores, a tile's rows x lanes of j
    t = emit.loop(tile, "t", RangeKind.UPCAST)
    j = emit.lane(big_s, j0, "j")
    i = query(t)
    dot = emit.reduce(ReduceKind.SUM, e_size, "e")
    emit.close(emit.alu(BinaryKind.MUL,
                        lowering.element(op.query, (*at_lead, i, dot.index), None),
                        lowering.element(op.key, (*at_lead, j, dot.index), None)))
    scaled = emit.alu(BinaryKind.MUL, dot.result, emit.const(op.scale_value))
    emit.write(emit.alu(BinaryKind.ADD, scaled,
                        lowering.element(op.bias, (*at_lead, i, j), None)), base(t), j)
    for _ in range(3):
        emit.close()

    t = emit.loop(tile, "t")  # per row: softmax in place
    row = base(t)
    peak = emit.reduce(ReduceKind.MAX, big_s, "j")
    emit.close(emit.read(row, peak.index))
    none = lowering.add(U.CmpOp(CmpKind.EQ, peak.result, emit.const(-float("inf"))))
    shift = lowering.add(U.WhereOp(none, emit.const(0.0), peak.result))
    j = emit.lanes(big_s, "j")
    emit.write(lowering.add(U.UnaryOp(UnaryKind.EXP, emit.alu(BinaryKind.SUB,
                                                               emit.read(row, j), shift))),
               row, j)
    emit.close()
    emit.close()
    total = emit.reduce(ReduceKind.SUM, big_s, "j")
    emit.close(emit.read(row, total.index))
    empty = lowering.add(U.CmpOp(CmpKind.EQ, total.result, emit.const(0.0)))
    divisor = lowering.add(U.WhereOp(empty, emit.const(1.0), total.result))
    j = emit.lanes(big_s, "j")
    emit.write(emit.alu(BinaryKind.DIV, emit.read(row, j), divisor), row, j)
    for _ in range(3):
        emit.close()

    d0 = emit.blocks(ev, "d")  # output, a tile's rows x lanes of d
    t = emit.loop(tile, "t", RangeKind.UPCAST)
    d = emit.lane(ev, d0, "d")
    mix = emit.reduce(ReduceKind.SUM, big_s, "j")
    emit.close(emit.alu(BinaryKind.MUL, emit.read(base(t), mix.index),
                        lowering.element(op.value, (*at_lead, mix.index, d), None)))
    scopes.add(L.StoreOp(mix.result, out, math.linear((*at_lead, query(t), d),
                                                      shape_of(op.result))))
    for _ in range(4):  # d's lanes, the tile, d's blocks, the work item's tiles
        emit.close()
