"""A small simulator of `pg_ptx` entries, to check the PTX lowering's semantics without a GPU.

    simulate(module, inputs) -> list[np.ndarray]     runs @main's schedule, kernels simulated
    run_entry(entry, buffers)                        one launch on host arrays, in place

Registers hold raw bits for integers (`i32`: 0 <= r < 2**32, `i64` likewise, `f16` the 16
bits of a half), `bool` for predicates and numpy `float32`/`float64` for floats, so each
opcode reads its operands with its own signedness, as the hardware does. Every thread of a
CTA runs as a generator; all of them run to the next `bar.sync`, then pass it together.

What PTX leaves unspecified is an error here, so a lowering that relies on it fails a test:
integer division by zero or `MIN / -1`, an access outside a buffer or into the wrong state
space, a register read before it is written, a branch to nowhere. `ex2`/`lg2`/`sin.approx`
are computed exactly (numpy, in float32): the hardware's approximations differ from them in
the last bits, which tests of those functions allow for. An f32 arithmetic result that is NaN
is the hardware's canonical NaN (0x7fffffff), not the operand's payload as on x86.
"""

from __future__ import annotations

import fractions
from collections.abc import Iterator, Sequence
from itertools import product

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f16, f32, f64, i1, i64
from xdsl.ir import Attribute, SSAValue

from picograd.dialects import pg_ptx
from picograd.dialects.dtypes import to_numpy_dtype
from picograd.dialects.pg import BufferType
from picograd.dialects.pg_sched import AllocOp, LaunchOp
from picograd.dialects.syntax import scalar_value


class SimulationError(AssertionError):
    """The PTX did something whose result PTX leaves unspecified."""


_REGION = 1 << 40  # address = region * _REGION + offset
_STEP_LIMIT = 2_000_000

_WIDTH = {"8": 8, "16": 16, "32": 32, "64": 64}


def _signed(bits: int, width: int) -> int:
    bits &= (1 << width) - 1
    return bits - (1 << width) if bits >> (width - 1) else bits


def _unsigned(value: int, width: int) -> int:
    return value & ((1 << width) - 1)


def _float_type(suffix: str) -> type:
    return {"f16": np.float16, "f32": np.float32, "f64": np.float64}[suffix]


def _to_float(value: object, suffix: str) -> np.floating:
    """A register's value read as a float of `suffix` (f16 registers hold bits)."""
    if suffix == "f16":
        return np.array(int(value), dtype=np.uint16).view(np.float16)[()]  # type: ignore
    return _float_type(suffix)(value)


def _from_float(value: float | np.floating, suffix: str) -> object:
    if suffix == "f16":
        return int(np.array(value, dtype=np.float16).view(np.uint16))
    return _float_type(suffix)(value)


def _register_width(t: Attribute) -> int:
    return 64 if t == i64 else 32


def _int_value(bits: int, suffix: str) -> int:
    """Register bits read as the integer type `suffix` (s8, u32, b64, ...)."""
    width = _WIDTH[suffix[1:]]
    return _signed(bits, width) if suffix[0] == "s" else _unsigned(bits, width)


def _saturate(x: float, suffix: str) -> int:
    """cvt.rzi float -> int: truncate, NaN -> 0, clamp to the type's range (PTX)."""
    if x != x:
        return 0
    width = _WIDTH[suffix[1:]]
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if suffix[0] == "s" else \
        (0, (1 << width) - 1)
    if x in (np.inf, -np.inf):
        return hi if x > 0 else lo
    return max(lo, min(hi, int(x)))


def _fma(a: np.floating, b: np.floating, c: np.floating, t: type) -> np.floating:
    if not all(np.isfinite(v) for v in (a, b, c)):
        return t(np.float64(a) * np.float64(b) + np.float64(c))
    exact = fractions.Fraction(float(a)) * fractions.Fraction(float(b)) + \
        fractions.Fraction(float(c))
    if t is np.float64:
        return np.float64(float(exact))
    return t(np.float64(float(exact)))  # f32: exact in f64 but for a rare double rounding


class _Memory:
    """Global buffers and the shared arrays of the running CTA, by address region."""

    def __init__(self, buffers: Sequence[np.ndarray]):
        self.regions: list[tuple[str, np.ndarray]] = [
            ("global", b.reshape(-1).view(np.uint8)) for b in buffers]
        self.shared_base = len(self.regions)

    def base(self, region: int) -> int:
        return (region + 1) * _REGION

    def bytes_at(self, space: str, address: int, size: int) -> np.ndarray:
        region, offset = address // _REGION - 1, address % _REGION
        if not 0 <= region < len(self.regions):
            raise SimulationError(f"{space} access at {address:#x}: no such buffer")
        kind, data = self.regions[region]
        if kind != space:
            raise SimulationError(f"{space} access at {address:#x} into {kind} memory")
        if offset % size or offset + size > data.size:
            raise SimulationError(f"{space} access of {size} bytes at offset {offset} of a "
                                  f"{data.size}-byte buffer (out of bounds or misaligned)")
        return data[offset: offset + size]


def _load(memory: _Memory, space: str, mem_type: str, address: int) -> object:
    if mem_type in ("f32", "f64"):
        size = int(mem_type[1:]) // 8
        return memory.bytes_at(space, address, size).view(_float_type(mem_type))[0]
    width = _WIDTH[mem_type[1:]]
    raw = int.from_bytes(memory.bytes_at(space, address, width // 8).tobytes(), "little")
    if mem_type == "b16":
        return raw  # an f16 register
    value = _signed(raw, width) if mem_type[0] == "s" else raw
    register = 64 if width == 64 else 32
    return _unsigned(value, register)


def _store(memory: _Memory, space: str, mem_type: str, address: int, value: object) -> None:
    if mem_type in ("f32", "f64"):
        data = np.array([value], dtype=_float_type(mem_type)).view(np.uint8)
    else:
        width = _WIDTH[mem_type[1:]]
        data = np.frombuffer(_unsigned(int(value), width).to_bytes(width // 8, "little"),
                             dtype=np.uint8)
    memory.bytes_at(space, address, data.size)[:] = data


class _Thread:
    """The registers of one thread."""

    def __init__(self, tid: tuple[int, ...], ctaid: tuple[int, ...], entry: pg_ptx.EntryOp):
        self.values: dict[SSAValue, object] = {}
        self.special = {}
        for name, dims in (("tid", tid), ("ctaid", ctaid), ("ntid", entry.block_dims),
                           ("nctaid", entry.grid_dims)):
            for axis, value in zip("xyz", dims, strict=True):
                self.special[f"{name}.{axis}"] = value

    def get(self, value: SSAValue) -> object:
        try:
            return self.values[value]
        except KeyError:
            raise SimulationError(f"register read before it is written: {value}") from None


def _alu(opcode: str, args: list[object], arg_types: Sequence[Attribute]) -> object:
    parts = opcode.split(".")
    name, suffix = parts[0], parts[-1]
    if name == "cvta":
        return args[0]
    if name == "setp":
        return _setp(parts[1], suffix, args)
    if name == "selp":
        return args[0] if args[2] else args[1]
    if name == "cvt":
        return _cvt(parts, args[0])
    if name == "mov":  # mov.b32 / mov.b64 between a float and an int register: the bits
        return _move_bits(args[0], arg_types[0])
    if suffix == "pred":
        a = [bool(x) for x in args]
        return {"and": lambda: a[0] and a[1], "or": lambda: a[0] or a[1],
                "xor": lambda: a[0] != a[1], "not": lambda: not a[0]}[name]()
    if suffix[0] == "f":
        return _float_alu(name, suffix, args)
    return _int_alu(name, parts, suffix, args, arg_types)


def _move_bits(x: object, source: Attribute) -> object:
    """The bits of register value `x` (of IR type `source`) in the other register class."""
    wide = source in (f64, i64)
    floats, ints = (np.float64, np.uint64) if wide else (np.float32, np.uint32)
    if source in (f32, f64):
        return int(np.array(x, dtype=floats).view(ints))
    return np.array(int(x), dtype=ints).view(floats)[()]  # type: ignore[call-overload]


def _setp(cmp: str, suffix: str, args: list[object]) -> bool:
    if suffix[0] == "f":
        a, b = (_to_float(x, suffix) for x in args)
        unordered = bool(np.isnan(a) or np.isnan(b))
        if cmp in ("nan", "num"):
            return unordered == (cmp == "nan")
        if unordered:  # `equ`, `ltu`, ... hold for a NaN; the ordered forms do not
            return cmp.endswith("u")
        x, y = float(a), float(b)
    else:
        x, y = (_int_value(int(v), suffix) for v in args)  # type: ignore[arg-type]
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
            "ge": x >= y}[cmp.removesuffix("u") if len(cmp) == 3 else cmp]


def _float_alu(name: str, suffix: str, args: list[object]) -> object:
    result = _float_result(name, suffix, args)
    if name != "neg" and isinstance(result, np.float32) and np.isnan(result):
        # An f32 add/mul/fma/... that gives a NaN gives the canonical 0x7fffffff, whatever
        # the operands' payloads (seen on an H200: NaN + -0.0 lost torch's 0x7fc00000).
        return _CANONICAL_F32_NAN
    return result


_CANONICAL_F32_NAN = np.uint32(0x7FFFFFFF).view(np.float32)


def _float_result(name: str, suffix: str, args: list[object]) -> object:
    t = _float_type(suffix)
    x = [t(v) for v in args]
    with np.errstate(all="ignore"):
        match name:
            case "add":
                return t(x[0] + x[1])
            case "sub":
                return t(x[0] - x[1])
            case "mul":
                return t(x[0] * x[1])
            case "div":
                return t(x[0] / x[1])
            case "neg":
                return t(-x[0])
            case "fma":
                return _fma(x[0], x[1], x[2], t)
            case "sqrt":
                return t(np.sqrt(x[0]))
            case "rcp":
                return t(t(1) / x[0])
            case "ex2":
                return t(np.exp2(x[0]))
            case "lg2":
                return t(np.log2(x[0]))
            case "sin":
                return t(np.sin(x[0]))
    raise SimulationError(f"float opcode {name}.{suffix} is not simulated")


_INT_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "min": min, "max": max, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
}


def _int_alu(name: str, parts: list[str], suffix: str, args: list[object],
             arg_types: Sequence[Attribute]) -> object:
    width = _WIDTH[suffix[1:]]
    opcode = ".".join(parts)
    if name == "mul" and parts[1] == "wide":
        a, b = (_int_value(int(v), suffix) for v in args)  # type: ignore[arg-type]
        return _unsigned(a * b, 64)
    if name in ("shl", "shr"):
        value, amount = int(args[0]), min(_unsigned(int(args[1]), 32), width)  # type: ignore
        if name == "shl":
            return _unsigned(value << amount, width)
        return _unsigned(_int_value(value, suffix) >> amount, width)
    a = [_int_value(int(v), suffix) for v in args]  # type: ignore[arg-type]
    if name in ("div", "rem"):
        return _unsigned(_divide(opcode, name, suffix, width, a[0], a[1]), width)
    if name in ("not", "neg"):
        return _unsigned(~a[0] if name == "not" else -a[0], width)
    if name not in _INT_OPS:
        raise SimulationError(f"integer opcode {opcode} is not simulated")
    return _unsigned(_INT_OPS[name](a[0], a[1]), width)


def _divide(opcode: str, name: str, suffix: str, width: int, a: int, b: int) -> int:
    """C's truncating division / remainder; what PTX leaves unspecified is an error."""
    if b == 0:
        raise SimulationError(f"{opcode}: division by zero")
    if suffix[0] == "s" and a == -(1 << (width - 1)) and b == -1:
        raise SimulationError(f"{opcode}: MIN / -1 overflows")
    q = abs(a) // abs(b)
    q = q if (a < 0) == (b < 0) else -q
    return q if name == "div" else a - q * b


def _cvt(parts: list[str], x: object) -> object:
    dst, src = parts[-2], parts[-1]
    rounding = parts[1] if len(parts) == 4 else ""
    dst_register = 64 if dst[1:] == "64" else 32
    with np.errstate(all="ignore"):
        if src[0] == "f":
            value = _to_float(x, src)
            if dst[0] == "f":
                if rounding == "rni":
                    return _from_float(np.rint(value), dst)
                return _from_float(_float_type(dst)(value), dst)
            return _unsigned(_saturate(float(value), dst), dst_register)
        value_int = _int_value(int(x), src)  # type: ignore[arg-type]
        if dst[0] == "f":
            return _from_float(_float_type(dst)(value_int), dst)
        width = _WIDTH[dst[1:]]
        narrowed = _signed(value_int, width) if dst[0] == "s" else _unsigned(value_int, width)
        return _unsigned(narrowed, dst_register)


def _const(op: pg_ptx.ConstOp) -> object:
    t, value = op.result.type, op.scalar
    if t == i1:
        return bool(value)
    if t == f16:
        return _from_float(value, "f16")
    if t == f32:
        return np.float32(value)
    if t == f64:
        return np.float64(value)
    return _unsigned(int(value), _register_width(t))


class _Cta:
    """What the threads of one CTA share: memory, parameter and shared-array addresses."""

    def __init__(self, memory: _Memory, params: dict[SSAValue, int], shared: dict[str, int]):
        self.memory, self.params, self.shared = memory, params, shared


def _guarded_other(op: pg_ptx.LdOp) -> object:
    """The register value of a guarded load whose guard fails."""
    assert op.other is not None
    t, other = op.result.type, scalar_value(op.other)
    if t == f16:
        return _from_float(other, "f16")
    if t in (f32, f64):
        return _float_type(str(t))(other)
    return _unsigned(int(other), _register_width(t))


def _execute(op: object, thread: _Thread, cta: _Cta) -> None:
    """Run one statement that is not control flow."""
    match op:
        case pg_ptx.LdParamOp():
            thread.values[op.result] = cta.params[op.param]
        case pg_ptx.SregOp():
            thread.values[op.result] = thread.special[op.register.data]
        case pg_ptx.ConstOp():
            thread.values[op.result] = _const(op)
        case pg_ptx.AluOp():
            args = [thread.get(v) for v in op.inputs]
            thread.values[op.result] = _alu(op.opcode.data, args, [v.type for v in op.inputs])
        case pg_ptx.ReadOp():
            thread.values[op.result] = thread.get(op.reg)
        case pg_ptx.WriteOp():
            thread.values[op.reg] = thread.get(op.value)
        case pg_ptx.SharedOp():
            thread.values[op.result] = cta.shared[op.symbol.data]
        case pg_ptx.LdOp():
            if op.guard is not None and not thread.get(op.guard):
                thread.values[op.result] = _guarded_other(op)
            else:
                address = int(thread.get(op.address))  # type: ignore[arg-type]
                thread.values[op.result] = _load(cta.memory, op.space.data, op.mem_type.data,
                                                 address)
        case pg_ptx.StOp():
            address = int(thread.get(op.address))  # type: ignore[arg-type]
            _store(cta.memory, op.space.data, op.mem_type.data, address, thread.get(op.value))
        case pg_ptx.RegOp() | pg_ptx.LabelOp():
            pass
        case _:
            raise SimulationError(f"{op} is not simulated")


def _run_thread(entry: pg_ptx.EntryOp, thread: _Thread, cta: _Cta) -> Iterator[int]:
    """Run one thread; suspend at each `bar.sync` (yielding its position)."""
    ops = list(entry.body.block.ops)
    labels = {op.label.data: pc for pc, op in enumerate(ops) if isinstance(op, pg_ptx.LabelOp)}
    pc = 0
    for _ in range(_STEP_LIMIT):
        if pc >= len(ops):
            return
        op = ops[pc]
        pc += 1
        if isinstance(op, pg_ptx.BarSyncOp):
            yield pc - 1
        elif isinstance(op, pg_ptx.BraOp):
            if op.guard is None or bool(thread.get(op.guard)) != op.negated:
                pc = labels[op.target.data]
        else:
            _execute(op, thread, cta)
    raise SimulationError(f"@{entry.sym_name.data}: more than {_STEP_LIMIT} steps")


def run_entry(entry: pg_ptx.EntryOp, buffers: Sequence[np.ndarray]) -> None:
    """Launch `entry` over its grid and block on `buffers` (written in place)."""
    memory = _Memory(buffers)
    param_bases = {arg: memory.base(i) for i, arg in enumerate(entry.args)}
    shared_ops = [op for op in entry.body.block.ops if isinstance(op, pg_ptx.SharedOp)]
    grid, block = entry.grid_dims, entry.block_dims
    for ctaid in product(*(range(n) for n in reversed(grid))):
        memory.regions = memory.regions[: memory.shared_base]
        shared_bases = {}
        for op in shared_ops:
            t = op.buffer_type
            assert isinstance(t, BufferType)
            nbytes = t.size.data * to_numpy_dtype(t.element_type).itemsize
            # Fresh shared memory is garbage, not zeros: a read before a write shows.
            memory.regions.append(("shared", np.full(nbytes, 0xA5, dtype=np.uint8)))
            shared_bases[op.symbol.data] = memory.base(len(memory.regions) - 1)
        cta = _Cta(memory, param_bases, shared_bases)
        threads = [
            _run_thread(entry, _Thread(tuple(reversed(tid)), tuple(reversed(ctaid)), entry), cta)
            for tid in product(*(range(n) for n in reversed(block)))
        ]
        while threads:  # one phase: every thread to its next barrier or its end
            stops = [next(t, None) for t in threads]
            if len(set(stops)) != 1:
                raise SimulationError(f"@{entry.sym_name.data}: threads of one CTA reach "
                                      f"different barriers / ends: {sorted(set(map(str, stops)))}")
            if stops[0] is None:
                break


def simulate(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run `@main` of a stage-5 PTX module: allocate, launch (simulated), return."""
    main = next(op for op in module.ops if isinstance(op, func.FuncOp)
                and op.sym_name.data == "main")
    entries = {op.sym_name.data: op for op in module.ops if isinstance(op, pg_ptx.EntryOp)}
    values: dict[SSAValue, np.ndarray] = {}
    for arg, x in zip(main.body.block.args, inputs, strict=True):
        t = arg.type
        assert isinstance(t, BufferType)
        values[arg] = np.array(x, dtype=to_numpy_dtype(t.element_type)).reshape(-1).copy()
    results: list[np.ndarray] = []
    for op in main.body.block.ops:
        if isinstance(op, AllocOp):
            t = op.result.type
            assert isinstance(t, BufferType)
            # Garbage, so that a kernel reading an element it did not write shows.
            dtype = to_numpy_dtype(t.element_type)
            garbage = np.full(t.size.data * dtype.itemsize, 0x7F, dtype=np.uint8)
            values[op.result] = garbage.view(dtype)
        elif isinstance(op, LaunchOp):
            run_entry(entries[op.kernel_name], [values[a] for a in op.args])
        elif isinstance(op, func.ReturnOp):
            results = [values[v].copy() for v in op.arguments]
    return results


__all__ = ["SimulationError", "run_entry", "simulate"]
