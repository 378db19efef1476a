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
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_loop as L
from picograd.dialects.pg import BinaryKind, RangeKind
from picograd.passes.loop.schedule import PURE, Action, apply_schedule, axes


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


def is_candidate(inner: L.RangeOp, min_reduce: int) -> bool:
    body = list(inner.body.block.ops)
    reduces = [op for op in body if isinstance(op, L.ReduceOp)]
    stores = [op for op in body if isinstance(op, L.StoreOp)]
    return (inner.kind.data == RangeKind.GLOBAL
            and not any(isinstance(op, L.RangeOp) for op in body)
            and any(r.end.data - r.start.data >= min_reduce for r in reduces)
            and bool(stores) and all(_contiguous_in(s, inner.index) for s in stores))


def splittable_outer(inner: L.RangeOp, rows: int) -> L.RangeOp | None:
    """The global range directly around `inner`, when it can get `rows` lanes: its body is
    `inner` and pure ops only, it has at least `rows` iterations."""
    outer = inner.parent_op()
    if rows <= 1 or not isinstance(outer, L.RangeOp):
        return None
    if outer.kind.data != RangeKind.GLOBAL or outer.end.data - outer.start.data < rows:
        return None
    if any(op is not inner and not isinstance(op, PURE) for op in outer.body.block.ops):
        return None
    return outer


def tile_actions(kernel: L.KernelOp, inner: L.RangeOp, rows: int, cols: int) -> list[Action]:
    """The actions that give `inner` (a candidate, see `is_candidate`) `cols` lanes and the
    range around it `rows` lanes, lanes innermost: split the inner range, split the outer
    one, move the outer lanes inside the inner tiles."""
    ranges = axes(kernel)
    at = ranges.index(inner)
    actions = []
    if 1 < cols <= inner.end.data - inner.start.data:
        actions.append(Action("split", at, cols, RangeKind.UPCAST))
    outer = splittable_outer(inner, rows)
    if outer is not None:
        actions += [Action("split", at - 1, rows, RangeKind.UPCAST), Action("interchange", at)]
    return actions


def _whole_tiles(inner: L.RangeOp, rows: int, cols: int) -> int:
    """How many `rows` x `cols` tiles the global ranges around and at `inner` hold when the
    tile divides them exactly (0 when it does not)."""
    size = inner.end.data - inner.start.data
    outer = splittable_outer(inner, rows)
    if size % cols or (rows > 1 and (outer is None or (outer.end.data - outer.start.data)
                                     % rows)):
        return 0
    tiles = size // cols
    r: Operation | None = inner.parent_op()
    while isinstance(r, L.RangeOp) and r.kind.data == RangeKind.GLOBAL:
        tiles *= (r.end.data - r.start.data) // (rows if r is outer else 1)
        r = r.parent_op()
    return tiles


def upcast_kernel(kernel: L.KernelOp, rows: int, cols: int, min_reduce: int,
                  min_tiles: int = 0) -> None:
    """Tile every candidate range of `kernel` (the last ones first, so that the axis numbers
    of the others stay valid) and record the actions as its schedule. With `min_tiles`, only
    a range that the full tile divides with at least that many tiles is tiled."""
    candidates = [r for r in axes(kernel) if is_candidate(r, min_reduce)
                  and (not min_tiles or _whole_tiles(r, rows, cols) >= min_tiles)]
    for inner in reversed(candidates):
        apply_schedule(kernel, tile_actions(kernel, inner, rows, cols))


@dataclass(frozen=True)
class LoopUpcastPass(ModulePass):
    """Split the innermost global ranges of reduce kernels into tiles and `upcast` lanes.

    Input and output: `pg_loop` kernels. Guarantee: same results bit for bit (each output
    element is reduced in the same order); kernels that do not qualify are unchanged.
    Options: `rows` and `cols` (lanes of the outer and inner global range; 1 turns a split
    off), `min-reduce` (the shortest reduce worth tiling) and `min-tiles` (0: off; else a
    kernel is tiled only when the tile divides both ranges and the global ranges hold at
    least that many tiles: on a GPU each tile is one work item, and a grid of fewer ones
    leaves the GPU idle).
    """

    name = "loop-upcast"

    rows: int = 4
    cols: int = 8
    min_reduce: int = 8
    min_tiles: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.cols < 1 or self.rows < 1 or self.min_tiles < 0:
            raise PassFailedException("loop-upcast: rows and cols must be at least 1, "
                                      "min-tiles not negative")
        for kernel in op.ops:
            if isinstance(kernel, L.KernelOp):
                upcast_kernel(kernel, self.rows, self.cols, self.min_reduce, self.min_tiles)
