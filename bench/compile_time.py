"""Time to compile and run a fresh kernel, and to realize the same graph a second time.

    python bench/compile_time.py [--repeat N] [--renderer llvm|c|both]

A "fresh" graph is one picograd has not seen in this process (each repeat uses a new shape,
so the schedule cache misses and every stage runs: build pg_tensor IR, the pass pipeline,
machine-code generation, the run). A "second" realize is the same graph built again from new
tensors (new buffers): only the realize is timed, it must hit the cache and compile nothing,
which the script checks (exit status 1 otherwise). numpy's time for the same computation is
printed alongside as the floor.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import picograd as pg
from picograd import compile_stats

Maker = Callable[[int, str], tuple[Callable[[], pg.Tensor], Callable[[], np.ndarray]]]


def _elementwise(n: int, device: str) -> tuple[Callable[[], pg.Tensor], Callable[[], np.ndarray]]:
    rng = np.random.default_rng(n)
    a, b, c = (rng.standard_normal((64, n), dtype=np.float32) for _ in range(3))

    def run_pg() -> pg.Tensor:
        ta, tb, tc = (pg.Tensor(x, device=device) for x in (a, b, c))
        return (ta * tb + tc).relu()

    return run_pg, lambda: np.maximum(a * b + c, 0)


def _matmul(n: int, device: str) -> tuple[Callable[[], pg.Tensor], Callable[[], np.ndarray]]:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((64, n), dtype=np.float32)
    b = rng.standard_normal((n, 64), dtype=np.float32)
    return (lambda: pg.Tensor(a, device=device) @ pg.Tensor(b, device=device)), (lambda: a @ b)


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(make: Maker, renderer: str, repeat: int) -> dict[str, float]:
    """Median times over `repeat` fresh shapes: build+compile+run, a cached realize
    (the graph is built outside the timer), numpy."""
    device = f"CPU:{renderer.upper()}"
    fresh, second, numpy_times = [], [], []
    compiles_on_second = 0
    for i in range(repeat):
        run_pg, run_np = make(64 + i, device)  # a new shape each time: a graph never seen
        fresh.append(_time(lambda f=run_pg: f().numpy()))
        expected = run_np()
        before = compile_stats().compiles
        got = run_pg()
        second.append(_time(got.realize))
        compiles_on_second += compile_stats().compiles - before
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-4, atol=1e-4)
        numpy_times.append(_time(run_np))
    return {
        "fresh_ms": 1e3 * statistics.median(fresh),
        "second_ms": 1e3 * statistics.median(second),
        "numpy_ms": 1e3 * statistics.median(numpy_times),
        "compiles_on_second": compiles_on_second,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--renderer", choices=["llvm", "c", "both"], default="both")
    args = parser.parse_args()
    renderers = ["llvm", "c"] if args.renderer == "both" else [args.renderer]
    for renderer in renderers:  # warm-up: imports and the first JIT set-up are not counted
        pg.Tensor([1.0], device=f"CPU:{renderer.upper()}").exp().numpy()
    print(f"{'kernel':<26}{'renderer':<10}{'fresh ms':>10}{'second ms':>11}{'numpy ms':>10}"
          f"{'recompiles':>12}")
    recompiled = 0
    makers: tuple[tuple[str, Maker], ...] = (("relu(a*b+c) 64xN", _elementwise),
                                             ("matmul 64xN @ Nx64", _matmul))
    for name, make in makers:
        for renderer in renderers:
            r = measure(make, renderer, args.repeat)
            recompiled += int(r["compiles_on_second"])
            print(f"{name:<26}{renderer:<10}{r['fresh_ms']:>10.1f}{r['second_ms']:>11.3f}"
                  f"{r['numpy_ms']:>10.3f}{r['compiles_on_second']:>12d}")
    print(f"(median of {args.repeat}; 'second' = realize of the same graph rebuilt from new "
          "tensors; 'recompiles' must be 0)")
    if recompiled:
        raise SystemExit(f"error: {recompiled} second realizes recompiled (the cache missed)")


if __name__ == "__main__":
    main()
