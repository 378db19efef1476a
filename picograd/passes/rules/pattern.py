"""Match templates for declarative rules: variables, constants and op patterns.

A pattern is matched against an `SSAValue` and fills an environment `{name: capture}`:

    Var("x")                        any value; binds `x` to the SSAValue
    Const(0)                        a constant op whose scalar is exactly 0 (not -0.0)
    Const(name="c")                 any scalar constant; binds `c` to its Python number
    Op(IndexOp, x, Const(1), kind=BinaryKind.MUL, name="op")
                                    an op of that class (and kind), operands matched in
                                    order; binds `op` to the Operation
    F.binary(BinaryKind.MUL, x, c)  the same through an `OpFamily` (one per stage)

A name used twice must bind the same thing (`where(c, x, x)` needs both arms identical).
Binary ops whose kind is commutative (add, mul, max, min, and, or, xor, eq, ne) are also
tried with their two operands swapped, so `x*1` matches `1*x` too.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any, cast

from xdsl.dialects.builtin import FloatAttr, IntAttr, IntegerAttr, IntegerType
from xdsl.ir import Operation, SSAValue
from xdsl.traits import ConstantLike

from picograd.dialects.pg import BinaryKind, CmpKind

Env = dict[str, Any]

COMMUTATIVE_KINDS: frozenset[Enum] = frozenset({
    BinaryKind.ADD, BinaryKind.MUL, BinaryKind.MAX, BinaryKind.MIN,
    BinaryKind.AND, BinaryKind.OR, BinaryKind.XOR, CmpKind.EQ, CmpKind.NE,
})


class Pattern:
    """Base of all templates; `match` binds captures into `env` and says whether it matched."""

    def match(self, value: SSAValue, env: Env) -> bool:
        raise NotImplementedError

    def names(self) -> Iterator[str]:
        """Every capture name bound by this pattern (for checking rule signatures)."""
        return iter(())


def _bind(env: Env, name: str, thing: object) -> bool:
    """Bind `name`, or check that an earlier binding is the same thing."""
    if name not in env:
        env[name] = thing
        return True
    old = env[name]
    if isinstance(thing, int | float):
        return isinstance(old, int | float) and same_number(old, thing)
    return old is thing


@dataclass(frozen=True, slots=True)
class Var(Pattern):
    """Any value, bound to `name`."""

    name: str

    def match(self, value: SSAValue, env: Env) -> bool:
        return _bind(env, self.name, value)

    def names(self) -> Iterator[str]:
        yield self.name


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()
"""`Const(ANY)` (the default) matches a constant of any value."""


def same_number(a: float | int, b: float | int) -> bool:
    """Equal as IEEE values, telling 0.0 from -0.0 and treating NaN as equal to NaN."""
    if a != a:  # NaN
        return b != b
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


# What `constant_scalar` learnt of each class it met: whether an owner of that class is a
# constant op, and how an attribute of that class holds its number. xDSL's IR classes are
# ABCs, whose `isinstance` is slow, and the rules ask for every operand of every op they try
# (a fifth of the CNN step's pattern matching): a class is checked once per process.
_CONST_CLASSES: dict[type, bool] = {}
_NOT_A_NUMBER, _INT_ATTR, _INTEGER_ATTR, _FLOAT_ATTR = range(4)
_ATTR_FORMS: dict[type, int] = {}


def _attr_form(cls: type) -> int:
    form = _ATTR_FORMS.get(cls)
    if form is None:
        form = _ATTR_FORMS[cls] = (
            _INT_ATTR if issubclass(cls, IntAttr) else _INTEGER_ATTR
            if issubclass(cls, IntegerAttr) else _FLOAT_ATTR if issubclass(cls, FloatAttr)
            else _NOT_A_NUMBER)
    return form


def constant_scalar(value: SSAValue) -> float | int | None:
    """The Python number of a scalar constant op (`pg_*.const`), or None.

    Bools come back as 0/1 (xDSL stores an `i1` true as -1), so `Const(1)` matches `true`.
    """
    op = value.owner
    cls = type(op)
    if (is_const := _CONST_CLASSES.get(cls)) is None:
        is_const = _CONST_CLASSES[cls] = (isinstance(op, Operation)
                                          and op.has_trait(ConstantLike))
    if not is_const:
        return None
    attr: Any = cast(Operation, op).properties.get("value")
    form = _attr_form(type(attr))
    if form == _INT_ATTR:
        return attr.data
    if form == _INTEGER_ATTR:
        raw = attr.value.data
        is_bool = isinstance(attr.type, IntegerType) and attr.type.width.data == 1
        return int(raw != 0) if is_bool else raw
    if form == _FLOAT_ATTR:
        return attr.value.data
    return None


@dataclass(frozen=True, slots=True)
class Const(Pattern):
    """A scalar constant, optionally of exactly `value`; binds its number to `name`."""

    value: Any = ANY
    name: str | None = None

    def match(self, value: SSAValue, env: Env) -> bool:
        scalar = constant_scalar(value)
        if scalar is None:
            return False
        if self.value is not ANY and not same_number(scalar, self.value):
            return False
        return self.name is None or _bind(env, self.name, scalar)

    def names(self) -> Iterator[str]:
        if self.name is not None:
            yield self.name


class Op(Pattern):
    """An op of class `op_type` (exactly, or one of a tuple of classes), of `kind` (one kind,
    a tuple of kinds, or any), whose operands match `operands` in order (or swapped, for a
    commutative kind or `commutative=True`)."""

    __slots__ = ("commutative", "kinds", "name", "op_types", "operands")

    def __init__(self, op_type: type[Operation] | tuple[type[Operation], ...], *operands: Pattern,
                 kind: Enum | tuple[Enum, ...] | None = None, name: str | None = None,
                 commutative: bool | None = None):
        self.op_types = op_type if isinstance(op_type, tuple) else (op_type,)
        self.operands = operands
        self.kinds: frozenset[Enum] | None = (
            None if kind is None else frozenset(kind if isinstance(kind, tuple) else (kind,)))
        self.name = name
        # None: decided per matched op from its kind.
        self.commutative = commutative

    def __repr__(self) -> str:
        kinds = "" if self.kinds is None else f" {sorted(k.value for k in self.kinds)}"
        classes = "|".join(cls.__name__ for cls in self.op_types)
        return f"Op({classes}{kinds}, {list(self.operands)})"

    def match(self, value: SSAValue, env: Env) -> bool:
        op = value.owner
        return type(op) in self.op_types and self.match_op(op, env)  # type: ignore[arg-type]

    def match_op(self, op: Operation, env: Env) -> bool:
        """Match an op directly (the root of a rule)."""
        operands = op.operands
        if len(operands) != len(self.operands):
            return False
        kind = op.properties["kind"].data if self.kinds is not None else None  # type: ignore[attr-defined]
        if kind is not None and kind not in self.kinds:  # type: ignore[operator]
            return False
        if self.name is not None and not _bind(env, self.name, op):
            return False
        if not self._swappable(op):
            return all(p.match(v, env) for p, v in zip(self.operands, operands, strict=True))
        saved = dict(env)
        if self.operands[0].match(operands[0], env) and self.operands[1].match(operands[1], env):
            return True
        env.clear()
        env.update(saved)
        return self.operands[0].match(operands[1], env) and self.operands[1].match(operands[0], env)

    def _swappable(self, op: Operation) -> bool:
        if len(self.operands) != 2:
            return False
        if self.commutative is not None:
            return self.commutative
        kind = op.properties.get("kind")
        return kind is not None and kind.data in COMMUTATIVE_KINDS  # type: ignore[attr-defined]

    def names(self) -> Iterator[str]:
        if self.name is not None:
            yield self.name
        for p in self.operands:
            yield from p.names()


class OpFamily:
    """The elementwise op classes of one stage, so rules read `F.binary(MUL, x, Const(1))`.

    `pg_tensor` and `pg_uop` share one algebra; a family names which classes it matches.
    """

    def __init__(self, *, unary: type[Operation], binary: type[Operation],
                 cmp: type[Operation], where: type[Operation], cast: type[Operation]):
        self.classes = {"unary": unary, "binary": binary, "cmp": cmp, "where": where,
                        "cast": cast}

    def unary(self, kind: Enum | None, x: Pattern, *, name: str | None = None) -> Op:
        return Op(self.classes["unary"], x, kind=kind, name=name)

    def binary(self, kind: Enum | tuple[Enum, ...] | None, a: Pattern, b: Pattern, *,
               name: str | None = None) -> Op:
        return Op(self.classes["binary"], a, b, kind=kind, name=name)

    def cmp(self, kind: Enum | None, a: Pattern, b: Pattern, *, name: str | None = None) -> Op:
        return Op(self.classes["cmp"], a, b, kind=kind, name=name)

    def where(self, c: Pattern, a: Pattern, b: Pattern, *, name: str | None = None) -> Op:
        return Op(self.classes["where"], c, a, b, name=name)

    def cast(self, x: Pattern, *, name: str | None = None) -> Op:
        return Op(self.classes["cast"], x, name=name)
