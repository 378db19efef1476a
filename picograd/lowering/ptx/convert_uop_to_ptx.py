"""`convert-uop-to-ptx`: every GPU-form `pg_uop.kernel` becomes a `pg_ptx.entry`.

Input dialects: `pg_uop` kernels in GPU form (after `uop-gpu-map`: `special group_id|local_id`,
`if`/`endif` guards, `shared` buffers, `barrier`; ranges that remain are sequential loops)
next to `func.func @main` (a `pg_sched` schedule).
Output dialects: `pg_ptx.entry` kernels (same symbol names, `grid`/`block` from the sizes of
the specials) next to the untouched `@main`.
Guarantee: no `pg_uop` op remains; every entry verifies, and its opcodes are all in
`pg_ptx.ALU_OPCODES`, so `module_to_ptx` prints PTX that ptxas accepts for every target of
`PTX_ISA_VERSIONS`. Kernels the lowering cannot express (a `global_id` special, f64
transcendentals, one special with two sizes) fail with a `PassFailedException` naming the
kernel.

    pg_uop.kernel @k(%a: !pg.buffer<64xf32>) {      pg_ptx.entry @k(%a: ...) grid [1, 1, 1]
                                                        block [64, 1, 1] {
                                                      %p = pg_ptx.ld_param %a : ...
                                                      %g = pg_ptx.alu cvta.to.global.u64 %p
      %t = pg_uop.special local_id 0 size 64          %t = pg_ptx.sreg tid.x
      %x = pg_uop.load %a[%t] : ... -> f32            %o = pg_ptx.alu mul.wide.s32 %t, %c4
                                                      %at = pg_ptx.alu add.s64 %g, %o : i64
                                                      %x = pg_ptx.ld global.f32 [%at] : f32
      %y = pg_uop.unary sqrt %x : f32                 %y = pg_ptx.alu sqrt.rn.f32 %x : f32
      pg_uop.store %y, %a[%t] : ...                   pg_ptx.st global.f32 [%at], %y : f32
    }                                               }

Values and semantics (those of `picograd/interpreter/alu.py`):

* `index` is 32-bit (`capabilities("ptx").index_bits`), addresses 64-bit: an element address
  is `base + mul.wide.s32(index, element size)`. Index values are non-negative by contract,
  so index div/mod by a power-of-two constant are `shr`/`and`, other index div/mod `div.u32`
  / `rem.u32`.
* Bools are `.pred` registers and one byte (0/1, numpy's bool) in memory; 8- and 16-bit
  integers live in 32-bit registers, sign- or zero-extended, and are re-extended (`cvt`)
  after arithmetic that can leave their range, so they wrap as in numpy.
* Integer div/mod never trap and match C/numpy: the divisor is replaced by 1 where it is 0
  or -1 (`selp`), then `b == 0` gives 0 and `MIN / -1` gives `-MIN` (= MIN, wrapped).
* Float `add`/`sub`/`mul`/`div` use `.rn` (exact IEEE rounding, never contracted to fma);
  `max`/`min` propagate NaN (`(a > b || a != a) ? a : b`); `ne` is unordered (`setp.neu`).
* f32 math: exp2 -> `ex2.approx.f32`, log2 -> `lg2.approx.f32`, sin -> a two-constant
  reduction `x - rint(x / 2pi) * 2pi` (`cvt.rni`, `fma.rn`) then `sin.approx.f32`, sqrt ->
  `sqrt.rn`, recip -> `rcp.rn`, and a raw exp/log (normally rewritten by `uop-legalize`) ->
  `ex2(x * log2 e)` / `lg2(x) * ln 2`. f64 has sqrt and recip; its other math fails.
* f16 values are computed in f32: loads convert with `cvt.f32.f16`, and every f16 result
  (arithmetic, math, casts, constants) is rounded to f16 (`cvt.rn.f16.*` and back), so
  f16 `+ - * /` and sqrt give numpy's bits; stores then convert exactly.
* Casts are C's: float -> int truncates (`cvt.rzi`; narrower than 32 bits through s32, as
  on the CPU targets), anything -> bool is `!= 0` (NaN gives true). A bitcast is `mov.b32`
  / `mov.b64` between register classes; f16 <-> i16 rounds the f32-held f16 to its 16 bits
  (`cvt.rn.f16.f32`, `cvt.s32.s16`) and back (`cvt.u16.u32`, `cvt.f32.f16`).
* Shifts mask the amount to the bit width (`and.b32`; PTX itself clamps), a narrow `shl`
  re-extends, a narrow `shr` needs nothing (the register holds the value extended).
* Ranges are sequential loops over a mutable counter register (body first, test at the
  bottom), `if` skips to its `endif` label, `pg_uop.acc` is a mutable register, `shared`
  a `.shared` array, `barrier` `bar.sync 0`. Constants, parameter addresses, special
  registers and shared addresses are hoisted to the top of the entry (each emitted once).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    ModuleOp,
    Signedness,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_ptx, pg_uop
from picograd.dialects.capabilities import capabilities
from picograd.dialects.pg import BinaryKind, BufferType, CmpKind, SpecialKind, UnaryKind
from picograd.dialects.syntax import scalar_value
from picograd.lowering.kernels import gpu_launch, replace_kernels
from picograd.lowering.ptx.printer import ptx_immediate

PASS_NAME = "convert-uop-to-ptx"
INDEX_BITS = capabilities("ptx").index_bits  # 32

# The error for a special other than group_id / local_id (`{kind}` is its kind).
_UNSUPPORTED_SPECIAL = ("pg_uop.special {kind} has no PTX lowering: run uop-gpu-map first (it "
                        "maps work items to group_id and local_id)")

_AXES = "xyz"
_SPECIAL_REGISTERS = {SpecialKind.GROUP_ID: "ctaid", SpecialKind.LOCAL_ID: "tid"}
_CMP = {CmpKind.LT: "lt", CmpKind.LE: "le", CmpKind.GT: "gt", CmpKind.GE: "ge",
        CmpKind.EQ: "eq", CmpKind.NE: "ne"}
# Float comparisons: ordered (false with a NaN) except `ne`, which holds for NaN as in C.
_FLOAT_CMP = {**_CMP, CmpKind.NE: "neu"}
_LOG2_E = 1 / math.log(2)
_LN_2 = math.log(2)
# 2pi split in two f32 constants (hi + lo is 2pi to ~2^-48) for the sin range reduction.
_TWO_PI_HI = float(np.float32(2 * math.pi))
_TWO_PI_LO = float(np.float32(2 * math.pi - _TWO_PI_HI))
_INV_TWO_PI = float(np.float32(1 / (2 * math.pi)))


@dataclass(frozen=True)
class _Int:
    """How an integer type (or `index`) lives in a register."""

    wide: bool  # a 64-bit register (else 32-bit)
    signed: bool
    narrow: str | None  # "s8" / "u8" / "s16" / "u16": re-extend after arithmetic

    @property
    def register(self) -> Attribute:
        return i64 if self.wide else i32

    @property
    def bits(self) -> str:  # the .bN suffix of the register
        return "b64" if self.wide else "b32"

    @property
    def typed(self) -> str:  # the .sN / .uN suffix of the register
        return f"{'s' if self.signed else 'u'}{64 if self.wide else 32}"


def _int_info(t: Attribute) -> _Int | None:
    if isinstance(t, IndexType):
        return _Int(wide=INDEX_BITS == 64, signed=True, narrow=None)
    if not isinstance(t, IntegerType) or t.width.data == 1:
        return None
    width = t.width.data
    signed = t.signedness.data != Signedness.UNSIGNED
    if width in (8, 16):
        return _Int(wide=False, signed=signed, narrow=f"{'s' if signed else 'u'}{width}")
    if width in (32, 64):
        return _Int(wide=width == 64, signed=signed, narrow=None)
    return None


def _float_register(t: Attribute) -> Attribute | None:
    """The register class of a float type (f16 computes in f32)."""
    if isinstance(t, Float16Type | Float32Type):
        return f32
    if isinstance(t, Float64Type):
        return f64
    return None


def _suffix(register: Attribute) -> str:
    return "f64" if register == f64 else "f32"


# Memory type of each element type in `ld`/`st`; bool is a byte.
def _memory_type(t: Attribute, info: _Int | None) -> str:
    if t == i1:
        return "u8"
    if isinstance(t, Float16Type):
        return "b16"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float64Type):
        return "f64"
    assert info is not None
    return info.narrow or info.bits


def _element_bytes(t: Attribute) -> int:
    return 1 if t == i1 else t.bitwidth // 8  # type: ignore[attr-defined]


# Ops that touch memory or registers (the rest is control flow, ids and the ALU).
_DATA_OPS = (pg_uop.SharedOp, pg_uop.AccOp, pg_uop.AccLoadOp, pg_uop.AccStoreOp, pg_uop.LoadOp,
             pg_uop.StoreOp)


@dataclass
class _Loop:
    counter: SSAValue  # the !pg_ptx.reg<i32> holding the next index
    value: SSAValue  # the index of the current iteration
    end: int
    top: str
    exit: str | None  # the label after the loop, for an empty range


class _EntryLowering:
    """Translate one `pg_uop.kernel` into a new `pg_ptx.entry`, walking its block in order."""

    def __init__(self, kernel: pg_uop.KernelOp):
        self.kernel = kernel
        self.name = kernel.sym_name.data
        grid, block = gpu_launch(kernel, self._fail, _UNSUPPORTED_SPECIAL)
        self.entry = pg_ptx.EntryOp(self.name, [a.type for a in kernel.args], grid, block)
        self.prologue: list[Operation] = []  # hoisted: params, specials, shared, constants
        self.body: list[Operation] = []
        self.values: dict[SSAValue, SSAValue] = {}
        self.bases: dict[SSAValue, tuple[str, SSAValue]] = {}  # buffer -> (space, address)
        self.constants: dict[tuple[Attribute, str], SSAValue] = {}
        self.specials: dict[tuple[SpecialKind, int], SSAValue] = {}
        self.open: list[_Loop | str] = []  # open ranges and ifs (an if by its endif label)
        self.labels = 0
        # Element addresses already computed, with the open blocks where they were: one is
        # reused only where those blocks are still open (PTX registers are not scoped).
        self.addresses: dict[tuple[SSAValue, SSAValue], tuple[SSAValue, tuple[str, ...]]] = {}
        for arg, new in zip(kernel.args, self.entry.args, strict=True):
            new.name_hint = arg.name_hint
            param = self._hoist(pg_ptx.LdParamOp(new))
            base = self._hoist(pg_ptx.AluOp("cvta.to.global.u64", [param]))
            if arg.name_hint:
                param.name_hint, base.name_hint = f"{arg.name_hint}_param", f"{arg.name_hint}_ptr"
            self.bases[arg] = ("global", base)

    def _fail(self, message: str) -> PassFailedException:
        return PassFailedException(f"{PASS_NAME}: @{self.name}: {message}")

    # ── emitting ────────────────────────────────────────────────────────────

    def _emit(self, op: Operation) -> None:
        self.body.append(op)

    def _value(self, op: Operation) -> SSAValue:
        """Emit a statement that defines one register, and return it."""
        self.body.append(op)
        return op.results[0]

    def _hoist(self, op: Operation) -> SSAValue:
        self.prologue.append(op)
        return op.results[0]

    def _alu(self, opcode: str, *args: SSAValue) -> SSAValue:
        return self._value(pg_ptx.AluOp(opcode, args))

    def _const(self, value: float | int | bool, register: Attribute) -> SSAValue:
        """A register holding `value`, moved once at the top of the entry."""
        key = (register, ptx_immediate(value, register))
        if key not in self.constants:
            self.constants[key] = self._hoist(pg_ptx.ConstOp(value, register))
        return self.constants[key]

    def _label(self, what: str) -> str:
        self.labels += 1
        return f"L{self.labels - 1}_{what}"

    def run(self) -> pg_ptx.EntryOp:
        for op in self.kernel.body.block.ops:
            new = self._lower(op)
            if new is not None:
                (old,) = op.results
                self.values[old] = new
                # Constants are shared by every use of their value: they keep no name.
                if old.name_hint and new.name_hint is None and \
                        not isinstance(new.owner, pg_ptx.ConstOp):
                    new.name_hint = old.name_hint
        self.entry.body.block.add_ops([*self.prologue, *self.body])
        return self.entry

    # ── one op ──────────────────────────────────────────────────────────────

    def _lower(self, op: Operation) -> SSAValue | None:
        """Emit the statements of one op; the register holding its result, if it has one."""
        args = [self.values.get(v, v) for v in op.operands]
        if isinstance(op, pg_uop.ALU_OPS):
            return self._lower_alu(op, args)
        if isinstance(op, _DATA_OPS):
            return self._lower_data(op, args)
        return self._lower_control(op, args)

    def _lower_control(self, op: Operation, args: list[SSAValue]) -> SSAValue | None:
        match op:
            case pg_uop.RangeOp():
                return self._range(op)
            case pg_uop.EndOp():
                self._end()
            case pg_uop.IfOp():
                label = self._label("endif")
                self.open.append(label)
                self._emit(pg_ptx.BraOp(label, args[0], negate=True))
            case pg_uop.EndIfOp():
                label = self.open.pop()
                assert isinstance(label, str)
                self._emit(pg_ptx.LabelOp(label))
            case pg_uop.SpecialOp():
                return self._special(op)
            case pg_uop.BarrierOp():
                self._emit(pg_ptx.BarSyncOp())
            case _:
                raise self._fail(f"{op.name} has no PTX lowering")
        return None

    def _lower_data(self, op: Operation, args: list[SSAValue]) -> SSAValue | None:
        match op:
            case pg_uop.SharedOp():
                buffer_type = op.result.type
                assert isinstance(buffer_type, BufferType)
                symbol = f"{self.name}_smem{sum(s == 'shared' for s, _ in self.bases.values())}"
                address = self._hoist(pg_ptx.SharedOp(symbol, buffer_type))
                address.name_hint = op.result.name_hint
                self.bases[op.result] = ("shared", address)
            case pg_uop.AccOp():
                reg = self._value(pg_ptx.RegOp(self._register(op.element_type)))
                self._emit(pg_ptx.WriteOp(reg, self._constant(op.init, op.element_type)))
                return reg
            case pg_uop.AccLoadOp():
                return self._value(pg_ptx.ReadOp(args[0]))
            case pg_uop.AccStoreOp():
                self._emit(pg_ptx.WriteOp(args[0], args[1]))
            case pg_uop.LoadOp():
                return self._load(op, args[1], args[2] if op.mask is not None else None)
            case pg_uop.StoreOp():
                self._store(op, args[0], args[2])
        return None

    def _lower_alu(self, op: Operation, args: list[SSAValue]) -> SSAValue:
        match op:
            case pg_uop.ConstOp():
                return self._constant(op.value, op.result.type)
            case pg_uop.UnaryOp():
                return self._unary(op.kind.data, args[0], op.result.type)
            case pg_uop.BinaryOp():
                return self._binary(op, args[0], args[1])
            case pg_uop.CmpOp():
                return self._compare(op.kind.data, args[0], args[1], op.lhs.type)
            case pg_uop.WhereOp():
                return self._where(args[0], args[1], args[2], op.result.type)
            case pg_uop.CastOp():
                return self._cast(args[0], op.input.type, op.result.type)
            case pg_uop.BitcastOp():
                return self._bitcast(args[0], op.input.type, op.result.type)
        raise self._fail(f"{op.name} has no PTX lowering")

    def _register(self, t: Attribute) -> Attribute:
        if t == i1:
            return i1
        if (register := _float_register(t)) is not None:
            return register
        if (info := _int_info(t)) is not None:
            return info.register
        raise self._fail(f"type {t} has no PTX register class")

    # ── control flow and ids ───────────────────────────────────────────────

    def _range(self, op: pg_uop.RangeOp) -> SSAValue:
        start, end = op.start.data, op.end.data
        self._check_index(start)
        self._check_index(end)
        top = self._label("loop")
        exit_label = self._label("done") if start == end else None
        if exit_label is not None:  # an empty range: the body never runs
            self._emit(pg_ptx.BraOp(exit_label))
        counter = self._value(pg_ptx.RegOp(i32))
        if op.result.name_hint:
            counter.name_hint = f"{op.result.name_hint}_counter"
        self._emit(pg_ptx.WriteOp(counter, self._const(start, i32)))
        self._emit(pg_ptx.LabelOp(top))
        value = self._value(pg_ptx.ReadOp(counter))
        self.open.append(_Loop(counter, value, end, top, exit_label))
        return value

    def _end(self) -> None:
        loop = self.open.pop()
        assert isinstance(loop, _Loop)
        following = self._alu("add.s32", loop.value, self._const(1, i32))
        self._emit(pg_ptx.WriteOp(loop.counter, following))
        again = self._alu("setp.lt.s32", following, self._const(loop.end, i32))
        self._emit(pg_ptx.BraOp(loop.top, again))
        if loop.exit is not None:
            self._emit(pg_ptx.LabelOp(loop.exit))

    def _special(self, op: pg_uop.SpecialOp) -> SSAValue:
        key = (op.kind.data, op.dim.data)
        if key not in self.specials:
            register = f"{_SPECIAL_REGISTERS[op.kind.data]}.{_AXES[op.dim.data]}"
            self.specials[key] = self._hoist(pg_ptx.SregOp(register))
        return self.specials[key]

    def _check_index(self, value: int) -> None:
        if not -(2 ** (INDEX_BITS - 1)) <= value < 2 ** (INDEX_BITS - 1):
            raise self._fail(f"index value {value} does not fit PTX's {INDEX_BITS}-bit index")

    # ── memory ──────────────────────────────────────────────────────────────

    def _address(self, buffer: SSAValue, index: SSAValue) -> tuple[str, SSAValue, Attribute]:
        space, base = self.bases[buffer]
        assert isinstance(buffer.type, BufferType)
        element = buffer.type.element_type
        scope = tuple(b if isinstance(b, str) else b.top for b in self.open)  # unique labels
        known = self.addresses.get((buffer, index))
        if known is not None and scope[: len(known[1])] == known[1]:
            return space, known[0], element
        offset = self._alu("mul.wide.s32", index, self._const(_element_bytes(element), i32))
        address = self._alu("add.s64", base, offset)
        self.addresses[(buffer, index)] = (address, scope)
        return space, address, element

    def _load(self, op: pg_uop.LoadOp, index: SSAValue, mask: SSAValue | None) -> SSAValue:
        space, address, element = self._address(op.buffer, index)
        info = _int_info(element)
        mem_type = _memory_type(element, info)
        other = scalar_value(op.other) if op.other is not None else 0
        if isinstance(element, Float16Type):
            bits = self._value(pg_ptx.LdOp(space, mem_type, address, mask, other))
            return self._alu("cvt.f32.f16", bits)
        if element == i1:
            byte = self._value(pg_ptx.LdOp(space, mem_type, address, mask, int(other != 0)))
            return self._alu("setp.ne.s32", byte, self._const(0, i32))
        return self._value(pg_ptx.LdOp(space, mem_type, address, mask, other))

    def _store(self, op: pg_uop.StoreOp, value: SSAValue, index: SSAValue) -> None:
        space, address, element = self._address(op.buffer, index)
        mem_type = _memory_type(element, _int_info(element))
        if isinstance(element, Float16Type):
            value = self._alu("cvt.rn.f16.f32", value)
        elif element == i1:
            value = self._alu("selp.b32", self._const(1, i32), self._const(0, i32), value)
        self._emit(pg_ptx.StOp(space, mem_type, address, value))

    # ── constants ───────────────────────────────────────────────────────────

    def _constant(self, attr: Attribute, t: Attribute) -> SSAValue:
        value = scalar_value(attr)
        if t == i1:
            return self._const(bool(value), i1)
        if isinstance(t, Float16Type):  # the f16 value, held in f32
            return self._const(float(np.float16(value)), f32)
        if (register := _float_register(t)) is not None:
            return self._const(float(value), register)
        info = _int_info(t)
        if info is None:
            raise self._fail(f"type {t} has no PTX register class")
        value = int(value)
        if isinstance(t, IndexType):
            self._check_index(value)
        elif info.narrow is not None:  # extended as the register holds it
            dtype = np.dtype(("i" if info.signed else "u") + str(int(info.narrow[1:]) // 8))
            value = int(np.asarray(value).astype(dtype))
        return self._const(value, info.register)

    # ── arithmetic ──────────────────────────────────────────────────────────

    def _extend(self, value: SSAValue, info: _Int) -> SSAValue:
        """Re-extend a narrow integer from its low bits (wrapping as numpy's int8 does)."""
        if info.narrow is None:
            return value
        wide = "s32" if info.narrow.startswith("s") else "u32"
        return self._alu(f"cvt.{wide}.{info.narrow}", value)

    def _rounded(self, value: SSAValue, t: Attribute) -> SSAValue:
        """An f16 result computed in f32, rounded to f16 as numpy's f16 op rounds it (for
        + - * / and sqrt that is exactly the f16 operation: f32 has over 2 * 11 + 2 bits)."""
        if not isinstance(t, Float16Type):
            return value
        return self._alu("cvt.f32.f16", self._alu("cvt.rn.f16.f32", value))

    def _unary(self, kind: UnaryKind, x: SSAValue, t: Attribute) -> SSAValue:
        if t == i1:
            if kind == UnaryKind.NOT:
                return self._alu("not.pred", x)
            raise self._fail(f"unary {kind} is not defined on i1")
        if (info := _int_info(t)) is not None:
            if kind == UnaryKind.NEG:
                return self._extend(self._alu(f"neg.s{64 if info.wide else 32}", x), info)
            if kind == UnaryKind.NOT:
                return self._extend(self._alu(f"not.{info.bits}", x), info)
            raise self._fail(f"unary {kind} is not defined on {t}")
        register = _float_register(t)
        if register is None:
            raise self._fail(f"unary {kind} on {t} has no PTX lowering")
        if kind == UnaryKind.NEG:  # exact
            return self._alu(f"neg.{_suffix(register)}", x)
        return self._rounded(self._float_unary(kind, x, register, t), t)

    def _float_unary(self, kind: UnaryKind, x: SSAValue, register: Attribute, t: Attribute
                     ) -> SSAValue:
        sfx = _suffix(register)
        if kind == UnaryKind.SQRT:
            return self._alu(f"sqrt.rn.{sfx}", x)
        if kind == UnaryKind.RECIP:
            return self._alu(f"rcp.rn.{sfx}", x)
        if kind == UnaryKind.NOT:
            raise self._fail(f"unary not is not defined on {t}")
        if register == f64:
            raise self._fail(f"{kind} on {t} has no PTX lowering (PTX's only transcendentals "
                             "are f32 ex2/lg2/sin.approx); compute it in f32")
        if kind == UnaryKind.EXP2:
            return self._alu("ex2.approx.f32", x)
        if kind == UnaryKind.LOG2:
            return self._alu("lg2.approx.f32", x)
        if kind == UnaryKind.EXP:
            return self._alu("ex2.approx.f32", self._alu("mul.rn.f32", x,
                                                          self._const(_LOG2_E, f32)))
        if kind == UnaryKind.LOG:
            return self._alu("mul.rn.f32", self._alu("lg2.approx.f32", x),
                             self._const(_LN_2, f32))
        if kind == UnaryKind.SIN:
            return self._sin(x)
        raise self._fail(f"unary {kind} on {t} has no PTX lowering")

    def _sin(self, x: SSAValue) -> SSAValue:
        # sin.approx is accurate on [-pi, pi]: subtract the nearest multiple of 2pi first, in
        # two fma steps so that k * 2pi loses nothing. inf and NaN stay NaN.
        turns = self._alu("cvt.rni.f32.f32",
                          self._alu("mul.rn.f32", x, self._const(_INV_TWO_PI, f32)))
        minus = self._alu("neg.f32", turns)
        reduced = self._alu("fma.rn.f32", minus, self._const(_TWO_PI_HI, f32), x)
        reduced = self._alu("fma.rn.f32", minus, self._const(_TWO_PI_LO, f32), reduced)
        return self._alu("sin.approx.f32", reduced)

    def _binary(self, op: pg_uop.BinaryOp, a: SSAValue, b: SSAValue) -> SSAValue:
        kind, t = op.kind.data, op.result.type
        if t == i1:
            logical = {BinaryKind.AND: "and", BinaryKind.OR: "or", BinaryKind.XOR: "xor",
                       BinaryKind.MAX: "or", BinaryKind.MIN: "and"}  # false < true
            if kind not in logical:
                raise self._fail(f"binary {kind} is not defined on i1")
            return self._alu(f"{logical[kind]}.pred", a, b)
        if (register := _float_register(t)) is not None:
            return self._float_binary(kind, a, b, register, t)
        info = _int_info(t)
        if info is None:
            raise self._fail(f"binary {kind} on {t} has no PTX lowering")
        if isinstance(t, IndexType) and kind in (BinaryKind.DIV, BinaryKind.MOD):
            return self._index_divmod(op, kind, a, b)
        return self._int_binary(kind, a, b, info, t)

    def _float_binary(self, kind: BinaryKind, a: SSAValue, b: SSAValue, register: Attribute,
                      t: Attribute) -> SSAValue:
        sfx = _suffix(register)
        arithmetic = {BinaryKind.ADD: "add", BinaryKind.SUB: "sub", BinaryKind.MUL: "mul",
                      BinaryKind.DIV: "div"}
        if kind in arithmetic:
            return self._rounded(self._alu(f"{arithmetic[kind]}.rn.{sfx}", a, b), t)
        if kind in (BinaryKind.MAX, BinaryKind.MIN):
            # (a > b || a != a) ? a : b, as C and numpy: a NaN in either operand wins.
            wins = self._alu(f"setp.{'gt' if kind == BinaryKind.MAX else 'lt'}.{sfx}", a, b)
            nan = self._alu(f"setp.nan.{sfx}", a, a)
            return self._alu(f"selp.{sfx}", a, b, self._alu("or.pred", wins, nan))
        raise self._fail(f"binary {kind} is not defined on {t}")

    def _int_binary(self, kind: BinaryKind, a: SSAValue, b: SSAValue, info: _Int,
                    t: Attribute) -> SSAValue:
        s = f"s{64 if info.wide else 32}"
        wrapping = {BinaryKind.ADD: f"add.{s}", BinaryKind.SUB: f"sub.{s}",
                    BinaryKind.MUL: f"mul.lo.{s}"}
        if kind in wrapping:
            return self._extend(self._alu(wrapping[kind], a, b), info)
        if kind in (BinaryKind.AND, BinaryKind.OR, BinaryKind.XOR):
            # Bitwise ops of two extended values are extended already.
            return self._alu(f"{kind.value}.{info.bits}", a, b)
        if kind in (BinaryKind.MAX, BinaryKind.MIN):
            return self._alu(f"{kind.value}.{info.typed}", a, b)
        if kind in (BinaryKind.DIV, BinaryKind.MOD):
            return self._int_divmod(kind, a, b, info)
        if kind in (BinaryKind.SHL, BinaryKind.SHR):
            return self._shift(kind, a, b, info)
        raise self._fail(f"binary {kind} is not defined on {t}")

    def _shift(self, kind: BinaryKind, a: SSAValue, b: SSAValue, info: _Int) -> SSAValue:
        # PTX clamps amounts >= the width; pg's shifts take them modulo the width: mask the
        # (always 32-bit) amount first. A narrow register holds its value extended, so a
        # right shift by less than the width is right as it is; a left shift re-extends.
        width = 64 if info.wide else (int(info.narrow[1:]) if info.narrow else 32)
        if info.wide:
            b = self._alu("cvt.u32.u64", b)
        amount = self._alu("and.b32", b, self._const(width - 1, i32))
        if kind == BinaryKind.SHL:
            return self._extend(self._alu(f"shl.{info.bits}", a, amount), info)
        return self._alu(f"shr.{info.typed}", a, amount)

    def _int_divmod(self, kind: BinaryKind, a: SSAValue, b: SSAValue, info: _Int) -> SSAValue:
        # Never divide by 0 or -1: the divisor becomes 1 there (x % 1 == 0 is the answer for
        # both), and a quotient is fixed up with selp: x / 0 -> 0, x / -1 -> -x (MIN -> MIN).
        register, typed, bits = info.register, info.typed, info.bits
        zero, one = self._const(0, register), self._const(1, register)
        by_zero = self._alu(f"setp.eq.{typed}", b, zero)
        by_minus_one = (self._alu(f"setp.eq.{typed}", b, self._const(-1, register))
                        if info.signed else None)
        unsafe = by_zero if by_minus_one is None else self._alu("or.pred", by_zero, by_minus_one)
        divisor = self._alu(f"selp.{bits}", one, b, unsafe)
        if kind == BinaryKind.MOD:
            return self._alu(f"rem.{typed}", a, divisor)
        quotient = self._alu(f"div.{typed}", a, divisor)
        if by_minus_one is not None:
            negated = self._extend(self._alu(f"neg.{typed}", a), info)
            quotient = self._alu(f"selp.{bits}", negated, quotient, by_minus_one)
        return self._alu(f"selp.{bits}", zero, quotient, by_zero)

    def _index_divmod(self, op: pg_uop.BinaryOp, kind: BinaryKind, a: SSAValue,
                      b: SSAValue) -> SSAValue:
        # Index values are non-negative: unsigned division, shifts for powers of two.
        divisor = op.rhs.owner
        if isinstance(divisor, pg_uop.ConstOp):
            c = int(divisor.scalar)
            if c > 0 and c & (c - 1) == 0:
                if kind == BinaryKind.DIV:
                    return self._alu("shr.u32", a, self._const(c.bit_length() - 1, i32))
                return self._alu("and.b32", a, self._const(c - 1, i32))
        return self._alu(f"{'div' if kind == BinaryKind.DIV else 'rem'}.u32", a, b)

    def _compare(self, kind: CmpKind, a: SSAValue, b: SSAValue, t: Attribute) -> SSAValue:
        if t == i1:  # as 0/1 integers: false < true
            a, b = (self._alu("selp.b32", self._const(1, i32), self._const(0, i32), v)
                    for v in (a, b))
            return self._alu(f"setp.{_CMP[kind]}.u32", a, b)
        if (register := _float_register(t)) is not None:
            return self._alu(f"setp.{_FLOAT_CMP[kind]}.{_suffix(register)}", a, b)
        info = _int_info(t)
        if info is None:
            raise self._fail(f"cmp {kind} on {t} has no PTX lowering")
        return self._alu(f"setp.{_CMP[kind]}.{info.typed}", a, b)

    def _where(self, cond: SSAValue, a: SSAValue, b: SSAValue, t: Attribute) -> SSAValue:
        if t == i1:  # (c & a) | (!c & b): there is no selp on predicates
            taken = self._alu("and.pred", cond, a)
            other = self._alu("and.pred", self._alu("not.pred", cond), b)
            return self._alu("or.pred", taken, other)
        register = self._register(t)
        info = _int_info(t)
        sfx = info.bits if info is not None else _suffix(register)
        return self._alu(f"selp.{sfx}", a, b, cond)

    # ── casts ───────────────────────────────────────────────────────────────

    def _cast(self, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
        if src == dst:
            return x
        if dst == i1:
            if (register := _float_register(src)) is not None:
                return self._alu(f"setp.neu.{_suffix(register)}", x, self._const(0.0, register))
            info = self._int_or_fail(src, dst)
            return self._alu(f"setp.ne.{info.typed}", x, self._const(0, info.register))
        if src == i1:
            register = self._register(dst)
            info = _int_info(dst)
            sfx = info.bits if info is not None else _suffix(register)
            one, zero = (1, 0) if info is not None else (1.0, 0.0)
            return self._alu(f"selp.{sfx}", self._const(one, register),
                             self._const(zero, register), x)
        src_float, dst_float = _float_register(src), _float_register(dst)
        if src_float is not None and dst_float is not None:
            return self._float_to_float(x, src, dst)
        if dst_float is not None:
            return self._int_to_float(x, self._int_or_fail(src, dst), dst)
        dst_info = self._int_or_fail(dst, src)
        if src_float is not None:
            wide = "s64" if dst_info.wide else "s32"
            return self._extend(self._alu(f"cvt.rzi.{wide}.{_suffix(src_float)}", x), dst_info)
        return self._int_to_int(x, self._int_or_fail(src, dst), dst_info)

    def _bitcast(self, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
        src_info, dst_info = _int_info(src), _int_info(dst)
        if src_info is not None and dst_info is not None:  # i8 <-> ui8: re-extend the bits
            return self._int_to_int(x, src_info, dst_info)
        if isinstance(src, Float16Type):  # held in f32: round to its bits, then sign-extend
            bits = self._alu("cvt.rn.f16.f32", x)
            return self._value(pg_ptx.AluOp("cvt.s32.s16", [bits], i32))
        if isinstance(dst, Float16Type):  # the low 16 bits as an f16, held in f32
            bits = self._value(pg_ptx.AluOp("cvt.u16.u32", [x], f16))
            return self._alu("cvt.f32.f16", bits)
        wide = (dst_info is not None and dst_info.wide) or dst == f64
        opcode = "mov.b64" if wide else "mov.b32"
        return self._value(pg_ptx.AluOp(opcode, [x], self._register(dst)))

    def _int_or_fail(self, t: Attribute, other: Attribute) -> _Int:
        info = _int_info(t)
        if info is None:
            raise self._fail(f"cast between {t} and {other} has no PTX lowering")
        return info

    def _float_to_float(self, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
        if isinstance(dst, Float16Type):  # round to f16, held in f32
            source = "f64" if isinstance(src, Float64Type) else "f32"
            return self._alu("cvt.f32.f16", self._alu(f"cvt.rn.f16.{source}", x))
        if isinstance(dst, Float64Type):
            return self._alu("cvt.f64.f32", x)  # from f32, or f16 held exactly in f32
        if isinstance(src, Float64Type):
            return self._alu("cvt.rn.f32.f64", x)
        return x  # f16 -> f32: the register already holds it

    def _int_to_float(self, x: SSAValue, info: _Int, dst: Attribute) -> SSAValue:
        source = info.typed
        if isinstance(dst, Float16Type):  # one rounding, straight to f16
            return self._alu("cvt.f32.f16", self._alu(f"cvt.rn.f16.{source}", x))
        return self._alu(f"cvt.rn.{_suffix(self._register(dst))}.{source}", x)

    def _int_to_int(self, x: SSAValue, src: _Int, dst: _Int) -> SSAValue:
        if src.wide and not dst.wide:
            x = self._alu("cvt.u32.u64", x)  # keep the low 32 bits
        elif dst.wide and not src.wide:
            # The 32-bit register holds the value extended already (sign-extended for signed
            # types, zero-extended and so non-negative for u8/u16); only a u32 is unsigned.
            unsigned32 = not src.signed and src.narrow is None
            return self._alu("cvt.u64.u32" if unsigned32 else "cvt.s64.s32", x)
        return self._extend(x, dst)


@dataclass(frozen=True)
class ConvertUopToPtxPass(ModulePass):
    """GPU-form pg_uop kernels -> pg_ptx entries; `@main` is kept as it is.

    Input: `pg_uop.kernel` ops in GPU form and a `func.func @main` schedule. Output:
    `pg_ptx.entry` ops with the same symbol names, their launch grid and block, and `@main`.
    Guarantee: no `pg_uop` op remains and every entry prints as PTX ptxas accepts.
    """

    name = "convert-uop-to-ptx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replace_kernels(op, lambda kernel, distinct: _EntryLowering(kernel).run())


__all__ = ["ConvertUopToPtxPass"]
