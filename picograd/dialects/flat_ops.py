"""What the flat-kernel dialects share: the syntax, construction and checks of ops alike.

`pg_uop` (stage 4) and the target dialects `pg_c`, `pg_wgsl` and `pg_ptx` (stage 5) hold a
kernel as one flat, ordered block of statements, so many of their ops have the same shape:

    <kernel op> @k(%a: !pg.buffer<4xf32>) <header> { ... }   FlatFunction, LaunchedFunction
    %i = <dialect>.for 0 to 64                                ForLoopSyntax
    %c = <dialect>.const 1.5 : f32                            ConstSyntax
    %acc = <dialect>.<declare> 0.0 : f32                      CellDeclSyntax
    %v = <dialect>.<read> %acc : f32                          CellReadSyntax
    <dialect>.<write> %acc, %v : f32                          CellWriteSyntax
    %v = <dialect>.load %a[%i] if %m else 0.0 : ... -> f32    MaskedLoadSyntax

A cell is a mutable local or register holding one scalar (`!pg_c.var<f32>`,
`!pg_wgsl.var<f32>`, `!pg_uop.acc<f32>`, `!pg_ptx.reg<f32>`: subclasses of `CellType`).

The classes here are op bases without IRDL fields: each op class declares its own operands,
results and properties (by the names the bases read, listed in each base's docstring) next
to its docstring and IR example, and gets `__init__`, `parse`/`print` and `verify_` from its
base. A dialect's own checks (which scalar types it has) come first in the op's `verify_`,
which then calls the base's. Error messages keep each dialect's words ("variable",
"register") through the bases' `CELL_NOUN`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IndexType, IntAttr, StringAttr, i1
from xdsl.ir import (
    Attribute,
    Block,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import IRDLOperation
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from picograd.dialects.pg import BufferType
from picograd.dialects.syntax import (
    int_array,
    int_tuple,
    parse_int_list,
    parse_kernel_signature,
    parse_number,
    print_int_list,
    print_kernel_signature,
    print_number,
    scalar_attr,
    scalar_value,
)


def fail(op: Operation, message: str) -> VerifyException:
    """The verifier error of `op`: `'pg_c.const': <message>`."""
    return VerifyException(f"'{op.name}': {message}")


# ── kernels ──────────────────────────────────────────────────────────────────


def flat_body(arg_types: Sequence[Attribute], body: Region | None) -> Region:
    """`body`, or a new region of one block with arguments of `arg_types`."""
    return body if body is not None else Region(Block(arg_types=arg_types))


class FlatFunction(IRDLOperation):
    """A kernel as one flat block, `@name(%a: !pg.buffer<4xf32>, ...) <header> { ... }`.

    The op declares `sym_name` (a property) and `body` (a single-block region); the words
    between the arguments and the body (`restrict`, a launch) are its properties, read by
    `parse_header` and written by `print_header` (none by default).
    """

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.regions[0].block.args)

    @property
    def kernel_name(self) -> str:
        sym_name = self.properties["sym_name"]
        assert isinstance(sym_name, StringAttr)
        return sym_name.data

    @property
    def where(self) -> str:
        """`@name`, which starts the kernel's verifier messages."""
        return f"@{self.kernel_name}"

    @classmethod
    def parse_header(cls, parser: Parser) -> dict[str, Attribute]:
        return {}

    def print_header(self, printer: Printer) -> None:
        pass

    @classmethod
    def parse(cls, parser: Parser) -> FlatFunction:
        name, args = parse_kernel_signature(parser)
        properties = {"sym_name": StringAttr(name), **cls.parse_header(parser)}
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls.create(properties=properties, regions=[parser.parse_region(args)])
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        print_kernel_signature(printer, self.kernel_name, self.args)
        self.print_header(printer)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        # An empty body prints as `{ }`: its block and arguments come from the header.
        printer.print_region(self.regions[0], print_entry_block_args=False,
                             print_empty_block=False)

    def verify_buffer_args(self) -> None:
        for arg in self.args:
            if not isinstance(arg.type, BufferType):
                raise fail(self, f"{self.where}: arguments must be !pg.buffer, got {arg.type}")

    def verify_nesting(self, loop: type[Operation], end_loop: type[Operation], word: str,
                       guard: tuple[type[Operation], type[Operation]] | None = None) -> None:
        """The body is flat and its `loop`/`end_loop` pairs (and `guard` open/close pairs,
        where the dialect has guards) nest; `word` names a loop in the messages."""
        open_ops: list[Operation] = []  # innermost last
        openers = (loop, guard[0]) if guard is not None else (loop,)
        for op in self.regions[0].block.ops:
            if isinstance(op, openers):
                open_ops.append(op)
            elif isinstance(op, end_loop):
                if not open_ops or open_ops[-1] is not op.operands[0].owner:
                    innermost = f"{word} or if" if guard is not None else "one"
                    raise fail(self, f"{self.where}: '{op.name}' closes a {word} that is not "
                                     f"the innermost open {innermost}")
                open_ops.pop()
            elif guard is not None and isinstance(op, guard[1]):
                if not open_ops or not isinstance(open_ops[-1], guard[0]):
                    raise fail(self, f"{self.where}: '{op.name}' does not close an open if")
                open_ops.pop()
            elif op.regions:
                raise fail(self, f"{self.where}: the body must be flat, found {op.name}")
        if open_ops:
            what = f"{word}(s) or if(s)" if guard is not None else f"{word}(s)"
            raise fail(self, f"{self.where}: {len(open_ops)} {what} never closed")


class LaunchedFunction(FlatFunction):
    """A GPU kernel with its launch, `@name(...) grid [4, 1, 1] block [64, 1, 1] { ... }`:
    `grid` work groups per dimension and `block` work items per group (properties of the op,
    i64 arrays; the op checks them against its target's limits)."""

    def __init__(self, name: str, arg_types: Sequence[Attribute], grid: Sequence[int],
                 block: Sequence[int], body: Region | None = None):
        super().__init__(
            properties={"sym_name": StringAttr(name), "grid": int_array(tuple(grid)),
                        "block": int_array(tuple(block))},
            regions=[flat_body(arg_types, body)],
        )

    def _dims(self, which: str) -> tuple[int, ...]:
        attr = self.properties[which]
        assert isinstance(attr, DenseArrayBase)
        return int_tuple(attr)

    @property
    def grid_dims(self) -> tuple[int, ...]:
        return self._dims("grid")

    @property
    def block_dims(self) -> tuple[int, ...]:
        return self._dims("block")

    @property
    def launch(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(grid, block): work groups per dimension, work items per group."""
        return self.grid_dims, self.block_dims

    @classmethod
    def parse_header(cls, parser: Parser) -> dict[str, Attribute]:
        parser.parse_keyword("grid")
        grid = parse_int_list(parser)
        parser.parse_keyword("block")
        return {"grid": int_array(grid), "block": int_array(parse_int_list(parser))}

    def print_header(self, printer: Printer) -> None:
        printer.print_string(" grid ")
        print_int_list(printer, self.grid_dims)
        printer.print_string(" block ")
        print_int_list(printer, self.block_dims)


class ForLoopSyntax(IRDLOperation):
    """`%i = <dialect>.for 0 to 64`: open a loop over `[start, end)`; the result is the
    induction variable, of the op's `INDEX_TYPE`. The op declares `start` and `end`
    (`IntAttr` properties) and `result`."""

    INDEX_TYPE: ClassVar[Attribute]

    def __init__(self, start: int, end: int):
        super().__init__(properties={"start": IntAttr(start), "end": IntAttr(end)},
                         result_types=[self.INDEX_TYPE])

    @property
    def bounds(self) -> tuple[int, int]:
        start, end = self.properties["start"], self.properties["end"]
        assert isinstance(start, IntAttr) and isinstance(end, IntAttr)
        return start.data, end.data

    def verify_(self) -> None:
        start, end = self.bounds
        if end < start:
            raise fail(self, f"empty range [{start}, {end})")

    @classmethod
    def parse(cls, parser: Parser) -> ForLoopSyntax:
        start = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        op = cls(start, parser.parse_integer(allow_boolean=False))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        start, end = self.bounds
        printer.print_string(f" {start} to {end}")
        printer.print_op_attributes(self.attributes)


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
    """`%c = <dialect>.const 1.5 : f32`: a literal of the result type. The op declares
    `value` (a scalar property) and `result`."""

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
    `init` (a scalar property) and `result` (of its `CELL_TYPE`)."""

    CELL_TYPE: ClassVar[type[CellType]]
    CELL_NOUN: ClassVar[str]  # "variable" or "register", in messages

    def __init__(self, init: float | int | bool, element_type: Attribute):
        super().__init__(properties={"init": scalar_attr(init, element_type)},
                         result_types=[self.CELL_TYPE(element_type)])

    @property
    def element_type(self) -> Attribute:
        cell = self.results[0].type
        assert isinstance(cell, CellType)
        return cell.element_type

    def verify_(self) -> None:
        init_type = self.properties["init"].type  # pyright: ignore[reportAttributeAccessIssue]
        if init_type != self.element_type:
            raise fail(self, f"init type {init_type} != {self.CELL_NOUN} type "
                             f"{self.element_type}")

    @classmethod
    def parse(cls, parser: Parser) -> CellDeclSyntax:
        return _parse_literal(cls, parser)

    def print(self, printer: Printer) -> None:
        _print_literal(printer, self, self.properties["init"], self.element_type)


class CellReadSyntax(IRDLOperation):
    """`%v = <dialect>.<read> %acc : f32`: a fresh value holding what the cell holds. The op
    declares the cell operand (of its `CELL_TYPE`) and `result`."""

    CELL_TYPE: ClassVar[type[CellType]]
    CELL_NOUN: ClassVar[str]

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
    (of its `CELL_TYPE`), then the value."""

    CELL_TYPE: ClassVar[type[CellType]]
    CELL_NOUN: ClassVar[str]

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


# ── memory ───────────────────────────────────────────────────────────────────


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


class MaskedLoadSyntax:
    """Syntax and checks shared by `pg_uop.load`, `pg_loop.load`, `pg_c.load` and
    `pg_wgsl.load`:

    %v = <op> %buf[%i] : !pg.buffer<32xf32> -> f32
    %w = <op> %buf[%i] if %m else 0.0 : !pg.buffer<32xf32> -> f32
    """

    # The op classes declare `buffer`, `index` (of INDEX_TYPE), `mask`, `other` and `result`
    # (IRDL forbids annotations on a mixin, so they are not repeated here).
    INDEX_TYPE: ClassVar[Attribute] = IndexType()

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
            raise fail(
                self,
                f"result type {self.result.type} != buffer element type "
                f"{self.buffer.type.element_type}",
            )
        if (self.mask is None) != (self.other is None):
            raise fail(self, "a mask needs an 'other' value and vice versa")

    @classmethod
    def parse(cls, parser: Parser):
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
        op = cls(values[0], values[1], values[2] if mask is not None else None, other)  # type: ignore[call-arg]
        op.attributes.update(attrs)  # pyright: ignore[reportAttributeAccessIssue]
        return op

    def print(self: Any, printer: Printer) -> None:
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
