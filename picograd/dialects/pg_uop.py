"""`pg_uop`: one flat, ordered block of micro-ops per kernel.

The fourth stage, which a renderer walks top to bottom. Loops are `pg_uop.range` /
`pg_uop.end` pairs in the flat block (properly nested); a reduction accumulates into a
register declared with `pg_uop.acc`; GPU work-item indices come from `pg_uop.special`,
guards are `pg_uop.if` / `pg_uop.endif` pairs (nested with the ranges), work-group memory is
a `pg_uop.shared` buffer and `pg_uop.barrier` synchronises a work group.

    pg_uop.kernel @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
      %i = pg_uop.range 0 to 4 global
      %acc = pg_uop.acc 0.0 : f32
      %j = pg_uop.range 0 to 8 reduce
      %c8 = pg_uop.const 8 : index
      %o = pg_uop.binary mul %i, %c8 : index
      %idx = pg_uop.binary add %o, %j : index
      %v = pg_uop.load %a[%idx] : !pg.buffer<32xf32> -> f32
      %old = pg_uop.acc_load %acc : f32
      %new = pg_uop.binary add %old, %v : f32
      pg_uop.acc_store %acc, %new : f32
      pg_uop.end %j
      %r = pg_uop.acc_load %acc : f32
      pg_uop.store %r, %out[%i] : f32, !pg.buffer<4xf32>
      pg_uop.end %i
    }

The scalar ALU ops (`const`, `unary`, `binary`, `cmp`, `where`, `cast`) are also the value
ops inside `pg_loop` bodies: `pg_loop` owns loops, index math and memory access, and
borrows these for the arithmetic on loaded values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import FloatAttr, IndexType, IntAttr, IntegerAttr, StringAttr, i1
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, IsolatedFromAbove, NoTerminator, Pure, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from picograd.dialects.dtypes import is_bool, is_float
from picograd.dialects.pg import (
    BinaryKind,
    BinaryKindAttr,
    BufferType,
    CmpKind,
    CmpKindAttr,
    RangeKind,
    RangeKindAttr,
    SpecialKind,
    SpecialKindAttr,
    UnaryKind,
    UnaryKindAttr,
)
from picograd.dialects.syntax import (
    parse_kernel_signature,
    parse_number,
    print_kernel_signature,
    print_number,
    scalar_attr,
    scalar_value,
)


def _fail(op: Operation, message: str) -> VerifyException:
    return VerifyException(f"'{op.name}': {message}")


@irdl_attr_definition
class AccType(ParametrizedAttribute, TypeAttribute):
    """A mutable register holding one scalar: `!pg_uop.acc<f32>`."""

    name = "pg_uop.acc"
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


# ── kernel ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A kernel as one flat block; `range`/`end` pairs must nest properly.

    pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
      %i = pg_uop.range 0 to 4 global
      %one = pg_uop.const 1.0 : f32
      pg_uop.store %one, %a[%i] : f32, !pg.buffer<4xf32>
      pg_uop.end %i
    }
    """

    name = "pg_uop.kernel"
    sym_name = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    def __init__(self, name: str, arg_types: Sequence[Attribute], body: Region | None = None):
        body = body if body is not None else Region(Block(arg_types=arg_types))
        super().__init__(properties={"sym_name": StringAttr(name)}, regions=[body])

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args)

    def verify_(self) -> None:
        # The open ranges and ifs, innermost last (an if is marked by None).
        open_blocks: list[SSAValue | None] = []
        name = self.sym_name.data
        for op in self.body.block.ops:
            if isinstance(op, RangeOp):
                open_blocks.append(op.result)
            elif isinstance(op, IfOp):
                open_blocks.append(None)
            elif isinstance(op, EndOp):
                if not open_blocks or open_blocks[-1] != op.range:
                    raise _fail(
                        self,
                        f"@{name}: 'pg_uop.end' closes a range that is not the innermost "
                        "open range or if",
                    )
                open_blocks.pop()
            elif isinstance(op, EndIfOp):
                if not open_blocks or open_blocks[-1] is not None:
                    raise _fail(self, f"@{name}: 'pg_uop.endif' does not close an open if")
                open_blocks.pop()
            elif op.regions:
                raise _fail(self, f"@{name}: the body must be flat, found {op.name}")
        if open_blocks:
            raise _fail(self, f"@{name}: {len(open_blocks)} range(s) or if(s) never closed")

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name, args = parse_kernel_signature(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(name, [], parser.parse_region(args))
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        print_kernel_signature(printer, self.sym_name.data, self.body.block.args)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        # An empty body prints as `{ }`: its block and arguments come from the header.
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)


# ── loops and ids ────────────────────────────────────────────────────────────


@irdl_op_definition
class RangeOp(IRDLOperation):
    """Open a loop over `[start, end)`; the result is the induction variable.

    %i = pg_uop.range 0 to 64 global
    """

    name = "pg_uop.range"
    start = prop_def(IntAttr)
    end = prop_def(IntAttr)
    kind = prop_def(RangeKindAttr)
    result = result_def(IndexType)

    def __init__(self, start: int, end: int, kind: RangeKind):
        super().__init__(
            properties={"start": IntAttr(start), "end": IntAttr(end), "kind": RangeKindAttr(kind)},
            result_types=[IndexType()],
        )

    def verify_(self) -> None:
        if self.end.data < self.start.data:
            raise _fail(self, f"empty range [{self.start.data}, {self.end.data})")

    @classmethod
    def parse(cls, parser: Parser) -> RangeOp:
        start = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        end = parser.parse_integer(allow_boolean=False)
        kind = RangeKind(parser.parse_identifier())
        op = cls(start, end, kind)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.start.data} to {self.end.data} {self.kind.data.value}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class EndOp(IRDLOperation):
    """Close the innermost open `pg_uop.range`.

    pg_uop.end %i
    """

    name = "pg_uop.end"
    range = operand_def(IndexType)
    assembly_format = "$range attr-dict"

    def __init__(self, range_value: SSAValue):
        super().__init__(operands=[range_value])

    def verify_(self) -> None:
        if not isinstance(self.range.owner, RangeOp):
            raise _fail(self, "operand must be the result of a pg_uop.range")


@irdl_op_definition
class SpecialOp(IRDLOperation):
    """A GPU work-item index along dimension `dim` (0, 1 or 2), below `size`.

    %g = pg_uop.special global_id 0 size 1024
    """

    name = "pg_uop.special"
    kind = prop_def(SpecialKindAttr)
    dim = prop_def(IntAttr)
    size = prop_def(IntAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure())

    def __init__(self, kind: SpecialKind, dim: int, size: int):
        super().__init__(
            properties={"kind": SpecialKindAttr(kind), "dim": IntAttr(dim), "size": IntAttr(size)},
            result_types=[IndexType()],
        )

    def verify_(self) -> None:
        if self.dim.data not in (0, 1, 2) or self.size.data < 1:
            raise _fail(
                self,
                f"dim must be 0, 1 or 2 and size positive, got {self.dim.data}, {self.size.data}",
            )

    @classmethod
    def parse(cls, parser: Parser) -> SpecialOp:
        kind = SpecialKind(parser.parse_identifier())
        dim = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("size")
        size = parser.parse_integer(allow_boolean=False)
        op = cls(kind, dim, size)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data.value} {self.dim.data} size {self.size.data}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """Synchronise the threads of a work group (GPU targets only).

    pg_uop.barrier
    """

    name = "pg_uop.barrier"
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


@irdl_op_definition
class IfOp(IRDLOperation):
    """Run the ops up to the matching `pg_uop.endif` only where `cond` holds (a guard).

    %ok = pg_uop.cmp lt %gid, %n : index
    pg_uop.if %ok
    pg_uop.store %v, %out[%gid] : f32, !pg.buffer<1000xf32>
    pg_uop.endif
    """

    name = "pg_uop.if"
    cond = operand_def(i1)
    assembly_format = "$cond attr-dict"

    def __init__(self, cond: SSAValue | Operation):
        super().__init__(operands=[cond])


@irdl_op_definition
class EndIfOp(IRDLOperation):
    """Close the innermost open `pg_uop.if`.

    pg_uop.endif
    """

    name = "pg_uop.endif"
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


@irdl_op_definition
class SharedOp(IRDLOperation):
    """A buffer shared by the work items of one work group (GPU shared / workgroup memory).

    Loads and stores take it like a kernel argument; its contents start undefined and live
    for one work-group run.

    %s = pg_uop.shared : !pg.buffer<256xf32>
    """

    name = "pg_uop.shared"
    result = result_def(BufferType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, buffer_type: BufferType):
        super().__init__(result_types=[buffer_type])


# ── accumulators ─────────────────────────────────────────────────────────────


@irdl_op_definition
class AccOp(IRDLOperation):
    """Declare a register and set it to `init` (each time control reaches this op).

    %acc = pg_uop.acc 0.0 : f32
    """

    name = "pg_uop.acc"
    init = prop_def(FloatAttr | IntegerAttr)
    result = result_def(AccType)

    def __init__(self, init: float | int | bool, element_type: Attribute):
        super().__init__(
            properties={"init": scalar_attr(init, element_type)},
            result_types=[AccType(element_type)],
        )

    @property
    def element_type(self) -> Attribute:
        assert isinstance(self.result.type, AccType)
        return self.result.type.element_type

    def verify_(self) -> None:
        if self.init.type != self.element_type:
            raise _fail(self, f"init type {self.init.type} != register type {self.element_type}")

    @classmethod
    def parse(cls, parser: Parser) -> AccOp:
        value = parse_number(parser)
        parser.parse_punctuation(":")
        op = cls(value, parser.parse_type())
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_number(printer, scalar_value(self.init))
        printer.print_string(" : ")
        printer.print_attribute(self.element_type)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class AccLoadOp(IRDLOperation):
    """Read a register.

    %v = pg_uop.acc_load %acc : f32
    """

    name = "pg_uop.acc_load"
    acc = operand_def(AccType)
    result = result_def(AnyAttr())

    def __init__(self, acc: SSAValue):
        assert isinstance(acc.type, AccType)
        super().__init__(operands=[acc], result_types=[acc.type.element_type])

    @classmethod
    def parse(cls, parser: Parser) -> AccLoadOp:
        acc = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        (value,) = parser.resolve_operands([acc], [AccType(parser.parse_type())], parser.pos)
        op = cls(value)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.acc)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        assert isinstance(self.acc.type, AccType)
        if self.acc.type.element_type != self.result.type:
            raise _fail(
                self,
                f"result type {self.result.type} != register type {self.acc.type.element_type}",
            )


@irdl_op_definition
class AccStoreOp(IRDLOperation):
    """Write a register.

    pg_uop.acc_store %acc, %v : f32
    """

    name = "pg_uop.acc_store"
    acc = operand_def(AccType)
    value = operand_def(AnyAttr())

    def __init__(self, acc: SSAValue, value: SSAValue):
        super().__init__(operands=[acc, value])

    @classmethod
    def parse(cls, parser: Parser) -> AccStoreOp:
        acc = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        value = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        acc_v, value_v = parser.resolve_operands([acc, value], [AccType(t), t], parser.pos)
        op = cls(acc_v, value_v)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.acc)
        printer.print_string(", ")
        printer.print_operand(self.value)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    def verify_(self) -> None:
        assert isinstance(self.acc.type, AccType)
        if self.acc.type.element_type != self.value.type:
            raise _fail(
                self, f"value type {self.value.type} != register type {self.acc.type.element_type}"
            )


# ── memory ───────────────────────────────────────────────────────────────────


class MaskedLoadSyntax:
    """Syntax and checks shared by `pg_uop.load` and `pg_loop.load`:

    %v = <op> %buf[%i] : !pg.buffer<32xf32> -> f32
    %w = <op> %buf[%i] if %m else 0.0 : !pg.buffer<32xf32> -> f32
    """

    # The op classes declare `buffer`, `index`, `mask`, `other` and `result` (IRDL forbids
    # annotations on a mixin, so they are not repeated here).

    @staticmethod
    def load_properties(
        buffer: SSAValue, mask: SSAValue | None, other: float | int | bool
    ) -> tuple[dict[str, Attribute], Attribute]:
        assert isinstance(buffer.type, BufferType)
        dtype = buffer.type.element_type
        return ({"other": scalar_attr(other, dtype)} if mask is not None else {}), dtype

    def verify_(self: Any) -> None:
        assert isinstance(self.buffer.type, BufferType)
        if self.buffer.type.element_type != self.result.type:
            raise _fail(
                self,
                f"result type {self.result.type} != buffer element type "
                f"{self.buffer.type.element_type}",
            )
        if (self.mask is None) != (self.other is None):
            raise _fail(self, "a mask needs an 'other' value and vice versa")

    @classmethod
    def parse(cls, parser: Parser):
        buffer = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        idx = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        mask, other = None, 0
        if parser.parse_optional_keyword("if") is not None:
            mask = parser.parse_unresolved_operand()
            parser.parse_keyword("else")
            other = parse_number(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        buffer_type = parser.parse_type()
        parser.parse_punctuation("->")
        parser.parse_type()
        names = [buffer, idx] + ([mask] if mask is not None else [])
        types = [buffer_type, IndexType()] + ([i1] if mask is not None else [])
        values = parser.resolve_operands(names, types, parser.pos)
        op = cls(values[0], values[1], values[2] if mask is not None else None, other)  # type: ignore[call-arg]
        op.attributes.update(attrs)  # pyright: ignore[reportAttributeAccessIssue]
        return op

    def print(self: Any, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.buffer)
        printer.print_string("[")
        printer.print_operand(self.index)
        printer.print_string("]")
        if self.mask is not None and self.other is not None:
            printer.print_string(" if ")
            printer.print_operand(self.mask)
            printer.print_string(" else ")
            print_number(printer, scalar_value(self.other))
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


def check_store(op: IRDLOperation, value: SSAValue, buffer: SSAValue) -> None:
    assert isinstance(buffer.type, BufferType)
    if buffer.type.element_type != value.type:
        raise _fail(
            op, f"value type {value.type} != buffer element type {buffer.type.element_type}"
        )


@irdl_op_definition
class LoadOp(MaskedLoadSyntax, IRDLOperation):
    """Read `buffer[index]`; with a mask, read only where it holds and give `other` elsewhere.

    %v = pg_uop.load %a[%i] : !pg.buffer<32xf32> -> f32
    %w = pg_uop.load %a[%i] if %m else 0.0 : !pg.buffer<32xf32> -> f32
    """

    name = "pg_uop.load"
    buffer = operand_def(BufferType)
    index = operand_def(IndexType)
    mask = opt_operand_def(i1)
    other = opt_prop_def(FloatAttr | IntegerAttr)
    result = result_def(AnyAttr())

    def __init__(
        self,
        buffer: SSAValue,
        index: SSAValue,
        mask: SSAValue | None = None,
        other: float | int | bool = 0,
    ):
        props, dtype = self.load_properties(buffer, mask, other)
        super().__init__(operands=[buffer, index, mask], properties=props, result_types=[dtype])


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write `value` to `buffer[index]`.

    pg_uop.store %v, %out[%i] : f32, !pg.buffer<4xf32>
    """

    name = "pg_uop.store"
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


# ── scalar ALU (shared with pg_loop bodies) ──────────────────────────────────


@irdl_op_definition
class ConstOp(IRDLOperation):
    """A scalar constant (also `index` constants).

    %c = pg_uop.const 1.5 : f32
    """

    name = "pg_uop.const"
    value = prop_def(FloatAttr | IntegerAttr)
    result = result_def(AnyAttr())
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: float | int | bool, result_type: Attribute):
        if isinstance(result_type, IndexType):
            attr: Attribute = IntegerAttr(int(value), result_type)
        else:
            attr = scalar_attr(value, result_type)
        super().__init__(properties={"value": attr}, result_types=[result_type])

    @property
    def scalar(self) -> float | int:
        return scalar_value(self.value)

    def verify_(self) -> None:
        if self.value.type != self.result.type:
            raise _fail(self, f"value type {self.value.type} != result type {self.result.type}")

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        value = parse_number(parser)
        parser.parse_punctuation(":")
        op = cls(value, parser.parse_type())
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_number(printer, self.scalar)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class UnaryOp(IRDLOperation):
    """A scalar unary function.

    %y = pg_uop.unary sqrt %x : f32
    """

    name = "pg_uop.unary"
    T: ClassVar = VarConstraint("T", AnyAttr())
    kind = prop_def(UnaryKindAttr)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($result)"

    def __init__(self, kind: UnaryKind, x: SSAValue | Operation):
        x = SSAValue.get(x)
        super().__init__(
            properties={"kind": UnaryKindAttr(kind)}, operands=[x], result_types=[x.type]
        )

    def verify_(self) -> None:
        kind, t = self.kind.data, self.input.type
        if kind == UnaryKind.NOT and is_float(t):
            raise _fail(self, f"'not' needs a bool or integer, got {t}")
        if kind not in (UnaryKind.NOT, UnaryKind.NEG) and not is_float(t):
            raise _fail(self, f"'{kind}' needs a float, got {t}")


@irdl_op_definition
class BinaryOp(IRDLOperation):
    """A scalar binary function of two values of one type (also `index` arithmetic).

    %z = pg_uop.binary add %x, %y : f32
    """

    name = "pg_uop.binary"
    T: ClassVar = VarConstraint("T", AnyAttr())
    kind = prop_def(BinaryKindAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$kind $lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, kind: BinaryKind, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(
            properties={"kind": BinaryKindAttr(kind)}, operands=[lhs, rhs], result_types=[lhs.type]
        )

    def verify_(self) -> None:
        kind, t = self.kind.data, self.lhs.type
        if kind in (BinaryKind.AND, BinaryKind.OR, BinaryKind.XOR, BinaryKind.MOD) and is_float(t):
            raise _fail(self, f"'{kind}' needs bool or integer operands, got {t}")
        if is_bool(t) and kind not in (
            BinaryKind.AND,
            BinaryKind.OR,
            BinaryKind.XOR,
            BinaryKind.MAX,
            BinaryKind.MIN,
        ):
            raise _fail(self, f"'{kind}' is not defined on i1")


@irdl_op_definition
class CmpOp(IRDLOperation):
    """A scalar comparison giving `i1`.

    %m = pg_uop.cmp lt %x, %y : f32
    """

    name = "pg_uop.cmp"
    T: ClassVar = VarConstraint("T", AnyAttr())
    kind = prop_def(CmpKindAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(i1)
    traits = traits_def(Pure())
    assembly_format = "$kind $lhs `,` $rhs attr-dict `:` type($lhs)"

    def __init__(self, kind: CmpKind, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(
            properties={"kind": CmpKindAttr(kind)}, operands=[lhs, rhs], result_types=[i1]
        )


@irdl_op_definition
class WhereOp(IRDLOperation):
    """Scalar select: `cond ? lhs : rhs`.

    %r = pg_uop.where %c, %x, %y : f32
    """

    name = "pg_uop.where"
    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def(i1)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(
        self, cond: SSAValue | Operation, lhs: SSAValue | Operation, rhs: SSAValue | Operation
    ):
        super().__init__(operands=[cond, lhs, rhs], result_types=[SSAValue.get(lhs).type])


@irdl_op_definition
class CastOp(IRDLOperation):
    """Scalar type conversion (C rules: float to int truncates toward zero; to bool is `!= 0`).

    %r = pg_uop.cast %x : f32 to i32
    """

    name = "pg_uop.cast"
    input = operand_def(AnyAttr())
    result = result_def(AnyAttr())
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, x: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[x], result_types=[result_type])


ALU_OPS = (ConstOp, UnaryOp, BinaryOp, CmpOp, WhereOp, CastOp)

PG_UOP = Dialect(
    "pg_uop",
    [
        KernelOp,
        RangeOp,
        EndOp,
        SpecialOp,
        BarrierOp,
        IfOp,
        EndIfOp,
        SharedOp,
        AccOp,
        AccLoadOp,
        AccStoreOp,
        LoadOp,
        StoreOp,
        *ALU_OPS,
    ],
    [AccType],
)

__all__ = [
    "ALU_OPS",
    "PG_UOP",
    "AccLoadOp",
    "AccOp",
    "AccStoreOp",
    "AccType",
    "BarrierOp",
    "BinaryOp",
    "CastOp",
    "CmpOp",
    "ConstOp",
    "EndIfOp",
    "EndOp",
    "IfOp",
    "KernelOp",
    "LoadOp",
    "RangeOp",
    "SharedOp",
    "SpecialOp",
    "StoreOp",
    "UnaryOp",
    "WhereOp",
]
