"""`loop-unswitch`: a range compared with constants runs as one range per piece between them.

Input and output: `pg_loop` kernels. Guarantee: every store writes the same value to the
same element as before, for every input: each iteration of a split range runs exactly
once, in the piece that holds it, with the same body; only ranges whose iterations are
independent (global, local) or run in order with the pieces in order (loop) are split.

A concatenation is a sum of pads, so its kernel loads every input under a mask that
compares the range along the concatenated dim with where each input starts, and selects
one of them: `torch.cat` of ten (32, 1024) gradients per LSTM step computed ten masked
loads and a chain of ten selects per element. The constants those comparisons name cut
the range into pieces in which every comparison has one answer; one range per piece,
then `loop-simplify` (run here on the kernel) decides the comparisons from the pieces'
bounds, so each piece loads one input, without a mask:

    opt-tool -p loop-unswitch:
    pg_loop.range %i = 0 to 64 global {         pg_loop.range %i = 0 to 64 global {
      pg_loop.range %j = 0 to 10 global {         pg_loop.range %j = 0 to 4 global {
        %c = pg_loop.const 4                         ...load %a[...]...
        %m = pg_loop.cmp lt %j, %c                 }
        ...where(%m, load %a if %m,                pg_loop.range %j = 4 to 10 global {
                 load %b if !%m)...                  ...load %b[...]...
    } }                                            } }

A split range that is the kernel's outermost would leave several top-level loops, which
the CPU runtimes cannot run in chunks on threads (`lowering/outer_range.py`): such a range
moves first inside the one global range it holds (`schedule.interchange_range`), split
into `OUTER_BLOCKS` blocks where its size allows, so that the blocks run on the threads and
each piece inside a block still copies contiguous runs (moved inside the whole held range,
each piece would be a loop of a few strided elements); it is left alone when it holds
another kind of body. A range is split into at most `MAX_PIECES`
pieces and while its copies stay within `MAX_COPIED_OPS` ops. CPU pipelines only: a GPU
maps global ranges onto work items one nest per kernel (`uop-gpu-map`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from picograd.dialects import pg_loop as L
from picograd.dialects.pg import CmpKind, RangeKind
from picograd.passes.loop.loop_nest import axes
from picograd.passes.loop.loop_simplify import loop_simplify_rules
from picograd.passes.loop.schedule import interchange_problem, interchange_range, split
from picograd.passes.rules import constant_scalar

MAX_PIECES = 16
MAX_COPIED_OPS = 4096
# an outermost piece range moves inside blocks of the range it holds (see `_block_of`)
OUTER_BLOCKS = 16
MIN_BLOCK = 64
_SPLITTABLE = (RangeKind.GLOBAL, RangeKind.LOCAL, RangeKind.LOOP)
# `index < c`-style comparisons with the index on the left: the first value of the upper
# side (`i < c` and `i >= c` change answer at c; `i <= c` and `i > c` at c + 1)
_CUT = {CmpKind.LT: 0, CmpKind.GE: 0, CmpKind.LE: 1, CmpKind.GT: 1}
# the same comparison with the operands swapped (`c < i` is `i > c`)
_SWAPPED = {CmpKind.LT: CmpKind.GT, CmpKind.GT: CmpKind.LT, CmpKind.LE: CmpKind.GE,
            CmpKind.GE: CmpKind.LE, CmpKind.EQ: CmpKind.EQ, CmpKind.NE: CmpKind.NE}


def cuts(r: L.RangeOp) -> list[int]:
    """The values strictly inside `r`'s bounds where a comparison of its index with a
    constant, anywhere in its body, changes answer; sorted."""
    found: set[int] = set()
    for op in r.body.walk():
        if not isinstance(op, L.CmpOp):
            continue
        kind = op.kind.data
        for index, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            c = constant_scalar(other)
            if index != r.index or not isinstance(c, int):
                continue
            if index is op.rhs:
                kind = _SWAPPED[kind]
            if kind in (CmpKind.EQ, CmpKind.NE):
                found.update((c, c + 1))
            else:
                found.add(c + _CUT[kind])
    return sorted(v for v in found if r.start.data < v < r.end.data)


def _size(r: L.RangeOp) -> int:
    return sum(1 for _ in r.body.walk())


def _is_outermost(r: L.RangeOp) -> bool:
    return isinstance(r.parent_op(), L.KernelOp)


def _holds_one_global_range(r: L.RangeOp) -> bool:
    held = [op for op in r.body.block.ops if isinstance(op, L.RangeOp)]
    return len(held) == 1 and held[0].kind.data == RangeKind.GLOBAL


def _block_of(r: L.RangeOp) -> int | None:
    """The inner size to split range `r` by before a piece range moves inside it, so that
    each piece copies contiguous runs: `OUTER_BLOCKS` blocks (the threads' chunks), or
    up to 4x as many, of `MIN_BLOCK` iterations or more; None when no such size divides."""
    size = r.end.data - r.start.data
    for blocks in range(OUTER_BLOCKS, 4 * OUTER_BLOCKS + 1):
        if size % blocks == 0 and size // blocks >= MIN_BLOCK:
            return size // blocks
    return None


def split_range(r: L.RangeOp, points: list[int]) -> None:
    """Replace `r` by one copy per piece `[start, p0), [p0, p1), ..., [pn, end)`."""
    parent = r.parent_block()
    assert parent is not None
    bounds = [r.start.data, *points, r.end.data]
    for start, end in pairwise(bounds):
        piece = L.RangeOp(start, end, r.kind.data)
        piece.attributes.update(r.attributes)
        piece.index.name_hint = r.index.name_hint
        mapping: dict[SSAValue, SSAValue] = {r.index: piece.index}
        for op in r.body.block.ops:
            piece.body.block.add_op(op.clone(value_mapper=mapping))
        parent.insert_op_before(piece, r)
    r.detach()
    r.erase()


def _candidate(kernel: L.KernelOp) -> tuple[L.RangeOp, list[int]] | None:
    """The first range, outermost first, that splits (moved inward first if it must)."""
    for op in kernel.body.walk():
        if not isinstance(op, L.RangeOp) or op.kind.data not in _SPLITTABLE:
            continue
        points = cuts(op)
        if not points or len(points) + 1 > MAX_PIECES:
            continue
        if _size(op) * (len(points) + 1) > MAX_COPIED_OPS:
            continue
        if _is_outermost(op):
            if not (_holds_one_global_range(op) and interchange_problem(op) is None):
                continue
            held = next(r for r in op.body.block.ops if isinstance(r, L.RangeOp))
            if (block := _block_of(held)) is not None:
                split(kernel, axes(kernel).index(held), block, RangeKind.GLOBAL)
            (moved,) = interchange_range(op)
            return moved, cuts(moved)
        return op, points
    return None


def unswitch_kernel(kernel: L.KernelOp) -> bool:
    """Split every range of `kernel` that has cuts; whether it changed."""
    changed = False
    while (found := _candidate(kernel)) is not None:
        split_range(*found)
        changed = True
    return changed


@dataclass(frozen=True)
class LoopUnswitchPass(ModulePass):
    """Split each range compared with constants into one range per piece between them.

    Input and output: `pg_loop` kernels (the module docstring has the details). Guarantee:
    the same stores of the same values; the split kernels are simplified (`loop-simplify`).
    """

    name = "loop-unswitch"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, L.KernelOp)]:
            if unswitch_kernel(kernel):
                loop_simplify_rules.apply(kernel)
