"""Scalar `pg_uop` ALU ops (const, unary, binary, cmp, where, cast) as LLVM instructions
(through either builder of `builder.py`).

`unary` and `binary` on vectors (float `add`/`sub`/`mul`/`div`/`neg`/`exp`, what
`convert-loop-to-uop` vectorises) take the same LLVM ops on LLVM vector types. `exp` of f32
(scalar or vector) is arithmetic that vectorises (`picograd/lowering/llvm/math.py`), not
libm's `expf`.

Used by `convert-uop-to-llvm` and the LLVM text route (`text_route.py`). The semantics are
the CPU ones of docs/design.md:

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

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, VectorType, f32, i32, i64
from xdsl.ir import Attribute, Operation

from picograd.dialects import pg_uop
from picograd.dialects.dtypes import is_bool, is_float, is_unsigned
from picograd.dialects.pg import BinaryKind, CmpKind, UnaryKind
from picograd.lowering.llvm.builder import LlvmBuilder, Value
from picograd.lowering.llvm.emit import const, llvm_type, splat, suffix
from picograd.lowering.llvm.math import exp_f32, is_exp_f32
from picograd.lowering.llvm.vector_select import VECTOR_SELECTS_BY_PREDICATE


def _category(t: Attribute) -> str:
    if is_float(t):
        return "float"
    if is_bool(t):
        return "bool"
    return "uint" if is_unsigned(t) else "int"


def lower_constant(b: LlvmBuilder, attr: Attribute, t: Attribute) -> Value:
    """The constant `attr` as a `t` (in every lane when `t` is a vector)."""
    assert isinstance(attr, FloatAttr | IntegerAttr)
    if isinstance(t, VectorType):
        return splat(b, const(b, attr.value.data, t.element_type), t.get_shape()[0])
    return const(b, attr.value.data, t)


def _intrinsic(b: LlvmBuilder, name: str, args: list[Value], result: Attribute) -> Value:
    return b.intrinsic(name, args, llvm_type(result))


# ── unary ────────────────────────────────────────────────────────────────────

_MATH = {UnaryKind.EXP: "exp", UnaryKind.LOG: "log", UnaryKind.SQRT: "sqrt", UnaryKind.SIN: "sin",
         UnaryKind.EXP2: "exp2", UnaryKind.LOG2: "log2"}


def _unary(b: LlvmBuilder, kind: UnaryKind, x: Value, t: Attribute) -> Value:
    if kind == UnaryKind.EXP and is_exp_f32(t):
        return exp_f32(b, x)
    if kind in _MATH:
        return _intrinsic(b, f"llvm.{_MATH[kind]}.{suffix(t)}", [x], t)
    if kind == UnaryKind.RECIP:
        return b.binary("fdiv", const(b, 1.0, t), x)
    if kind == UnaryKind.NEG:
        if is_float(t):
            return b.fneg(x)
        return b.binary("sub", const(b, 0, t), x)
    assert kind == UnaryKind.NOT
    return b.binary("xor", x, const(b, -1, t))  # -1 : i1 is true


# ── binary ───────────────────────────────────────────────────────────────────

Builder = Callable[[LlvmBuilder, Value, Value, Attribute], Value]


def _plain(name: str) -> Builder:
    return lambda b, x, y, t: b.binary(name, x, y)


def _call(name: str) -> Builder:
    return lambda b, x, y, t: _intrinsic(b, f"llvm.{name}.{suffix(t)}", [x, y], t)


def _trap_free(name: str, *, signed: bool, is_div: bool) -> Builder:
    """`a / b` (or `a % b`) that never traps: b == 0 gives 0 (as numpy), and for signed
    types b == -1 gives -a (wrapping, so MIN / -1 == MIN) or 0, where `sdiv`/`srem` would
    raise SIGFPE on x86 and kill the Python process (C leaves both undefined)."""

    def build(b: LlvmBuilder, x: Value, y: Value, t: Attribute) -> Value:
        divisor = b.constant_value(y)
        if isinstance(divisor, int) and divisor not in (0, -1):
            return b.binary(name, x, y)
        zero = const(b, 0, t)
        is_zero = b.icmp("eq", y, zero)
        unsafe, minus_one = is_zero, None
        if signed:
            minus_one = b.icmp("eq", y, const(b, -1, t))
            unsafe = b.binary("or", is_zero, minus_one)
        safe = b.select(unsafe, const(b, 1, t), y)
        result = b.binary(name, x, safe)
        if minus_one is not None and is_div:
            negated = b.binary("sub", zero, x)
            result = b.select(minus_one, negated, result)
        return b.select(is_zero if is_div else unsafe, zero, result)

    return build


def _nan_propagating(predicate: str) -> Builder:
    """Float max/min as `(a <pred> b || a != a) ? a : b`, the same choice (NaN wins; of two
    equal zeros, the second) as the interpreters and the C target make. On vectors it is a
    call of `pg.fmax.v16f32` (`pg.fmin...`), that compare and select on whole vectors
    (`vector_select.py`: xDSL's `llvm.fcmp` and `llvm.select` take scalars only)."""

    def build(b: LlvmBuilder, x: Value, y: Value, t: Attribute) -> Value:
        if isinstance(t, VectorType):
            name = f"{VECTOR_SELECTS_BY_PREDICATE[predicate]}.{suffix(t)}"
            return b.call(name, [x, y], t)
        better = b.fcmp(predicate, x, y)
        x_is_nan = b.fcmp("uno", x, x)
        pick_x = b.binary("or", better, x_is_nan)
        return b.select(pick_x, x, y)

    return build


def _shift(name: str) -> Builder:
    """A shift by `b` modulo the bit width (pg.BinaryKind.SHL/SHR): LLVM's shifts give poison
    for amounts >= the width, so the amount is masked first (a no-op for the constant amounts
    LLVM folds)."""

    def build(b: LlvmBuilder, x: Value, y: Value, t: Attribute) -> Value:
        amount = b.binary("and", y, const(b, _width(t) - 1, t))
        return b.binary(name, x, amount)

    return build


_BINARY: dict[tuple[BinaryKind, str], Builder] = {
    (BinaryKind.ADD, "float"): _plain("fadd"),
    (BinaryKind.SUB, "float"): _plain("fsub"),
    (BinaryKind.MUL, "float"): _plain("fmul"),
    (BinaryKind.DIV, "float"): _plain("fdiv"),
    (BinaryKind.MAX, "float"): _nan_propagating("ogt"),
    (BinaryKind.MIN, "float"): _nan_propagating("olt"),
    (BinaryKind.MAX, "bool"): _plain("or"),
    (BinaryKind.MIN, "bool"): _plain("and"),
}
for _cat, _sign in (("int", "s"), ("uint", "u")):
    _BINARY[BinaryKind.ADD, _cat] = _plain("add")
    _BINARY[BinaryKind.SUB, _cat] = _plain("sub")
    _BINARY[BinaryKind.MUL, _cat] = _plain("mul")
    _signed = _sign == "s"
    _BINARY[BinaryKind.DIV, _cat] = _trap_free(_sign + "div", signed=_signed, is_div=True)
    _BINARY[BinaryKind.MOD, _cat] = _trap_free(_sign + "rem", signed=_signed, is_div=False)
    _BINARY[BinaryKind.MAX, _cat] = _call(f"{_sign}max")
    _BINARY[BinaryKind.SHL, _cat] = _shift("shl")
    _BINARY[BinaryKind.SHR, _cat] = _shift("ashr" if _signed else "lshr")
    _BINARY[BinaryKind.MIN, _cat] = _call(f"{_sign}min")
for _cat in ("int", "uint", "bool"):
    _BINARY[BinaryKind.AND, _cat] = _plain("and")
    _BINARY[BinaryKind.OR, _cat] = _plain("or")
    _BINARY[BinaryKind.XOR, _cat] = _plain("xor")


# ── comparisons ──────────────────────────────────────────────────────────────

_FCMP = {CmpKind.LT: "olt", CmpKind.LE: "ole", CmpKind.GT: "ogt", CmpKind.GE: "oge",
         CmpKind.EQ: "oeq", CmpKind.NE: "une"}
_ICMP = {CmpKind.LT: "lt", CmpKind.LE: "le", CmpKind.GT: "gt", CmpKind.GE: "ge"}


def _cmp(b: LlvmBuilder, kind: CmpKind, x: Value, y: Value, t: Attribute) -> Value:
    if is_float(t):
        return b.fcmp(_FCMP[kind], x, y)
    if kind in (CmpKind.EQ, CmpKind.NE):
        return b.icmp(str(kind), x, y)
    sign = "s" if _category(t) == "int" else "u"  # bools order like unsigned: false < true
    return b.icmp(sign + _ICMP[kind], x, y)


# ── casts ────────────────────────────────────────────────────────────────────


def _width(t: Attribute) -> int:
    lt = llvm_type(t)
    return lt.width.data if isinstance(lt, IntegerType) else lt.bitwidth  # type: ignore[attr-defined]


def _float_to_int(b: LlvmBuilder, x: Value, src: Attribute, dst: Attribute) -> Value:
    width = _width(dst)
    if is_unsigned(dst) and width == 64:
        return _float_to_u64(b, x, src)
    # ui32 goes through i64 so that 3e9 fits; the narrower types through i32 (wrapping)
    via = (i64 if width == 32 else llvm_type(dst)) if is_unsigned(dst) and width >= 32 else (
        llvm_type(dst) if width >= 32 else i32)
    value = _intrinsic(b, f"llvm.fptosi.sat.{suffix(via)}.{suffix(src)}", [x], via)
    return value if via == llvm_type(dst) else b.cast("trunc", value, llvm_type(dst))


def _float_to_u64(b: LlvmBuilder, x: Value, src: Attribute) -> Value:
    """float -> ui64 without `fptoui`: values from 2**63 on are converted less 2**63 and get
    the top bit back; the others (negative ones too, wrapping as torch) through i64."""
    top = 2.0 ** 63
    low = _intrinsic(b, f"llvm.fptosi.sat.i64.{suffix(src)}", [x], i64)
    if _width(src) < 32:  # every f16 fits i64
        return low
    shifted = _intrinsic(b, f"llvm.fptosi.sat.i64.{suffix(src)}",
                         [b.binary("fsub", x, const(b, top, src))], i64)
    high = b.binary("xor", shifted, const(b, -(2**63), i64))
    return b.select(b.fcmp("oge", x, const(b, top, src)), high, low)


def _int_to_float(b: LlvmBuilder, x: Value, src: Attribute, dst: Attribute) -> Value:
    if is_unsigned(src) and _width(src) == 64:
        # no `uitofp`: a value with the top bit set is halved (keeping the low bit, so the
        # rounding is the same), converted and doubled
        half = b.binary("or", b.binary("lshr", x, const(b, 1, i64)),
                        b.binary("and", x, const(b, 1, i64)))
        doubled = b.binary("fadd", h := b.cast("sitofp", half, dst), h)
        return b.select(b.icmp("slt", x, const(b, 0, i64)), doubled, b.cast("sitofp", x, dst))
    if is_unsigned(src):
        x = b.cast("zext", x, i64)
    return b.cast("sitofp", x, dst)


def _int_to_int(b: LlvmBuilder, x: Value, src: Attribute, dst: Attribute) -> Value:
    ws, wd = _width(src), _width(dst)
    if wd < ws:
        return b.cast("trunc", x, llvm_type(dst))
    return b.cast("zext" if is_unsigned(src) or is_bool(src) else "sext", x, llvm_type(dst))


def _float_to_float(b: LlvmBuilder, x: Value, src: Attribute, dst: Attribute) -> Value:
    if _width(dst) > _width(src):
        return b.cast("fpext", x, dst)
    if _width(src) == 64 and _width(dst) == 16:
        # A direct double -> half truncation calls compiler-rt's `__truncdfhf2`, which
        # MCJIT cannot resolve (the call jumps to address 0). Going through f32 rounds twice,
        # which differs from numpy only for values within half an f32 ulp of an f16 tie.
        x = b.cast("fptrunc", x, f32)
    return b.cast("fptrunc", x, dst)


def _cast(b: LlvmBuilder, x: Value, src: Attribute, dst: Attribute) -> Value:
    if llvm_type(src) == llvm_type(dst):  # index <-> i64, ui8 <-> i8 keep their bits
        return x
    if is_bool(dst):  # != 0
        if is_float(src):
            return b.fcmp("une", x, const(b, 0.0, src))
        return b.icmp("ne", x, const(b, 0, src))
    if is_bool(src) and is_float(dst):
        return b.select(x, const(b, 1.0, dst), const(b, 0.0, dst))
    if is_float(src):
        return (_float_to_float if is_float(dst) else _float_to_int)(b, x, src, dst)
    return (_int_to_float if is_float(dst) else _int_to_int)(b, x, src, dst)


# ── entry point ──────────────────────────────────────────────────────────────


def lower_alu(b: LlvmBuilder, op: Operation, operands: list[Value]) -> Value:
    """Build the instructions of one scalar ALU op (not `const`) and return its value."""
    match op:
        case pg_uop.UnaryOp():
            return _unary(b, op.kind.data, operands[0], op.result.type)
        case pg_uop.BinaryOp():
            t = op.result.type
            return _BINARY[op.kind.data, _category(t)](b, operands[0], operands[1], t)
        case pg_uop.CmpOp():
            return _cmp(b, op.kind.data, operands[0], operands[1], op.lhs.type)
        case pg_uop.WhereOp():
            return b.select(*operands)
        case pg_uop.CastOp():
            return _cast(b, operands[0], op.input.type, op.result.type)
        case pg_uop.BitcastOp():  # ui8 <-> i8 are one LLVM type: nothing to do
            if llvm_type(op.input.type) == llvm_type(op.result.type):
                return operands[0]
            return b.cast("bitcast", operands[0], llvm_type(op.result.type))
    raise AssertionError(f"not a scalar ALU op: {op.name}")


__all__ = ["const", "llvm_type", "lower_alu", "lower_constant", "splat"]
