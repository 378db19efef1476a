"""convert-uop-to-c: which pg_c op each pg_uop op becomes, `restrict` from the launches in
@main, values that escape their loop, and the errors for what C cannot express."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import make_context
from picograd.dialects import pg_c as C
from picograd.lowering.c.convert_uop_to_c import ConvertUopToCPass


def lower(text: str) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    ConvertUopToCPass().apply(ctx, module)
    module.verify()
    return module


def funcs(module: ModuleOp) -> dict[str, C.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, C.FuncOp)}


def spelled(func: C.FuncOp) -> list[str]:
    """Each op's name with its operator or callee: `binary +`, `call expf`."""
    out = []
    for op in func.body.block.ops:
        name = op.name.removeprefix("pg_c.")
        for attr in ("operator", "callee"):
            if attr in op.properties:
                name += f" {op.properties[attr].data}"  # type: ignore[attr-defined]
        out.append(name)
    return out


def unary_kernel(kind: str, t: str) -> str:
    return f"""
    pg_uop.kernel @k(%a: !pg.buffer<4x{t}>) {{
      %i = pg_uop.range 0 to 4 global
      %x = pg_uop.load %a[%i] : !pg.buffer<4x{t}> -> {t}
      %y = pg_uop.unary {kind} %x : {t}
      pg_uop.store %y, %a[%i] : {t}, !pg.buffer<4x{t}>
      pg_uop.end %i
    }}"""


@pytest.mark.parametrize(("kind", "t", "want"), [
    ("exp", "f32", ["call expf"]), ("log", "f32", ["call logf"]),
    ("sqrt", "f32", ["call sqrtf"]), ("sin", "f32", ["call sinf"]),
    ("exp", "f64", ["call exp"]), ("sin", "f16", ["call sinf"]),
    ("neg", "f32", ["unary -"]), ("neg", "i32", ["unary -"]),
    ("not", "i1", ["unary !"]), ("not", "i32", ["unary ~"]),
    ("recip", "f32", ["const", "binary /"]),
])
def test_unary_spelling(kind: str, t: str, want: list[str]) -> None:
    ops = spelled(funcs(lower(unary_kernel(kind, t)))["k"])
    assert ops == ["for", "load", *want, "store", "end_for"]


def binary_kernel(kind: str, t: str) -> str:
    return f"""
    pg_uop.kernel @k(%a: !pg.buffer<4x{t}>) {{
      %i = pg_uop.range 0 to 4 global
      %x = pg_uop.load %a[%i] : !pg.buffer<4x{t}> -> {t}
      %y = pg_uop.binary {kind} %x, %x : {t}
      pg_uop.store %y, %a[%i] : {t}, !pg.buffer<4x{t}>
      pg_uop.end %i
    }}"""


@pytest.mark.parametrize(("kind", "t", "want"), [
    ("add", "f32", "+"), ("sub", "i32", "-"), ("mul", "f64", "*"), ("div", "i32", "/"),
    ("mod", "i32", "%"), ("max", "f32", "max"), ("min", "i32", "min"), ("and", "i32", "&"),
    ("or", "i1", "|"), ("xor", "i1", "^"), ("max", "i1", "|"), ("min", "i1", "&"),
])
def test_binary_spelling(kind: str, t: str, want: str) -> None:
    ops = spelled(funcs(lower(binary_kernel(kind, t)))["k"])
    assert ops == ["for", "load", f"binary {want}", "store", "end_for"]


TWO_LAUNCHES = """
pg_uop.kernel @k(%a: !pg.buffer<4xf32>, %b: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %x = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
  pg_uop.store %x, %b[%i] : f32, !pg.buffer<4xf32>
  pg_uop.end %i
}
pg_uop.kernel @unused(%a: !pg.buffer<4xf32>) {
}
func.func @main(%a: !pg.buffer<4xf32>) -> !pg.buffer<4xf32> {
  %t = pg_sched.alloc : !pg.buffer<4xf32>
  pg_sched.launch @k(%a, %t) : !pg.buffer<4xf32>, !pg.buffer<4xf32>
  pg_sched.launch @k(SECOND) : !pg.buffer<4xf32>, !pg.buffer<4xf32>
  func.return %t : !pg.buffer<4xf32>
}
"""


def test_restrict_when_every_launch_passes_distinct_buffers() -> None:
    lowered = funcs(lower(TWO_LAUNCHES.replace("SECOND", "%t, %a")))
    assert lowered["k"].restrict is not None
    assert lowered["unused"].restrict is None  # never launched: nothing is known


def test_no_restrict_when_a_launch_aliases() -> None:
    lowered = funcs(lower(TWO_LAUNCHES.replace("SECOND", "%t, %t")))
    assert lowered["k"].restrict is None


def test_main_is_kept_and_no_uop_is_left() -> None:
    module = lower(TWO_LAUNCHES.replace("SECOND", "%t, %a"))
    names = [op.name for op in module.walk()]
    assert not [n for n in names if n.startswith("pg_uop.")]
    assert names.count("pg_sched.launch") == 2 and "func.func" in names


ESCAPE = """
pg_uop.kernel @k(%a: !pg.buffer<4xf32>, %out: !pg.buffer<1xf32>) {
  %c0 = pg_uop.const 0 : index
  %i = pg_uop.range 0 to 4 global
  %j = pg_uop.range 0 to 2 loop
  %x = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
  pg_uop.end %j
  %y = pg_uop.unary neg %x : f32
  pg_uop.end %i
  pg_uop.store %x, %out[%c0] : f32, !pg.buffer<1xf32>
}
"""


def test_a_value_used_after_its_loops_escapes_through_one_local() -> None:
    """Declared before the outermost loop it leaves, assigned once, read at each use."""
    ops = spelled(funcs(lower(ESCAPE))["k"])
    assert ops == ["const", "decl", "for", "for", "load", "assign", "end_for", "read",
                   "unary -", "end_for", "read", "store"]


def test_a_range_index_used_after_its_end_fails() -> None:
    text = """
    pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
      %i = pg_uop.range 0 to 4 global
      pg_uop.end %i
      %x = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
    }"""
    with pytest.raises(PassFailedException, match=r"@k: the pg_uop.range result is used "
                                                  r"outside its loop"):
        lower(text)


def test_a_gpu_special_index_has_no_c_lowering() -> None:
    text = """
    pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
      %g = pg_uop.special global_id 0 size 4
      %x = pg_uop.load %a[%g] : !pg.buffer<4xf32> -> f32
    }"""
    with pytest.raises(PassFailedException, match=r"pg_uop\.special has no C lowering"):
        lower(text)
