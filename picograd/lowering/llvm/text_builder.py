"""`TextBuilder`: a kernel as LLVM IR text, without building xDSL ops (see `builder.py`).

It writes what the xDSL route (`XdslBuilder`, then `printer.py`: xDSL's translation to
llvmlite, printed by llvmlite) writes for the same calls, byte for byte, at a fraction of
the cost: an xDSL op costs tens of microseconds to build and verify and then as much again
to translate, and a training step's graph has thousands (the MLP step's kernels, 4600 llvm
ops: convert-uop-to-llvm + render 1.4 s on the 2-core Xeon, busy; this route 0.1 s).
tests/unit/lowering/test_llvm_text_route.py compares the two routes on a corpus of kernels.

What llvmlite does, and this reproduces:

* values are numbered `%".N"` in one sequence per function: the arguments, the return value,
  the blocks (labels `.N`), the phis of the blocks' arguments (block by block), then every
  instruction in its final place, a `store` or a branch too (those print no name);
* constants are written in place (llvmlite's own `Constant` formatting, so `float 0x0` keeps
  its padding), and so are `undef` vectors; they take no number;
* a module is its header, then its functions and globals joined by blank lines: the vector
  select helpers, the kernels, the intrinsics in the order the kernels first call them, and
  the kernels' `{name}_pg_outer` exports.

Instructions are kept as tuples of text and value records until `finish`, since a value's
number is only known once every block and phi of its function is.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from llvmlite import ir
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, VectorType, i1, i64
from xdsl.ir import Attribute

from picograd.lowering.llvm.builder import LlvmBuilder
from picograd.lowering.llvm.emit import suffix
from picograd.lowering.llvm.vector_select import define_vector_selects

_POINTER = llvm.LLVMPointerType()


@functools.cache
def type_text(t: Attribute) -> str:
    """How llvmlite writes the LLVM type of xDSL type `t` (`float`, `<8 x float>`, `ptr`)."""
    return str(convert_type(t))


@functools.lru_cache(maxsize=4096)
def _constant(number: float | int, key: str, t: Attribute) -> tuple[float | int, str]:
    """(the number as xDSL holds it, llvmlite's text of it) of a constant of type `t`: an
    xDSL integer attribute wraps to the type's width (255 : i8 is -1), and llvmlite writes
    floats as the hex of their double (`0x3ff0000000000000`). `key` tells -0.0 from 0.0."""
    del key  # part of the cache key only
    if isinstance(t, IntegerType):
        held: float | int = IntegerAttr(int(number), t).value.data
    else:
        held = FloatAttr(float(number), t).value.data  # type: ignore[arg-type]
    return held, ir.Constant(convert_type(t), held).get_reference()


@functools.cache
def _undef_text(t: Attribute) -> str:
    return ir.Constant(convert_type(t), ir.Undefined).get_reference()


@functools.lru_cache(maxsize=1024)
def _mask_text(mask: tuple[int, ...]) -> str:
    return (f"<{len(mask)} x i32> "
            + ir.Constant(ir.VectorType(ir.IntType(32), len(mask)), list(mask)).get_reference())


class TextValue:
    """A value: its xDSL type, llvmlite's text of that type, its reference (`%".7"`, a
    constant's text; None until the function is numbered) and a constant's number."""

    __slots__ = ("number", "ref", "text_type", "type")

    def __init__(self, t: Attribute, text_type: str, ref: str | None = None,
                 number: float | int | None = None):
        self.type = t
        self.text_type = text_type
        self.ref = ref
        self.number = number


class TextBlock:
    """A block: its phi (the block argument, when it has one) with its incoming (value,
    block) pairs, and its instructions: (result or None, text parts)."""

    __slots__ = ("incoming", "instructions", "phi", "ref")

    def __init__(self, with_argument: bool):
        self.ref: str | None = None
        self.phi = TextValue(i64, "i64") if with_argument else None
        self.incoming: list[tuple[TextValue, TextBlock]] = []
        self.instructions: list[tuple[TextValue | None, tuple]] = []


def _typed(v: TextValue) -> tuple:
    return (v.text_type, " ", v)


class TextBuilder(LlvmBuilder):
    """Builds one kernel's `define void @name(...)` text; `finish` returns a `TextFunction`."""

    def __init__(self, num_pointers: int):
        super().__init__()
        self.num_pointers = num_pointers
        self._args = [TextValue(_POINTER, "ptr") for _ in range(num_pointers)] + [
            TextValue(i64, "i64"), TextValue(i64, "i64")]
        self.entry = TextBlock(False)
        self.blocks = [self.entry]
        self.block = self.entry
        self.hoisted: list[tuple[TextValue | None, tuple]] = []  # the entry block's top
        self.alloca_slots: list[tuple[TextValue | None, tuple]] = []  # after the hoisted
        self.ops = 1  # what the xDSL route's llvm.func walks over (itself included)
        self.intrinsics: dict[str, str] = {}  # name -> its declaration, in first-use order
        self.helpers: dict[str, str] = {}  # vector select helpers called -> their definition

    def _add(self, t: Attribute, parts: tuple, hoist: bool = False,
             text_type: str | None = None) -> TextValue:
        result = TextValue(t, type_text(t) if text_type is None else text_type)
        (self.hoisted if hoist else self.block.instructions).append((result, parts))
        self.ops += 1
        return result

    def _void(self, parts: tuple) -> None:
        self.block.instructions.append((None, parts))
        self.ops += 1

    # ── values ──────────────────────────────────────────────────────────────

    @property
    def args(self) -> Sequence[TextValue]:
        return self._args

    def type_of(self, value: TextValue) -> Attribute:
        return value.type

    def constant_value(self, value: TextValue) -> int | float | None:
        return value.number

    def _new_constant(self, number: float | int, t: Attribute) -> TextValue:
        key = number.hex() if isinstance(number, float) else ""
        held, text = _constant(number, key, t)
        self.ops += 1
        return TextValue(t, type_text(t), text, held)

    # ── instructions ────────────────────────────────────────────────────────

    def binary(self, name: str, a: TextValue, b: TextValue, no_wrap: bool = False
               ) -> TextValue:
        op = "add nsw nuw " if no_wrap else name + " "
        return self._add(a.type, (op, a.text_type, " ", a, ", ", b))

    def fneg(self, x: TextValue) -> TextValue:
        return self._add(x.type, ("fneg ", x.text_type, " ", x))

    def _compare(self, kind: str, predicate: str, a: TextValue, b: TextValue) -> TextValue:
        t = VectorType(i1, a.type.get_shape()) if isinstance(a.type, VectorType) else i1
        return self._add(t, (kind, predicate, " ", a.text_type, " ", a, ", ", b))

    def icmp(self, predicate: str, a: TextValue, b: TextValue) -> TextValue:
        return self._compare("icmp ", predicate, a, b)

    def fcmp(self, predicate: str, a: TextValue, b: TextValue) -> TextValue:
        return self._compare("fcmp ", predicate, a, b)

    def select(self, condition: TextValue, a: TextValue, b: TextValue) -> TextValue:
        return self._add(a.type, ("select  ", *_typed(condition), ", ", *_typed(a), ", ",
                                  *_typed(b)))

    def cast(self, name: str, x: TextValue, t: Attribute) -> TextValue:
        return self._add(t, (name, " ", *_typed(x), " to ", type_text(t)))

    def _call(self, callee: str, args: Sequence[TextValue], result: Attribute,
              convention: str = "") -> TextValue:
        parts: list = [f"call {convention}{type_text(result)} @\"{callee}\"("]
        for n, arg in enumerate(args):
            parts += (", " if n else "", *_typed(arg))
        parts.append(")")
        return self._add(result, tuple(parts))

    def _declare(self, name: str, result: Attribute, params: Sequence[str]) -> None:
        if name not in self.intrinsics:
            args = ", ".join(f'{p} %".{n + 1}"' for n, p in enumerate(params))
            self.intrinsics[name] = f'declare {type_text(result)} @"{name}"({args})\n'

    def intrinsic(self, name: str, args: Sequence[TextValue], result: Attribute
                  ) -> TextValue:
        self._declare(name, result, [a.text_type for a in args])
        return self._call(name, args, result)

    def call(self, name: str, args: Sequence[TextValue], result: Attribute) -> TextValue:
        self.helpers[name] = helper_text(name, result)
        return self._call(name, args, result, "ccc ")

    def fma(self, a: TextValue, b: TextValue, c: TextValue) -> TextValue:
        name = f"llvm.fma.{suffix(a.type)}"
        self._declare(name, a.type, [a.text_type] * 3)
        return self._call(name, (a, b, c), a.type)

    def vector_reduce(self, name: str, start: TextValue, vector: TextValue) -> TextValue:
        callee = f"llvm.vector.reduce.{name}.{suffix(vector.type)}"
        self._declare(callee, start.type, [start.text_type, vector.text_type])
        return self._call(callee, (start, vector), start.type)

    def undef(self, t: Attribute, hoist: bool = False) -> TextValue:
        self.ops += 1
        return TextValue(t, type_text(t), _undef_text(t))

    def insert_element(self, vector: TextValue, x: TextValue, index: TextValue,
                       hoist: bool = False) -> TextValue:
        return self._add(vector.type, ("insertelement ", *_typed(vector), ", ", *_typed(x),
                                       ", ", *_typed(index)), hoist)

    def shuffle_vector(self, a: TextValue, b: TextValue, mask: Sequence[int], t: Attribute,
                       hoist: bool = False) -> TextValue:
        return self._add(t, ("shufflevector ", *_typed(a), ", ", *_typed(b), ", ",
                             _mask_text(tuple(mask))), hoist)

    def gep(self, pointer: TextValue, index: TextValue, element: Attribute) -> TextValue:
        return self._add(_POINTER, ("getelementptr inbounds ", type_text(element), ", ",
                                    *_typed(pointer), ", ", *_typed(index)),
                         text_type=pointer.text_type)

    def load(self, pointer: TextValue, t: Attribute, alignment: int | None = None
             ) -> TextValue:
        align = "" if alignment is None else f", align {alignment}"
        return self._add(t, ("load ", type_text(t), ", ", *_typed(pointer), align))

    def store(self, value: TextValue, pointer: TextValue, alignment: int | None = None
              ) -> None:
        align = "" if alignment is None else f", align {alignment}"
        self._void(("store ", *_typed(value), ", ", *_typed(pointer), align))

    def allocas(self) -> None:
        self.ops += 1  # the xDSL route's `1 : i32`

    def alloca(self, t: Attribute, alignment: int) -> TextValue:
        slot = TextValue(_POINTER, type_text(t) + "*")  # llvmlite's typed pointer
        self.alloca_slots.append((slot, (f"alloca {type_text(t)}, i32 1, align {alignment}",)))
        self.ops += 1
        return slot

    # ── control flow ────────────────────────────────────────────────────────

    def new_block(self, with_argument: bool) -> TextBlock:
        return TextBlock(with_argument)

    def block_argument(self, block: TextBlock) -> TextValue:
        assert block.phi is not None
        return block.phi

    def add_block(self, block: TextBlock) -> None:
        self.blocks.append(block)

    def position(self, block: TextBlock) -> None:
        self.block = block

    def _into(self, block: TextBlock, args: Sequence[TextValue]) -> None:
        for _ in args:  # one argument at most: the induction variable
            block.incoming.append((args[0], self.block))

    def br(self, block: TextBlock, args: Sequence[TextValue] = ()) -> None:
        self._into(block, args)
        self._void(("br label ", block))

    def cond_br(self, condition: TextValue, then: TextBlock, then_args: Sequence[TextValue],
                else_: TextBlock, else_args: Sequence[TextValue]) -> None:
        self._into(then, then_args)
        self._into(else_, else_args)
        self._void(("br i1 ", condition, ", label ", then, ", label ", else_))

    def ret(self) -> None:
        self._void(("ret void",))

    # ── the function ────────────────────────────────────────────────────────

    def finish(self, name: str, noalias: bool) -> TextFunction:
        """Number the values and write `define void @name(...) {...}`."""
        n = 0
        for arg in self._args:
            n += 1
            arg.ref = f'%".{n}"'
        n += 1  # the return value
        for block in self.blocks:
            n += 1
            block.ref = f'%".{n}"'
        for block in self.blocks:
            if block.phi is not None:
                n += 1
                block.phi.ref = f'%".{n}"'
        self.entry.instructions[:0] = self.hoisted + self.alloca_slots
        for block in self.blocks:
            for result, _ in block.instructions:
                n += 1
                if result is not None:
                    result.ref = f'%".{n}"'
        mark = "noalias " if noalias else ""
        params = ", ".join([f"ptr {mark}{a.ref}" for a in self._args[:-2]]
                           + [f"i64 {a.ref}" for a in self._args[-2:]])
        lines = [f'define void @"{name}"({params})\n{{\n']
        for block in self.blocks:
            assert block.ref is not None
            lines.append(block.ref[2:-1] + ":\n")  # the label: `.7`
            if block.phi is not None:
                incoming = ", ".join(f"[{v.ref}, {b.ref}]" for v, b in block.incoming)
                lines.append(f"  {block.phi.ref} = phi  i64 {incoming}\n")
            for result, parts in block.instructions:
                text = "".join([p if p.__class__ is str else p.ref for p in parts])
                lines.append(f"  {result.ref} = {text}\n" if result is not None
                             else f"  {text}\n")
        lines.append("}\n")
        return TextFunction(name, "".join(lines), self.ops, self.intrinsics, self.helpers)


class TextFunction:
    """A kernel's LLVM text, the ops the xDSL route would have made of it (which decide
    how a graph splits into modules, `printer.compile_parts`) and the intrinsics it
    declares (name -> declaration, in first-use order) and the vector select helpers it
    calls (name -> their definition)."""

    __slots__ = ("helpers", "intrinsics", "name", "ops", "outer", "text")

    def __init__(self, name: str, text: str, ops: int, intrinsics: dict[str, str],
                 helpers: dict[str, str]):
        self.name = name
        self.text = text
        self.ops = ops
        self.intrinsics = intrinsics
        self.helpers = helpers
        self.outer: tuple[int, int] | None = None  # (trip, work) when it runs in chunks

    def to_dict(self) -> dict:
        """Plain values (JSON): `from_dict` makes the function again."""
        return {"name": self.name, "text": self.text, "ops": self.ops,
                "intrinsics": self.intrinsics, "helpers": self.helpers, "outer": self.outer}

    @classmethod
    def from_dict(cls, piece: dict) -> TextFunction:
        function = cls(piece["name"], piece["text"], piece["ops"], dict(piece["intrinsics"]),
                       dict(piece["helpers"]))
        outer = piece["outer"]
        function.outer = None if outer is None else (int(outer[0]), int(outer[1]))
        return function


@functools.cache
def helper_text(name: str, t: Attribute) -> str:
    """The definition of the vector select helper `name` of vector type `t`, made by the
    code that makes it on the xDSL route (`define_vector_selects`)."""
    scratch = ir.Module()
    vector = convert_type(t)
    ir.Function(scratch, ir.FunctionType(vector, [vector, vector]), name=name)
    define_vector_selects(scratch)
    return str(scratch.get_global(name))
