"""The declarative rewrite engine: rules as data, compiled to one xDSL pattern per rule set.

    from picograd.passes.rules import Const, Op, OpFamily, Rule, RuleSet, Var

    x = Var("x")
    fold = RuleSet("demo", [
        Rule(Op(BinaryOp, x, Const(1), kind=BinaryKind.MUL), lambda x: x),   # x*1 -> x
    ])
    fold.apply(module)          # to a fixpoint; RewriteLimitError if the rules cycle

`pattern` holds the match templates, `engine` the rules and the driver, `scalar` the exact
constant arithmetic, `algebra` the elementwise rule table shared by two stages.
"""

from picograd.passes.rules.engine import (
    REWRITE_TRACER,
    RewriteLimitError,
    Rule,
    RuleError,
    RuleSet,
    trace_rewrites,
)
from picograd.passes.rules.pattern import (
    ANY,
    COMMUTATIVE_KINDS,
    Const,
    Op,
    OpFamily,
    Pattern,
    Var,
    constant_scalar,
    same_number,
)

__all__ = [
    "ANY", "COMMUTATIVE_KINDS", "REWRITE_TRACER", "Const", "Op", "OpFamily", "Pattern",
    "RewriteLimitError", "Rule", "RuleError", "RuleSet", "Var", "constant_scalar",
    "same_number", "trace_rewrites",
]
