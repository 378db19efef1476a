"""`pg_c`: C statements as ops; printing a `pg_c.func` gives C source.

The fifth stage of the C target. Every op is one C statement (or the opening / closing line
of a `for` loop), in the order the C source lists them, so `module_to_c`
(`picograd/lowering/c_source.py`) prints a function by walking its flat block once. Value ops
declare a fresh local (`T vN = <expr>;`); operators are spelled as in C (`"+"`, `"<"`, `"!"`),
math functions by their `<math.h>` name (`"expf"`).

    pg_c.func @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) restrict {
      %i = pg_c.for 0 to 4                                  for (int64_t i = 0; i < 4; i++) {
      %acc = pg_c.decl 0.0 : f32                              float acc = 0.0f;
      %j = pg_c.for 0 to 8                                    for (int64_t j = 0; j < 8; j++) {
      %c8 = pg_c.const 8 : index                                int64_t c8 = 8;
      %o = pg_c.binary "*" %i, %c8 : index                      int64_t o = i * c8;
      %idx = pg_c.binary "+" %o, %j : index                     int64_t idx = o + j;
      %v = pg_c.load %a[%idx] : !pg.buffer<32xf32> -> f32       float v = a[idx];
      %old = pg_c.read %acc : f32                               float old = acc;
      %new = pg_c.binary "+" %old, %v : f32                     float new = old + v;
      pg_c.assign %acc, %new : f32                              acc = new;
      pg_c.end_for %j                                         }
      %r = pg_c.read %acc : f32                               float r = acc;
      pg_c.store %r, %out[%i] : f32, !pg.buffer<4xf32>        out[i] = r;
      pg_c.end_for %i                                       }
    }

Operand and result types are picograd element types (`f32`, `i1`, `index`, ...); buffers are
`!pg.buffer` (a pointer parameter) and mutable locals `!pg_c.var<T>`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    StringAttr,
    UnitAttr,
    i1,
)
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

from picograd.dialects.dtypes import ELEMENT_TYPES, is_bool, is_float, is_int
from picograd.dialects.pg import BufferType
from picograd.dialects.pg_uop import MaskedLoadSyntax, check_store
from picograd.dialects.syntax import (
    parse_kernel_signature,
    parse_number,
    print_kernel_signature,
    print_number,
    scalar_attr,
    scalar_value,
)

# C operators by the operand types they accept. `max`/`min` are not C operators: they print
# as conditional expressions (NaN-propagating on floats, as numpy's maximum/minimum).
FLOAT_BINARY = ("+", "-", "*", "/", "max", "min")
INT_BINARY = ("+", "-", "*", "/", "%", "&", "|", "^", "max", "min")
BOOL_BINARY = ("&", "|", "^")
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
PREFIX = ("-", "!", "~")
# <math.h> functions of one argument: the float flavour (also used for f16) and the double one.
MATH_F32 = ("expf", "logf", "sqrtf", "sinf")
MATH_F64 = ("exp", "log", "sqrt", "sin")


def _fail(op: Operation, message: str) -> VerifyException:
    return VerifyException(f"'{op.name}': {message}")


def is_scalar(t: Attribute) -> bool:
    """A type a C local of this dialect can hold: an element type or `index`."""
    return t in ELEMENT_TYPES or isinstance(t, IndexType)


def _check_scalar(op: Operation, t: Attribute) -> None:
    if not is_scalar(t):
        raise _fail(op, f"expected an element type or index, got {t}")


@irdl_attr_definition
class VarType(ParametrizedAttribute, TypeAttribute):
    """A mutable C local holding one scalar: `!pg_c.var<f32>`."""

    name = "pg_c.var"
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


# ── function and loops ───────────────────────────────────────────────────────


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A C function `void name(T0* p0, ...)`, one pointer per buffer argument; its body is
    flat and `for`/`end_for` pairs nest. `restrict` marks every pointer `restrict`.

        pg_c.func @k(%a: !pg.buffer<4xf32>) restrict {
          %i = pg_c.for 0 to 4
          %one = pg_c.const 1.0 : f32
          pg_c.store %one, %a[%i] : f32, !pg.buffer<4xf32>
          pg_c.end_for %i
        }
    """

    name = "pg_c.func"
    sym_name = prop_def(StringAttr)
    restrict = opt_prop_def(UnitAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    def __init__(self, name: str, arg_types: Sequence[Attribute], body: Region | None = None,
                 restrict: bool = False):
        body = body if body is not None else Region(Block(arg_types=arg_types))
        props: dict[str, Attribute | None] = {"sym_name": StringAttr(name)}
        if restrict:
            props["restrict"] = UnitAttr()
        super().__init__(properties=props, regions=[body])

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args)

    def verify_(self) -> None:
        where = f"@{self.sym_name.data}"
        for arg in self.body.block.args:
            if not isinstance(arg.type, BufferType):
                raise _fail(self, f"{where}: arguments must be !pg.buffer, got {arg.type}")
        open_loops: list[SSAValue] = []
        for op in self.body.block.ops:
            if isinstance(op, ForOp):
                open_loops.append(op.result)
            elif isinstance(op, EndForOp):
                if not open_loops or open_loops[-1] != op.loop:
                    raise _fail(self, f"{where}: 'pg_c.end_for' closes a loop that is not the "
                                      "innermost open one")
                open_loops.pop()
            elif op.regions:
                raise _fail(self, f"{where}: the body must be flat, found {op.name}")
        if open_loops:
            raise _fail(self, f"{where}: {len(open_loops)} loop(s) never closed")

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name, args = parse_kernel_signature(parser)
        restrict = parser.parse_optional_keyword("restrict") is not None
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(name, [], parser.parse_region(args), restrict)
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        print_kernel_signature(printer, self.sym_name.data, self.body.block.args)
        if self.restrict is not None:
            printer.print_string(" restrict")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        # An empty body prints as `{ }`: its block and arguments come from the header.
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)


@irdl_op_definition
class ForOp(IRDLOperation):
    """Open `for (int64_t i = start; i < end; i++) {`; the result is `i`.

        %i = pg_c.for 0 to 64
    """

    name = "pg_c.for"
    start = prop_def(IntAttr)
    end = prop_def(IntAttr)
    result = result_def(IndexType)

    def __init__(self, start: int, end: int):
        super().__init__(properties={"start": IntAttr(start), "end": IntAttr(end)},
                         result_types=[IndexType()])

    def verify_(self) -> None:
        if self.end.data < self.start.data:
            raise _fail(self, f"empty range [{self.start.data}, {self.end.data})")

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        start = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        op = cls(start, parser.parse_integer(allow_boolean=False))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.start.data} to {self.end.data}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class EndForOp(IRDLOperation):
    """Close the innermost open loop: `}`.

        pg_c.end_for %i
    """

    name = "pg_c.end_for"
    loop = operand_def(IndexType)
    assembly_format = "$loop attr-dict"

    def __init__(self, loop: SSAValue):
        super().__init__(operands=[loop])

    def verify_(self) -> None:
        if not isinstance(self.loop.owner, ForOp):
            raise _fail(self, "operand must be the result of a pg_c.for")


# ── mutable locals ───────────────────────────────────────────────────────────


@irdl_op_definition
class DeclOp(IRDLOperation):
    """Declare a mutable local and initialise it: `float acc = 0.0f;`.

        %acc = pg_c.decl 0.0 : f32
    """

    name = "pg_c.decl"
    init = prop_def(FloatAttr | IntegerAttr)
    result = result_def(VarType)

    def __init__(self, init: float | int | bool, element_type: Attribute):
        attr = (IntegerAttr(int(init), element_type) if isinstance(element_type, IndexType)
                else scalar_attr(init, element_type))
        super().__init__(properties={"init": attr}, result_types=[VarType(element_type)])

    @property
    def element_type(self) -> Attribute:
        assert isinstance(self.result.type, VarType)
        return self.result.type.element_type

    def verify_(self) -> None:
        _check_scalar(self, self.element_type)
        if self.init.type != self.element_type:
            raise _fail(self, f"init type {self.init.type} != variable type {self.element_type}")

    @classmethod
    def parse(cls, parser: Parser) -> DeclOp:
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


def _var_element(op: Operation, var: SSAValue, value_type: Attribute) -> None:
    assert isinstance(var.type, VarType)
    if var.type.element_type != value_type:
        raise _fail(op, f"value type {value_type} != variable type {var.type.element_type}")


@irdl_op_definition
class AssignOp(IRDLOperation):
    """Overwrite a mutable local: `acc = v;`.

        pg_c.assign %acc, %v : f32
    """

    name = "pg_c.assign"
    var = operand_def(VarType)
    value = operand_def(AnyAttr())

    def __init__(self, var: SSAValue, value: SSAValue):
        super().__init__(operands=[var, value])

    def verify_(self) -> None:
        _var_element(self, self.var, self.value.type)

    @classmethod
    def parse(cls, parser: Parser) -> AssignOp:
        var = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        value = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        var_v, value_v = parser.resolve_operands([var, value], [VarType(t), t], parser.pos)
        op = cls(var_v, value_v)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.var)
        printer.print_string(", ")
        printer.print_operand(self.value)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)


@irdl_op_definition
class ReadOp(IRDLOperation):
    """Copy a mutable local into a fresh value: `float v = acc;`.

        %v = pg_c.read %acc : f32
    """

    name = "pg_c.read"
    var = operand_def(VarType)
    result = result_def(AnyAttr())

    def __init__(self, var: SSAValue):
        assert isinstance(var.type, VarType)
        super().__init__(operands=[var], result_types=[var.type.element_type])

    def verify_(self) -> None:
        _var_element(self, self.var, self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ReadOp:
        var = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        (value,) = parser.resolve_operands([var], [VarType(parser.parse_type())], parser.pos)
        op = cls(value)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.var)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


# ── values ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class ConstOp(IRDLOperation):
    """A literal: `float v = 1.5f;` (`INFINITY`, `NAN` for the special floats).

        %c = pg_c.const 1.5 : f32
    """

    name = "pg_c.const"
    value = prop_def(FloatAttr | IntegerAttr)
    result = result_def(AnyAttr())
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: float | int | bool, result_type: Attribute):
        attr = (IntegerAttr(int(value), result_type) if isinstance(result_type, IndexType)
                else scalar_attr(value, result_type))
        super().__init__(properties={"value": attr}, result_types=[result_type])

    @property
    def scalar(self) -> float | int:
        return scalar_value(self.value)

    def verify_(self) -> None:
        _check_scalar(self, self.result.type)
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
    """A prefix operator: `-x` (numbers), `!x` (bool), `~x` (integers).

        %y = pg_c.unary "-" %x : f32
    """

    name = "pg_c.unary"
    T: ClassVar = VarConstraint("T", AnyAttr())
    operator = prop_def(StringAttr)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$operator $input attr-dict `:` type($result)"

    def __init__(self, operator: str, x: SSAValue | Operation):
        x = SSAValue.get(x)
        super().__init__(properties={"operator": StringAttr(operator)}, operands=[x],
                         result_types=[x.type])

    def verify_(self) -> None:
        operator, t = self.operator.data, self.input.type
        _check_scalar(self, t)
        if operator not in PREFIX:
            raise _fail(self, f"unknown prefix operator {operator!r} (one of {' '.join(PREFIX)})")
        if (operator == "!" and not is_bool(t)) or (operator == "~" and not is_int(t)):
            raise _fail(self, f"{operator!r} is not defined on {t}")


@irdl_op_definition
class CallOp(IRDLOperation):
    """A one-argument `<math.h>` function: `float y = expf(x);` (`exp` etc. on f64; f16
    values go through the float flavour).

        %y = pg_c.call "expf"(%x) : f32
    """

    name = "pg_c.call"
    T: ClassVar = VarConstraint("T", AnyAttr())
    callee = prop_def(StringAttr)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$callee `(` $input `)` attr-dict `:` type($result)"

    def __init__(self, callee: str, x: SSAValue | Operation):
        x = SSAValue.get(x)
        super().__init__(properties={"callee": StringAttr(callee)}, operands=[x],
                         result_types=[x.type])

    def verify_(self) -> None:
        callee, t = self.callee.data, self.input.type
        if not is_float(t):
            raise _fail(self, f"math functions take a float, got {t}")
        allowed = MATH_F64 if t.bitwidth == 64 else MATH_F32  # type: ignore[attr-defined]
        if callee not in allowed:
            raise _fail(self, f"{callee!r} does not take {t} (one of {', '.join(allowed)})")


@irdl_op_definition
class BinaryOp(IRDLOperation):
    """An infix operator on two values of one type: `float z = x + y;`. Integer `/` and `%`
    print guarded (a zero divisor gives 0, as in numpy); `max`/`min` print as conditional
    expressions that propagate NaN on floats.

        %z = pg_c.binary "+" %x, %y : f32
    """

    name = "pg_c.binary"
    T: ClassVar = VarConstraint("T", AnyAttr())
    operator = prop_def(StringAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$operator $lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, operator: str, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(properties={"operator": StringAttr(operator)}, operands=[lhs, rhs],
                         result_types=[lhs.type])

    def verify_(self) -> None:
        operator, t = self.operator.data, self.lhs.type
        _check_scalar(self, t)
        allowed = FLOAT_BINARY if is_float(t) else BOOL_BINARY if is_bool(t) else INT_BINARY
        if operator not in allowed:
            raise _fail(self, f"{operator!r} is not defined on {t} (one of {' '.join(allowed)})")


@irdl_op_definition
class CmpOp(IRDLOperation):
    """A comparison giving a bool: `bool m = x < y;` (`!=` holds when either is NaN).

        %m = pg_c.cmp "<" %x, %y : f32
    """

    name = "pg_c.cmp"
    T: ClassVar = VarConstraint("T", AnyAttr())
    operator = prop_def(StringAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(i1)
    traits = traits_def(Pure())
    assembly_format = "$operator $lhs `,` $rhs attr-dict `:` type($lhs)"

    def __init__(self, operator: str, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(properties={"operator": StringAttr(operator)}, operands=[lhs, rhs],
                         result_types=[i1])

    def verify_(self) -> None:
        _check_scalar(self, self.lhs.type)
        if self.operator.data not in COMPARISONS:
            raise _fail(self, f"unknown comparison {self.operator.data!r} "
                              f"(one of {' '.join(COMPARISONS)})")


@irdl_op_definition
class SelectOp(IRDLOperation):
    """The conditional operator: `float r = c ? x : y;`.

        %r = pg_c.select %c, %x, %y : f32
    """

    name = "pg_c.select"
    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def(i1)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, cond: SSAValue | Operation, lhs: SSAValue | Operation,
                 rhs: SSAValue | Operation):
        super().__init__(operands=[cond, lhs, rhs], result_types=[SSAValue.get(lhs).type])

    def verify_(self) -> None:
        _check_scalar(self, self.lhs.type)


@irdl_op_definition
class CastOp(IRDLOperation):
    """A conversion: `int32_t r = (int32_t)x;` (float to int truncates, to bool is `!= 0`).

        %r = pg_c.cast %x : f32 to i32
    """

    name = "pg_c.cast"
    input = operand_def(AnyAttr())
    result = result_def(AnyAttr())
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, x: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[x], result_types=[result_type])

    def verify_(self) -> None:
        _check_scalar(self, self.input.type)
        _check_scalar(self, self.result.type)


# ── memory ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class LoadOp(MaskedLoadSyntax, IRDLOperation):
    """Read an element: `float v = a[i];`; masked: `float w = m ? a[i] : 0.0f;`.

        %v = pg_c.load %a[%i] : !pg.buffer<32xf32> -> f32
        %w = pg_c.load %a[%i] if %m else 0.0 : !pg.buffer<32xf32> -> f32
    """

    name = "pg_c.load"
    buffer = operand_def(BufferType)
    index = operand_def(IndexType)
    mask = opt_operand_def(i1)
    other = opt_prop_def(FloatAttr | IntegerAttr)
    result = result_def(AnyAttr())

    def __init__(self, buffer: SSAValue, index: SSAValue, mask: SSAValue | None = None,
                 other: float | int | bool = 0):
        props, dtype = self.load_properties(buffer, mask, other)
        super().__init__(operands=[buffer, index, mask], properties=props, result_types=[dtype])


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write an element: `out[i] = v;`.

        pg_c.store %v, %out[%i] : f32, !pg.buffer<4xf32>
    """

    name = "pg_c.store"
    value = operand_def(AnyAttr())
    buffer = operand_def(BufferType)
    index = operand_def(IndexType)
    assembly_format = ("$value `,` $buffer `[` $index `]` attr-dict `:` type($value) `,` "
                       "type($buffer)")

    def __init__(self, value: SSAValue, buffer: SSAValue, index: SSAValue):
        super().__init__(operands=[value, buffer, index])

    def verify_(self) -> None:
        check_store(self, self.value, self.buffer)


VALUE_OPS = (ConstOp, UnaryOp, CallOp, BinaryOp, CmpOp, SelectOp, CastOp, ReadOp, LoadOp)

PG_C = Dialect(
    "pg_c",
    [FuncOp, ForOp, EndForOp, DeclOp, AssignOp, ReadOp, ConstOp, UnaryOp, CallOp, BinaryOp,
     CmpOp, SelectOp, CastOp, LoadOp, StoreOp],
    [VarType],
)
