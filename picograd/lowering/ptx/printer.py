"""Print the `pg_ptx.entry` kernels of a module as one PTX module.

    module_to_ptx(module, arch="sm_80") -> str
    retarget_ptx(source, arch) -> str            the same PTX for another GPU
    arch_for_capability(major, minor) -> str     the `.target` to use on a device

Each `pg_ptx` op is one PTX statement, printed in block order (see
`picograd/dialects/pg_ptx.py`); other ops of the module (the `func.func @main` schedule) are
skipped. The module follows the kernel ABI of docs/design.md:

    .visible .entry k0(.param .u64 k0_param_0, ...)   one global address per buffer
    .maxntid 256, 1, 1                                 the entry's `block` dimensions

* `.version` / `.target` come from `PTX_ISA_VERSIONS`: the oldest PTX ISA that knows the
  architecture, so a CUDA 12.0 driver (PTX ISA 8.0) loads everything up to sm_90a, and
  PTX for an older architecture runs (JIT-compiled by the driver) on any newer GPU.
* Every SSA value gets its own virtual register: `%p` (.pred), `%h` (.b16, the bits of an
  f16), `%r` (.b32), `%rd` (.b64), `%f` (.f32), `%fd` (.f64), numbered from 0 per class and
  declared once per class at the top of the entry (`.reg .f32 %f<12>;`); ptxas allocates
  the physical registers.
* Immediates are exact: floats as their IEEE bits (`0f3FC00000`, `0d3FF8000000000000`),
  f16 as `0x3E00` moved into a .b16 register, integers in decimal.
* Shared arrays are `.shared .align A .b8 name[bytes];` inside the entry.
"""

from __future__ import annotations

import re
import struct

import numpy as np
from xdsl.dialects.builtin import ModuleOp, f16, f32, f64, i1, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from picograd.dialects import pg_ptx
from picograd.dialects.pg import BufferType
from picograd.dialects.syntax import scalar_value
from picograd.errors import DeviceError

# GPU architecture -> the PTX ISA version its `.target` first appeared in. CUDA 12 drivers
# accept PTX ISA 8.x; sm_100/sm_120 need a 12.8 driver or newer whatever the version says.
PTX_ISA_VERSIONS: dict[str, str] = {
    "sm_75": "6.3",
    "sm_80": "7.0",
    "sm_86": "7.1",
    "sm_87": "7.4",
    "sm_89": "7.8",
    "sm_90": "7.8",
    "sm_100": "8.6",
    "sm_120": "8.7",
}

# Register class (IR type) -> (PTX type of its declaration and `mov`, register prefix).
_REGISTERS: dict[Attribute, tuple[str, str]] = {
    i1: ("pred", "%p"), f16: ("b16", "%h"), i32: ("b32", "%r"), i64: ("b64", "%rd"),
    f32: ("f32", "%f"), f64: ("f64", "%fd"),
}


class PtxSourceError(ValueError):
    """The module holds something `module_to_ptx` cannot print (a malformed pg_ptx.entry)."""


def ptx_version(arch: str) -> str:
    """The `.version` for `.target arch`; DeviceError for an architecture not in the table."""
    try:
        return PTX_ISA_VERSIONS[arch]
    except KeyError:
        raise DeviceError(f"unknown PTX target {arch!r}; known: "
                          f"{', '.join(PTX_ISA_VERSIONS)}") from None


def _sm_number(arch: str) -> int:
    return int(arch.removeprefix("sm_"))


def arch_for_capability(major: int, minor: int) -> str:
    """The newest architecture of the table a device of compute capability `major.minor`
    runs (its own, or an older one whose PTX the driver JIT-compiles for it)."""
    number = 10 * major + minor
    fitting = [a for a in PTX_ISA_VERSIONS if _sm_number(a) <= number]
    if not fitting:
        raise DeviceError(f"compute capability {major}.{minor} is older than the oldest PTX "
                          f"target picograd emits ({next(iter(PTX_ISA_VERSIONS))})")
    return max(fitting, key=_sm_number)


_VERSION_LINE = re.compile(r"^\.version\s+\S+\s*$", re.MULTILINE)
_TARGET_LINE = re.compile(r"^\.target\s+\S+\s*$", re.MULTILINE)


def retarget_ptx(source: str, arch: str) -> str:
    """`source` (printed by `module_to_ptx`) with the `.version` and `.target` of `arch`. The
    statements picograd emits exist in every PTX ISA of the table, so only those lines
    change."""
    if _VERSION_LINE.search(source) is None or _TARGET_LINE.search(source) is None:
        raise PtxSourceError("the PTX has no `.version` / `.target` line to retarget")
    source = _VERSION_LINE.sub(f".version {ptx_version(arch)}", source, count=1)
    return _TARGET_LINE.sub(f".target {arch}", source, count=1)


# ── immediates ───────────────────────────────────────────────────────────────


def ptx_immediate(value: float | int, t: Attribute) -> str:
    """`value` as an exact PTX immediate for a register of class `t`."""
    if t == f32:
        return f"0f{struct.unpack('<I', struct.pack('<f', float(value)))[0]:08X}"
    if t == f64:
        return f"0d{struct.unpack('<Q', struct.pack('<d', float(value)))[0]:016X}"
    if t == f16:
        return f"0x{int(np.asarray(value, dtype=np.float16).view(np.uint16)):04X}"
    if t == i1:
        return "1" if value else "0"
    value = int(value)
    # The most negative i64 has no decimal PTX literal (its negation overflows).
    return "0x8000000000000000" if value == -(2**63) else str(value)


# ── entries ──────────────────────────────────────────────────────────────────


class _EntryPrinter:
    """Names the registers of one `pg_ptx.entry` and prints it statement by statement."""

    def __init__(self, entry: pg_ptx.EntryOp):
        self.entry = entry
        self.name = entry.sym_name.data
        self.registers: dict[SSAValue, str] = {}
        self.counts: dict[Attribute, int] = dict.fromkeys(_REGISTERS, 0)
        self.params = {arg: f"{self.name}_param_{i}" for i, arg in enumerate(entry.args)}
        self.shared: list[str] = []
        self.body: list[str] = []

    def _fail(self, message: str) -> PtxSourceError:
        return PtxSourceError(f"@{self.name}: {message}")

    def reg(self, value: SSAValue) -> str:
        if (known := self.registers.get(value)) is not None:
            return known
        raise self._fail(f"a value is used before its definition ({value.owner})")

    def define(self, value: SSAValue, t: Attribute | None = None) -> str:
        t = value.type if t is None else t
        if t not in _REGISTERS:
            raise self._fail(f"no register class for {t}")
        name = f"{_REGISTERS[t][1]}{self.counts[t]}"
        self.counts[t] += 1
        self.registers[value] = name
        return name

    def emit(self, statement: str) -> None:
        self.body.append(f"\t{statement};")

    def run(self) -> str:
        for op in self.entry.body.block.ops:
            self._statement(op)
        params = ",\n".join(f"\t.param .u64 {p}" for p in self.params.values())
        block = ", ".join(str(d) for d in self.entry.block_dims)
        lines = [f".visible .entry {self.name}(", *([params] if params else []), ")",
                 f".maxntid {block}", "{"]
        for t, (ptx_type, prefix) in _REGISTERS.items():
            if self.counts[t]:
                lines.append(f"\t.reg .{ptx_type} {prefix}<{self.counts[t]}>;")
        lines.extend(self.shared)
        lines.append("")
        lines.extend(self.body)
        lines.extend(["\tret;", "}"])
        return "\n".join(lines) + "\n"

    def _statement(self, op: Operation) -> None:
        match op:
            case pg_ptx.LdParamOp():
                param = self.params.get(op.param)
                if param is None:
                    raise self._fail("ld_param of a value that is not an entry argument")
                self.emit(f"ld.param.u64 {self.define(op.result)}, [{param}]")
            case pg_ptx.SregOp():
                self.emit(f"mov.u32 {self.define(op.result)}, %{op.register.data}")
            case pg_ptx.ConstOp():
                t = op.result.type
                self.emit(f"mov.{_REGISTERS[t][0]} {self.define(op.result)}, "
                          f"{ptx_immediate(op.scalar, t)}")
            case pg_ptx.AluOp():
                args = ", ".join(self.reg(v) for v in op.inputs)
                self.emit(f"{op.opcode.data} {self.define(op.result)}, {args}")
            case pg_ptx.LdOp():
                self._load(op)
            case pg_ptx.StOp():
                self.emit(f"st.{op.space.data}.{op.mem_type.data} [{self.reg(op.address)}], "
                          f"{self.reg(op.value)}")
            case pg_ptx.SharedOp():
                self._shared(op)
            case _:
                self._register_or_control(op)

    def _register_or_control(self, op: Operation) -> None:
        match op:
            case pg_ptx.RegOp():
                self.define(op.result, op.element_type)
            case pg_ptx.ReadOp():
                t = op.result.type
                self.emit(f"mov.{_REGISTERS[t][0]} {self.define(op.result)}, {self.reg(op.reg)}")
            case pg_ptx.WriteOp():
                t = op.value.type
                self.emit(f"mov.{_REGISTERS[t][0]} {self.reg(op.reg)}, {self.reg(op.value)}")
            case pg_ptx.BarSyncOp():
                self.emit("bar.sync 0")
            case pg_ptx.LabelOp():
                self.body.append(f"{op.label.data}:")
            case pg_ptx.BraOp():
                if op.guard is None:
                    self.emit(f"bra.uni {op.target.data}")
                else:
                    negate = "!" if op.negated else ""
                    self.emit(f"@{negate}{self.reg(op.guard)} bra {op.target.data}")
            case _:
                raise self._fail(f"{op.name} is not a pg_ptx statement")

    def _load(self, op: pg_ptx.LdOp) -> None:
        t = op.result.type
        address = self.reg(op.address)
        result = self.define(op.result)
        load = f"ld.{op.space.data}.{op.mem_type.data} {result}, [{address}]"
        if op.guard is None or op.other is None:
            self.emit(load)
            return
        self.emit(f"mov.{_REGISTERS[t][0]} {result}, {ptx_immediate(scalar_value(op.other), t)}")
        self.emit(f"@{self.reg(op.guard)} {load}")

    def _shared(self, op: pg_ptx.SharedOp) -> None:
        buffer_type = op.buffer_type
        assert isinstance(buffer_type, BufferType)
        element = buffer_type.element_type
        width = 1 if element == i1 else element.bitwidth // 8  # type: ignore[attr-defined]
        size = buffer_type.size.data * width
        symbol = op.symbol.data
        self.shared.append(f"\t.shared .align {max(width, 4)} .b8 {symbol}[{size}];")
        self.emit(f"mov.u64 {self.define(op.result)}, {symbol}")


def entry_to_ptx(entry: pg_ptx.EntryOp) -> str:
    """One `pg_ptx.entry` as a PTX `.entry` directive."""
    return _EntryPrinter(entry).run()


def module_to_ptx(module: ModuleOp, arch: str = "sm_80") -> str:
    """Every `pg_ptx.entry` of `module`, in order, as one PTX module for `.target arch`."""
    header = "\n".join([
        "//",
        "// Generated by picograd",
        "//",
        "",
        f".version {ptx_version(arch)}",
        f".target {arch}",
        ".address_size 64",
        "",
    ])
    entries = [entry_to_ptx(op) for op in module.ops if isinstance(op, pg_ptx.EntryOp)]
    return "\n".join([header, *entries])


__all__ = [
    "PTX_ISA_VERSIONS",
    "PtxSourceError",
    "arch_for_capability",
    "entry_to_ptx",
    "module_to_ptx",
    "ptx_immediate",
    "ptx_version",
    "retarget_ptx",
]
