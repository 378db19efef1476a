"""convert-uop-to-ptx on hand-written GPU-form kernels: every op kind on every dtype lowers,
verifies, round-trips, assembles with ptxas for sm_80 and sm_90 (skipped without ptxas) and,
run on the `ptx_sim` simulator, gives the pg_uop interpreter's results; plus the semantics
the interpreter cannot show (integer division by zero, MIN / -1), sin and cos of every
magnitude (from tensors), the launch dimensions, the instruction choices and the errors for
what PTX cannot express."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence

import numpy as np
import pytest
from ir_programs import matmul_text
from ptx_sim import SimulationError, simulate
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

import picograd as pg
from picograd.compiler.pass_registry import all_passes
from picograd.compiler.pipelines import GPU_PTX, run_pipeline
from picograd.dialects import make_context
from picograd.dialects import pg_ptx as P
from picograd.frontend.realize import build_module, linearize
from picograd.interpreter import run
from picograd.lowering.ptx.convert_uop_to_ptx import ConvertUopToPtxPass
from picograd.lowering.ptx.printer import PTX_ISA_VERSIONS, module_to_ptx, retarget_ptx
from picograd.runtimes.program import launch_dims
from picograd.runtimes.ptxas import check_ptx, ptxas_path

ARCHS = ("sm_80", "sm_90")
needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed")

DTYPES = ("f32", "i32", "i1", "f16", "f64", "i8", "ui8", "i16", "i64")
FLOATS = ("f32", "f16", "f64")
N = 16  # work items, and elements per buffer
NUMPY = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i1": np.bool_,
         "i8": np.int8, "ui8": np.uint8, "i16": np.int16, "i32": np.int32, "i64": np.int64}


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def lower(text: str) -> ModuleOp:
    module = parse(text)
    ConvertUopToPtxPass().apply(make_context(), module)
    module.verify()
    return module


def entries(module: ModuleOp) -> dict[str, P.EntryOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, P.EntryOp)}


def opcodes(module: ModuleOp) -> list[str]:
    return [op.opcode.data for op in module.walk() if isinstance(op, P.AluOp)]


def assemble(module: ModuleOp) -> None:
    """ptxas for every target of ARCHS, when it is installed."""
    if ptxas_path() is None:
        return
    for arch in ARCHS:
        check_ptx(module_to_ptx(module, arch), arch)


def interpret(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [r.ravel() for r in run(module, inputs)]


# ── kernels ──────────────────────────────────────────────────────────────────


def buf(t: str, n: int = N) -> str:
    return f"!pg.buffer<{n}x{t}>"


def unary_kinds(t: str) -> tuple[str, ...]:
    if t == "f64":
        return ("neg", "sqrt", "recip")
    if t in FLOATS:
        return ("neg", "exp", "log", "sqrt", "sin", "exp2", "log2", "recip")
    return ("not",) if t == "i1" else ("neg", "not")


def binary_kinds(t: str) -> tuple[str, ...]:
    if t in FLOATS:
        return ("add", "sub", "mul", "div", "max", "min")
    if t == "i1":
        return ("and", "or", "xor", "max", "min")
    return ("add", "sub", "mul", "div", "mod", "max", "min", "and", "or", "xor")


CMP_KINDS = ("lt", "le", "gt", "ge", "eq", "ne")
# The exact widening of each dtype, to see every bit a register holds for a result.
WIDE = {"f32": "f64", "f16": "f64", "i32": "i64", "i8": "i64", "ui8": "i64", "i16": "i64"}


class KernelModule:
    """One module of single-op GPU kernels over the inputs `%a`, `%b` (and `%c` for casts) of
    one dtype; every kernel writes its own output, and @main returns all of them."""

    def __init__(self, t: str):
        self.t = t
        self.kernels: list[str] = []
        self.outputs: list[str] = []  # output element types, in kernel order
        self.inputs: list[str] = []  # the input buffers of each kernel ("ab" or "abc")

    def kernel(self, body: list[str], out: str, inputs: str = "ab") -> None:
        k = len(self.kernels)
        params = ", ".join(f"%{x}: {buf(self.t)}" for x in inputs)
        lines = [f"pg_uop.kernel @k{k}({params}, %out: {buf(out)}) {{",
                 f"  %l = pg_uop.special local_id 0 size {N}"]
        lines += [f"  %{v} = pg_uop.load %{x}[%l] : {buf(self.t)} -> {self.t}"
                  for v, x in zip("xyz", inputs, strict=False)]
        lines += [f"  {line}" for line in body]
        lines += [f"  pg_uop.store %r, %out[%l] : {out}, {buf(out)}", "}"]
        self.kernels.append("\n".join(lines))
        self.outputs.append(out)
        self.inputs.append(inputs)

    def text(self) -> str:
        t = self.t
        lines = [*self.kernels,
                 f"func.func @main(%a: {buf(t)}, %b: {buf(t)}, %c: {buf(t)}) -> "
                 f"({', '.join(buf(o) for o in self.outputs)}) {{"]
        for k, out in enumerate(self.outputs):
            lines.append(f"  %o{k} = pg_sched.alloc : {buf(out)}")
            args = ", ".join(f"%{x}" for x in self.inputs[k])
            types = ", ".join([buf(t)] * len(self.inputs[k]) + [buf(out)])
            lines.append(f"  pg_sched.launch @k{k}({args}, %o{k}) : {types}")
        outs = ", ".join(f"%o{k}" for k in range(len(self.outputs)))
        lines.append(f"  func.return {outs} : {', '.join(buf(o) for o in self.outputs)}")
        lines.append("}")
        return "\n".join(lines)


def every_op(t: str, with_casts: bool = True) -> KernelModule:
    """Plain and masked loads, every unary, binary and comparison kind (also widened before
    the store), where, and casts to every other dtype (from `%c`, whose values every target
    type can hold)."""
    m = KernelModule(t)
    m.kernel(["%r = pg_uop.binary " + ("xor" if t == "i1" else "max") + " %x, %y : " + t], t)
    other = "1.5" if t in FLOATS else "1" if t == "i1" else "3" if t == "ui8" else "-3"
    m.kernel([f"%lim = pg_uop.const {N - 3} : index", "%m = pg_uop.cmp lt %l, %lim : index",
              f"%r = pg_uop.load %a[%l] if %m else {other} : {buf(t)} -> {t}"], t)
    for kind in unary_kinds(t):
        m.kernel([f"%r = pg_uop.unary {kind} %x : {t}"], t)
    for kind in binary_kinds(t):
        m.kernel([f"%r = pg_uop.binary {kind} %x, %y : {t}"], t)
    wide = WIDE.get(t)
    if wide is not None:  # the register's full value: a narrow result must be re-extended
        for kind in unary_kinds(t):
            m.kernel([f"%s = pg_uop.unary {kind} %x : {t}",
                      f"%r = pg_uop.cast %s : {t} to {wide}"], wide)
        for kind in binary_kinds(t):
            m.kernel([f"%s = pg_uop.binary {kind} %x, %y : {t}",
                      f"%r = pg_uop.cast %s : {t} to {wide}"], wide)
    for kind in CMP_KINDS:
        m.kernel([f"%r = pg_uop.cmp {kind} %x, %y : {t}"], "i1")
    m.kernel(["%m = pg_uop.cmp lt %x, %y : " + t, f"%r = pg_uop.where %m, %y, %x : {t}"], t)
    if with_casts:
        for dst in DTYPES:
            if dst != t:
                m.kernel([f"%r = pg_uop.cast %z : {t} to {dst}"], dst, inputs="abc")
        if t != "i1":
            m.kernel([f"%i = pg_uop.cast %z : {t} to index", f"%r = pg_uop.cast %i : index to {t}"],
                     t, inputs="abc")
    return m


def inputs_for(t: str, seed: int = 0) -> list[np.ndarray]:
    """`a`, `b`: edge values and random ones (no zero divisor in `b`, which the interpreter
    refuses); `c`: values every dtype holds (0..100, so float -> int casts are defined)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(NUMPY[t])
    if t == "i1":
        a, b = rng.integers(0, 2, N).astype(bool), rng.integers(0, 2, N).astype(bool)
        c = rng.integers(0, 2, N).astype(bool)
        return [a, b, c]
    if t in FLOATS:
        edges = [0.0, -0.0, 1.0, -1.5, math.inf, -math.inf, math.nan, 3.25, 1e-3, 100.0, 7.0,
                 -2.0, 0.5, 1e4, -7.75, 2.0]
        a = np.array(edges, dtype=dtype)
        b = np.array(rng.permutation(edges), dtype=dtype)
        b[np.isnan(a)] = 2.0  # one NaN operand at a time, and both NaN once
        b[0] = math.nan
        c = np.array(rng.uniform(0, 100, N), dtype=dtype)
        c[:4] = [0.0, -0.0, 99.75, 1.5]
        return [a, b, c]
    info = np.iinfo(dtype)
    edges = [0, 1, -1, info.min, info.max, 7, -7, 3, 100, -100, 5, info.min + 1, 2, -2, 42, 9]
    a = np.array([int(np.clip(e, info.min, info.max)) for e in edges], dtype=dtype)
    b = rng.permutation(a)
    b[b == 0] = 3 if info.min == 0 else -1
    c = np.array(rng.integers(0, 101, N), dtype=dtype)
    return [a, b, c]


# ── every op on every dtype ──────────────────────────────────────────────────


@pytest.mark.parametrize("t", DTYPES)
def test_every_op_lowers_verifies_and_round_trips(t: str) -> None:
    module = lower(every_op(t).text())
    assert not [op for op in module.walk() if op.name.startswith("pg_uop.")]
    text = str(module)
    assert str(Parser(make_context(), text).parse_module()) == text
    for op in module.walk():
        if isinstance(op, P.AluOp):  # a bitcast opcode too: sin reads its argument's bits
            assert P.signatures(op.opcode.data), op.opcode.data


@needs_ptxas
@pytest.mark.parametrize("t", DTYPES)
def test_every_op_assembles(t: str) -> None:
    module = lower(every_op(t).text())
    for arch in ARCHS:
        check_ptx(module_to_ptx(module, arch), arch)


APPROXIMATE = ("exp", "log", "sin", "exp2", "log2")


def compare(t: str, module_text: str, kernels: KernelModule, got: list[np.ndarray],
            want: list[np.ndarray]) -> None:
    for k, (w, g) in enumerate(zip(want, got, strict=True)):
        kernel = kernels.kernels[k]
        where = f"{t} kernel k{k}:\n{kernel}"
        assert w.dtype == g.dtype, where
        if w.dtype.kind == "f" and any(f"unary {f} " in kernel for f in APPROXIMATE):
            # ex2/lg2/sin.approx are not numpy's functions; f16 rounds their f32 results
            rtol = 2e-3 if w.dtype == np.float16 else 2e-6
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True,
                                       err_msg=where)
        elif w.dtype.kind == "f":
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=where)
            ok = ~np.isnan(w)
            bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[w.dtype.itemsize]
            np.testing.assert_array_equal(g[ok].view(bits), w[ok].view(bits), err_msg=where)
        else:
            np.testing.assert_array_equal(g, w, err_msg=where)


@pytest.mark.parametrize("t", DTYPES)
def test_every_op_matches_the_interpreter(t: str) -> None:
    kernels = every_op(t)
    text = kernels.text()
    inputs = inputs_for(t)
    want = interpret(parse(text), inputs)
    got = simulate(lower(text), inputs)
    compare(t, text, kernels, got, want)


# ── semantics the interpreter leaves out ─────────────────────────────────────


def divmod_module(t: str) -> str:
    return f"""
    pg_uop.kernel @div(%a: {buf(t, 6)}, %b: {buf(t, 6)}, %q: {buf(t, 6)}, %r: {buf(t, 6)}) {{
      %l = pg_uop.special local_id 0 size 6
      %x = pg_uop.load %a[%l] : {buf(t, 6)} -> {t}
      %y = pg_uop.load %b[%l] : {buf(t, 6)} -> {t}
      %d = pg_uop.binary div %x, %y : {t}
      %m = pg_uop.binary mod %x, %y : {t}
      pg_uop.store %d, %q[%l] : {t}, {buf(t, 6)}
      pg_uop.store %m, %r[%l] : {t}, {buf(t, 6)}
    }}
    func.func @main(%a: {buf(t, 6)}, %b: {buf(t, 6)}) -> ({buf(t, 6)}, {buf(t, 6)}) {{
      %q = pg_sched.alloc : {buf(t, 6)}
      %r = pg_sched.alloc : {buf(t, 6)}
      pg_sched.launch @div(%a, %b, %q, %r) : {buf(t, 6)}, {buf(t, 6)}, {buf(t, 6)}, {buf(t, 6)}
      func.return %q, %r : {buf(t, 6)}, {buf(t, 6)}
    }}"""


@pytest.mark.parametrize("t", ("i32", "i8", "i16", "i64", "ui8"))
def test_integer_division_never_traps(t: str) -> None:
    """x / 0 -> 0, x % 0 -> 0, MIN / -1 -> MIN, MIN % -1 -> 0 (numpy's results); the
    simulator raises if the PTX divides by 0 or -1."""
    dtype = np.dtype(NUMPY[t])
    info = np.iinfo(dtype)
    a = np.array([7, -7 if info.min else 200, info.min, info.min, info.max, 9], dtype=dtype)
    b = np.array([0, 0, -1 if info.min else 0, 1, -1 if info.min else 255, 4], dtype=dtype)
    q, r = simulate(lower(divmod_module(t)), [a, b])
    if info.min:
        np.testing.assert_array_equal(q, np.array([0, 0, info.min, info.min, -info.max, 2],
                                                  dtype=dtype))
        np.testing.assert_array_equal(r, np.array([0, 0, 0, 0, 0, 1], dtype=dtype))
    else:
        np.testing.assert_array_equal(q, np.array([0, 0, 0, 0, 1, 2], dtype=dtype))
        np.testing.assert_array_equal(r, np.array([0, 0, 0, 0, 0, 1], dtype=dtype))


def test_the_simulator_catches_a_division_by_zero() -> None:
    module = lower(divmod_module("i32"))
    for op in module.walk():  # drop the safe divisor: divide by %b itself
        if isinstance(op, P.AluOp) and op.opcode.data.startswith(("div.", "rem.")):
            divisor = op.inputs[1].owner
            assert isinstance(divisor, P.AluOp) and divisor.opcode.data == "selp.b32"
            op.operands[1] = divisor.inputs[1]
    with pytest.raises(SimulationError, match="division by zero"):
        simulate(module, [np.ones(6, np.int32), np.zeros(6, np.int32)])


CAST_KERNEL = """
pg_uop.kernel @k(%a: !pg.buffer<6x{src}>, %out: !pg.buffer<6x{dst}>) {{
  %l = pg_uop.special local_id 0 size 6
  %x = pg_uop.load %a[%l] : !pg.buffer<6x{src}> -> {src}
  %r = pg_uop.cast %x : {src} to {dst}
  pg_uop.store %r, %out[%l] : {dst}, !pg.buffer<6x{dst}>
}}
func.func @main(%a: !pg.buffer<6x{src}>) -> !pg.buffer<6x{dst}> {{
  %out = pg_sched.alloc : !pg.buffer<6x{dst}>
  pg_sched.launch @k(%a, %out) : !pg.buffer<6x{src}>, !pg.buffer<6x{dst}>
  func.return %out : !pg.buffer<6x{dst}>
}}
"""


@pytest.mark.parametrize(("src", "dst", "values", "want"), [
    ("f32", "ui8", [-1.0, 255.9, 3.7, -3.7, 0.0, 128.5], [255, 255, 3, 253, 0, 128]),
    ("f32", "i8", [-1.9, 127.9, -128.5, 3.7, -3.7, 0.5], [-1, 127, -128, 3, -3, 0]),
    ("f32", "i1", [0.0, -0.0, math.nan, math.inf, 1e-30, -2.0], [0, 0, 1, 1, 1, 1]),
    ("i32", "i8", [300, -129, 128, 255, -1, 7], [44, 127, -128, -1, -1, 7]),
    ("i64", "i32", [2**40 + 5, -(2**33) - 1, 7, -7, 2**31, 0], [5, -1, 7, -7, -(2**31), 0]),
    ("i32", "f16", [2049, 65504, 70000, -3, 1, 0], [2048, 65504, math.inf, -3, 1, 0]),
    ("f64", "f16", [1.0 + 2**-11, 0.1, -1e6, 1e-8, 2.0, 0.0],
     [1.0, 0.0999755859375, -math.inf, 0.0, 2.0, 0.0]),
    ("ui8", "i64", [255, 0, 128, 1, 7, 200], [255, 0, 128, 1, 7, 200]),
    ("i8", "f32", [-128, 127, -1, 0, 5, -5], [-128, 127, -1, 0, 5, -5]),
])
def test_casts(src: str, dst: str, values: list, want: list) -> None:
    """C's conversions (float -> narrow ints through int32, as on the CPU targets); values
    no numpy cast defines portably, so they are not compared with the interpreter."""
    text = CAST_KERNEL.format(src=src, dst=dst)
    with np.errstate(all="ignore"):
        a = np.array(values).astype(NUMPY[src])
    (got,) = simulate(lower(text), [a])
    np.testing.assert_array_equal(got, np.array(want).astype(got.dtype))


def test_f16_arithmetic_rounds_every_result() -> None:
    """(a + b) * c in f16 rounds a + b first, as numpy does."""
    t = "f16"
    text = f"""
    pg_uop.kernel @k(%a: {buf(t, 4)}, %out: {buf(t, 4)}) {{
      %l = pg_uop.special local_id 0 size 4
      %x = pg_uop.load %a[%l] : {buf(t, 4)} -> {t}
      %eps = pg_uop.const 0.000244140625 : {t}
      %s = pg_uop.binary add %x, %eps : {t}
      %d = pg_uop.binary sub %s, %x : {t}
      pg_uop.store %d, %out[%l] : {t}, {buf(t, 4)}
    }}
    func.func @main(%a: {buf(t, 4)}) -> {buf(t, 4)} {{
      %out = pg_sched.alloc : {buf(t, 4)}
      pg_sched.launch @k(%a, %out) : {buf(t, 4)}, {buf(t, 4)}
      func.return %out : {buf(t, 4)}
    }}"""
    a = np.array([1.0, 2.0, 0.0, 1024.0], dtype=np.float16)
    (got,) = simulate(lower(text), [a])
    np.testing.assert_array_equal(got, interpret(parse(text), [a])[0])
    assert got[0] == 0 and got[2] == np.float16(0.000244140625)


# ── control flow, shared memory, launch dimensions ───────────────────────────

REDUCE = """
pg_uop.kernel @sum(%a: !pg.buffer<1000xf32>, %out: !pg.buffer<4xf32>) {
  %g = pg_uop.special group_id 0 size 4
  %l = pg_uop.special local_id 0 size 64
  %s = pg_uop.shared : !pg.buffer<64xf32>
  %acc = pg_uop.acc 0.0 : f32
  %j = pg_uop.range 0 to 4 reduce
  %c64 = pg_uop.const 64 : index
  %c250 = pg_uop.const 250 : index
  %gb = pg_uop.binary mul %g, %c250 : index
  %o = pg_uop.binary mul %j, %c64 : index
  %jl = pg_uop.binary add %o, %l : index
  %ok = pg_uop.cmp lt %jl, %c250 : index
  %idx = pg_uop.binary add %gb, %jl : index
  %v = pg_uop.load %a[%idx] if %ok else 0.0 : !pg.buffer<1000xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %v : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %j
  %r = pg_uop.acc_load %acc : f32
  pg_uop.store %r, %s[%l] : f32, !pg.buffer<64xf32>
  pg_uop.barrier
  %zero = pg_uop.const 0 : index
  %first = pg_uop.cmp eq %l, %zero : index
  pg_uop.if %first
  %total = pg_uop.acc 0.0 : f32
  %i = pg_uop.range 0 to 64 loop
  %x = pg_uop.load %s[%i] : !pg.buffer<64xf32> -> f32
  %t0 = pg_uop.acc_load %total : f32
  %t1 = pg_uop.binary add %t0, %x : f32
  pg_uop.acc_store %total, %t1 : f32
  pg_uop.end %i
  %nan = pg_uop.const nan : f32
  %e = pg_uop.range 3 to 3 loop
  pg_uop.store %nan, %out[%g] : f32, !pg.buffer<4xf32>
  pg_uop.end %e
  %t = pg_uop.acc_load %total : f32
  pg_uop.store %t, %out[%g] : f32, !pg.buffer<4xf32>
  pg_uop.endif
}
func.func @main(%a: !pg.buffer<1000xf32>) -> !pg.buffer<4xf32> {
  %out = pg_sched.alloc : !pg.buffer<4xf32>
  pg_sched.launch @sum(%a, %out) : !pg.buffer<1000xf32>, !pg.buffer<4xf32>
  func.return %out : !pg.buffer<4xf32>
}
"""


def test_group_reduction_with_shared_memory_loops_and_ifs() -> None:
    module = lower(REDUCE)
    entry = entries(module)["sum"]
    assert entry.grid_dims == (4, 1, 1) and entry.block_dims == (64, 1, 1)
    names = [op.name for op in entry.body.block.ops]
    assert "pg_ptx.bar_sync" in names and "pg_ptx.shared" in names
    a = np.random.default_rng(1).integers(-50, 50, 1000).astype(np.float32)
    (got,) = simulate(module, [a])
    np.testing.assert_array_equal(got, interpret(parse(REDUCE), [a])[0])
    np.testing.assert_array_equal(got, a.reshape(4, 250).sum(axis=1))
    assemble(module)


def test_launch_dims_come_from_the_specials() -> None:
    module = lower("""
    pg_uop.kernel @k(%a: !pg.buffer<4096xf32>) {
      %g0 = pg_uop.special group_id 0 size 8
      %g1 = pg_uop.special group_id 1 size 2
      %l0 = pg_uop.special local_id 0 size 128
      %l2 = pg_uop.special local_id 2 size 2
      pg_uop.barrier
    }
    pg_uop.kernel @one(%a: !pg.buffer<4xf32>) {
    }""")
    k, one = entries(module)["k"], entries(module)["one"]
    assert k.grid_dims == (8, 2, 1) and k.block_dims == (128, 1, 2)
    assert one.grid_dims == (1, 1, 1) and one.block_dims == (1, 1, 1)
    sregs = sorted(op.register.data for op in k.walk() if isinstance(op, P.SregOp))
    assert sregs == ["ctaid.x", "ctaid.y", "tid.x", "tid.z"]
    assemble(module)


def index_kernel(kind: str, divisor: int) -> str:
    return f"""
    pg_uop.kernel @k(%a: !pg.buffer<64xf32>) {{
      %l = pg_uop.special local_id 0 size 64
      %c = pg_uop.const {divisor} : index
      %q = pg_uop.binary {kind} %l, %c : index
      %x = pg_uop.load %a[%q] : !pg.buffer<64xf32> -> f32
      pg_uop.store %x, %a[%l] : f32, !pg.buffer<64xf32>
    }}"""


@pytest.mark.parametrize(("kind", "divisor", "want"), [
    ("div", 8, "shr.u32"), ("mod", 8, "and.b32"), ("div", 1, "shr.u32"),
    ("div", 6, "div.u32"), ("mod", 6, "rem.u32"),
])
def test_index_division(kind: str, divisor: int, want: str) -> None:
    module = lower(index_kernel(kind, divisor))
    assert want in opcodes(module)
    assert not any(o.startswith(("div.s", "rem.s")) for o in opcodes(module))


def test_float_ops_round_to_nearest_and_are_never_contracted() -> None:
    ops = opcodes(lower(every_op("f32", with_casts=False).text()))
    arithmetic = [o for o in ops if o.split(".")[0] in ("add", "sub", "mul", "div")
                  and o.endswith("f32")]
    assert arithmetic and all(".rn." in o for o in arithmetic)
    assert {"ex2.approx.f32", "lg2.approx.f32", "sin.approx.f32", "sqrt.rn.f32",
            "rcp.rn.f32", "cvt.rni.f32.f32"} <= set(ops)


def test_addresses_are_64_bit_and_bools_are_bytes() -> None:
    module = lower(every_op("i1", with_casts=False).text())
    loads = [op for op in module.walk() if isinstance(op, P.LdOp)]
    stores = [op for op in module.walk() if isinstance(op, P.StOp)]
    assert {op.mem_type.data for op in loads + stores} == {"u8"}
    assert "mul.wide.s32" in opcodes(module)


# ── sin's argument reduction ─────────────────────────────────────────────────
# Exact (Payne-Hanek, on the bits of 1 / (2pi)) for |x| >= 2^23, where the f32 reduction by
# the nearest multiple of 2pi drifted (1e-6 off at 2^27, 0.1 at 2^44, a random result from
# about 2^48). The simulator computes `sin.approx` as numpy's sin, so these measure the
# reduction's error.

SIN_MAX_ERROR = 2e-6  # absolute; measured: 1.9e-7 for sin, 4.6e-7 for cos (1 - 2 sin(x/2)^2)
# around the switch to the exact reduction, the largest floats, and small ones
SIN_EDGES = np.array([8388607.5, 8388608.0, 8388609.0, 16777216.0, 2147483647.0, 1e10,
                      3.4028235e38, 1.0, 0.5, 1e-30, 1e-45], np.float32)


def sin_sweep() -> np.ndarray:
    """Log-spaced magnitudes from 1 to 3.4e38 with both signs, the edges, and random finite
    floats of every exponent."""
    sweep = np.geomspace(1.0, 3.4e38, 1000).astype(np.float32)
    bits = np.random.default_rng(0).integers(0, 2**32, 1000, dtype=np.uint64)
    random = bits.astype(np.uint32).view(np.float32)
    return np.concatenate([sweep, -sweep, SIN_EDGES, -SIN_EDGES, random[np.isfinite(random)]])


def tensor_ptx(out: pg.Tensor) -> tuple[ModuleOp, list[np.ndarray]]:
    """The GPU_PTX module of a lazy tensor, and its input buffers."""
    nodes, kernels, buffers, positions = linearize([out._node])
    return run_pipeline(build_module(nodes, kernels, positions), GPU_PTX), list(buffers)


def simulated(out: pg.Tensor) -> np.ndarray:
    (got,) = simulate(*tensor_ptx(out))
    return got


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_and_cos_of_every_magnitude(name: str) -> None:
    x = sin_sweep()
    got = simulated(getattr(pg.Tensor(x), name)()).astype(np.float64)
    error = np.abs(got - getattr(np, name)(x.astype(np.float64)))
    worst = int(error.argmax())
    assert error[worst] <= SIN_MAX_ERROR, \
        f"{name}({x[worst]!r}) is {got[worst]}, off by {error[worst]}"


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_and_cos_of_inf_and_nan_are_nan(name: str) -> None:
    x = np.array([math.inf, -math.inf, math.nan, -math.nan], np.float32)
    assert np.isnan(simulated(getattr(pg.Tensor(x), name)())).all()


def test_sin_keeps_the_sign_of_a_zero() -> None:
    x = np.array([-0.0, 0.0], np.float32)
    got = simulated(pg.Tensor(x).sin())
    np.testing.assert_array_equal(np.signbit(got), [True, False])  # as C's and torch's


def test_sin_selects_between_two_reductions() -> None:
    """The fast reduction stays for small |x|: both are computed, one is selected."""
    module, _ = tensor_ptx(pg.Tensor(np.ones(4, np.float32)).sin())
    ops = opcodes(module)
    assert ops.count("sin.approx.f32") == 1
    assert {"cvt.rni.f32.f32", "mul.wide.u32", "cvt.rn.f32.s64", "selp.f32"} <= set(ops)


@needs_ptxas
def test_sin_and_cos_assemble() -> None:
    module, _ = tensor_ptx(pg.Tensor(np.ones(4, np.float32)).cos())
    for arch in ARCHS:
        check_ptx(module_to_ptx(module, arch), arch)


# ── errors ───────────────────────────────────────────────────────────────────


def test_rejects_global_id() -> None:
    with pytest.raises(PassFailedException,
                       match=r"convert-uop-to-ptx: @k: pg_uop.special global_id .*uop-gpu-map"):
        lower("""
        pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
          %g = pg_uop.special global_id 0 size 4
        }""")


def test_rejects_a_special_with_two_sizes() -> None:
    with pytest.raises(PassFailedException, match="local_id 0 has two sizes, 4 and 8"):
        lower("""
        pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
          %l = pg_uop.special local_id 0 size 4
          %m = pg_uop.special local_id 0 size 8
        }""")


@pytest.mark.parametrize("kind", ("exp", "log", "sin", "exp2", "log2"))
def test_rejects_f64_transcendentals(kind: str) -> None:
    with pytest.raises(PassFailedException, match=rf"@k: {kind} on f64 has no PTX lowering"):
        lower(f"""
        pg_uop.kernel @k(%a: !pg.buffer<4xf64>) {{
          %c = pg_uop.const 0 : index
          %x = pg_uop.load %a[%c] : !pg.buffer<4xf64> -> f64
          %y = pg_uop.unary {kind} %x : f64
        }}""")


def test_rejects_an_index_constant_past_32_bits() -> None:
    with pytest.raises(PassFailedException, match="does not fit PTX's 32-bit index"):
        lower("""
        pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
          %c = pg_uop.const 4294967296 : index
        }""")


def test_registered_under_its_name() -> None:
    assert all_passes()["convert-uop-to-ptx"]() is ConvertUopToPtxPass


# ── the printer ──────────────────────────────────────────────────────────────


def test_module_header_per_arch() -> None:
    module = lower(index_kernel("div", 8))
    for arch, version in PTX_ISA_VERSIONS.items():
        text = module_to_ptx(module, arch)
        assert f".version {version}\n.target {arch}\n.address_size 64\n" in text
        assert re.search(r"\.visible \.entry k\(\n\t\.param \.u64 k_param_0\n\)\n"
                         r"\.maxntid 64, 1, 1\n\{", text)


@needs_ptxas
def test_every_arch_of_the_table_assembles() -> None:
    module = lower(REDUCE)
    for arch in PTX_ISA_VERSIONS:
        check_ptx(module_to_ptx(module, arch), arch)


@needs_ptxas
def test_every_alu_opcode_assembles() -> None:
    """The allow-list is sound: ptxas accepts each opcode with the types it lists, for
    every architecture of the table."""
    classes = {"i1": ("pred", "%p"), "f16": ("b16", "%h"), "i32": ("b32", "%r"),
               "i64": ("b64", "%rd"), "f32": ("f32", "%f"), "f64": ("f64", "%fd")}
    lines = [".version 7.0", ".target sm_80", ".address_size 64", ".visible .entry k()", "{"]
    lines += [f"\t.reg .{ptx} {prefix}<2>;" for ptx, prefix in classes.values()]
    for opcode, (inputs, result) in P.ALU_OPCODES.items():
        args = ", ".join(f"{classes[str(t)][1]}0" for t in inputs)
        lines.append(f"\t{opcode} {classes[str(result)][1]}1, {args};")
    lines += ["\tret;", "}"]
    for arch in PTX_ISA_VERSIONS:
        check_ptx(retarget_ptx("\n".join(lines), arch), arch)


@needs_ptxas
def test_every_memory_type_assembles() -> None:
    classes = {"i32": "%r0", "i64": "%rd1", "f16": "%h0", "f32": "%f0", "f64": "%fd0"}
    lines = [".version 7.0", ".target sm_80", ".address_size 64", ".visible .entry k()", "{",
             "\t.reg .pred %p<1>;", "\t.reg .b16 %h<1>;", "\t.reg .b32 %r<1>;",
             "\t.reg .b64 %rd<2>;", "\t.reg .f32 %f<1>;", "\t.reg .f64 %fd<1>;",
             "\t.shared .align 8 .b8 s[8];", "\tmov.u64 %rd0, s;", "\tmov.pred %p0, 1;"]
    for space in P.STATE_SPACES:
        for mem_type, register in P.MEMORY_TYPES.items():
            reg = classes[str(register)]
            lines.append(f"\t@%p0 ld.{space}.{mem_type} {reg}, [%rd0];")
            lines.append(f"\tst.{space}.{mem_type} [%rd0], {reg};")
    lines += ["\tret;", "}"]
    for arch in PTX_ISA_VERSIONS:
        check_ptx(retarget_ptx("\n".join(lines), arch), arch)


MATMUL = matmul_text(8, 12, 16)


CUDA_TILES = ("loop-upcast{rows=8 cols=8 min-tiles=65536},"
              "loop-upcast{rows=4 cols=4 min-tiles=65536}")


@pytest.mark.parametrize(("min_tiles", "work_items"), [((2, 8), 2), ((3, 8), 8), ((3, 9), 128)])
def test_the_cuda_pipeline_tiles_matmuls(min_tiles: tuple[int, int], work_items: int) -> None:
    # GPU_PTX's tiles per work item, their thresholds lowered to this 8 x 16 matmul's 2
    # tiles of 8 x 8 or 8 of 4 x 4: simulated, the tiled kernel gives numpy's product; with
    # neither, a work item per output
    assert CUDA_TILES in GPU_PTX
    module = parse(MATMUL)
    run_pipeline(module, GPU_PTX.replace(CUDA_TILES, CUDA_TILES.replace(
        "min-tiles=65536", f"min-tiles={min_tiles[0]}", 1).replace(
        "min-tiles=65536", f"min-tiles={min_tiles[1]}")))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 12), np.float32), rng.standard_normal((12, 16), np.float32)
    (got,) = simulate(module, [a, b])
    np.testing.assert_allclose(got.reshape(8, 16), a @ b, rtol=1e-5, atol=1e-5)
    ((grid, block),) = launch_dims(module).values()
    assert math.prod(grid) * math.prod(block) == work_items
