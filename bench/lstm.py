"""LSTM forward + backward speed: picograd against torch eager, same sizes and weights.

    python bench/lstm.py [--device CPU:LLVM] [--runs 10] [--seq 100] [--batch 32]
                         [--hidden 256] [--layers 2]

A step is the LSTM over the whole sequence, a sum of its output, and the backward pass to
every weight and to the input, read back to the host. picograd is timed two ways: eager
(every step builds the lazy graph again and one realize computes it from the cached
program) and under `pg.jit` (call 2 captures, later calls replay the programs without
building a graph). "first" is the first eager step (it builds IR and compiles; `PG_CACHE=0`
makes that a cold compile); the other figures are medians of the steps after `--warmup`
more, which reuse the compiled programs (checked: they compile nothing). The target
(issue 35) is picograd <= 1.5x torch at batch 32, sequence 100, hidden 256, 2 layers on
CPU:LLVM.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import picograd as pg
import picograd.nn as nn


def bench_picograd(args: argparse.Namespace, state: dict[str, np.ndarray], x: np.ndarray,
                   jit: bool) -> tuple[float, float]:
    """(first step, median steady step) in seconds. Eager: every step builds the lazy graph
    again (Python runs the LSTM's 100 steps and the backward) and one realize computes it
    from the cached program. jit: `pg.jit` replays the programs it captured in call 2 (no
    graph is built; what a training loop under `pg.jit` pays)."""
    lstm = nn.LSTM(args.hidden, args.hidden, num_layers=args.layers, device=args.device)
    lstm.load_state_dict(state)
    params = lstm.parameters()
    inputs = pg.Tensor(x, device=args.device).requires_grad_()
    pg.realize(inputs, *params)

    def step(inputs: pg.Tensor) -> list[pg.Tensor]:
        lstm.zero_grad()
        inputs.grad = None
        out, _ = lstm(inputs)
        out.sum().backward()
        grads = [p.grad for p in params] + [inputs.grad]
        assert all(g is not None for g in grads)
        return grads  # type: ignore[return-value]

    run = pg.jit(step) if jit else step
    warmup = args.warmup + (2 if jit else 0)  # jit: call 2 captures, replays from call 3
    times, compiles = [], []
    for _ in range(1 + warmup + args.runs):
        before = pg.compile_stats().compiles
        start = time.perf_counter()
        grads = run(inputs)
        pg.realize(*grads)
        for g in grads:
            g.numpy()
        times.append(time.perf_counter() - start)
        compiles.append(pg.compile_stats().compiles - before)
    if any(compiles[1 + warmup:]):
        raise SystemExit(f"steady steps recompiled: {compiles}")
    return times[0], statistics.median(times[1 + warmup:])


def bench_torch(args: argparse.Namespace, x: np.ndarray) -> tuple[dict[str, np.ndarray],
                                                                  float]:
    import torch

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(args.hidden, args.hidden, num_layers=args.layers)
    inputs = torch.tensor(x, requires_grad=True)
    times = []
    for _ in range(1 + args.warmup + args.runs):
        start = time.perf_counter()
        out, _ = lstm(inputs)
        out.sum().backward()
        times.append(time.perf_counter() - start)
        lstm.zero_grad()
        inputs.grad = None
    state = {k: v.detach().numpy() for k, v in lstm.state_dict().items()}
    return state, statistics.median(times[1 + args.warmup:])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--device", default="CPU:LLVM")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--seq", type=int, default=100)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be positive and --warmup not negative")
    x = np.random.default_rng(0).standard_normal(
        (args.seq, args.batch, args.hidden)).astype(np.float32)
    state, theirs = bench_torch(args, x)
    first, eager = bench_picograd(args, state, x, jit=False)
    _, replayed = bench_picograd(args, state, x, jit=True)
    print(f"LSTM batch {args.batch}, sequence {args.seq}, hidden {args.hidden}, "
          f"{args.layers} layers, forward + backward, median of {args.runs}")
    print(f"torch eager ({__import__('torch').get_num_threads()} threads): "
          f"{theirs * 1e3:.1f} ms")
    print(f"picograd {args.device} eager: {eager * 1e3:.1f} ms = {eager / theirs:.2f}x torch "
          f"(first step {first:.1f} s)")
    print(f"picograd {args.device} pg.jit: {replayed * 1e3:.1f} ms = "
          f"{replayed / theirs:.2f}x torch (target <= 1.5x)")


if __name__ == "__main__":
    main()
