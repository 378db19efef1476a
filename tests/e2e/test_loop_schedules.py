"""Schedules chosen in a pipeline string compile and run on the CPU targets: a range split
into each kind (`local` and `loop` become plain loops, `upcast` vector lanes, `unroll`
straight-line code), with a remainder, and a matmul given another schedule than the
heuristic's — the same results as the default pipeline."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import picograd as pg
from picograd.compiler.driver import default_pipeline
from picograd.compiler.pipelines import PipelineError

CPU = ("CPU:LLVM", "CPU:C")


def _with_schedule(device: str, fragment: str) -> str:
    """The device's default pipeline with `fragment` in place of its `loop-optimize`."""
    passes = default_pipeline(device).split(",")
    at = next(i for i, p in enumerate(passes) if p.startswith("loop-optimize"))
    return ",".join([*passes[:at], fragment, *passes[at + 1:]])


@pytest.mark.parametrize("device", CPU)
@pytest.mark.parametrize("kind", ["global", "local", "upcast", "unroll", "loop"])
def test_every_kind_of_split_runs(device: str, kind: str) -> None:
    a = np.arange(20, dtype=np.float32)  # 20 = 6 blocks of 3 + a remainder of 2
    out = pg.Tensor(a, device=device) * 2 + 1
    fragment = f"loop-split{{kernel=k0 axis=0 factor=3 kind={kind}}}"  # strict: k0 must take it
    out.realize(pipeline=_with_schedule(device, fragment))
    np.testing.assert_array_equal(out.numpy(), a * 2 + 1)


@pytest.mark.parametrize("device", CPU)
def test_a_matmul_under_a_hand_written_schedule(device: str) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((12, 40), dtype=np.float32)
    b = rng.standard_normal((40, 20), dtype=np.float32)
    want = (pg.Tensor(a, device=device) @ pg.Tensor(b, device=device)).numpy()
    out = pg.Tensor(a, device=device) @ pg.Tensor(b, device=device)
    # 16 column lanes (a remainder of 4), 3 row lanes, column tiles outermost
    actions = "split(1, 16, upcast); split(0, 3, upcast); interchange(1); interchange(0)"
    out.realize(pipeline=_with_schedule(device, f'loop-schedule{{kernel=k0 actions="{actions}"}}'))
    np.testing.assert_array_equal(out.numpy(), want)  # the same sums in the same order
    np.testing.assert_allclose(want, a @ b, rtol=1e-5, atol=1e-5)


def test_an_action_the_kernel_cannot_take_is_a_pipeline_error() -> None:
    out = pg.Tensor(np.ones((4, 4), np.float32)) @ pg.Tensor(np.ones((4, 4), np.float32))
    fragment = 'loop-schedule{kernel=k0 actions="interchange(9)"}'
    with pytest.raises(PipelineError, match=r"@k0: interchange\(9\): no axis 9"):
        out.realize(pipeline=_with_schedule("CPU:LLVM", fragment))


@pytest.mark.parametrize("device", CPU)
def test_a_cache_blocked_matmul(device: str) -> None:
    """K = 200 in blocks of 40 (a remainder of 8 columns, and 3 row lanes around): each
    block adds its sums to what the earlier ones stored. Integer-valued floats sum exactly
    in any order, so the blocked result equals numpy's bit for bit."""
    rng = np.random.default_rng(1)
    a = rng.integers(-4, 5, (12, 200)).astype(np.float32)
    b = rng.integers(-4, 5, (200, 24)).astype(np.float32)
    out = pg.Tensor(a, device=device) @ pg.Tensor(b, device=device)
    actions = ("split(1, 16, upcast); split(0, 3, upcast); interchange(1); interchange(0); "
               "block_reduce(0, 40, 0)")
    out.realize(pipeline=_with_schedule(device, f'loop-schedule{{kernel=k0 actions="{actions}"}}'))
    np.testing.assert_array_equal(out.numpy(), a @ b)


@pytest.mark.parametrize("device", CPU)
def test_loop_optimize_blocks_a_deep_matmul(device: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """With a 128 KiB L2 the tile's panel of B (K = 1024; 256 KiB for AVX-512's 64 columns,
    64 KiB for AVX2's 16) outgrows a quarter of the cache: the heuristic blocks K into
    eighths of it (by 64, by 256; the dumped loop IR records it), and the blocked kernel
    computes a @ (b + 0.5). (B is computed: a weight itself would be read in column panels,
    which are not blocked.)"""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 512), dtype=np.float32)
    optimize = next(p for p in default_pipeline(device).split(",")
                    if p.startswith("loop-optimize"))
    fragment = re.sub(r"cache-bytes=\d+", "cache-bytes=131072", optimize)
    monkeypatch.setenv("PG_DUMP", str(tmp_path))
    out = pg.Tensor(a, device=device) @ (pg.Tensor(b, device=device) + 0.5)
    out.realize(pipeline=_with_schedule(device, fragment))
    np.testing.assert_allclose(out.numpy(), a @ (b + 0.5), rtol=1e-4, atol=1e-4)
    block = {"vector-bytes=64": 64, "vector-bytes=32": 256}
    size = next((n for option, n in block.items() if option in optimize), None)
    if size is not None:  # an SSE-sized host's 8 columns fit the cache uncut
        dumped = next(tmp_path.glob("*/*-loop-optimize.mlir")).read_text()
        assert f"block_reduce(0, {size}, 0)" in dumped


@pytest.mark.parametrize("device", CPU)
def test_softmax_computes_its_exps_once(device: str, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The default heuristic stashes a softmax row's exps (the dumped loop IR records
    `stash`), and the result is numpy's softmax."""
    x = np.random.default_rng(3).standard_normal((6, 40)).astype(np.float32)
    monkeypatch.setenv("PG_DUMP", str(tmp_path))
    out = pg.Tensor(x, device=device).softmax(-1).numpy()
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
    dumped = next(tmp_path.glob("*/*-loop-optimize.mlir")).read_text()
    assert "stash(1)" in dumped


# (rows, reduce, columns, B transposed): one-row vector-matrix products and column sums
# (wide column tiles), x @ W.T with fewer rows than matmul-layout copies W for (rows inside
# the columns, a tile of dot products), including rows and columns the tile does not divide.
SKINNY = [(1, 4096, 512, False), (1, 333, 77, False), (8, 384, 1536, True), (3, 384, 100, True),
          (6, 64, 30, True), (16, 1024, 256, True), (1, 384, 1536, True), (7, 96, 33, True)]


@pytest.mark.parametrize("device", CPU)
@pytest.mark.parametrize(("m", "k", "n", "transposed"), SKINNY)
def test_skinny_matmuls_and_column_sums(device: str, m: int, k: int, n: int,
                                        transposed: bool) -> None:
    rng = np.random.default_rng(m * k + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    x, tw = pg.Tensor(a, device=device), pg.Tensor(w, device=device)
    out = x @ tw.T if transposed else x @ pg.Tensor(np.ascontiguousarray(w.T), device=device)
    np.testing.assert_allclose(out.numpy(), a @ w.T, rtol=1e-4, atol=1e-3)
    cols = np.ascontiguousarray(w.T)  # (k, n): a sum over rows reads along the columns
    np.testing.assert_allclose(pg.Tensor(cols, device=device).sum(0).numpy(), cols.sum(0),
                               rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("device", CPU)
def test_small_kernels_left_untiled_give_the_tiled_bits(device: str) -> None:
    """`min-work` leaves a small kernel's reductions untiled only where that keeps the
    order of every sum: the bits of a cross-entropy's (128, 10) row reductions, a short
    matmul and a row sum long enough to split into lanes are those of the schedules
    without it."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 10), dtype=np.float32)
    w = rng.standard_normal((10, 12), dtype=np.float32)
    y = rng.standard_normal((8, 1024), dtype=np.float32)
    spec = default_pipeline(device)
    assert "min-work=" in spec

    def compute(pipeline: str) -> list[np.ndarray]:
        a, b, c = (pg.Tensor(v, device=device) for v in (x, w, y))
        outs = [a.log_softmax(1), a @ b, c.sum(1), c.max(1)]
        for out in outs:
            out.realize(pipeline=pipeline)
        return [out.numpy() for out in outs]

    untiled = compute(spec)
    tiled = compute(re.sub(r" min-work=\d+", "", spec))
    for got, want in zip(untiled, tiled, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(untiled[1], x @ w, rtol=1e-5, atol=1e-5)
