"""`loop-simplify`: index arithmetic and masks in `pg_loop` kernels.

`pg_loop.index` div/mod are floor division and floor modulo, so identities such as
`(x + y*c) // c == x//c + y` hold for every integer when `c > 0` (and `(y*a + x) // (a*m)
== y // m` when `0 <= x < a`: whole rows of length a), and the pieces a reshape
splits an index into add back to it (`(x//a)*a + x%a == x`, `((x//a)%b)*a + x%a ==
x%(a*b)`, `(x//a)*(a*d) + (x%a)*d == x*d`), so a reshape of a reshape reads contiguously
again, and two ranges over a grid of rows collapse into one. Loop bounds (see
`bounds.py`) decide the rest: `x // c -> 0` and `x % c -> x` when `0 <= x < c`, and a
comparison whose answer the bounds already give becomes a constant (`pg_uop.const true/false
: i1`, the ALU constant that `pg_loop` bodies use). A mask that is always true is dropped
from its load; a load whose mask is always false is its `other` value.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, ModuleOp, i1
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from picograd.dialects import pg_loop as L
from picograd.dialects import pg_uop
from picograd.dialects.pg import BinaryKind, CmpKind
from picograd.dialects.syntax import scalar_value
from picograd.passes.loop.bounds import bounds, is_within
from picograd.passes.rules import Const, Op, Pattern, Rule, RuleSet, Var
from picograd.passes.rules.scalar import wrap

ADD, SUB, MUL, DIV, MOD = (BinaryKind.ADD, BinaryKind.SUB, BinaryKind.MUL, BinaryKind.DIV,
                           BinaryKind.MOD)
MAX, MIN = BinaryKind.MAX, BinaryKind.MIN


def idx(kind: BinaryKind | tuple[BinaryKind, ...] | None, lhs: Pattern, rhs: Pattern, *,
        name: str | None = None) -> Op:
    return Op(L.IndexOp, lhs, rhs, kind=kind, name=name)


# ── replacements ─────────────────────────────────────────────────────────────


def index_const(value: int) -> Operation:
    return L.ConstOp(wrap(value, IndexType()))


def bool_const(value: bool) -> Operation:
    return pg_uop.ConstOp(value, i1)


def scaled(x: SSAValue, k: int) -> SSAValue | Operation:
    return x if k == 1 else L.IndexOp(MUL, x, index_const(k))


def fold_index(op: L.IndexOp, a: int, b: int) -> Operation | None:
    kind = op.kind.data
    if kind in (DIV, MOD) and b <= 0:  # pg_loop only divides by positive sizes
        return None
    results = {ADD: a + b, SUB: a - b, MUL: a * b, MAX: max(a, b), MIN: min(a, b)}
    if kind == DIV:
        return index_const(a // b)
    return index_const(a % b if kind == MOD else results[kind])


def decide_cmp(op: L.CmpOp) -> Operation | None:
    """`true`/`false` when the operands' bounds decide the comparison."""
    a, b = bounds(op.lhs), bounds(op.rhs)
    if a is None or b is None:
        return None
    kind = op.kind.data
    if kind in (CmpKind.GT, CmpKind.GE):  # a > b is b < a
        a, b, kind = b, a, CmpKind.LT if kind == CmpKind.GT else CmpKind.LE
    decided = {
        CmpKind.LT: (a[1] < b[0], a[0] >= b[1]),
        CmpKind.LE: (a[1] <= b[0], a[0] > b[1]),
        CmpKind.EQ: (a[0] == a[1] == b[0] == b[1], a[1] < b[0] or b[1] < a[0]),
        CmpKind.NE: (a[1] < b[0] or b[1] < a[0], a[0] == a[1] == b[0] == b[1]),
    }
    always, never = decided[kind]
    return bool_const(True) if always else bool_const(False) if never else None


def load_other(op: L.LoadOp) -> Operation:
    assert op.other is not None  # the pattern matched a masked load
    return pg_uop.ConstOp(scalar_value(op.other), op.result.type)


# ── the rule table ───────────────────────────────────────────────────────────

x, y, buf, i = Var("x"), Var("y"), Var("buf"), Var("i")
a, b, c, d = Const(name="a"), Const(name="b"), Const(name="c"), Const(name="d")
zero, one = Const(0), Const(1)

def positive(c: int) -> bool:
    return c > 0


def divides(a: int, c: int) -> bool:
    """c > 0 divides a."""
    return c > 0 and a % c == 0


def below(x: SSAValue, c: int) -> bool:
    """0 <= x < c for every value of x."""
    return is_within(x, 0, c - 1)


def row_block(x: SSAValue, a: int, c: int) -> bool:
    """0 <= x < a, and a > 0 divides c > 0: `x` is a position within a row of length a, and
    c spans whole rows."""
    return a > 0 and c > 0 and c % a == 0 and below(x, a)


def ix(kind: BinaryKind, lhs: SSAValue | Operation, rhs: SSAValue | Operation) -> Operation:
    return L.IndexOp(kind, lhs, rhs)


k = index_const

loop_simplify_rules = RuleSet("loop-simplify", [
    # ── constant folding and identities ──
    Rule(idx(None, a, b, name="op"), fold_index),                            # a op b -> const
    Rule(idx((ADD, SUB), x, zero), lambda x: x),                             # x+0, x-0 -> x
    Rule(idx(SUB, x, x), lambda: k(0)),                                      # x-x -> 0
    Rule(idx(MUL, x, one), lambda x: x),                                     # x*1 -> x
    Rule(idx(MUL, x, zero), lambda: k(0)),                                   # x*0 -> 0
    Rule(idx(DIV, x, one), lambda x: x),                                     # x//1 -> x
    Rule(idx(MOD, x, one), lambda: k(0)),                                    # x%1 -> 0
    Rule(idx((MAX, MIN), x, x), lambda x: x),                                # max(x,x) -> x
    Rule(idx(ADD, idx(ADD, x, a), b), lambda x, a, b: ix(ADD, x, k(a + b))),  # (x+a)+b -> x+(a+b)
    Rule(idx(MUL, idx(MUL, x, a), b), lambda x, a, b: scaled(x, a * b)),     # (x*a)*b -> x*(a*b)
    # ── division by positive constants (floor semantics) ──
    Rule(idx(DIV, idx(MUL, x, a), c), lambda x, a, c: scaled(x, a // c),     # (x*a)//c -> x*(a/c)
         where=divides),                                                     #   if c | a
    Rule(idx(MOD, idx(MUL, x, a), c), lambda: k(0), where=divides),          # (x*a)%c -> 0 if c | a
    Rule(idx(DIV, idx(ADD, x, idx(MUL, y, c)), c),                           # (x+y*c)//c -> x//c+y
         lambda x, y, c: ix(ADD, ix(DIV, x, k(c)), y), where=positive),
    Rule(idx(MOD, idx(ADD, x, idx(MUL, y, c)), c),                           # (x+y*c)%c -> x%c
         lambda x, c: ix(MOD, x, k(c)), where=positive),
    # a row index scaled by a row length a, read back c = a*m at a time (m rows): the rows
    # an LSTM's half-swapped gates pick, (i*256 + j) // 512 for j < 256
    Rule(idx(DIV, idx(ADD, idx(MUL, y, a), x), c),                           # (y*a+x)//c -> y//m
         lambda y, a, c: ix(DIV, y, k(c // a)), where=row_block),            #   if 0<=x<a, c=a*m
    Rule(idx(MOD, idx(ADD, idx(MUL, y, a), x), c),                           # (y*a+x)%c
         lambda x, y, a, c: ix(ADD, ix(MUL, ix(MOD, y, k(c // a)), k(a)), x),  # -> (y%m)*a+x
         where=row_block),
    Rule(idx(DIV, idx(DIV, x, a), c), lambda x, a, c: ix(DIV, x, k(a * c)),  # (x//a)//c -> x//(a*c)
         where=lambda a, c: a > 0 and c > 0),
    Rule(idx(MOD, idx(MOD, x, a), c), lambda x, c: ix(MOD, x, k(c)),         # (x%a)%c -> x%c
         where=lambda a, c: a > 0 and divides(a, c)),                        #   if c | a
    # x == (x//a)*a + x%a and x%(a*b) == ((x//a)%b)*a + x%a: the terms a reshape splits an
    # index into, added back together (in a sum `y + ...`, as views build them)
    Rule(idx(ADD, idx(ADD, y, idx(MUL, idx(DIV, x, a), a)), idx(MOD, x, a)),  # y+(x//a)*a+x%a
         lambda x, y: ix(ADD, y, x), where=lambda a: a > 0),                 #   -> y+x
    Rule(idx(ADD, idx(MUL, idx(DIV, x, a), a), idx(MOD, x, a)),              # (x//a)*a+x%a -> x
         lambda x: x, where=lambda a: a > 0),
    Rule(idx(ADD, idx(ADD, y, idx(MUL, idx(MOD, idx(DIV, x, a), b), a)),     # y+((x//a)%b)*a+x%a
             idx(MOD, x, a)),                                                #   -> y+x%(a*b)
         lambda x, y, a, b: ix(ADD, y, ix(MOD, x, k(a * b))),
         where=lambda a, b: a > 0 and b > 0),
    Rule(idx(ADD, idx(MUL, idx(MOD, idx(DIV, x, a), b), a), idx(MOD, x, a)),  # ((x//a)%b)*a+x%a
         lambda x, a, b: ix(MOD, x, k(a * b)), where=lambda a, b: a > 0 and b > 0),
    # the same pieces scaled by a row length d (a (B, n) grid of rows of length d, flattened
    # back to B*n rows: a batched matmul's operand): (x//a)*(a*d) + (x%a)*d == x*d
    Rule(idx(ADD, idx(ADD, y, idx(MUL, idx(DIV, x, a), c)),                  # y+(x//a)*(a*d)
             idx(MUL, idx(MOD, x, a), d)),                                   #   +(x%a)*d
         lambda x, y, d: ix(ADD, y, scaled(x, d)),                           #   -> y+x*d
         where=lambda a, c, d: a > 0 and c == a * d),
    Rule(idx(ADD, idx(MUL, idx(DIV, x, a), c), idx(MUL, idx(MOD, x, a), d)),  # (x//a)*(a*d)
         lambda x, d: scaled(x, d), where=lambda a, c, d: a > 0 and c == a * d),  # +(x%a)*d -> x*d
    Rule(idx(DIV, x, c), lambda: k(0), where=below),                         # x//c -> 0  if 0<=x<c
    Rule(idx(MOD, x, c), lambda x: x, where=below),                          # x%c -> x   if 0<=x<c
    # ── masks ──
    Rule(Op(L.CmpOp, x, y, name="op"), decide_cmp),                          # x<y -> true/false
    Rule(Op(L.AndOp, one, x, commutative=True), lambda x: x),                # true & m -> m
    Rule(Op(L.AndOp, zero, x, commutative=True), lambda: bool_const(False)),  # false&m -> false
    Rule(Op(L.AndOp, x, x), lambda x: x),                                    # m & m -> m
    Rule(Op(L.LoadOp, buf, i, one), lambda buf, i: L.LoadOp(buf, i)),        # load if true -> load
    Rule(Op(L.LoadOp, buf, i, zero, name="op"), load_other),                 # load if false -> else
])


@dataclass(frozen=True)
class LoopSimplifyPass(ModulePass):
    """Simplify index arithmetic, comparisons and masks in `pg_loop` kernels, to a fixpoint.

    Input: `pg_loop` kernels (stage 3). Output: the same dialects, plus `pg_uop.const` of
    `i1` where a comparison was decided. Options: `max_iterations` (walks before
    `RewriteLimitError`).
    Guarantee: every store writes the same value to the same element as before, for every
    input; no `pg_loop.index/cmp` of constants remains; no load keeps a constant mask;
    dead pure ops are erased.
    """

    name = "loop-simplify"

    max_iterations: int = 50

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        loop_simplify_rules.apply(op, max_iterations=self.max_iterations)
