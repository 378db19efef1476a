"""The pass registry and the pipeline manager: names, parsing, errors, running."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.transforms import get_all_passes

from picograd.compiler import pipelines as P
from picograd.compiler.pass_registry import PICOGRAD_PASSES, all_passes, pass_location
from picograd.dialects import make_context
from picograd.dialects.capabilities import (
    DEFAULT_L2_BYTES,
    host_cache_bytes,
    host_vector_registers,
    l2_cache_bytes,
)
from picograd.dialects.pg_tensor import UnaryOp
from picograd.errors import PicogradError

# ── registry ─────────────────────────────────────────────────────────────────


def test_picograd_pass_names_are_kebab_case_and_unique_across_xdsl() -> None:
    xdsl_names = set(get_all_passes())
    for name in PICOGRAD_PASSES:
        assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name), name
        assert name not in xdsl_names, f"{name} shadows an xDSL pass"


@pytest.mark.parametrize("name", sorted(PICOGRAD_PASSES))
def test_registered_pass_class_matches_its_name(name: str) -> None:
    module, cls_name = pass_location(name)
    cls = PICOGRAD_PASSES[name]()
    assert issubclass(cls, ModulePass)
    assert cls.__name__ == cls_name and cls.__module__ == module
    assert cls.name == name
    assert cls.__doc__ and cls.__doc__.strip(), f"{cls_name} has no docstring"
    assert cls.__dataclass_params__.frozen, f"{cls_name} must be a frozen dataclass"  # type: ignore[attr-defined]


def test_all_passes_is_xdsl_plus_picograd() -> None:
    passes = all_passes()
    assert set(passes) == set(get_all_passes()) | set(PICOGRAD_PASSES)
    assert passes["cse"]().name == "cse"


def test_registry_is_lazy() -> None:
    # Building the registry imports no pass module; that is what keeps opt-tool fast.
    import subprocess
    import sys

    code = ("import sys, picograd.compiler.pass_registry as r; r.all_passes(); "
            "print(sorted(m for m in sys.modules if m.startswith('picograd.passes.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


# ── default pipelines ────────────────────────────────────────────────────────


def test_default_pipelines_are_the_documented_strings() -> None:
    common = ("tensor-simplify,matmul-layout,tensor-split-reduce,convert-tensor-to-sched,"
              "sched-dedup,"
              "convert-sched-to-loop,loop-simplify,convert-loop-to-uop,uop-simplify,cse,")
    vector_bytes, registers = host_vector_registers()  # CPU only: the host's vector unit
    # CPU only: B's rows padded where they alias in the caches, and laid out in panels of
    # the matmul tile's columns: 4 rows of 4 vectors where 16 fit half the registers; A
    # read row-major where a strided reduce reads it 64 times or more
    vectors = 4 if registers >= 32 else 2 if registers >= 16 else 1
    layout = (f"matmul-layout{{alias-bytes=4096 panel-cols={vector_bytes // 4 * vectors} "
              f"a-min-reuse={P.CPU_A_MIN_REUSE}}},")
    cpu = common.replace("loop-simplify,", "loop-simplify,loop-optimize{"
                         f"vector-bytes={vector_bytes} registers={registers} "
                         f"cache-bytes={host_cache_bytes()} min-work={P.MIN_TILE_WORK}}},").replace(
        # CPU only: ranges split at the constants their masks compare them with
        "convert-loop-to-uop,", "loop-unswitch,convert-loop-to-uop{vectorize=true},").replace(
        "matmul-layout,", layout).replace(  # CPU only: float sums padded to chunkable lengths
        "tensor-split-reduce,", f"tensor-split-reduce{{chunk-ratio={P.CPU_CHUNK_RATIO} "
        f"float-work={P.CPU_FLOAT_WORK}}},")
    assert cpu + "uop-contract,convert-uop-to-llvm" == P.CPU_LLVM
    assert cpu + "convert-uop-to-c" == P.CPU_C
    for target in ("ptx", "wgsl"):
        gpu = (f"uop-gpu-map{{target={target}}},uop-legalize{{target={target}}},uop-simplify,"
               f"convert-uop-to-{target}")
        # a GPU keeps more of an attention's score rows in flight (more work items)
        if target == "wgsl":
            expected = (common + gpu).replace(
                "convert-tensor-to-sched",
                "convert-tensor-to-sched{max-buffers=8 attention-rows=4096}")
        else:  # CUDA's work items take 8 x 8 or 4 x 4 tiles of a large matmul
            expected = (common + gpu).replace(
                "convert-tensor-to-sched", "convert-tensor-to-sched{attention-rows=4096}"
            ).replace(
                "loop-simplify,", "loop-simplify,loop-upcast{rows=8 cols=8 min-tiles=65536},"
                "loop-upcast{rows=4 cols=4 min-tiles=65536},")
        assert expected == P.DEFAULT_PIPELINES[target]
    assert P.DEFAULT_PIPELINES == {"llvm": P.CPU_LLVM, "c": P.CPU_C, "ptx": P.GPU_PTX,
                                   "wgsl": P.GPU_WGSL}
    for spec in P.DEFAULT_PIPELINES.values():
        assert [p.name for p in P.parse_pipeline(spec)] == [
            element.split("{")[0] for element in spec.split(",")]


def test_stage_pipeline_stops_before_the_conversion_out_of_the_stage() -> None:
    layout = P.CPU_LLVM.split(",")[1]
    assert layout.startswith("matmul-layout{alias-bytes=4096 panel-cols=")
    split = P.CPU_LLVM.split(",")[2]
    assert split.startswith("tensor-split-reduce{chunk-ratio=")
    assert P.stage_pipeline("tensor") == f"tensor-simplify,{layout},{split}"
    assert P.stage_pipeline("sched") == (f"tensor-simplify,{layout},"
                                         f"{split},convert-tensor-to-sched,"
                                         "sched-dedup")
    assert P.stage_pipeline("loop").endswith(
        f"convert-sched-to-loop,loop-simplify,{P.CPU_LLVM.split(',')[7]},loop-unswitch")
    assert P.stage_pipeline("loop").split(",")[-2].startswith("loop-optimize{")
    assert P.stage_pipeline("uop").endswith("convert-loop-to-uop{vectorize=true},uop-simplify,cse")
    assert P.stage_pipeline("llvm") == P.CPU_LLVM
    assert P.stage_pipeline("c") == P.CPU_C
    assert P.stage_pipeline("ptx") == P.GPU_PTX
    assert P.stage_pipeline("wgsl") == P.GPU_WGSL
    with pytest.raises(P.PipelineError, match="unknown stage 'spirv'"):
        P.stage_pipeline("spirv")


# ── parsing ──────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("spec", "flat"),
    [
        ("cse,dce", "cse,dce"),
        ("builtin.module(cse,dce)", "cse,dce"),
        (" builtin.module( cse , func.func(dce) ) ", "cse,dce"),
        ("builtin.module(func.func(cse),any(dce),canonicalize)", "cse,dce,canonicalize"),
        ("builtin.module()", ""),
        ("", ""),
        ('apply-pdl{pdl_file="a(b),}.mlir"}', 'apply-pdl{pdl_file="a(b),}.mlir"}'),
        ("builtin.module(mlir-opt[cse,dce])", "mlir-opt[cse,dce]"),
    ],
)
def test_flatten(spec: str, flat: str) -> None:
    assert P.flatten(spec) == flat


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("cse,", "expected a pass name"),
        ("builtin.module(cse", "expected ',' or ')'"),
        ("builtin.module(cse))", "expected ','"),
        ("cse(dce)", "'cse' is not an op anchor"),
        ("builtin.module", "an anchor needs '(' and ')'"),
        ("cse{a=1", "missing '}'"),
        ("cse dce", "expected ','"),
        ("cse{=}", "Expected"),  # reported by xDSL's option parser
    ],
)
def test_malformed_pipelines(spec: str, message: str) -> None:
    with pytest.raises(P.PipelineSyntaxError, match=re.escape(message)):
        P.parse_pipeline(spec)


def test_syntax_error_shows_where() -> None:
    with pytest.raises(P.PipelineSyntaxError) as info:
        P.flatten("builtin.module(cse")
    assert str(info.value).endswith("  builtin.module(cse\n                    ^")


def test_flat_and_anchored_forms_give_the_same_passes() -> None:
    flat = P.parse_pipeline("tensor-simplify,cse,memref-streamify{streams=2}")
    anchored = P.parse_pipeline(
        "builtin.module(tensor-simplify,func.func(cse),memref-streamify{streams=2})")
    assert flat == anchored
    assert flat[2].streams == 2  # type: ignore[attr-defined]


def test_parsing_is_cached_per_string() -> None:
    spec = "builtin.module(cse,dce)"
    assert P.parse_pipeline(spec) is P.parse_pipeline(spec)


def test_canonical_form_is_anchored_and_reparses_to_the_same_passes() -> None:
    spec = "tensor-simplify,func.func(cse),memref-streamify{streams=2}"
    canonical = P.canonical_form(spec)
    assert canonical == "builtin.module(tensor-simplify,cse,memref-streamify{streams=2})"
    assert P.parse_pipeline(canonical) == P.parse_pipeline(spec)
    assert P.canonical_form(P.CPU_LLVM) == f"builtin.module({P.CPU_LLVM})"


def test_unknown_pass_lists_the_nearest_names() -> None:
    with pytest.raises(P.UnknownPassError) as info:
        P.parse_pipeline("tensor-simplify,loop-simplfy")
    err = info.value
    assert isinstance(err, PicogradError)
    assert err.name == "loop-simplfy"
    assert err.suggestions[0] == "loop-simplify"
    assert "did you mean 'loop-simplify'" in str(err)


def test_unknown_pass_without_near_names_points_to_list_passes() -> None:
    with pytest.raises(P.UnknownPassError, match="--list-passes"):
        P.parse_pipeline("qqqqqqqqqqqq")


def test_bad_options_name_the_pass_and_its_options() -> None:
    with pytest.raises(P.PassOptionError, match=r"pass 'cse':.*\"bogus\".*its options: none"):
        P.parse_pipeline("cse{bogus=1}")
    with pytest.raises(P.PassOptionError,
                       match=r"pass 'memref-streamify': .*its options: streams: int = 3"):
        P.parse_pipeline('memref-streamify{streams="many"}')
    with pytest.raises(P.PassOptionError, match=r"requires argument \"target_rank\""):
        P.parse_pipeline("memref-stream-tile-outer-loops")


# ── running ──────────────────────────────────────────────────────────────────

SOURCE = """
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = pg_tensor.unary exp %x : tensor<4xf32>
  %b = pg_tensor.unary exp %x : tensor<4xf32>
  func.return %a, %b : tensor<4xf32>, tensor<4xf32>
}
"""


def parse(source: str = SOURCE) -> ModuleOp:
    return Parser(make_context(), source).parse_module()


def exps(module: ModuleOp) -> int:
    return sum(isinstance(op, UnaryOp) for op in module.walk())


def test_run_pipeline_runs_in_place_and_calls_after_pass_in_order() -> None:
    module = parse()
    seen: list[tuple[str, int]] = []
    result = P.run_pipeline(module, "builtin.module(tensor-simplify,func.func(cse))",
                            after_pass=lambda p, m: seen.append((p.name, exps(m))))
    assert result is module
    assert seen == [("tensor-simplify", 2), ("cse", 1)]


CONTEXTS_SEEN: list[Context] = []


@dataclass(frozen=True)
class RecordContext(ModulePass):
    """Test pass: remembers the context it ran with."""

    name = "test-record-context"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        CONTEXTS_SEEN.append(ctx)


@dataclass(frozen=True)
class BreakIR(ModulePass):
    """Test pass: erases @main's terminator, which leaves invalid IR."""

    name = "test-break-ir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp):
                f.body.block.last_op.detach()  # type: ignore[union-attr]


@pytest.fixture
def test_passes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Registers the test passes above for the duration of one test."""
    for cls in (RecordContext, BreakIR):
        monkeypatch.setitem(all_passes(), cls.name, lambda cls=cls: cls)
    P._parse_cached.cache_clear()
    yield
    P._parse_cached.cache_clear()


@pytest.mark.usefixtures("test_passes")
def test_run_pipeline_uses_the_given_context_or_a_shared_default() -> None:
    ctx = make_context()
    CONTEXTS_SEEN.clear()
    P.run_pipeline(parse(), "test-record-context", ctx=ctx)
    P.run_pipeline(parse(), "test-record-context")
    P.run_pipeline(parse(), "test-record-context")
    assert CONTEXTS_SEEN[0] is ctx
    assert CONTEXTS_SEEN[1] is CONTEXTS_SEEN[2] is P.default_context()


@pytest.mark.usefixtures("test_passes")
def test_verify_each_names_the_pass_that_broke_the_ir() -> None:
    dumped: list[str] = []
    with pytest.raises(P.PipelineVerifyError) as info:
        P.run_pipeline(parse(), "cse,test-break-ir,dce", verify_each=True,
                       after_pass=lambda p, m: dumped.append(p.name))
    assert info.value.pass_name == "test-break-ir"
    assert "the IR after pass 'test-break-ir' does not verify" in str(info.value)
    assert dumped == ["cse", "test-break-ir"]  # the broken IR was dumped before the error


@pytest.mark.usefixtures("test_passes")
def test_without_verify_each_nothing_is_verified() -> None:
    P.run_pipeline(parse(), "test-break-ir")


def test_verify_each_checks_the_input() -> None:
    module = parse()
    module.body.block.first_op.body.block.last_op.detach()  # type: ignore[union-attr]
    with pytest.raises(P.PipelineVerifyError, match="the input does not verify"):
        P.run_pipeline(module, "cse", verify_each=True)


def test_the_webgpu_pipeline_fits_the_binding_limit_of_its_capability_table() -> None:
    from picograd.dialects.capabilities import capabilities

    assert f"convert-tensor-to-sched{{max-buffers={capabilities('wgsl').max_buffers} " in (
        P.GPU_WGSL)


@pytest.mark.parametrize(("caches", "expected"), [
    ({"index0": ("1", "32K"), "index2": ("2", "1024K"), "index3": ("3", "32768K")}, 1 << 20),
    ({"index0": ("1", "48K"), "index1": ("2", "2M")}, 2 << 20),
    ({"index0": ("1", "32K")}, DEFAULT_L2_BYTES),  # no L2 described
    ({"index0": ("2", "huge")}, DEFAULT_L2_BYTES),  # a size it cannot read
    ({}, DEFAULT_L2_BYTES),  # no sysfs (not Linux)
])
def test_l2_cache_bytes_reads_sysfs(tmp_path: Path, caches: dict[str, tuple[str, str]],
                                    expected: int) -> None:
    for name, (level, size) in caches.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "level").write_text(level + "\n")
        (tmp_path / name / "size").write_text(size + "\n")
    assert l2_cache_bytes(tmp_path) == expected
