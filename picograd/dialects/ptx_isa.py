"""The PTX ISA as `pg_ptx` uses it: register classes, opcodes, memory types, names.

Data, and the few functions that build or read it: which IR type each PTX register class
is (`REGISTER_CLASSES`), every arithmetic / comparison / conversion opcode with the operand
and result types it takes (`ALU_OPCODES`, built from the PTX type suffixes; tests assemble
every entry with ptxas), the opcodes that also bitcast, the memory types of `ld`/`st`,
state spaces, special registers and the identifier syntax. `pg_ptx`'s verifiers check ops
against these tables, and `convert-uop-to-ptx` picks its opcodes from them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.dialects.builtin import f16, f32, f64, i1, i32, i64
from xdsl.ir import Attribute

# IR type of a value -> the PTX register class declared for it.
REGISTER_CLASSES: dict[Attribute, str] = {
    i1: ".pred", f16: ".b16", i32: ".b32", i64: ".b64", f32: ".f32", f64: ".f64",
}

# PTX type suffix -> the register class (as IR type) an operand of that type lives in.
_SUFFIX_REGISTER: dict[str, Attribute] = {
    "pred": i1,
    "s8": i32, "u8": i32, "s16": i32, "u16": i32, "s32": i32, "u32": i32, "b32": i32,
    "s64": i64, "u64": i64, "b64": i64,
    "f16": f16, "b16": f16, "f32": f32, "f64": f64,
}
_INTS = ("s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64")
_FLOATS = ("f16", "f32", "f64")
_WIDTH = {"s8": 8, "u8": 8, "s16": 16, "u16": 16, "s32": 32, "u32": 32, "s64": 64, "u64": 64,
          "f16": 16, "f32": 32, "f64": 64}
_INT_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
# Ordered comparisons are false when an operand is NaN, the `u` forms true; `num`/`nan` test
# that neither / either operand is NaN.
_FLOAT_COMPARISONS = (*_INT_COMPARISONS, "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")

Signature = tuple[tuple[Attribute, ...], Attribute]


def _same_type(table: dict[str, Signature], mnemonics: Sequence[str], suffixes: Sequence[str],
               arity: int) -> None:
    """`mnemonic.suffix` for each pair: `arity` operands and a result of the suffix's class."""
    for mnemonic in mnemonics:
        for suffix in suffixes:
            t = _SUFFIX_REGISTER[suffix]
            table[f"{mnemonic}.{suffix}"] = ((t,) * arity, t)


def _arithmetic(table: dict[str, Signature]) -> None:
    # Integer add/sub/mul wrap; float ones carry `.rn` so that ptxas does not contract a
    # multiply and an add into an fma (which would round differently from numpy).
    _same_type(table, ("add", "sub", "mul.lo"), ("s32", "s64"), 2)
    _same_type(table, ("div", "rem", "min", "max"), ("s32", "u32", "s64", "u64"), 2)
    _same_type(table, ("and", "or", "xor"), ("b32", "b64", "pred"), 2)
    _same_type(table, ("add.rn", "sub.rn", "mul.rn", "div.rn"), ("f32", "f64"), 2)
    _same_type(table, ("neg",), ("s32", "s64", "f32", "f64"), 1)
    _same_type(table, ("not",), ("b32", "b64", "pred"), 1)
    _same_type(table, ("ex2.approx", "lg2.approx", "sin.approx"), ("f32",), 1)
    _same_type(table, ("sqrt.rn", "rcp.rn"), ("f32", "f64"), 1)
    _same_type(table, ("fma.rn",), ("f32", "f64"), 3)
    _same_type(table, ("cvta.to.global",), ("u64",), 1)
    for suffix in ("b32", "b64", "f32", "f64"):
        t = _SUFFIX_REGISTER[suffix]
        table[f"selp.{suffix}"] = ((t, t, i1), t)  # d = c ? a : b
    for shift, suffixes in (("shl", ("b32", "b64")), ("shr", ("s32", "u32", "s64", "u64"))):
        for suffix in suffixes:  # the shift amount is always 32-bit
            t = _SUFFIX_REGISTER[suffix]
            table[f"{shift}.{suffix}"] = ((t, i32), t)
    for suffix in ("s32", "u32"):
        table[f"mul.wide.{suffix}"] = ((i32, i32), i64)


def _comparisons(table: dict[str, Signature]) -> None:
    for suffixes, comparisons in (
        (("s32", "u32", "s64", "u64"), _INT_COMPARISONS),
        (("b32", "b64"), ("eq", "ne")),
        (("f32", "f64"), _FLOAT_COMPARISONS),
    ):
        for suffix in suffixes:
            t = _SUFFIX_REGISTER[suffix]
            for cmp in comparisons:
                table[f"setp.{cmp}.{suffix}"] = ((t, t), i1)


def _conversions(table: dict[str, Signature]) -> None:
    for dst in (*_INTS, *_FLOATS):
        for src in (*_INTS, *_FLOATS):
            rounding = _cvt_rounding(dst, src)
            if rounding is not None:
                opcode = ".".join(p for p in ("cvt", rounding, dst, src) if p)
                table[opcode] = ((_SUFFIX_REGISTER[src],), _SUFFIX_REGISTER[dst])


def _alu_table() -> dict[str, Signature]:
    table: dict[str, Signature] = {}
    _arithmetic(table)
    _comparisons(table)
    _conversions(table)
    return table


def _cvt_rounding(dst: str, src: str) -> str | None:
    """The rounding modifier `cvt.<rnd>.dst.src` needs ("" for none), None if not offered.

    PTX requires one where a conversion can lose precision: `.rn` into a float, `.rzi`
    (truncation, C's cast) from a float into an integer, `.rni` (round to nearest integer)
    from a float to the same float type; a widening float or any integer conversion takes
    none.
    """
    if dst in _INTS and src in _INTS:
        return "" if dst != src else None
    if dst in _FLOATS and src in _INTS:
        return "rn"
    if dst in _INTS:
        return "rzi"
    if dst == src:
        return "rni" if dst != "f16" else None
    return "rn" if _WIDTH[dst] < _WIDTH[src] else ""


ALU_OPCODES: dict[str, Signature] = _alu_table()

# Opcodes that also move bits between register classes of one width (a bitcast), besides
# their `ALU_OPCODES` signature: the op then names its result type (`AluOp(..., result)`).
# `cvt.s32.s16` / `cvt.u16.u32` read / write the low 16 bits of an f16 (`.b16`) register.
BITCAST_OPCODES: dict[str, tuple[Signature, ...]] = {
    "mov.b32": (((f32,), i32), ((i32,), f32)),
    "mov.b64": (((f64,), i64), ((i64,), f64)),
    "cvt.s32.s16": (((f16,), i32),),
    "cvt.u16.u32": (((i32,), f16),),
}


def signatures(opcode: str) -> tuple[Signature, ...]:
    """Every operand / result typing `opcode` accepts."""
    plain = ALU_OPCODES.get(opcode)
    return ((plain,) if plain is not None else ()) + BITCAST_OPCODES.get(opcode, ())

# Memory type of `ld`/`st` -> the register class of the value loaded or stored.
MEMORY_TYPES: dict[str, Attribute] = {
    "u8": i32, "s8": i32, "u16": i32, "s16": i32, "u32": i32, "s32": i32, "b32": i32,
    "b16": f16, "f32": f32, "u64": i64, "s64": i64, "b64": i64, "f64": f64,
}
STATE_SPACES = ("global", "shared")
SPECIAL_REGISTERS = tuple(
    f"{name}.{axis}" for name in ("tid", "ntid", "ctaid", "nctaid") for axis in "xyz"
)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
