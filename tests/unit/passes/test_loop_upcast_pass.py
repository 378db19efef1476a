"""loop-upcast: which kernels it tiles (and which it leaves alone), the lane loops that
convert-loop-to-uop makes of them (one reduce loop, one accumulator per lane), the C flags
that let the compiler vectorise the tiles, and tiled matmuls on both CPU targets."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import make_context
from picograd.dialects import pg_loop as L
from picograd.dialects import pg_uop as U
from picograd.dialects.pg import RangeKind
from picograd.runtimes.cpu_c import C_FLAGS, F16_FLAGS, unit_flags


def matmul(m: int, n: int, k: int, store: str = "%oi") -> str:
    return f"""
pg_loop.kernel @mm(%a: !pg.buffer<{m * k}xf32>, %b: !pg.buffer<{k * n}xf32>,
                   %out: !pg.buffer<{m * n}xf32>) {{
  pg_loop.range %i0 = 0 to {m} global {{
    pg_loop.range %i1 = 0 to {n} global {{
      %s = pg_loop.reduce sum %r = 0 to {k} : f32 {{
        %ck = pg_loop.const {k}
        %cn = pg_loop.const {n}
        %ar = pg_loop.index mul %i0, %ck
        %ai = pg_loop.index add %ar, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<{m * k}xf32> -> f32
        %br = pg_loop.index mul %r, %cn
        %bi = pg_loop.index add %br, %i1
        %y = pg_loop.load %b[%bi] : !pg.buffer<{k * n}xf32> -> f32
        %xy = pg_uop.binary mul %x, %y : f32
        pg_loop.yield %xy : f32
      }}
      %cm = pg_loop.const {m}
      %cn2 = pg_loop.const {n}
      %or = pg_loop.index mul %i0, %cn2
      %oi = pg_loop.index add %or, %i1
      %ti = pg_loop.index mul %i1, %cm
      %tj = pg_loop.index add %ti, %i0
      pg_loop.store %s, %out[{store}] : f32, !pg.buffer<{m * n}xf32>
    }}
  }}
}}"""


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def ranges(module: ModuleOp) -> list[tuple[int, RangeKind]]:
    return [(r.end.data, r.kind.data) for r in module.walk() if isinstance(r, L.RangeOp)]


def upcast(text: str, spec: str = "loop-upcast") -> ModuleOp:
    module = parse(text)
    run_pipeline(module, spec, verify_each=True)
    return module


def test_a_matmul_gets_a_4x8_tile() -> None:
    module = upcast(matmul(8, 16, 8))
    assert ranges(module) == [(2, RangeKind.GLOBAL), (2, RangeKind.GLOBAL),
                              (4, RangeKind.UPCAST), (8, RangeKind.UPCAST)]


@pytest.mark.parametrize(("text", "why"), [
    (matmul(8, 16, 4), "a reduce of 4 is too short"),
    (matmul(8, 16, 8, store="%tj"), "the store is transposed"),
])
def test_kernels_it_leaves_alone(text: str, why: str) -> None:
    assert str(upcast(text)) == str(parse(text)), why


def test_ranges_that_lanes_do_not_divide_keep_a_remainder() -> None:
    module = upcast(matmul(6, 12, 8))  # 6 = 4 + 2 rows, 12 = 8 + 4 columns
    assert ranges(module) == [
        (1, RangeKind.GLOBAL),  # the row tile
        (1, RangeKind.GLOBAL), (4, RangeKind.UPCAST), (8, RangeKind.UPCAST),  # the 4 x 8 tile
        (12, RangeKind.GLOBAL), (4, RangeKind.UPCAST),  # columns 8..12 of those 4 rows
        (6, RangeKind.GLOBAL),  # rows 4..6: the untiled copy, its columns tiled by 8
        (1, RangeKind.GLOBAL), (8, RangeKind.UPCAST), (12, RangeKind.GLOBAL)]
    assert L.KernelOp is not None
    kernel = next(op for op in module.ops if isinstance(op, L.KernelOp))
    assert kernel.attributes["pg.schedule"].data == (  # type: ignore[union-attr]
        "split(1, 8, upcast); split(0, 4, upcast); interchange(1)")


def test_an_elementwise_kernel_is_untouched() -> None:
    text = """
pg_loop.kernel @ew(%a: !pg.buffer<64xf32>, %out: !pg.buffer<64xf32>) {
  pg_loop.range %i = 0 to 64 global {
    %x = pg_loop.load %a[%i] : !pg.buffer<64xf32> -> f32
    pg_loop.store %x, %out[%i] : f32, !pg.buffer<64xf32>
  }
}"""
    assert str(upcast(text)) == str(parse(text))


def test_lanes_share_one_reduce_loop() -> None:
    module = upcast(matmul(8, 16, 8), "loop-upcast{rows=2 cols=4},convert-loop-to-uop")
    ops = list(module.walk())
    reduce_ranges = [op for op in ops if isinstance(op, U.RangeOp)
                     and op.kind.data == RangeKind.REDUCE]
    assert len(reduce_ranges) == 1
    assert sum(isinstance(op, U.AccOp) for op in ops) == 8
    assert sum(isinstance(op, U.StoreOp) for op in ops) == 8


def test_bad_options_are_refused() -> None:
    with pytest.raises(PassFailedException, match="at least 1"):
        upcast(matmul(8, 16, 8), "loop-upcast{cols=0}")


def test_c_keeps_slp_off_only_for_float16() -> None:
    assert unit_flags("float f(float x) { return x; }") == C_FLAGS
    assert unit_flags("_Float16 h;") == C_FLAGS + F16_FLAGS


@pytest.mark.parametrize("device", ["CPU:LLVM", "CPU:C"])
@pytest.mark.parametrize(("m", "n", "k"), [(8, 16, 8), (12, 24, 9), (5, 8, 16), (4, 7, 8)])
def test_tiled_matmuls_compute_a_at_b(device: str, m: int, n: int, k: int) -> None:
    import picograd as pg

    rng = np.random.default_rng(m * n * k)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    got = (pg.Tensor(a, device=device) @ pg.Tensor(b, device=device)).numpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)
