"""Parsing and printing helpers shared by the stage dialects' custom syntax.

Scalar constants print as plain numbers (`1.5`, `-3`, `inf`, `-inf`, `nan`) followed by
their type where the op needs one, so that `print -> parse -> print` is the identity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    i1,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from picograd.dialects.dtypes import is_float

ScalarAttr = FloatAttr | IntegerAttr


def scalar_attr(value: float | int | bool, element_type: Attribute) -> ScalarAttr:
    """The attribute holding `value` for an element of `element_type` (or an index)."""
    if isinstance(element_type, IndexType):
        return IntegerAttr(int(value), element_type)
    if is_float(element_type):
        return FloatAttr(float(value), element_type)  # type: ignore[arg-type]
    if not isinstance(element_type, IntegerType):  # bf16, a vector, ...: written by a user
        raise VerifyException(f"a constant cannot have type {element_type} (expected an "
                              "integer, float or index type)")
    if element_type.width.data == 1:
        return IntegerAttr(int(bool(value)), element_type)
    return IntegerAttr(int(value), element_type)


def scalar_value(attr: Attribute) -> float | int:
    """The Python number inside a scalar attribute."""
    assert isinstance(attr, FloatAttr | IntegerAttr), attr
    if isinstance(attr, IntegerAttr) and attr.type == i1:
        # xDSL normalises a signless i1 holding 1 to -1; a bool is 0 or 1.
        return int(attr.value.data != 0)
    return attr.value.data


def format_number(value: float | int) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = repr(value)
        # A float literal needs a '.' before its exponent: "1e+30" does not parse.
        return text if "." in text or "e" not in text else text.replace("e", ".0e", 1)
    return str(value)


def print_number(printer: Printer, value: float | int) -> None:
    printer.print_string(format_number(value))


def parse_number(parser: Parser) -> float | int:
    """A number, or one of the keywords `inf`, `-inf`, `nan`."""
    negative = parser.parse_optional_punctuation("-") is not None
    for word, number in (("inf", math.inf), ("nan", math.nan)):
        if parser.parse_optional_keyword(word) is not None:
            return -number if negative else number
    value = parser.parse_number()
    if isinstance(value, bool):
        value = int(value)
    return -value if negative else value


def int_array(values: list[int] | tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def int_tuple(attr: DenseArrayBase) -> tuple[int, ...]:
    values = attr.get_values()  # pyright: ignore[reportAttributeAccessIssue]
    return tuple(int(v) for v in values)


def print_int_list(printer: Printer, values: tuple[int, ...]) -> None:
    printer.print_string("[" + ", ".join(str(v) for v in values) + "]")


_I64 = range(-(2**63), 2**63)


def parse_int_list(parser: Parser) -> list[int]:
    """`[1, 2, 3]`, each an i64 (the lists become i64 dense arrays, which would raise a
    ValueError, with no location, on a bigger number)."""
    def one() -> int:
        start = parser.pos
        value = parser.parse_integer(allow_boolean=False)
        if value not in _I64:
            parser.raise_error(f"{value} does not fit in i64", start, parser.pos)
        return value

    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, one)


def parse_kernel_signature(parser: Parser) -> tuple[str, list[Parser.Argument]]:
    """`@name(%a: type, %b: type)`: the symbol name and the typed block arguments."""
    name = parser.parse_symbol_name().data
    args = parser.parse_comma_separated_list(
        parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
    )
    return name, args


def print_kernel_signature(printer: Printer, name: str, block_args: Sequence[SSAValue]) -> None:
    printer.print_string(f" @{name}(")
    print_arg = printer.print_block_argument
    printer.print_list(block_args, print_arg)  # pyright: ignore[reportArgumentType]
    printer.print_string(")")
