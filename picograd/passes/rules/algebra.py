"""Elementwise algebra shared by `tensor-simplify` and `uop-simplify`.

`pg_tensor` ops work on splat-constant tensors and `pg_uop` ops on scalars, but both have
the same unary / binary / cmp / where / cast ops and the same C semantics, so one rule
table, instantiated per `OpFamily`, serves both. Every identity is exact for every input:
float rules are limited to the ones IEEE arithmetic keeps bit for bit (`x+(-0.0) -> x` is,
`x+0.0 -> x` is not: it turns -0.0 into 0.0; `x*0 -> 0` is not: inf*0 is NaN).
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from picograd.dialects import pg_tensor, pg_uop
from picograd.dialects.dtypes import is_bool, is_float, is_int
from picograd.dialects.pg import BinaryKind, UnaryKind
from picograd.passes.rules import scalar
from picograd.passes.rules.engine import Rule
from picograd.passes.rules.pattern import Const, OpFamily, Var

ADD, SUB, MUL, DIV, MOD = (BinaryKind.ADD, BinaryKind.SUB, BinaryKind.MUL, BinaryKind.DIV,
                           BinaryKind.MOD)
AND, OR, XOR, MAX, MIN = (BinaryKind.AND, BinaryKind.OR, BinaryKind.XOR, BinaryKind.MAX,
                          BinaryKind.MIN)
NEG, NOT = UnaryKind.NEG, UnaryKind.NOT


# ── building values like an existing one (tensor or scalar) ──────────────────


def elem(v: SSAValue) -> Attribute:
    """The element type of a tensor value, or the type of a scalar."""
    return v.type.element_type if isinstance(v.type, TensorType) else v.type


def const_like(v: SSAValue, value: float | int) -> Operation:
    """A constant of `v`'s type (a splat tensor at stage 1, a scalar at stage 4)."""
    if isinstance(v.type, TensorType):
        return pg_tensor.ConstOp(value, v.type)
    return pg_uop.ConstOp(value, v.type)


def cast_like(x: SSAValue, like: SSAValue) -> Operation:
    """`x` cast to `like`'s type."""
    if isinstance(like.type, TensorType):
        return pg_tensor.CastOp(x, elem(like))
    return pg_uop.CastOp(x, like.type)


def zero_like(x: SSAValue) -> Operation:
    return const_like(x, 0)


def one_like(x: SSAValue) -> Operation:
    return const_like(x, 1)


def is_integer(x: SSAValue) -> bool:
    return is_int(elem(x))


def is_boolean(x: SSAValue) -> bool:
    return is_bool(elem(x))


def not_float(x: SSAValue) -> bool:
    return not is_float(elem(x))


# ── folders ──────────────────────────────────────────────────────────────────


def _const_or_none(like: SSAValue, value: float | int | None) -> Operation | None:
    return None if value is None else const_like(like, value)


def fold_unary(op: Operation, a: float | int) -> Operation | None:
    kind = op.properties["kind"].data  # type: ignore[attr-defined]
    return _const_or_none(op.results[0], scalar.unary(kind, a, elem(op.operands[0])))


def fold_binary(op: Operation, a: float | int, b: float | int) -> Operation | None:
    kind = op.properties["kind"].data  # type: ignore[attr-defined]
    return _const_or_none(op.results[0], scalar.binary(kind, a, b, elem(op.operands[0])))


def fold_cmp(op: Operation, a: float | int, b: float | int) -> Operation:
    kind = op.properties["kind"].data  # type: ignore[attr-defined]
    return const_like(op.results[0], scalar.compare(kind, a, b, elem(op.operands[0])))


def fold_cast(op: Operation, a: float | int) -> Operation | None:
    result = scalar.cast(a, elem(op.operands[0]), elem(op.results[0]))
    return _const_or_none(op.results[0], result)


def skip_inner_cast(op: Operation, x: SSAValue) -> SSAValue | Operation:
    return x if x.type == op.results[0].type else cast_like(x, op.results[0])


def exact_cast(inner: Operation) -> bool:
    return scalar.is_lossless(elem(inner.operands[0]), elem(inner.results[0]))


def bool_result(op: Operation) -> bool:
    return is_bool(elem(op.results[0]))


def same_type(op: Operation, x: SSAValue) -> bool:
    return op.results[0].type == x.type


# ── the rule table ───────────────────────────────────────────────────────────


def algebra_rules(F: OpFamily) -> list[Rule]:
    """Constant folding and exact identities over the elementwise ops of family `F`."""
    x, y, c = Var("x"), Var("y"), Var("c")
    a, b = Const(name="a"), Const(name="b")
    zero, one = Const(0), Const(1)
    return [
        # ── constant folding ──
        Rule(F.unary(None, a, name="op"), fold_unary),                  # f(a) -> const
        Rule(F.binary(None, a, b, name="op"), fold_binary),             # a op b -> const
        Rule(F.cmp(None, a, b, name="op"), fold_cmp),                   # a cmp b -> const
        Rule(F.cast(a, name="op"), fold_cast),                          # cast(a) -> const
        Rule(F.where(one, x, y), lambda x: x),                          # where(true, x, y) -> x
        Rule(F.where(zero, x, y), lambda y: y),                         # where(false, x, y) -> y
        # ── identities (commutative kinds also match the mirrored form) ──
        Rule(F.binary(ADD, x, zero), lambda x: x, where=not_float),     # x+0 -> x  (not floats)
        Rule(F.binary(ADD, x, Const(-0.0)), lambda x: x),               # x+(-0.0) -> x
        Rule(F.binary(SUB, x, zero), lambda x: x),                      # x-0 -> x  (x-(+0.0) too)
        Rule(F.binary(MUL, x, one), lambda x: x),                       # x*1 -> x
        Rule(F.binary(MUL, x, zero), zero_like, where=is_integer),      # x*0 -> 0  (ints)
        Rule(F.binary(DIV, x, one), lambda x: x),                       # x/1 -> x
        Rule(F.binary(MOD, x, one), zero_like),                         # x%1 -> 0
        Rule(F.binary((OR, XOR), x, zero), lambda x: x),                # x|0, x^0 -> x
        Rule(F.binary(AND, x, zero), zero_like),                        # x&0 -> 0
        Rule(F.binary(AND, x, one), lambda x: x, where=is_boolean),     # x&true -> x
        Rule(F.binary(OR, x, one), one_like, where=is_boolean),         # x|true -> true
        Rule(F.binary((AND, OR, MAX, MIN), x, x), lambda x: x),         # x&x, max(x,x) -> x
        Rule(F.binary((SUB, XOR), x, x), zero_like, where=not_float),   # x-x, x^x -> 0 (no floats)
        Rule(F.unary(NEG, F.unary(NEG, x)), lambda x: x),               # -(-x) -> x
        Rule(F.unary(NOT, F.unary(NOT, x)), lambda x: x),               # not(not x) -> x
        Rule(F.where(c, x, x), lambda x: x),                            # where(c, x, x) -> x
        Rule(F.where(c, one, zero, name="op"), lambda c: c, where=bool_result),  # c?1:0 -> c
        Rule(F.cast(x, name="op"), lambda x: x, where=same_type),       # cast to own type -> x
        Rule(F.cast(F.cast(x, name="inner"), name="op"), skip_inner_cast,  # cast(cast x) -> cast x
             where=exact_cast),                                         #   (inner cast exact)
    ]
