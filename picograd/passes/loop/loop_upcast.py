"""`loop-upcast`: register tiling of reduce kernels (a `rows` x `cols` micro-kernel).

A kernel whose innermost global range `%i1` holds a `pg_loop.reduce` and stores its result
contiguously in `%i1` (a matmul, a row reduction...) gets `%i1` split into a global range
over tiles and an `upcast` lane range of `cols` lanes; when `%i1` sits directly in another
global range `%i0`, that one is split too, into tiles and a lane range of `rows` lanes:

    pg_loop.range %i0 = 0 to 64 global {          pg_loop.range %i0o = 0 to 16 global {
      pg_loop.range %i1 = 0 to 64 global {          pg_loop.range %i1o = 0 to 8 global {
        %s = pg_loop.reduce sum %r = 0 to 64 ...      pg_loop.range %l0 = 0 to 4 upcast {
        pg_loop.store %s, %out[%i0*64+%i1] ...          pg_loop.range %l1 = 0 to 8 upcast {
      }                                                   %i0 = %i0o * 4 + %l0
    }                                                     %i1 = %i1o * 8 + %l1
                                                          ... the body, unchanged ...

The meaning is unchanged (every `(i0, i1)` pair still runs the body once, and global
iterations are independent). `convert-loop-to-uop` then emits the lanes of a reduce as one
loop with `rows * cols` accumulators, which the C and LLVM compilers vectorise.

A range is split only when its size is a multiple of the lane count (no remainder loop), a
reduce in the body runs at least `min-reduce` iterations and the body holds no nested loop
but reduces. Other kernels (elementwise ones in particular) are left unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from picograd.dialects import pg_loop as L
from picograd.dialects import pg_uop
from picograd.dialects.pg import BinaryKind, RangeKind

# Pure ops of a range body that may move into the lane body with the range they index.
_MOVABLE = (L.ConstOp, L.IndexOp, L.CmpOp, L.AndOp, *pg_uop.ALU_OPS)


def _index_at(value: SSAValue, env: dict[SSAValue, int]) -> int | None:
    """The value of an index expression (consts, index ops, range indices in `env`), or None
    when it depends on anything else (a load...)."""
    if value in env:
        return env[value]
    op = value.owner
    if isinstance(op, L.ConstOp):
        return op.value.data
    if not isinstance(op, L.IndexOp):
        return None
    a, b = _index_at(op.lhs, env), _index_at(op.rhs, env)
    if a is None or b is None:
        return None
    kind = op.kind.data
    if kind in (BinaryKind.DIV, BinaryKind.MOD) and b <= 0:
        return None
    table = {BinaryKind.ADD: lambda: a + b, BinaryKind.SUB: lambda: a - b,
             BinaryKind.MUL: lambda: a * b, BinaryKind.DIV: lambda: a // b,
             BinaryKind.MOD: lambda: a % b, BinaryKind.MAX: lambda: max(a, b),
             BinaryKind.MIN: lambda: min(a, b)}
    return table[kind]() if kind in table else None


def _enclosing_indices(op: Operation) -> list[SSAValue]:
    out: list[SSAValue] = []
    parent = op.parent_op()
    while isinstance(parent, L.RangeOp | L.ReduceOp):
        out.append(parent.index)
        parent = parent.parent_op()
    return out


def _contiguous_in(store: L.StoreOp, index: SSAValue) -> bool:
    """Whether the store's index steps by exactly 1 when `index` does (the other indices
    held at a few sample values); index expressions only, heuristically."""
    others = [i for i in _enclosing_indices(store) if i is not index]
    for sample in (0, 1, 3):
        env = dict.fromkeys(others, sample)
        at0 = _index_at(store.index, {**env, index: sample})
        at1 = _index_at(store.index, {**env, index: sample + 1})
        if at0 is None or at1 is None or at1 - at0 != 1:
            return False
    return True


def _is_candidate(inner: L.RangeOp, cols: int, min_reduce: int) -> bool:
    body = list(inner.body.block.ops)
    reduces = [op for op in body if isinstance(op, L.ReduceOp)]
    stores = [op for op in body if isinstance(op, L.StoreOp)]
    return (inner.kind.data == RangeKind.GLOBAL and inner.start.data == 0
            and inner.end.data % cols == 0
            and not any(isinstance(op, L.RangeOp) for op in body)
            and any(r.end.data - r.start.data >= min_reduce for r in reduces)
            and bool(stores) and all(_contiguous_in(s, inner.index) for s in stores))


def _splittable_outer(inner: L.RangeOp, rows: int) -> L.RangeOp | None:
    """The global range directly around `inner`, when it can get `rows` lanes: its body is
    `inner` and pure ops only, its size a multiple of `rows`."""
    outer = inner.parent_op()
    if rows <= 1 or not isinstance(outer, L.RangeOp):
        return None
    if outer.kind.data != RangeKind.GLOBAL or outer.start.data != 0 or outer.end.data % rows:
        return None
    if any(op is not inner and not isinstance(op, _MOVABLE) for op in outer.body.block.ops):
        return None
    return outer


def _tile(index: SSAValue, tile: SSAValue, lane: SSAValue, lanes: int, at: Block) -> None:
    """Replace the uses of `index` by `tile * lanes + lane`, computed at the top of `at`."""
    size = L.ConstOp(lanes)
    scaled = L.IndexOp(BinaryKind.MUL, tile, size)
    whole = L.IndexOp(BinaryKind.ADD, scaled, lane)
    whole.result.name_hint = index.name_hint
    first = at.first_op
    for op in (size, scaled, whole):
        if first is None:
            at.add_op(op)
        else:
            at.insert_op_before(op, first)
    index.replace_all_uses_with(whole.result)


def _upcast(inner: L.RangeOp, outer: L.RangeOp | None, rows: int, cols: int) -> None:
    """Rewrite the nest in place (see the module docstring)."""
    lane1 = L.RangeOp(0, cols, RangeKind.UPCAST)
    lane_body = lane1.body.block
    # the body of `inner`, and the pure ops of `outer` before it, move into the lanes
    moved = [op for op in outer.body.block.ops if op is not inner] if outer else []
    moved += list(inner.body.block.ops)
    for op in moved:
        op.detach()
        lane_body.add_op(op)
    tile1 = L.RangeOp(0, inner.end.data // cols, RangeKind.GLOBAL)
    lane1.index.name_hint = f"{inner.index.name_hint or 'i'}_lane"
    tile1.index.name_hint = f"{inner.index.name_hint or 'i'}_tile"
    _tile(inner.index, tile1.index, lane1.index, cols, lane_body)
    if outer is None:
        tile1.body.block.add_op(lane1)
        inner.parent_block().insert_op_before(tile1, inner)  # type: ignore[union-attr]
        inner.detach()
        inner.erase()
        return
    lane0 = L.RangeOp(0, rows, RangeKind.UPCAST)
    lane0.body.block.add_op(lane1)
    tile1.body.block.add_op(lane0)
    tile0 = L.RangeOp(0, outer.end.data // rows, RangeKind.GLOBAL)
    tile0.body.block.add_op(tile1)
    lane0.index.name_hint = f"{outer.index.name_hint or 'i'}_lane"
    tile0.index.name_hint = f"{outer.index.name_hint or 'i'}_tile"
    _tile(outer.index, tile0.index, lane0.index, rows, lane_body)
    outer.parent_block().insert_op_before(tile0, outer)  # type: ignore[union-attr]
    inner.detach()
    inner.erase()
    outer.detach()
    outer.erase()


@dataclass(frozen=True)
class LoopUpcastPass(ModulePass):
    """Split the innermost global ranges of reduce kernels into tiles and `upcast` lanes.

    Input and output: `pg_loop` kernels. Guarantee: same results bit for bit (each output
    element is reduced in the same order); kernels that do not qualify are unchanged.
    Options: `rows` and `cols` (lanes of the outer and inner global range; 1 turns a split
    off) and `min-reduce` (the shortest reduce worth tiling).
    """

    name = "loop-upcast"

    rows: int = 4
    cols: int = 8
    min_reduce: int = 8

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.cols < 1 or self.rows < 1:
            raise ValueError("loop-upcast: rows and cols must be at least 1")
        for kernel in op.ops:
            if not isinstance(kernel, L.KernelOp):
                continue
            inners = [r for r in kernel.walk() if isinstance(r, L.RangeOp)
                      and _is_candidate(r, self.cols, self.min_reduce)]
            for inner in inners:
                outer = _splittable_outer(inner, self.rows)
                if self.cols == 1 and outer is None:
                    continue
                _upcast(inner, outer, self.rows, self.cols)
