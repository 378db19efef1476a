"""Values, programs, result comparison, and the elementwise-op builder shared by stages."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from picograd.dialects import make_context
from picograd.dialects.syntax import format_number

Draw = Callable[[st.SearchStrategy], object]

FLOATS = ("f32", "f64")
INTS = ("i32", "i8")
NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_, "i8": np.int8,
      "ui8": np.uint8, "i32": np.int32, "i64": np.int64}
FLOAT_EDGES = (0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -3.5, math.inf, -math.inf, math.nan, 1e30)
DIVISORS = (1, 2, 3, 7, -2, -3)  # non-zero and not -1: C leaves x/0 and INT_MIN/-1 undefined


@dataclass
class Program:
    """IR text plus the inputs to run its `@main` with."""

    text: str
    inputs: list[np.ndarray] = field(default_factory=list)

    def parse(self) -> ModuleOp:
        return Parser(make_context(), self.text).parse_module()


# ── values ───────────────────────────────────────────────────────────────────


def int_edges(dtype: str) -> tuple[int, ...]:
    if dtype == "i1":
        return (0, 1)
    info = np.iinfo(NP[dtype])
    return (0, 1, -1, 2, 3, 7, int(info.max), int(info.min)) if info.min < 0 else (
        0, 1, 2, 3, 7, int(info.max))


def scalars(dtype: str) -> st.SearchStrategy[float | int]:
    """Edge values mostly, any representable value sometimes."""
    if dtype in FLOATS or dtype == "f16":
        width = 16 if dtype == "f16" else 32
        anything = st.floats(width=width, allow_nan=True, allow_infinity=True)
        with np.errstate(over="ignore"):  # 1e30 is inf in f16
            edges = [float(NP[dtype](v)) for v in FLOAT_EDGES]
        return st.one_of(st.sampled_from(edges), anything)
    info = np.iinfo(NP[dtype])
    return st.one_of(st.sampled_from(int_edges(dtype)),
                     st.integers(int(info.min), int(info.max)))


def number(value: float | int) -> str:
    return format_number(value)


def arrays(draw: Draw, dtype: str, shape: Sequence[int]) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    values = draw(st.lists(scalars(dtype), min_size=n, max_size=n))
    return np.array(values, dtype=NP[dtype]).reshape(shape)


# ── comparing results ────────────────────────────────────────────────────────


def assert_same(before: Sequence[np.ndarray], after: Sequence[np.ndarray]) -> None:
    """Equal dtypes, shapes and bits, except that any NaN equals any NaN."""
    assert len(before) == len(after)
    for n, (b, a) in enumerate(zip(before, after, strict=True)):
        b, a = np.asarray(b), np.asarray(a)
        assert b.dtype == a.dtype and b.shape == a.shape, (n, b.dtype, a.dtype, b.shape, a.shape)
        if b.dtype.kind == "f":
            nan_b, nan_a = np.isnan(b), np.isnan(a)
            assert np.array_equal(nan_b, nan_a), (n, b, a)
            bits = b.dtype.itemsize * 8
            view = {16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
            assert np.array_equal(b[~nan_b].view(view), a[~nan_a].view(view)), (n, b, a)
        else:
            assert np.array_equal(b, a), (n, b, a)


def round_trip(module: ModuleOp) -> None:
    """Printing, parsing and printing again gives the same text."""
    text = str(module)
    assert str(Parser(make_context(), text).parse_module()) == text


# ── elementwise ops, as tensors (stage 1) or scalars (stages 3-4) ────────────


def ttype(dtype: str, shape: Sequence[int] | None) -> str:
    """`tensor<2x3xf32>`, or the scalar type when `shape` is None."""
    return dtype if shape is None else f"tensor<{''.join(f'{d}x' for d in shape)}{dtype}>"


def int_list(values: Sequence[int]) -> str:
    return f"array<i64{': ' if values else ''}{', '.join(map(str, values))}>"


@dataclass
class Value:
    name: str
    dtype: str
    shape: tuple[int, ...] | None

    @property
    def type(self) -> str:
        return ttype(self.dtype, self.shape)


def family_of(dtype: str) -> str:
    return "b" if dtype == "i1" else "x" if dtype == "index" else dtype[0]


class ElementwiseBuilder:
    """Appends random elementwise ops (`pg_tensor` or, for scalars, `pg_uop`) to a body."""

    UNARY = {"f": ("neg", "exp", "log", "sqrt", "sin", "recip"), "i": ("neg", "not"),
             "u": ("neg", "not"), "b": ("not",), "x": ("neg",)}
    BINARY = {"f": ("add", "sub", "mul", "div", "max", "min"),
              "i": ("add", "sub", "mul", "div", "mod", "max", "min", "and", "or", "xor"),
              "b": ("and", "or", "xor", "max", "min"),
              "x": ("add", "sub", "mul", "div", "mod", "max", "min")}
    BINARY["u"] = BINARY["i"]
    CAST_TO = ("f32", "f64", "f16", "i32", "i8", "ui8", "i64", "i1")

    def __init__(self, draw: Draw, dialect: str, indent: str = "  "):
        self.draw, self.dialect, self.indent = draw, dialect, indent
        self.lines: list[str] = []
        self.values: list[Value] = []

    def emit(self, text: str, dtype: str, shape: tuple[int, ...] | None) -> Value:
        value = Value(f"%v{len(self.lines)}", dtype, shape)
        self.lines.append(f"{self.indent}{value.name} = {text}")
        self.values.append(value)
        return value

    def pick(self, like: Value) -> Value:
        """A recent value of `like`'s type (chains make rewrite chances), or a new constant."""
        pool = [v for v in self.values if v.type == like.type]
        if not pool or self.draw(st.integers(0, 3)) == 0:
            return self.const(like.dtype, like.shape)
        return pool[-1 - self.draw(st.integers(0, min(len(pool) - 1, 3)))]

    def recent(self) -> Value:
        return self.values[-1 - self.draw(st.integers(0, min(len(self.values) - 1, 3)))]

    def const(self, dtype: str, shape: tuple[int, ...] | None) -> Value:
        strategy = (st.sampled_from((0, 1)) if dtype == "i1" else
                    st.sampled_from((0, 1, 2, 3, 4, 8)) if dtype == "index" else scalars(dtype))
        text = f"{self.dialect}.const {number(self.draw(strategy))} : {ttype(dtype, shape)}"
        return self.emit(text, dtype, shape)

    def elementwise(self, x: Value) -> None:
        op = self.draw(st.sampled_from(("unary", "binary", "binary", "cmp", "where", "cast")))
        getattr(self, op)(x)

    def unary(self, x: Value) -> None:
        k = self.draw(st.sampled_from(self.UNARY[family_of(x.dtype)]))
        self.emit(f"{self.dialect}.unary {k} {x.name} : {x.type}", x.dtype, x.shape)

    def binary(self, x: Value) -> None:
        family = family_of(x.dtype)
        k = self.draw(st.sampled_from(self.BINARY[family]))
        if family in "iux" and k in ("div", "mod"):  # a constant divisor: never 0 or -1
            divisors = DIVISORS if family == "i" else (1, 2, 3, 7)
            d = number(self.draw(st.sampled_from(divisors)))
            y = self.emit(f"{self.dialect}.const {d} : {x.type}", x.dtype, x.shape)
            a, b = x, y
        else:
            y = self.pick(x)
            a, b = (x, y) if self.draw(st.booleans()) else (y, x)
        self.emit(f"{self.dialect}.binary {k} {a.name}, {b.name} : {x.type}", x.dtype, x.shape)

    def cmp(self, x: Value) -> None:
        k = self.draw(st.sampled_from(("lt", "le", "gt", "ge", "eq", "ne")))
        y = self.pick(x)
        types = x.type if x.shape is None else f"{x.type} -> {ttype('i1', x.shape)}"
        self.emit(f"{self.dialect}.cmp {k} {x.name}, {y.name} : {types}", "i1", x.shape)

    def where(self, x: Value) -> None:
        cond = self.pick(Value("", "i1", x.shape))
        y = self.pick(x)
        a, b = (x, y) if self.draw(st.booleans()) else (y, x)
        types = x.type if x.shape is None else f"{cond.type}, {x.type}"
        self.emit(f"{self.dialect}.where {cond.name}, {a.name}, {b.name} : {types}",
                  x.dtype, x.shape)

    def cast(self, x: Value) -> None:
        dtype = self.draw(st.sampled_from(self.CAST_TO))
        self.emit(f"{self.dialect}.cast {x.name} : {x.type} to {ttype(dtype, x.shape)}",
                  dtype, x.shape)
