"""`convert-uop-to-c`: every `pg_uop.kernel` becomes a `pg_c.func`, one op at a time.

Input dialects: `pg_uop` kernels next to `func.func @main` (a `pg_sched` schedule).
Output dialects: `pg_c.func` kernels (same symbol names) next to the untouched `@main`.
Guarantee: no `pg_uop` op remains; every function verifies and prints as C
(`picograd.lowering.c.printer.module_to_c`).

    pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {    pg_c.func @k(%a: !pg.buffer<4xf32>) restrict {
      %i = pg_uop.range 0 to 4 global              %i = pg_c.for 0 to 4
      %acc = pg_uop.acc 0.0 : f32                  %acc = pg_c.decl 0.0 : f32
      %x = pg_uop.load %a[%i] : ... -> f32         %x = pg_c.load %a[%i] : ... -> f32
      %y = pg_uop.unary exp %x : f32               %y = pg_c.call "expf"(%x) : f32
      %z = pg_uop.binary max %x, %y : f32          %z = pg_c.binary "max" %x, %y : f32
      ...                                          ...
      pg_uop.end %i                                pg_c.end_for %i
    }                                            }

* A range of any kind is a sequential C `for` loop (the CPU runs one work item at a time).
* Vector ops become their `pg_c` twins (GCC/Clang vector extension types in C).
* The kind enums map to C spellings: `exp` -> `expf` (f32/f16) or `exp` (f64), `recip` ->
  `1 / x`, `not` -> `!` (bool) or `~` (integers), `max`/`min` on bools -> `|`/`&`.
* The flat pg_uop block lets a value defined inside a loop be used after it (CSE merges
  equal pure ops across `end`); C scoping does not. Such a value is given a mutable local
  declared before the outermost loop it escapes (`pg_c.decl`), assigned where it is
  computed and read back where it is used out of scope.
* Pointers are `restrict` when every launch of the kernel in `@main` passes distinct
  buffers (as `noalias` on the LLVM target).
* A kernel whose outermost global range may run in chunks on several threads
  (`picograd/lowering/outer_range.py`) gets `pg.outer` (trip count) and `pg.work`
  attributes; `module_to_c` then bounds its first top-level `pg_c.for` by the function's
  trailing `start`/`end` arguments, which every CPU kernel takes (others ignore them).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_c, pg_uop
from picograd.dialects.dtypes import is_bool, is_float, lane_type
from picograd.dialects.flat_vectors import lanes_of
from picograd.dialects.pg import BinaryKind, CmpKind, UnaryKind
from picograd.dialects.syntax import scalar_value
from picograd.lowering.kernels import replace_kernels
from picograd.lowering.outer_range import outer_split

_BINARY = {BinaryKind.ADD: "+", BinaryKind.SUB: "-", BinaryKind.MUL: "*", BinaryKind.DIV: "/",
           BinaryKind.MOD: "%", BinaryKind.AND: "&", BinaryKind.OR: "|", BinaryKind.XOR: "^",
           BinaryKind.MAX: "max", BinaryKind.MIN: "min", BinaryKind.SHL: "<<",
           BinaryKind.SHR: ">>"}
_BOOL_BINARY = {**_BINARY, BinaryKind.MAX: "|", BinaryKind.MIN: "&"}  # false < true
_CMP = {CmpKind.LT: "<", CmpKind.LE: "<=", CmpKind.GT: ">", CmpKind.GE: ">=", CmpKind.EQ: "==",
        CmpKind.NE: "!="}
_MATH = {UnaryKind.EXP: "exp", UnaryKind.LOG: "log", UnaryKind.SQRT: "sqrt", UnaryKind.SIN: "sin",
         UnaryKind.EXP2: "exp2", UnaryKind.LOG2: "log2"}

Stack = tuple[SSAValue, ...]  # the ranges open at a point of a flat block, outermost first


def _open_ranges(kernel: pg_uop.KernelOp) -> dict[Operation, Stack]:
    """For each op of the kernel, the ranges open where it stands (a range op is inside its
    own range, an end op still inside the range it closes)."""
    stacks: dict[Operation, Stack] = {}
    stack: Stack = ()
    for op in kernel.body.block.ops:
        if isinstance(op, pg_uop.RangeOp):
            stack = (*stack, op.result)
        stacks[op] = stack
        if isinstance(op, pg_uop.EndOp):
            stack = stack[:-1]
    return stacks


def _common_prefix(a: Stack, b: Stack) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


class _FuncLowering:
    """Translate one `pg_uop.kernel` into a new `pg_c.func`, walking its block in order."""

    def __init__(self, kernel: pg_uop.KernelOp, restrict: bool):
        self.kernel = kernel
        self.func = pg_c.FuncOp(kernel.sym_name.data, [a.type for a in kernel.args],
                                restrict=restrict)
        self.block: Block = self.func.body.block
        self.values: dict[SSAValue, SSAValue] = dict(zip(kernel.args, self.block.args,
                                                         strict=True))
        for old, new in self.values.items():
            new.name_hint = old.name_hint
        self.stacks = _open_ranges(kernel)
        # value -> the local it escapes through; range -> the escaping values declared before it
        self.escapes: dict[SSAValue, SSAValue] = {}
        self.declare_before: dict[SSAValue, list[SSAValue]] = defaultdict(list)
        self._find_escapes()

    def _fail(self, message: str) -> PassFailedException:
        return PassFailedException(f"convert-uop-to-c: @{self.kernel.sym_name.data}: {message}")

    def _find_escapes(self) -> None:
        for op in self.kernel.body.block.ops:
            inside = self.stacks[op]
            for result in op.results:
                # the outermost loop level the value is used at, out of its defining loops
                depth = min((_common_prefix(inside, self.stacks[use.operation])
                             for use in result.uses), default=len(inside))
                if depth == len(inside) or isinstance(op, pg_uop.EndOp):
                    continue
                if not isinstance(op, (*pg_uop.ALU_OPS, pg_uop.LoadOp, pg_uop.AccLoadOp,
                                       pg_uop.VLoadOp, pg_uop.BroadcastOp, pg_uop.VReduceOp)):
                    raise self._fail(f"the {op.name} result is used outside its loop")
                self.declare_before[inside[depth]].append(result)

    def run(self) -> pg_c.FuncOp:
        if (split := outer_split(self.kernel)) is not None:
            split.mark(self.func)
        for op in self.kernel.body.block.ops:
            operands = [self._operand(v, op) for v in op.operands]
            if isinstance(op, pg_uop.RangeOp):
                for value in self.declare_before.get(op.result, ()):
                    zero = 0.0 if is_float(value.type) else 0
                    self.escapes[value] = self._emit(pg_c.DeclOp(zero, value.type)).results[0]
            new = self._lower(op, operands)
            for old, result in zip(op.results, new.results, strict=True):
                self.values[old] = result
                result.name_hint = old.name_hint
                if (var := self.escapes.get(old)) is not None:
                    self._emit(pg_c.AssignOp(var, result))
        return self.func

    def _emit(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def _operand(self, value: SSAValue, user: Operation) -> SSAValue:
        var = self.escapes.get(value)
        if var is not None and not self._in_scope(value, user):
            read = self._emit(pg_c.ReadOp(var))
            read.results[0].name_hint = value.name_hint
            return read.results[0]
        return self.values[value]

    def _in_scope(self, value: SSAValue, user: Operation) -> bool:
        assert isinstance(value.owner, Operation)
        inside = self.stacks[value.owner]
        return self.stacks[user][: len(inside)] == inside

    # ── one op ──────────────────────────────────────────────────────────────

    def _lower(self, op: Operation, args: list[SSAValue]) -> Operation:
        match op:
            case pg_uop.RangeOp():
                new: Operation = pg_c.ForOp(op.start.data, op.end.data)
            case pg_uop.EndOp():
                new = pg_c.EndForOp(args[0])
            case pg_uop.AccOp():
                new = pg_c.DeclOp(scalar_value(op.init), op.element_type)
            case pg_uop.AccLoadOp():
                new = pg_c.ReadOp(args[0])
            case pg_uop.AccStoreOp():
                new = pg_c.AssignOp(args[0], args[1])
            case pg_uop.LoadOp():
                other = scalar_value(op.other) if op.other is not None else 0
                new = pg_c.LoadOp(args[0], args[1], args[2] if op.mask is not None else None,
                                  other)
            case pg_uop.StoreOp():
                new = pg_c.StoreOp(args[0], args[1], args[2])
            case pg_uop.VLoadOp():
                new = pg_c.VLoadOp(args[0], args[1], op.result.type, op.stride)
            case pg_uop.VStoreOp():
                new = pg_c.VStoreOp(args[0], args[1], args[2])
            case pg_uop.BroadcastOp():
                new = pg_c.BroadcastOp(args[0], lanes_of(op.result.type))
            case pg_uop.VReduceOp():
                new = pg_c.VReduceOp(op.kind.data, args[0])
            case _:
                new = self._alu(op, args)
        return self._emit(new)

    def _alu(self, op: Operation, args: list[SSAValue]) -> Operation:
        match op:
            case pg_uop.ConstOp():
                return pg_c.ConstOp(op.scalar, op.result.type)
            case pg_uop.UnaryOp():
                return self._unary(op.kind.data, args[0])
            case pg_uop.BinaryOp():
                table = _BOOL_BINARY if is_bool(op.result.type) else _BINARY
                return pg_c.BinaryOp(table[op.kind.data], args[0], args[1])
            case pg_uop.CmpOp():
                return pg_c.CmpOp(_CMP[op.kind.data], args[0], args[1])
            case pg_uop.WhereOp():
                return pg_c.SelectOp(args[0], args[1], args[2])
            case pg_uop.CastOp():
                return pg_c.CastOp(args[0], op.result.type)
            case pg_uop.BitcastOp():
                return pg_c.BitcastOp(args[0], op.result.type)
        raise self._fail(f"{op.name} has no C lowering (the C target runs on the CPU)")

    def _unary(self, kind: UnaryKind, x: SSAValue) -> Operation:
        t = x.type
        if kind == UnaryKind.NEG:
            return pg_c.UnaryOp("-", x)
        if kind == UnaryKind.NOT:
            return pg_c.UnaryOp("!" if is_bool(t) else "~", x)
        if kind == UnaryKind.RECIP:
            one = self._emit(pg_c.ConstOp(1.0, t))
            return pg_c.BinaryOp("/", one, x)
        suffix = "" if lane_type(t).bitwidth == 64 else "f"  # type: ignore[attr-defined]
        return pg_c.CallOp(_MATH[kind] + suffix, x)


@dataclass(frozen=True)
class ConvertUopToCPass(ModulePass):
    """pg_uop kernels -> pg_c.func kernels; `@main` is kept as it is.

    Input: `pg_uop.kernel` ops and a `func.func @main` schedule. Output: `pg_c.func` ops with
    the same symbol names and `@main`. Guarantee: no `pg_uop` op remains.
    """

    name = "convert-uop-to-c"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replace_kernels(op, lambda kernel, distinct: _FuncLowering(kernel, distinct).run())

