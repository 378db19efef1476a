"""convert-uop-to-wgsl and the WGSL printer: which pg_wgsl op each pg_uop op becomes, the
launch taken from the specials, index as i32, values that escape a loop or an if, the
errors for what WGSL lacks, and how `module_to_wgsl` spells what WGSL lacks (NaN-safe
comparisons, trap-free division, bool storage, inf/NaN literals). Running the output is
tested in tests/unit/runtimes/test_webgpu.py."""

from __future__ import annotations

import math
import re

import pytest
from xdsl.dialects.builtin import ModuleOp, f16, f32, i1, i32
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import make_context
from picograd.dialects import pg_wgsl as W
from picograd.lowering.wgsl.convert_uop_to_wgsl import ConvertUopToWgslPass
from picograd.lowering.wgsl.printer import WgslSourceError, module_to_wgsl, wgsl_literal


def lower(text: str) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    ConvertUopToWgslPass().apply(ctx, module)
    module.verify()
    return module


def fns(module: ModuleOp) -> dict[str, W.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, W.FuncOp)}


def spelled(fn: W.FuncOp) -> list[str]:
    """Each op's name with its operator or callee: `binary +`, `call exp`."""
    out = []
    for op in fn.body.block.ops:
        name = op.name.removeprefix("pg_wgsl.")
        for attr in ("operator", "callee"):
            if attr in op.properties:
                name += f" {op.properties[attr].data}"  # type: ignore[attr-defined]
        out.append(name)
    return out


def kernel(body: str, t: str = "f32", n: int = 4) -> str:
    return f"""
    pg_uop.kernel @k(%a: !pg.buffer<{n}x{t}>) {{
      %i = pg_uop.special local_id 0 size {n}
      %x = pg_uop.load %a[%i] : !pg.buffer<{n}x{t}> -> {t}
{body}
      pg_uop.store %y, %a[%i] : {t}, !pg.buffer<{n}x{t}>
    }}"""


@pytest.mark.parametrize(("op", "t", "want"), [
    ("unary exp %x : f32", "f32", ["call exp"]), ("unary log %x : f32", "f32", ["call log"]),
    ("unary sqrt %x : f32", "f32", ["call sqrt"]), ("unary sin %x : f32", "f32", ["call sin"]),
    ("unary exp2 %x : f32", "f32", ["call exp2"]),
    ("unary log2 %x : f32", "f32", ["call log2"]),
    ("unary neg %x : f32", "f32", ["unary -"]), ("unary neg %x : i32", "i32", ["unary -"]),
    ("unary not %x : i1", "i1", ["unary !"]), ("unary not %x : i32", "i32", ["unary ~"]),
    ("unary recip %x : f32", "f32", ["const", "binary /"]),
    ("binary add %x, %x : f32", "f32", ["binary +"]),
    ("binary div %x, %x : i32", "i32", ["binary /"]),
    ("binary mod %x, %x : i32", "i32", ["binary %"]),
    ("binary max %x, %x : f32", "f32", ["binary max"]),
    ("binary min %x, %x : i32", "i32", ["binary min"]),
    ("binary xor %x, %x : i32", "i32", ["binary ^"]),
    ("binary xor %x, %x : i1", "i1", ["cmp !="]),
    ("binary max %x, %x : i1", "i1", ["binary |"]),
    ("binary min %x, %x : i1", "i1", ["binary &"]),
    ("binary and %x, %x : i1", "i1", ["binary &"]),
    ("binary or %x, %x : i1", "i1", ["binary |"]),
])
def test_op_spelling(op: str, t: str, want: list[str]) -> None:
    ops = spelled(fns(lower(kernel(f"      %y = pg_uop.{op}", t)))["k"])
    assert ops == ["builtin", "load", *want, "store"]


def test_bool_ordering_goes_through_i32_and_equality_does_not() -> None:
    body = """
      %lt = pg_uop.cmp lt %x, %x : i1
      %eq = pg_uop.cmp eq %x, %lt : i1
      %y = pg_uop.where %eq, %lt, %x : i1"""
    ops = spelled(fns(lower(kernel(body, "i1")))["k"])
    assert ops == ["builtin", "load", "cast", "cast", "cmp <", "cmp ==", "select", "store"]


def test_launch_comes_from_the_specials_and_index_is_i32() -> None:
    module = lower("""
    pg_uop.kernel @k(%a: !pg.buffer<96xi32>) {
      %gx = pg_uop.special group_id 0 size 2
      %gz = pg_uop.special group_id 2 size 3
      %ly = pg_uop.special local_id 1 size 16
      %s = pg_uop.binary add %gx, %gz : index
      %t = pg_uop.binary add %s, %ly : index
      %v = pg_uop.cast %t : index to i32
      %w = pg_uop.cast %v : i32 to index
      pg_uop.store %v, %a[%w] : i32, !pg.buffer<96xi32>
    }""")
    fn = fns(module)["k"]
    assert fn.launch == ((2, 1, 3), (1, 16, 1))
    assert fn.properties["grid"].get_values() == (2, 1, 3)  # type: ignore[attr-defined]
    assert spelled(fn) == ["builtin", "builtin", "builtin", "binary +", "binary +", "store"]
    store = fn.body.block.last_op
    assert isinstance(store, W.StoreOp) and store.value is store.index  # the casts vanished
    for op in fn.body.block.ops:
        assert all(r.type in (i32, i1, f32) for r in op.results)


def test_values_escaping_loops_and_ifs_go_through_vars() -> None:
    module = lower("""
    pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
      %i = pg_uop.range 0 to 4 loop
      %x = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
      %j = pg_uop.range 0 to 2 loop
      %y = pg_uop.binary add %x, %x : f32
      pg_uop.end %j
      %c = pg_uop.cmp gt %y, %x : f32
      pg_uop.if %c
      %z = pg_uop.binary mul %y, %y : f32
      pg_uop.endif
      pg_uop.store %z, %a[%i] : f32, !pg.buffer<4xf32>
      pg_uop.end %i
    }""")
    ops = spelled(fns(module)["k"])
    # %y is read back once after its loop; the if, still inside that block, reuses the read.
    assert ops == ["for", "load", "var", "for", "binary +", "assign", "end_for", "read",
                   "cmp >", "var", "if", "binary *", "assign", "end_if", "read", "store",
                   "end_for"]


@pytest.mark.parametrize(("body", "message"), [
    ("%y = pg_uop.cast %x : f32 to f64\n %z = pg_uop.cast %y : f64 to f32",
     "@k: pg_uop.cast result: WGSL has no f64 (it has f32, i32 and bool, and emulates f16, "
     "i8, ui8 and i16)"),
    ("%g = pg_uop.special global_id 0 size 4", "pg_uop.special global_id is not supported"),
    ("%acc = pg_uop.acc 0 : i64", "@k: pg_uop.acc result: WGSL has no i64"),
    ("%s = pg_uop.shared : !pg.buffer<4xf64>", "@k: pg_uop.shared result: WGSL has no f64"),
    ("%big = pg_uop.const 4294967296 : index", "the index constant 4294967296 does not fit"),
])
def test_what_wgsl_lacks_fails_the_pass_naming_the_kernel(body: str, message: str) -> None:
    text = f"""
    pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {{
      %i = pg_uop.special local_id 0 size 4
      %x = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
      {body}
    }}"""
    with pytest.raises(PassFailedException, match=re.escape(message)):
        lower(text)


def test_buffer_dtype_wgsl_lacks_fails_the_pass() -> None:
    with pytest.raises(PassFailedException, match=r"@k: buffer !pg.buffer<4xi64>: WGSL has no i64"):
        lower("pg_uop.kernel @k(%a: !pg.buffer<4xi64>) {\n}")


# ── the printer ──────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("value", "t", "text"), [
    (1.5, f32, "1.5f"), (1.0, f32, "1.0f"), (-0.0, f32, "-0.0f"), (1e30, f32, "1.00000002e+30f"),
    (0.1, f32, "0.100000001f"), (math.inf, f32, "bitcast<f32>(0x7f800000u)"),
    (-math.inf, f32, "bitcast<f32>(0xff800000u)"), (math.nan, f32, "bitcast<f32>(0x7fc00000u)"),
    (7, i32, "7i"), (-2**31, i32, "i32(-2147483648)"), (1, i1, "true"), (0, i1, "false"),
])
def test_literals_are_exact(value: float, t, text: str) -> None:
    assert wgsl_literal(value, t) == text


def test_printer_spells_what_wgsl_lacks_and_emits_only_the_helpers_used() -> None:
    source = module_to_wgsl(lower("""
    pg_uop.kernel @k(%a: !pg.buffer<4xf32>, %b: !pg.buffer<4xi1>, %n: !pg.buffer<4xi32>) {
      %i = pg_uop.special local_id 0 size 4
      %x = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
      %m = pg_uop.binary max %x, %x : f32
      %ne = pg_uop.cmp ne %m, %x : f32
      %lt = pg_uop.cmp lt %m, %x : f32
      %nb = pg_uop.cast %x : f32 to i1
      %both = pg_uop.binary and %ne, %nb : i1
      %p = pg_uop.load %b[%i] : !pg.buffer<4xi1> -> i1
      %either = pg_uop.binary or %both, %p : i1
      %w = pg_uop.where %lt, %either, %p : i1
      pg_uop.store %w, %b[%i] : i1, !pg.buffer<4xi1>
      %s = pg_uop.shared : !pg.buffer<4xi1>
      pg_uop.store %w, %s[%i] : i1, !pg.buffer<4xi1>
      %q = pg_uop.load %n[%i] : !pg.buffer<4xi32> -> i32
      %d = pg_uop.binary div %q, %q : i32
      pg_uop.store %d, %n[%i] : i32, !pg.buffer<4xi32>
    }"""))
    assert "fn pg_isnan(" in source and "fn pg_ordered(" in source and "fn pg_max(" in source
    assert "fn pg_div(" in source
    assert "fn pg_min(" not in source and "fn pg_mod(" not in source
    assert "@group(0) @binding(1) var<storage, read_write> k_p1: array<u32>;" in source
    assert "var<workgroup> k_s" in source and ": array<u32, 4>;" in source
    lines = [line.strip() for line in source.splitlines()]
    assert "let v2_m = pg_max(v1_x, v1_x);" in lines
    assert "let v3_ne = v2_m != v1_x || !pg_ordered(v2_m, v1_x);" in lines
    assert "let v4_lt = v2_m < v1_x && pg_ordered(v2_m, v1_x);" in lines
    assert "let v5_nb = (bitcast<u32>(v1_x) & 0x7fffffffu) != 0u;" in lines
    assert "let v7_p = (k_p1[v0_i] != 0u);" in lines
    assert "k_p1[v0_i] = select(0u, 1u, v9_w);" in lines


def test_printer_rejects_kernel_names_wgsl_cannot_take() -> None:
    module = lower("pg_uop.kernel @pg_max(%a: !pg.buffer<4xf32>) {\n}")
    with pytest.raises(WgslSourceError, match="'pg_max'"):
        module_to_wgsl(module)


# ── emulated types ───────────────────────────────────────────────────────────


def _cast_line(src: str, dst: str) -> str:
    """The WGSL right-hand side of `pg_uop.cast %x : src to dst` (x loaded from a buffer)."""
    text = f"""
    pg_uop.kernel @k(%a: !pg.buffer<4x{src}>, %b: !pg.buffer<4x{dst}>) {{
      %i = pg_uop.special local_id 0 size 4
      %x = pg_uop.load %a[%i] : !pg.buffer<4x{src}> -> {src}
      %y = pg_uop.cast %x : {src} to {dst}
      pg_uop.store %y, %b[%i] : {dst}, !pg.buffer<4x{dst}>
    }}"""
    source = module_to_wgsl(lower(text))
    return re.findall(r"let v2_y = (.*);", source)[0]


@pytest.mark.parametrize(("src", "dst", "expr"), [
    ("i32", "i8", "((v1_x << 24u) >> 24u)"), ("i32", "ui8", "(v1_x & 255i)"),
    ("i32", "i16", "((v1_x << 16u) >> 16u)"), ("f32", "f16", "pg_f16(v1_x)"),
    ("i16", "i8", "((v1_x << 24u) >> 24u)"), ("i8", "ui8", "(v1_x & 255i)"),
    ("f16", "i8", "((pg_i32(v1_x) << 24u) >> 24u)"), ("i16", "f16", "pg_f16(f32(v1_x))"),
    ("f32", "i8", "((pg_i32(v1_x) << 24u) >> 24u)"),
    # exact: no wrapping or rounding
    ("i8", "i32", "v1_x"), ("ui8", "i16", "v1_x"), ("f16", "f32", "v1_x"),
    ("i8", "f16", "f32(v1_x)"), ("i16", "f32", "f32(v1_x)"), ("i1", "i8", "i32(v1_x)"),
    ("f16", "i1", "(bitcast<u32>(v1_x) & 0x7fffffffu) != 0u"), ("ui8", "i1", "v1_x != 0i"),
])
def test_casts_into_emulated_types_wrap_or_round(src: str, dst: str, expr: str) -> None:
    assert _cast_line(src, dst) == expr


def test_emulated_buffers_are_arrays_of_their_wide_type_and_f16_constants_round() -> None:
    module = lower("""
    pg_uop.kernel @k(%a: !pg.buffer<4xf16>, %b: !pg.buffer<4xi8>) {
      %i = pg_uop.special local_id 0 size 4
      %c = pg_uop.const 0.1 : f16
      pg_uop.store %c, %a[%i] : f16, !pg.buffer<4xf16>
      %m = pg_uop.const -128 : i8
      pg_uop.store %m, %b[%i] : i8, !pg.buffer<4xi8>
    }""")
    source = module_to_wgsl(module)
    assert "var<storage, read_write> k_p0: array<f32>;" in source
    assert "var<storage, read_write> k_p1: array<i32>;" in source
    assert "= 0.0999755859f;" in source and "= -128i;" in source
    assert "fn pg_f16" not in source  # only the helpers used are printed
    assert wgsl_literal(1e6, f16) == "bitcast<f32>(0x7f800000u)"  # past 65504: inf


def test_arithmetic_on_an_emulated_type_needs_uop_legalize() -> None:
    with pytest.raises(PassFailedException, match=r"@k: pg_uop.binary add on i8, which WGSL "
                                                  r"emulates: run uop-legalize\{target=wgsl\}"):
        lower(kernel("      %y = pg_uop.binary add %x, %x : i8", "i8"))
