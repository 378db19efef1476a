"""Symbolic integers: values that change every call (a decode position) without a recompile.

    pos = pg.Variable("pos", 0, 511)        a name and the inclusive range of its values
    p = pos.bind(17)                        a SymbolicInt: the variable with this call's value
    p + 1, 3 + p, p - 2                     SymbolicInts too (the variable plus an offset)
    x + p, arange(n) <= p                   a 0-d int32 operand, as a python int would be
    cache[:, :, p], cache[:, :, p:p + 4]    indexing at the variable's position (gather)
    cache[:, :, p:p + 4] = k                writing there (index_copy)

A bound variable enters a realize graph as a leaf of its own, the lazy op "var" (arg: the
`Variable`), that holds the bound value as a 0-d int32 array. The realize cache key holds the
variable (name and range), never the value, so every value compiles to the same Program; the
value reaches the kernels as an integer argument (a one-element int32 buffer, like any
other input, so no target's ABI changed), `@main`'s argument is named after the variable in
the IR, and `DEBUG=2` prints the values each run was given. `picograd.jit` takes bound
variables as arguments and replays with the new values.

What a variable cannot be: a size. Shapes stay static in every dialect, so a slice between
two positions of one variable (`p:p + 4`) has a static length, and a slice that ends at a
variable (`:p`) is refused; attend over a cache of the maximum length with the mask
`arange(max_len) <= p` instead (docs/design.md, "Symbolic positions"). The range makes
indexing safe whatever the value: an index whose range does not lie inside its dim raises
IndexRangeError at the line that indexes, before anything runs.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from picograd.frontend.dtype import int32
from picograd.frontend.lazy import LazyOp, index_error

__all__ = ["SymbolicInt", "Variable"]

_INT32 = (-2 ** 31, 2 ** 31 - 1)


@dataclass(frozen=True)
class Variable:
    """An integer known only by its range `[min, max]` (inclusive) at compile time."""

    name: str
    min: int
    max: int

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"Variable: the name must be an identifier, got {self.name!r}")
        for bound in (self.min, self.max):
            if bound.__class__ is not int or not _INT32[0] <= bound <= _INT32[1]:
                raise ValueError(f"Variable {self.name!r}: bounds must be int32 ints, got "
                                 f"[{self.min!r}, {self.max!r}]")
        if self.min > self.max:
            raise ValueError(f"Variable {self.name!r}: empty range [{self.min}, {self.max}]")

    def bind(self, value: int) -> SymbolicInt:
        """This variable holding `value` for one call; a value outside the range raises
        IndexRangeError (it would break every index the range was checked for)."""
        if value.__class__ is not int:
            raise TypeError(f"Variable {self.name!r}: bind takes an int, got "
                            f"{type(value).__name__}")
        if not self.min <= value <= self.max:
            raise index_error("bind", f"{value} is outside the range [{self.min}, {self.max}] "
                                      f"of variable {self.name!r}")
        return SymbolicInt(self, 0, value)

    def __repr__(self) -> str:
        return f"Variable({self.name!r}, {self.min}, {self.max})"

    def __str__(self) -> str:  # how DEBUG and VIZ name it
        return f"{self.name} in [{self.min}, {self.max}]"


@dataclass(frozen=True)
class SymbolicInt:
    """`variable + offset` with this call's value of the variable: behaves as that int does
    in tensor arithmetic and indexing, but the compiled code reads the value at run time.
    It is not an int (`int(p)` raises): a value turned into a constant would recompile."""

    variable: Variable
    offset: int
    bound: int  # the variable's value, without the offset

    @property
    def value(self) -> int:
        return self.bound + self.offset

    @property
    def min(self) -> int:
        return self.variable.min + self.offset

    @property
    def max(self) -> int:
        return self.variable.max + self.offset

    def __add__(self, other: object) -> SymbolicInt:
        if other.__class__ is not int:
            return NotImplemented
        return SymbolicInt(self.variable, self.offset + other, self.bound)  # type: ignore[operator]

    __radd__ = __add__

    def __sub__(self, other: object) -> SymbolicInt:
        if other.__class__ is not int:
            return NotImplemented
        return SymbolicInt(self.variable, self.offset - other, self.bound)  # type: ignore[operator]

    def __int__(self) -> int:
        raise TypeError(f"{self!r} is symbolic: int() would make its value a constant of the "
                        "compiled code; use .value to read it on the host")

    __index__ = __int__

    def __bool__(self) -> bool:
        raise TypeError(f"{self!r} is symbolic: it has no truth value at compile time")

    def __repr__(self) -> str:
        name = self.variable.name
        term = name if not self.offset else f"{name} {'+-'[self.offset < 0]} {abs(self.offset)}"
        return f"<{term} = {self.value}>"

    def node(self, device: str) -> LazyOp:
        """The 0-d int32 leaf holding the variable's value (without the offset): one per
        variable, value and device while it is in use, so a graph that reads the variable
        in several places passes it to its kernels once."""
        key = (self.variable, self.bound, device)
        node = _LEAVES.get(key)
        if node is None:
            node = _LEAVES[key] = LazyOp.variable(self.variable, self.bound, int32, device)
        return node


    def check_inside(self, op: str, size: int, length: int = 1) -> None:
        """IndexRangeError unless positions `[self, self + length)` lie in `[0, size)` for
        every value in the variable's range."""
        if self.min < 0 or self.max + length > size:
            raise index_error(op, f"positions {self.min}..{self.max + length - 1} of "
                                  f"{self!r} (variable {self.variable.name!r} in "
                                  f"[{self.variable.min}, {self.variable.max}]) do not all lie "
                                  f"in a dim of size {size}")


_LEAVES: weakref.WeakValueDictionary[tuple[Variable, int, str], LazyOp] = (
    weakref.WeakValueDictionary())
