"""`uop-legalize`: the rule table, the rewrites' accuracy, the no-op targets, the errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, f16, f32, f64, i1, i32
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from picograd.compiler.pipelines import (
    GPU_PTX,
    GPU_WGSL,
    parse_pipeline,
    run_pipeline,
    stage_pipeline,
)
from picograd.dialects import make_context, pg_uop
from picograd.dialects.capabilities import TRANSCENDENTALS, Capabilities, capabilities
from picograd.errors import DeviceError
from picograd.interpreter import run
from picograd.passes.uop.uop_legalize import Table, UopLegalizePass, legalize_rules


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def legalize(module: ModuleOp, target: str = "ptx") -> ModuleOp:
    UopLegalizePass(target).apply(make_context(), module)
    module.verify()
    return module


def kernel(body: str, args: str = "%a: !pg.buffer<4xf32>", name: str = "k0") -> str:
    return f"pg_uop.kernel @{name}({args}) {{\n{body}\n}}"


def unary_kernel(function: str, dtype: str) -> str:
    return kernel(f"""  %i = pg_uop.range 0 to 4 global
  %x = pg_uop.load %a[%i] : !pg.buffer<4x{dtype}> -> {dtype}
  %y = pg_uop.unary {function} %x : {dtype}
  pg_uop.store %y, %a[%i] : {dtype}, !pg.buffer<4x{dtype}>
  pg_uop.end %i""", args=f"%a: !pg.buffer<4x{dtype}>")


def math_in(module: ModuleOp) -> list[tuple[str, str]]:
    return [(str(op.kind.data), str(op.result.type)) for op in module.walk()
            if isinstance(op, pg_uop.UnaryOp)]


# ── the table ────────────────────────────────────────────────────────────────


def test_rules_carry_their_identities():
    rules = legalize_rules("ptx")
    assert rules.name == "uop-legalize{target=ptx}"
    assert [r.identity for r in rules.rules] == [
        "exp x -> exp2(x * log2(e))", "log x -> log2(x) * ln(2)",
        "f(x:f16) -> cast(f(cast(x, f32)), f16)", "f(x:T) -> cast(f(cast(x, W)), T)",
        "x op y : T -> cast(x:W op y:W, T)"]


def test_pipelines_and_option():
    assert "uop-legalize{target=ptx}" in GPU_PTX and "uop-legalize{target=wgsl}" in GPU_WGSL
    (p,) = parse_pipeline("uop-legalize{target=wgsl}")
    assert p == UopLegalizePass(target="wgsl")
    assert UopLegalizePass().target == "ptx"


def test_guards_read_the_table():
    """f16 is promoted only where f32 computes the function; exp/log only where exp2/log2
    exist. A made-up table shows the guards ask it, not a fixed list."""
    no_f32_math = Capabilities(target="toy", gpu=True, dtypes=frozenset({f16, f32}),
                               math=frozenset({("sqrt", f16), ("exp2", f16)}), index_bits=32)
    table = Table(no_f32_math)
    assert table.lacks("exp")(_value(f16))  # f16 has exp2, not exp
    assert not table.lacks("log")(_value(f16))  # no log2 either: nothing to rewrite to
    assert not table.computes("sin", f32) and table.computes("exp", f16)
    sin16 = parse(unary_kernel("sin", "f16"))
    op = next(o for o in sin16.walk() if isinstance(o, pg_uop.UnaryOp))
    assert not table.f16_lacks(op)  # f32 has no sin: promoting would not help
    ptx = Table(capabilities("ptx"))
    assert ptx.f16_lacks(op) and ptx.computes("exp", f32) and not ptx.computes("exp", f64)


def _value(dtype):
    return pg_uop.ConstOp(1.0, dtype).result


# ── rewrites ─────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("function", "dtype", "after"), [
    ("exp", "f32", [("exp2", "f32")]),
    ("log", "f32", [("log2", "f32")]),
    ("sin", "f32", [("sin", "f32")]),
    ("sqrt", "f64", [("sqrt", "f64")]),
    ("exp2", "f16", [("exp2", "f32")]),
    ("sqrt", "f16", [("sqrt", "f32")]),
    ("exp", "f16", [("exp2", "f32")]),
    ("log", "f16", [("log2", "f32")]),
    ("neg", "f16", [("neg", "f16")]),  # not math: the lowering's business
    ("recip", "f16", [("recip", "f16")]),
])
def test_ptx_keeps_only_functions_its_table_has(function: str, dtype: str, after):
    module = legalize(parse(unary_kernel(function, dtype)))
    assert math_in(module) == after
    for f, t in math_in(module):
        assert f not in TRANSCENDENTALS or capabilities("ptx").has_math(f, _type(t))


def _type(name: str):
    return {"f16": f16, "f32": f32, "f64": f64}[name]


@pytest.mark.parametrize("target", ["llvm", "c", "wgsl"])
def test_targets_that_have_the_math_are_untouched(target: str):
    text = "\n".join(unary_kernel(f, "f32").replace("@k0", f"@k_{f}") for f in TRANSCENDENTALS)
    module = parse(text)
    before = str(module)
    assert str(legalize(module, target)) == before


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_cpu_targets_are_a_no_op_even_on_what_gpus_reject(target: str):
    args = ", ".join(f"%a{n}: !pg.buffer<4xf64>" for n in range(12))
    body = """  %i = pg_uop.range 0 to 4 global
  %x = pg_uop.load %a0[%i] : !pg.buffer<4xf64> -> f64
  %y = pg_uop.unary exp %x : f64
  %h = pg_uop.cast %y : f64 to f16
  %s = pg_uop.unary sin %h : f16
  %dead = pg_uop.unary log %s : f16
  %w = pg_uop.cast %s : f16 to f64
  pg_uop.store %w, %a1[%i] : f64, !pg.buffer<4xf64>
  pg_uop.end %i"""
    module = parse(kernel(body, args))
    before = str(module)
    assert str(legalize(module, target)) == before


def test_a_fixpoint_and_idempotent():
    module = legalize(parse(unary_kernel("exp", "f16")))
    once = str(module)
    assert str(legalize(module)) == once
    (k,) = [op for op in module.ops if isinstance(op, pg_uop.KernelOp)]
    assert legalize_rules("ptx").apply(k) == 0


def test_only_kernels_are_rewritten():
    """pg_uop ALU ops also live in pg_loop bodies; the pass only legalises pg_uop kernels."""
    text = """pg_loop.kernel @l(%a: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %x = pg_loop.load %a[%i] : !pg.buffer<4xf32> -> f32
    %y = pg_uop.unary exp %x : f32
    pg_loop.store %y, %a[%i] : f32, !pg.buffer<4xf32>
  }
}"""
    module = parse(text)
    before = str(module)
    assert str(legalize(module)) == before


# ── accuracy, through the interpreter ────────────────────────────────────────


def _legalized_main(function: str, dtype: str, n: int) -> ModuleOp:
    module = parse(f"""func.func @main(%x: tensor<{n}x{dtype}>) -> tensor<{n}x{dtype}> {{
  %y = pg_tensor.unary {function} %x : tensor<{n}x{dtype}>
  func.return %y : tensor<{n}x{dtype}>
}}""")
    return legalize(run_pipeline(module, stage_pipeline("uop")))


def _run(module: ModuleOp, x: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return run(module, [x])[0].ravel()


SPECIALS = np.array([0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 1e-45, 3.4e38],
                    np.float32)


def test_exp_via_exp2_is_within_its_documented_bound():
    rng = np.random.default_rng(0)
    x = np.concatenate([SPECIALS, rng.uniform(-104, 89, 3000).astype(np.float32),
                        rng.uniform(-2, 2, 1000).astype(np.float32)])
    module = _legalized_main("exp", "f32", len(x))
    assert ("exp", "f32") not in math_in(module)
    got = _run(module, x).astype(np.float64)
    with np.errstate(all="ignore"):
        exact = np.exp(x.astype(np.float64))
        want32 = exact.astype(np.float32).astype(np.float64)
    special = ~np.isfinite(want32) | (want32 == 0) | (x == 0) | ~np.isfinite(x)
    assert np.array_equal(np.isnan(got), np.isnan(want32))
    assert np.array_equal(got[special & ~np.isnan(got)], want32[special & ~np.isnan(got)])
    normal = ~special & (exact >= np.finfo(np.float32).tiny)
    bound = (np.abs(x[normal]) + 2) * 2.0**-23
    assert np.all(np.abs(got[normal] - exact[normal]) <= bound * exact[normal])
    tiny = ~special & ~normal  # subnormal results: an absolute bound
    assert np.all(np.abs(got[tiny] - exact[tiny]) <= 64 * 2.0**-149)


def test_log_via_log2_is_within_3_ulp():
    rng = np.random.default_rng(1)
    x = np.concatenate([SPECIALS, -SPECIALS, np.exp(rng.uniform(-100, 88, 4000)),
                        rng.uniform(0.5, 2, 1000)]).astype(np.float32)
    got = _run(_legalized_main("log", "f32", len(x)), x).astype(np.float64)
    with np.errstate(all="ignore"):
        exact = np.log(x.astype(np.float64))
        want32 = np.log(x).astype(np.float64)
    finite = np.isfinite(exact)
    assert np.array_equal(got[~finite], want32[~finite], equal_nan=True)
    ulp = np.spacing(np.abs(exact[finite]).astype(np.float32)).astype(np.float64)
    assert np.all(np.abs(got[finite] - exact[finite]) <= 3 * ulp)


# What PTX computes an f16 function with: the f32 function, exp and log as rewritten.
F32_FORM = {
    "exp": lambda v: np.exp2(v * np.float32(1 / math.log(2))),
    "log": lambda v: np.log2(v) * np.float32(math.log(2)),
    "sqrt": np.sqrt, "sin": np.sin, "exp2": np.exp2, "log2": np.log2,
}


@pytest.mark.parametrize("function", list(F32_FORM))
def test_f16_promotion_is_f32_math_rounded_to_f16(function: str):
    x = np.arange(0, 65536, 7, dtype=np.uint16).view(np.float16)
    got = _run(_legalized_main(function, "f16", len(x)), x)
    assert all(t != "f16" for _, t in math_in(_legalized_main(function, "f16", 4)))
    with np.errstate(all="ignore"):
        want = F32_FORM[function](x.astype(np.float32)).astype(np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


# ── errors ───────────────────────────────────────────────────────────────────


def _fails(text: str, target: str) -> str:
    with pytest.raises(PassFailedException) as info:
        legalize(parse(text), target)
    return str(info.value)


def test_unsupported_math_names_kernel_op_dtype_and_target():
    message = _fails(unary_kernel("exp", "f64"), "ptx")
    assert message == ("uop-legalize{target=ptx}: @k0: 'pg_uop.unary exp' on f64 is not "
                       "supported by PTX (its f64 math: sqrt)")
    message = _fails(unary_kernel("sin", "f64"), "ptx")
    assert "'pg_uop.unary sin' on f64" in message


@pytest.mark.parametrize(("dtype", "where"), [
    ("f64", "argument 0 has type !pg.buffer<4xf64>"),
    ("i64", "argument 0 has type !pg.buffer<4xi64>"),
])
def test_wgsl_rejects_buffers_of_dtypes_it_lacks(dtype: str, where: str):
    text = kernel(f"""  %i = pg_uop.range 0 to 4 global
  %x = pg_uop.load %a[%i] : !pg.buffer<4x{dtype}> -> {dtype}
  pg_uop.store %x, %a[%i] : {dtype}, !pg.buffer<4x{dtype}>
  pg_uop.end %i""", args=f"%a: !pg.buffer<4x{dtype}>")
    assert _fails(text, "wgsl") == (f"uop-legalize{{target=wgsl}}: @k0: {dtype} is not "
                                    f"supported by WGSL (it has f32, i1, i32; emulates f16, "
                                    f"i8, ui8, i16); {where}")


@pytest.mark.parametrize(("op", "where"), [
    ("%w = pg_uop.cast %x : f32 to f64", "'pg_uop.cast' has result type f64"),
    ("%w = pg_uop.acc 0 : i64", "'pg_uop.acc' has result type !pg_uop.acc<i64>"),
    ("%w = pg_uop.shared : !pg.buffer<8xf64>",
     "'pg_uop.shared' has result type !pg.buffer<8xf64>"),
])
def test_wgsl_rejects_values_of_dtypes_it_lacks(op: str, where: str):
    text = kernel(f"""  %i = pg_uop.range 0 to 4 global
  %x = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
  {op}
  pg_uop.store %x, %a[%i] : f32, !pg.buffer<4xf32>
  pg_uop.end %i""")
    message = _fails(text, "wgsl")
    assert message.startswith("uop-legalize{target=wgsl}: @k0: ") and message.endswith(where)


def test_index_and_bool_are_fine_on_wgsl():
    text = kernel("""  %i = pg_uop.range 0 to 4 global
  %c2 = pg_uop.const 2 : index
  %j = pg_uop.binary div %i, %c2 : index
  %x = pg_uop.load %a[%j] : !pg.buffer<4xf32> -> f32
  %b = pg_uop.load %m[%j] : !pg.buffer<4xi1> -> i1
  %z = pg_uop.const 0.0 : f32
  %y = pg_uop.where %b, %x, %z : f32
  pg_uop.store %y, %a[%i] : f32, !pg.buffer<4xf32>
  pg_uop.end %i""", args="%a: !pg.buffer<4xf32>, %m: !pg.buffer<4xi1>")
    module = parse(text)
    before = str(module)
    assert str(legalize(module, "wgsl")) == before
    assert capabilities("wgsl").supports(i1) and capabilities("wgsl").supports(i32)


@pytest.mark.parametrize(("buffers", "ok"), [(8, True), (9, False)])
def test_wgsl_buffer_limit(buffers: int, ok: bool):
    args = ", ".join(f"%a{n}: !pg.buffer<1xf32>" for n in range(buffers))
    text = kernel("""  %c0 = pg_uop.const 0 : index
  %x = pg_uop.load %a0[%c0] : !pg.buffer<1xf32> -> f32
  pg_uop.store %x, %a1[%c0] : f32, !pg.buffer<1xf32>""", args=args, name="wide")
    if ok:
        legalize(parse(text), "wgsl")
        return
    assert _fails(text, "wgsl") == ("uop-legalize{target=wgsl}: @wide: 9 buffer arguments, "
                                    "but WGSL binds at most 8 per kernel")
    legalize(parse(text), "ptx")  # no limit there


def test_unknown_target_is_a_device_error():
    with pytest.raises(DeviceError, match="unknown compile target 'metal'"):
        legalize(parse(unary_kernel("exp", "f32")), "metal")


# ── emulated types (WGSL: f16 in f32; i8, ui8, i16 in i32) ───────────────────


def _narrow_kernel(t: str, ops: list[str]) -> str:
    """`%y<n> = <op>` of the loaded %a, %b for each op, each stored to its own output; and
    an `@main` launching it on fresh outputs."""
    buf = f"!pg.buffer<8x{t}>"
    outs = [f"%o{n}" for n in range(len(ops))]
    args = ", ".join([f"%x: {buf}", f"%z: {buf}"] + [f"{o}: {buf}" for o in outs])
    lines = ["  %i = pg_uop.range 0 to 8 global",
             f"  %a = pg_uop.load %x[%i] : {buf} -> {t}",
             f"  %b = pg_uop.load %z[%i] : {buf} -> {t}"]
    for n, op in enumerate(ops):
        lines += [f"  %y{n} = pg_uop.{op} : {t}", f"  pg_uop.store %y{n}, %o{n}[%i] : {t}, {buf}"]
    types = ", ".join([buf] * len(ops))
    main = [f"func.func @main(%x: {buf}, %z: {buf}) -> ({types}) {{",
            *[f"  {o} = pg_sched.alloc : {buf}" for o in outs],
            f"  pg_sched.launch @k0(%x, %z, {', '.join(outs)}) : {buf}, {buf}, {types}",
            f"  func.return {', '.join(outs)} : {types}", "}"]
    return kernel("\n".join([*lines, "  pg_uop.end %i"]), args=args) + "\n" + "\n".join(main)


def _arithmetic_types(module: ModuleOp) -> set[str]:
    return {str(op.result.type) for op in module.walk()
            if isinstance(op, pg_uop.UnaryOp | pg_uop.BinaryOp)}


INT_OPS = ["binary add %a, %b", "binary sub %a, %b", "binary mul %a, %b",
           "binary div %a, %b", "binary mod %a, %b", "binary max %a, %b",
           "binary min %a, %b", "binary and %a, %b", "binary xor %a, %b",
           "binary shl %a, %b", "binary shr %a, %b", "unary neg %a", "unary not %a"]
FLOAT_OPS = ["binary add %a, %b", "binary mul %a, %b", "binary div %a, %b",
             "binary max %a, %b", "unary neg %a", "unary recip %a", "unary sqrt %a",
             "unary exp2 %a"]


@pytest.mark.parametrize(("t", "dtype"), [("i8", np.int8), ("ui8", np.uint8),
                                          ("i16", np.int16), ("f16", np.float16)])
def test_wgsl_computes_emulated_types_in_the_wide_type_with_the_same_results(t, dtype):
    all_ops = FLOAT_OPS if t == "f16" else INT_OPS
    if t == "f16":
        a = np.array([1, 2049, 65504, -0.0, np.inf, 6e-8, np.nan, 3], dtype)
        b = np.array([2048, 1, 16, 0.0, -np.inf, 6e-8, 1, 1e-3], dtype)
    else:
        info = np.iinfo(dtype)
        a = np.array([info.min, info.max, -1 if info.min else 1, 7, info.min, 5, 0, 100],
                     dtype)
        b = np.array([-1 if info.min else 3, 1, 9, 3, 2, info.max, 17, 15], dtype)
    for start in range(0, len(all_ops), 6):  # 2 inputs + 6 outputs: WGSL's 8 buffers
        ops = all_ops[start:start + 6]
        before = parse(_narrow_kernel(t, ops))
        after = legalize(before.clone(), "wgsl")
        assert _arithmetic_types(after) == {"f32" if t == "f16" else "i32"}
        kernels = [op for op in after.ops if isinstance(op, pg_uop.KernelOp)]
        assert legalize_rules("wgsl").apply(kernels[0]) == 0  # a fixpoint
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want, got = run(before, [a, b]), run(after, [a, b])
        for op, w, g in zip(ops, want, got, strict=True):
            np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8), err_msg=op)


def test_shift_amounts_stay_modulo_the_narrow_width():
    after = legalize(parse(_narrow_kernel("i8", ["binary shl %a, %b"])), "wgsl")
    masks = [op.scalar for op in after.walk() if isinstance(op, pg_uop.ConstOp)]
    assert masks == [7]


def test_capabilities_list_the_emulated_types():
    from xdsl.dialects.builtin import i8, i16

    from picograd.dialects.dtypes import ui8

    caps = capabilities("wgsl")
    assert {caps.wide_type(t) for t in (i8, ui8, i16)} == {i32} and caps.wide_type(f16) == f32
    assert caps.supports(f16) and not caps.supports(f64)
    assert caps.wide_type(f32) is None and capabilities("ptx").wide_type(f16) is None
