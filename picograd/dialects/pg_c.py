"""`pg_c`: C statements as ops; printing a `pg_c.func` gives C source.

The fifth stage of the C target. Every op is one C statement (or the opening / closing line
of a `for` loop), in the order the C source lists them, so `module_to_c`
(`picograd/lowering/c/printer.py`) prints a function by walking its flat block once. Value ops
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
`!pg.buffer` (a pointer parameter) and mutable locals `!pg_c.var<T>`. Vectors of f32 or f64
(`vector<16xf32>`, a GCC/Clang vector extension type `pg_f32x16`) are what `binary`
(`+ - * /`), `unary "-"`, `call "expf"` (lane by lane), locals and the vector ops `vload`,
`vstore`, `broadcast` and `vreduce` take.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import IndexType, UnitAttr, VectorType, f32, f64
from xdsl.ir import Attribute, Dialect, Operation, Region
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer

from picograd.dialects import target_ops
from picograd.dialects.dtypes import ELEMENT_TYPES, is_bool, is_float, is_int, lane_type
from picograd.dialects.flat_cells import (
    CellDeclSyntax,
    CellReadSyntax,
    CellType,
    CellWriteSyntax,
    ConstSyntax,
)
from picograd.dialects.flat_memory import MaskedLoadSyntax, StoreSyntax
from picograd.dialects.flat_ops import EndLoopSyntax, FlatFunction, ForLoopSyntax, fail
from picograd.dialects.flat_vectors import (
    BroadcastSyntax,
    VLoadSyntax,
    VReduceSyntax,
    VStoreSyntax,
)

# C operators by the operand types they accept. `max`/`min` are not C operators: they print
# as conditional expressions (NaN-propagating on floats, as numpy's maximum/minimum).
FLOAT_BINARY = ("+", "-", "*", "/", "max", "min")
INT_BINARY = ("+", "-", "*", "/", "%", "&", "|", "^", "max", "min", "<<", ">>")
BOOL_BINARY = ("&", "|", "^")
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
# <math.h> functions of one argument: the float flavour (also used for f16) and the double one.
MATH_F32 = ("expf", "logf", "sqrtf", "sinf")
MATH_F64 = ("exp", "log", "sqrt", "sin")
# ... and those applied to vectors, lane by lane (each lane a call of the scalar function)
VECTOR_MATH = ("expf", "exp")


def is_scalar(t: Attribute) -> bool:
    """A type a C local of this dialect can hold: an element type or `index`."""
    return t in ELEMENT_TYPES or isinstance(t, IndexType)


def is_float_vector(t: Attribute) -> bool:
    """A vector of f32 or f64 lanes (a GCC/Clang vector extension type in C)."""
    return isinstance(t, VectorType) and t.element_type in VECTOR_LANES


def _check_scalar(op: Operation, t: Attribute, vectors: bool = False) -> None:
    if not (is_scalar(t) or (vectors and is_float_vector(t))):
        allowed = ", or a vector of f32 or f64" if vectors else ""
        raise fail(op, f"expected an element type or index{allowed}, got {t}")


# Prefix operators, with the test of the operand types each takes.
PREFIX: dict[str, Callable[[Attribute], bool]] = {
    "-": lambda t: is_scalar(t) or is_float_vector(t), "!": is_bool, "~": is_int}
# The lane types of vectors, and the operators that apply to them lane by lane.
VECTOR_LANES = (f32, f64)
VECTOR_BINARY = ("+", "-", "*", "/", "max", "min")


class _CValueOp(target_ops.ScalarValueOp):
    """A pg_c value op: its types are C scalars (element types and index)."""

    def check_scalar(self, t: Attribute) -> None:
        _check_scalar(self, t)


@irdl_attr_definition(init=False)  # keeps CellType.__init__
class VarType(CellType):
    """A mutable C local holding one scalar: `!pg_c.var<f32>`."""

    name = "pg_c.var"


# ── function and loops ───────────────────────────────────────────────────────


@irdl_op_definition
class FuncOp(FlatFunction):
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
    BODY_DIALECTS: ClassVar[tuple[str, ...]] = ("pg_c",)
    restrict = opt_prop_def(UnitAttr)

    def __init__(self, name: str, arg_types: Sequence[Attribute], body: Region | None = None,
                 restrict: bool = False):
        super().__init__(name, arg_types, body, _restrict(restrict))

    def verify_(self) -> None:
        self.verify_buffer_args()
        self.verify_nesting(ForOp, EndForOp, "loop", scoped=True)
        self.verify_body_dialects()

    @classmethod
    def parse_header(cls, parser: Parser) -> dict[str, Attribute]:
        return _restrict(parser.parse_optional_keyword("restrict") is not None)

    def print_header(self, printer: Printer) -> None:
        if self.restrict is not None:
            printer.print_string(" restrict")


def _restrict(restrict: bool) -> dict[str, Attribute]:
    return {"restrict": UnitAttr()} if restrict else {}


@irdl_op_definition
class ForOp(ForLoopSyntax):
    """Open `for (int64_t i = start; i < end; i++) {`; the result is `i`.

        %i = pg_c.for 0 to 64
    """

    name = "pg_c.for"


@irdl_op_definition
class EndForOp(EndLoopSyntax):
    """Close the innermost open loop: `}`.

        pg_c.end_for %i
    """

    name = "pg_c.end_for"
    LOOP_OP: ClassVar = ForOp


# ── mutable locals ───────────────────────────────────────────────────────────


@irdl_op_definition
class DeclOp(CellDeclSyntax):
    """Declare a mutable local and initialise it: `float acc = 0.0f;`.

        %acc = pg_c.decl 0.0 : f32
    """

    name = "pg_c.decl"
    CELL_TYPE: ClassVar = VarType
    CELL_NOUN: ClassVar = "variable"
    result = result_def(VarType)

    def verify_(self) -> None:
        _check_scalar(self, self.element_type, vectors=True)
        super().verify_()


@irdl_op_definition
class AssignOp(CellWriteSyntax):
    """Overwrite a mutable local: `acc = v;`.

        pg_c.assign %acc, %v : f32
    """

    name = "pg_c.assign"
    CELL_TYPE: ClassVar = VarType
    CELL_NOUN: ClassVar = "variable"
    var = operand_def(VarType)


@irdl_op_definition
class ReadOp(CellReadSyntax):
    """Copy a mutable local into a fresh value: `float v = acc;`.

        %v = pg_c.read %acc : f32
    """

    name = "pg_c.read"
    CELL_TYPE: ClassVar = VarType
    CELL_NOUN: ClassVar = "variable"
    var = operand_def(VarType)


# ── values ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class ConstOp(ConstSyntax):
    """A literal: `float v = 1.5f;` (`INFINITY`, `NAN` for the special floats).

        %c = pg_c.const 1.5 : f32
    """

    name = "pg_c.const"

    def verify_(self) -> None:
        _check_scalar(self, self.result.type)
        super().verify_()


@irdl_op_definition
class UnaryOp(_CValueOp, target_ops.UnaryOperatorOp):
    """A prefix operator: `-x` (numbers), `!x` (bool), `~x` (integers).

        %y = pg_c.unary "-" %x : f32
    """

    name = "pg_c.unary"
    OPERATORS: ClassVar = PREFIX

    def check_scalar(self, t: Attribute) -> None:
        _check_scalar(self, t, vectors=True)


@irdl_op_definition
class CallOp(target_ops.UnaryCallOp):
    """A one-argument `<math.h>` function: `float y = expf(x);` (`exp` etc. on f64; f16
    values go through the float flavour). On a vector, `expf` of each lane.

        %y = pg_c.call "expf"(%x) : f32
    """

    name = "pg_c.call"

    def verify_(self) -> None:
        callee, t = self.callee.data, self.input.type
        if not is_float(t):
            raise fail(self, f"math functions take a float, got {t}")
        if isinstance(t, VectorType) and callee not in VECTOR_MATH:
            raise fail(self, f"{callee!r} does not take vectors (one of "
                             f"{', '.join(VECTOR_MATH)})")
        lane = lane_type(t)
        allowed = MATH_F64 if lane.bitwidth == 64 else MATH_F32  # type: ignore[attr-defined]
        if callee not in allowed:
            raise fail(self, f"{callee!r} does not take {t} (one of {', '.join(allowed)})")


@irdl_op_definition
class BinaryOp(_CValueOp, target_ops.BinaryOperatorOp):
    """An infix operator on two values of one type: `float z = x + y;`. Integer `/` and `%`
    print guarded (a zero divisor gives 0, as in numpy); `max`/`min` print as conditional
    expressions that propagate NaN on floats.

        %z = pg_c.binary "+" %x, %y : f32
    """

    name = "pg_c.binary"
    FLOAT_OPERATORS: ClassVar = FLOAT_BINARY
    BOOL_OPERATORS: ClassVar = BOOL_BINARY
    INT_OPERATORS: ClassVar = INT_BINARY

    def check_scalar(self, t: Attribute) -> None:
        _check_scalar(self, t, vectors=True)
        if is_float_vector(t) and self.operator.data not in VECTOR_BINARY:
            raise fail(self, f"{self.operator.data!r} does not apply to vectors "
                             f"(one of {' '.join(VECTOR_BINARY)})")


@irdl_op_definition
class CmpOp(_CValueOp, target_ops.ComparisonOp):
    """A comparison giving a bool: `bool m = x < y;` (`!=` holds when either is NaN).

        %m = pg_c.cmp "<" %x, %y : f32
    """

    name = "pg_c.cmp"

    def verify_(self) -> None:
        self.check_scalar(self.lhs.type)
        if self.operator.data not in COMPARISONS:
            raise fail(self, f"unknown comparison {self.operator.data!r} "
                             f"(one of {' '.join(COMPARISONS)})")


@irdl_op_definition
class SelectOp(_CValueOp, target_ops.SelectionOp):
    """The conditional operator: `float r = c ? x : y;`.

        %r = pg_c.select %c, %x, %y : f32
    """

    name = "pg_c.select"


@irdl_op_definition
class CastOp(_CValueOp, target_ops.ConversionOp):
    """A conversion: `int32_t r = (int32_t)x;` (float to int truncates, to bool is `!= 0`).

        %r = pg_c.cast %x : f32 to i32
    """

    name = "pg_c.cast"


@irdl_op_definition
class BitcastOp(_CValueOp, target_ops.ConversionOp):
    """The same bits as another type of one width, through a union (defined in C11):
    `int32_t r = (union { float s; int32_t d; }){ .s = x }.d;`.

        %r = pg_c.bitcast %x : f32 to i32
    """

    name = "pg_c.bitcast"


# ── memory ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class LoadOp(MaskedLoadSyntax):
    """Read an element: `float v = a[i];`; masked: `float w = m ? a[i] : 0.0f;`.

        %v = pg_c.load %a[%i] : !pg.buffer<32xf32> -> f32
        %w = pg_c.load %a[%i] if %m else 0.0 : !pg.buffer<32xf32> -> f32
    """

    name = "pg_c.load"


@irdl_op_definition
class StoreOp(StoreSyntax):
    """Write an element: `out[i] = v;`.

        pg_c.store %v, %out[%i] : f32, !pg.buffer<4xf32>
    """

    name = "pg_c.store"


# ── vectors (see flat_vectors) ───────────────────────────────────────────────


def _check_lanes(op: Operation, t: Attribute) -> None:
    if not is_float_vector(t):
        raise fail(op, f"C vectors hold f32 or f64 lanes, got {t}")


@irdl_op_definition
class VLoadOp(VLoadSyntax):
    """Read consecutive elements into a vector, through an unaligned vector type:
    `pg_f32x16 v = *(const pg_f32x16_u*)(a + i);`; every step-th element lane by lane:
    `(pg_f32x16){a[i], a[i + 2], ...}`.

        %v = pg_c.vload %a[%i] : !pg.buffer<64xf32> -> vector<16xf32>
    """

    name = "pg_c.vload"

    def verify_(self) -> None:
        super().verify_()
        _check_lanes(self, self.result.type)


@irdl_op_definition
class VStoreOp(VStoreSyntax):
    """Write a vector to consecutive elements: `*(pg_f32x16_u*)(out + i) = v;`.

        pg_c.vstore %v, %out[%i] : vector<16xf32>, !pg.buffer<64xf32>
    """

    name = "pg_c.vstore"

    def verify_(self) -> None:
        super().verify_()
        _check_lanes(self, self.value.type)


@irdl_op_definition
class BroadcastOp(BroadcastSyntax):
    """A vector of one value: `pg_f32x4 v = (pg_f32x4){x, x, x, x};`.

        %v = pg_c.broadcast %x : f32 -> vector<4xf32>
    """

    name = "pg_c.broadcast"

    def verify_(self) -> None:
        super().verify_()
        _check_lanes(self, self.result.type)


@irdl_op_definition
class VReduceOp(VReduceSyntax):
    """The lanes combined in order: `float s = ((v[0] + v[1]) + v[2]) + v[3];`.

        %s = pg_c.vreduce add %v : vector<4xf32> -> f32
    """

    name = "pg_c.vreduce"

    def verify_(self) -> None:
        super().verify_()
        _check_lanes(self, self.input.type)


VALUE_OPS = (ConstOp, UnaryOp, CallOp, BinaryOp, CmpOp, SelectOp, CastOp, BitcastOp, ReadOp,
             LoadOp, VLoadOp, BroadcastOp, VReduceOp)

PG_C = Dialect(
    "pg_c",
    [FuncOp, ForOp, EndForOp, DeclOp, AssignOp, ReadOp, ConstOp, UnaryOp, CallOp, BinaryOp,
     CmpOp, SelectOp, CastOp, BitcastOp, LoadOp, StoreOp, VLoadOp, VStoreOp, BroadcastOp,
     VReduceOp],
    [VarType],
)
