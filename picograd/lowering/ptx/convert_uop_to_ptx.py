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
* f32 math: exp2 -> `ex2.approx.f32`, log2 -> `lg2.approx.f32`, sin -> `sin.approx.f32`
  of x reduced to [-pi, pi]: below 2^23 by a two-constant `x - rint(x / 2pi) * 2pi`
  (`cvt.rni`, `fma.rn`), from 2^23 on exactly (Payne-Hanek: the float's significand times
  the bits of 1 / (2pi), `mul.wide.u32`), one of the two selected (`selp`), sqrt ->
  `sqrt.rn`, recip -> `rcp.rn`, and a raw exp/log (normally rewritten by `uop-legalize`) ->
  `ex2(x * log2 e)` / `lg2(x) * ln 2`. f64 has sqrt and recip; its other math fails.
* f16 values are computed in f32: loads convert with `cvt.f32.f16`, and every f16 result
  (arithmetic, math, casts, constants) is rounded to f16 (`cvt.rn.f16.*` and back), so
  f16 `+ - * /` and sqrt give numpy's bits; stores then convert exactly.
* Casts are C's where C defines them: float -> int truncates (`cvt.rzi`, which also
  saturates at the s32/s64 range and gives 0 for NaN: picograd's rule, docs/design.md,
  "Float to int casts"; narrower than 32 bits through s32, as on the CPU targets),
  anything -> bool is `!= 0` (NaN gives true). A bitcast is `mov.b32`
  / `mov.b64` between register classes; f16 <-> i16 rounds the f32-held f16 to its 16 bits
  (`cvt.rn.f16.f32`, `cvt.s32.s16`) and back (`cvt.u16.u32`, `cvt.f32.f16`).
* Shifts mask the amount to the bit width (`and.b32`; PTX itself clamps), a narrow `shl`
  re-extends, a narrow `shr` needs nothing (the register holds the value extended).
* Ranges are sequential loops over a mutable counter register (body first, test at the
  bottom), `if` skips to its `endif` label, `pg_uop.acc` is a mutable register, `shared`
  a `.shared` array, `barrier` `bar.sync 0`. Constants, parameter addresses, special
  registers and shared addresses are hoisted to the top of the entry (each emitted once).

The ALU ops' instruction selection is `alu.AluLowering`, which the entry lowering extends.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, ModuleOp, i1, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_ptx, pg_uop
from picograd.dialects.pg import BufferType, SpecialKind
from picograd.dialects.syntax import scalar_value
from picograd.lowering.kernels import gpu_launch, replace_kernels
from picograd.lowering.ptx.alu import AluLowering, IntInfo, int_info
from picograd.lowering.ptx.printer import ptx_immediate

PASS_NAME = "convert-uop-to-ptx"

# The error for a special other than group_id / local_id (`{kind}` is its kind).
_UNSUPPORTED_SPECIAL = ("pg_uop.special {kind} has no PTX lowering: run uop-gpu-map first (it "
                        "maps work items to group_id and local_id)")

_AXES = "xyz"
_SPECIAL_REGISTERS = {SpecialKind.GROUP_ID: "ctaid", SpecialKind.LOCAL_ID: "tid"}

# Memory type of each element type in `ld`/`st`; bool is a byte.
def _memory_type(t: Attribute, info: IntInfo | None) -> str:
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


class _EntryLowering(AluLowering):
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
        info = int_info(element)
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
        mem_type = _memory_type(element, int_info(element))
        if isinstance(element, Float16Type):
            value = self._alu("cvt.rn.f16.f32", value)
        elif element == i1:
            value = self._alu("selp.b32", self._const(1, i32), self._const(0, i32), value)
        self._emit(pg_ptx.StOp(space, mem_type, address, value))


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
