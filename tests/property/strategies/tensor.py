"""Stage 1: random pg_tensor graphs (elementwise ops, views, reductions, gathers)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from strategies.base import (
    FLOATS,
    INTS,
    Draw,
    ElementwiseBuilder,
    Program,
    Value,
    arrays,
    int_list,
    number,
    scalars,
    ttype,
)

# ── stage 1: pg_tensor ───────────────────────────────────────────────────────


class _TensorBuilder(ElementwiseBuilder):
    """Adds views and reductions to the elementwise ops."""

    def __init__(self, draw: Draw):
        super().__init__(draw, "pg_tensor")

    def step(self) -> None:
        x = self.recent()
        what = self.draw(st.sampled_from(("elementwise", "elementwise", "view", "reduce",
                                          "gather", "scatter_add")))
        getattr(self, what)(x)

    def gather(self, x: Value) -> None:
        """A gather from `x` along a random axis (see `_index`)."""
        axis, index = self._index(x)
        self.emit(f"pg_tensor.gather {x.name}[{index.name}] {{axis = {axis} : i64}} : "
                  f"{x.type}, {index.type} -> {x.type}", x.dtype, x.shape)

    def scatter_add(self, x: Value) -> None:
        """A recent value of `x`'s type added into `x` along a random axis (see `_index`);
        a bool `x` is gathered from instead."""
        if x.dtype == "i1":
            self.gather(x)
            return
        axis, index = self._index(x)
        src = self.pick(x)
        self.emit(f"pg_tensor.scatter_add {x.name}[{index.name}], {src.name} {{axis = {axis} "
                  f": i64}} : {x.type}, {index.type}, {src.type}", x.dtype, x.shape)

    def _index(self, x: Value) -> tuple[int, Value]:
        """A random axis of `x` and an index of `x`'s shape along it: an iota (in range;
        flipped or not: a permutation), or `x`'s own values cast to i32 (mostly out of range,
        which selects 0 or adds nowhere)."""
        shape = x.shape
        assert shape is not None
        axis = self.draw(st.integers(0, len(shape) - 1))
        how = self.draw(st.sampled_from(("iota", "flipped", "values")))
        if how == "values":
            index = x if x.dtype == "i32" else self.emit(
                f"pg_tensor.cast {x.name} : {x.type} to {ttype('i32', shape)}", "i32", shape)
        else:
            index = self.emit(f"pg_tensor.iota {{axis = {axis} : i64}} : "
                              f"{ttype('i32', shape)}", "i32", shape)
            if how == "flipped":
                index = self.emit(f"pg_tensor.flip {index.name} {{axes = {int_list([axis])}}} "
                                  f": {index.type}", "i32", shape)
        return axis, index

    def reduce(self, x: Value) -> None:
        assert x.shape is not None
        axes = sorted(self.draw(st.sets(st.sampled_from(range(len(x.shape))), min_size=1)))
        kinds = ("max", "min") if x.dtype == "i1" else ("sum", "max", "min", "prod")
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        self.emit(f"pg_tensor.reduce {self.draw(st.sampled_from(kinds))} {x.name} "
                  f"{{axes = {int_list(axes)}}} : {x.type} -> {ttype(x.dtype, shape)}",
                  x.dtype, shape)

    def view(self, x: Value) -> None:
        shape = x.shape
        assert shape is not None
        choice = self.draw(st.sampled_from(("reshape", "permute", "expand", "flip", "pad",
                                            "slice")))
        if choice in ("reshape", "expand"):
            new = (self.draw(st.sampled_from(_reshapes(shape))) if choice == "reshape" else
                   tuple(self.draw(st.sampled_from((1, 2, 3))) if d == 1 else d for d in shape))
            self.emit(f"pg_tensor.{choice} {x.name} : {x.type} -> {ttype(x.dtype, new)}",
                      x.dtype, new)
        elif choice == "permute":
            perm = self.draw(st.permutations(range(len(shape))))
            new = tuple(shape[p] for p in perm)
            self.emit(f"pg_tensor.permute {x.name} {{perm = {int_list(perm)}}} : {x.type} -> "
                      f"{ttype(x.dtype, new)}", x.dtype, new)
        elif choice == "flip":
            axes = sorted(self.draw(st.sets(st.sampled_from(range(len(shape))))))
            self.emit(f"pg_tensor.flip {x.name} {{axes = {int_list(axes)}}} : {x.type}",
                      x.dtype, shape)
        else:
            getattr(self, choice)(x, shape)

    def pad(self, x: Value, shape: tuple[int, ...]) -> None:
        low = [self.draw(st.integers(0, 1)) for _ in shape]
        high = [self.draw(st.integers(0, 1)) for _ in shape]
        value = self.draw(scalars(x.dtype)) if x.dtype != "i1" else 0
        new = tuple(d + lo + hi for d, lo, hi in zip(shape, low, high, strict=True))
        self.emit(f"pg_tensor.pad {x.name} low {low} high {high} value {number(value)} : "
                  f"{x.type} -> {ttype(x.dtype, new)}", x.dtype, new)

    def slice(self, x: Value, shape: tuple[int, ...]) -> None:
        start = [self.draw(st.integers(0, d - 1)) for d in shape]
        step = [self.draw(st.integers(1, 2)) for _ in shape]
        new = tuple(self.draw(st.integers(1, (d - 1 - s) // k + 1))
                    for d, s, k in zip(shape, start, step, strict=True))
        self.emit(f"pg_tensor.slice {x.name} {{start = {int_list(start)}, step = "
                  f"{int_list(step)}}} : {x.type} -> {ttype(x.dtype, new)}", x.dtype, new)


def _reshapes(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    n = int(np.prod(shape))
    return [(n,), shape, (*shape, 1), (1, *shape)] + [(a, n // a) for a in range(2, n)
                                                      if n % a == 0]


SHAPES = ((4,), (2, 3), (3, 1), (1, 2, 2), (2, 1, 3), (1,))


@st.composite
def tensor_programs(draw: Draw, max_ops: int = 8) -> Program:
    """`func.func @main` over 1-2 tensor inputs: random elementwise, view and reduce ops."""
    dtype = draw(st.sampled_from((*FLOATS, *INTS, "f32", "i32")))
    shape = draw(st.sampled_from(SHAPES))
    b = _TensorBuilder(draw)
    args = [Value(f"%in{i}", dtype, shape) for i in range(draw(st.integers(1, 2)))]
    b.values.extend(args)
    for _ in range(draw(st.integers(1, max_ops))):
        b.step()
    results = b.values[-2:] if len(b.values) > 2 and draw(st.booleans()) else b.values[-1:]
    params = ", ".join(f"{a.name}: {a.type}" for a in args)
    types = ", ".join(r.type for r in results)
    text = "\n".join([
        f"func.func @main({params}) -> ({types}) {{", *b.lines,
        f"  func.return {', '.join(r.name for r in results)} : {types}", "}"])
    return Program(text, [arrays(draw, dtype, shape) for _ in args])
