"""Print the `pg_c.func` kernels of a module as one C11 translation unit.

    module_to_c(module) -> str

Each `pg_c` op is one line of C, printed in block order (see `picograd/dialects/pg_c.py`);
other ops of the module (the `func.func @main` schedule) are skipped. The functions follow
the kernel ABI of docs/design.md:

    void k0(float* restrict p0, uint8_t* restrict p1, int64_t start, int64_t end)

one pointer per buffer argument, then the bounds of the outer loop: a function with a
`pg.outer` attribute (its outermost global range may run in chunks on several threads, see
`picograd/lowering/outer_range.py`) runs iterations `[start, end)` of its first top-level
`for` and exports `const int64_t k0_pg_outer[2] = {trip, work};` (printed before the first
kernel, for `picograd/runtimes/cpu_c.py`); other functions ignore `start`/`end`.

* `index` is `int64_t`; a bool value is `bool`, a bool buffer `uint8_t*` holding 0/1 (loaded
  with `!= 0`, stored as 0/1).
* Float literals are exact: `%.9g` (f32/f16, with an `f` suffix) or `%.17g` (f64) round-trip,
  and `INFINITY` / `NAN` spell the special values.
* Signed 32/64-bit `+ - *` and negation wrap around like numpy (they go through the unsigned
  type, since signed overflow is undefined in C); narrower integers are promoted to `int`,
  where they cannot overflow. Integer `/` and `%` truncate like C and give 0 for a zero
  divisor (as numpy, and the LLVM target, do) instead of trapping; a signed `MIN / -1` wraps
  to MIN and `MIN % -1` is 0 (numpy's results; C leaves both undefined and x86 traps).
* Float `max`/`min` propagate NaN like numpy's maximum/minimum.
* Float -> integer casts saturate, as on the LLVM target (docs/design.md, "Float to int
  casts"): NaN is 0, values beyond the range of `int32_t` (`int64_t` for 64-bit targets)
  give its ends; narrower targets take the low bits of the `int32_t` (`-1.0 -> ui8` gives
  255).
* A vector is a GCC/Clang vector extension type, `typedef float pg_f32x16
  __attribute__((vector_size(64)))`, printed once per unit with its unaligned twin
  `pg_f32x16_u` that loads and stores go through; `+ - * /`, `-`, `max` and `min` (a bit
  blend by the lane masks) apply lane by lane, a broadcast is an initialiser list, a
  `vreduce` the lanes combined in order.

The output compiles with `cc -O2 -shared -fPIC -std=c11 ... -lm` (see
`picograd/runtimes/cpu_c.py`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    VectorType,
    f32,
)
from xdsl.ir import Attribute, Operation, SSAValue

from picograd.dialects import pg_c
from picograd.dialects.abi import (
    END_NAME,
    OUTER_ATTR,
    START_NAME,
    WORK_ATTR,
    outer_symbol,
)
from picograd.dialects.dtypes import is_bool, is_float, is_int, is_unsigned, lane_type
from picograd.dialects.flat_vectors import lanes_of
from picograd.dialects.pg import BinaryKind, BufferType
from picograd.dialects.syntax import scalar_value
from picograd.lowering.exp_f32 import (
    HIGHEST,
    LN2_HI,
    LN2_LO,
    LOG2E,
    LOWEST,
    ROUNDING_SHIFT,
    ROUNDING_SHIFT_BITS,
    TAYLOR,
)
from picograd.lowering.kernel_source import KernelSource

PRELUDE = "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n"

# A split kernel whose outer loop is its only loop (elementwise) has that innermost loop over
# runtime bounds (start, end): GCC's -O2 vectoriser cost model ("very-cheap") only takes loops
# whose trip count is a known multiple of the vector width, which left such kernels scalar
# (~8x slower). Its declaration asks for the "cheap" model (a scalar epilogue, still no
# runtime alias checks); only there, as it slows the register tiles of other kernels down.
# Other compilers ignore the attribute.
_CHEAP_VECTORIZE = '__attribute__((optimize("vect-cost-model=cheap")))'

class CSourceError(ValueError):
    """The module holds something `module_to_c` cannot print (a malformed pg_c.func)."""


def c_type(t: Attribute) -> str:
    """The C type of a value of IR type `t` (`pg_f32x16` for `vector<16xf32>`, a typedef
    that `vector_typedefs` prints)."""
    if isinstance(t, VectorType):
        return f"pg_{t.element_type}x{t.get_shape()[0]}"
    if isinstance(t, IndexType):
        return "int64_t"
    if isinstance(t, Float16Type):
        return "_Float16"
    if isinstance(t, Float32Type):
        return "float"
    if isinstance(t, Float64Type):
        return "double"
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return "bool"
        unsigned = t.signedness.data == Signedness.UNSIGNED
        return f"{'u' if unsigned else ''}int{width}_t"
    raise CSourceError(f"no C type for {t}")


def vector_typedefs(t: VectorType) -> list[str]:
    """The GCC/Clang vector extension types of `t`: `pg_f32x16` (aligned as a whole, for
    values) and `pg_f32x16_u` (aligned as one element, for loads and stores anywhere in a
    buffer; `may_alias`, as it reads memory written as elements)."""
    lane, name = c_type(t.element_type), c_type(t)
    size = t.get_shape()[0] * (4 if t.element_type == f32 else 8)
    return [f"typedef {lane} {name} __attribute__((vector_size({size})));",
            f"typedef {lane} {name}_u __attribute__((vector_size({size}), aligned("
            f"{size // t.get_shape()[0]}), may_alias));"]


def _storage_type(t: Attribute) -> str:
    """The C type of a buffer element: bools are bytes."""
    return "uint8_t" if is_bool(t) else c_type(t)


def c_literal(value: float | int, t: Attribute) -> str:
    """`value` as an exact C literal of type `t`."""
    if is_float(t):
        assert isinstance(t, Float16Type | Float32Type | Float64Type)
        value = float(value)
        if math.isnan(value):
            text = "NAN"
        elif math.isinf(value):
            text = "INFINITY" if value > 0 else "-INFINITY"
        elif isinstance(t, Float64Type):
            text = _with_point(f"{value:.17g}")
        else:  # f32 or f16: round to float first, whose 9 digits round-trip
            text = _with_point(f"{float(np.float32(value)):.9g}") + "f"
        return f"(_Float16){text}" if isinstance(t, Float16Type) else text
    if is_bool(t):
        return "true" if value else "false"
    value = int(value)
    # `-9223372036854775808` negates a literal that has no C type; any other integer literal
    # takes the first of int / long that holds it, then converts exactly.
    return "INT64_MIN" if value == -(2**63) else str(value)


def _with_point(text: str) -> str:
    # `1f` is not a C literal, `1.0f` is.
    return text if "." in text or "e" in text else text + ".0"


# ── statements ───────────────────────────────────────────────────────────────

Names = Callable[[SSAValue], str]


def _wraps(t: Attribute) -> str | None:
    """The unsigned twin of a signed 32/64-bit integer type, whose arithmetic wraps."""
    if isinstance(t, IntegerType) and t.width.data in (32, 64) and not is_unsigned(t):
        return f"uint{t.width.data}_t"
    return None


def _binary_expr(op: pg_c.BinaryOp, a: str, b: str) -> str:
    operator, t = op.operator.data, op.result.type
    ct = c_type(t)
    if operator in ("max", "min"):
        cmp = ">" if operator == "max" else "<"
        if isinstance(t, VectorType):
            # C has no `?:` on vectors: a lane's comparison is all ones or zeros in the
            # integer vector of its width, which picks the bits of a or of b
            mask = f"(({a} {cmp} {b}) | ({a} != {a}))"
            bits = f"__typeof__({mask})"
            return f"({ct})((({bits}){a} & {mask}) | (({bits}){b} & ~{mask}))"
        if is_float(t):  # a NaN in either operand wins, as in numpy
            return f"({a} {cmp} {b} || {a} != {a}) ? {a} : {b}"
        return f"{a} {cmp} {b} ? {a} : {b}"
    if operator in ("/", "%") and is_int(t):
        if not is_unsigned(t):
            # MIN / -1 overflows and traps on x86 (SIGFPE), as MIN % -1 does: x / -1 is -x
            # (wrapping, as numpy) and x % -1 is 0.
            if operator == "%":
                return f"({b} == 0 || {b} == -1) ? 0 : ({ct})({a} % {b})"
            return f"{b} == 0 ? 0 : {b} == -1 ? {_negate(t, a)} : ({ct})({a} / {b})"
        return f"{b} == 0 ? 0 : ({ct})({a} {operator} {b})"
    if operator in ("<<", ">>"):
        return _shift_expr(t, operator, a, b)
    if operator in ("+", "-", "*") and (unsigned := _wraps(t)) is not None:
        return f"({ct})(({unsigned}){a} {operator} ({unsigned}){b})"
    return f"{a} {operator} {b}"


def _shift_expr(t: Attribute, operator: str, a: str, b: str) -> str:
    """`a << b` / `a >> b` with the amount taken modulo the width (pg.BinaryKind.SHL/SHR), so
    it is never undefined; a left shift goes through the unsigned type (shifting a negative
    value left is undefined in C), a signed right shift is arithmetic on every C compiler
    picograd uses (implementation-defined in C)."""
    assert isinstance(t, IntegerType | IndexType)
    width = 64 if isinstance(t, IndexType) else t.width.data
    amount = f"({b} & {width - 1})"
    if operator == "<<":
        return f"({c_type(t)})((uint{max(width, 32)}_t){a} << {amount})"
    return f"({c_type(t)})({a} >> {amount})"


def _negate(t: Attribute, x: str) -> str:
    """`-x`, wrapping around for the most negative signed 32/64-bit value."""
    if (unsigned := _wraps(t)) is not None:
        return f"({c_type(t)})(0u - ({unsigned}){x})"
    return f"-{x}"


def _unary_expr(op: pg_c.UnaryOp, x: str) -> str:
    operator, t = op.operator.data, op.result.type
    return _negate(t, x) if operator == "-" else f"{operator}{x}"


def _cast_expr(op: pg_c.CastOp, x: str) -> str:
    source, target = op.input.type, op.result.type
    ct = c_type(target)
    if is_bool(target):
        return f"{x} != 0"
    if is_float(source) and not is_float(target):
        return _float_to_int_expr(x, target)
    return f"({ct}){x}"


def _float_to_int_expr(x: str, target: Attribute) -> str:
    """`x` (a float) as the integer type `target`, saturating: NaN is 0, values beyond the
    int32 range (int64's for a 64-bit or uint32 target) its ends; narrower targets take the
    low bits of the int32 (C's conversion is undefined outside the target's range); uint64
    as the LLVM target does."""
    ct = c_type(target)
    if ct == "uint64_t":  # from 2^63 on: converted less 2^63, the top bit put back
        high = _float_to_int_expr(f"({x} - 0x1p63f)", IntegerType(64))
        low = _float_to_int_expr(x, IntegerType(64))
        return f"({x} >= 0x1p63f ? (uint64_t){high} ^ 0x8000000000000000u : (uint64_t){low})"
    # index is int64_t too; uint32_t goes through int64_t so that 3e9 fits
    bits = 64 if ct in ("int64_t", "uint32_t") else 32
    limit = f"0x1p{bits - 1}f"  # 2^31 or 2^63, exact in every float type
    value = (f"({x} != {x} ? 0 : {x} >= {limit} ? INT{bits}_MAX : {x} < -{limit} ? "
             f"INT{bits}_MIN : (int{bits}_t){x})")
    return value if ct == f"int{bits}_t" else f"({ct}){value}"


def _load_expr(op: pg_c.LoadOp, names: Names) -> str:
    element = f"{names(op.buffer)}[{names(op.index)}]"
    if is_bool(op.result.type):
        element = f"({element} != 0)"
    if op.mask is None or op.other is None:
        return element
    other = c_literal(scalar_value(op.other), op.result.type)
    return f"{names(op.mask)} ? {element} : {other}"


def _is_exp_f32(op: Operation) -> bool:
    """An `expf` of an f32 or vector-of-f32 value: printed as `pg_exp_<type>`."""
    if not isinstance(op, pg_c.CallOp) or op.callee.data != "expf":
        return False
    t = op.input.type
    return (t.element_type if isinstance(t, VectorType) else t) == f32


def exp_f32_helper(t: Attribute) -> str:
    """`static inline T pg_exp_T(T x)` for f32 or a vector of f32: the LLVM target's exp
    (`picograd/lowering/llvm/math.py`: clamp to [-104, 89], n = round(x log2 e) by adding
    and subtracting 1.5 * 2^23, Cody-Waite reduction, Taylor to degree 7, 2^n built in the
    exponent bits in two halves) in plain arithmetic that both compilers vectorise, where
    libm's `expf` is a call per lane (a softmax's, GELU's or attention's kernel spent most
    of its time there). Clang contracts Horner's steps into multiply-adds (as the LLVM
    target emits them), GCC in ISO C does not: a rounding more per step, within the
    tolerance exp is tested with. NaN stays NaN; below -103.97 gives 0, above 88.73 inf."""
    name = c_type(t)
    vector = isinstance(t, VectorType)
    def lit(value: float) -> str:
        return c_literal(value, f32)

    lines = [f"static inline {name} {_exp_name(t)}({name} x) {{"]
    if vector:
        lines += [f"  typedef int32_t I __attribute__((vector_size({lanes_of(t) * 4})));",
                  f"  const {name} zero = {{0}};"]
        for limit, test in ((LOWEST, "<"), (HIGHEST, ">")):  # a blend by the lane mask
            side = "below" if test == "<" else "above"
            lines += [f"  I {side} = x {test} {lit(limit)};",
                      f"  x = ({name})(((I)x & ~{side}) | ((I)(zero + {lit(limit)}) & {side}));"]
        first, n_bits = f"zero + {lit(TAYLOR[0])}", "(I)shifted"
    else:
        lines += ["  typedef int32_t I;", "  union { float f; int32_t i; } u;",
                  f"  x = x < {lit(LOWEST)} ? {lit(LOWEST)} : x;",
                  f"  x = x > {lit(HIGHEST)} ? {lit(HIGHEST)} : x;"]
        first, n_bits = lit(TAYLOR[0]), "(u.f = shifted, u.i)"
    lines += [f"  {name} shifted = x * {lit(LOG2E)} + {lit(ROUNDING_SHIFT)};",
              f"  {name} n = shifted - {lit(ROUNDING_SHIFT)};",
              f"  {name} hi = n * {lit(LN2_HI)};",  # exact: 9 significant bits times n
              f"  {name} lo = n * {lit(LN2_LO)};",
              f"  {name} r = (x - hi) - lo;",
              f"  {name} p = {first};"]
    lines += [f"  p = p * r + {lit(c)};" for c in TAYLOR[1:]]
    lines += [f"  I ni = {n_bits} - 0x{ROUNDING_SHIFT_BITS:08x};", "  I half = ni >> 1;",
              "  I rest = ni - half;"]
    if vector:
        lines += [f"  {name} y = p * ({name})((half + 127) << 23);",
                  f"  return y * ({name})((rest + 127) << 23);"]
    else:
        lines += ["  u.i = (half + 127) << 23;", "  float y = p * u.f;",
                  "  u.i = (rest + 127) << 23;", "  return y * u.f;"]
    return "\n".join([*lines, "}"])


def _exp_name(t: Attribute) -> str:
    """`pg_exp_float`, `pg_exp_f32x16`, ..."""
    return f"pg_exp_{c_type(t).removeprefix('pg_')}"


def _call_expr(op: pg_c.CallOp, x: str) -> str:
    """`expf(x)` (f32: `pg_exp_<type>(x)`, see `exp_f32_helper`); on a vector, a vector of
    the function of each lane."""
    if _is_exp_f32(op):
        return f"{_exp_name(op.input.type)}({x})"
    if not isinstance(op.input.type, VectorType):
        return f"{op.callee.data}({x})"
    lanes = [f"{op.callee.data}({x}[{n}])" for n in range(lanes_of(op.input.type))]
    return f"({c_type(op.input.type)}){{{', '.join(lanes)}}}"


def _vector_expr(op: Operation, args: list[str]) -> str:
    """The right-hand side of a vector load, broadcast or horizontal reduction."""
    match op:
        case pg_c.VLoadOp() if op.stride == 1:
            return f"*(const {c_type(op.result.type)}_u*)({args[0]} + {args[1]})"
        case pg_c.VLoadOp():  # every step-th element, lane by lane (GCC packs the lanes)
            lanes = [f"{args[0]}[{args[1]} + {op.stride * n}]"
                     for n in range(lanes_of(op.result.type))]
            return f"({c_type(op.result.type)}){{{', '.join(lanes)}}}"
        case pg_c.BroadcastOp():
            lanes = lanes_of(op.result.type)
            return f"({c_type(op.result.type)}){{{', '.join([args[0]] * lanes)}}}"
    assert isinstance(op, pg_c.VReduceOp)
    operator = "+" if op.kind.data == BinaryKind.ADD else "*"
    total = f"{args[0]}[0]"
    for lane in range(1, lanes_of(op.input.type)):  # in lane order
        total = f"({total} {operator} {args[0]}[{lane}])"
    return total


def _value_expr(op: Operation, names: Names) -> str:
    """The right-hand side of the `T vN = ...;` line a value op prints."""
    args = [names(v) for v in op.operands]
    match op:
        case pg_c.ConstOp():
            return c_literal(op.scalar, op.result.type)
        case pg_c.UnaryOp():
            return _unary_expr(op, args[0])
        case pg_c.CallOp():
            return _call_expr(op, args[0])
        case pg_c.BinaryOp():
            return _binary_expr(op, *args)
        case pg_c.CmpOp():
            return f"{args[0]} {op.operator.data} {args[1]}"
        case pg_c.SelectOp():
            return f"{args[0]} ? {args[1]} : {args[2]}"
        case pg_c.CastOp():
            return _cast_expr(op, args[0])
        case pg_c.BitcastOp():
            source, target = c_type(op.input.type), c_type(op.result.type)
            return f"(union {{ {source} s; {target} d; }}){{ .s = {args[0]} }}.d"
        case pg_c.ReadOp():
            return args[0]
        case pg_c.LoadOp():
            return _load_expr(op, names)
        case pg_c.VLoadOp() | pg_c.BroadcastOp() | pg_c.VReduceOp():
            return _vector_expr(op, args)
    raise CSourceError(f"{op.name} is not a pg_c value op")


class _FuncPrinter(KernelSource):
    """Names the values of one `pg_c.func` and prints it line by line."""

    ERROR = CSourceError
    BLOCKS = "loop"

    def __init__(self, func: pg_c.FuncOp):
        super().__init__(func.sym_name.data)
        self.func = func
        # the loop bounded by (start, end): the first (so top-level) for of a split kernel
        self.outer = None
        if OUTER_ATTR in func.attributes:
            self.outer = next((op for op in func.body.block.ops if isinstance(op, pg_c.ForOp)),
                              None)

    def run(self) -> str:
        restrict = " restrict" if self.func.restrict is not None else ""
        params = []
        for i, arg in enumerate(self.func.args):
            assert isinstance(arg.type, BufferType)
            self.names[arg] = f"p{i}"
            params.append(f"{_storage_type(arg.type.element_type)}*{restrict} p{i}")
        params += [f"int64_t {START_NAME}", f"int64_t {END_NAME}"]
        header = f"void {self.kernel}({', '.join(params)}) {{"
        for op in self.func.body.block.ops:
            self._statement(op)
        return "\n".join([header, *self.lines, "}"]) + "\n"

    def _statement(self, op: Operation) -> None:
        if isinstance(op, pg_c.ForOp):
            i = self.define(op.result, "i")
            first, end = str(op.start.data), str(op.end.data)
            if op is self.outer:
                offset = f" + {op.start.data}" if op.start.data else ""
                first, end = START_NAME + offset, END_NAME + offset
            self.open_block(f"for (int64_t {i} = {first}; {i} < {end}; {i}++) {{", [op.result])
            return
        if isinstance(op, pg_c.EndForOp):
            self.close_block()  # C scoping: what the loop declared ends with it
            return
        if isinstance(op, pg_c.StoreOp):
            value = self.name(op.value)
            if is_bool(op.value.type):
                value = f"(uint8_t){value}"
            self.emit(f"{self.name(op.buffer)}[{self.name(op.index)}] = {value};")
            return
        if isinstance(op, pg_c.VStoreOp):
            address = f"{self.name(op.buffer)} + {self.name(op.index)}"
            self.emit(f"*({c_type(op.value.type)}_u*)({address}) = {self.name(op.value)};")
            return
        if isinstance(op, pg_c.AssignOp):
            self.emit(f"{self.name(op.var)} = {self.name(op.value)};")
            return
        if isinstance(op, pg_c.DeclOp):
            t = op.element_type
            init = c_literal(scalar_value(op.init), lane_type(t))
            if isinstance(t, VectorType):
                init = f"{{{', '.join([init] * lanes_of(t))}}}"
            self.emit(f"{c_type(op.element_type)} {self.declare(op.result, 'acc')} = {init};")
            return
        expr = _value_expr(op, self.name)
        (result,) = op.results
        self.emit(f"{c_type(result.type)} {self.declare(result, 'v')} = {expr};")


def func_to_c(func: pg_c.FuncOp) -> str:
    """One `pg_c.func` as a C function definition."""
    return _FuncPrinter(func).run()


def module_to_c(module: ModuleOp) -> str:
    """Every `pg_c.func` of `module`, in order, as one C translation unit."""
    funcs = [op for op in module.ops if isinstance(op, pg_c.FuncOp)]
    texts = [func_to_c(op) for op in funcs]
    exports = [_outer_export(op) for op in funcs if OUTER_ATTR in op.attributes]
    # declarations in the prelude (before the first kernel, so every unit gets them)
    declarations = [f"{_CHEAP_VECTORIZE} {text.split(chr(10), 1)[0][:-2]};"
                    for op, text in zip(funcs, texts, strict=True)
                    if OUTER_ATTR in op.attributes
                    and sum(isinstance(o, pg_c.ForOp) for o in op.body.block.ops) == 1]
    vectors = sorted({t for op in funcs for t in _vector_types(op)}, key=c_type)
    typedefs = [line for t in vectors for line in vector_typedefs(t)]
    exps = sorted({c_type(op.input.type): op.input.type for func in funcs
                   for op in func.body.block.ops
                   if isinstance(op, pg_c.CallOp) and _is_exp_f32(op)}.items())
    helpers = [exp_f32_helper(t) for _, t in exps]
    return "\n".join([PRELUDE, *typedefs, *helpers, *exports, *declarations, *texts])


def _vector_types(func: pg_c.FuncOp) -> set[VectorType]:
    return {t for op in func.body.block.ops for v in (*op.operands, *op.results)
            if isinstance(t := _held(v.type), VectorType)}


def _held(t: Attribute) -> Attribute:
    """The type a local holds, or `t` itself."""
    return t.element_type if isinstance(t, pg_c.VarType) else t


def _outer_export(func: pg_c.FuncOp) -> str:
    """`const int64_t k0_pg_outer[2] = {trip, work};` of a kernel that may run in chunks."""
    trip, work = func.attributes[OUTER_ATTR], func.attributes.get(WORK_ATTR)
    if not isinstance(trip, IntegerAttr) or not isinstance(work, IntegerAttr):
        raise CSourceError(f"@{func.sym_name.data}: {OUTER_ATTR} and {WORK_ATTR} must be "
                           f"integers")
    name = outer_symbol(func.sym_name.data)
    return f"const int64_t {name}[2] = {{{trip.value.data}, {work.value.data}}};"
