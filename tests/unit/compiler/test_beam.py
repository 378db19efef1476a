"""BEAM search: the neighbours of a schedule, the checks on a winner, the search itself on
real kernels (it finds a known-better schedule, never changes results), the store of
winners (a hit skips the search, a corrupt entry is searched again, list / export /
import / clear), and what DEBUG, PG_DUMP and opt-tool show of it."""

from __future__ import annotations

import json
import os
import re
import time

import numpy as np
import pytest
from xdsl.parser import Parser

import picograd as pg
from picograd import disk_store
from picograd.compiler.beam import measure, search, store
from picograd.compiler.beam.space import emitted, fixed, neighbours, plausible
from picograd.compiler.pipelines import (
    CPU_LLVM,
    decision_split,
)
from picograd.dialects import make_context
from picograd.dialects import pg_loop as L
from picograd.dialects.pg import RangeKind
from picograd.errors import ArgumentTypeError
from picograd.frontend.realize import clear_cache
from picograd.passes.loop.schedule import Action, apply_schedule, parse_schedule
from picograd.runtimes import forked
from picograd.tools import opt_tool
from picograd.tools import schedules as schedules_tool
from tests.conftest import device_unavailable

MATMUL = """
pg_loop.kernel @mm(%a: !pg.buffer<4096xf32>, %b: !pg.buffer<4096xf32>,
                   %out: !pg.buffer<4096xf32>) {
  pg_loop.range %i0 = 0 to 64 global {
    pg_loop.range %i1 = 0 to 64 global {
      %s = pg_loop.reduce sum %r = 0 to 64 : f32 {
        %c = pg_loop.const 64
        %ar = pg_loop.index mul %i0, %c
        %ai = pg_loop.index add %ar, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<4096xf32> -> f32
        %br = pg_loop.index mul %r, %c
        %bi = pg_loop.index add %br, %i1
        %y = pg_loop.load %b[%bi] : !pg.buffer<4096xf32> -> f32
        %xy = pg_uop.binary mul %x, %y : f32
        pg_loop.yield %xy : f32
      }
      %c2 = pg_loop.const 64
      %or = pg_loop.index mul %i0, %c2
      %oi = pg_loop.index add %or, %i1
      pg_loop.store %s, %out[%oi] : f32, !pg.buffer<4096xf32>
    }
  }
}"""


def kernel_of(text: str) -> L.KernelOp:
    module = Parser(make_context(), text).parse_module()
    return next(op for op in module.ops if isinstance(op, L.KernelOp))


@pytest.fixture
def fresh_store(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """An empty disk store of this test's own, and empty in-memory caches around it."""
    monkeypatch.setenv("PG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PG_BEAM_BUDGET", "8,60")
    clear_cache()
    yield tmp_path
    clear_cache()


# ── the search space ─────────────────────────────────────────────────────────


def test_neighbours_change_drop_and_append_actions() -> None:
    kernel = kernel_of(MATMUL)
    actions = (Action("split", 1, 16, RangeKind.UPCAST), Action("split", 0, 4, RangeKind.UPCAST))
    scheduled = kernel.clone()
    apply_schedule(scheduled, actions)
    found = {"; ".join(map(str, n)) for n in neighbours(actions, scheduled)}
    assert "split(1, 32, upcast); split(0, 4, upcast)" in found  # a factor doubled
    assert "split(1, 16, upcast); split(0, 2, upcast)" in found  # ... halved
    assert "split(1, 16, upcast)" in found  # an action dropped
    assert "split(1, 16, upcast); split(0, 4, upcast); interchange(0)" in found  # appended
    assert len(found) == len(neighbours(actions, scheduled))  # no duplicates


def test_chunks_and_exact_preparations_are_kept() -> None:
    kept = [Action("chunk_reduce", 0, 64), Action("stash", 0), Action("collapse", 0),
            Action("unflatten", 0, 2)]
    assert all(fixed(a) for a in kept)
    kernel = kernel_of(MATMUL)
    for candidate in neighbours((Action("chunk_reduce", 0, 8),), kernel):
        assert candidate[0] == Action("chunk_reduce", 0, 8)


def test_the_cheap_filter_drops_spilling_and_huge_tiles() -> None:
    kernel = kernel_of(MATMUL)
    small = kernel.clone()
    apply_schedule(small, parse_schedule("split(1, 16, upcast); split(0, 4, upcast)"))
    assert plausible(small, 16, 32, 10 * emitted(small))
    huge = kernel.clone()  # 64 x 64 accumulators: 256 vectors of 16 lanes, 32 registers
    apply_schedule(huge, parse_schedule("split(1, 64, upcast); split(0, 64, upcast)"))
    assert not plausible(huge, 16, 32, 10 * emitted(huge))
    assert not plausible(small, 16, 32, emitted(small) - 1)  # over the op budget


def test_the_decision_step_is_found_in_every_default_pipeline() -> None:
    before, decisions, rest = decision_split(CPU_LLVM)  # type: ignore[misc]
    assert decisions.startswith("loop-optimize{") and before.endswith("loop-simplify")
    assert rest.startswith("loop-unswitch,convert-loop-to-uop")
    from picograd.compiler.pipelines import GPU_PTX
    gpu = decision_split(GPU_PTX)
    assert gpu is not None and gpu[1].count("loop-upcast") == 2
    assert decision_split("tensor-simplify,cse") is None


# ── results ──────────────────────────────────────────────────────────────────


def test_same_results_allows_reordered_sums_only() -> None:
    x = np.linspace(-3, 3, 101).astype(np.float32)
    assert measure.same_results([x], [x + np.float32(1e-5)])
    assert not measure.same_results([x], [x + np.float32(1e-2)])
    nan = x.copy()
    nan[3] = np.nan
    assert measure.same_results([nan], [nan.copy()])
    assert not measure.same_results([nan], [x])  # NaN where the other has a number
    ints = np.arange(10, dtype=np.int32)
    assert not measure.same_results([ints], [ints + 1])  # integers exactly


def test_gathers_are_not_searched() -> None:
    gather = kernel_of("""
pg_loop.kernel @g(%idx: !pg.buffer<8xi32>, %t: !pg.buffer<64xf32>, %out: !pg.buffer<8xf32>) {
  pg_loop.range %i0 = 0 to 8 global {
    %j = pg_loop.load %idx[%i0] : !pg.buffer<8xi32> -> i32
    %ji = pg_uop.cast %j : i32 to index
    %v = pg_loop.load %t[%ji] : !pg.buffer<64xf32> -> f32
    pg_loop.store %v, %out[%i0] : f32, !pg.buffer<8xf32>
  }
}""")
    assert measure.gathers(gather)
    assert not measure.gathers(kernel_of(MATMUL))


def test_a_slow_child_is_killed_at_its_deadline() -> None:
    pid, fd = forked.start(lambda: (time.sleep(30), b"")[1])
    started = time.perf_counter()
    outcome = forked.collect_by(pid, fd, time.perf_counter() + 0.3)
    assert not outcome.ok and outcome.data == b"timed out"
    assert time.perf_counter() - started < 5
    pid, fd = forked.start(lambda: b"done")
    assert forked.collect_by(pid, fd, time.perf_counter() + 30).data == b"done"


# ── the search on real kernels ───────────────────────────────────────────────


def _matmul(n: int = 128) -> tuple[pg.Tensor, pg.Tensor, np.ndarray]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    return pg.Tensor(a), pg.Tensor(b), a @ b


def test_search_finds_a_known_better_schedule(fresh_store,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # a heuristic crippled to 1-lane "vectors" and one register, and a cost model in place
    # of the clock (each vector op in a candidate's LLVM IR makes it faster), so that the
    # better schedules are known and the machine's load cannot hide them (timed for real,
    # this case passed a 1.3x bar in two runs here and gave 1.0x once under CI's load)
    spec = _with_decision(CPU_LLVM, "loop-optimize{vector-bytes=4 registers=1}")
    sources: dict[int, str] = {}
    real_load = measure.Bench._load

    def load(self: measure.Bench, source: str):
        kernel = real_load(self, source)
        if kernel is not None:
            sources[id(kernel)] = source
        return kernel

    def modelled_time(self: measure.Bench, kernel, cutoff: float | None = None) -> float:
        return 1e-3 / (1 + len(re.findall(r"<\d+ x float>", sources[id(kernel)])) / 100)

    monkeypatch.setattr(measure.Bench, "_load", load)
    monkeypatch.setattr(measure.Bench, "time", modelled_time)
    a, b, want = _matmul(256)
    with pg.Context(beam=2, pipeline=spec):
        got = (a @ b).numpy()  # (the winner's real kernel, checked against numpy)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    (tuned,) = [t for t in store.entries() if "reduce" in t.key]
    # (the cheap filter keeps candidates within 1.5x the heuristic's ops, so the model's
    # best is a few percent better; the final check needs 3 %)
    assert tuned.speedup > 1.03, tuned
    assert tuned.schedule != tuned.heuristic


@pytest.mark.parametrize("device", ["CPU:C"])
def test_beam_on_other_targets(fresh_store, device: str) -> None:
    if (why := device_unavailable(device)) is not None:
        pytest.skip(why)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 64), dtype=np.float32)
    w = rng.standard_normal((64, 32), dtype=np.float32)
    plain = (pg.Tensor(x, device=device) @ pg.Tensor(w, device=device)).numpy()
    with pg.Context(beam=1):
        searched = (pg.Tensor(x, device=device) @ pg.Tensor(w, device=device)).numpy()
    np.testing.assert_allclose(searched, plain, rtol=1e-4, atol=1e-4)
    assert any(device in t.key for t in store.entries())


def _with_decision(spec: str, decision: str) -> str:
    before, _, rest = decision_split(spec)  # type: ignore[misc]
    return f"{before},{decision},{rest}"


@pytest.mark.parametrize("case", ["matmul", "softmax", "sum", "conv"])
def test_beam_gives_the_heuristics_results(fresh_store, case: str) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 96), dtype=np.float32)
    w = rng.standard_normal((96, 48), dtype=np.float32)
    image = rng.standard_normal((2, 3, 12, 12), dtype=np.float32)
    kernel = rng.standard_normal((4, 3, 3, 3), dtype=np.float32)

    def run() -> np.ndarray:
        if case == "matmul":
            return (pg.Tensor(x) @ pg.Tensor(w)).relu().numpy()
        if case == "softmax":
            return pg.Tensor(x).softmax(-1).numpy()
        if case == "sum":
            return pg.Tensor(x).sum(1).numpy()
        return pg.nn.functional.conv2d(pg.Tensor(image), pg.Tensor(kernel)).numpy()

    plain = run()
    with pg.Context(beam=2):
        searched = run()
    np.testing.assert_allclose(searched, plain, rtol=1e-4, atol=1e-4 * np.abs(plain).max())


def test_a_kernel_the_heuristic_leaves_alone_is_searched_too(fresh_store) -> None:
    # a 2 x 2 max-pool of a conv's bias + relu, as a CNN has: loop-optimize gives it no
    # action (its windows' reduce is 4 long, its rows of 7 too short for `window_rows`);
    # BEAM searches from the empty schedule
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 8, 14, 14), dtype=np.float32)
    bias = rng.standard_normal(8, dtype=np.float32)

    def run() -> np.ndarray:
        biased = pg.Tensor(x) + pg.Tensor(bias).reshape(1, 8, 1, 1)
        return pg.nn.functional.max_pool2d(biased.relu(), 2).numpy()

    plain = run()
    with pg.Context(beam=1):
        searched = run()
    np.testing.assert_array_equal(searched, plain)
    assert any(t.heuristic == "" for t in store.entries()), store.entries()


def test_a_stored_winner_skips_the_search_and_a_corrupt_one_is_searched_again(
        fresh_store, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, want = _matmul(64)
    benches: list[object] = []
    real_bench = measure.Bench

    def counting(*args, **kwargs):
        bench = real_bench(*args, **kwargs)
        benches.append(bench)
        return bench

    monkeypatch.setattr(search, "Bench", counting)
    with pg.Context(beam=1):
        (a @ b).numpy()
    searched = len(benches)
    assert searched >= 1 and store.entries()
    clear_cache()
    monkeypatch.setenv("PG_CACHE", "1")
    _forget_graphs()
    with pg.Context(beam=1):
        got = (a @ b).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    assert len(benches) == searched  # every kernel's schedule came from the store
    folder = os.path.join(disk_store.cache_dir(), disk_store.SCHEDULES)  # type: ignore[arg-type]
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), "r+b") as f:
            f.seek(-3, os.SEEK_END)
            f.write(b"???")  # the payload no longer matches its digest
    clear_cache()
    _forget_graphs()
    with pg.Context(beam=1):
        got = (a @ b).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    assert len(benches) == 2 * searched  # searched again, and stored again
    assert len(store.entries()) == searched


def _forget_graphs() -> None:
    """Drop the compiled graphs of the disk cache (the schedules stay)."""
    disk_store.forget(disk_store.GRAPHS)


def test_a_stored_schedule_that_no_longer_applies_is_searched_again(fresh_store) -> None:
    a, b, _ = _matmul(64)
    with pg.Context(beam=1):
        (a @ b).numpy()
    for tuned in store.entries():
        store.save(tuned.key, store.Tuned(tuned.key, tuned.kernel, "split(9, 4, upcast)",
                                          tuned.heuristic, 1.0, 1.0, 1))
    clear_cache()
    _forget_graphs()
    with pg.Context(beam=1):
        (a @ b).numpy()
    assert all(t.schedule != "split(9, 4, upcast)" for t in store.entries())


def test_the_beam_width_is_part_of_the_compile_cache(fresh_store) -> None:
    a, b, _ = _matmul(32)
    pg.compile_stats()
    before = pg.compile_stats().compiles
    (a @ b).numpy()
    with pg.Context(beam=1):
        (a @ b).numpy()
    (a @ b).realize(beam=1)
    assert pg.compile_stats().compiles == before + 2


def test_a_bad_width_is_a_typed_error() -> None:
    with pytest.raises(ArgumentTypeError, match="beam"):
        pg.Context(beam=-1)
    with pytest.raises(ArgumentTypeError, match="beam"):
        pg.Tensor([1.0]).exp().realize(beam="2")  # type: ignore[arg-type]


# ── what the tools show ──────────────────────────────────────────────────────


def test_the_dump_shows_beams_decisions_and_opt_tool_replays_them(
        fresh_store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    dump = fresh_store / "dump"
    monkeypatch.setenv("PG_DUMP", str(dump))
    a, b, _ = _matmul(64)
    with pg.Context(beam=1):
        (a @ b).numpy()
    (graph,) = [d for d in dump.iterdir() if d.is_dir()]
    decided = next(p for p in graph.iterdir() if p.name.endswith("-loop-optimize.mlir"))
    assert 'pg.schedule_policy = "beam"' in decided.read_text()
    capsys.readouterr()
    assert opt_tool.main([str(decided), "--print-schedules"]) == 0
    *lines, replay = capsys.readouterr().out.splitlines()
    assert any(" by beam: " in line for line in lines), lines
    tuned = {t.kernel: t.schedule for t in store.entries()}
    for line in lines:
        name, schedule = line[1:].split(" by ")[0], line.split(": ", 1)[1]
        if name in tuned:
            assert schedule == (tuned[name] or "(none)")
    # the replay fragment gives the kernels before the decision step the same schedules
    before = next(p for p in graph.iterdir() if p.name.endswith("-loop-simplify.mlir"))
    assert opt_tool.main([str(before), "-p", replay, "--print-schedules"]) == 0
    replayed = capsys.readouterr().out.splitlines()
    assert [r.split(": ", 1)[1] for r in replayed[:-1] if ": (none)" not in r] == [
        line.split(": ", 1)[1] for line in lines if ": (none)" not in line]


def test_debug_2_names_the_policy(fresh_store, capsys: pytest.CaptureFixture[str]) -> None:
    from picograd import debug

    a, b, _ = _matmul(64)
    debug.set_level(2)
    try:
        with pg.Context(beam=1):
            (a @ b).numpy()
    finally:
        debug.set_level(0)
    err = capsys.readouterr().err
    assert "by beam" in err, err


def test_the_schedules_command_lists_exports_imports_and_clears(
        fresh_store, capsys: pytest.CaptureFixture[str]) -> None:
    a, b, _ = _matmul(64)
    with pg.Context(beam=1):
        (a @ b).numpy()
    count = len(store.entries())
    assert schedules_tool.main(["list"]) == 0
    assert capsys.readouterr().out.count("\n") == count
    path = str(fresh_store / "tuned.json")
    assert schedules_tool.main(["export", path]) == 0
    with open(path) as f:
        assert len(json.load(f)) == count
    assert schedules_tool.main(["clear"]) == 0
    assert store.entries() == []
    assert schedules_tool.main(["import", path]) == 0
    assert len(store.entries()) == count
    bad = fresh_store / "bad.json"
    bad.write_text('{"not": "a list"}')
    assert schedules_tool.main(["import", str(bad)]) == 1
    assert "not a tuned-schedule file" in capsys.readouterr().err


def test_beam_cache_off_reads_and_writes_nothing(fresh_store,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_BEAM_CACHE", "0")
    a, b, _ = _matmul(32)
    with pg.Context(beam=1):
        (a @ b).numpy()
    monkeypatch.setenv("PG_BEAM_CACHE", "1")
    assert store.entries() == []
