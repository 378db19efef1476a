"""Memory ops of the kernel dialects: the bases of their loads, stores and group buffers.

`pg_loop`, `pg_uop`, `pg_c` and `pg_wgsl` index a buffer alike (`pg_ptx` addresses bytes,
and borrows only the mask syntax):

    %v = <dialect>.load %a[%i] : !pg.buffer<32xf32> -> f32               MaskedLoadSyntax
    %w = <dialect>.load %a[%i] if %m else 0.0 : !pg.buffer<32xf32> -> f32
    <dialect>.store %v, %out[%i] : f32, !pg.buffer<4xf32>                StoreSyntax
    %s = <dialect>.shared : !pg.buffer<256xf32>                          GroupBufferSyntax

The bases declare the IRDL fields with `index` indices; `pg_wgsl`, whose indices are i32,
re-declares its index operand and the operands before it (see `flat_ops`).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer

from picograd.dialects.flat_ops import fail
from picograd.dialects.pg import BufferType
from picograd.dialects.syntax import parse_number, print_number, scalar_attr, scalar_value


def parse_optional_mask(parser: Parser) -> tuple[UnresolvedOperand | None, float | int]:
    """` if %m else 0.0` (the mask and the value where it fails), or nothing: (None, 0)."""
    if parser.parse_optional_keyword("if") is None:
        return None, 0
    mask = parser.parse_unresolved_operand()
    parser.parse_keyword("else")
    return mask, parse_number(parser)


def print_optional_mask(printer: Printer, mask: SSAValue | None,
                        other: Attribute | None) -> None:
    if mask is not None and other is not None:
        printer.print_string(" if ")
        printer.print_operand(mask)
        printer.print_string(" else ")
        print_number(printer, scalar_value(other))


class MaskedLoadSyntax(IRDLOperation):
    """Read `buffer[index]`; with a mask, only where it holds, giving `other` elsewhere:

    %v = <op> %buf[%i] : !pg.buffer<32xf32> -> f32
    %w = <op> %buf[%i] if %m else 0.0 : !pg.buffer<32xf32> -> f32
    """

    INDEX_TYPE: ClassVar[Attribute] = IndexType()

    buffer = operand_def(BufferType)
    index = operand_def(IndexType)
    mask = opt_operand_def(i1)
    other = opt_prop_def(FloatAttr | IntegerAttr)
    result = result_def(AnyAttr())

    def __init__(self, buffer: SSAValue, index: SSAValue, mask: SSAValue | None = None,
                 other: float | int | bool = 0):
        assert isinstance(buffer.type, BufferType)
        dtype = buffer.type.element_type
        props = {"other": scalar_attr(other, dtype)} if mask is not None else {}
        super().__init__(operands=[buffer, index, mask], properties=props, result_types=[dtype])

    def verify_(self) -> None:
        assert isinstance(self.buffer.type, BufferType)
        if self.buffer.type.element_type != self.result.type:
            raise fail(
                self,
                f"result type {self.result.type} != buffer element type "
                f"{self.buffer.type.element_type}",
            )
        if (self.mask is None) != (self.other is None):
            raise fail(self, "a mask needs an 'other' value and vice versa")

    @classmethod
    def parse(cls, parser: Parser) -> MaskedLoadSyntax:
        buffer = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        idx = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        mask, other = parse_optional_mask(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        buffer_type = parser.parse_type()
        parser.parse_punctuation("->")
        parser.parse_type()
        names = [buffer, idx] + ([mask] if mask is not None else [])
        types = [buffer_type, cls.INDEX_TYPE] + ([i1] if mask is not None else [])
        values = parser.resolve_operands(names, types, parser.pos)
        op = cls(values[0], values[1], values[2] if mask is not None else None, other)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.buffer)
        printer.print_string("[")
        printer.print_operand(self.index)
        printer.print_string("]")
        print_optional_mask(printer, self.mask, self.other)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


def check_store(op: IRDLOperation, value: SSAValue, buffer: SSAValue) -> None:
    assert isinstance(buffer.type, BufferType)
    if buffer.type.element_type != value.type:
        raise fail(
            op, f"value type {value.type} != buffer element type {buffer.type.element_type}"
        )


class StoreSyntax(IRDLOperation):
    """Write `value` to `buffer[index]`: `<op> %v, %out[%i] : f32, !pg.buffer<4xf32>`."""

    value = operand_def(AnyAttr())
    buffer = operand_def(BufferType)
    index = operand_def(IndexType)
    assembly_format = (
        "$value `,` $buffer `[` $index `]` attr-dict `:` type($value) `,` type($buffer)"
    )

    def __init__(self, value: SSAValue, buffer: SSAValue, index: SSAValue):
        super().__init__(operands=[value, buffer, index])

    def verify_(self) -> None:
        check_store(self, self.value, self.buffer)


class GroupBufferSyntax(IRDLOperation):
    """`%s = <op> : !pg.buffer<256xf32>`: a buffer shared by the work items of one work
    group; loads and stores take it like a kernel argument, its contents start undefined."""

    result = result_def(BufferType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, buffer_type: BufferType):
        super().__init__(result_types=[buffer_type])
