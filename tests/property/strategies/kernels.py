"""Stages 3 and 4: random pg_loop index expressions and flat pg_uop ALU kernels."""

from __future__ import annotations

from collections.abc import Sequence

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
    number,
    scalars,
)

# ── stage 3: pg_loop index expressions ───────────────────────────────────────


class _IndexBuilder:
    """Random `pg_loop.index` expressions over loop variables, with rewrite-shaped chains."""

    KINDS = ("add", "sub", "mul", "div", "mod", "max", "min")
    CONSTS = (0, 1, 2, 3, 4, 8)

    def __init__(self, draw: Draw, loop_vars: Sequence[str], indent: str):
        self.draw, self.indent = draw, indent
        self.lines: list[str] = []
        self.values: list[str] = list(loop_vars)

    def emit(self, text: str, prefix: str = "%x") -> str:
        name = f"{prefix}{len(self.lines)}"
        self.lines.append(f"{self.indent}{name} = {text}")
        if prefix == "%x":
            self.values.append(name)
        return name

    def const(self, value: int | None = None) -> str:
        value = self.draw(st.sampled_from(self.CONSTS)) if value is None else value
        return self.emit(f"pg_loop.const {value}")

    def operand(self) -> str:
        if self.draw(st.integers(0, 3)) == 0:
            return self.const()
        return self.values[-1 - self.draw(st.integers(0, min(len(self.values) - 1, 4)))]

    def step(self) -> str:
        if self.draw(st.integers(0, 5)) == 0:  # the pieces of a split index added back
            return self.recombined()
        if self.draw(st.integers(0, 3)) == 0:  # (x + y*c) // c or % c: the split-index shape
            x, y, c = self.operand(), self.operand(), self.draw(st.sampled_from((2, 3, 4)))
            cv = self.const(c)
            s = self.emit(f"pg_loop.index add {x}, {self.emit(f'pg_loop.index mul {y}, {cv}')}")
            return self.emit(f"pg_loop.index {self.draw(st.sampled_from(('div', 'mod')))} "
                             f"{s}, {self.const(c)}")
        if self.draw(st.integers(0, 5)) == 0:  # (y*a + x%a) // (a*m) or % (a*m): whole rows
            x, y, a = self.operand(), self.operand(), self.draw(st.sampled_from((2, 3, 4)))
            low = self.emit(f"pg_loop.index mod {x}, {self.const(a)}")
            row = self.emit(f"pg_loop.index mul {y}, {self.const(a)}")
            s = self.emit(f"pg_loop.index add {row}, {low}")
            c = a * self.draw(st.sampled_from((1, 2, 3)))
            return self.emit(f"pg_loop.index {self.draw(st.sampled_from(('div', 'mod')))} "
                             f"{s}, {self.const(c)}")
        kind = self.draw(st.sampled_from(self.KINDS))
        lhs = self.operand()
        rhs = self.const(self.draw(st.sampled_from((1, 2, 3, 4, 8)))) if kind in (
            "div", "mod") else self.operand()
        return self.emit(f"pg_loop.index {kind} {lhs}, {rhs}")

    def recombined(self) -> str:
        """`y + (x//a)*a + x%a` or `y + ((x//a)%b)*a + x%a` (`y` sometimes left out): what
        a reshape of a reshape builds; or both pieces scaled, `y + (x//a)*c + (x%a)*d`
        (c = a*d: a flattened grid of rows of length d; or c = a*d -+ 1)."""
        x, a = self.operand(), self.draw(st.sampled_from((2, 3, 4)))
        if self.draw(st.integers(0, 2)) == 0:
            d = self.draw(st.sampled_from((2, 3, 8)))
            off = 0 if self.draw(st.integers(0, 3)) else self.draw(st.sampled_from((-1, 1)))
            c = a * d + off
            ca = self.const(a)
            high = self.emit(f"pg_loop.index mul {self.emit(f'pg_loop.index div {x}, {ca}')}, "
                             f"{self.const(c)}")
            if self.draw(st.booleans()):
                high = self.emit(f"pg_loop.index add {self.operand()}, {high}")
            low = self.emit(f"pg_loop.index mul {self.emit(f'pg_loop.index mod {x}, {ca}')}, "
                            f"{self.const(d)}")
            return self.emit(f"pg_loop.index add {high}, {low}")
        ca = self.const(a)
        high = self.emit(f"pg_loop.index div {x}, {ca}")
        if self.draw(st.booleans()):
            b = self.const(self.draw(st.sampled_from((2, 3))))
            high = self.emit(f"pg_loop.index mod {high}, {b}")
        total = self.emit(f"pg_loop.index mul {high}, {ca}")
        if self.draw(st.booleans()):
            total = self.emit(f"pg_loop.index add {self.operand()}, {total}")
        return self.emit(f"pg_loop.index add {total}, {self.emit(f'pg_loop.index mod {x}, {ca}')}")

    def cmp(self, x: str) -> str:
        kind = self.draw(st.sampled_from(("lt", "le", "gt", "ge", "eq", "ne")))
        return self.emit(f"pg_loop.cmp {kind} {x}, {self.operand()}", "%m")


def _main(inputs: Sequence[str], outputs: Sequence[str]) -> list[str]:
    """`func.func @main` launching `@k0(inputs..., outputs...)` on fresh output buffers."""
    params = ", ".join(f"%in{i}: {t}" for i, t in enumerate(inputs))
    allocs = [f"  %out{i} = pg_sched.alloc : {t}" for i, t in enumerate(outputs)]
    args = [f"%in{i}" for i in range(len(inputs))] + [f"%out{i}" for i in range(len(outputs))]
    outs = ", ".join(f"%out{i}" for i in range(len(outputs)))
    return [f"func.func @main({params}) -> ({', '.join(outputs)}) {{", *allocs,
            f"  pg_sched.launch @k0({', '.join(args)}) : {', '.join([*inputs, *outputs])}",
            f"  func.return {outs} : {', '.join(outputs)}", "}"]


@st.composite
def loop_programs(draw: Draw, max_ops: int = 8) -> Program:
    """A `pg_loop.kernel` over 1-2 nested ranges that stores a random index expression (as
    i64) and a masked load at that expression (clamped into the buffer), per iteration."""
    sizes = [draw(st.integers(1, 5)) for _ in range(draw(st.integers(1, 2)))]
    n, m = int(np.prod(sizes)), draw(st.integers(1, 6))
    reduce = draw(st.booleans())
    depth = len(sizes) + reduce
    b = _IndexBuilder(draw, [f"%r{i}" for i in range(depth)], "  " * (depth + 1))
    for _ in range(draw(st.integers(1, max_ops))):
        b.step()
    e, f = b.values[-1], b.operand()
    mask = b.cmp(f)
    if draw(st.booleans()):
        mask = b.emit(f"pg_loop.and {mask}, {b.cmp(b.operand())}", "%m")
    low = b.emit(f"pg_loop.index max {f}, {b.const(0)}")
    safe = b.emit(f"pg_loop.index min {low}, {b.const(m - 1)}")
    other = number(draw(scalars("f32")))
    ind = b.indent
    body = [*b.lines, f"{ind}%e = pg_uop.cast {e} : index to i64",
            f"{ind}%v = pg_loop.load %in0[{safe}] if {mask} else {other} : "
            f"!pg.buffer<{m}xf32> -> f32"]
    pos = " ".join(f"%r{i}" for i in range(len(sizes)))
    lines = [f"pg_loop.kernel @k0(%in0: !pg.buffer<{m}xf32>, %out0: !pg.buffer<{n}xi64>, "
             f"%out1: !pg.buffer<{n}xf32>) {{"]
    for i, size in enumerate(sizes):
        lines.append(f"{'  ' * (i + 1)}pg_loop.range %r{i} = 0 to {size} "
                     f"{'global' if i == 0 else 'loop'} {{")
    pad = "  " * (len(sizes) + 1)
    lines += _flat_index(sizes, pad)
    if reduce:
        lines.append(f"{pad}%sum = pg_loop.reduce sum %r{len(sizes)} = 0 to "
                     f"{draw(st.integers(1, 4))} : i64 {{")
        lines += [*body[:-1], f"{ind}pg_loop.yield %e : i64", f"{pad}}}",
                  f"{pad}pg_loop.store %sum, %out0[%pos] : i64, !pg.buffer<{n}xi64>"]
        lines.append(f"{pad}%z = pg_uop.const 0.0 : f32")
        lines.append(f"{pad}pg_loop.store %z, %out1[%pos] : f32, !pg.buffer<{n}xf32>")
    else:
        lines += [*body, f"{ind}pg_loop.store %e, %out0[%pos] : i64, !pg.buffer<{n}xi64>",
                  f"{ind}pg_loop.store %v, %out1[%pos] : f32, !pg.buffer<{n}xf32>"]
    lines += [f"{'  ' * (i + 1)}}}" for i in reversed(range(len(sizes)))] + ["}"]
    del pos
    text = "\n".join(lines + _main([f"!pg.buffer<{m}xf32>"],
                                   [f"!pg.buffer<{n}xi64>", f"!pg.buffer<{n}xf32>"]))
    return Program(text, [arrays(draw, "f32", (m,))])


def _flat_index(sizes: Sequence[int], pad: str) -> list[str]:
    """`%pos = r0 * size1 + r1`: the row-major position of the current iteration."""
    if len(sizes) == 1:
        return [f"{pad}%pos = pg_loop.index add %r0, %r0z", f"{pad}%r0z = pg_loop.const 0"][::-1]
    return [f"{pad}%sz = pg_loop.const {sizes[1]}", f"{pad}%row = pg_loop.index mul %r0, %sz",
            f"{pad}%pos = pg_loop.index add %row, %r1"]


# ── stage 4: a flat pg_uop kernel ────────────────────────────────────────────


@st.composite
def uop_programs(draw: Draw, max_ops: int = 10) -> Program:
    """A `pg_uop.kernel` looping over n elements of 1-2 inputs, storing a random scalar
    expression of the loaded values, of index math on the loop variable, and constants."""
    dtype = draw(st.sampled_from((*FLOATS, *INTS, "f32", "i32")))
    n = draw(st.integers(1, 4))
    b = ElementwiseBuilder(draw, "pg_uop")
    n_inputs = draw(st.integers(1, 2))
    b.values.append(Value("%i", "index", None))
    for k in range(n_inputs):
        b.emit(f"pg_uop.load %in{k}[%i] : !pg.buffer<{n}x{dtype}> -> {dtype}", dtype, None)
    for _ in range(draw(st.integers(1, max_ops))):
        b.elementwise(b.recent())
    result = b.values[-1]
    if result.dtype == "index":
        result = b.emit(f"pg_uop.cast {result.name} : index to i64", "i64", None)
    inputs = [f"!pg.buffer<{n}x{dtype}>"] * n_inputs
    out = f"!pg.buffer<{n}x{result.dtype}>"
    params = ", ".join(f"%in{k}: {t}" for k, t in enumerate(inputs))
    lines = [f"pg_uop.kernel @k0({params}, %out0: {out}) {{",
             f"  %i = pg_uop.range 0 to {n} global", *b.lines,
             f"  pg_uop.store {result.name}, %out0[%i] : {result.dtype}, {out}",
             "  pg_uop.end %i", "}"]
    text = "\n".join(lines + _main(inputs, [out]))
    return Program(text, [arrays(draw, dtype, (n,)) for _ in inputs])


REDUCE_KINDS = ("sum", "prod", "max", "min")
COMBINES = ("mul", "add", "max")


@st.composite
def reduce_programs(draw: Draw, dtypes: Sequence[str] = ("f32", "i32"),
                    kinds: Sequence[str] = REDUCE_KINDS,
                    combines: Sequence[str] = COMBINES,
                    columns: Sequence[int] = range(1, 10),
                    transposed: Sequence[bool] = (False,), longest: int = 9) -> Program:
    """`out[i0, i1] = red_r f(a[i0, r], b[r, i1])` (or `out[i1] = red_r a[i1, r]` with one
    global range), sometimes plus a second reduce combined in the epilogue; the element
    type, the first reduce's kind, `f` and the number of columns are drawn from the given
    ones (one column: `b` is a vector, read along the reduce like `a`). With `True` among
    `transposed`, `b` may be read as `b[i1, r]` (`x @ w.T`: dot products along the reduce);
    the reduce is 1 to `longest` long."""
    two_d = draw(st.booleans())
    m = draw(st.integers(1, 6)) if two_d else 1
    n, k = draw(st.sampled_from(columns)), draw(st.integers(1, longest))
    b_rows_first = draw(st.sampled_from(transposed))
    dtype = draw(st.sampled_from(dtypes))
    kind, kind2 = draw(st.sampled_from(kinds)), draw(st.sampled_from(REDUCE_KINDS))
    combine = draw(st.sampled_from(combines))
    second = draw(st.booleans())
    a_t, b_t, o_t = (f"!pg.buffer<{m * k}x{dtype}>", f"!pg.buffer<{k * n}x{dtype}>",
                     f"!pg.buffer<{m * n}x{dtype}>")
    row = "%i0" if two_d else "%zero"
    body = [
        f"%s = pg_loop.reduce {kind} %r = 0 to {k} : {dtype} {{",
        f"  %ck = pg_loop.const {k}", f"  %cn = pg_loop.const {n}",
        f"  %ar = pg_loop.index mul {row}, %ck", "  %ai = pg_loop.index add %ar, %r",
        f"  %x = pg_loop.load %a[%ai] : {a_t} -> {dtype}",
        *(("  %br = pg_loop.index mul %i1, %ck", "  %bi = pg_loop.index add %br, %r")
          if b_rows_first else
          ("  %br = pg_loop.index mul %r, %cn", "  %bi = pg_loop.index add %br, %i1")),
        f"  %y = pg_loop.load %b[%bi] : {b_t} -> {dtype}",
        f"  %xy = pg_uop.binary {combine} %x, %y : {dtype}",
        f"  pg_loop.yield %xy : {dtype}", "}",
    ]
    result = "%s"
    if second:
        body += [
            f"%t = pg_loop.reduce {kind2} %q = 0 to {k} : {dtype} {{",
            f"  %ck2 = pg_loop.const {k}", f"  %tr = pg_loop.index mul {row}, %ck2",
            "  %ti = pg_loop.index add %tr, %q",
            f"  %z = pg_loop.load %a[%ti] : {a_t} -> {dtype}",
            f"  pg_loop.yield %z : {dtype}", "}",
            f"%st = pg_uop.binary add %s, %t : {dtype}",
        ]
        result = "%st"
    body += [f"%cn_o = pg_loop.const {n}", f"%or = pg_loop.index mul {row}, %cn_o",
             "%oi = pg_loop.index add %or, %i1",
             f"pg_loop.store {result}, %out[%oi] : {dtype}, {o_t}"]
    inner = [f"pg_loop.range %i1 = 0 to {n} global {{", *("  " + b for b in body), "}"]
    nest = ([f"pg_loop.range %i0 = 0 to {m} global {{", *("  " + b for b in inner), "}"]
            if two_d else ["%zero = pg_loop.const 0", *inner])
    text = "\n".join([
        "builtin.module {",
        f"pg_loop.kernel @k0(%a: {a_t}, %b: {b_t}, %out: {o_t}) {{",
        *("  " + line for line in nest), "}",
        f"func.func @main(%0: {a_t}, %1: {b_t}) -> {o_t} {{",
        f"  %2 = pg_sched.alloc : {o_t}",
        f"  pg_sched.launch @k0(%0, %1, %2) : {a_t}, {b_t}, {o_t}",
        f"  func.return %2 : {o_t}", "}", "}",
    ])
    np_t = np.float32 if dtype == "f32" else np.int32
    values = st.integers(-3, 3) if dtype == "i32" else st.sampled_from(
        (0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.5, np.inf, np.nan))
    a = np.array(draw(st.lists(values, min_size=m * k, max_size=m * k)), dtype=np_t)
    b = np.array(draw(st.lists(values, min_size=k * n, max_size=k * n)), dtype=np_t)
    return Program(text, [a, b])
