"""`pg_ptx`: PTX statements as ops; printing a `pg_ptx.entry` gives a `.entry` of PTX.

The fifth stage of the CUDA target. Every op inside an entry is one PTX statement (a few print
two, see below), in the order the PTX lists them, so `module_to_ptx`
(`picograd/lowering/ptx/printer.py`) prints an entry by walking its flat block once. An SSA
value is a virtual register: the printer gives each one a register of its class and declares
the classes at the top of the entry.

    pg_ptx.entry @k0(%a: !pg.buffer<64xf32>, %out: !pg.buffer<64xf32>)
        grid [1, 1, 1] block [64, 1, 1] {                 .visible .entry k0(...) { .reg ...
      %pa = pg_ptx.ld_param %a : !pg.buffer<64xf32>      ld.param.u64 %rd0, [k0_param_0];
      %ga = pg_ptx.alu cvta.to.global.u64 %pa : i64      cvta.to.global.u64 %rd1, %rd0;
      %four = pg_ptx.const 4 : i32                       mov.b32 %r0, 4;
      %tid = pg_ptx.sreg tid.x                           mov.u32 %r1, %tid.x;
      %off = pg_ptx.alu mul.wide.s32 %tid, %four : (i32, i32) -> i64
                                                         mul.wide.s32 %rd2, %r1, %r0;
      %at = pg_ptx.alu add.s64 %ga, %off : i64           add.s64 %rd3, %rd1, %rd2;
      %x = pg_ptx.ld global.f32 [%at] : f32              ld.global.f32 %f0, [%rd3];
      %y = pg_ptx.alu sqrt.rn.f32 %x : f32               sqrt.rn.f32 %f1, %f0;
      pg_ptx.st global.f32 [%at], %y : f32               st.global.f32 [%rd3], %f1;
    }                                                    ret; }

Value types are PTX register classes spelled as builtin types: `i1` is `.pred`, `i32`
`.b32`, `i64` `.b64`, `f16` `.b16` (the bits of a half), `f32` `.f32`, `f64` `.f64`.
Narrower integers live in 32-bit registers (PTX's `ld`, `st` and `cvt` read and write the
low bits of a wider register). A mutable register (`pg_ptx.reg`, type `!pg_ptx.reg<f32>`)
is what a loop counter or an accumulator needs; `pg_ptx.read` / `pg_ptx.write` copy from /
to it. Control flow is labels and branches in the flat block.

`pg_ptx.alu` covers every arithmetic statement; its opcode (`add.s32`, `setp.lt.f32`,
`cvt.rzi.s32.f32`, ...) must be one of `ALU_OPCODES`, which also fixes the operand and
result types, so a verified op is a statement `ptxas` accepts (tests assemble every entry
of the table). The tables of the ISA (register classes, opcodes, memory types) live in
`ptx_isa`; this module re-exports the ones its users name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    StringAttr,
    UnitAttr,
    i1,
    i32,
    i64,
)
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Dialect,
    Operation,
    SSAValue,
)
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure

from picograd.dialects.capabilities import capabilities
from picograd.dialects.flat_cells import CellReadSyntax, CellType, CellWriteSyntax, ConstSyntax
from picograd.dialects.flat_memory import parse_optional_mask, print_optional_mask
from picograd.dialects.flat_ops import BareStatement, LaunchedFunction, fail
from picograd.dialects.pg import BufferType
from picograd.dialects.ptx_isa import (
    ALU_OPCODES,
    IDENTIFIER,
    MEMORY_TYPES,
    REGISTER_CLASSES,
    SPECIAL_REGISTERS,
    STATE_SPACES,
    signatures,
)
from picograd.dialects.syntax import (
    int_tuple,
    scalar_attr,
)


def _check_register(op: Operation, t: Attribute, what: str) -> None:
    if t not in REGISTER_CLASSES:
        classes = ", ".join(str(x) for x in REGISTER_CLASSES)
        raise fail(op, f"{what} has type {t}, not a register class ({classes})")


def _check_identifier(op: Operation, name: str, what: str) -> None:
    if not IDENTIFIER.fullmatch(name):
        raise fail(op, f"{what} {name!r} is not a PTX identifier ([A-Za-z_][A-Za-z0-9_]*)")


def _print_types(printer: Printer, operands: Sequence[SSAValue], result: Attribute) -> None:
    """`: T` when every operand and the result share T, else `: (A, B) -> R`."""
    printer.print_string(" : ")
    if all(v.type == result for v in operands):
        printer.print_attribute(result)
        return
    printer.print_string("(")
    printer.print_list([v.type for v in operands], printer.print_attribute)
    printer.print_string(") -> ")
    printer.print_attribute(result)


def _parse_types(parser: Parser, count: int) -> tuple[list[Attribute], Attribute]:
    """The operand and result types written by `_print_types`."""
    parser.parse_punctuation(":")
    if parser.parse_optional_punctuation("(") is not None:
        operands: list[Attribute] = []
        if parser.parse_optional_punctuation(")") is None:
            operands = [parser.parse_type()]
            while parser.parse_optional_punctuation(",") is not None:
                operands.append(parser.parse_type())
            parser.parse_punctuation(")")
        parser.parse_punctuation("->")
        return operands, parser.parse_type()
    t = parser.parse_type()
    return [t] * count, t


@irdl_attr_definition(init=False)  # keeps CellType.__init__
class RegType(CellType):
    """A mutable register of one class: `!pg_ptx.reg<f32>` (`pg_ptx.reg` checks the class)."""

    name = "pg_ptx.reg"


# ── entry ────────────────────────────────────────────────────────────────────


@irdl_op_definition
class EntryOp(LaunchedFunction):
    """A kernel `.visible .entry name(.param .u64 name_param_0, ...)` with its launch
    dimensions: `grid` work groups (CTAs) and `block` threads per group, 3 each. The body is
    flat; it ends with an implicit `ret`.

        pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [4, 1, 1] {
          %p = pg_ptx.ld_param %a : !pg.buffer<4xf32>
          pg_ptx.bar_sync
        }
    """

    name = "pg_ptx.entry"
    BODY_DIALECTS: ClassVar[tuple[str, ...]] = ("pg_ptx",)

    def verify_(self) -> None:
        where = self.where
        _check_identifier(self, self.sym_name.data, f"{where}: the entry name")
        self.verify_buffer_args()
        self.verify_body_dialects()
        caps = capabilities("ptx")
        assert caps.max_groups and caps.max_local_dims and caps.max_local_size
        for what, attr, limits in (("grid", self.grid, caps.max_groups),
                                   ("block", self.block, caps.max_local_dims)):
            dims = int_tuple(attr)
            if attr.elt_type != i64 or len(dims) != 3 or min(dims) < 1:
                raise fail(self, f"{where}: {what} must be 3 positive i64 values, got "
                                 f"{list(dims)}")
            if any(d > limit for d, limit in zip(dims, limits, strict=True)):
                raise fail(self, f"{where}: {what} {list(dims)} exceeds CUDA's limits "
                                 f"{list(limits)}")
        threads = math.prod(self.block_dims)
        if threads > caps.max_local_size:
            raise fail(self, f"{where}: block {list(self.block_dims)} has {threads} threads, "
                             f"more than CUDA's {caps.max_local_size}")
        self._verify_body(where)

    def _verify_body(self, where: str) -> None:
        """Flat; labels and shared arrays unique; every branch target defined."""
        labels: set[str] = set()
        targets: list[str] = []
        shared: set[str] = set()
        for op in self.body.block.ops:
            if op.regions:
                raise fail(self, f"{where}: the body must be flat, found {op.name}")
            if isinstance(op, LabelOp | SharedOp):
                name, names = ((op.label.data, labels) if isinstance(op, LabelOp)
                               else (op.symbol.data, shared))
                if name in names:
                    what = "label" if isinstance(op, LabelOp) else "shared array"
                    raise fail(self, f"{where}: {what} {name} is defined twice")
                names.add(name)
            elif isinstance(op, BraOp):
                targets.append(op.target.data)
        for target in targets:
            if target not in labels:
                raise fail(self, f"{where}: branch to undefined label {target}")


# ── parameters, special registers, constants ─────────────────────────────────


@irdl_op_definition
class LdParamOp(IRDLOperation):
    """Load a kernel argument's address: `ld.param.u64 %rd0, [k_param_0];`.

        %p = pg_ptx.ld_param %a : !pg.buffer<4xf32>
    """

    name = "pg_ptx.ld_param"
    param = operand_def(BufferType)
    result = result_def(i64)
    assembly_format = "$param attr-dict `:` type($param)"

    def __init__(self, param: SSAValue):
        super().__init__(operands=[param], result_types=[i64])

    def verify_(self) -> None:
        if not isinstance(self.param, BlockArgument) or not isinstance(
                self.param.block.parent_op(), EntryOp):
            raise fail(self, "operand must be an argument of the enclosing pg_ptx.entry")


@irdl_op_definition
class SregOp(IRDLOperation):
    """Read a special register (thread / CTA index or count): `mov.u32 %r0, %tid.x;`.

        %t = pg_ptx.sreg tid.x
    """

    name = "pg_ptx.sreg"
    register = prop_def(StringAttr)
    result = result_def(i32)
    traits = traits_def(Pure())

    def __init__(self, register: str):
        super().__init__(properties={"register": StringAttr(register)}, result_types=[i32])

    def verify_(self) -> None:
        if self.register.data not in SPECIAL_REGISTERS:
            raise fail(self, f"unknown special register {self.register.data!r} (one of "
                             f"{', '.join(SPECIAL_REGISTERS)})")

    @classmethod
    def parse(cls, parser: Parser) -> SregOp:
        op = cls(parser.parse_identifier())
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.register.data}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class ConstOp(ConstSyntax):
    """Move an immediate into a register: `mov.f32 %f0, 0f3FC00000;` (f16 as `mov.b16` of
    its bits, i1 as `mov.pred`).

        %c = pg_ptx.const 1.5 : f32
    """

    name = "pg_ptx.const"

    def verify_(self) -> None:
        _check_register(self, self.result.type, "the result")
        super().verify_()


# ── arithmetic ───────────────────────────────────────────────────────────────


@irdl_op_definition
class AluOp(IRDLOperation):
    """One arithmetic, comparison, select or conversion statement: `opcode d, a, b, ...;`.
    The opcode is one of `ALU_OPCODES`, which gives the operand and result types.

        %z = pg_ptx.alu add.rn.f32 %x, %y : f32
        %p = pg_ptx.alu setp.lt.f32 %x, %y : (f32, f32) -> i1
    """

    name = "pg_ptx.alu"
    opcode = prop_def(StringAttr)
    inputs = var_operand_def(AnyAttr())
    result = result_def(AnyAttr())
    traits = traits_def(Pure())

    def __init__(self, opcode: str, inputs: Sequence[SSAValue | Operation],
                 result_type: Attribute | None = None):
        signature = ALU_OPCODES.get(opcode)
        # An unknown opcode still builds (the verifier names it); its result type is a guess.
        result = result_type or (signature[1] if signature is not None
                                 else SSAValue.get(inputs[0]).type)
        super().__init__(properties={"opcode": StringAttr(opcode)}, operands=[list(inputs)],
                         result_types=[result])

    def verify_(self) -> None:
        opcode = self.opcode.data
        accepted = signatures(opcode)
        if not accepted:
            raise fail(self, f"unknown opcode {opcode!r} (see pg_ptx.ALU_OPCODES)")
        got = tuple(v.type for v in self.inputs)
        if (got, self.result.type) not in accepted:
            operand_types, result_type = accepted[0]
            want = ", ".join(str(t) for t in operand_types)
            have = ", ".join(str(t) for t in got)
            raise fail(self, f"{opcode} takes ({want}) -> {result_type}, got ({have}) -> "
                             f"{self.result.type}")

    @classmethod
    def parse(cls, parser: Parser) -> AluOp:
        opcode = parser.parse_identifier()
        names = [parser.parse_unresolved_operand()]
        while parser.parse_optional_punctuation(",") is not None:
            names.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        operand_types, result_type = _parse_types(parser, len(names))
        values = parser.resolve_operands(names, operand_types, parser.pos)
        op = cls.create(properties={"opcode": StringAttr(opcode)}, operands=values,
                        result_types=[result_type])
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.opcode.data} ")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        _print_types(printer, self.inputs, self.result.type)


# ── mutable registers ────────────────────────────────────────────────────────


@irdl_op_definition
class RegOp(IRDLOperation):
    """Declare a mutable register (only a `.reg` declaration, no statement).

        %acc = pg_ptx.reg : f32
    """

    name = "pg_ptx.reg"
    result = result_def(RegType)

    def __init__(self, element_type: Attribute):
        super().__init__(result_types=[RegType(element_type)])

    @property
    def element_type(self) -> Attribute:
        assert isinstance(self.result.type, RegType)
        return self.result.type.element_type

    def verify_(self) -> None:
        _check_register(self, self.element_type, "the register")

    @classmethod
    def parse(cls, parser: Parser) -> RegOp:
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(parser.parse_type())
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.element_type)


@irdl_op_definition
class ReadOp(CellReadSyntax):
    """Copy a mutable register into a fresh one: `mov.f32 %f3, %f1;`.

        %v = pg_ptx.read %acc : f32
    """

    name = "pg_ptx.read"
    CELL_TYPE: ClassVar = RegType
    CELL_NOUN: ClassVar = "register"
    reg = operand_def(RegType)


@irdl_op_definition
class WriteOp(CellWriteSyntax):
    """Overwrite a mutable register: `mov.f32 %f1, %f3;`.

        pg_ptx.write %acc, %v : f32
    """

    name = "pg_ptx.write"
    CELL_TYPE: ClassVar = RegType
    CELL_NOUN: ClassVar = "register"
    reg = operand_def(RegType)


# ── memory ───────────────────────────────────────────────────────────────────


def _parse_access(parser: Parser) -> tuple[str, str]:
    """`global.f32` -> ("global", "f32")."""
    space, _, mem_type = parser.parse_identifier().partition(".")
    return space, mem_type


def _check_access(op: Operation, space: str, mem_type: str, register: Attribute) -> None:
    if space not in STATE_SPACES:
        raise fail(op, f"state space must be one of {', '.join(STATE_SPACES)}, got {space!r}")
    want = MEMORY_TYPES.get(mem_type)
    if want is None:
        raise fail(op, f"unknown memory type {mem_type!r} (one of {', '.join(MEMORY_TYPES)})")
    if register != want:
        raise fail(op, f"{space}.{mem_type} needs register class {want}, got {register}")


@irdl_op_definition
class LdOp(IRDLOperation):
    """Load from a 64-bit address: `ld.global.f32 %f0, [%rd3];`. With a guard it prints two
    statements, `mov.f32 %f0, <other>;` and `@%p0 ld.global.f32 %f0, [%rd3];`: the load
    runs only where the guard holds, and the result is `other` elsewhere.

        %v = pg_ptx.ld global.f32 [%at] : f32
        %w = pg_ptx.ld shared.u8 [%at] if %ok else 0 : i32
    """

    name = "pg_ptx.ld"
    space = prop_def(StringAttr)
    mem_type = prop_def(StringAttr)
    address = operand_def(i64)
    guard = opt_operand_def(i1)
    other = opt_prop_def(FloatAttr | IntegerAttr)
    result = result_def(AnyAttr())

    def __init__(self, space: str, mem_type: str, address: SSAValue,
                 guard: SSAValue | None = None, other: float | int | bool = 0):
        result_type = MEMORY_TYPES.get(mem_type, i32)
        props: dict[str, Attribute] = {"space": StringAttr(space), "mem_type": StringAttr(mem_type)}
        if guard is not None:
            props["other"] = scalar_attr(other, result_type)
        super().__init__(properties=props, operands=[address, guard], result_types=[result_type])

    def verify_(self) -> None:
        _check_access(self, self.space.data, self.mem_type.data, self.result.type)
        if (self.guard is None) != (self.other is None):
            raise fail(self, "a guard needs an 'other' value and vice versa")
        if self.other is not None and self.other.type != self.result.type:
            raise fail(self, f"other has type {self.other.type}, the result {self.result.type}")

    @classmethod
    def parse(cls, parser: Parser) -> LdOp:
        space, mem_type = _parse_access(parser)
        parser.parse_punctuation("[")
        address = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        guard, other = parse_optional_mask(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        names = [address] + ([guard] if guard is not None else [])
        values = parser.resolve_operands(names, [i64, i1][: len(names)], parser.pos)
        props: dict[str, Attribute] = {"space": StringAttr(space), "mem_type": StringAttr(mem_type)}
        if guard is not None:
            props["other"] = scalar_attr(other, result_type)
        op = cls.create(properties=props, operands=values, result_types=[result_type])
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.space.data}.{self.mem_type.data} [")
        printer.print_operand(self.address)
        printer.print_string("]")
        print_optional_mask(printer, self.guard, self.other)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class StOp(IRDLOperation):
    """Store to a 64-bit address: `st.global.f32 [%rd3], %f1;` (narrow memory types store
    the low bits of the register).

        pg_ptx.st global.f32 [%at], %y : f32
    """

    name = "pg_ptx.st"
    space = prop_def(StringAttr)
    mem_type = prop_def(StringAttr)
    address = operand_def(i64)
    value = operand_def(AnyAttr())

    def __init__(self, space: str, mem_type: str, address: SSAValue, value: SSAValue):
        super().__init__(
            properties={"space": StringAttr(space), "mem_type": StringAttr(mem_type)},
            operands=[address, value],
        )

    def verify_(self) -> None:
        _check_access(self, self.space.data, self.mem_type.data, self.value.type)

    @classmethod
    def parse(cls, parser: Parser) -> StOp:
        space, mem_type = _parse_access(parser)
        parser.parse_punctuation("[")
        address = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        parser.parse_punctuation(",")
        value = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        address_v, value_v = parser.resolve_operands([address, value], [i64, t], parser.pos)
        op = cls(space, mem_type, address_v, value_v)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.space.data}.{self.mem_type.data} [")
        printer.print_operand(self.address)
        printer.print_string("], ")
        printer.print_operand(self.value)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)


@irdl_op_definition
class SharedOp(IRDLOperation):
    """A shared-memory array of the entry, `.shared .align 4 .b8 smem0[1024];` (declared at
    the top), and its address: `mov.u64 %rd4, smem0;`.

        %s = pg_ptx.shared smem0 : !pg.buffer<256xf32>
    """

    name = "pg_ptx.shared"
    symbol = prop_def(StringAttr)
    buffer_type = prop_def(BufferType)
    result = result_def(i64)
    traits = traits_def(Pure())

    def __init__(self, symbol: str, buffer_type: BufferType):
        super().__init__(properties={"symbol": StringAttr(symbol), "buffer_type": buffer_type},
                         result_types=[i64])

    def verify_(self) -> None:
        _check_identifier(self, self.symbol.data, "the array name")

    @classmethod
    def parse(cls, parser: Parser) -> SharedOp:
        symbol = parser.parse_identifier()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        buffer_type = parser.parse_type()
        if not isinstance(buffer_type, BufferType):
            parser.raise_error(f"expected a !pg.buffer type, got {buffer_type}")
        op = cls(symbol, buffer_type)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.symbol.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer_type)


@irdl_op_definition
class BarSyncOp(BareStatement):
    """Wait for every thread of the CTA (and their shared-memory writes): `bar.sync 0;`.

        pg_ptx.bar_sync
    """

    name = "pg_ptx.bar_sync"


# ── control flow ─────────────────────────────────────────────────────────────


@irdl_op_definition
class LabelOp(IRDLOperation):
    """A branch target: `L0_loop:`.

        pg_ptx.label L0_loop
    """

    name = "pg_ptx.label"
    label = prop_def(StringAttr)

    def __init__(self, label: str):
        super().__init__(properties={"label": StringAttr(label)})

    def verify_(self) -> None:
        _check_identifier(self, self.label.data, "the label")

    @classmethod
    def parse(cls, parser: Parser) -> LabelOp:
        op = cls(parser.parse_identifier())
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.label.data}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class BraOp(IRDLOperation):
    """Jump to a label: `bra.uni L0;`, or only where a predicate holds (`@%p0 bra L0;`) or
    fails (`@!%p0 bra L0;`).

        pg_ptx.bra L0_loop if %again
        pg_ptx.bra L1_endif if not %ok
    """

    name = "pg_ptx.bra"
    target = prop_def(StringAttr)
    guard = opt_operand_def(i1)
    negate = opt_prop_def(UnitAttr)  # taken where the guard is false

    def __init__(self, target: str, guard: SSAValue | None = None, negate: bool = False):
        props: dict[str, Attribute] = {"target": StringAttr(target)}
        if negate:
            props["negate"] = UnitAttr()
        super().__init__(properties=props, operands=[guard])

    @property
    def negated(self) -> bool:
        return self.negate is not None

    def verify_(self) -> None:
        _check_identifier(self, self.target.data, "the target")
        if self.negate is not None and self.guard is None:
            raise fail(self, "only a guarded branch can be negated")

    @classmethod
    def parse(cls, parser: Parser) -> BraOp:
        target = parser.parse_identifier()
        guard, negate = None, False
        if parser.parse_optional_keyword("if") is not None:
            negate = parser.parse_optional_keyword("not") is not None
            (guard,) = parser.resolve_operands([parser.parse_unresolved_operand()], [i1],
                                               parser.pos)
        op = cls(target, guard, negate)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.target.data}")
        if self.guard is not None:
            printer.print_string(" if not " if self.negated else " if ")
            printer.print_operand(self.guard)
        printer.print_op_attributes(self.attributes)


STATEMENT_OPS = (LdParamOp, SregOp, ConstOp, AluOp, RegOp, ReadOp, WriteOp, LdOp, StOp,
                 SharedOp, BarSyncOp, LabelOp, BraOp)

PG_PTX = Dialect("pg_ptx", [EntryOp, *STATEMENT_OPS], [RegType])

__all__ = [
    "ALU_OPCODES",
    "MEMORY_TYPES",
    "PG_PTX",
    "REGISTER_CLASSES",
    "SPECIAL_REGISTERS",
    "STATE_SPACES",
    "AluOp",
    "BarSyncOp",
    "BraOp",
    "ConstOp",
    "EntryOp",
    "LabelOp",
    "LdOp",
    "LdParamOp",
    "ReadOp",
    "RegOp",
    "RegType",
    "SharedOp",
    "SregOp",
    "StOp",
    "WriteOp",
]
