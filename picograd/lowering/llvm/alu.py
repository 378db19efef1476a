"""Scalar `pg_uop` ALU ops (const, unary, binary, cmp, where, cast) as xDSL `llvm` ops.

`unary` and `binary` on vectors (float `add`/`sub`/`mul`/`div`/`neg`/`exp`, what
`convert-loop-to-uop` vectorises) take the same LLVM ops on LLVM vector types. `exp` of f32
(scalar or vector) is arithmetic that vectorises (`picograd/lowering/llvm/math.py`), not
libm's `expf`.

Used by `convert-uop-to-llvm`. The semantics are the CPU ones of docs/design.md:

* integers are signless in LLVM; `ui8` picks the unsigned flavour of an op (udiv, urem,
  ult, umax, zext); bools (`i1`) compare as unsigned (false < true), max/min are or/and.
* integer `div`/`mod` truncate toward zero (`sdiv`/`srem`). A zero divisor gives 0, as in
  numpy, and a signed `MIN / -1` wraps to MIN (`MIN % -1` is 0), instead of the x86 trap that
  would kill the Python process (C leaves both undefined).
* float `max`/`min` propagate NaN (compare + select, see `_nan_propagating`); `ne` on floats is
  unordered (`NaN != x` holds, as in C).
* float -> int casts truncate toward zero with `llvm.fptosi.sat`, which is picograd's rule
  for every value (docs/design.md, "Float to int casts"): NaN -> 0, values beyond the
  range give its ends (`fptosi` is poison there; xDSL 0.74's llvm dialect has no
  `fptosi`/`fptoui`/`uitofp` anyway). Targets narrower than 32 bits convert to i32 then
  truncate, as C compilers do on x86, so `-1.0 -> ui8` gives 255 like numpy. Unsigned ->
  float goes through `zext` to i64 and `sitofp` (exact); bool -> float is a select of
  1.0 / 0.0.
* f64 -> f16 goes through f32 (see `_float_to_float`).
* shifts mask the amount to the bit width first (`shl`/`ashr`/`lshr` give poison beyond it);
  `bitcast` is LLVM's (nothing at all for ui8 <-> i8, one LLVM type).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
    f32,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from picograd.dialects import pg_uop
from picograd.dialects.dtypes import is_bool, is_float, is_unsigned
from picograd.dialects.pg import BinaryKind, CmpKind, UnaryKind
from picograd.lowering.llvm.emit import Emitter, const, llvm_type, splat, suffix
from picograd.lowering.llvm.math import exp_f32, is_exp_f32
from picograd.lowering.llvm.vector_select import VECTOR_SELECTS_BY_PREDICATE


def _category(t: Attribute) -> str:
    if is_float(t):
        return "float"
    if is_bool(t):
        return "bool"
    return "uint" if is_unsigned(t) else "int"


def lower_constant(emit: Emitter, attr: Attribute, t: Attribute) -> SSAValue:
    """The constant `attr` as a `t` (in every lane when `t` is a vector)."""
    assert isinstance(attr, FloatAttr | IntegerAttr)
    if isinstance(t, VectorType):
        return splat(emit, const(emit, attr.value.data, t.element_type), t.get_shape()[0])
    return const(emit, attr.value.data, t)


def _intrinsic(emit: Emitter, name: str, args: list[SSAValue], result: Attribute) -> SSAValue:
    return emit.value(llvm.CallIntrinsicOp(name, args, [llvm_type(result)]))


def icmp(emit: Emitter, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
    """`llvm.icmp` with a predicate by name ("slt", "ne", ...)."""
    predicate = IntegerAttr[IntegerType](llvm.ICmpPredicateFlag(pred).to_int(), i64)
    return emit.value(llvm.ICmpOp(a, b, predicate))


# ── unary ────────────────────────────────────────────────────────────────────

_MATH = {UnaryKind.EXP: "exp", UnaryKind.LOG: "log", UnaryKind.SQRT: "sqrt", UnaryKind.SIN: "sin",
         UnaryKind.EXP2: "exp2", UnaryKind.LOG2: "log2"}


def _unary(emit: Emitter, kind: UnaryKind, x: SSAValue, t: Attribute) -> SSAValue:
    if kind == UnaryKind.EXP and is_exp_f32(t):
        return exp_f32(emit, x)
    if kind in _MATH:
        return _intrinsic(emit, f"llvm.{_MATH[kind]}.{suffix(t)}", [x], t)
    if kind == UnaryKind.RECIP:
        return emit.value(llvm.FDivOp(const(emit, 1.0, t), x))
    if kind == UnaryKind.NEG:
        if is_float(t):
            return emit.value(llvm.FNegOp(x))
        return emit.value(llvm.SubOp(const(emit, 0, t), x))
    assert kind == UnaryKind.NOT
    return emit.value(llvm.XOrOp(x, const(emit, -1, t)))  # -1 : i1 is true


# ── binary ───────────────────────────────────────────────────────────────────

Builder = Callable[[Emitter, SSAValue, SSAValue, Attribute], SSAValue]


def _plain(cls: type[Operation]) -> Builder:
    return lambda emit, a, b, t: emit.value(cls(a, b))  # type: ignore[call-arg]


def _call(name: str) -> Builder:
    return lambda emit, a, b, t: _intrinsic(emit, f"llvm.{name}.{suffix(t)}", [a, b], t)


def _trap_free(cls: type[Operation], *, signed: bool, is_div: bool) -> Builder:
    """`a / b` (or `a % b`) that never traps: b == 0 gives 0 (as numpy), and for signed
    types b == -1 gives -a (wrapping, so MIN / -1 == MIN) or 0, where `sdiv`/`srem` would
    raise SIGFPE on x86 and kill the Python process (C leaves both undefined)."""

    def build(emit: Emitter, a: SSAValue, b: SSAValue, t: Attribute) -> SSAValue:
        divisor = b.owner.value if isinstance(b.owner, llvm.ConstantOp) else None
        if isinstance(divisor, IntegerAttr) and divisor.value.data not in (0, -1):
            return emit.value(cls(a, b))  # type: ignore[call-arg]
        zero = const(emit, 0, t)
        is_zero = icmp(emit, "eq", b, zero)
        unsafe, minus_one = is_zero, None
        if signed:
            minus_one = icmp(emit, "eq", b, const(emit, -1, t))
            unsafe = emit.value(llvm.OrOp(is_zero, minus_one))
        safe = emit.value(llvm.SelectOp(unsafe, const(emit, 1, t), b))
        result = emit.value(cls(a, safe))  # type: ignore[call-arg]
        if minus_one is not None and is_div:
            negated = emit.value(llvm.SubOp(zero, a))
            result = emit.value(llvm.SelectOp(minus_one, negated, result))
        return emit.value(llvm.SelectOp(is_zero if is_div else unsafe, zero, result))

    return build


def _nan_propagating(predicate: str) -> Builder:
    """Float max/min as `(a <pred> b || a != a) ? a : b`, the same choice (NaN wins; of two
    equal zeros, the second) as the interpreters and the C target make. On vectors it is a
    call of `pg.fmax.v16f32` (`pg.fmin...`), that compare and select on whole vectors
    (`vector_select.py`: xDSL's `llvm.fcmp` and `llvm.select` take scalars only)."""

    def build(emit: Emitter, a: SSAValue, b: SSAValue, t: Attribute) -> SSAValue:
        if isinstance(t, VectorType):
            name = f"{VECTOR_SELECTS_BY_PREDICATE[predicate]}.{suffix(t)}"
            return emit.value(llvm.CallOp(name, a, b, return_type=t))
        better = emit.value(llvm.FCmpOp(a, b, predicate))
        a_is_nan = emit.value(llvm.FCmpOp(a, a, "uno"))
        pick_a = emit.value(llvm.OrOp(better, a_is_nan))
        return emit.value(llvm.SelectOp(pick_a, a, b))

    return build


def _shift(cls: type[Operation]) -> Builder:
    """A shift by `b` modulo the bit width (pg.BinaryKind.SHL/SHR): LLVM's shifts give poison
    for amounts >= the width, so the amount is masked first (a no-op for the constant amounts
    LLVM folds)."""

    def build(emit: Emitter, a: SSAValue, b: SSAValue, t: Attribute) -> SSAValue:
        amount = emit.value(llvm.AndOp(b, const(emit, _width(t) - 1, t)))
        return emit.value(cls(a, amount))  # type: ignore[call-arg]

    return build


_BINARY: dict[tuple[BinaryKind, str], Builder] = {
    (BinaryKind.ADD, "float"): _plain(llvm.FAddOp),
    (BinaryKind.SUB, "float"): _plain(llvm.FSubOp),
    (BinaryKind.MUL, "float"): _plain(llvm.FMulOp),
    (BinaryKind.DIV, "float"): _plain(llvm.FDivOp),
    (BinaryKind.MAX, "float"): _nan_propagating("ogt"),
    (BinaryKind.MIN, "float"): _nan_propagating("olt"),
    (BinaryKind.MAX, "bool"): _plain(llvm.OrOp),
    (BinaryKind.MIN, "bool"): _plain(llvm.AndOp),
}
for _cat, _sign in (("int", "s"), ("uint", "u")):
    _BINARY[BinaryKind.ADD, _cat] = _plain(llvm.AddOp)
    _BINARY[BinaryKind.SUB, _cat] = _plain(llvm.SubOp)
    _BINARY[BinaryKind.MUL, _cat] = _plain(llvm.MulOp)
    _signed = _sign == "s"
    _BINARY[BinaryKind.DIV, _cat] = _trap_free(
        llvm.SDivOp if _signed else llvm.UDivOp, signed=_signed, is_div=True)
    _BINARY[BinaryKind.MOD, _cat] = _trap_free(
        llvm.SRemOp if _signed else llvm.URemOp, signed=_signed, is_div=False)
    _BINARY[BinaryKind.MAX, _cat] = _call(f"{_sign}max")
    _BINARY[BinaryKind.SHL, _cat] = _shift(llvm.ShlOp)
    _BINARY[BinaryKind.SHR, _cat] = _shift(llvm.AShrOp if _signed else llvm.LShrOp)
    _BINARY[BinaryKind.MIN, _cat] = _call(f"{_sign}min")
for _cat in ("int", "uint", "bool"):
    _BINARY[BinaryKind.AND, _cat] = _plain(llvm.AndOp)
    _BINARY[BinaryKind.OR, _cat] = _plain(llvm.OrOp)
    _BINARY[BinaryKind.XOR, _cat] = _plain(llvm.XOrOp)


# ── comparisons ──────────────────────────────────────────────────────────────

_FCMP = {CmpKind.LT: "olt", CmpKind.LE: "ole", CmpKind.GT: "ogt", CmpKind.GE: "oge",
         CmpKind.EQ: "oeq", CmpKind.NE: "une"}
_ICMP = {CmpKind.LT: "lt", CmpKind.LE: "le", CmpKind.GT: "gt", CmpKind.GE: "ge"}


def _cmp(emit: Emitter, kind: CmpKind, a: SSAValue, b: SSAValue, t: Attribute) -> SSAValue:
    if is_float(t):
        return emit.value(llvm.FCmpOp(a, b, _FCMP[kind]))
    if kind in (CmpKind.EQ, CmpKind.NE):
        return icmp(emit, str(kind), a, b)
    sign = "s" if _category(t) == "int" else "u"  # bools order like unsigned: false < true
    return icmp(emit, sign + _ICMP[kind], a, b)


# ── casts ────────────────────────────────────────────────────────────────────


def _width(t: Attribute) -> int:
    lt = llvm_type(t)
    return lt.width.data if isinstance(lt, IntegerType) else lt.bitwidth  # type: ignore[attr-defined]


def _float_to_int(emit: Emitter, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
    width = _width(dst)
    via = llvm_type(dst) if width >= 32 and not is_unsigned(dst) else i32
    value = _intrinsic(emit, f"llvm.fptosi.sat.{suffix(via)}.{suffix(src)}", [x], via)
    return value if via == llvm_type(dst) else emit.value(llvm.TruncOp(value, llvm_type(dst)))


def _int_to_float(emit: Emitter, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
    if is_unsigned(src):
        x = emit.value(llvm.ZExtOp(x, i64))
    return emit.value(llvm.SIToFPOp(x, dst))


def _int_to_int(emit: Emitter, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
    ws, wd = _width(src), _width(dst)
    if wd < ws:
        return emit.value(llvm.TruncOp(x, llvm_type(dst)))
    cls = llvm.ZExtOp if is_unsigned(src) or is_bool(src) else llvm.SExtOp
    return emit.value(cls(x, llvm_type(dst)))


def _float_to_float(emit: Emitter, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
    if _width(dst) > _width(src):
        return emit.value(llvm.FPExtOp(x, dst))
    if _width(src) == 64 and _width(dst) == 16:
        # A direct double -> half truncation calls compiler-rt's `__truncdfhf2`, which
        # MCJIT cannot resolve (the call jumps to address 0). Going through f32 rounds twice,
        # which differs from numpy only for values within half an f32 ulp of an f16 tie.
        x = emit.value(llvm.FPTruncOp(x, f32))
    return emit.value(llvm.FPTruncOp(x, dst))


def _cast(emit: Emitter, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
    if llvm_type(src) == llvm_type(dst):  # index <-> i64, ui8 <-> i8 keep their bits
        return x
    if is_bool(dst):  # != 0
        if is_float(src):
            return emit.value(llvm.FCmpOp(x, const(emit, 0.0, src), "une"))
        return icmp(emit, "ne", x, const(emit, 0, src))
    if is_bool(src) and is_float(dst):
        return emit.value(llvm.SelectOp(x, const(emit, 1.0, dst), const(emit, 0.0, dst)))
    if is_float(src):
        return (_float_to_float if is_float(dst) else _float_to_int)(emit, x, src, dst)
    return (_int_to_float if is_float(dst) else _int_to_int)(emit, x, src, dst)


# ── entry point ──────────────────────────────────────────────────────────────


def lower_alu(emit: Emitter, op: Operation, operands: list[SSAValue]) -> SSAValue:
    """Emit the llvm ops of one scalar ALU op (not `const`) and return its value."""
    match op:
        case pg_uop.UnaryOp():
            return _unary(emit, op.kind.data, operands[0], op.result.type)
        case pg_uop.BinaryOp():
            t = op.result.type
            return _BINARY[op.kind.data, _category(t)](emit, operands[0], operands[1], t)
        case pg_uop.CmpOp():
            return _cmp(emit, op.kind.data, operands[0], operands[1], op.lhs.type)
        case pg_uop.WhereOp():
            return emit.value(llvm.SelectOp(*operands))
        case pg_uop.CastOp():
            return _cast(emit, operands[0], op.input.type, op.result.type)
        case pg_uop.BitcastOp():  # ui8 <-> i8 are one LLVM type: nothing to do
            if llvm_type(op.input.type) == llvm_type(op.result.type):
                return operands[0]
            return emit.value(llvm.BitcastOp(operands[0], llvm_type(op.result.type)))
    raise AssertionError(f"not a scalar ALU op: {op.name}")


__all__ = ["Emitter", "const", "icmp", "llvm_type", "lower_alu", "lower_constant", "splat"]
