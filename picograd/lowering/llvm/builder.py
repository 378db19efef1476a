"""What the LLVM lowering builds a kernel with: one interface, two ways to build.

    LlvmBuilder                the interface the kernel lowering calls (this module)
    XdslBuilder                xDSL `llvm` dialect ops: the target stage that opt-tool, PG_DUMP,
                               DEBUG>=2 and the filecheck tests see (`xdsl_builder.py`)
    TextBuilder                LLVM IR text, the same text that the xDSL ops print as through
                               `printer.py` (`text_builder.py`): what realize() compiles

`convert_uop_to_llvm._KernelLowering`, `alu.py` and `math.py` decide every instruction once,
against this interface, so both builders make the same kernel. Each method appends one
instruction at the insertion point (`position`) and returns its value; a value is opaque to
the lowering but for its type (`type_of`, an xDSL type: the lowering reasons in picograd's
types) and, for a constant, its number (`constant_value`).

Placement follows the xDSL lowering's rules, which the LLVM text reproduces:

* constants (`constant`) are made once per function (key: value bits and type) and, with
  every op given `hoist=True` (the splats of constants), sit at the top of the entry block
  in the order they were made;
* `allocas()` marks the spot for the accumulators' stack slots (after the hoisted ops, before
  the entry block's other ops) and `alloca` adds one there, after the previous one;
* blocks are made with `new_block`, placed after the existing ones by `add_block`, and
  `position` moves the insertion point to the end of one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from xdsl.ir import Attribute

# A value or block of one builder: an xDSL SSAValue / Block, or the text builder's records.
Value = Any
BlockRef = Any

# `binary` operation names: LLVM's instruction names.
INT_BINARY = ("add", "sub", "mul", "sdiv", "udiv", "srem", "urem", "shl", "ashr", "lshr",
              "and", "or", "xor")
FLOAT_BINARY = ("fadd", "fsub", "fmul", "fdiv")
# `cast` operation names
CASTS = ("trunc", "zext", "sext", "sitofp", "fpext", "fptrunc", "bitcast")


class LlvmBuilder(ABC):
    """Builds one LLVM function (a kernel) instruction by instruction; see the module
    docstring for the placement rules. `finish` returns the function."""

    def __init__(self) -> None:
        self._constants: dict[tuple[Attribute, str], Value] = {}
        self.constant_values: set[int] = set()  # id() of the hoisted constants
        self.splats: dict[tuple[int, int], Value] = {}  # (id of a constant, lanes) -> splat

    # ── values ──────────────────────────────────────────────────────────────

    @property
    @abstractmethod
    def args(self) -> Sequence[Value]:
        """The function's arguments: one pointer per buffer, then `start` and `end`."""

    @abstractmethod
    def type_of(self, value: Value) -> Attribute:
        """The xDSL type of `value` (an LLVM type: `i64`, `f32`, `vector<8xf32>`, ...)."""

    @abstractmethod
    def constant_value(self, value: Value) -> int | float | None:
        """The number `value` is, when it is a constant; else None."""

    def constant(self, number: float | int, t: Attribute) -> Value:
        """The scalar constant `number` of LLVM type `t`, made once per function."""
        key = (t, number.hex() if isinstance(number, float) else str(number))  # -0.0 != 0.0
        known = self._constants.get(key)
        if known is None:
            known = self._constants[key] = self._new_constant(number, t)
            self.constant_values.add(id(known))
        return known

    @abstractmethod
    def _new_constant(self, number: float | int, t: Attribute) -> Value:
        """A constant, hoisted to the top of the entry block."""

    # ── instructions ────────────────────────────────────────────────────────

    @abstractmethod
    def binary(self, name: str, a: Value, b: Value, no_wrap: bool = False) -> Value:
        """`name` of `INT_BINARY` / `FLOAT_BINARY`; `no_wrap`: `add nsw nuw`."""

    @abstractmethod
    def fneg(self, x: Value) -> Value: ...

    @abstractmethod
    def icmp(self, predicate: str, a: Value, b: Value) -> Value:
        """`predicate` by name: "eq", "ne", "slt", "ult", ..."""

    @abstractmethod
    def fcmp(self, predicate: str, a: Value, b: Value) -> Value:
        """`predicate` by name: "olt", "une", "uno", ..."""

    @abstractmethod
    def select(self, condition: Value, a: Value, b: Value) -> Value: ...

    @abstractmethod
    def cast(self, name: str, x: Value, t: Attribute) -> Value:
        """`name` of `CASTS`, to LLVM type `t`."""

    @abstractmethod
    def intrinsic(self, name: str, args: Sequence[Value], result: Attribute) -> Value:
        """A call of the LLVM intrinsic `name` (`llvm.maximum.f32`) returning `result`."""

    @abstractmethod
    def call(self, name: str, args: Sequence[Value], result: Attribute) -> Value:
        """A call of the module's function `name` (a vector select helper)."""

    @abstractmethod
    def fma(self, a: Value, b: Value, c: Value) -> Value:
        """`a * b + c`, rounded once (`llvm.fma`)."""

    @abstractmethod
    def vector_reduce(self, name: str, start: Value, vector: Value) -> Value:
        """`llvm.vector.reduce.fadd` / `fmul` ("fadd", "fmul") of `vector` from `start`."""

    @abstractmethod
    def undef(self, t: Attribute, hoist: bool = False) -> Value: ...

    @abstractmethod
    def insert_element(self, vector: Value, x: Value, index: Value, hoist: bool = False
                       ) -> Value: ...

    @abstractmethod
    def shuffle_vector(self, a: Value, b: Value, mask: Sequence[int], t: Attribute,
                       hoist: bool = False) -> Value: ...

    @abstractmethod
    def gep(self, pointer: Value, index: Value, element: Attribute) -> Value:
        """`getelementptr inbounds element, pointer, index`."""

    @abstractmethod
    def load(self, pointer: Value, t: Attribute, alignment: int | None = None) -> Value: ...

    @abstractmethod
    def store(self, value: Value, pointer: Value, alignment: int | None = None) -> None: ...

    @abstractmethod
    def allocas(self) -> None:
        """Mark here (the entry block, before its first op) as where `alloca` puts slots."""

    @abstractmethod
    def alloca(self, t: Attribute, alignment: int) -> Value:
        """A stack slot of one `t`, after the previous one (see `allocas`)."""

    # ── control flow ────────────────────────────────────────────────────────

    @abstractmethod
    def new_block(self, with_argument: bool) -> BlockRef:
        """A block not yet placed; `with_argument`: it takes one `i64` (a phi)."""

    @abstractmethod
    def block_argument(self, block: BlockRef) -> Value: ...

    @abstractmethod
    def add_block(self, block: BlockRef) -> None:
        """Place `block` after the function's blocks."""

    @abstractmethod
    def position(self, block: BlockRef) -> None:
        """Append the next instructions to `block`."""

    @abstractmethod
    def br(self, block: BlockRef, args: Sequence[Value] = ()) -> None: ...

    @abstractmethod
    def cond_br(self, condition: Value, then: BlockRef, then_args: Sequence[Value],
                else_: BlockRef, else_args: Sequence[Value]) -> None: ...

    @abstractmethod
    def ret(self) -> None: ...

    def name(self, value: Value, hint: str | None) -> None:  # noqa: B027
        """Give `value` the readable name `hint` of the input IR where it has none (xDSL
        keeps them; LLVM text numbers every value)."""
