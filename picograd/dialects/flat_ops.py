"""What the flat-kernel dialects share: kernels, loops, guards and the verifier error.

`pg_uop` (stage 4) and the target dialects `pg_c`, `pg_wgsl` and `pg_ptx` (stage 5) hold a
kernel as one flat, ordered block of statements, so many of their ops have the same shape:

    <kernel op> @k(%a: !pg.buffer<4xf32>) <header> { ... }   FlatFunction, LaunchedFunction
    %i = <dialect>.for 0 to 64                                ForLoopSyntax
    <dialect>.end_for %i                                      EndLoopSyntax
    <dialect>.if %ok                                          GuardSyntax
    <dialect>.end_if                                          BareStatement

`pg_loop.kernel` has the kernel's syntax without the flat body (`KernelFunction`). The
other bases of these dialects live beside this module: `flat_cells` (literals and the
mutable cells: locals, registers), `flat_memory` (loads, stores, work-group buffers) and
`target_ops` (the value ops that `pg_c` and `pg_wgsl` spell as operators and calls).

A base declares the IRDL fields (operands, results, properties, traits, assembly format)
that its ops declare alike, and gives them `__init__`, `parse`/`print` and `verify_`; an op
declares its name, docstring and IR example and only the fields of its own dialect's types
(`pg_wgsl`'s i32 indices, each dialect's cell type). xDSL collects an op's fields from the
op class first and then from its bases, so a field an op declares comes before the
inherited ones: an op that changes one operand of a base re-declares the operands before
it too, to keep their order (`pg_wgsl.LoadOp`, `pg_wgsl.StoreOp`). A dialect's own checks
(which scalar types it has) come first in the op's `verify_`, which then calls the base's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IndexType, IntAttr, StringAttr, i1
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation, operand_def, prop_def, region_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from picograd.dialects.pg import BufferType, RangeKind
from picograd.dialects.syntax import (
    int_array,
    int_tuple,
    parse_int_list,
    parse_kernel_signature,
    print_int_list,
    print_kernel_signature,
)


def fail(op: Operation, message: str) -> VerifyException:
    """The verifier error of `op`: `'pg_c.const': <message>`."""
    return VerifyException(f"'{op.name}': {message}")


# Upcast and unroll ranges become one copy of their body per iteration when they are
# lowered (vector lanes, straight-line code): more than this is a mistake, and at 2**63
# the lowering would never end. The pipelines make at most 64 lanes (MAX_LANES).
MAX_UNROLLED = 4096
_I64 = range(-(2**63), 2**63)


def check_range(op: Operation, start: int, end: int, kind: RangeKind) -> None:
    """A loop range's bounds (pg_loop and pg_uop ranges): i64, not empty, and few enough
    iterations to copy out for the kinds that are unrolled."""
    if start not in _I64 or end not in _I64:
        raise fail(op, f"range bounds [{start}, {end}) do not fit in i64")
    if end < start:
        raise fail(op, f"empty range [{start}, {end})")
    if kind in (RangeKind.UPCAST, RangeKind.UNROLL) and end - start > MAX_UNROLLED:
        raise fail(op, f"an {kind.value} range of {end - start} iterations: at most "
                       f"{MAX_UNROLLED} (each is a copy of the body)")


# ── kernels ──────────────────────────────────────────────────────────────────


def flat_body(arg_types: Sequence[Attribute], body: Region | None) -> Region:
    """`body`, or a new region of one block with arguments of `arg_types`."""
    return body if body is not None else Region(Block(arg_types=arg_types))


class KernelFunction(IRDLOperation):
    """A kernel, `@name(%a: !pg.buffer<4xf32>, ...) <header> { ... }`: a symbol whose body
    is one block (isolated from above, no terminator) with the kernel's buffers as arguments.

    The words between the arguments and the body (`restrict`, a launch) are properties of
    the op (`header` when built), read by `parse_header` and written by `print_header`
    (none by default).
    """

    sym_name = prop_def(StringAttr)
    body = region_def("single_block")
    # the dialects of the ops a body may hold (`verify_body_dialects`)
    BODY_DIALECTS: ClassVar[tuple[str, ...]] = ()
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    def __init__(self, name: str, arg_types: Sequence[Attribute], body: Region | None = None,
                 header: Mapping[str, Attribute] | None = None):
        super().__init__(properties={"sym_name": StringAttr(name), **(header or {})},
                         regions=[flat_body(arg_types, body)])

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.regions[0].block.args)

    @property
    def kernel_name(self) -> str:
        sym_name = self.properties["sym_name"]
        assert isinstance(sym_name, StringAttr)
        return sym_name.data

    @property
    def where(self) -> str:
        """`@name`, which starts the kernel's verifier messages."""
        return f"@{self.kernel_name}"

    @classmethod
    def parse_header(cls, parser: Parser) -> dict[str, Attribute]:
        return {}

    def print_header(self, printer: Printer) -> None:
        pass

    @classmethod
    def parse(cls, parser: Parser) -> KernelFunction:
        name, args = parse_kernel_signature(parser)
        properties = {"sym_name": StringAttr(name), **cls.parse_header(parser)}
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls.create(properties=properties, regions=[parser.parse_region(args)])
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        print_kernel_signature(printer, self.kernel_name, self.args)
        self.print_header(printer)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        # An empty body prints as `{ }`: its block and arguments come from the header.
        printer.print_region(self.regions[0], print_entry_block_args=False,
                             print_empty_block=False)

    def verify_body_dialects(self) -> None:
        """Every op of the body (nested ones too) is of `BODY_DIALECTS`: the printers and
        lowerings of a stage know its ops only, and an op of another stage would reach them
        as a KeyError or an 'is not a value op' error with no location."""
        for op in self.regions[0].walk():
            if op.name.split(".", 1)[0] not in self.BODY_DIALECTS:
                raise fail(self, f"{self.where}: '{op.name}' cannot be in a {self.name} (its "
                                 f"body holds {' and '.join(self.BODY_DIALECTS)} ops only)")

    def verify_buffer_args(self) -> None:
        for arg in self.args:
            if not isinstance(arg.type, BufferType):
                raise fail(self, f"{self.where}: arguments must be !pg.buffer, got {arg.type}")


class FlatFunction(KernelFunction):
    """A kernel as one flat block: its loops (and guards) are opening and closing ops of
    the block, which `verify_nesting` checks."""

    def verify_nesting(self, loop: type[Operation], end_loop: type[Operation], word: str,
                       guard: tuple[type[Operation], type[Operation]] | None = None,
                       *, scoped: bool = False) -> None:
        """The body is flat and its `loop`/`end_loop` pairs (and `guard` open/close pairs,
        where the dialect has guards) nest; `word` names a loop in the messages. `scoped`:
        a value defined inside a loop or guard is not used after it closes (C and WGSL
        print them as blocks, which end their variables' scope)."""
        open_ops: list[Operation] = []  # innermost last
        scopes: list[list[SSAValue]] = [[]]  # the values each open block defined
        closed: set[SSAValue] = set()  # the values of blocks that have closed
        openers = (loop, guard[0]) if guard is not None else (loop,)
        for op in self.regions[0].block.ops:
            if scoped:
                self._check_in_scope(op, end_loop, word, closed)
            if isinstance(op, openers):
                open_ops.append(op)
                scopes.append(list(op.results))
                continue
            if isinstance(op, end_loop):
                if not open_ops or open_ops[-1] is not op.operands[0].owner:
                    innermost = f"{word} or if" if guard is not None else "one"
                    raise fail(self, f"{self.where}: '{op.name}' closes a {word} that is not "
                                     f"the innermost open {innermost}")
                open_ops.pop()
                closed.update(scopes.pop())
            elif guard is not None and isinstance(op, guard[1]):
                if not open_ops or not isinstance(open_ops[-1], guard[0]):
                    raise fail(self, f"{self.where}: '{op.name}' does not close an open if")
                open_ops.pop()
                closed.update(scopes.pop())
            elif op.regions:
                raise fail(self, f"{self.where}: the body must be flat, found {op.name}")
            scopes[-1].extend(op.results)
        if open_ops:
            what = f"{word}(s) or if(s)" if guard is not None else f"{word}(s)"
            raise fail(self, f"{self.where}: {len(open_ops)} {what} never closed")

    def _check_in_scope(self, op: Operation, end_loop: type[Operation], word: str,
                        closed: set[SSAValue]) -> None:
        # a loop's end names its loop's index, which is out of scope by then
        operands = op.operands[1:] if isinstance(op, end_loop) else op.operands
        for value in operands:
            if value in closed:
                raise fail(self, f"{self.where}: '{op.name}' uses a value defined in a {word} "
                                 "or if that has closed (its scope ends there)")


class LaunchedFunction(FlatFunction):
    """A GPU kernel with its launch, `@name(...) grid [4, 1, 1] block [64, 1, 1] { ... }`:
    `grid` work groups per dimension and `block` work items per group (properties of the op,
    i64 arrays; the op checks them against its target's limits)."""

    grid = prop_def(DenseArrayBase)
    block = prop_def(DenseArrayBase)

    def __init__(self, name: str, arg_types: Sequence[Attribute], grid: Sequence[int],
                 block: Sequence[int], body: Region | None = None):
        super().__init__(name, arg_types, body, {"grid": int_array(tuple(grid)),
                                                 "block": int_array(tuple(block))})

    def _dims(self, which: str) -> tuple[int, ...]:
        attr = self.properties[which]
        assert isinstance(attr, DenseArrayBase)
        return int_tuple(attr)

    @property
    def grid_dims(self) -> tuple[int, ...]:
        return self._dims("grid")

    @property
    def block_dims(self) -> tuple[int, ...]:
        return self._dims("block")

    @property
    def launch(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(grid, block): work groups per dimension, work items per group."""
        return self.grid_dims, self.block_dims

    @classmethod
    def parse_header(cls, parser: Parser) -> dict[str, Attribute]:
        parser.parse_keyword("grid")
        grid = parse_int_list(parser)
        parser.parse_keyword("block")
        return {"grid": int_array(grid), "block": int_array(parse_int_list(parser))}

    def print_header(self, printer: Printer) -> None:
        printer.print_string(" grid ")
        print_int_list(printer, self.grid_dims)
        printer.print_string(" block ")
        print_int_list(printer, self.block_dims)


# ── loops ────────────────────────────────────────────────────────────────────


class ForLoopSyntax(IRDLOperation):
    """`%i = <dialect>.for 0 to 64`: open a loop over `[start, end)`; the result is the
    induction variable, of the op's `INDEX_TYPE` (`index`; a dialect with other indices
    re-declares both it and `result`)."""

    INDEX_TYPE: ClassVar[Attribute] = IndexType()

    start = prop_def(IntAttr)
    end = prop_def(IntAttr)
    result = result_def(IndexType)

    def __init__(self, start: int, end: int):
        super().__init__(properties={"start": IntAttr(start), "end": IntAttr(end)},
                         result_types=[self.INDEX_TYPE])

    @property
    def bounds(self) -> tuple[int, int]:
        start, end = self.properties["start"], self.properties["end"]
        assert isinstance(start, IntAttr) and isinstance(end, IntAttr)
        return start.data, end.data

    def verify_(self) -> None:
        start, end = self.bounds
        if end < start:
            raise fail(self, f"empty range [{start}, {end})")

    @classmethod
    def parse(cls, parser: Parser) -> ForLoopSyntax:
        start = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        op = cls(start, parser.parse_integer(allow_boolean=False))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        start, end = self.bounds
        printer.print_string(f" {start} to {end}")
        printer.print_op_attributes(self.attributes)


class EndLoopSyntax(IRDLOperation):
    """`<dialect>.end_for %i`: close the innermost open loop, named by its induction
    variable, which must be the result of the dialect's `LOOP_OP`. The base declares the
    operand `loop` as an `index`; a dialect with other indices re-declares it."""

    LOOP_OP: ClassVar[type[Operation]]

    loop = operand_def(IndexType)
    assembly_format = "$loop attr-dict"

    def __init__(self, loop: SSAValue):
        super().__init__(operands=[loop])

    def verify_(self) -> None:
        if not isinstance(self.operands[0].owner, self.LOOP_OP):
            raise fail(self, f"operand must be the result of a {self.LOOP_OP.name}")


# ── guards and bare statements ───────────────────────────────────────────────


class GuardSyntax(IRDLOperation):
    """`<dialect>.if %ok`: the statements up to the matching close run only where the
    bool `cond` holds."""

    cond = operand_def(i1)
    assembly_format = "$cond attr-dict"

    def __init__(self, cond: SSAValue | Operation):
        super().__init__(operands=[cond])


class BareStatement(IRDLOperation):
    """`<dialect>.<name>`: a statement with nothing but its name (no operand, result or
    property), such as the close of a guard or a work-group barrier."""

    assembly_format = "attr-dict"
