"""DEBUG levels 1-5 on a real realize: what each prints to stderr, and that results stay
right while kernels are timed."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import picograd as pg
import picograd.frontend.realize as realize_mod
from picograd import debug
from picograd.dialects.capabilities import host_vector_registers
from picograd.passes.loop.loop_optimize import VectorUnit, big_tile_cols
from picograd.runtimes import get_device

STAGES = ("build IR", "tensor->sched", "sched->loop", "loop->uop", "render",
          "toolchain compile")
SOURCE_MARKERS = {"llvm": "define", "c": "void", "wgsl": "@compute", "ptx": ".entry"}
LAUNCH = re.compile(r"^\[pg\] graph \d+ launch (\w+) +[0-9.]+ us +[0-9.]+ GFLOP/s +[0-9.]+ GB/s"
                    r"(?:  (.*))?$")


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch):
    """Every test compiles (no schedule or disk cache hit) and leaves DEBUG as it was."""
    monkeypatch.setenv("PG_CACHE", "0")
    pg.frontend.clear_cache()
    with debug.flags(debug=0, viz=False):
        yield


def _softmaxish(a: np.ndarray, device: str) -> pg.Tensor:
    x = pg.Tensor(a, device=device)
    return x.exp().sum(axis=1) / x.sum()


def _expected(a: np.ndarray) -> np.ndarray:
    return np.exp(a).sum(axis=1) / a.sum()


def _lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("[pg] ")]


A = np.arange(1, 13, dtype=np.float32).reshape(3, 4) / 10


def test_debug_0_prints_nothing(device: str, capsys: pytest.CaptureFixture[str]) -> None:
    _softmaxish(A, device).realize()
    assert capsys.readouterr().err == ""


def test_debug_1_compile_summary(device: str, capsys: pytest.CaptureFixture[str]) -> None:
    debug.set_level(1)
    y = _softmaxish(A, device)
    program, _ = realize_mod.compiled(y)  # the same graph: this compile is the one reported
    capsys.readouterr()
    pg.frontend.clear_cache()
    y.realize()
    np.testing.assert_allclose(y.numpy(), _expected(A), rtol=1e-5)
    summary, times = _lines(capsys.readouterr().err)
    assert re.match(rf"\[pg\] graph \d+ {re.escape(device)}: {program.num_kernels} kernels "
                    r"from \d+ nodes; schedule cache \d+ hits / \d+ compiles", summary)
    if hasattr(program, "peak_bytes"):
        assert re.search(r"peak \d+ B -> \d+ B after memory planning", summary)
    for stage in STAGES:
        assert re.search(rf"[ ,]{re.escape(stage)} [0-9.]+ ms", times), stage
    assert re.search(r"; total [0-9.]+ ms$", times)
    _softmaxish(A + 1, device).realize()  # a schedule-cache hit: silent at level 1
    assert capsys.readouterr().err == ""


def test_debug_2_one_line_per_launch(device: str, capsys: pytest.CaptureFixture[str]) -> None:
    debug.set_level(2)
    y = _softmaxish(A, device)
    y.realize()
    np.testing.assert_allclose(y.numpy(), _expected(A), rtol=1e-5)
    launches = [m for line in _lines(capsys.readouterr().err) if (m := LAUNCH.match(line))]
    program, _ = realize_mod.compiled(_softmaxish(A, device))
    assert len(launches) == program.num_kernels >= 2
    y2 = _softmaxish(A * 2, device)  # a cache hit is still timed
    y2.realize()
    np.testing.assert_allclose(y2.numpy(), _expected(A * 2), rtol=1e-5)
    assert len([line for line in _lines(capsys.readouterr().err)
                if LAUNCH.match(line)]) == program.num_kernels
    debug.set_level(0)  # timing off again for the same compiled graph
    _softmaxish(A * 3, device).realize()
    assert capsys.readouterr().err == ""


def test_debug_2_shows_each_kernels_schedule_and_threads(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The heuristic's choice is visible at DEBUG=2: the loop actions a CPU kernel got, the
    layout it reads B in, and whether it ran as one call (and why) or in chunks on
    threads."""
    from picograd.runtimes import parallel

    monkeypatch.setattr(parallel, "_wanted_threads", 2)
    debug.set_level(2)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    w = rng.standard_normal((200, 64)).astype(np.float32)  # 200 columns: no panels
    big = rng.standard_normal((512, 512)).astype(np.float32)
    np.testing.assert_allclose((pg.Tensor(x) @ pg.Tensor(w).T).numpy(), x @ w.T,
                               rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose((pg.Tensor(big) @ pg.Tensor(big)).numpy(), big @ big,
                               rtol=1e-4, atol=1e-3)
    tails = [m.group(2) for line in _lines(capsys.readouterr().err) if (m := LAUNCH.match(line))]
    debug.set_level(0)
    assert len(tails) == 3  # the dot products; B's copy in column panels, the matmul
    small, copy, large = tails
    assert re.fullmatch(r'schedule "interchange\(0\);.*split_reduce\(0, \d+\)" by heuristic; '
                        r"1 call \(work [\d,]+ < [\d,]+ ops\)", small), small
    assert "panels" not in copy, copy
    assert re.fullmatch(r'schedule "split\(1, \d+, upcast\).*" by heuristic; '
                        r"B in \d+-column panels; \d+ chunks on 2 threads", large), large


def test_set_level_2_times_graphs_compiled_at_level_1(
        device: str, capsys: pytest.CaptureFixture[str]) -> None:
    debug.set_level(1)
    _softmaxish(A, device).realize()
    capsys.readouterr()
    debug.set_level(2)
    y = _softmaxish(A - 1, device)
    y.realize()
    np.testing.assert_allclose(y.numpy(), _expected(A - 1), rtol=1e-5)
    assert any(LAUNCH.match(line) for line in _lines(capsys.readouterr().err))


def test_debug_2_gflops_estimate(capsys: pytest.CaptureFixture[str]) -> None:
    debug.set_level(2)
    a = np.ones((64, 32), np.float32)
    (pg.Tensor(a) * 2 + 1).sum(axis=1).realize()  # one kernel: 64 x 32 x (mul, add, sum)
    (line,) = [line for line in _lines(capsys.readouterr().err) if LAUNCH.match(line)]
    us, gflops, gbs = (float(x) for x in re.findall(r"([0-9.]+) (?:us|GFLOP/s|GB/s)", line))
    seconds = us * 1e-6
    assert gflops == pytest.approx(64 * 32 * 3 / seconds / 1e9, rel=0.05, abs=2e-3)
    assert gbs == pytest.approx((64 * 32 + 64) * 4 / seconds / 1e9, rel=0.05, abs=2e-3)


def test_debug_3_loop_changes(device: str, capsys: pytest.CaptureFixture[str]) -> None:
    debug.set_level(3)
    a = pg.Tensor(np.arange(24, dtype=np.float32).reshape(4, 6), device=device)
    y = a.pad(((1, 1), (0, 0))).reshape(36)[6:30] + 1  # the pad's mask is always true here
    y.realize()
    np.testing.assert_allclose(y.numpy(), np.arange(24) + 1)
    notes = [line for line in _lines(capsys.readouterr().err) if "loop-simplify:" in line]
    assert notes and re.search(r"loop-simplify: @k\d+ .*-\d+ pg_loop\.cmp", notes[0])


def test_debug_3_prints_each_kernels_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    """DEBUG=3 names each kernel the heuristic scheduled and its list of actions (a 16 x 32
    matmul: 4 rows, and as many columns as the host's vector registers give; k = 48 makes it
    more work than loop-optimize's `min-work`, below which a small kernel stays untiled)."""
    debug.set_level(3)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 48), np.float32), rng.standard_normal((48, 32), np.float32)
    out = (pg.Tensor(a, device="CPU:LLVM") @ pg.Tensor(b, device="CPU:LLVM")).numpy()
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)
    notes = [line for line in _lines(capsys.readouterr().err) if "loop-optimize:" in line]
    match = re.search(r'loop-optimize: @(k\d+) .*schedule "([^"]+)"', notes[0])
    assert match is not None, notes
    cols = big_tile_cols(VectorUnit(*host_vector_registers()), 4, 4, 32)
    assert match.group(2) == f"split(1, {cols}, upcast); split(0, 4, upcast); interchange(1)"


def test_debug_4_target_source(device: str, capsys: pytest.CaptureFixture[str]) -> None:
    debug.set_level(4)
    _softmaxish(A, device).realize()
    err = capsys.readouterr().err
    renderer = get_device(device).renderer
    assert f"source ({renderer}):" in err
    assert SOURCE_MARKERS[renderer] in err.split(f"source ({renderer}):", 1)[1]


def test_debug_5_ir_after_every_pass(device: str, capsys: pytest.CaptureFixture[str]) -> None:
    debug.set_level(5)
    _softmaxish(A, device).realize()
    err = capsys.readouterr().err
    assert "input IR:\nbuiltin.module" in err
    for name in ("tensor-simplify", "convert-tensor-to-sched", "loop-simplify", "cse"):
        assert f"IR after {name}:\n" in err
    assert "pg_loop.kernel @k0" in err and "pg_uop.kernel @k0" in err


def test_disk_cache_hits(device: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    """DEBUG=1 says when the disk cache supplied the graph; DEBUG>=2 compiles from the IR
    anyway (launch estimates need it)."""
    monkeypatch.setenv("PG_CACHE", "1")
    monkeypatch.setenv("PG_CACHE_DIR", str(tmp_path))
    _softmaxish(A, device).realize()  # fills the disk cache
    pg.frontend.clear_cache()
    debug.set_level(1)
    _softmaxish(A, device).realize()
    summary = _lines(capsys.readouterr().err)[0]
    assert "(from the disk cache)" in summary
    pg.frontend.clear_cache()
    debug.set_level(2)
    _softmaxish(A, device).realize()
    lines = _lines(capsys.readouterr().err)
    assert "(from the disk cache)" not in lines[0]
    assert any(LAUNCH.match(line) for line in lines)
