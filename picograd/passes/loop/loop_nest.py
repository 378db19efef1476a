"""What the loop actions of `schedule` share: a kernel's ranges and reduces by number, the
kinds of range and which ops may move, and the index rebuilt after a split.

    axes(kernel)                 the `pg_loop.range` ops in pre-order (axis 0 outermost)
    reduces(kernel)              the `pg_loop.reduce` ops in pre-order
    axis_range(kernel, n, what)  axis `n`, or ScheduleError naming the action `what`
    reduce_at(kernel, n, what)   reduce `n`, likewise
    rebuild_index(old, block, lane, factor, start, body)
                                 `old` becomes `start + block * factor + lane`
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from xdsl.ir import Block, Operation, SSAValue

from picograd.dialects import pg_loop as L
from picograd.dialects import pg_uop
from picograd.dialects.pg import BinaryKind, RangeKind

_Op = TypeVar("_Op", L.RangeOp, L.ReduceOp)

# Ranges whose iterations are independent of each other.
INDEPENDENT = frozenset({RangeKind.GLOBAL, RangeKind.LOCAL, RangeKind.UPCAST})
# Ranges whose iterations run in order.
ORDERED = frozenset({RangeKind.LOOP, RangeKind.UNROLL})

# Pure ops that may be recomputed in another place of a range's body.
PURE = (L.ConstOp, L.IndexOp, L.CmpOp, L.AndOp, *pg_uop.ALU_OPS)


class ScheduleError(ValueError):
    """An action that does not apply to a kernel (no such axis, an illegal move...)."""


def axes(kernel: L.KernelOp) -> list[L.RangeOp]:
    """The kernel's `pg_loop.range` ops, in pre-order (axis 0 is the outermost first one)."""
    return [op for op in kernel.walk() if isinstance(op, L.RangeOp)]


def reduces(kernel: L.KernelOp) -> list[L.ReduceOp]:
    """The kernel's `pg_loop.reduce` ops, in pre-order (reduce 0 is the first one)."""
    return [op for op in kernel.walk() if isinstance(op, L.ReduceOp)]


def axis_range(kernel: L.KernelOp, axis: int, action: str) -> L.RangeOp:
    return _numbered(kernel, axes(kernel), axis, "axis", "axes", action)


def reduce_at(kernel: L.KernelOp, n: int, action: str) -> L.ReduceOp:
    return _numbered(kernel, reduces(kernel), n, "reduce", "reduces", action)


def _numbered(kernel: L.KernelOp, found: list[_Op], n: int, one: str, many: str,
                 action: str) -> _Op:
    """Item `n` of `found`, or ScheduleError naming the kernel, the action and what it has."""
    if not 0 <= n < len(found):
        have = (f"{many} 0 to {len(found) - 1}" if found else
                "no ranges" if one == "axis" else f"no {one}")
        raise ScheduleError(f"@{kernel.sym_name.data}: {action}: no {one} {n} (the kernel "
                            f"has {have})")
    return found[n]


def rebuild_index(old: SSAValue, block: SSAValue, lane: SSAValue, factor: int, start: int,
                  body: Block) -> None:
    """Replace index `old` (over `[start, ...)`) by `start + block * factor + lane`, computed
    at the top of `body`."""
    size = L.ConstOp(factor)
    scaled = L.IndexOp(BinaryKind.MUL, block, size.result)
    whole = L.IndexOp(BinaryKind.ADD, scaled.result, lane)
    prefix: list[Operation] = [size, scaled, whole]
    if start:
        first = L.ConstOp(start)
        whole = L.IndexOp(BinaryKind.ADD, whole.result, first.result)
        prefix += [first, whole]
    whole.result.name_hint = old.name_hint
    old.replace_all_uses_with(whole.result)
    prepend(body, prefix)


def prepend(block: Block, ops: Sequence[Operation]) -> None:
    first = block.first_op
    for op in ops:
        if first is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, first)
