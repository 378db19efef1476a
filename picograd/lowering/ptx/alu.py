"""Scalar `pg_uop` ALU ops (const, unary, binary, cmp, where, cast, bitcast) as PTX.

Used by `convert-uop-to-ptx`, whose docstring gives the semantics (those of
`picograd/interpreter/alu.py`): how integers of each width and `index` live in registers
(`IntInfo`), f16 computed in f32 and rounded back, trap-free integer div/mod, NaN-propagating
float max/min, the f32 transcendentals and C's casts. `AluLowering` picks the statements of
one ALU op, each an opcode of `pg_ptx.ALU_OPCODES`; the entry lowering, its subclass, says
where a statement goes (`_value`), where a constant lives (`_const`) and how to fail.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_ptx, pg_uop
from picograd.dialects.capabilities import capabilities
from picograd.dialects.pg import BinaryKind, CmpKind, UnaryKind
from picograd.dialects.syntax import scalar_value

INDEX_BITS = capabilities("ptx").index_bits  # 32

_CMP = {CmpKind.LT: "lt", CmpKind.LE: "le", CmpKind.GT: "gt", CmpKind.GE: "ge",
        CmpKind.EQ: "eq", CmpKind.NE: "ne"}
# Float comparisons: ordered (false with a NaN) except `ne`, which holds for NaN as in C.
_FLOAT_CMP = {**_CMP, CmpKind.NE: "neu"}
_LOG2_E = 1 / math.log(2)
_LN_2 = math.log(2)
# sin's argument reduction (`_sin`). Below 2^23 it subtracts the nearest multiple of 2pi in
# f32, with 2pi split in two f32 constants (hi + lo is 2pi to ~2^-48): measured through
# tests/ptx_sim.py that is within 1.2e-7 of the exact reduction up to 2^24, then its error
# doubles with each octave (1e-6 at 2^27, 1e-3 at 2^38, 0.1 at 2^44, a random result from
# about 2^48). From 2^23 on (where an f32 is an integer, so its exponent past the
# significand is >= 0) the reduction is exact, on the bits of 1 / (2pi).
_TWO_PI_HI = float(np.float32(2 * math.pi))
_TWO_PI_LO = float(np.float32(2 * math.pi - _TWO_PI_HI))
_INV_TWO_PI = float(np.float32(1 / (2 * math.pi)))
_EXACT_REDUCTION_FROM = 0x4B000000  # the bits of 2^23
_F32_INF = 0x7F800000
_F32_MAGNITUDE = 0x7FFFFFFF  # all bits but the sign
_F32_SIGNIFICAND = 0x7FFFFF
_F32_SIGNIFICAND_BITS = 23
_F32_HIDDEN_BIT = 0x800000
_F32_INTEGER_EXPONENT = 150  # biased exponent of 2^23: m * 2^(exponent - 150), m < 2^24
# The first 224 bits of 1 / (2pi) after the point (0x0.28be60db...), in 32-bit words: the
# exact reduction of the largest f32 (2^104 * m) reads bits 105 to 200.
_INV_TWO_PI_WORDS = (0x28BE60DB, 0x9391054A, 0x7F09D5F4, 0x7D4D3770, 0x36D8A566, 0x4F10E410,
                     0x7F9458EA)
_TURN_SCALE = 2.0**-64  # the 64-bit fixed-point turn, as a fraction of a turn


@dataclass(frozen=True)
class IntInfo:
    """How an integer type (or `index`) lives in a register."""

    wide: bool  # a 64-bit register (else 32-bit)
    signed: bool
    narrow: str | None  # "s8" / "u8" / "s16" / "u16": re-extend after arithmetic

    @property
    def register(self) -> Attribute:
        return i64 if self.wide else i32

    @property
    def bits(self) -> str:  # the .bN suffix of the register
        return "b64" if self.wide else "b32"

    @property
    def typed(self) -> str:  # the .sN / .uN suffix of the register
        return f"{'s' if self.signed else 'u'}{64 if self.wide else 32}"


def int_info(t: Attribute) -> IntInfo | None:
    if isinstance(t, IndexType):
        return IntInfo(wide=INDEX_BITS == 64, signed=True, narrow=None)
    if not isinstance(t, IntegerType) or t.width.data == 1:
        return None
    width = t.width.data
    signed = t.signedness.data != Signedness.UNSIGNED
    if width in (8, 16):
        return IntInfo(wide=False, signed=signed, narrow=f"{'s' if signed else 'u'}{width}")
    if width in (32, 64):
        return IntInfo(wide=width == 64, signed=signed, narrow=None)
    return None


def _float_register(t: Attribute) -> Attribute | None:
    """The register class of a float type (f16 computes in f32)."""
    if isinstance(t, Float16Type | Float32Type):
        return f32
    if isinstance(t, Float64Type):
        return f64
    return None


def _suffix(register: Attribute) -> str:
    return "f64" if register == f64 else "f32"


def _word_pair(i: int) -> int:
    """Words i and i + 1 of the bits of 1 / (2pi), as one 64-bit integer."""
    return _INV_TWO_PI_WORDS[i] << 32 | _INV_TWO_PI_WORDS[i + 1]


class AluLowering(ABC):
    """Instruction selection for the scalar ALU ops of one kernel.

    A subclass emits the statements: `_value` appends one and returns the register it
    defines, `_const` gives a register holding an immediate, `_fail` the pass's error.
    """

    @abstractmethod
    def _value(self, op: Operation) -> SSAValue:
        """Emit a statement that defines one register, and return it."""

    @abstractmethod
    def _const(self, value: float | int | bool, register: Attribute) -> SSAValue:
        """A register of class `register` holding `value`."""

    @abstractmethod
    def _fail(self, message: str) -> PassFailedException:
        """The pass's error about this kernel."""

    def _alu(self, opcode: str, *args: SSAValue) -> SSAValue:
        return self._value(pg_ptx.AluOp(opcode, args))

    # ── one op ──────────────────────────────────────────────────────────────

    def _lower_alu(self, op: Operation, args: list[SSAValue]) -> SSAValue:
        match op:
            case pg_uop.ConstOp():
                return self._constant(op.value, op.result.type)
            case pg_uop.UnaryOp():
                return self._unary(op.kind.data, args[0], op.result.type)
            case pg_uop.BinaryOp():
                return self._binary(op, args[0], args[1])
            case pg_uop.CmpOp():
                return self._compare(op.kind.data, args[0], args[1], op.lhs.type)
            case pg_uop.WhereOp():
                return self._where(args[0], args[1], args[2], op.result.type)
            case pg_uop.CastOp():
                return self._cast(args[0], op.input.type, op.result.type)
            case pg_uop.BitcastOp():
                return self._bitcast(args[0], op.input.type, op.result.type)
        raise self._fail(f"{op.name} has no PTX lowering")

    def _register(self, t: Attribute) -> Attribute:
        """The register class a value of type `t` lives in."""
        if t == i1:
            return i1
        if (register := _float_register(t)) is not None:
            return register
        if (info := int_info(t)) is not None:
            return info.register
        raise self._fail(f"type {t} has no PTX register class")

    def _check_index(self, value: int) -> None:
        """`value` (an index constant or range bound) fits the index register."""
        if not -(2 ** (INDEX_BITS - 1)) <= value < 2 ** (INDEX_BITS - 1):
            raise self._fail(f"index value {value} does not fit PTX's {INDEX_BITS}-bit index")

    # ── constants ───────────────────────────────────────────────────────────

    def _constant(self, attr: Attribute, t: Attribute) -> SSAValue:
        value = scalar_value(attr)
        if t == i1:
            return self._const(bool(value), i1)
        if isinstance(t, Float16Type):  # the f16 value, held in f32
            return self._const(float(np.float16(value)), f32)
        if (register := _float_register(t)) is not None:
            return self._const(float(value), register)
        info = int_info(t)
        if info is None:
            raise self._fail(f"type {t} has no PTX register class")
        value = int(value)
        if isinstance(t, IndexType):
            self._check_index(value)
        elif info.narrow is not None:  # extended as the register holds it
            dtype = np.dtype(("i" if info.signed else "u") + str(int(info.narrow[1:]) // 8))
            value = int(np.asarray(value).astype(dtype))
        return self._const(value, info.register)

    # ── arithmetic ──────────────────────────────────────────────────────────

    def _extend(self, value: SSAValue, info: IntInfo) -> SSAValue:
        """Re-extend a narrow integer from its low bits (wrapping as numpy's int8 does)."""
        if info.narrow is None:
            return value
        wide = "s32" if info.narrow.startswith("s") else "u32"
        return self._alu(f"cvt.{wide}.{info.narrow}", value)

    def _rounded(self, value: SSAValue, t: Attribute) -> SSAValue:
        """An f16 result computed in f32, rounded to f16 as numpy's f16 op rounds it (for
        + - * / and sqrt that is exactly the f16 operation: f32 has over 2 * 11 + 2 bits)."""
        if not isinstance(t, Float16Type):
            return value
        return self._alu("cvt.f32.f16", self._alu("cvt.rn.f16.f32", value))

    def _unary(self, kind: UnaryKind, x: SSAValue, t: Attribute) -> SSAValue:
        if t == i1:
            if kind == UnaryKind.NOT:
                return self._alu("not.pred", x)
            raise self._fail(f"unary {kind} is not defined on i1")
        if (info := int_info(t)) is not None:
            if kind == UnaryKind.NEG:
                return self._extend(self._alu(f"neg.s{64 if info.wide else 32}", x), info)
            if kind == UnaryKind.NOT:
                return self._extend(self._alu(f"not.{info.bits}", x), info)
            raise self._fail(f"unary {kind} is not defined on {t}")
        register = _float_register(t)
        if register is None:
            raise self._fail(f"unary {kind} on {t} has no PTX lowering")
        if kind == UnaryKind.NEG:  # exact
            return self._alu(f"neg.{_suffix(register)}", x)
        return self._rounded(self._float_unary(kind, x, register, t), t)

    def _float_unary(self, kind: UnaryKind, x: SSAValue, register: Attribute, t: Attribute
                     ) -> SSAValue:
        sfx = _suffix(register)
        if kind == UnaryKind.SQRT:
            return self._alu(f"sqrt.rn.{sfx}", x)
        if kind == UnaryKind.RECIP:
            return self._alu(f"rcp.rn.{sfx}", x)
        if kind == UnaryKind.NOT:
            raise self._fail(f"unary not is not defined on {t}")
        if register == f64:
            raise self._fail(f"{kind} on {t} has no PTX lowering (PTX's only transcendentals "
                             "are f32 ex2/lg2/sin.approx); compute it in f32")
        if kind == UnaryKind.EXP2:
            return self._alu("ex2.approx.f32", x)
        if kind == UnaryKind.LOG2:
            return self._alu("lg2.approx.f32", x)
        if kind == UnaryKind.EXP:
            return self._alu("ex2.approx.f32", self._alu("mul.rn.f32", x,
                                                          self._const(_LOG2_E, f32)))
        if kind == UnaryKind.LOG:
            return self._alu("mul.rn.f32", self._alu("lg2.approx.f32", x),
                             self._const(_LN_2, f32))
        if kind == UnaryKind.SIN:
            return self._sin(x)
        raise self._fail(f"unary {kind} on {t} has no PTX lowering")

    def _sin(self, x: SSAValue) -> SSAValue:
        # sin.approx is accurate on [-pi, pi] only: reduce x to it first, the fast way below
        # 2^23 and exactly above (both are computed, then selected: no divergent branch).
        # inf and NaN stay NaN: they take the fast way, whose fma gives inf - inf.
        magnitude = self._alu("and.b32", self._value(pg_ptx.AluOp("mov.b32", [x], i32)),
                              self._const(_F32_MAGNITUDE, i32))
        huge = self._alu("and.pred",
                         self._alu("setp.ge.u32", magnitude,
                                   self._const(_EXACT_REDUCTION_FROM, i32)),
                         self._alu("setp.lt.u32", magnitude, self._const(_F32_INF, i32)))
        exact = self._exact_reduction(magnitude)
        negative = self._alu("setp.lt.f32", x, self._const(0.0, f32))
        exact = self._alu("selp.f32", self._alu("neg.f32", exact), exact, negative)  # odd
        reduced = self._alu("selp.f32", exact, self._fast_reduction(x), huge)
        sine = self._alu("sin.approx.f32", reduced)
        # the reduction makes -0.0 +0.0; sin(-0.0) is -0.0 (C, torch): give ±0 back as it is
        zero = self._alu("setp.eq.u32", magnitude, self._const(0, i32))
        return self._alu("selp.f32", x, sine, zero)

    def _fast_reduction(self, x: SSAValue) -> SSAValue:
        """x minus the nearest multiple k of 2pi, in two fma steps so that k * 2pi loses
        nothing; accurate while k is small (`_EXACT_REDUCTION_FROM`)."""
        turns = self._alu("cvt.rni.f32.f32",
                          self._alu("mul.rn.f32", x, self._const(_INV_TWO_PI, f32)))
        minus = self._alu("neg.f32", turns)
        reduced = self._alu("fma.rn.f32", minus, self._const(_TWO_PI_HI, f32), x)
        return self._alu("fma.rn.f32", minus, self._const(_TWO_PI_LO, f32), reduced)

    def _exact_reduction(self, magnitude: SSAValue) -> SSAValue:
        """|x| minus the nearest multiple of 2pi, in [-pi, pi], for the bits `magnitude` of
        a finite |x| >= 2^23 (Payne-Hanek).

        |x| = m * 2^e with m < 2^24 and e >= 0, so the turns |x| / 2pi mod 1 are m times
        the bits of 1 / (2pi) from bit e + 1 on, mod 1. 96 of those bits, W, are enough (the
        rest adds under m * 2^-96 turns): the turns are m * W mod 2^96, over 2^96, whose top
        64 bits, read as signed, are the turns in [-1/2, 1/2) in 64-bit fixed point.
        """
        m = self._alu("or.b32", self._alu("and.b32", magnitude,
                                          self._const(_F32_SIGNIFICAND, i32)),
                      self._const(_F32_HIDDEN_BIT, i32))
        biased = self._alu("shr.u32", magnitude, self._const(_F32_SIGNIFICAND_BITS, i32))
        e = self._alu("sub.s32", biased, self._const(_F32_INTEGER_EXPONENT, i32))
        w0, w1, w2 = self._inv_two_pi_bits(e)
        # (m * W) >> 32 mod 2^64 = (m * w0 << 32) + m * w1 + (m * w2 >> 32), wrapping
        high = self._alu("shl.b64", self._alu("mul.wide.u32", m, w0), self._const(32, i32))
        low = self._alu("shr.u64", self._alu("mul.wide.u32", m, w2), self._const(32, i32))
        fixed = self._alu("add.s64", self._alu("add.s64", high,
                                               self._alu("mul.wide.u32", m, w1)), low)
        turns = self._alu("mul.rn.f32", self._alu("cvt.rn.f32.s64", fixed),
                          self._const(_TURN_SCALE, f32))
        # turns * 2pi with 2pi to 48 bits (hi + lo), so only the turns' rounding remains
        return self._alu("fma.rn.f32", turns, self._const(_TWO_PI_HI, f32),
                         self._alu("mul.rn.f32", turns, self._const(_TWO_PI_LO, f32)))

    def _inv_two_pi_bits(self, e: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
        """Bits e + 1 to e + 96 of 1 / (2pi), 0 <= e <= 104, as three 32-bit words (for
        any other e: some bits, unused).

        With e = 32 k + s, word j is the low half of words k + j and k + j + 1, as one
        64-bit integer, shifted right by 32 - s (1 to 32). PTX has no indexed constants, so
        each pair is selected with selp out of those k can reach (0 to 3).
        """
        k = self._alu("shr.u32", e, self._const(5, i32))
        right = self._alu("sub.s32", self._const(32, i32),
                          self._alu("and.b32", e, self._const(31, i32)))
        last_k = len(_INV_TWO_PI_WORDS) - 4  # pair k + 2 ends at the last word
        is_k = [self._alu("setp.eq.u32", k, self._const(i, i32)) for i in range(1, last_k + 1)]
        words = []
        for j in range(3):
            pair = self._const(_word_pair(j), i64)
            for i, chosen in enumerate(is_k, start=1):
                pair = self._alu("selp.b64", self._const(_word_pair(i + j), i64), pair, chosen)
            words.append(self._alu("cvt.u32.u64", self._alu("shr.u64", pair, right)))
        return words[0], words[1], words[2]

    def _binary(self, op: pg_uop.BinaryOp, a: SSAValue, b: SSAValue) -> SSAValue:
        kind, t = op.kind.data, op.result.type
        if t == i1:
            logical = {BinaryKind.AND: "and", BinaryKind.OR: "or", BinaryKind.XOR: "xor",
                       BinaryKind.MAX: "or", BinaryKind.MIN: "and"}  # false < true
            if kind not in logical:
                raise self._fail(f"binary {kind} is not defined on i1")
            return self._alu(f"{logical[kind]}.pred", a, b)
        if (register := _float_register(t)) is not None:
            return self._float_binary(kind, a, b, register, t)
        info = int_info(t)
        if info is None:
            raise self._fail(f"binary {kind} on {t} has no PTX lowering")
        if isinstance(t, IndexType) and kind in (BinaryKind.DIV, BinaryKind.MOD):
            return self._index_divmod(op, kind, a, b)
        return self._int_binary(kind, a, b, info, t)

    def _float_binary(self, kind: BinaryKind, a: SSAValue, b: SSAValue, register: Attribute,
                      t: Attribute) -> SSAValue:
        sfx = _suffix(register)
        arithmetic = {BinaryKind.ADD: "add", BinaryKind.SUB: "sub", BinaryKind.MUL: "mul",
                      BinaryKind.DIV: "div"}
        if kind in arithmetic:
            return self._rounded(self._alu(f"{arithmetic[kind]}.rn.{sfx}", a, b), t)
        if kind in (BinaryKind.MAX, BinaryKind.MIN):
            # (a > b || a != a) ? a : b, as C and numpy: a NaN in either operand wins.
            wins = self._alu(f"setp.{'gt' if kind == BinaryKind.MAX else 'lt'}.{sfx}", a, b)
            nan = self._alu(f"setp.nan.{sfx}", a, a)
            return self._alu(f"selp.{sfx}", a, b, self._alu("or.pred", wins, nan))
        raise self._fail(f"binary {kind} is not defined on {t}")

    def _int_binary(self, kind: BinaryKind, a: SSAValue, b: SSAValue, info: IntInfo,
                    t: Attribute) -> SSAValue:
        s = f"s{64 if info.wide else 32}"
        wrapping = {BinaryKind.ADD: f"add.{s}", BinaryKind.SUB: f"sub.{s}",
                    BinaryKind.MUL: f"mul.lo.{s}"}
        if kind in wrapping:
            return self._extend(self._alu(wrapping[kind], a, b), info)
        if kind in (BinaryKind.AND, BinaryKind.OR, BinaryKind.XOR):
            # Bitwise ops of two extended values are extended already.
            return self._alu(f"{kind.value}.{info.bits}", a, b)
        if kind in (BinaryKind.MAX, BinaryKind.MIN):
            # (a > b) ? a : b, not `max.s32`: CUDA 13.0's ptxas (-O2 and up, sm_90, driver
            # 580) folds `neg` operands of an unrolled chain of `max.s32` into 3-input VIMNMX3
            # instructions and drops one negation: max(-0, -0, -3, -5) gave 3. The
            # setp/selp form computes the same and was compiled correctly there.
            wins = self._alu(f"setp.{'gt' if kind == BinaryKind.MAX else 'lt'}.{info.typed}",
                             a, b)
            return self._alu(f"selp.{info.bits}", a, b, wins)
        if kind in (BinaryKind.DIV, BinaryKind.MOD):
            return self._int_divmod(kind, a, b, info)
        if kind in (BinaryKind.SHL, BinaryKind.SHR):
            return self._shift(kind, a, b, info)
        raise self._fail(f"binary {kind} is not defined on {t}")

    def _shift(self, kind: BinaryKind, a: SSAValue, b: SSAValue, info: IntInfo) -> SSAValue:
        # PTX clamps amounts >= the width; pg's shifts take them modulo the width: mask the
        # (always 32-bit) amount first. A narrow register holds its value extended, so a
        # right shift by less than the width is right as it is; a left shift re-extends.
        width = 64 if info.wide else (int(info.narrow[1:]) if info.narrow else 32)
        if info.wide:
            b = self._alu("cvt.u32.u64", b)
        amount = self._alu("and.b32", b, self._const(width - 1, i32))
        if kind == BinaryKind.SHL:
            return self._extend(self._alu(f"shl.{info.bits}", a, amount), info)
        return self._alu(f"shr.{info.typed}", a, amount)

    def _int_divmod(self, kind: BinaryKind, a: SSAValue, b: SSAValue, info: IntInfo) -> SSAValue:
        # Never divide by 0 or -1: the divisor becomes 1 there (x % 1 == 0 is the answer for
        # both), and a quotient is fixed up with selp: x / 0 -> 0, x / -1 -> -x (MIN -> MIN).
        register, typed, bits = info.register, info.typed, info.bits
        zero, one = self._const(0, register), self._const(1, register)
        by_zero = self._alu(f"setp.eq.{typed}", b, zero)
        by_minus_one = (self._alu(f"setp.eq.{typed}", b, self._const(-1, register))
                        if info.signed else None)
        unsafe = by_zero if by_minus_one is None else self._alu("or.pred", by_zero, by_minus_one)
        divisor = self._alu(f"selp.{bits}", one, b, unsafe)
        if kind == BinaryKind.MOD:
            return self._alu(f"rem.{typed}", a, divisor)
        quotient = self._alu(f"div.{typed}", a, divisor)
        if by_minus_one is not None:
            negated = self._extend(self._alu(f"neg.{typed}", a), info)
            quotient = self._alu(f"selp.{bits}", negated, quotient, by_minus_one)
        return self._alu(f"selp.{bits}", zero, quotient, by_zero)

    def _index_divmod(self, op: pg_uop.BinaryOp, kind: BinaryKind, a: SSAValue,
                      b: SSAValue) -> SSAValue:
        # Index values are non-negative: unsigned division, shifts for powers of two.
        divisor = op.rhs.owner
        if isinstance(divisor, pg_uop.ConstOp):
            c = int(divisor.scalar)
            if c > 0 and c & (c - 1) == 0:
                if kind == BinaryKind.DIV:
                    return self._alu("shr.u32", a, self._const(c.bit_length() - 1, i32))
                return self._alu("and.b32", a, self._const(c - 1, i32))
        return self._alu(f"{'div' if kind == BinaryKind.DIV else 'rem'}.u32", a, b)

    def _compare(self, kind: CmpKind, a: SSAValue, b: SSAValue, t: Attribute) -> SSAValue:
        if t == i1:  # as 0/1 integers: false < true
            a, b = (self._alu("selp.b32", self._const(1, i32), self._const(0, i32), v)
                    for v in (a, b))
            return self._alu(f"setp.{_CMP[kind]}.u32", a, b)
        if (register := _float_register(t)) is not None:
            return self._alu(f"setp.{_FLOAT_CMP[kind]}.{_suffix(register)}", a, b)
        info = int_info(t)
        if info is None:
            raise self._fail(f"cmp {kind} on {t} has no PTX lowering")
        return self._alu(f"setp.{_CMP[kind]}.{info.typed}", a, b)

    def _where(self, cond: SSAValue, a: SSAValue, b: SSAValue, t: Attribute) -> SSAValue:
        if t == i1:  # (c & a) | (!c & b): there is no selp on predicates
            taken = self._alu("and.pred", cond, a)
            other = self._alu("and.pred", self._alu("not.pred", cond), b)
            return self._alu("or.pred", taken, other)
        register = self._register(t)
        info = int_info(t)
        sfx = info.bits if info is not None else _suffix(register)
        return self._alu(f"selp.{sfx}", a, b, cond)

    # ── casts ───────────────────────────────────────────────────────────────

    def _cast(self, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
        if src == dst:
            return x
        if dst == i1:
            if (register := _float_register(src)) is not None:
                return self._alu(f"setp.neu.{_suffix(register)}", x, self._const(0.0, register))
            info = self._int_or_fail(src, dst)
            return self._alu(f"setp.ne.{info.typed}", x, self._const(0, info.register))
        if src == i1:
            register = self._register(dst)
            info = int_info(dst)
            sfx = info.bits if info is not None else _suffix(register)
            one, zero = (1, 0) if info is not None else (1.0, 0.0)
            return self._alu(f"selp.{sfx}", self._const(one, register),
                             self._const(zero, register), x)
        src_float, dst_float = _float_register(src), _float_register(dst)
        if src_float is not None and dst_float is not None:
            return self._float_to_float(x, src, dst)
        if dst_float is not None:
            return self._int_to_float(x, self._int_or_fail(src, dst), dst)
        dst_info = self._int_or_fail(dst, src)
        if src_float is not None:
            return self._float_to_int(x, src_float, dst_info)
        return self._int_to_int(x, self._int_or_fail(src, dst), dst_info)

    def _float_to_int(self, x: SSAValue, register: Attribute, info: IntInfo) -> SSAValue:
        """Truncate toward zero, saturating (cvt.rzi), as the CPU targets: ui32 through s64
        (so 3e9 fits, -1 wraps), ui64 through u64 for x >= 0 and s64 below (wrapping)."""
        fs = _suffix(register)
        if not info.signed and info.wide:
            unsigned, signed = self._alu(f"cvt.rzi.u64.{fs}", x), self._alu(f"cvt.rzi.s64.{fs}", x)
            negative = self._alu(f"setp.lt.{fs}", x, self._const(0.0, register))
            return self._alu("selp.b64", signed, unsigned, negative)
        if not info.signed and info.narrow is None:
            return self._alu("cvt.u32.u64", self._alu(f"cvt.rzi.s64.{fs}", x))
        wide = "s64" if info.wide else "s32"
        return self._extend(self._alu(f"cvt.rzi.{wide}.{fs}", x), info)

    def _bitcast(self, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
        src_info, dst_info = int_info(src), int_info(dst)
        if src_info is not None and dst_info is not None:  # i8 <-> ui8: re-extend the bits
            return self._int_to_int(x, src_info, dst_info)
        if isinstance(src, Float16Type):  # held in f32: round to its bits, then sign-extend
            bits = self._alu("cvt.rn.f16.f32", x)
            return self._value(pg_ptx.AluOp("cvt.s32.s16", [bits], i32))
        if isinstance(dst, Float16Type):  # the low 16 bits as an f16, held in f32
            bits = self._value(pg_ptx.AluOp("cvt.u16.u32", [x], f16))
            return self._alu("cvt.f32.f16", bits)
        wide = (dst_info is not None and dst_info.wide) or dst == f64
        opcode = "mov.b64" if wide else "mov.b32"
        return self._value(pg_ptx.AluOp(opcode, [x], self._register(dst)))

    def _int_or_fail(self, t: Attribute, other: Attribute) -> IntInfo:
        info = int_info(t)
        if info is None:
            raise self._fail(f"cast between {t} and {other} has no PTX lowering")
        return info

    def _float_to_float(self, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
        if isinstance(dst, Float16Type):  # round to f16, held in f32
            source = "f64" if isinstance(src, Float64Type) else "f32"
            return self._alu("cvt.f32.f16", self._alu(f"cvt.rn.f16.{source}", x))
        if isinstance(dst, Float64Type):
            return self._alu("cvt.f64.f32", x)  # from f32, or f16 held exactly in f32
        if isinstance(src, Float64Type):
            return self._alu("cvt.rn.f32.f64", x)
        return x  # f16 -> f32: the register already holds it

    def _int_to_float(self, x: SSAValue, info: IntInfo, dst: Attribute) -> SSAValue:
        source = info.typed
        if isinstance(dst, Float16Type):  # one rounding, straight to f16
            return self._alu("cvt.f32.f16", self._alu(f"cvt.rn.f16.{source}", x))
        return self._alu(f"cvt.rn.{_suffix(self._register(dst))}.{source}", x)

    def _int_to_int(self, x: SSAValue, src: IntInfo, dst: IntInfo) -> SSAValue:
        if src.wide and not dst.wide:
            x = self._alu("cvt.u32.u64", x)  # keep the low 32 bits
        elif dst.wide and not src.wide:
            # The 32-bit register holds the value extended already (sign-extended for signed
            # types, zero-extended and so non-negative for u8/u16); only a u32 is unsigned.
            unsigned32 = not src.signed and src.narrow is None
            return self._alu("cvt.u64.u32" if unsigned32 else "cvt.s64.s32", x)
        return self._extend(x, dst)

