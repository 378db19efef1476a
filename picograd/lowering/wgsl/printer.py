"""Print the `pg_wgsl.fn` kernels of a module as one WGSL shader module.

    module_to_wgsl(module) -> str

Each `pg_wgsl` op is one line of WGSL, printed in block order (see
`picograd/dialects/pg_wgsl.py`); other ops of the module (the `func.func @main` schedule)
are skipped. Every kernel becomes one entry point of the same name, so one shader module
holds all the kernels of a graph and the runtime picks them by name:

    @group(0) @binding(0) var<storage, read_write> k0_p0: array<f32>;   one per buffer
    @group(0) @binding(1) var<storage, read_write> k0_p1: array<u32>;   (a bool buffer)
    var<workgroup> k0_s0: array<f32, 64>;                               pg_wgsl.workgroup

    @compute @workgroup_size(64, 1, 1)
    fn k0(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
      let v0_g = i32(wid.x);
      ...
    }

* Module-scope names carry the kernel's name, so kernels never share a variable; two
  kernels may use the same binding numbers because an entry point only binds the
  variables it uses (the runtime gives each pipeline its own layout).
* A bool buffer is `array<u32>` (bool is not host-shareable): loads are `x != 0u`, stores
  `select(0u, 1u, v)`. Workgroup arrays of bools are stored the same way.
* The types WGSL lacks are emulated (`pg_wgsl.held_as`): an f16 value is an f32, an i8,
  ui8 or i16 value an i32, each within the narrow type's values, and so is each element
  of their buffers: one element per 32-bit word. Packing two f16 or four i8 per word would
  save memory, but storing one element would then need an atomic read-modify-write of
  the word; widening keeps every store a plain store. A float -> int cast saturates at the
  i32 range with NaN -> 0 (`pg_i32`, as on the CPU: docs/design.md, "Float to int casts"),
  then a cast into a narrow integer wraps (`(x << 24u) >> 24u` for i8, `x & 255i` for
  ui8); a cast into f16 rounds to nearest even with integer operations on the bits
  (`pg_f16`), since WGSL leaves the rounding of
  `pack2x16float` to the implementation and its overflow indeterminate. A bitcast between
  f16 and i16 builds or reads the f16 bits the same way (`pg_f16_bits`, `pg_f16_from_bits`).
* f32 literals are exact (`%.9g` round-trips); inf and NaN, which WGSL cannot spell (a
  constant expression that overflows is an error), are `bitcast<f32>` of their bits.
* Integer `/` and `%` never trap and match the CPU targets: a zero divisor gives 0 (WGSL
  would give the dividend for `/`), `MIN / -1` is MIN, `MIN % -1` is 0 (helpers `pg_div`,
  `pg_mod`). i32 arithmetic wraps around, as WGSL defines it at run time. f32 `/` by a zero
  gives IEEE's NaN or ±inf (`pg_fdiv`): Mesa folded `x / 0.0` with a constant zero to 0.0.
* `sin` is `pg_sin`: Mesa's built-in below 2^23 (accurate there), an exact (Payne-Hanek)
  argument reduction above, where Mesa's is wrong (sin(2147483647.0) gave -1.0); about
  3e-7 absolute error there.
* NaN keeps its IEEE meaning although WGSL lets a compiler assume floats are never NaN
  (Mesa's does: it folds `x != x` to false). NaN is recognised on the bits (`pg_isnan`), f32
  comparisons test for it explicitly (`a < b && pg_ordered(a, b)`, `a != b ||
  !pg_ordered(a, b)`), `max`/`min` propagate it like numpy (`pg_max`, `pg_min`) and f32 ->
  bool is "not ±0" on the bits. The helpers a module uses are printed before its kernels.
* A masked load reads element 0 where the mask fails (always in bounds), then selects.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import IntegerType, ModuleOp, f16, f32, i1, i32
from xdsl.ir import Attribute, Operation, SSAValue

from picograd.dialects import pg_wgsl
from picograd.dialects.dtypes import is_bool, is_float, is_unsigned, to_numpy_dtype
from picograd.dialects.pg import BufferType
from picograd.dialects.syntax import scalar_value
from picograd.lowering.kernel_source import KernelSource

HEADER = "// picograd: one compute entry point per kernel\n"

_KERNEL_NAME = re.compile(r"(?!__)[A-Za-z_][A-Za-z0-9_]*")
_TYPES: dict[Attribute, str] = {f32: "f32", i32: "i32", i1: "bool"}
# An f16 value as the f32 the emulation holds: 2^-24 is the spacing of f16 subnormals.
_F16_SUBNORMAL_STEP = "5.96046448e-08f"
# The first 256 bits of 1 / (2 pi) after the point, in 32-bit words (pg_sin)
_INV_2PI_WORDS = ("0x28be60dbu, 0x9391054au, 0x7f09d5f4u, 0x7d4d3770u, 0x36d8a566u, "
                  "0x4f10e410u, 0x7f9458eau, 0xf7aef158u")
_AXES = "xyz"
_BUILTIN_PARAMS = {"workgroup_id": "wid", "local_invocation_id": "lid"}


class WgslSourceError(ValueError):
    """The module holds something `module_to_wgsl` cannot print (a malformed pg_wgsl.fn)."""


def wgsl_type(t: Attribute) -> str:
    """The WGSL type of a value of IR type `t` (an emulated type's is its wide type's)."""
    try:
        return _TYPES[pg_wgsl.held_as(t)]
    except KeyError:
        raise WgslSourceError(f"no WGSL type for {t}") from None


def storage_type(t: Attribute) -> str:
    """The WGSL type of a buffer element: bools are u32."""
    return "u32" if is_bool(t) else wgsl_type(t)


def wgsl_literal(value: float | int, t: Attribute) -> str:
    """`value` as an exact WGSL expression of type `t`."""
    if is_float(t):
        with np.errstate(over="ignore"):  # an f16 beyond 65504 is inf, as in numpy
            value = float(np.asarray(value).astype(to_numpy_dtype(t)))
        if math.isnan(value) or math.isinf(value):
            bits = struct.unpack("<I", struct.pack("<f", value))[0]
            return f"bitcast<f32>({bits:#010x}u)"
        text = f"{value:.9g}"
        return (text if "." in text or "e" in text else text + ".0") + "f"
    if is_bool(t):
        return "true" if value else "false"
    value = int(value)
    # `-2147483648i` negates 2147483648i, which is no i32; the abstract int converts exactly.
    return "i32(-2147483648)" if value == -(2**31) else f"{value}i"


# ── helper functions ─────────────────────────────────────────────────────────

# name -> (the helpers it calls, its definition). Integer division divides by 1 where
# WGSL's result differs from the CPU's (b == 0) or would overflow (b == -1), then fixes
# those up: x / 0 = 0, x / -1 = -x (wrapping); x % 1 = 0 is right for both.
HELPERS: dict[str, tuple[tuple[str, ...], str]] = {
    "pg_isnan": ((), "fn pg_isnan(x: f32) -> bool {\n"
                     "  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;\n}"),
    "pg_ordered": (("pg_isnan",), "fn pg_ordered(a: f32, b: f32) -> bool {\n"
                                  "  return !pg_isnan(a) && !pg_isnan(b);\n}"),
    "pg_max": (("pg_isnan",), "fn pg_max(a: f32, b: f32) -> f32 {\n"
                              "  return select(select(select(b, a, a > b), b, pg_isnan(b)), a, "
                              "pg_isnan(a));\n}"),
    "pg_min": (("pg_isnan",), "fn pg_min(a: f32, b: f32) -> f32 {\n"
                              "  return select(select(select(b, a, a < b), b, pg_isnan(b)), a, "
                              "pg_isnan(a));\n}"),
    # f32 -> i32 saturating, NaN -> 0 (docs/design.md, "Float to int casts"): WGSL's i32(x)
    # stops at 2147483520 (the f32 below 2^31) and leaves NaN to the implementation (Mesa
    # gives INT_MIN)
    "pg_i32": (("pg_isnan",), "fn pg_i32(x: f32) -> i32 {\n"
                              "  return select(select(i32(x), 2147483647i, x >= 2147483648.0f), "
                              "0i, pg_isnan(x));\n}"),
    # f32 a / b with IEEE's zero divisor (NaN for 0 / 0 and NaN / 0, else inf with the sign
    # of a * b): Mesa folds `x / 0.0` to 0.0 when the zero is a constant
    "pg_fdiv": (("pg_isnan",), "fn pg_fdiv(a: f32, b: f32) -> f32 {\n"
                               "  if ((bitcast<u32>(b) & 0x7fffffffu) != 0u) { return a / b; }\n"
                               "  if ((bitcast<u32>(a) & 0x7fffffffu) == 0u || pg_isnan(a)) {\n"
                               "    return bitcast<f32>(0x7fc00000u);\n  }\n"
                               "  return bitcast<f32>(((bitcast<u32>(a) ^ bitcast<u32>(b)) & "
                               "0x80000000u) | 0x7f800000u);\n}"),
    # (hi, lo) words of m * w for m < 2^24, in 16-bit pieces (WGSL has no 64-bit integers)
    "pg_mul_wide": ((), "fn pg_mul_wide(m: u32, w: u32) -> vec2<u32> {\n"
                        "  let ll = (m & 0xffffu) * (w & 0xffffu);\n"
                        "  let lh = (m & 0xffffu) * (w >> 16u);\n"
                        "  let hl = (m >> 16u) * (w & 0xffffu);\n"
                        "  let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);\n"
                        "  let hi = (m >> 16u) * (w >> 16u) + (lh >> 16u) + (hl >> 16u) + "
                        "(mid >> 16u);\n"
                        "  return vec2<u32>(hi, (mid << 16u) | (ll & 0xffffu));\n}"),
    # sin with an exact argument reduction for |x| >= 2^23, where Mesa's sin is wrong
    # (sin(2147483647.0) gave -1.0): |x| = m * 2^e (e in [0, 104]), so frac(|x| / 2pi) is
    # frac(m * frac(2^e / 2pi)), from a 96-bit window of the bits of 1 / 2pi at e (Payne and
    # Hanek), as a fraction in [-1/2, 1/2) of a turn; below 2^23 Mesa's sin is accurate.
    "pg_sin": (("pg_mul_wide",), "fn pg_sin(x: f32) -> f32 {\n"
                                 "  let a = bitcast<u32>(x) & 0x7fffffffu;\n"
                                 "  if (a >= 0x7f800000u) { return bitcast<f32>(0x7fc00000u); }\n"
                                 "  if (a < 0x4b000000u) { return sin(x); }\n"
                                 f"  var c = array<u32, 8>({_INV_2PI_WORDS});\n"
                                 "  let m = (a & 0x7fffffu) | 0x800000u;\n"
                                 "  let e = (a >> 23u) - 150u;\n"
                                 "  let k = e >> 5u;\n"
                                 "  let s = e & 31u;\n"
                                 "  var w: array<u32, 3>;\n"
                                 "  for (var j = 0u; j < 3u; j++) {\n"
                                 "    let joined = (c[k + j] << s) | "
                                 "(c[k + j + 1u] >> (32u - s));\n"
                                 "    w[j] = select(joined, c[k + j], s == 0u);\n  }\n"
                                 "  let p0 = pg_mul_wide(m, w[0]);\n"
                                 "  let p1 = pg_mul_wide(m, w[1]);\n"
                                 "  let p2 = pg_mul_wide(m, w[2]);\n"
                                 "  let mid = p1.y + p2.x;\n"
                                 "  let top = p0.y + p1.x + select(0u, 1u, mid < p1.y);\n"
                                 "  let turn = f32(bitcast<i32>(top)) * 2.32830644e-10f + "
                                 "f32(mid) * 5.42101086e-20f;\n"
                                 "  let r = sin(turn * 6.28318548f);\n"
                                 "  return select(r, -r, x < 0.0f);\n}"),
    "pg_div": ((), "fn pg_div(a: i32, b: i32) -> i32 {\n"
                   "  let q = a / select(b, 1i, b == 0i || b == -1i);\n"
                   "  return select(select(q, -a, b == -1i), 0i, b == 0i);\n}"),
    "pg_mod": ((), "fn pg_mod(a: i32, b: i32) -> i32 {\n"
                   "  return a % select(b, 1i, b == 0i || b == -1i);\n}"),
    # f32 -> the nearest f16 (ties to even), as an f32. Normal f16: round the 23-bit
    # mantissa to 10 bits on the bits (a carry moves into the exponent, as it should);
    # from 65520 on: inf; below 2^-14: a multiple of 2^-24, rounded by hand; NaN stays.
    "pg_f16": ((), "fn pg_f16(x: f32) -> f32 {\n"
                   "  let u = bitcast<u32>(x);\n"
                   "  let a = u & 0x7fffffffu;\n"
                   "  let sign = u & 0x80000000u;\n"
                   "  if (a > 0x7f800000u) { return x; }\n"
                   "  if (a >= 0x477ff000u) { return bitcast<f32>(sign | 0x7f800000u); }\n"
                   "  if (a >= 0x38800000u) {\n"
                   "    return bitcast<f32>(sign | ((a + 0xfffu + ((a >> 13u) & 1u)) & "
                   "0xffffe000u));\n"
                   "  }\n"
                   "  let m = select(a, (a & 0x7fffffu) | 0x800000u, a >= 0x800000u);\n"
                   "  let s = min(126u - max(a >> 23u, 1u), 31u);\n"
                   "  let q = m >> s;\n"
                   "  let rest = m & ((1u << s) - 1u);\n"
                   "  let half = 1u << (s - 1u);\n"
                   "  let up = rest > half || (rest == half && (q & 1u) == 1u);\n"
                   f"  let r = f32(q + select(0u, 1u, up)) * {_F16_SUBNORMAL_STEP};\n"
                   "  return bitcast<f32>(sign | bitcast<u32>(r));\n}"),
    # The bits of an f16 held in an f32, sign-extended (an i16 held in an i32): the f32's
    # exponent rebased by 127 - 15 = 112, or, below 2^-14, the multiple of 2^-24 it is; a
    # NaN keeps its top 10 payload bits (at least one set), as numpy's conversion does.
    "pg_f16_bits": ((), "fn pg_f16_bits(x: f32) -> i32 {\n"
                        "  let u = bitcast<u32>(x);\n"
                        "  let a = u & 0x7fffffffu;\n"
                        "  var h = (a - 0x38000000u) >> 13u;\n"
                        "  if (a > 0x7f800000u) { h = 0x7c00u | max((a >> 13u) & 0x3ffu, 1u); }\n"
                        "  else if (a == 0x7f800000u) { h = 0x7c00u; }\n"
                        "  else if (a < 0x38800000u) { h = u32(bitcast<f32>(a) * 16777216.0f); }\n"
                        "  return bitcast<i32>(((u >> 16u) & 0x8000u | h) << 16u) >> 16u;\n}"),
    # The f16 with the low 16 bits of `b`, as an f32.
    "pg_f16_from_bits": ((), "fn pg_f16_from_bits(b: i32) -> f32 {\n"
                             "  let h = u32(b);\n"
                             "  let sign = (h & 0x8000u) << 16u;\n"
                             "  let e = (h >> 10u) & 0x1fu;\n"
                             "  let m = h & 0x3ffu;\n"
                             "  if (e == 0u) {\n"
                             f"    return bitcast<f32>(sign | bitcast<u32>(f32(m) * "
                             f"{_F16_SUBNORMAL_STEP}));\n"
                             "  }\n"
                             "  if (e == 31u) { return bitcast<f32>(sign | 0x7f800000u | "
                             "(m << 13u)); }\n"
                             "  return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));\n}"),
}


def _with_dependencies(names: set[str]) -> list[str]:
    """`names` and the helpers they call, in the order of HELPERS."""
    wanted = set(names)
    for name in names:
        wanted.update(HELPERS[name][0])
    return [name for name in HELPERS if name in wanted]


# ── expressions ──────────────────────────────────────────────────────────────

Names = Callable[[SSAValue], str]


def _binary_expr(op: pg_wgsl.BinaryOp, a: str, b: str, helpers: set[str]) -> str:
    operator, t = op.operator.data, op.result.type
    helper = None
    if operator in ("max", "min"):
        helper = f"pg_{operator}" if is_float(t) else operator  # i32: WGSL's built-ins
    elif operator in ("/", "%") and not is_float(t):
        helper = "pg_div" if operator == "/" else "pg_mod"
    elif operator == "/":
        helper = "pg_fdiv"
    if operator in ("<<", ">>"):  # the amount is a u32, taken modulo 32 as WGSL does at run
        return f"{a} {operator} (u32({b}) & 31u)"  # time (masking also keeps constants legal)
    if helper is None:
        return f"{a} {operator} {b}"
    if helper.startswith("pg_"):
        helpers.add(helper)
    return f"{helper}({a}, {b})"


def _cmp_expr(op: pg_wgsl.CmpOp, a: str, b: str, helpers: set[str]) -> str:
    operator = op.operator.data
    if not is_float(op.lhs.type):
        return f"{a} {operator} {b}"
    helpers.add("pg_ordered")  # every comparison with NaN is false, except !=
    if operator == "!=":
        return f"{a} != {b} || !pg_ordered({a}, {b})"
    return f"{a} {operator} {b} && pg_ordered({a}, {b})"


def _exact(source: Attribute, target: Attribute) -> bool:
    """Every value of `source` is one of `target` (no wrapping or rounding needed)."""
    return np.can_cast(to_numpy_dtype(source), to_numpy_dtype(target), "safe")


def _wrap(t: Attribute, x: str) -> str:
    """The i32 `x` wrapped into the values of the narrow integer type `t`."""
    assert isinstance(t, IntegerType)
    width = t.width.data
    if is_unsigned(t):
        return f"({x} & {(1 << width) - 1}i)"
    return f"(({x} << {32 - width}u) >> {32 - width}u)"


def _cast_expr(op: pg_wgsl.CastOp, x: str, helpers: set[str]) -> str:
    source, target = op.input.type, op.result.type
    if is_bool(target):
        if is_float(source):  # not ±0, on the bits (NaN is true)
            return f"(bitcast<u32>({x}) & 0x7fffffffu) != 0u"
        return f"{x} != 0i"
    # Convert between the types that hold the values, then into the narrow type's values.
    wide = pg_wgsl.held_as(target)
    value = x if pg_wgsl.held_as(source) == wide else f"{wgsl_type(wide)}({x})"
    if is_float(source) and wide == i32:
        helpers.add("pg_i32")
        value = f"pg_i32({x})"
    if wide == target or _exact(source, target):
        return value
    if is_float(target):
        helpers.add("pg_f16")
        return f"pg_f16({value})"
    return _wrap(target, value)


def _bitcast_expr(op: pg_wgsl.BitcastOp, x: str, helpers: set[str]) -> str:
    if op.result.type == f16 or op.input.type == f16:  # the emulated f16's 16 bits
        helper = "pg_f16_from_bits" if op.result.type == f16 else "pg_f16_bits"
        helpers.add(helper)
        return f"{helper}({x})"
    return f"bitcast<{wgsl_type(op.result.type)}>({x})"


def _call_expr(op: pg_wgsl.CallOp, x: str, helpers: set[str]) -> str:
    if op.callee.data == "sin":  # Mesa's sin is wrong from 2^23 on
        helpers.add("pg_sin")
        return f"pg_sin({x})"
    return f"{op.callee.data}({x})"


def _load_expr(op: pg_wgsl.LoadOp, names: Names) -> str:
    buffer, index = names(op.buffer), names(op.index)
    if op.mask is not None:
        index = f"select(0i, {index}, {names(op.mask)})"
    element = f"{buffer}[{index}]"
    if is_bool(op.result.type):
        element = f"({element} != 0u)"
    if op.mask is None or op.other is None:
        return element
    other = wgsl_literal(scalar_value(op.other), op.result.type)
    return f"select({other}, {element}, {names(op.mask)})"


def _value_expr(op: Operation, names: Names, helpers: set[str]) -> str:
    """The right-hand side of the `let vN = ...;` line a value op prints; adds the helper
    functions it calls to `helpers`."""
    args = [names(v) for v in op.operands]
    match op:
        case pg_wgsl.BuiltinOp():
            return f"i32({_BUILTIN_PARAMS[op.kind.data]}.{_AXES[op.dim.data]})"
        case pg_wgsl.ConstOp():
            return wgsl_literal(op.scalar, op.result.type)
        case pg_wgsl.UnaryOp():
            return f"{op.operator.data}{args[0]}"
        case pg_wgsl.CallOp():
            return _call_expr(op, args[0], helpers)
        case pg_wgsl.BinaryOp():
            return _binary_expr(op, args[0], args[1], helpers)
        case pg_wgsl.CmpOp():
            return _cmp_expr(op, args[0], args[1], helpers)
        case pg_wgsl.SelectOp():
            return f"select({args[2]}, {args[1]}, {args[0]})"
        case pg_wgsl.CastOp():
            return _cast_expr(op, args[0], helpers)
        case pg_wgsl.BitcastOp():
            return _bitcast_expr(op, args[0], helpers)
        case pg_wgsl.ReadOp():
            return args[0]
        case pg_wgsl.LoadOp():
            return _load_expr(op, names)
    raise WgslSourceError(f"{op.name} is not a pg_wgsl value op")


# ── functions ────────────────────────────────────────────────────────────────


class _FnPrinter(KernelSource):
    """Names the values of one `pg_wgsl.fn` and prints its declarations and entry point."""

    ERROR = WgslSourceError
    BLOCKS = "loop or if"

    def __init__(self, fn: pg_wgsl.FuncOp, helpers: set[str]):
        super().__init__(fn.sym_name.data)
        self.fn = fn
        if not _KERNEL_NAME.fullmatch(self.kernel) or self.kernel in HELPERS:
            raise WgslSourceError(f"kernel name {self.kernel!r} is not a WGSL identifier or "
                                  "is taken by a helper function")
        self.helpers = helpers  # the helper functions the module needs
        self.globals: list[str] = []  # module-scope declarations of this kernel

    def run(self) -> str:
        for i, arg in enumerate(self.fn.args):
            assert isinstance(arg.type, BufferType)
            name = self.names[arg] = f"{self.kernel}_p{i}"
            element = storage_type(arg.type.element_type)
            self.globals.append(f"@group(0) @binding({i}) var<storage, read_write> {name}: "
                                f"array<{element}>;")
        for op in self.fn.body.block.ops:
            self._statement(op)
        _, block = self.fn.launch
        params = ", ".join(f"@builtin({kind}) {name}: vec3<u32>"
                           for kind, name in _BUILTIN_PARAMS.items())
        header = [f"@compute @workgroup_size({', '.join(str(b) for b in block)})",
                  f"fn {self.kernel}({params}) {{"]
        return "\n".join([*self.globals, "", *header, *self.lines, "}"]) + "\n"

    def _statement(self, op: Operation) -> None:
        match op:
            case pg_wgsl.ForOp():
                i = self.define(op.result, "i")
                self.open_block(f"for (var {i}: i32 = {op.start.data}; {i} < {op.end.data}; "
                                f"{i}++) {{", [op.result])
            case pg_wgsl.IfOp():
                self.open_block(f"if ({self.name(op.cond)}) {{")
            case pg_wgsl.EndForOp() | pg_wgsl.EndIfOp():
                self.close_block()  # WGSL scoping: what the block declared ends
            case pg_wgsl.BarrierOp():
                self.emit("workgroupBarrier();")
            case pg_wgsl.WorkgroupOp():
                # Module scope: the name stays valid everywhere in the function.
                buffer = op.result.type
                assert isinstance(buffer, BufferType)
                name = f"{self.kernel}_s{self.count}"
                self.count += 1
                self.names[op.result] = name
                element = storage_type(buffer.element_type)
                self.globals.append(f"var<workgroup> {name}: array<{element}, "
                                    f"{buffer.size.data}>;")
            case pg_wgsl.StoreOp():
                value = self.name(op.value)
                if is_bool(op.value.type):
                    value = f"select(0u, 1u, {value})"
                self.emit(f"{self.name(op.buffer)}[{self.name(op.index)}] = {value};")
            case pg_wgsl.AssignOp():
                self.emit(f"{self.name(op.var)} = {self.name(op.value)};")
            case pg_wgsl.VarOp():
                init = wgsl_literal(scalar_value(op.init), op.element_type)
                var = self.declare(op.result, "acc")
                self.emit(f"var {var}: {wgsl_type(op.element_type)} = {init};")
            case _:
                expr = _value_expr(op, self.name, self.helpers)
                (result,) = op.results
                self.emit(f"let {self.declare(result, 'v')} = {expr};")


def fn_to_wgsl(fn: pg_wgsl.FuncOp, helpers: set[str]) -> str:
    """One `pg_wgsl.fn`: its module-scope variables and its entry point (the helper
    functions it calls are added to `helpers`)."""
    return _FnPrinter(fn, helpers).run()


def module_to_wgsl(module: ModuleOp) -> str:
    """Every `pg_wgsl.fn` of `module`, in order, as one WGSL shader module."""
    helpers: set[str] = set()
    fns = [fn_to_wgsl(op, helpers) for op in module.ops if isinstance(op, pg_wgsl.FuncOp)]
    definitions = [HELPERS[name][1] + "\n" for name in _with_dependencies(helpers)]
    return "\n".join([HEADER, *definitions, *fns])
