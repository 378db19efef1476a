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
* f32 literals are exact (`%.9g` round-trips); inf and NaN, which WGSL cannot spell (a
  constant expression that overflows is an error), are `bitcast<f32>` of their bits.
* Integer `/` and `%` never trap and match the CPU targets: a zero divisor gives 0 (WGSL
  would give the dividend for `/`), `MIN / -1` is MIN, `MIN % -1` is 0 (helpers `pg_div`,
  `pg_mod`). i32 arithmetic wraps around, as WGSL defines it at run time.
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
from xdsl.dialects.builtin import ModuleOp, f32, i1, i32
from xdsl.ir import Attribute, Operation, SSAValue

from picograd.dialects import pg_wgsl
from picograd.dialects.dtypes import is_bool, is_float
from picograd.dialects.pg import BufferType
from picograd.dialects.syntax import scalar_value
from picograd.lowering.kernel_source import KernelSource

HEADER = "// picograd: one compute entry point per kernel\n"

_KERNEL_NAME = re.compile(r"(?!__)[A-Za-z_][A-Za-z0-9_]*")
_TYPES: dict[Attribute, str] = {f32: "f32", i32: "i32", i1: "bool"}
_AXES = "xyz"
_BUILTIN_PARAMS = {"workgroup_id": "wid", "local_invocation_id": "lid"}


class WgslSourceError(ValueError):
    """The module holds something `module_to_wgsl` cannot print (a malformed pg_wgsl.fn)."""


def wgsl_type(t: Attribute) -> str:
    """The WGSL type of a value of IR type `t`."""
    try:
        return _TYPES[t]
    except KeyError:
        raise WgslSourceError(f"no WGSL type for {t}") from None


def storage_type(t: Attribute) -> str:
    """The WGSL type of a buffer element: bools are u32."""
    return "u32" if is_bool(t) else wgsl_type(t)


def wgsl_literal(value: float | int, t: Attribute) -> str:
    """`value` as an exact WGSL expression of type `t`."""
    if is_float(t):
        value = float(np.float32(value))
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
    "pg_div": ((), "fn pg_div(a: i32, b: i32) -> i32 {\n"
                   "  let q = a / select(b, 1i, b == 0i || b == -1i);\n"
                   "  return select(select(q, -a, b == -1i), 0i, b == 0i);\n}"),
    "pg_mod": ((), "fn pg_mod(a: i32, b: i32) -> i32 {\n"
                   "  return a % select(b, 1i, b == 0i || b == -1i);\n}"),
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


def _cast_expr(op: pg_wgsl.CastOp, x: str) -> str:
    source, target = op.input.type, op.result.type
    if is_bool(target):
        if is_float(source):  # not ±0, on the bits (NaN is true)
            return f"(bitcast<u32>({x}) & 0x7fffffffu) != 0u"
        return f"{x} != 0i"
    return f"{wgsl_type(target)}({x})"


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
            return f"{op.callee.data}({args[0]})"
        case pg_wgsl.BinaryOp():
            return _binary_expr(op, args[0], args[1], helpers)
        case pg_wgsl.CmpOp():
            return _cmp_expr(op, args[0], args[1], helpers)
        case pg_wgsl.SelectOp():
            return f"select({args[2]}, {args[1]}, {args[0]})"
        case pg_wgsl.CastOp():
            return _cast_expr(op, args[0])
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
