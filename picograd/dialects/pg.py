"""The `pg` dialect: types and enum attributes shared by every picograd stage.

Stage dialects (`pg_tensor`, `pg_sched`, `pg_loop`, `pg_uop`) and the target dialects
(`pg_c`, `pg_ptx`, `pg_wgsl`) name their op kinds with the enums here so that a lowering can
map a kind one-to-one from one stage to the next without a translation table.

    !pg.buffer<64xf32>        BufferType: a flat device buffer of 64 float32 elements
    #pg<unary exp>            UnaryKind, BinaryKind, CmpKind, ReduceKind: elementwise and
                              reduction kinds (printed bare inside ops)
    RangeKind                 global / local / reduce / upcast / unroll loop ranges
    SpecialKind               GPU special ids (work-group and work-item indices)
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import auto

from xdsl.dialects.builtin import IntAttr
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    TypeAttribute,
)
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from picograd.dialects.dtypes import check_element_type

# ── enums ────────────────────────────────────────────────────────────────────


class UnaryKind(StrEnum):
    """Elementwise unary functions (float unless noted)."""

    NEG = auto()  # also integers
    EXP = auto()
    LOG = auto()
    SQRT = auto()
    SIN = auto()
    EXP2 = auto()  # 2**x: the GPU-native form of exp (legalisation rewrites exp to it)
    LOG2 = auto()
    RECIP = auto()
    NOT = auto()  # bool / integer bitwise not


class BinaryKind(StrEnum):
    """Elementwise binary functions; both operands and the result share one type."""

    ADD = auto()
    SUB = auto()
    MUL = auto()
    DIV = auto()  # float division; integer division truncates toward zero (C semantics)
    MOD = auto()  # integer remainder with the sign of the dividend (C semantics)
    MAX = auto()
    MIN = auto()
    AND = auto()  # bool / integer only
    OR = auto()
    XOR = auto()
    # Shifts, integer only. The amount is taken modulo the bit width (`b & (width - 1)`, as
    # WGSL and x86 do), so every amount has one meaning on every target; SHR is arithmetic
    # for signed types and logical for unsigned ones (ui8).
    SHL = auto()
    SHR = auto()


class CmpKind(StrEnum):
    """Comparisons; the result is i1."""

    LT = auto()
    LE = auto()
    GT = auto()
    GE = auto()
    EQ = auto()
    NE = auto()


class ReduceKind(StrEnum):
    SUM = auto()
    MAX = auto()
    MIN = auto()
    PROD = auto()


class RangeKind(StrEnum):
    """How a loop range is executed (tinygrad's AxisType, MLIR's iterator kinds)."""

    GLOBAL = auto()  # one iteration per work item (grid / outer CPU loop)
    LOCAL = auto()  # one iteration per thread of a work group
    REDUCE = auto()  # a reduction axis, iterated sequentially into an accumulator
    UPCAST = auto()  # unrolled into vector lanes
    UNROLL = auto()  # unrolled into straight-line code
    LOOP = auto()  # a plain sequential loop


class SpecialKind(StrEnum):
    """GPU thread / block indices (`pg_uop.special`)."""

    GLOBAL_ID = auto()
    LOCAL_ID = auto()
    GROUP_ID = auto()


@irdl_attr_definition
class UnaryKindAttr(EnumAttribute[UnaryKind], SpacedOpaqueSyntaxAttribute):
    name = "pg.unary"


@irdl_attr_definition
class BinaryKindAttr(EnumAttribute[BinaryKind], SpacedOpaqueSyntaxAttribute):
    name = "pg.binary"


@irdl_attr_definition
class CmpKindAttr(EnumAttribute[CmpKind], SpacedOpaqueSyntaxAttribute):
    name = "pg.cmp"


@irdl_attr_definition
class ReduceKindAttr(EnumAttribute[ReduceKind], SpacedOpaqueSyntaxAttribute):
    name = "pg.reduce"


@irdl_attr_definition
class RangeKindAttr(EnumAttribute[RangeKind], SpacedOpaqueSyntaxAttribute):
    name = "pg.range"


@irdl_attr_definition
class SpecialKindAttr(EnumAttribute[SpecialKind], SpacedOpaqueSyntaxAttribute):
    name = "pg.special"


# ── types ────────────────────────────────────────────────────────────────────


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """A flat, contiguous device buffer: `!pg.buffer<64xf32>`."""

    name = "pg.buffer"

    size: IntAttr
    element_type: Attribute

    def __init__(self, size: int | IntAttr, element_type: Attribute):
        super().__init__(IntAttr(size) if isinstance(size, int) else size, element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            size = parser.parse_integer(allow_boolean=False, allow_negative=False)
            parser.parse_shape_delimiter()
            element_type = parser.parse_type()
        return (IntAttr(size), element_type)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.size.data}x")
            printer.print_attribute(self.element_type)

    def verify(self) -> None:
        if self.size.data <= 0:
            raise VerifyException(f"!pg.buffer size must be positive, got {self.size.data}")
        check_element_type(self.element_type, "!pg.buffer")


PG = Dialect(
    "pg",
    [],
    [
        BufferType,
        UnaryKindAttr,
        BinaryKindAttr,
        CmpKindAttr,
        ReduceKindAttr,
        RangeKindAttr,
        SpecialKindAttr,
    ],
)
