"""`pg_wgsl`: WGSL statements as ops; printing a `pg_wgsl.fn` gives a WGSL compute shader.

The fifth stage of the WebGPU target. Every op is one WGSL statement (or the opening /
closing line of a `for` loop or an `if`), in the order the source lists them, so
`module_to_wgsl` (`picograd/lowering/wgsl_source.py`) prints a function by walking its flat
block once. Value ops declare a fresh `let`; operators are spelled as in WGSL (`"+"`, `"<"`,
`"!"`), built-in functions by their WGSL name (`"exp"`).

    pg_wgsl.fn @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) grid [4, 1, 1] block [1, 1, 1] {
      %g = pg_wgsl.builtin workgroup_id 0                   let g = i32(wid.x);
      %acc = pg_wgsl.var 0.0 : f32                          var acc: f32 = 0.0f;
      %j = pg_wgsl.for 0 to 8                               for (var j: i32 = 0; j < 8; j++) {
      %c8 = pg_wgsl.const 8 : i32                             let c8 = 8i;
      %o = pg_wgsl.binary "*" %g, %c8 : i32                   let o = g * c8;
      %idx = pg_wgsl.binary "+" %o, %j : i32                  let idx = o + j;
      %v = pg_wgsl.load %a[%idx] : !pg.buffer<32xf32> -> f32  let v = k0_p0[idx];
      %old = pg_wgsl.read %acc : f32                          let old = acc;
      %new = pg_wgsl.binary "+" %old, %v : f32                let new = old + v;
      pg_wgsl.assign %acc, %new : f32                         acc = new;
      pg_wgsl.end_for %j                                    }
      %r = pg_wgsl.read %acc : f32                          let r = acc;
      pg_wgsl.store %r, %out[%g] : f32, !pg.buffer<4xf32>   k0_p1[g] = r;
    }

prints (with the buffers bound at module scope, see `module_to_wgsl`) as the entry point
`@compute @workgroup_size(1, 1, 1) fn k0(...)` whose body is the right-hand column.

Values are `f32`, `i32` (also every index: WGSL indexes arrays with i32) or `i1` (WGSL
`bool`); buffers are `!pg.buffer` (a storage array, or a `var<workgroup>` array for
`pg_wgsl.workgroup`) and mutable locals `!pg_wgsl.var<T>`. A bool buffer is stored as
`array<u32>` (bool is not host-shareable), which the printer hides: loads compare with `0u`,
stores select `0u`/`1u`. `grid` and `block` are the launch: work groups per dimension
(`dispatchWorkgroups`) and work items per group (`@workgroup_size`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    StringAttr,
    f32,
    i1,
    i32,
    i64,
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

from picograd.dialects.dtypes import is_bool, is_float, is_int
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

# The scalar types WGSL shares with picograd (bool is `i1`).
SCALAR_TYPES: tuple[Attribute, ...] = (f32, i32, i1)

# WGSL operators by the operand types they accept. `max`/`min` print as the built-ins on
# i32 and as NaN-propagating selects on f32; integer `/` and `%` print guarded.
FLOAT_BINARY = ("+", "-", "*", "/", "max", "min")
INT_BINARY = ("+", "-", "*", "/", "%", "&", "|", "^", "max", "min")
BOOL_BINARY = ("&", "|")  # non-short-circuit logical and / or; xor is `!=`
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
BOOL_COMPARISONS = ("==", "!=")  # WGSL does not order bools
PREFIX = ("-", "!", "~")
# WGSL built-in functions of one f32.
MATH = ("exp", "log", "sqrt", "sin", "exp2", "log2")
# The compute-shader built-in values a kernel reads (`vec3<u32>`, one component each).
BUILTINS = ("workgroup_id", "local_invocation_id")


def _fail(op: Operation, message: str) -> VerifyException:
    return VerifyException(f"'{op.name}': {message}")


def is_scalar(t: Attribute) -> bool:
    """A type a WGSL value of this dialect can have: f32, i32 or i1 (bool)."""
    return t in SCALAR_TYPES


def _check_scalar(op: Operation, t: Attribute) -> None:
    if not is_scalar(t):
        raise _fail(op, f"expected f32, i32 or i1, got {t}")


def _check_buffer(op: Operation, t: Attribute) -> None:
    if not isinstance(t, BufferType):
        raise _fail(op, f"expected a !pg.buffer, got {t}")
    if not is_scalar(t.element_type):
        raise _fail(op, f"buffer element type {t.element_type} is not f32, i32 or i1")


def _print_attributes(printer: Printer, op: Operation) -> None:
    printer.print_op_attributes(op.attributes)


@irdl_attr_definition
class VarType(ParametrizedAttribute, TypeAttribute):
    """A mutable WGSL local (`var`) holding one scalar: `!pg_wgsl.var<f32>`."""

    name = "pg_wgsl.var"
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


# ── function, loops and guards ───────────────────────────────────────────────


def _launch_dims(op: Operation, what: str, attr: DenseArrayBase) -> tuple[int, ...]:
    if attr.elt_type != i64:
        raise _fail(op, f"{what} must be an i64 array, got {attr.elt_type}")
    dims = int_tuple(attr)
    if len(dims) != 3 or any(d < 1 for d in dims):
        raise _fail(op, f"{what} must be 3 positive sizes, got {list(dims)}")
    return dims


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A compute entry point `@compute @workgroup_size(block) fn name(...)`, launched over
    `grid` work groups; each buffer argument is one storage binding, in order. Its body is
    flat and `for`/`end_for`, `if`/`end_if` pairs nest.

        pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [4, 1, 1] {
          %i = pg_wgsl.builtin local_invocation_id 0
          %one = pg_wgsl.const 1.0 : f32
          pg_wgsl.store %one, %a[%i] : f32, !pg.buffer<4xf32>
        }
    """

    name = "pg_wgsl.fn"
    sym_name = prop_def(StringAttr)
    grid = prop_def(DenseArrayBase, prop_name="grid")
    block_size = prop_def(DenseArrayBase, prop_name="block")
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    def __init__(self, name: str, arg_types: Sequence[Attribute], grid: Sequence[int],
                 block: Sequence[int], body: Region | None = None):
        body = body if body is not None else Region(Block(arg_types=arg_types))
        super().__init__(
            properties={"sym_name": StringAttr(name), "grid": int_array(tuple(grid)),
                        "block": int_array(tuple(block))},
            regions=[body])

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args)

    @property
    def launch(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(grid, block): work groups per dimension, work items per group."""
        return int_tuple(self.grid), int_tuple(self.block_size)

    def verify_(self) -> None:
        where = f"@{self.sym_name.data}"
        _launch_dims(self, f"{where}: grid", self.grid)
        _launch_dims(self, f"{where}: block", self.block_size)
        for arg in self.body.block.args:
            if not isinstance(arg.type, BufferType):
                raise _fail(self, f"{where}: arguments must be !pg.buffer, got {arg.type}")
        self._verify_nesting(where)

    def _verify_nesting(self, where: str) -> None:
        open_blocks: list[Operation] = []  # the open `for` and `if` ops, innermost last
        for op in self.body.block.ops:
            if isinstance(op, ForOp | IfOp):
                open_blocks.append(op)
            elif isinstance(op, EndForOp):
                if not open_blocks or open_blocks[-1] is not op.loop.owner:
                    raise _fail(self, f"{where}: 'pg_wgsl.end_for' closes a loop that is not "
                                      "the innermost open loop or if")
                open_blocks.pop()
            elif isinstance(op, EndIfOp):
                if not open_blocks or not isinstance(open_blocks[-1], IfOp):
                    raise _fail(self, f"{where}: 'pg_wgsl.end_if' does not close an open if")
                open_blocks.pop()
            elif op.regions:
                raise _fail(self, f"{where}: the body must be flat, found {op.name}")
        if open_blocks:
            raise _fail(self, f"{where}: {len(open_blocks)} loop(s) or if(s) never closed")

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name, args = parse_kernel_signature(parser)
        parser.parse_keyword("grid")
        grid = parse_int_list(parser)
        parser.parse_keyword("block")
        block = parse_int_list(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(name, [], grid, block, parser.parse_region(args))
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        print_kernel_signature(printer, self.sym_name.data, self.body.block.args)
        printer.print_string(" grid ")
        print_int_list(printer, int_tuple(self.grid))
        printer.print_string(" block ")
        print_int_list(printer, int_tuple(self.block_size))
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        # An empty body prints as `{ }`: its block and arguments come from the header.
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)


@irdl_op_definition
class ForOp(IRDLOperation):
    """Open `for (var i: i32 = start; i < end; i++) {`; the result is `i`.

        %i = pg_wgsl.for 0 to 64
    """

    name = "pg_wgsl.for"
    start = prop_def(IntAttr)
    end = prop_def(IntAttr)
    result = result_def(i32)

    def __init__(self, start: int, end: int):
        super().__init__(properties={"start": IntAttr(start), "end": IntAttr(end)},
                         result_types=[i32])

    def verify_(self) -> None:
        start, end = self.start.data, self.end.data
        if end < start:
            raise _fail(self, f"empty range [{start}, {end})")
        if not -(2**31) <= start <= end <= 2**31 - 1:
            raise _fail(self, f"range [{start}, {end}) does not fit in i32")

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        start = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        op = cls(start, parser.parse_integer(allow_boolean=False))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.start.data} to {self.end.data}")
        _print_attributes(printer, self)


@irdl_op_definition
class EndForOp(IRDLOperation):
    """Close the innermost open loop: `}`.

        pg_wgsl.end_for %i
    """

    name = "pg_wgsl.end_for"
    loop = operand_def(i32)
    assembly_format = "$loop attr-dict"

    def __init__(self, loop: SSAValue):
        super().__init__(operands=[loop])

    def verify_(self) -> None:
        if not isinstance(self.loop.owner, ForOp):
            raise _fail(self, "operand must be the result of a pg_wgsl.for")


@irdl_op_definition
class IfOp(IRDLOperation):
    """Open `if (cond) {`: the statements up to the matching `end_if` run where it holds.

        pg_wgsl.if %ok
    """

    name = "pg_wgsl.if"
    cond = operand_def(i1)
    assembly_format = "$cond attr-dict"

    def __init__(self, cond: SSAValue | Operation):
        super().__init__(operands=[cond])


@irdl_op_definition
class EndIfOp(IRDLOperation):
    """Close the innermost open `if`: `}`.

        pg_wgsl.end_if
    """

    name = "pg_wgsl.end_if"
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """Wait for every work item of the group and make its workgroup writes visible:
    `workgroupBarrier();` (only in uniform control flow, as WGSL requires).

        pg_wgsl.workgroup_barrier
    """

    name = "pg_wgsl.workgroup_barrier"
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


# ── work-item ids and workgroup memory ───────────────────────────────────────


@irdl_op_definition
class BuiltinOp(IRDLOperation):
    """One component of a compute built-in as an i32: `let g = i32(wid.x);`
    (`workgroup_id` or `local_invocation_id`, dimension 0, 1 or 2 for x, y, z).

        %g = pg_wgsl.builtin workgroup_id 0
    """

    name = "pg_wgsl.builtin"
    kind = prop_def(StringAttr)
    dim = prop_def(IntAttr)
    result = result_def(i32)
    traits = traits_def(Pure())

    def __init__(self, kind: str, dim: int):
        super().__init__(properties={"kind": StringAttr(kind), "dim": IntAttr(dim)},
                         result_types=[i32])

    def verify_(self) -> None:
        if self.kind.data not in BUILTINS:
            raise _fail(self, f"unknown built-in {self.kind.data!r} (one of "
                              f"{', '.join(BUILTINS)})")
        if self.dim.data not in (0, 1, 2):
            raise _fail(self, f"dim must be 0, 1 or 2, got {self.dim.data}")

    @classmethod
    def parse(cls, parser: Parser) -> BuiltinOp:
        kind = parser.parse_identifier()
        op = cls(kind, parser.parse_integer(allow_boolean=False))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} {self.dim.data}")
        _print_attributes(printer, self)


@irdl_op_definition
class WorkgroupOp(IRDLOperation):
    """An array shared by the work items of a group: `var<workgroup> k_s0: array<f32, 256>;`
    at module scope (WGSL allows it nowhere else); loads and stores take it like a buffer
    argument. Its contents start undefined.

        %s = pg_wgsl.workgroup : !pg.buffer<256xf32>
    """

    name = "pg_wgsl.workgroup"
    result = result_def(BufferType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, buffer_type: BufferType):
        super().__init__(result_types=[buffer_type])

    def verify_(self) -> None:
        _check_buffer(self, self.result.type)


# ── mutable locals ───────────────────────────────────────────────────────────


@irdl_op_definition
class VarOp(IRDLOperation):
    """Declare a mutable local and initialise it: `var acc: f32 = 0.0f;`.

        %acc = pg_wgsl.var 0.0 : f32
    """

    name = "pg_wgsl.var"
    init = prop_def(FloatAttr | IntegerAttr)
    result = result_def(VarType)

    def __init__(self, init: float | int | bool, element_type: Attribute):
        super().__init__(properties={"init": scalar_attr(init, element_type)},
                         result_types=[VarType(element_type)])

    @property
    def element_type(self) -> Attribute:
        assert isinstance(self.result.type, VarType)
        return self.result.type.element_type

    def verify_(self) -> None:
        _check_scalar(self, self.element_type)
        if self.init.type != self.element_type:
            raise _fail(self, f"init type {self.init.type} != variable type {self.element_type}")

    @classmethod
    def parse(cls, parser: Parser) -> VarOp:
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
        _print_attributes(printer, self)


def _var_element(op: Operation, var: SSAValue, value_type: Attribute) -> None:
    assert isinstance(var.type, VarType)
    if var.type.element_type != value_type:
        raise _fail(op, f"value type {value_type} != variable type {var.type.element_type}")


@irdl_op_definition
class AssignOp(IRDLOperation):
    """Overwrite a mutable local: `acc = v;`.

        pg_wgsl.assign %acc, %v : f32
    """

    name = "pg_wgsl.assign"
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
        _print_attributes(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)


@irdl_op_definition
class ReadOp(IRDLOperation):
    """Copy a mutable local into a fresh value: `let v = acc;`.

        %v = pg_wgsl.read %acc : f32
    """

    name = "pg_wgsl.read"
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
        _print_attributes(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


# ── values ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class ConstOp(IRDLOperation):
    """A literal: `let c = 1.5f;` (inf and NaN, which WGSL cannot spell, print as a
    `bitcast<f32>` of their bits).

        %c = pg_wgsl.const 1.5 : f32
    """

    name = "pg_wgsl.const"
    value = prop_def(FloatAttr | IntegerAttr)
    result = result_def(AnyAttr())
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: float | int | bool, result_type: Attribute):
        super().__init__(properties={"value": scalar_attr(value, result_type)},
                         result_types=[result_type])

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
        _print_attributes(printer, self)


@irdl_op_definition
class UnaryOp(IRDLOperation):
    """A prefix operator: `-x` (f32, i32; wraps on i32), `!x` (bool), `~x` (i32).

        %y = pg_wgsl.unary "-" %x : f32
    """

    name = "pg_wgsl.unary"
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
        if ((operator == "!" and not is_bool(t)) or (operator == "~" and not is_int(t))
                or (operator == "-" and is_bool(t))):
            raise _fail(self, f"{operator!r} is not defined on {t}")


@irdl_op_definition
class CallOp(IRDLOperation):
    """A one-argument WGSL built-in function on f32: `let y = exp(x);`.

        %y = pg_wgsl.call "exp"(%x) : f32
    """

    name = "pg_wgsl.call"
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
        if self.input.type != f32:
            raise _fail(self, f"built-in functions take an f32, got {self.input.type}")
        if self.callee.data not in MATH:
            raise _fail(self, f"unknown built-in function {self.callee.data!r} (one of "
                              f"{', '.join(MATH)})")


@irdl_op_definition
class BinaryOp(IRDLOperation):
    """An infix operator on two values of one type: `let z = x + y;`. Integer `/` and `%`
    print guarded (a zero divisor gives 0 and `MIN / -1` is MIN, as on the CPU, where WGSL
    would give `x / 0 = x`); `max`/`min` print as `max(x, y)` on i32 and as selects that
    propagate NaN on f32. i32 `+ - *` wrap around.

        %z = pg_wgsl.binary "+" %x, %y : f32
    """

    name = "pg_wgsl.binary"
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
    """A comparison giving a bool: `let m = x < y;` (`!=` holds when either is NaN; bools
    compare only with `==` and `!=`).

        %m = pg_wgsl.cmp "<" %x, %y : f32
    """

    name = "pg_wgsl.cmp"
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
        operator, t = self.operator.data, self.lhs.type
        _check_scalar(self, t)
        allowed = BOOL_COMPARISONS if is_bool(t) else COMPARISONS
        if operator not in allowed:
            raise _fail(self, f"comparison {operator!r} is not defined on {t} "
                              f"(one of {' '.join(allowed)})")


@irdl_op_definition
class SelectOp(IRDLOperation):
    """Pick by a bool: `let r = select(y, x, c);` (x where c holds, else y).

        %r = pg_wgsl.select %c, %x, %y : f32
    """

    name = "pg_wgsl.select"
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
    """A value conversion: `let r = i32(x);` (f32 -> i32 truncates toward zero, anything
    -> bool is `!= 0`, bool -> number is 0 or 1).

        %r = pg_wgsl.cast %x : f32 to i32
    """

    name = "pg_wgsl.cast"
    input = operand_def(AnyAttr())
    result = result_def(AnyAttr())
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, x: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[x], result_types=[result_type])

    def verify_(self) -> None:
        _check_scalar(self, self.input.type)
        _check_scalar(self, self.result.type)
        if self.input.type == self.result.type:
            raise _fail(self, f"a cast from {self.input.type} to itself")


# ── memory ───────────────────────────────────────────────────────────────────


def _check_element(op: Operation, buffer: SSAValue, value_type: Attribute, what: str) -> None:
    _check_buffer(op, buffer.type)
    assert isinstance(buffer.type, BufferType)
    if buffer.type.element_type != value_type:
        raise _fail(op, f"{what} type {value_type} != buffer element type "
                        f"{buffer.type.element_type}")


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Read an element: `let v = k_p0[i];`; masked, `let w = select(0.0f, k_p0[select(0i,
    i, m)], m);` (where the mask fails, element 0 is read and `other` is the result).

        %v = pg_wgsl.load %a[%i] : !pg.buffer<32xf32> -> f32
        %w = pg_wgsl.load %a[%i] if %m else 0.0 : !pg.buffer<32xf32> -> f32
    """

    name = "pg_wgsl.load"
    buffer = operand_def(BufferType)
    index = operand_def(i32)
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
        _check_element(self, self.buffer, self.result.type, "result")
        if (self.mask is None) != (self.other is None):
            raise _fail(self, "a mask needs an 'other' value and vice versa")
        if self.other is not None and self.other.type != self.result.type:
            raise _fail(self, f"'other' type {self.other.type} != result type "
                              f"{self.result.type}")

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
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
        types = [buffer_type, i32] + ([i1] if mask is not None else [])
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
        if self.mask is not None and self.other is not None:
            printer.print_string(" if ")
            printer.print_operand(self.mask)
            printer.print_string(" else ")
            print_number(printer, scalar_value(self.other))
        _print_attributes(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write an element: `k_p1[i] = v;` (a bool as `select(0u, 1u, v)`).

        pg_wgsl.store %v, %out[%i] : f32, !pg.buffer<4xf32>
    """

    name = "pg_wgsl.store"
    value = operand_def(AnyAttr())
    buffer = operand_def(BufferType)
    index = operand_def(i32)
    assembly_format = ("$value `,` $buffer `[` $index `]` attr-dict `:` type($value) `,` "
                       "type($buffer)")

    def __init__(self, value: SSAValue, buffer: SSAValue, index: SSAValue):
        super().__init__(operands=[value, buffer, index])

    def verify_(self) -> None:
        _check_element(self, self.buffer, self.value.type, "value")


VALUE_OPS = (BuiltinOp, ConstOp, UnaryOp, CallOp, BinaryOp, CmpOp, SelectOp, CastOp, ReadOp,
             LoadOp)

PG_WGSL = Dialect(
    "pg_wgsl",
    [FuncOp, ForOp, EndForOp, IfOp, EndIfOp, BarrierOp, BuiltinOp, WorkgroupOp, VarOp,
     AssignOp, ReadOp, ConstOp, UnaryOp, CallOp, BinaryOp, CmpOp, SelectOp, CastOp, LoadOp,
     StoreOp],
    [VarType],
)

__all__ = [
    "PG_WGSL",
    "SCALAR_TYPES",
    "VALUE_OPS",
    "AssignOp",
    "BarrierOp",
    "BinaryOp",
    "BuiltinOp",
    "CallOp",
    "CastOp",
    "CmpOp",
    "ConstOp",
    "EndForOp",
    "EndIfOp",
    "ForOp",
    "FuncOp",
    "IfOp",
    "LoadOp",
    "ReadOp",
    "SelectOp",
    "StoreOp",
    "UnaryOp",
    "VarOp",
    "VarType",
    "WorkgroupOp",
]
