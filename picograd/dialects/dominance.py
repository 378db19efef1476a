"""SSA dominance: every operand is defined before its use, in the same block or around it.

    verify_dominance(module)   # raises DominanceError naming the op and the operand

xDSL 0.74's `Operation.verify()` does not check dominance, and its parser resolves a name
anywhere in the file: a value used before its definition (a line moved up), or one from
another kernel, parses and verifies, and the lowerings then fail with a KeyError on the
value they have not seen yet. picograd's stage dialects are all single-block regions with
straight-line bodies, where "dominates" is "comes earlier in this block or an enclosing
one". A region with several blocks (the llvm dialect's branches) is checked loosely: a
value of any of its blocks, or from around it, may be used in any of them.
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException


class DominanceError(VerifyException):
    """An operand that is not defined before `op` (in its block or one around it)."""

    def __init__(self, op: Operation, index: int, value: SSAValue):
        self.op = op
        name = f"%{value.name_hint}" if value.name_hint else "a value"
        super().__init__(f"'{op.name}': operand {index} ({name}) is used before it is defined "
                         "(or outside the region that defines it)")


def verify_dominance(root: Operation) -> None:
    """Raise `DominanceError` for the first operand, in walk order, that `root`'s nested
    ops use where it is not defined."""
    visible: set[SSAValue] = set()
    for region in root.regions:
        _check_region(region, visible)


def _check_region(region: Region, visible: set[SSAValue]) -> None:
    blocks = list(region.blocks)
    if len(blocks) == 1:
        _check_block(blocks[0], visible, ordered=True)
        return
    # Several blocks: branches decide dominance; accept any value of the region's blocks.
    added = {v for b in blocks for v in (*b.args, *(r for op in b.ops for r in op.results))}
    added -= visible
    visible |= added
    for block in blocks:
        _check_block(block, visible, ordered=False)
    visible -= added


def _check_block(block: Block, visible: set[SSAValue], *, ordered: bool) -> None:
    added: list[SSAValue] = [a for a in block.args if a not in visible]
    visible.update(added)
    for op in block.ops:
        for i, operand in enumerate(op.operands):
            if operand not in visible:
                raise DominanceError(op, i, operand)
        for region in op.regions:
            _check_region(region, visible)
        if ordered:
            visible.update(op.results)
            added.extend(op.results)
    visible.difference_update(added)
