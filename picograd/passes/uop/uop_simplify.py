"""`uop-simplify`: constant folding and exact identities on `pg_uop` ALU ops.

Matches the scalar ALU ops (`pg_uop.const/unary/binary/cmp/where/cast`) wherever they are:
in the flat block of a `pg_uop.kernel` and inside `pg_loop` bodies. Folding follows C
semantics (integer division truncates, float math rounds in the value's own type) so that it
agrees bit for bit with the interpreter and the compiled code; see `rules.scalar`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from picograd.dialects import pg_uop
from picograd.passes.rules import OpFamily, RuleSet
from picograd.passes.rules.algebra import algebra_rules

U = OpFamily(unary=pg_uop.UnaryOp, binary=pg_uop.BinaryOp, cmp=pg_uop.CmpOp,
             where=pg_uop.WhereOp, cast=pg_uop.CastOp)

uop_simplify_rules = RuleSet("uop-simplify", algebra_rules(U))


@dataclass(frozen=True)
class UopSimplifyPass(ModulePass):
    """Fold constants and remove identities among `pg_uop` ALU ops, to a fixpoint.

    Input: any module; only `pg_uop` ALU ops are rewritten (stage 3 or 4).
    Output: the same dialects. Options: `max_iterations` (walks before `RewriteLimitError`).
    Guarantee: every result is bit-identical for every input; no ALU op whose operands are
    all constants remains, unless folding it is undefined in C (e.g. `x / 0` on integers);
    dead pure ops are erased.
    """

    name = "uop-simplify"

    max_iterations: int = 50

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        uop_simplify_rules.apply(op, max_iterations=self.max_iterations)
