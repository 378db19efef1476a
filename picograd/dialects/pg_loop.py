"""`pg_loop`: per kernel, nested ranges, integer index expressions and memory accesses.

The third stage, where loop optimisation happens. `convert-sched-to-loop` turns each
`pg_sched.kernel` into a `pg_loop.kernel`: the output shape becomes `pg_loop.range`s,
every view (reshape, permute, expand, pad, slice, flip) becomes index arithmetic
(`pg_loop.index`, `pg_loop.const`), padding becomes masked loads, and a reduction becomes
a `pg_loop.reduce` that accumulates what its body yields. Arithmetic on loaded values uses
the scalar ALU ops of `pg_uop` (`pg_uop.binary`, ...).

    pg_loop.kernel @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
      pg_loop.range %i = 0 to 4 global {
        %s = pg_loop.reduce sum %j = 0 to 8 : f32 {
          %c8 = pg_loop.const 8
          %o = pg_loop.index mul %i, %c8
          %idx = pg_loop.index add %o, %j
          %v = pg_loop.load %a[%idx] : !pg.buffer<32xf32> -> f32
          pg_loop.yield %v : f32
        }
        pg_loop.store %s, %out[%i] : f32, !pg.buffer<4xf32>
      }
    }
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IndexType, IntAttr, i1
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, HasParent, IsTerminator, NoTerminator, Pure

from picograd.dialects.flat_memory import MaskedLoadSyntax, StoreSyntax
from picograd.dialects.flat_ops import KernelFunction, check_range, fail
from picograd.dialects.pg import (
    BinaryKind,
    BinaryKindAttr,
    CmpKind,
    CmpKindAttr,
    RangeKind,
    RangeKindAttr,
    ReduceKind,
    ReduceKindAttr,
)

INDEX_KINDS = (
    BinaryKind.ADD,
    BinaryKind.SUB,
    BinaryKind.MUL,
    BinaryKind.DIV,
    BinaryKind.MOD,
    BinaryKind.MAX,
    BinaryKind.MIN,
)


def _parse_loop_header(parser: Parser) -> tuple[Parser.Argument, int, int]:
    """`%i = 0 to 64`"""
    name = parser.parse_argument(expect_type=False)
    parser.parse_punctuation("=")
    start = parser.parse_integer(allow_boolean=False)
    parser.parse_keyword("to")
    end = parser.parse_integer(allow_boolean=False)
    return name.resolve(IndexType()), start, end


def _check_bounds(op: Operation, start: int, end: int, body: Region, kind: RangeKind) -> None:
    check_range(op, start, end, kind)
    args = body.block.args
    if len(args) != 1 or not isinstance(args[0].type, IndexType):
        raise fail(op, "the body takes exactly one index argument")


@irdl_op_definition
class KernelOp(KernelFunction):
    """A kernel over buffer arguments; its body is ranges, stores and index math.

    pg_loop.kernel @k(%a: !pg.buffer<4xf32>) {
      pg_loop.range %i = 0 to 4 global {
        %one = pg_uop.const 1.0 : f32
        pg_loop.store %one, %a[%i] : f32, !pg.buffer<4xf32>
      }
    }
    """

    name = "pg_loop.kernel"
    BODY_DIALECTS: ClassVar[tuple[str, ...]] = ("pg_loop", "pg_uop")

    def verify_(self) -> None:
        self.verify_buffer_args()
        self.verify_body_dialects()


@irdl_op_definition
class RangeOp(IRDLOperation):
    """Run the body for each `%i` in `[start, end)`; `kind` says how (global, local, upcast,
    unroll, loop).

        pg_loop.range %i = 0 to 64 global {
          ...
        }
    """

    name = "pg_loop.range"
    start = prop_def(IntAttr)
    end = prop_def(IntAttr)
    kind = prop_def(RangeKindAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, start: int, end: int, kind: RangeKind, body: Region | None = None):
        body = body if body is not None else Region(Block(arg_types=[IndexType()]))
        super().__init__(
            properties={"start": IntAttr(start), "end": IntAttr(end), "kind": RangeKindAttr(kind)},
            regions=[body],
        )

    @property
    def index(self) -> SSAValue:
        return self.body.block.args[0]

    def verify_(self) -> None:
        _check_bounds(self, self.start.data, self.end.data, self.body, self.kind.data)
        if self.kind.data == RangeKind.REDUCE:
            raise fail(self, "a reduce range is written as pg_loop.reduce")

    @classmethod
    def parse(cls, parser: Parser) -> RangeOp:
        arg, start, end = _parse_loop_header(parser)
        kind = parser.parse_str_enum(RangeKind)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(start, end, kind, parser.parse_region([arg]))
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.index)
        printer.print_string(f" = {self.start.data} to {self.end.data} {self.kind.data.value}")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        # An empty body prints as `{ }`: its block and arguments come from the header.
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Combine what the body yields for each `%j` in `[start, end)` with `kind`, starting
    from its identity (0 for sum, -inf or the smallest integer for max, ...).

        %s = pg_loop.reduce sum %j = 0 to 8 : f32 {
          %v = pg_loop.load %a[%j] : !pg.buffer<8xf32> -> f32
          pg_loop.yield %v : f32
        }
    """

    name = "pg_loop.reduce"
    kind = prop_def(ReduceKindAttr)
    start = prop_def(IntAttr)
    end = prop_def(IntAttr)
    range_kind = prop_def(RangeKindAttr)
    body = region_def("single_block")
    result = result_def(AnyAttr())

    def __init__(
        self,
        kind: ReduceKind,
        start: int,
        end: int,
        result_type: Attribute,
        body: Region | None = None,
        range_kind: RangeKind = RangeKind.REDUCE,
    ):
        body = body if body is not None else Region(Block(arg_types=[IndexType()]))
        super().__init__(
            properties={
                "kind": ReduceKindAttr(kind),
                "start": IntAttr(start),
                "end": IntAttr(end),
                "range_kind": RangeKindAttr(range_kind),
            },
            regions=[body],
            result_types=[result_type],
        )

    @property
    def index(self) -> SSAValue:
        return self.body.block.args[0]

    def verify_(self) -> None:
        _check_bounds(self, self.start.data, self.end.data, self.body,
                      self.range_kind.data)
        last = self.body.block.last_op
        if not isinstance(last, YieldOp) or last.value.type != self.result.type:
            raise fail(self, f"the body must end in pg_loop.yield of a {self.result.type}")

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        kind = parser.parse_str_enum(ReduceKind)
        arg, start, end = _parse_loop_header(parser)
        range_kind = RangeKind.REDUCE
        if parser.parse_optional_keyword("as") is not None:
            range_kind = parser.parse_str_enum(RangeKind)
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(kind, start, end, result_type, parser.parse_region([arg]), range_kind)
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data.value} ")
        printer.print_operand(self.index)
        printer.print_string(f" = {self.start.data} to {self.end.data}")
        if self.range_kind.data != RangeKind.REDUCE:
            printer.print_string(f" as {self.range_kind.data.value}")
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        # An empty body prints as `{ }`: its block and arguments come from the header.
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The value one iteration of a `pg_loop.reduce` contributes.

    pg_loop.yield %v : f32
    """

    name = "pg_loop.yield"
    value = operand_def(AnyAttr())
    traits = traits_def(IsTerminator(), HasParent(ReduceOp), Pure())
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value])


# ── index arithmetic ─────────────────────────────────────────────────────────


@irdl_op_definition
class ConstOp(IRDLOperation):
    """An index constant.

    %c = pg_loop.const 8
    """

    name = "pg_loop.const"
    value = prop_def(IntAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: int):
        super().__init__(properties={"value": IntAttr(value)}, result_types=[IndexType()])

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        op = cls(parser.parse_integer(allow_boolean=False))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.value.data}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class IndexOp(IRDLOperation):
    """Integer arithmetic on indices: add, sub, mul, div (floor), mod (non-negative), max, min.

    %r = pg_loop.index mul %i, %c8
    """

    name = "pg_loop.index"
    kind = prop_def(BinaryKindAttr)
    lhs = operand_def(IndexType)
    rhs = operand_def(IndexType)
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$kind $lhs `,` $rhs attr-dict"

    def __init__(self, kind: BinaryKind, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(
            properties={"kind": BinaryKindAttr(kind)},
            operands=[lhs, rhs],
            result_types=[IndexType()],
        )

    def verify_(self) -> None:
        if self.kind.data not in INDEX_KINDS:
            raise fail(
                self,
                f"'{self.kind.data}' is not an index operation "
                f"({', '.join(str(k) for k in INDEX_KINDS)})",
            )


@irdl_op_definition
class CmpOp(IRDLOperation):
    """Compare two indices, giving `i1` (used for masks).

    %m = pg_loop.cmp lt %i, %c8
    """

    name = "pg_loop.cmp"
    kind = prop_def(CmpKindAttr)
    lhs = operand_def(IndexType)
    rhs = operand_def(IndexType)
    result = result_def(i1)
    traits = traits_def(Pure())
    assembly_format = "$kind $lhs `,` $rhs attr-dict"

    def __init__(self, kind: CmpKind, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(
            properties={"kind": CmpKindAttr(kind)}, operands=[lhs, rhs], result_types=[i1]
        )


@irdl_op_definition
class AndOp(IRDLOperation):
    """Both masks hold.

    %m = pg_loop.and %m0, %m1
    """

    name = "pg_loop.and"
    lhs = operand_def(i1)
    rhs = operand_def(i1)
    result = result_def(i1)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs], result_types=[i1])


# ── memory ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class LoadOp(MaskedLoadSyntax):
    """Read `buffer[index]`; with a mask, only where the mask holds, giving `other` elsewhere.

    %v = pg_loop.load %a[%i] : !pg.buffer<32xf32> -> f32
    %w = pg_loop.load %a[%i] if %m else 0.0 : !pg.buffer<32xf32> -> f32
    """

    name = "pg_loop.load"


@irdl_op_definition
class StoreOp(StoreSyntax):
    """Write `value` to `buffer[index]`.

    pg_loop.store %v, %out[%i] : f32, !pg.buffer<4xf32>
    """

    name = "pg_loop.store"


PG_LOOP = Dialect(
    "pg_loop",
    [KernelOp, RangeOp, ReduceOp, YieldOp, ConstOp, IndexOp, CmpOp, AndOp, LoadOp, StoreOp],
    [],
)
