"""`pg_wgsl`: WGSL statements as ops; printing a `pg_wgsl.fn` gives a WGSL compute shader.

The fifth stage of the WebGPU target. Every op is one WGSL statement (or the opening /
closing line of a `for` loop or an `if`), in the order the source lists them, so
`module_to_wgsl` (`picograd/lowering/wgsl/printer.py`) prints a function by walking its flat
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
`bool`), or one of the types WGSL lacks and picograd emulates (`capabilities("wgsl")
.emulated`): `f16` held in an f32, `i8`, `ui8` and `i16` held in an i32, always within the
narrow type's values. On those only loads, stores, constants, variables, comparisons,
selects and casts are allowed (the cast to one wraps or rounds into it);
`uop-legalize{target=wgsl}` computes their arithmetic in the wide type. Buffers are
`!pg.buffer` (a storage array, or a `var<workgroup>` array for `pg_wgsl.workgroup`) and
mutable locals `!pg_wgsl.var<T>`. A bool buffer is stored as `array<u32>` (bool is not
host-shareable), which the printer hides: loads compare with `0u`, stores select
`0u`/`1u`; a buffer of an emulated type is an array of its wide type. `grid` and `block`
are the launch: work groups per dimension (`dispatchWorkgroups`) and work items per group
(`@workgroup_size`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntAttr,
    StringAttr,
    f16,
    f32,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure

from picograd.dialects import target_ops
from picograd.dialects.capabilities import capabilities
from picograd.dialects.dtypes import is_bool, is_int
from picograd.dialects.flat_cells import (
    CellDeclSyntax,
    CellReadSyntax,
    CellType,
    CellWriteSyntax,
    ConstSyntax,
)
from picograd.dialects.flat_memory import (
    GroupBufferSyntax,
    MaskedLoadSyntax,
    StoreSyntax,
    check_store,
)
from picograd.dialects.flat_ops import (
    BareStatement,
    EndLoopSyntax,
    ForLoopSyntax,
    GuardSyntax,
    LaunchedFunction,
    fail,
)
from picograd.dialects.pg import BufferType
from picograd.dialects.syntax import (
    int_tuple,
)

# The scalar types WGSL shares with picograd (bool is `i1`), and those it emulates.
NATIVE_TYPES: tuple[Attribute, ...] = (f32, i32, i1)
EMULATED_TYPES: tuple[Attribute, ...] = tuple(t for t, _ in capabilities("wgsl").emulated)
SCALAR_TYPES: tuple[Attribute, ...] = NATIVE_TYPES + EMULATED_TYPES

# WGSL operators by the operand types they accept. `max`/`min` print as the built-ins on
# i32 and as NaN-propagating selects on f32; integer `/` and `%` print guarded.
FLOAT_BINARY = ("+", "-", "*", "/", "max", "min")
INT_BINARY = ("+", "-", "*", "/", "%", "&", "|", "^", "max", "min", "<<", ">>")
BOOL_BINARY = ("&", "|")  # non-short-circuit logical and / or; xor is `!=`
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
BOOL_COMPARISONS = ("==", "!=")  # WGSL does not order bools
# WGSL built-in functions of one f32.
MATH = ("exp", "log", "sqrt", "sin", "exp2", "log2")
# The compute-shader built-in values a kernel reads (`vec3<u32>`, one component each).
BUILTINS = ("workgroup_id", "local_invocation_id")


def is_scalar(t: Attribute) -> bool:
    """A type a WGSL value of this dialect can have: f32, i32, i1 (bool) or emulated."""
    return t in SCALAR_TYPES


def held_as(t: Attribute) -> Attribute:
    """The WGSL type that holds a value of type `t` (f32 for f16, i32 for i8, ...)."""
    return capabilities("wgsl").wide_type(t) or t


# What the verifiers list as this dialect's scalar types.
_SCALARS = f"f32, i32 or i1 (or an emulated {', '.join(map(str, EMULATED_TYPES))})"


def _check_scalar(op: Operation, t: Attribute) -> None:
    if not is_scalar(t):
        raise fail(op, f"expected {_SCALARS}, got {t}")


# Prefix operators, with the test of the operand types each takes (`-` wraps on i32).
PREFIX: dict[str, Callable[[Attribute], bool]] = {
    "-": lambda t: not is_bool(t), "!": is_bool, "~": is_int,
}


class _WgslValueOp(target_ops.ScalarValueOp):
    """A pg_wgsl value op: its types are WGSL scalars (f32, i32, bool) or emulated ones."""

    def check_scalar(self, t: Attribute) -> None:
        _check_scalar(self, t)


class _WgslArithmeticOp(_WgslValueOp):
    """An operator that computes: its type is native (emulated types are computed in their
    wide type and cast back, which `uop-legalize{target=wgsl}` arranges)."""

    def check_scalar(self, t: Attribute) -> None:
        _check_scalar(self, t)
        if t not in NATIVE_TYPES:
            raise fail(self, f"arithmetic on {t}, which WGSL emulates: compute it in "
                             f"{held_as(t)} (uop-legalize{{target=wgsl}})")


def _check_buffer(op: Operation, t: Attribute) -> None:
    if not isinstance(t, BufferType):
        raise fail(op, f"expected a !pg.buffer, got {t}")
    if not is_scalar(t.element_type):
        raise fail(op, f"buffer element type {t.element_type} is not {_SCALARS}")


@irdl_attr_definition(init=False)  # keeps CellType.__init__
class VarType(CellType):
    """A mutable WGSL local (`var`) holding one scalar: `!pg_wgsl.var<f32>`."""

    name = "pg_wgsl.var"


# ── function, loops and guards ───────────────────────────────────────────────


def _launch_dims(op: Operation, what: str, attr: DenseArrayBase) -> tuple[int, ...]:
    if attr.elt_type != i64:
        raise fail(op, f"{what} must be an i64 array, got {attr.elt_type}")
    dims = int_tuple(attr)
    if len(dims) != 3 or any(d < 1 for d in dims):
        raise fail(op, f"{what} must be 3 positive sizes, got {list(dims)}")
    return dims


@irdl_op_definition
class FuncOp(LaunchedFunction):
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
    BODY_DIALECTS: ClassVar[tuple[str, ...]] = ("pg_wgsl",)

    def verify_(self) -> None:
        _launch_dims(self, f"{self.where}: grid", self.grid)
        _launch_dims(self, f"{self.where}: block", self.block)
        self.verify_buffer_args()
        self.verify_nesting(ForOp, EndForOp, "loop", guard=(IfOp, EndIfOp), scoped=True)
        self.verify_body_dialects()


@irdl_op_definition
class ForOp(ForLoopSyntax):
    """Open `for (var i: i32 = start; i < end; i++) {`; the result is `i`.

        %i = pg_wgsl.for 0 to 64
    """

    name = "pg_wgsl.for"
    INDEX_TYPE: ClassVar = i32
    result = result_def(i32)

    def verify_(self) -> None:
        super().verify_()
        start, end = self.bounds
        if not -(2**31) <= start <= end <= 2**31 - 1:
            raise fail(self, f"range [{start}, {end}) does not fit in i32")


@irdl_op_definition
class EndForOp(EndLoopSyntax):
    """Close the innermost open loop: `}`.

        pg_wgsl.end_for %i
    """

    name = "pg_wgsl.end_for"
    LOOP_OP: ClassVar = ForOp
    loop = operand_def(i32)


@irdl_op_definition
class IfOp(GuardSyntax):
    """Open `if (cond) {`: the statements up to the matching `end_if` run where it holds.

        pg_wgsl.if %ok
    """

    name = "pg_wgsl.if"


@irdl_op_definition
class EndIfOp(BareStatement):
    """Close the innermost open `if`: `}`.

        pg_wgsl.end_if
    """

    name = "pg_wgsl.end_if"


@irdl_op_definition
class BarrierOp(BareStatement):
    """Wait for every work item of the group and make its workgroup writes visible:
    `workgroupBarrier();` (only in uniform control flow, as WGSL requires).

        pg_wgsl.workgroup_barrier
    """

    name = "pg_wgsl.workgroup_barrier"


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
            raise fail(self, f"unknown built-in {self.kind.data!r} (one of "
                             f"{', '.join(BUILTINS)})")
        if self.dim.data not in (0, 1, 2):
            raise fail(self, f"dim must be 0, 1 or 2, got {self.dim.data}")

    @classmethod
    def parse(cls, parser: Parser) -> BuiltinOp:
        kind = parser.parse_identifier()
        op = cls(kind, parser.parse_integer(allow_boolean=False))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} {self.dim.data}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class WorkgroupOp(GroupBufferSyntax):
    """An array shared by the work items of a group: `var<workgroup> k_s0: array<f32, 256>;`
    at module scope (WGSL allows it nowhere else); loads and stores take it like a buffer
    argument. Its contents start undefined.

        %s = pg_wgsl.workgroup : !pg.buffer<256xf32>
    """

    name = "pg_wgsl.workgroup"

    def verify_(self) -> None:
        _check_buffer(self, self.result.type)


# ── mutable locals ───────────────────────────────────────────────────────────


@irdl_op_definition
class VarOp(CellDeclSyntax):
    """Declare a mutable local and initialise it: `var acc: f32 = 0.0f;`.

        %acc = pg_wgsl.var 0.0 : f32
    """

    name = "pg_wgsl.var"
    CELL_TYPE: ClassVar = VarType
    CELL_NOUN: ClassVar = "variable"
    result = result_def(VarType)

    def verify_(self) -> None:
        _check_scalar(self, self.element_type)
        super().verify_()


@irdl_op_definition
class AssignOp(CellWriteSyntax):
    """Overwrite a mutable local: `acc = v;`.

        pg_wgsl.assign %acc, %v : f32
    """

    name = "pg_wgsl.assign"
    CELL_TYPE: ClassVar = VarType
    CELL_NOUN: ClassVar = "variable"
    var = operand_def(VarType)


@irdl_op_definition
class ReadOp(CellReadSyntax):
    """Copy a mutable local into a fresh value: `let v = acc;`.

        %v = pg_wgsl.read %acc : f32
    """

    name = "pg_wgsl.read"
    CELL_TYPE: ClassVar = VarType
    CELL_NOUN: ClassVar = "variable"
    var = operand_def(VarType)


# ── values ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class ConstOp(ConstSyntax):
    """A literal: `let c = 1.5f;` (inf and NaN, which WGSL cannot spell, print as a
    `bitcast<f32>` of their bits).

        %c = pg_wgsl.const 1.5 : f32
    """

    name = "pg_wgsl.const"

    def verify_(self) -> None:
        _check_scalar(self, self.result.type)
        super().verify_()


@irdl_op_definition
class UnaryOp(_WgslArithmeticOp, target_ops.UnaryOperatorOp):
    """A prefix operator: `-x` (f32, i32; wraps on i32), `!x` (bool), `~x` (i32).

        %y = pg_wgsl.unary "-" %x : f32
    """

    name = "pg_wgsl.unary"
    OPERATORS: ClassVar = PREFIX


@irdl_op_definition
class CallOp(target_ops.UnaryCallOp):
    """A one-argument WGSL built-in function on f32: `let y = exp(x);`.

        %y = pg_wgsl.call "exp"(%x) : f32
    """

    name = "pg_wgsl.call"

    def verify_(self) -> None:
        if self.input.type != f32:
            raise fail(self, f"built-in functions take an f32, got {self.input.type}")
        if self.callee.data not in MATH:
            raise fail(self, f"unknown built-in function {self.callee.data!r} (one of "
                             f"{', '.join(MATH)})")


@irdl_op_definition
class BinaryOp(_WgslArithmeticOp, target_ops.BinaryOperatorOp):
    """An infix operator on two values of one type: `let z = x + y;`. Integer `/` and `%`
    print guarded (a zero divisor gives 0 and `MIN / -1` is MIN, as on the CPU, where WGSL
    would give `x / 0 = x`); `max`/`min` print as `max(x, y)` on i32 and as selects that
    propagate NaN on f32. i32 `+ - *` wrap around.

        %z = pg_wgsl.binary "+" %x, %y : f32
    """

    name = "pg_wgsl.binary"
    FLOAT_OPERATORS: ClassVar = FLOAT_BINARY
    BOOL_OPERATORS: ClassVar = BOOL_BINARY
    INT_OPERATORS: ClassVar = INT_BINARY


@irdl_op_definition
class CmpOp(_WgslValueOp, target_ops.ComparisonOp):
    """A comparison giving a bool: `let m = x < y;` (`!=` holds when either is NaN; bools
    compare only with `==` and `!=`).

        %m = pg_wgsl.cmp "<" %x, %y : f32
    """

    name = "pg_wgsl.cmp"

    def verify_(self) -> None:
        operator, t = self.operator.data, self.lhs.type
        self.check_scalar(t)
        allowed = BOOL_COMPARISONS if is_bool(t) else COMPARISONS
        if operator not in allowed:
            raise fail(self, f"comparison {operator!r} is not defined on {t} "
                             f"(one of {' '.join(allowed)})")


@irdl_op_definition
class SelectOp(_WgslValueOp, target_ops.SelectionOp):
    """Pick by a bool: `let r = select(y, x, c);` (x where c holds, else y).

        %r = pg_wgsl.select %c, %x, %y : f32
    """

    name = "pg_wgsl.select"


@irdl_op_definition
class CastOp(_WgslValueOp, target_ops.ConversionOp):
    """A value conversion: `let r = i32(x);` (f32 -> i32 truncates toward zero, anything
    -> bool is `!= 0`, bool -> number is 0 or 1). A cast to an emulated type converts to
    its wide type, then wraps an integer into its range (`(x << 24u) >> 24u` for i8,
    `x & 0xff` for ui8) or rounds an f32 to the nearest f16 (`pg_f16(x)`).

        %r = pg_wgsl.cast %x : f32 to i32
    """

    name = "pg_wgsl.cast"

    def verify_(self) -> None:
        super().verify_()
        if self.input.type == self.result.type:
            raise fail(self, f"a cast from {self.input.type} to itself")


# ── memory ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class BitcastOp(_WgslValueOp, target_ops.ConversionOp):
    """The same 32 bits as another type: `let r = bitcast<i32>(x);`. Also between the
    emulated f16 and i16, on the 16 bits of the f16 (`let r = pg_f16_bits(x);`).

        %r = pg_wgsl.bitcast %x : f32 to i32
    """

    name = "pg_wgsl.bitcast"

    def verify_(self) -> None:
        super().verify_()
        if {self.input.type, self.result.type} == {f16, i16}:
            return  # emulated: `pg_f16_bits` / `pg_f16_from_bits` (wgsl_source)
        for t in (self.input.type, self.result.type):
            if t not in (i32, f32):
                raise fail(self, f"bitcast is between i32 and f32, got {t}")


@irdl_op_definition
class LoadOp(MaskedLoadSyntax):
    """Read an element: `let v = k_p0[i];`; masked, `let w = select(0.0f, k_p0[select(0i,
    i, m)], m);` (where the mask fails, element 0 is read and `other` is the result).

        %v = pg_wgsl.load %a[%i] : !pg.buffer<32xf32> -> f32
        %w = pg_wgsl.load %a[%i] if %m else 0.0 : !pg.buffer<32xf32> -> f32
    """

    name = "pg_wgsl.load"
    INDEX_TYPE: ClassVar = i32
    # An i32 index; `buffer` is re-declared too, to stay the first operand (see flat_ops).
    buffer = operand_def(BufferType)
    index = operand_def(i32)

    def verify_(self) -> None:
        _check_buffer(self, self.buffer.type)
        super().verify_()
        if self.other is not None and self.other.type != self.result.type:
            raise fail(self, f"'other' type {self.other.type} != result type "
                             f"{self.result.type}")


@irdl_op_definition
class StoreOp(StoreSyntax):
    """Write an element: `k_p1[i] = v;` (a bool as `select(0u, 1u, v)`).

        pg_wgsl.store %v, %out[%i] : f32, !pg.buffer<4xf32>
    """

    name = "pg_wgsl.store"
    # An i32 index; the operands before it are re-declared too, to keep their order.
    value = operand_def(AnyAttr())
    buffer = operand_def(BufferType)
    index = operand_def(i32)

    def verify_(self) -> None:
        _check_buffer(self, self.buffer.type)
        check_store(self, self.value, self.buffer)


VALUE_OPS = (BuiltinOp, ConstOp, UnaryOp, CallOp, BinaryOp, CmpOp, SelectOp, CastOp, BitcastOp,
             ReadOp, LoadOp)

PG_WGSL = Dialect(
    "pg_wgsl",
    [FuncOp, ForOp, EndForOp, IfOp, EndIfOp, BarrierOp, BuiltinOp, WorkgroupOp, VarOp,
     AssignOp, ReadOp, ConstOp, UnaryOp, CallOp, BinaryOp, CmpOp, SelectOp, CastOp, BitcastOp,
     LoadOp, StoreOp],
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
