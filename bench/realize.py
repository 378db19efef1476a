"""picograd next to numpy (and torch, tinygrad when installed) in one run, as a markdown table.

    python bench/realize.py [--device CPU:LLVM] [--only matmul,elementwise,...] [--quick]
                            [--beam 2]

Rows (`--only` picks groups by these names):

    matmul       fp32 NxN @ NxN for N = 256, 512, 1024, 2048               GFLOP/s
    elementwise  relu(a*b + c) on 16M floats (3 reads, 1 write)             GB/s
    softmax      softmax over the last axis of (4096, 1024)                 ms and GB/s
    conv         conv2d (32,16,32,32) with (32,16,3,3), no padding          ms and GFLOP/s
    call         matmul 1024x1024 as a user calls it: graph build, realize, result read
                 back as numpy (tensors made outside the timer)                 ms
    cnn          the Fashion-MNIST example CNN's Adam step at batch 128: the first step in
                 a fresh process with PG_CACHE=0 (a cold compile), steady steps without
                 and with `picograd.jit`                                      s, img/s
    mlp          the 784-256-10 MLP Adam step at batch 128: the first step in a fresh
                 process (cold and warm disk cache), steady steps without and with
                 `picograd.jit` (skipped with a note when there is none)
    realize      a cached realize of a tiny add (graph built outside the timer)  us
    jit          a jit replay, per kernel it launches                        us

Kernel rows time `Program.benchmark` (inputs already in memory, allocation outside the timed
part; see bench/gpu.py) after checking the result against numpy; the others time the whole
Python call. Each cell is a median. Every picograd row is timed twice in the same run (see
bench/neighbours.py): "picograd" alone (after a pause that lets numpy's, torch's and
onnxruntime's worker threads go to sleep) and "busy", each timed call right after a small
numpy, torch and onnxruntime matmul, with "busy/alone" the ratio of the two times (> 1:
slower beside them; for a fresh-process row the child runs that work once before its step).
Kernel rows also note numpy's and torch's own busy/alone beside the same neighbours: what
any library pays there.
`--beam W` adds, for the kernel rows and the MLP / CNN jit steps, picograd with BEAM search
of width W (its own empty schedule store, so the search is timed cold: "search s" is the
compile with the search, or the first jit steps; a kernel row's picograd and BEAM columns
are then medians of both programs timed in turns), and tinygrad with `BEAM=W` where it is
installed. `--quick` uses small sizes (a smoke test, not a result). Numbers move with
machine load: run it on an idle machine to compare.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

# helpers of the neighbouring scripts (bench/ is on sys.path when a script there runs)
from gpu import _torch_time
from neighbours import busy_median, neighbours, settle, slowdown
from train_step import (
    BATCH,
    HIDDEN,
    IN,
    OUT,
    _data,
    _picograd_steps,
    bench_cnn,
    bench_numpy,
    bench_torch,
)

import picograd as pg
import picograd.nn.functional as F
from picograd.frontend.realize import compiled

GROUPS = ("matmul", "call", "elementwise", "softmax", "conv", "cnn", "mlp", "realize", "jit")
TARGETS = {"realize": "<= 100 us", "jit": "<= 20 us/kernel", "first": "<= 0.3 s",
           "first cnn": "<= 1.5 s", "warm": "<= 0.1 s",
           "steady jit": "<= torch"}


@dataclass
class Row:
    name: str
    unit: str
    picograd: float | None
    numpy: float | None = None
    torch: float | None = None
    tinygrad: float | None = None
    target: str = ""
    note: str = ""
    busy: float | None = None  # picograd, timed right after the neighbours' work
    beam: float | None = None  # picograd with BEAM search (`--beam`)
    search: float | None = None  # seconds the BEAM compile (or first jit steps) took
    tinygrad_beam: float | None = None

    @property
    def busy_over_alone(self) -> float | None:
        """The busy time over the alone time (rates are inverse times)."""
        if self.unit in RATE_UNITS:
            return slowdown(self.busy, self.picograd)
        return slowdown(self.picograd, self.busy)


RATE_UNITS = ("GFLOP/s", "GB/s", "img/s")


BEAM_WIDTH = [0]  # --beam
BEAM_TURNS = 5  # timings of the heuristic's and BEAM's program, in turns


@contextlib.contextmanager
def _cold_beam() -> Iterator[None]:
    """BEAM search of width `--beam` with an empty schedule store (and disk cache) of its
    own, so that the search is timed, not a stored result."""
    old = os.environ.get("PG_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="picograd-bench-beam-") as cache:
        os.environ["PG_CACHE_DIR"] = cache
        try:
            with pg.Context(beam=BEAM_WIDTH[0]):
                yield
        finally:
            if old is None:
                os.environ.pop("PG_CACHE_DIR", None)
            else:
                os.environ["PG_CACHE_DIR"] = old


def _median_time(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up
    settle()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _tinygrad_time(build: Callable[..., object], arrays: list[np.ndarray], repeat: int,
                   beam: int = 0) -> float | None:
    """Median seconds of `build(*tinygrad tensors).realize()` on tinygrad's CPU device, None
    without tinygrad or when it has no usable device (its CPU device compiles with `clang`,
    which must be on PATH: Debian's clang-19 installs only `clang-19`)."""
    os.environ.setdefault("DEV", "CPU")  # read when tinygrad picks its device
    try:
        from tinygrad import Context, Tensor  # pyright: ignore[reportMissingImports]

        tensors = [Tensor(a).realize() for a in arrays]
    except (ImportError, RuntimeError):
        return None
    with Context(BEAM=beam):  # pyright: ignore
        return _median_time(lambda: build(*tensors).realize(), repeat)  # pyright: ignore


def _kernel_row(name: str, unit: str, work: float, out: pg.Tensor, want: Callable[[], np.ndarray],
                torch_fn: Callable[..., object] | None, tiny_fn: Callable[..., object] | None,
                arrays: list[np.ndarray], repeat: int, per_ms: bool = False) -> list[Row]:
    """Time the program that realizes `out`, numpy's `want`, torch's and tinygrad's
    `fn(*arrays)`; `work` is FLOPs or bytes per run."""
    program, inputs = compiled(out)
    expected = want()
    got = program.run(inputs)[0].reshape(expected.shape)
    np.testing.assert_allclose(got, expected, rtol=2e-3, atol=2e-3)
    settle()
    times: dict[str, float | None] = {"picograd": program.benchmark(inputs, repeat)}
    times["busy"] = program.benchmark(inputs, repeat, before_each=neighbours())
    times["numpy"] = _median_time(want, repeat)
    # the peers beside the same neighbours: how much of a busy slowdown any library pays
    peers_busy = {"numpy": busy_median(want, repeat)}
    settle()
    torch = _torch()
    if torch is not None and torch_fn is not None:
        tensors = [torch.from_numpy(a) for a in arrays]
        times["torch"] = _torch_time(lambda: torch_fn(*tensors), "cpu", repeat)
        peers_busy["torch"] = busy_median(lambda: torch_fn(*tensors), repeat)
        settle()
    if tiny_fn is not None:
        times["tinygrad"] = _tinygrad_time(tiny_fn, arrays, repeat)
    search = None
    if BEAM_WIDTH[0]:
        with _cold_beam():
            start = time.perf_counter()
            beam_program, beam_inputs = compiled(out)
            search = time.perf_counter() - start
        got = beam_program.run(beam_inputs)[0].reshape(expected.shape)
        np.testing.assert_allclose(got, expected, rtol=2e-3, atol=2e-3)
        settle()
        # the heuristic's and BEAM's programs in turns: the machine's speed drifts between
        # rows more than the difference between the two
        turns: dict[str, list[float]] = {"picograd": [], "beam": []}
        for _ in range(BEAM_TURNS):
            turns["picograd"].append(program.benchmark(inputs, repeat))
            turns["beam"].append(beam_program.benchmark(beam_inputs, repeat))
        times.update({k: statistics.median(v) for k, v in turns.items()})
        if tiny_fn is not None:
            times["tinygrad beam"] = _tinygrad_time(tiny_fn, arrays, repeat, BEAM_WIDTH[0])

    def rate(key: str) -> float | None:
        t = times.get(key)
        return work / t / 1e9 if t else None

    note = "peers busy/alone: " + ", ".join(
        f"{peer} {t / times[peer]:.2f}" for peer, t in peers_busy.items() if times.get(peer))
    rows = [Row(name, unit, rate("picograd"), rate("numpy"), rate("torch"), rate("tinygrad"),
                busy=rate("busy"), note=note, beam=rate("beam"), search=search,
                tinygrad_beam=rate("tinygrad beam"))]
    if per_ms:
        ms = {k: (t * 1e3 if t else None) for k, t in times.items()}
        rows.insert(0, Row(name, "ms", ms["picograd"], ms["numpy"], ms.get("torch"),
                           ms.get("tinygrad"), busy=ms["busy"], beam=ms.get("beam"),
                           search=search, tinygrad_beam=ms.get("tinygrad beam")))
    return rows


def bench_matmul(device: str, quick: bool, repeat: int) -> list[Row]:
    rows = []
    for n in (64, 128) if quick else (256, 512, 1024, 2048):
        rng = np.random.default_rng(n)
        a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
        out = pg.Tensor(a, device=device) @ pg.Tensor(b, device=device)
        rows += _kernel_row(f"matmul {n}x{n} fp32", "GFLOP/s", 2 * n**3, out,
                            lambda a=a, b=b: a @ b,
                            lambda x, y: x @ y, lambda x, y: x @ y, [a, b],
                            repeat if n < 2048 else max(3, repeat // 3))
    return rows


def bench_call(device: str, quick: bool, repeat: int) -> list[Row]:
    """A whole user-visible call: `(a @ b).numpy()` from tensors already on the device."""
    n = 128 if quick else 1024
    rng = np.random.default_rng(n)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    ta, tb = pg.Tensor(a, device=device), pg.Tensor(b, device=device)
    (ta @ tb).numpy()  # compiled once, outside the timer

    def median_ms(call: Callable[[], object]) -> float:
        call()  # warm: thread pools, first-call set-up
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e3

    torch = _torch()
    theirs = None
    if torch is not None:
        xa, xb = torch.from_numpy(a), torch.from_numpy(b)
        theirs = median_ms(lambda: (xa @ xb).numpy())

    def ours() -> np.ndarray:
        return (ta @ tb).numpy()

    busy = busy_median(ours, repeat) * 1e3
    settle()
    return [Row(f"matmul {n}x{n}, whole call", "ms", median_ms(ours), median_ms(lambda: a @ b),
                theirs, note="graph build + realize + read back", busy=busy)]


def bench_elementwise(device: str, quick: bool, repeat: int) -> list[Row]:
    n = (1 << 20) if quick else (16 << 20)
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    ta, tb, tc = (pg.Tensor(x, device=device) for x in (a, b, c))
    torch = _torch()
    return _kernel_row(f"relu(a*b+c) {n >> 20}M fp32", "GB/s", 16 * n, (ta * tb + tc).relu(),
                       lambda: np.maximum(a * b + c, 0),
                       (lambda x, y, z: torch.relu(x * y + z)) if torch else None,
                       lambda x, y, z: (x * y + z).relu(), [a, b, c], repeat)


def _np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def bench_softmax(device: str, quick: bool, repeat: int) -> list[Row]:
    shape = (512, 1024) if quick else (4096, 1024)
    x = np.random.default_rng(0).standard_normal(shape, dtype=np.float32)
    torch = _torch()
    return _kernel_row(f"softmax {shape[0]}x{shape[1]}", "GB/s", 8 * x.size,
                       pg.Tensor(x, device=device).softmax(-1), lambda: _np_softmax(x),
                       (lambda t: torch.softmax(t, -1)) if torch else None,
                       lambda t: t.softmax(-1), [x], repeat, per_ms=True)


def _np_conv2d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    kh, kw = w.shape[2:]
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    return np.einsum("nchwij,ocij->nohw", windows, w, optimize=True)


def bench_conv(device: str, quick: bool, repeat: int) -> list[Row]:
    n, c, hw, o = (4, 8, 16, 8) if quick else (32, 16, 32, 32)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, hw, hw), dtype=np.float32)
    w = rng.standard_normal((o, c, 3, 3), dtype=np.float32)
    flops = 2 * n * o * (hw - 2) ** 2 * c * 9
    torch = _torch()
    out = F.conv2d(pg.Tensor(x, device=device), pg.Tensor(w, device=device))
    return _kernel_row(f"conv2d ({n},{c},{hw},{hw})x({o},{c},3,3)", "GFLOP/s", flops, out,
                       lambda: _np_conv2d(x, w),
                       (lambda a, b: torch.nn.functional.conv2d(a, b)) if torch else None,
                       lambda a, b: a.conv2d(b), [x, w], repeat, per_ms=True)


# ── the MLP training step ────────────────────────────────────────────────────


def _mlp(device: str):
    import picograd.nn as nn

    pg.manual_seed(0)
    return nn.Sequential(nn.Linear(IN, HIDDEN, device=device), nn.ReLU(),
                         nn.Linear(HIDDEN, OUT, device=device))


def _cnn(device: str) -> tuple[pg.nn.Module, tuple[np.ndarray, np.ndarray]]:
    """The example's CNN (examples/train_fashion_mnist.py) and one random batch."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
    from train_fashion_mnist import make_model

    rng = np.random.default_rng(0)
    return make_model(device), (rng.standard_normal((BATCH, 1, 28, 28), dtype=np.float32),
                                rng.integers(0, OUT, BATCH).astype(np.int32))


def first_step_child(device: str, model_name: str, busy: bool) -> None:
    """In a fresh process (no in-memory caches): print the first step's seconds as JSON;
    `busy`: right after the neighbours' work."""
    before = neighbours() if busy else None  # their imports and set-up are not timed
    if model_name == "cnn":
        model, batch = _cnn(device)
        data = [batch]
    else:
        data, model = _data(1), _mlp(device)
    if before is not None:
        before()
    start = time.perf_counter()
    _picograd_steps(model, device, data)
    print(json.dumps({"first_s": time.perf_counter() - start}))


def _first_step(device: str, cache_dir: str | None, model_name: str = "mlp",
                busy: bool = False) -> float:
    env = dict(os.environ)
    if cache_dir is None:
        env["PG_CACHE"] = "0"
    else:
        env["PG_CACHE_DIR"] = cache_dir
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--first-step-child",
                          model_name, "--device", device] + (["--busy-child"] if busy else []),
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["first_s"]


def _jit_steady(device: str, data, model: pg.nn.Module | None = None,
                before_each: Callable[[], object] | None = None) -> tuple[float | None, str]:
    """Median seconds of a `picograd.jit` Adam step of `model` (the MLP by default) on the
    (x, y) batches of `data`, from the third on, with `before_each()` (when given) called
    right before each step, untimed."""
    jit = getattr(pg, "jit", None)
    if jit is None:
        return None, "picograd.jit does not exist (yet): row skipped"
    model = _mlp(device) if model is None else model
    opt = pg.optim.Adam(model.parameters(), lr=1e-3)

    def step(x: pg.Tensor, y: pg.Tensor) -> pg.Tensor:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    jitted = jit(step)
    times = []
    try:
        for x, y in data:
            if before_each is not None:
                before_each()
            start = time.perf_counter()
            jitted(pg.Tensor(x, device=device), pg.Tensor(y, device=device)).item()
            times.append(time.perf_counter() - start)
    except Exception as e:  # a jit that cannot capture the step yet: say so, do not fail
        return None, f"jit of the step failed: {type(e).__name__}: {e}"[:160]
    return statistics.median(times[2:]), ""


def bench_mlp(device: str, quick: bool, repeat: int) -> list[Row]:
    steps = 6 if quick else 30
    data = _data(steps)
    rows = []
    first: dict[bool, tuple[float, float, float]] = {}
    for busy in (False, True):
        with tempfile.TemporaryDirectory(prefix="picograd-bench-cache-") as cache:
            cold, warm = _first_step(device, cache, busy=busy), _first_step(device, cache,
                                                                            busy=busy)
        first[busy] = cold, warm, _first_step(device, None, busy=busy)
    for i, label in enumerate(("empty disk cache", "warm disk cache", "PG_CACHE=0")):
        rows.append(Row(f"MLP first step, fresh process, {label}", "s", first[False][i],
                        busy=first[True][i], target=(TARGETS["first"], TARGETS["warm"], "")[i],
                        note="one run each" if i == 0 else ""))
    settle()
    steady = statistics.median(_picograd_steps(_mlp(device), device, data)[2:])
    steady_busy = statistics.median(_picograd_steps(_mlp(device), device, data,
                                                    neighbours())[2:])
    np_first, np_steady = bench_numpy(data)
    theirs = bench_torch(data)
    torch_steady = theirs[1] if theirs else None
    rows.append(Row("MLP steady step, no jit", "ms", steady * 1e3, np_steady * 1e3,
                    torch_steady * 1e3 if torch_steady else None, busy=steady_busy * 1e3))
    settle()
    jit_steady, note = _jit_steady(device, data)
    jit_busy, _ = _jit_steady(device, data, before_each=neighbours())
    rows.append(Row("MLP steady step, jit", "ms", jit_steady * 1e3 if jit_steady else None,
                    np_steady * 1e3, torch_steady * 1e3 if torch_steady else None,
                    target=TARGETS["steady jit"], note=note,
                    busy=jit_busy * 1e3 if jit_busy else None))
    if BEAM_WIDTH[0]:
        rows.append(_beam_jit_row("MLP steady step, jit", "ms", device, data, None, np_steady,
                                  torch_steady))
    del np_first
    return rows


def _beam_jit_row(name: str, unit: str, device: str, data, model: pg.nn.Module | None,
                  numpy_seconds: float | None, torch_seconds: float | None) -> Row:
    """The jit step of `_jit_steady` with BEAM search (cold): steady time, and the first
    three steps' time (captures, compiles, searches, one replay) as the search time."""
    with _cold_beam():
        start = time.perf_counter()
        _jit_steady(device, data[:3], model)  # the first two steps capture and search
        search = time.perf_counter() - start
        seconds, note = _jit_steady(device, data, model)

    def value(t: float | None) -> float | None:
        if t is None:
            return None
        return BATCH / t if unit == "img/s" else t * 1e3

    return Row(f"{name}, BEAM={BEAM_WIDTH[0]}", unit, None, value(numpy_seconds),
               value(torch_seconds), beam=value(seconds), search=search,
               note=note or "picograd column: see the row above; BEAM's in its own column")


def bench_cnn_step(device: str, quick: bool, repeat: int) -> list[Row]:
    cold = _first_step(device, None, "cnn")
    cold_busy = _first_step(device, None, "cnn", busy=True)
    steps = 3 if quick else 10
    settle()
    ours, theirs, _ = bench_cnn(device, steps)
    model, batch = _cnn(device)
    busy_times = _picograd_steps(model, device, [batch] * (steps + 2), neighbours())
    settle()
    jit_seconds, note = _jit_steady(device, [batch] * (steps + 2), _cnn(device)[0])
    jit_busy, _ = _jit_steady(device, [batch] * (steps + 2), _cnn(device)[0], neighbours())
    beam_rows = [_beam_jit_row("CNN steady step, jit", "img/s", device,
                               [batch] * (steps + 2), _cnn(device)[0], None,
                               BATCH / theirs if theirs else None)] if BEAM_WIDTH[0] else []
    return [*beam_rows, Row("CNN first step, fresh process, PG_CACHE=0", "s", cold, note="one run",
                busy=cold_busy, target=TARGETS["first cnn"]),
            Row("CNN steady step", "img/s", ours, None, theirs,
                note="examples/train_fashion_mnist.py's model, batch 128",
                busy=BATCH / statistics.median(busy_times[2:])),
            Row("CNN steady step, jit", "img/s", BATCH / jit_seconds if jit_seconds else None,
                None, theirs, note=note or "the same step under picograd.jit",
                busy=BATCH / jit_busy if jit_busy else None)]


# ── dispatch overhead ────────────────────────────────────────────────────────


def bench_realize(device: str, quick: bool, repeat: int) -> list[Row]:
    a = pg.Tensor(np.ones(4, np.float32), device=device)
    b = pg.Tensor(np.ones(4, np.float32), device=device)
    (a + b).realize()  # compiles once

    def median_us(before: Callable[[], object] | None) -> float:
        times = []
        for _ in range(50 if quick else 500):
            c = a + b  # the graph is built outside the timer
            if before is not None:
                before()
            start = time.perf_counter()
            c.realize()
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e6

    settle()
    alone = median_us(None)
    return [Row("cached realize of a tiny add", "us", alone, busy=median_us(neighbours()),
                target=TARGETS["realize"], note="graph built outside the timer")]


def bench_jit_replay(device: str, quick: bool, repeat: int) -> list[Row]:
    jit = getattr(pg, "jit", None)
    name = "jit replay per kernel"
    if jit is None:
        return [Row(name, "us", None, target=TARGETS["jit"],
                    note="picograd.jit does not exist (yet): row skipped")]
    rng = np.random.default_rng(0)
    w = pg.Tensor(rng.standard_normal((8, 8), dtype=np.float32) / 3, device=device)

    def chain(x: pg.Tensor) -> pg.Tensor:
        for _ in range(8):  # each matmul reads the previous result: one kernel each
            x = (x @ w).relu()
        return x

    x0 = pg.Tensor(rng.standard_normal((8, 8), dtype=np.float32), device=device)
    kernels = compiled(chain(x0))[0].num_kernels
    jitted = jit(chain)
    try:
        inputs = [pg.Tensor(rng.standard_normal((8, 8), dtype=np.float32), device=device)
                  for _ in range(8)]
        for x in inputs[:3]:  # capture and settle
            jitted(x).realize()

        def median_us(before: Callable[[], object] | None) -> float:
            times = []
            for _ in range(20 if quick else 200):
                x = inputs[len(times) % len(inputs)]
                if before is not None:
                    before()
                start = time.perf_counter()
                jitted(x).realize()
                times.append(time.perf_counter() - start)
            return statistics.median(times) / kernels * 1e6

        settle()
        alone, busy = median_us(None), median_us(neighbours())
    except Exception as e:
        return [Row(name, "us", None, target=TARGETS["jit"],
                    note=f"jit failed: {type(e).__name__}: {e}"[:160])]
    return [Row(name, "us", alone, busy=busy, target=TARGETS["jit"],
                note=f"{kernels} kernels per replay")]


BENCHES = {"matmul": bench_matmul, "call": bench_call, "elementwise": bench_elementwise,
           "softmax": bench_softmax, "conv": bench_conv, "cnn": bench_cnn_step,
           "mlp": bench_mlp, "realize": bench_realize, "jit": bench_jit_replay}


def _cell(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def markdown(rows: list[Row], device: str) -> str:
    beam = BEAM_WIDTH[0]
    extra = (f" picograd BEAM={beam} | search s | BEAM / heuristic | tinygrad BEAM={beam} |"
             if beam else "")
    lines = [f"| benchmark ({device}) | unit | picograd | picograd busy | busy/alone | numpy | "
             f"torch | tinygrad |{extra} target | note |",
             "|---|---|---:|---:|---:|---:|---:|---:|" + ("---:|" * 4 if beam else "")
             + "---|---|"]
    for r in rows:
        ratio = r.busy_over_alone
        cells = ""
        if beam:
            gain = (None if r.beam is None or r.picograd is None else
                    r.beam / r.picograd if r.unit in RATE_UNITS else r.picograd / r.beam)
            cells = (f" {_cell(r.beam)} | {_cell(r.search)} | "
                     f"{'-' if gain is None else f'{gain:.2f}'} | {_cell(r.tinygrad_beam)} |")
        lines.append(f"| {r.name} | {r.unit} | {_cell(r.picograd)} | {_cell(r.busy)} | "
                     f"{'-' if ratio is None else f'{ratio:.2f}'} | {_cell(r.numpy)} | "
                     f"{_cell(r.torch)} | {_cell(r.tinygrad)} |{cells} {r.target} | {r.note} |")
    return "\n".join(lines)


def main() -> None:
    assert __doc__
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="CPU:LLVM")
    parser.add_argument("--only", default=",".join(GROUPS),
                        help=f"comma-separated subset of {', '.join(GROUPS)}")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--beam", type=int, default=0,
                        help="add BEAM search of this width (and tinygrad's) beside the rows")
    parser.add_argument("--first-step-child", choices=("mlp", "cnn"), help=argparse.SUPPRESS)
    parser.add_argument("--busy-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_step_child:
        first_step_child(args.device, args.first_step_child, args.busy_child)
        return
    BEAM_WIDTH[0] = max(0, args.beam)
    chosen = [g.strip() for g in args.only.split(",") if g.strip()]
    unknown = sorted(set(chosen) - set(GROUPS))
    if unknown:
        parser.error(f"unknown --only groups {unknown}; choose from {', '.join(GROUPS)}")
    pg.Tensor([1.0], device=args.device).exp().numpy()  # imports and JIT set-up not counted
    repeat = 3 if args.quick else args.repeat
    rows: list[Row] = []
    for group in chosen:
        try:
            rows += BENCHES[group](args.device, args.quick, repeat)
        except Exception as e:  # one broken group must not lose the others' numbers
            rows.append(Row(group, "", None, note=f"failed: {type(e).__name__}: {e}"[:160]))
    print(markdown(rows, args.device))
    print(f"\n(medians; {os.cpu_count()} CPUs; numbers move with machine load"
          f"{'; --quick sizes' if args.quick else ''}; {neighbours().note}; busy/alone: the "
          "ratio of the times, > 1 is slower beside them)")


if __name__ == "__main__":
    main()
