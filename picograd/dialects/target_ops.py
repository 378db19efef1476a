"""Bases of the value ops that the source-printing targets spell as operators and calls.

`pg_c` and `pg_wgsl` print each value op as one source expression, so their ops name the
operator or function as a string (`pg_c.binary "+"`, `pg_wgsl.call "exp"`) and check it
against the operand type; `select` and `cast` are also `pg_uop.where` / `pg_uop.cast`.

    %y = <dialect>.unary "-" %x : f32          UnaryOperatorOp
    %y = <dialect>.call "exp"(%x) : f32        UnaryCallOp
    %z = <dialect>.binary "+" %x, %y : f32     BinaryOperatorOp
    %m = <dialect>.cmp "<" %x, %y : f32        ComparisonOp
    %r = <dialect>.select %c, %x, %y : f32     SelectionOp
    %r = <dialect>.cast %x : f32 to i32        ConversionOp

As in `flat_ops`, a base declares the IRDL fields (operands, results, properties, traits and
assembly format) its ops share and gives them `__init__` and the checks; an op declares its
name, docstring and IR example, and the tables its base reads (`OPERATORS`, ...).
`check_scalar(t)` is the dialect's test that a value type is one of its scalars: a dialect
op gets it from a dialect mixin listed before the base (`_CValueOp`); by default every
type passes. `T` constrains the operands and result that must have one type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from picograd.dialects.dtypes import is_bool, is_float
from picograd.dialects.flat_ops import fail

# The one type of the operands and result of an op that computes in one type.
T = VarConstraint("T", AnyAttr())


class ScalarValueOp(IRDLOperation):
    """A pure value op whose operand and result types are the dialect's scalars."""

    traits = traits_def(Pure())

    def check_scalar(self, t: Attribute) -> None:
        """Raise a verifier error unless `t` is one of the dialect's scalar types."""


class UnaryOperatorOp(ScalarValueOp):
    """`%y = <dialect>.unary "-" %x : T`. The op declares `OPERATORS`: each operator, with
    the test of the types it takes."""

    OPERATORS: ClassVar[Mapping[str, Callable[[Attribute], bool]]]

    operator = prop_def(StringAttr)
    input = operand_def(T)
    result = result_def(T)
    assembly_format = "$operator $input attr-dict `:` type($result)"

    def __init__(self, operator: str, x: SSAValue | Operation):
        x = SSAValue.get(x)
        super().__init__(properties={"operator": StringAttr(operator)}, operands=[x],
                         result_types=[x.type])

    def verify_(self) -> None:
        operator = self.properties["operator"]
        assert isinstance(operator, StringAttr)
        operator, t = operator.data, self.operands[0].type
        self.check_scalar(t)
        if operator not in self.OPERATORS:
            raise fail(self, f"unknown prefix operator {operator!r} "
                             f"(one of {' '.join(self.OPERATORS)})")
        if not self.OPERATORS[operator](t):
            raise fail(self, f"{operator!r} is not defined on {t}")


class UnaryCallOp(ScalarValueOp):
    """`%y = <dialect>.call "exp"(%x) : T`: a built-in function of one value. The op checks
    which functions take which type."""

    callee = prop_def(StringAttr)
    input = operand_def(T)
    result = result_def(T)
    assembly_format = "$callee `(` $input `)` attr-dict `:` type($result)"

    def __init__(self, callee: str, x: SSAValue | Operation):
        x = SSAValue.get(x)
        super().__init__(properties={"callee": StringAttr(callee)}, operands=[x],
                         result_types=[x.type])


class BinaryOperatorOp(ScalarValueOp):
    """`%z = <dialect>.binary "+" %x, %y : T`. The op declares the operators it has on
    floats, bools and integers."""

    FLOAT_OPERATORS: ClassVar[tuple[str, ...]]
    BOOL_OPERATORS: ClassVar[tuple[str, ...]]
    INT_OPERATORS: ClassVar[tuple[str, ...]]

    operator = prop_def(StringAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    assembly_format = "$operator $lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, operator: str, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(properties={"operator": StringAttr(operator)}, operands=[lhs, rhs],
                         result_types=[lhs.type])

    def verify_(self) -> None:
        operator = self.properties["operator"]
        assert isinstance(operator, StringAttr)
        operator, t = operator.data, self.operands[0].type
        self.check_scalar(t)
        allowed = (self.FLOAT_OPERATORS if is_float(t) else self.BOOL_OPERATORS if is_bool(t)
                   else self.INT_OPERATORS)
        if operator not in allowed:
            raise fail(self, f"{operator!r} is not defined on {t} (one of {' '.join(allowed)})")


class ComparisonOp(ScalarValueOp):
    """`%m = <dialect>.cmp "<" %x, %y : T`: a comparison giving a bool (i1). The op checks
    the operator."""

    operator = prop_def(StringAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(i1)
    assembly_format = "$operator $lhs `,` $rhs attr-dict `:` type($lhs)"

    def __init__(self, operator: str, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(properties={"operator": StringAttr(operator)}, operands=[lhs, rhs],
                         result_types=[i1])


class SelectionOp(ScalarValueOp):
    """`%r = <dialect>.select %c, %x, %y : T`: x where the bool c holds, else y."""

    cond = operand_def(i1)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, cond: SSAValue | Operation, lhs: SSAValue | Operation,
                 rhs: SSAValue | Operation):
        super().__init__(operands=[cond, lhs, rhs], result_types=[SSAValue.get(lhs).type])

    def verify_(self) -> None:
        self.check_scalar(self.operands[1].type)


class ConversionOp(ScalarValueOp):
    """`%r = <dialect>.cast %x : f32 to i32`: a value conversion (cast, bitcast) of one
    operand to one result; the subclasses name it and may verify more."""

    input = operand_def(AnyAttr())
    result = result_def(AnyAttr())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, x: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[x], result_types=[result_type])

    def verify_(self) -> None:
        self.check_scalar(self.operands[0].type)
        self.check_scalar(self.results[0].type)
