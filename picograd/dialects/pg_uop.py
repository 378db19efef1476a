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

`unary` and `binary` also apply lane by lane to vectors (`vector<16xf32>`), which
`vload`, `vstore`, `broadcast` and `vreduce` move and combine (`flat_vectors.py`). `fma`
(a * b + c rounded once) exists only here, made by `uop-contract`.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IndexType, IntAttr, i1
from xdsl.ir import Dialect, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
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
from picograd.dialects.dtypes import bit_width, is_bool, is_float
from picograd.dialects.flat_cells import (
    CellDeclSyntax,
    CellReadSyntax,
    CellType,
    CellWriteSyntax,
    ConstSyntax,
    check_cell,
)
from picograd.dialects.flat_memory import GroupBufferSyntax, MaskedLoadSyntax, StoreSyntax
from picograd.dialects.flat_ops import (
    BareStatement,
    FlatFunction,
    GuardSyntax,
    check_range,
    fail,
)
from picograd.dialects.flat_vectors import (
    BroadcastSyntax,
    VLoadSyntax,
    VReduceSyntax,
    VStoreSyntax,
)
from picograd.dialects.pg import (
    BinaryKind,
    BinaryKindAttr,
    CmpKind,
    CmpKindAttr,
    RangeKind,
    RangeKindAttr,
    SpecialKind,
    SpecialKindAttr,
    UnaryKind,
    UnaryKindAttr,
)


@irdl_attr_definition(init=False)  # keeps CellType.__init__
class AccType(CellType):
    """A mutable register holding one scalar or one vector: `!pg_uop.acc<f32>`,
    `!pg_uop.acc<vector<16xf32>>`."""

    name = "pg_uop.acc"


# ── kernel ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class KernelOp(FlatFunction):
    """A kernel as one flat block; `range`/`end` pairs must nest properly.

    pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
      %i = pg_uop.range 0 to 4 global
      %one = pg_uop.const 1.0 : f32
      pg_uop.store %one, %a[%i] : f32, !pg.buffer<4xf32>
      pg_uop.end %i
    }
    """

    name = "pg_uop.kernel"
    BODY_DIALECTS: ClassVar[tuple[str, ...]] = ("pg_uop",)

    def verify_(self) -> None:
        self.verify_nesting(RangeOp, EndOp, "range", guard=(IfOp, EndIfOp))
        self.verify_body_dialects()


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
        check_range(self, self.start.data, self.end.data, self.kind.data)

    @classmethod
    def parse(cls, parser: Parser) -> RangeOp:
        start = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        end = parser.parse_integer(allow_boolean=False)
        kind = parser.parse_str_enum(RangeKind)
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
            raise fail(self, "operand must be the result of a pg_uop.range")


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
            raise fail(
                self,
                f"dim must be 0, 1 or 2 and size positive, got {self.dim.data}, {self.size.data}",
            )

    @classmethod
    def parse(cls, parser: Parser) -> SpecialOp:
        kind = parser.parse_str_enum(SpecialKind)
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
class BarrierOp(BareStatement):
    """Synchronise the threads of a work group (GPU targets only).

    pg_uop.barrier
    """

    name = "pg_uop.barrier"


@irdl_op_definition
class IfOp(GuardSyntax):
    """Run the ops up to the matching `pg_uop.endif` only where `cond` holds (a guard).

    %ok = pg_uop.cmp lt %gid, %n : index
    pg_uop.if %ok
    pg_uop.store %v, %out[%gid] : f32, !pg.buffer<1000xf32>
    pg_uop.endif
    """

    name = "pg_uop.if"


@irdl_op_definition
class EndIfOp(BareStatement):
    """Close the innermost open `pg_uop.if`.

    pg_uop.endif
    """

    name = "pg_uop.endif"


@irdl_op_definition
class SharedOp(GroupBufferSyntax):
    """A buffer shared by the work items of one work group (GPU shared / workgroup memory).

    Loads and stores take it like a kernel argument; its contents start undefined and live
    for one work-group run.

    %s = pg_uop.shared : !pg.buffer<256xf32>
    """

    name = "pg_uop.shared"


# ── accumulators ─────────────────────────────────────────────────────────────


@irdl_op_definition
class AccOp(CellDeclSyntax):
    """Declare a register and set it to `init` (each time control reaches this op).

    %acc = pg_uop.acc 0.0 : f32
    """

    name = "pg_uop.acc"
    CELL_TYPE: ClassVar = AccType
    CELL_NOUN: ClassVar = "register"
    result = result_def(AccType)


@irdl_op_definition
class AccLoadOp(CellReadSyntax):
    """Read a register.

    %v = pg_uop.acc_load %acc : f32
    """

    name = "pg_uop.acc_load"
    CELL_TYPE: ClassVar = AccType
    CELL_NOUN: ClassVar = "register"
    acc = operand_def(AccType)

    def verify_(self) -> None:
        check_cell(self, self.acc, self.result.type, "result", self.CELL_NOUN)


@irdl_op_definition
class AccStoreOp(CellWriteSyntax):
    """Write a register.

    pg_uop.acc_store %acc, %v : f32
    """

    name = "pg_uop.acc_store"
    CELL_TYPE: ClassVar = AccType
    CELL_NOUN: ClassVar = "register"
    acc = operand_def(AccType)


# ── memory ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class LoadOp(MaskedLoadSyntax):
    """Read `buffer[index]`; with a mask, read only where it holds and give `other` elsewhere.

    %v = pg_uop.load %a[%i] : !pg.buffer<32xf32> -> f32
    %w = pg_uop.load %a[%i] if %m else 0.0 : !pg.buffer<32xf32> -> f32
    """

    name = "pg_uop.load"


@irdl_op_definition
class StoreOp(StoreSyntax):
    """Write `value` to `buffer[index]`.

    pg_uop.store %v, %out[%i] : f32, !pg.buffer<4xf32>
    """

    name = "pg_uop.store"


# ── vectors (see flat_vectors) ───────────────────────────────────────────────


@irdl_op_definition
class VLoadOp(VLoadSyntax):
    """Read `buffer[index]`, `buffer[index + 1]`, ... into the lanes of one vector.

    %v = pg_uop.vload %a[%i] : !pg.buffer<64xf32> -> vector<16xf32>
    """

    name = "pg_uop.vload"


@irdl_op_definition
class VStoreOp(VStoreSyntax):
    """Write lane `l` of `value` to `buffer[index + l]`, for every lane.

    pg_uop.vstore %v, %out[%i] : vector<16xf32>, !pg.buffer<64xf32>
    """

    name = "pg_uop.vstore"


@irdl_op_definition
class BroadcastOp(BroadcastSyntax):
    """A vector with `input` in every lane.

    %v = pg_uop.broadcast %x : f32 -> vector<16xf32>
    """

    name = "pg_uop.broadcast"


@irdl_op_definition
class VReduceOp(VReduceSyntax):
    """Combine the lanes of a float vector in lane order, `((v0 + v1) + v2) + ...`.

    %s = pg_uop.vreduce add %v : vector<16xf32> -> f32
    """

    name = "pg_uop.vreduce"


VECTOR_OPS = (VLoadOp, VStoreOp, BroadcastOp, VReduceOp)

# ── scalar ALU (shared with pg_loop bodies) ──────────────────────────────────


@irdl_op_definition
class ConstOp(ConstSyntax):
    """A scalar constant (also `index` constants).

    %c = pg_uop.const 1.5 : f32
    """

    name = "pg_uop.const"


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
            raise fail(self, f"'not' needs a bool or integer, got {t}")
        if kind not in (UnaryKind.NOT, UnaryKind.NEG) and not is_float(t):
            raise fail(self, f"'{kind}' needs a float, got {t}")


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
        if kind in (BinaryKind.SHL, BinaryKind.SHR) and is_float(t):
            raise fail(self, f"'{kind}' needs integer operands, got {t}")
        if kind in (BinaryKind.AND, BinaryKind.OR, BinaryKind.XOR, BinaryKind.MOD) and is_float(t):
            raise fail(self, f"'{kind}' needs bool or integer operands, got {t}")
        if is_bool(t) and kind not in (
            BinaryKind.AND,
            BinaryKind.OR,
            BinaryKind.XOR,
            BinaryKind.MAX,
            BinaryKind.MIN,
        ):
            raise fail(self, f"'{kind}' is not defined on i1")


@irdl_op_definition
class FmaOp(IRDLOperation):
    """`a * b + c` rounded once (IEEE fusedMultiplyAdd), on floats or float vectors. Not a
    `pg_loop` body op: `uop-contract` makes it from a reduction's multiply and add.

    %r = pg_uop.fma %a, %b, %c : vector<16xf32>
    """

    name = "pg_uop.fma"
    T: ClassVar = VarConstraint("T", AnyAttr())
    a = operand_def(T)
    b = operand_def(T)
    c = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($result)"

    def __init__(self, a: SSAValue | Operation, b: SSAValue | Operation,
                 c: SSAValue | Operation):
        a = SSAValue.get(a)
        super().__init__(operands=[a, b, c], result_types=[a.type])

    def verify_(self) -> None:
        if not is_float(self.result.type):
            raise fail(self, f"fma needs floats or float vectors, got {self.result.type}")


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
class WhereOp(target_ops.SelectionOp):
    """Scalar select: `cond ? lhs : rhs`.

    %r = pg_uop.where %c, %x, %y : f32
    """

    name = "pg_uop.where"


@irdl_op_definition
class CastOp(target_ops.ConversionOp):
    """Scalar type conversion (C rules: float to int truncates toward zero; to bool is `!= 0`).

    %r = pg_uop.cast %x : f32 to i32
    """

    name = "pg_uop.cast"


@irdl_op_definition
class BitcastOp(target_ops.ConversionOp):
    """Scalar reinterpretation of the bits as a type of the same width (no bool).

    %r = pg_uop.bitcast %x : f32 to i32
    """

    name = "pg_uop.bitcast"

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        if is_bool(src) or is_bool(dst) or isinstance(src, IndexType) or isinstance(
                dst, IndexType) or bit_width(src) != bit_width(dst):
            raise fail(self, f"cannot bitcast {src} to {dst}: needs two non-bool types of "
                             "one bit width")


ALU_OPS = (ConstOp, UnaryOp, BinaryOp, CmpOp, WhereOp, CastOp, BitcastOp)

PG_UOP = Dialect(
    "pg_uop",
    [
        FmaOp,
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
        *VECTOR_OPS,
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
    "BitcastOp",
    "BroadcastOp",
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
    "VLoadOp",
    "VReduceOp",
    "VStoreOp",
    "WhereOp",
]
