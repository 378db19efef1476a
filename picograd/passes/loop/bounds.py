"""Integer bounds of `pg_loop` index values, for the guards of `loop-simplify`.

A loop variable of `pg_loop.range %i = s to e` or `pg_loop.reduce ... %j = s to e` lies in
`[s, e-1]`; constants are exact; `pg_loop.index` ops combine their operands' bounds by
interval arithmetic (div and mod only by positive constants, with pg_loop's floor
semantics). Anything else is unbounded (None).
"""

from __future__ import annotations

from xdsl.ir import Block, SSAValue

from picograd.dialects import pg_loop
from picograd.dialects.pg import BinaryKind
from picograd.passes.rules import constant_scalar

Interval = tuple[int, int]

# Deeper expressions are treated as unbounded, which keeps the guard cost linear.
_MAX_DEPTH = 32


def bounds(v: SSAValue, depth: int = 0) -> Interval | None:
    """The smallest and largest value `v` can take, or None if unknown."""
    if (c := constant_scalar(v)) is not None:
        return (int(c), int(c)) if isinstance(c, int) else None
    owner = v.owner
    if isinstance(owner, Block):
        loop = owner.parent_op()
        if isinstance(loop, pg_loop.RangeOp | pg_loop.ReduceOp) and loop.start.data < loop.end.data:
            return loop.start.data, loop.end.data - 1
        return None
    if not isinstance(owner, pg_loop.IndexOp) or depth >= _MAX_DEPTH:
        return None
    a, b = bounds(owner.lhs, depth + 1), bounds(owner.rhs, depth + 1)
    return None if a is None or b is None else _combine(owner.kind.data, a, b)


def _combine(kind: BinaryKind, a: Interval, b: Interval) -> Interval | None:
    if kind == BinaryKind.ADD:
        return a[0] + b[0], a[1] + b[1]
    if kind == BinaryKind.SUB:
        return a[0] - b[1], a[1] - b[0]
    if kind == BinaryKind.MUL:
        products = [x * y for x in a for y in b]
        return min(products), max(products)
    if kind == BinaryKind.MAX:
        return max(a[0], b[0]), max(a[1], b[1])
    if kind == BinaryKind.MIN:
        return min(a[0], b[0]), min(a[1], b[1])
    if b[0] != b[1] or b[0] <= 0:
        return None
    c = b[0]
    if kind == BinaryKind.DIV:
        return a[0] // c, a[1] // c  # floor division is monotone
    if a[0] >= 0 and a[1] < c:  # MOD of a value already in [0, c)
        return a
    return 0, c - 1


def is_within(v: SSAValue, lo: int, hi: int) -> bool:
    """`lo <= v <= hi` for every value `v` can take."""
    b = bounds(v)
    return b is not None and lo <= b[0] and b[1] <= hi

