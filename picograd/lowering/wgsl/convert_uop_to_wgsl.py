"""`convert-uop-to-wgsl`: every GPU-form `pg_uop.kernel` becomes a `pg_wgsl.fn`.

Input dialects: `pg_uop` kernels in GPU form (after `uop-gpu-map`: work-item ids are
`pg_uop.special group_id|local_id`) next to `func.func @main` (a `pg_sched` schedule).
Output dialects: `pg_wgsl.fn` kernels (same symbol names) next to the untouched `@main`.
Guarantee: no `pg_uop` op remains; every function verifies, carries its launch (`grid`,
`block`) and prints as WGSL (`picograd.lowering.wgsl.printer.module_to_wgsl`) that computes
what the pg_uop interpreter computes.

    pg_uop.kernel @k(%a: !pg.buffer<256xf32>) {   pg_wgsl.fn @k(%a: !pg.buffer<256xf32>)
                                                      grid [4, 1, 1] block [64, 1, 1] {
      %g = pg_uop.special group_id 0 size 4          %g = pg_wgsl.builtin workgroup_id 0
      %l = pg_uop.special local_id 0 size 64         %l = pg_wgsl.builtin local_invocation_id 0
      %c = pg_uop.const 64 : index                   %c = pg_wgsl.const 64 : i32
      %o = pg_uop.binary mul %g, %c : index          %o = pg_wgsl.binary "*" %g, %c : i32
      %i = pg_uop.binary add %o, %l : index          %i = pg_wgsl.binary "+" %o, %l : i32
      %x = pg_uop.load %a[%i] : ... -> f32           %x = pg_wgsl.load %a[%i] : ... -> f32
      %y = pg_uop.unary exp %x : f32                 %y = pg_wgsl.call "exp"(%x) : f32
      pg_uop.store %y, %a[%i] : ...                  pg_wgsl.store %y, %a[%i] : ...
    }                                              }

* The launch: `grid[d]` is the size of `special group_id d`, `block[d]` that of
  `special local_id d` (1 where absent). `global_id` ids are rejected: the WGSL target
  launches what `uop-gpu-map` produces.
* Types: WGSL has f32, i32 and bool only; `index` becomes i32 (casts between index and i32
  disappear). f16, i8, ui8 and i16 stay as they are: pg_wgsl holds them in f32 / i32
  (after `uop-legalize{target=wgsl}` only loads, stores, comparisons, selects and casts
  use them). Any other dtype (f64, i64) fails the pass, naming the kernel and the dtype.
* Ranges of any kind that remain are sequential `for` loops; `if`/`endif` guards become
  `if (c) {`/`}`; `pg_uop.shared` is a `var<workgroup>` array and `pg_uop.barrier`
  `workgroupBarrier()`.
* Kinds to WGSL: `exp`, `log`, ... are the built-ins, `recip` is `1 / x`, `not` is `!` on
  bool and `~` on integers; on bools `max`/`min` are `|`/`&`, `xor` is `!=`, and ordering
  comparisons go through i32 (false < true). Integer `div`/`mod` and float `max`/`min`
  keep the CPU's semantics (see `picograd/lowering/wgsl/printer.py`).
* The flat pg_uop block lets a value defined inside a loop or if be used after it; WGSL
  scoping does not. Such a value gets a `var` declared before the outermost loop or if it
  escapes, assigned where it is computed and read back where it is used out of scope.
* A float sum's final value (`_final_sum_reads`) and `x + 0.0` are `select(v, 0.0, v == 0.0)`:
  Mesa folds the first `0.0 + x` of an unrolled loop into `x` (WGSL need not keep signed
  zeros), so a sum of -0.0s read -0.0 where IEEE (and torch) give +0.0.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, ModuleOp, f16, f32, i16, i32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_uop, pg_wgsl
from picograd.dialects.capabilities import capabilities
from picograd.dialects.dtypes import is_bool, is_float, is_int
from picograd.dialects.pg import BinaryKind, BufferType, CmpKind, SpecialKind, UnaryKind
from picograd.dialects.syntax import scalar_value
from picograd.lowering.kernels import gpu_launch, replace_kernels

PASS_NAME = "convert-uop-to-wgsl"

# The error for a special other than group_id / local_id (`{kind}` is its kind).
_UNSUPPORTED_SPECIAL = ("pg_uop.special {kind} is not supported by the WGSL target (uop-gpu-map "
                        "gives group_id and local_id)")

_BINARY = {BinaryKind.ADD: "+", BinaryKind.SUB: "-", BinaryKind.MUL: "*", BinaryKind.DIV: "/",
           BinaryKind.MOD: "%", BinaryKind.AND: "&", BinaryKind.OR: "|", BinaryKind.XOR: "^",
           BinaryKind.MAX: "max", BinaryKind.MIN: "min", BinaryKind.SHL: "<<",
           BinaryKind.SHR: ">>"}
_BOOL_BINARY = {BinaryKind.AND: "&", BinaryKind.OR: "|", BinaryKind.MAX: "|",  # false < true
                BinaryKind.MIN: "&"}
_CMP = {CmpKind.LT: "<", CmpKind.LE: "<=", CmpKind.GT: ">", CmpKind.GE: ">=", CmpKind.EQ: "==",
        CmpKind.NE: "!="}
_MATH = {UnaryKind.EXP: "exp", UnaryKind.LOG: "log", UnaryKind.SQRT: "sqrt", UnaryKind.SIN: "sin",
         UnaryKind.EXP2: "exp2", UnaryKind.LOG2: "log2"}
_BUILTINS = {SpecialKind.GROUP_ID: "workgroup_id", SpecialKind.LOCAL_ID: "local_invocation_id"}
_I32_RANGE = (-(2**31), 2**31 - 1)

# The constructs open at a point of the flat block, outermost first: the `pg_uop.range` or
# `pg_uop.if` op that opened each.
Stack = tuple[Operation, ...]


def _open_blocks(kernel: pg_uop.KernelOp) -> dict[Operation, Stack]:
    """For each op of the kernel, the loops and ifs open where it stands (a range op is
    inside its own loop, since its result lives there; an if op is outside its block; an
    end/endif still inside the block it closes)."""
    stacks: dict[Operation, Stack] = {}
    stack: Stack = ()
    for op in kernel.body.block.ops:
        if isinstance(op, pg_uop.RangeOp):
            stack = (*stack, op)
        stacks[op] = stack
        if isinstance(op, pg_uop.IfOp):
            stack = (*stack, op)
        elif isinstance(op, pg_uop.EndOp | pg_uop.EndIfOp):
            stack = stack[:-1]
    return stacks


def _final_sum_reads(kernel: pg_uop.KernelOp) -> set[Operation]:
    """The acc_loads that read a float sum after its last store: of a float register set to
    +0.0 and only ever stored an `add`. IEEE gives such a sum -0.0 never (+0.0 + -0.0 is
    +0.0), so turning a zero read there into +0.0 changes nothing but Mesa's folding."""
    ops = list(kernel.body.block.ops)
    sums: set[SSAValue] = set()
    last_store: dict[SSAValue, int] = {}
    for i, op in enumerate(ops):
        if isinstance(op, pg_uop.AccOp) and is_float(op.element_type):
            init = scalar_value(op.init)
            if init == 0 and math.copysign(1.0, init) > 0:
                sums.add(op.result)
        elif isinstance(op, pg_uop.AccStoreOp):
            acc, value = op.operands
            owner = value.owner
            if not (isinstance(owner, pg_uop.BinaryOp) and owner.kind.data == BinaryKind.ADD):
                sums.discard(acc)
            last_store[acc] = i
    return {op for i, op in enumerate(ops) if isinstance(op, pg_uop.AccLoadOp)
            and op.acc in sums and i > last_store.get(op.acc, len(ops))}


def _plus_zero_operand(op: pg_uop.BinaryOp) -> int | None:
    """For a float `x + 0.0` (a sum of one element), the operand index of x; else None."""
    if op.kind.data != BinaryKind.ADD or not is_float(op.result.type):
        return None
    for i, value in enumerate(op.operands):
        const = value.owner
        if isinstance(const, pg_uop.ConstOp) and const.scalar == 0 \
                and math.copysign(1.0, const.scalar) > 0:
            return 1 - i
    return None


def _common_prefix(a: Stack, b: Stack) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] is b[n]:
        n += 1
    return n


class _FnLowering:
    """Translate one `pg_uop.kernel` into a new `pg_wgsl.fn`, walking its block in order."""

    def __init__(self, kernel: pg_uop.KernelOp):
        self.kernel = kernel
        self.name = kernel.sym_name.data
        for arg in kernel.args:
            assert isinstance(arg.type, BufferType)
            self._type(arg.type.element_type, f"buffer {arg.type}")
        grid, block = gpu_launch(kernel, self._fail, _UNSUPPORTED_SPECIAL)
        self.fn = pg_wgsl.FuncOp(self.name, [a.type for a in kernel.args], grid, block)
        self.block: Block = self.fn.body.block
        self.values: dict[SSAValue, SSAValue] = dict(zip(kernel.args, self.block.args,
                                                         strict=True))
        for old, new in self.values.items():
            new.name_hint = old.name_hint
        self.stacks = _open_blocks(kernel)
        # value -> the var it escapes through; opening op -> the escaping values declared
        # right before it
        self.escapes: dict[SSAValue, SSAValue] = {}
        self.declare_before: dict[Operation, list[SSAValue]] = defaultdict(list)
        # escaping value -> its latest read of the var, and the blocks open there
        self.reads: dict[SSAValue, tuple[SSAValue, Stack]] = {}
        self.final_sum_reads = _final_sum_reads(kernel)
        self._find_escapes()

    def _fail(self, message: str) -> PassFailedException:
        return PassFailedException(f"{PASS_NAME}: @{self.name}: {message}")

    def _type(self, t: Attribute, what: str) -> Attribute:
        """The WGSL-side type of IR type `t` (index is i32); fails for what WGSL lacks."""
        if isinstance(t, IndexType):
            return i32
        if not capabilities("wgsl").supports(t):
            raise self._fail(f"{what}: WGSL has no {t} (it has f32, i32 and bool, and "
                             "emulates f16, i8, ui8 and i16)")
        return t

    def _find_escapes(self) -> None:
        values = (*pg_uop.ALU_OPS, pg_uop.LoadOp, pg_uop.AccLoadOp, pg_uop.SpecialOp)
        for op in self.kernel.body.block.ops:
            if isinstance(op, pg_uop.SharedOp):
                continue  # a module-scope array: visible everywhere
            inside = self.stacks[op]
            for result in op.results:
                # the outermost block level the value is used at, out of its defining blocks
                depth = min((_common_prefix(inside, self.stacks[use.operation])
                             for use in result.uses), default=len(inside))
                if depth == len(inside):
                    continue
                if not isinstance(op, values):
                    raise self._fail(f"the {op.name} result is used outside its loop or if")
                self.declare_before[inside[depth]].append(result)

    def run(self) -> pg_wgsl.FuncOp:
        for op in self.kernel.body.block.ops:
            for value in self.declare_before.get(op, ()):
                t = self._type(value.type, "a value")
                zero = 0.0 if is_float(t) else 0
                var = self._emit(pg_wgsl.VarOp(zero, t)).results[0]
                var.name_hint = f"{value.name_hint}_var" if value.name_hint else None
                self.escapes[value] = var
            self._check_types(op)
            operands = [self._operand(v, op) for v in op.operands]
            new = self._lower(op, operands)
            results = [new] if isinstance(new, SSAValue) else list(new.results)
            for old, result in zip(op.results, results, strict=True):
                self.values[old] = result
                if isinstance(new, Operation):
                    result.name_hint = old.name_hint
                if (var := self.escapes.get(old)) is not None:
                    self._emit(pg_wgsl.AssignOp(var, result))
        return self.fn

    def _check_types(self, op: Operation) -> None:
        for result in op.results:
            t = result.type
            if isinstance(t, BufferType | pg_uop.AccType):
                t = t.element_type
            self._type(t, f"{op.name} result")

    def _emit(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def _operand(self, value: SSAValue, user: Operation) -> SSAValue:
        var = self.escapes.get(value)
        if var is None or self._in_scope(value, user):
            return self.values[value]
        # A read made earlier in a block that is still open is still in scope and current:
        # the var is only assigned inside a block that has closed since.
        here = self.stacks[user]
        if (known := self.reads.get(value)) is not None and here[: len(known[1])] == known[1]:
            return known[0]
        read = self._emit(pg_wgsl.ReadOp(var)).results[0]
        read.name_hint = value.name_hint
        self.reads[value] = (read, here)
        return read

    def _in_scope(self, value: SSAValue, user: Operation) -> bool:
        assert isinstance(value.owner, Operation)
        inside = self.stacks[value.owner]
        return self.stacks[user][: len(inside)] == inside

    # ── one op ──────────────────────────────────────────────────────────────

    def _lower(self, op: Operation, args: list[SSAValue]) -> Operation | SSAValue:
        """Emit the pg_wgsl op(s) of `op`; return the last one (whose results replace
        `op`'s), or the value that stands for `op`'s result when no op is needed."""
        match op:
            case pg_uop.RangeOp():
                start, end = op.start.data, op.end.data
                if not (_I32_RANGE[0] <= start and end <= _I32_RANGE[1]):
                    raise self._fail(f"range [{start}, {end}) does not fit in i32")
                return self._emit(pg_wgsl.ForOp(start, end))
            case pg_uop.EndOp():
                return self._emit(pg_wgsl.EndForOp(args[0]))
            case pg_uop.IfOp():
                return self._emit(pg_wgsl.IfOp(args[0]))
            case pg_uop.EndIfOp():
                return self._emit(pg_wgsl.EndIfOp())
            case pg_uop.BarrierOp():
                return self._emit(pg_wgsl.BarrierOp())
            case pg_uop.SpecialOp():
                return self._emit(pg_wgsl.BuiltinOp(_BUILTINS[op.kind.data], op.dim.data))
            case pg_uop.SharedOp():
                assert isinstance(op.result.type, BufferType)
                return self._emit(pg_wgsl.WorkgroupOp(op.result.type))
            case _:
                return self._memory(op, args)

    def _memory(self, op: Operation, args: list[SSAValue]) -> Operation | SSAValue:
        match op:
            case pg_uop.AccOp():
                t = self._type(op.element_type, "a register")
                return self._emit(pg_wgsl.VarOp(scalar_value(op.init), t))
            case pg_uop.AccLoadOp():
                read = self._emit(pg_wgsl.ReadOp(args[0]))
                if op not in self.final_sum_reads:
                    return read
                return self._positive_zero(read.results[0])
            case pg_uop.AccStoreOp():
                return self._emit(pg_wgsl.AssignOp(args[0], args[1]))
            case pg_uop.LoadOp():
                other = scalar_value(op.other) if op.other is not None else 0
                mask = args[2] if op.mask is not None else None
                return self._emit(pg_wgsl.LoadOp(args[0], args[1], mask, other))
            case pg_uop.StoreOp():
                return self._emit(pg_wgsl.StoreOp(args[0], args[1], args[2]))
            case _:
                return self._alu(op, args)

    def _positive_zero(self, v: SSAValue) -> Operation:
        """`v + 0.0` spelled `select(v, 0.0, v == 0.0)`: -0.0 becomes +0.0, all else stays."""
        zero = self._emit(pg_wgsl.ConstOp(0.0, v.type)).results[0]
        is_zero = self._emit(pg_wgsl.CmpOp("==", v, zero)).results[0]
        return self._emit(pg_wgsl.SelectOp(is_zero, zero, v))

    def _alu(self, op: Operation, args: list[SSAValue]) -> Operation | SSAValue:
        match op:
            case pg_uop.ConstOp():
                t = self._type(op.result.type, "a constant")
                value = op.scalar
                if t == i32 and not _I32_RANGE[0] <= int(value) <= _I32_RANGE[1]:
                    raise self._fail(f"the index constant {value} does not fit in i32")
                return self._emit(pg_wgsl.ConstOp(value, t))
            case pg_uop.UnaryOp() | pg_uop.BinaryOp() if pg_wgsl.held_as(op.result.type) \
                    != op.result.type:
                raise self._fail(f"{op.name} {op.kind.data} on {op.result.type}, which WGSL "
                                 "emulates: run uop-legalize{target=wgsl} first")
            case pg_uop.UnaryOp():
                return self._unary(op.kind.data, args[0])
            case pg_uop.BinaryOp() if (x := _plus_zero_operand(op)) is not None:
                return self._positive_zero(args[x])  # x + 0.0, which Mesa folds to x
            case pg_uop.BinaryOp():
                return self._binary(op.kind.data, args[0], args[1])
            case pg_uop.CmpOp():
                return self._compare(op.kind.data, args[0], args[1])
            case pg_uop.WhereOp():
                return self._emit(pg_wgsl.SelectOp(args[0], args[1], args[2]))
            case pg_uop.CastOp():
                t = self._type(op.result.type, "a cast")
                if args[0].type == t:  # index <-> i32: the same WGSL value
                    return args[0]
                return self._emit(pg_wgsl.CastOp(args[0], t))
            case pg_uop.BitcastOp():
                return self._bitcast(args[0], op.input.type, op.result.type)
        raise self._fail(f"{op.name} has no WGSL lowering")

    def _bitcast(self, x: SSAValue, src: Attribute, dst: Attribute) -> Operation:
        if is_int(src) and is_int(dst) and pg_wgsl.held_as(dst) != dst:
            # i8 <-> ui8 (held in i32): the wrapping cast reads the same 8 bits.
            return self._emit(pg_wgsl.CastOp(x, dst))
        if {src, dst} == {f16, i16}:
            return self._emit(pg_wgsl.BitcastOp(x, dst))
        if src not in (i32, f32) or dst not in (i32, f32):
            raise self._fail(f"bitcast {src} to {dst}: WGSL bitcasts only 32-bit types (i32, "
                             "f32) and the emulated f16 <-> i16, i8 <-> ui8")
        return self._emit(pg_wgsl.BitcastOp(x, dst))

    def _unary(self, kind: UnaryKind, x: SSAValue) -> Operation:
        t = x.type
        if kind == UnaryKind.NEG:
            return self._emit(pg_wgsl.UnaryOp("-", x))
        if kind == UnaryKind.NOT:
            return self._emit(pg_wgsl.UnaryOp("!" if is_bool(t) else "~", x))
        if kind == UnaryKind.RECIP:
            one = self._emit(pg_wgsl.ConstOp(1.0, t))
            return self._emit(pg_wgsl.BinaryOp("/", one.results[0], x))
        return self._emit(pg_wgsl.CallOp(_MATH[kind], x))

    def _binary(self, kind: BinaryKind, a: SSAValue, b: SSAValue) -> Operation:
        if not is_bool(a.type):
            return self._emit(pg_wgsl.BinaryOp(_BINARY[kind], a, b))
        if kind == BinaryKind.XOR:
            return self._emit(pg_wgsl.CmpOp("!=", a, b))
        return self._emit(pg_wgsl.BinaryOp(_BOOL_BINARY[kind], a, b))

    def _compare(self, kind: CmpKind, a: SSAValue, b: SSAValue) -> Operation:
        if is_bool(a.type) and kind not in (CmpKind.EQ, CmpKind.NE):
            # WGSL does not order bools: compare them as 0 / 1.
            a = self._emit(pg_wgsl.CastOp(a, i32)).results[0]
            b = self._emit(pg_wgsl.CastOp(b, i32)).results[0]
        return self._emit(pg_wgsl.CmpOp(_CMP[kind], a, b))


@dataclass(frozen=True)
class ConvertUopToWgslPass(ModulePass):
    """GPU-form pg_uop kernels -> pg_wgsl.fn kernels; `@main` is kept as it is.

    Input: `pg_uop.kernel` ops (work-item ids from `special group_id|local_id`) and a
    `func.func @main` schedule. Output: `pg_wgsl.fn` ops with the same symbol names, their
    launch in `grid`/`block`, and `@main`. Guarantee: no `pg_uop` op remains; a dtype WGSL
    neither has nor emulates (f64, i64) fails the pass naming the kernel; arithmetic on an
    emulated one fails verification (run `uop-legalize{target=wgsl}` first).
    """

    name = PASS_NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replace_kernels(op, lambda kernel, distinct: _FnLowering(kernel).run())
