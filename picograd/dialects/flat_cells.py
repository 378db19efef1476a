"""Literals and mutable cells of the flat-kernel dialects: the bases of their ops.

`pg_uop`, `pg_c`, `pg_wgsl` and `pg_ptx` (see `flat_ops`) spell these alike:

    %c = <dialect>.const 1.5 : f32                            ConstSyntax
    %acc = <dialect>.<declare> 0.0 : f32                      CellDeclSyntax
    %v = <dialect>.<read> %acc : f32                          CellReadSyntax
    <dialect>.<write> %acc, %v : f32                          CellWriteSyntax

A cell is a mutable local or register holding one scalar (`!pg_c.var<f32>`,
`!pg_wgsl.var<f32>`, `!pg_uop.acc<f32>`, `!pg_ptx.reg<f32>`: subclasses of `CellType`).
Each base declares the IRDL fields its ops share; a cell op declares the one field of its
dialect's cell type (the declared cell, or the cell operand, by the dialect's name for it:
`var`, `acc`, `reg`) with its `CELL_TYPE`. Error messages keep each dialect's words
("variable", "register") through `CELL_NOUN`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import AnyAttr, IRDLOperation, operand_def, prop_def, result_def, traits_def
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure

from picograd.dialects.dtypes import lane_type
from picograd.dialects.flat_ops import fail
from picograd.dialects.syntax import parse_number, print_number, scalar_attr, scalar_value

# ── literals ─────────────────────────────────────────────────────────────────


def _parse_literal(cls: Any, parser: Parser) -> Any:
    """`1.5 : f32 attr-dict`, built as `cls(1.5, f32)`."""
    value = parse_number(parser)
    parser.parse_punctuation(":")
    op = cls(value, parser.parse_type())
    op.attributes.update(parser.parse_optional_attr_dict())
    return op


def _print_literal(printer: Printer, op: Operation, value: Attribute, t: Attribute) -> None:
    printer.print_string(" ")
    print_number(printer, scalar_value(value))
    printer.print_string(" : ")
    printer.print_attribute(t)
    printer.print_op_attributes(op.attributes)


class ConstSyntax(IRDLOperation):
    """`%c = <dialect>.const 1.5 : f32`: a literal of the result type, a pure constant."""

    value = prop_def(FloatAttr | IntegerAttr)
    result = result_def(AnyAttr())
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: float | int | bool, result_type: Attribute):
        super().__init__(properties={"value": scalar_attr(value, result_type)},
                         result_types=[result_type])

    @property
    def scalar(self) -> float | int:
        return scalar_value(self.properties["value"])

    def verify_(self) -> None:
        value_type = self.properties["value"].type  # pyright: ignore[reportAttributeAccessIssue]
        result_type = self.results[0].type
        if value_type != result_type:
            raise fail(self, f"value type {value_type} != result type {result_type}")

    @classmethod
    def parse(cls, parser: Parser) -> ConstSyntax:
        return _parse_literal(cls, parser)

    def print(self, printer: Printer) -> None:
        _print_literal(printer, self, self.properties["value"], self.results[0].type)


# ── cells: mutable locals and registers ──────────────────────────────────────


class CellType(ParametrizedAttribute, TypeAttribute):
    """A mutable cell holding one scalar, `!<dialect>.<name><f32>`. A dialect's cell type
    subclasses it, names itself and is defined with `@irdl_attr_definition(init=False)` (else
    type checkers give it a dataclass `__init__` without the element type)."""

    element_type: Attribute

    def __init__(self, element_type: Attribute):
        super().__init__(element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (parser.parse_type(),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)


def check_cell(op: Operation, cell: SSAValue, value_type: Attribute, what: str,
               noun: str) -> None:
    """`value_type` is what `cell` holds, else `<what> type i32 != <noun> type f32`."""
    assert isinstance(cell.type, CellType)
    if cell.type.element_type != value_type:
        raise fail(op, f"{what} type {value_type} != {noun} type {cell.type.element_type}")


class CellDeclSyntax(IRDLOperation):
    """`%acc = <dialect>.<declare> 0.0 : f32`: a new cell holding `init`. The op declares
    `result`, of its `CELL_TYPE`."""

    CELL_TYPE: ClassVar[type[CellType]]
    CELL_NOUN: ClassVar[str]  # "variable" or "register", in messages

    init = prop_def(FloatAttr | IntegerAttr)

    def __init__(self, init: float | int | bool, element_type: Attribute):
        # a cell holding a vector (pg_uop) starts with `init` in every lane
        super().__init__(properties={"init": scalar_attr(init, lane_type(element_type))},
                         result_types=[self.CELL_TYPE(element_type)])

    @property
    def element_type(self) -> Attribute:
        cell = self.results[0].type
        assert isinstance(cell, CellType)
        return cell.element_type

    def verify_(self) -> None:
        init_type = self.properties["init"].type  # pyright: ignore[reportAttributeAccessIssue]
        if init_type != lane_type(self.element_type):
            raise fail(self, f"init type {init_type} != {self.CELL_NOUN} type "
                             f"{self.element_type}")

    @classmethod
    def parse(cls, parser: Parser) -> CellDeclSyntax:
        return _parse_literal(cls, parser)

    def print(self, printer: Printer) -> None:
        _print_literal(printer, self, self.properties["init"], self.element_type)


class CellReadSyntax(IRDLOperation):
    """`%v = <dialect>.<read> %acc : f32`: a fresh value holding what the cell holds. The op
    declares the cell operand, of its `CELL_TYPE`."""

    CELL_TYPE: ClassVar[type[CellType]]
    CELL_NOUN: ClassVar[str]

    result = result_def(AnyAttr())

    def __init__(self, cell: SSAValue):
        assert isinstance(cell.type, CellType)
        super().__init__(operands=[cell], result_types=[cell.type.element_type])

    def verify_(self) -> None:
        check_cell(self, self.operands[0], self.results[0].type, "value", self.CELL_NOUN)

    @classmethod
    def parse(cls, parser: Parser) -> CellReadSyntax:
        cell = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        cell_type = cls.CELL_TYPE(parser.parse_type())
        (value,) = parser.resolve_operands([cell], [cell_type], parser.pos)
        op = cls(value)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.operands[0])
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.results[0].type)


class CellWriteSyntax(IRDLOperation):
    """`<dialect>.<write> %acc, %v : f32`: overwrite a cell. The op declares the cell operand
    (of its `CELL_TYPE`), which comes before the inherited `value`, as the syntax reads."""

    CELL_TYPE: ClassVar[type[CellType]]
    CELL_NOUN: ClassVar[str]

    value = operand_def(AnyAttr())

    def __init__(self, cell: SSAValue, value: SSAValue):
        super().__init__(operands=[cell, value])

    def verify_(self) -> None:
        cell, value = self.operands
        check_cell(self, cell, value.type, "value", self.CELL_NOUN)

    @classmethod
    def parse(cls, parser: Parser) -> CellWriteSyntax:
        cell = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        value = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        cell_v, value_v = parser.resolve_operands([cell, value], [cls.CELL_TYPE(t), t],
                                                  parser.pos)
        op = cls(cell_v, value_v)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        cell, value = self.operands
        printer.print_string(" ")
        printer.print_operand(cell)
        printer.print_string(", ")
        printer.print_operand(value)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(value.type)
