"""The rule engine: matching, captures, guards, insertion of new ops, dispatch, the limit."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp, f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser

from picograd.dialects import make_context, pg_uop
from picograd.dialects.pg import BinaryKind, UnaryKind
from picograd.passes.rules import (
    Const,
    Op,
    OpFamily,
    RewriteLimitError,
    Rule,
    RuleSet,
    Var,
    trace_rewrites,
)

U = OpFamily(unary=pg_uop.UnaryOp, binary=pg_uop.BinaryOp, cmp=pg_uop.CmpOp,
             where=pg_uop.WhereOp, cast=pg_uop.CastOp)
ADD, MUL, SUB = BinaryKind.ADD, BinaryKind.MUL, BinaryKind.SUB
x, y = Var("x"), Var("y")

mul_one = Rule(U.binary(MUL, x, Const(1)), lambda x: x)  # x*1 -> x


def parse(body: str, args: str = "%x: f32, %y: f32", result: str = "f32") -> ModuleOp:
    text = f"func.func @f({args}) -> {result} {{\n{body}\n}}"
    return Parser(make_context(), text).parse_module()


def ops_of(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("pg_uop.")]


def returned(module: ModuleOp) -> SSAValue:
    ret = next(op for op in module.walk() if op.name == "func.return")
    return ret.operands[0]


def arg(module: ModuleOp, n: int) -> SSAValue:
    func = next(op for op in module.walk() if op.name == "func.func")
    return func.regions[0].block.args[n]


def test_rule_id_is_file_and_line_and_identity_is_the_comment():
    assert mul_one.id.endswith("test_rules.py:28")
    assert mul_one.identity == "x*1 -> x"


@pytest.mark.parametrize("expr", ["mul %x, %one", "mul %one, %x"])
def test_commutative_kind_matches_both_operand_orders(expr: str):
    m = parse(f"%one = pg_uop.const 1.0 : f32\n%r = pg_uop.binary {expr} : f32\n"
              "func.return %r : f32")
    assert RuleSet("t", [mul_one]).apply(m) == 1
    assert returned(m) is arg(m, 0)
    assert ops_of(m) == []  # the dead constant went too


def test_non_commutative_kind_is_not_swapped():
    rule = Rule(U.binary(SUB, x, Const(0)), lambda x: x)  # x-0 -> x
    m = parse("%z = pg_uop.const 0.0 : f32\n%r = pg_uop.binary sub %z, %x : f32\n"
              "func.return %r : f32")
    assert RuleSet("t", [rule]).apply(m) == 0


@pytest.mark.parametrize(("literal", "pattern_value", "matches"), [
    ("0.0", 0, True), ("-0.0", 0, False), ("-0.0", -0.0, True), ("0.0", -0.0, False),
    ("nan", float("nan"), True), ("1.0", 1, True),
])
def test_const_values_tell_signed_zeros_apart(literal: str, pattern_value: float,
                                              matches: bool):
    rule = Rule(U.binary(ADD, x, Const(pattern_value)), lambda x: x)  # x+c -> x (test only)
    m = parse(f"%c = pg_uop.const {literal} : f32\n%r = pg_uop.binary add %x, %c : f32\n"
              "func.return %r : f32")
    assert RuleSet("t", [rule]).apply(m) == int(matches)


def test_bool_true_matches_const_one():
    rule = Rule(Op(pg_uop.WhereOp, Const(1), x, y), lambda x: x)  # where(true, x, y) -> x
    m = parse("%t = pg_uop.const 1 : i1\n%r = pg_uop.where %t, %x, %y : f32\nfunc.return %r : f32")
    assert RuleSet("t", [rule]).apply(m) == 1
    assert returned(m) is arg(m, 0)


def test_repeated_name_must_bind_the_same_value():
    rule = Rule(U.where(Var("c"), x, x), lambda x: x)  # where(c, x, x) -> x
    body = "%c = pg_uop.cmp lt %x, %y : f32\n%r = pg_uop.where %c, {} : f32\nfunc.return %r : f32"
    same, different = parse(body.format("%x, %x")), parse(body.format("%x, %y"))
    assert RuleSet("t", [rule]).apply(same) == 1
    assert RuleSet("t", [rule]).apply(different) == 0


def test_guard_decides_and_const_captures_are_numbers():
    rule = Rule(U.binary(MUL, x, Const(name="c")), lambda x: x, where=lambda c: c == 2)  # test
    two = parse("%c = pg_uop.const 2.0 : f32\n%r = pg_uop.binary mul %x, %c : f32\n"
                "func.return %r : f32")
    three = parse("%c = pg_uop.const 3.0 : f32\n%r = pg_uop.binary mul %x, %c : f32\n"
                  "func.return %r : f32")
    assert RuleSet("t", [rule]).apply(two) == 1
    assert RuleSet("t", [rule]).apply(three) == 0


def test_functions_may_only_name_captured_values():
    with pytest.raises(TypeError, match="'z'"):
        Rule(U.binary(MUL, x, y), lambda z: z)
    with pytest.raises(TypeError, match="root pattern"):
        Rule(x, lambda x: x)  # type: ignore[arg-type]


def test_new_ops_built_from_new_ops_are_inserted_in_order():
    # The replacement is a new op whose operands are new ops and new constants.
    def rebuild(x: SSAValue) -> Operation:
        two = pg_uop.ConstOp(2, i32)
        return pg_uop.BinaryOp(ADD, pg_uop.BinaryOp(MUL, x, two), pg_uop.ConstOp(0, i32))

    rule = Rule(U.binary(SUB, x, Const(7)), rebuild)  # x-7 -> x*2+0 (test only)
    m = parse("%c = pg_uop.const 7 : i32\n%r = pg_uop.binary sub %x, %c : i32\n"
              "func.return %r : i32", args="%x: i32", result="i32")
    RuleSet("t", [rule]).apply(m)
    m.verify()
    assert ops_of(m) == ["pg_uop.const", "pg_uop.binary", "pg_uop.const", "pg_uop.binary"]


def test_rules_are_indexed_by_op_class():
    calls: list[str] = []

    def never(x: SSAValue) -> None:
        calls.append("unary")

    rs = RuleSet("t", [Rule(U.unary(UnaryKind.NEG, x), never), mul_one])  # test only
    assert set(rs.table) == {pg_uop.UnaryOp, pg_uop.BinaryOp}
    m = parse("%one = pg_uop.const 1.0 : f32\n%r = pg_uop.binary mul %x, %one : f32\n"
              "func.return %r : f32")
    rs.apply(m)
    assert calls == []


def test_a_tuple_of_op_classes_registers_each():
    rule = Rule(Op((pg_uop.UnaryOp, pg_uop.CastOp), Const(name="a"), name="op"),
                lambda op: None)  # never rewrites
    assert set(RuleSet("t", [rule]).table) == {pg_uop.UnaryOp, pg_uop.CastOp}


def test_cycling_rules_raise_naming_the_rules():
    swap = Rule(U.binary(ADD, x, y), lambda x, y: pg_uop.BinaryOp(ADD, y, x))  # x+y -> y+x
    m = parse("%r = pg_uop.binary add %x, %y : f32\nfunc.return %r : f32")
    with pytest.raises(RewriteLimitError) as err:
        RuleSet("swapper", [swap]).apply(m, max_iterations=5)
    assert swap.id in str(err.value) and "swapper" in str(err.value)
    assert set(err.value.fired) == {swap.id}


def test_tracer_sees_every_rewrite():
    seen: list[tuple[str, str]] = []
    m = parse("%one = pg_uop.const 1.0 : f32\n%a = pg_uop.binary mul %x, %one : f32\n"
              "%b = pg_uop.binary mul %one, %a : f32\nfunc.return %b : f32")
    with trace_rewrites(lambda rule, op, new: seen.append((rule.identity, op.name))):
        RuleSet("t", [mul_one]).apply(m)
    assert seen == [("x*1 -> x", "pg_uop.binary")] * 2


def test_a_replacement_of_another_type_is_an_error():
    bad = Rule(U.cast(x, name="op"), lambda x: x)  # cast x -> x, wrong when types differ
    m = parse("%r = pg_uop.cast %x : f32 to i32\nfunc.return %r : i32", args="%x: f32",
              result="i32")
    with pytest.raises(Exception, match="replaced a i32 by a f32"):
        RuleSet("t", [bad]).apply(m)


def test_unused_pure_ops_are_erased_but_not_effects():
    m = parse("%a = pg_uop.binary add %x, %y : f32\n%s = pg_uop.const 1.0 : f32\n"
              "func.return %x : f32")
    RuleSet("t", [mul_one]).apply(m)
    assert ops_of(m) == []
    assert f32 == returned(m).type
