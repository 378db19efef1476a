"""Training-step speed: a 784-256-10 MLP with Adam at batch 128, first and steady step, next to
numpy (the same step written by hand) and torch (when installed), in one run.

    python bench/train_step.py [--device CPU] [--steps 30]

"first" is the first step of a fresh process-level graph (building IR, compiling, running);
"steady" the median of the later steps, which reuse the compiled program (the script checks
that they compile nothing). A step is forward, cross-entropy, backward and the Adam update,
with the loss read back to the host. The Fashion-MNIST example's CNN
(`examples/train_fashion_mnist.make_model`) is timed the same way on random 28x28 images and
reported in images/s, with the seconds of its first step (`PG_CACHE=0` makes that a cold
compile; `--cnn-steps 0` skips the CNN).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F

BATCH, IN, HIDDEN, OUT = 128, 784, 256, 10


def _data(steps: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((BATCH, IN), dtype=np.float32),
             rng.integers(0, OUT, BATCH).astype(np.int32)) for _ in range(steps)]


def _picograd_steps(model: nn.Module, device: str, data,
                    before_each: Callable[[], object] | None = None) -> list[float]:
    """Seconds of each Adam training step of `model` on the (x, y) batches of `data`, with
    `before_each()` (when given) called right before each, untimed; exits if a step after
    the second compiles anything."""
    opt = pg.optim.Adam(model.parameters(), lr=1e-3)
    times = []
    compiles = []
    for x, y in data:
        before = pg.compile_stats().compiles
        if before_each is not None:
            before_each()
        start = time.perf_counter()
        loss = F.cross_entropy(model(pg.Tensor(x, device=device)), pg.Tensor(y, device=device))
        loss.backward()
        opt.step()
        opt.zero_grad()
        loss.item()
        times.append(time.perf_counter() - start)
        compiles.append(pg.compile_stats().compiles - before)
    if any(compiles[2:]):
        raise SystemExit(f"steady steps recompiled: {compiles}")
    return times


def bench_picograd(device: str, data) -> tuple[float, float]:
    pg.manual_seed(0)
    model = nn.Sequential(nn.Linear(IN, HIDDEN, device=device), nn.ReLU(),
                          nn.Linear(HIDDEN, OUT, device=device))
    times = _picograd_steps(model, device, data)
    return times[0], statistics.median(times[2:])


def bench_numpy(data) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    w1 = rng.uniform(-1 / IN**0.5, 1 / IN**0.5, (IN, HIDDEN)).astype(np.float32)
    w2 = rng.uniform(-1 / HIDDEN**0.5, 1 / HIDDEN**0.5, (HIDDEN, OUT)).astype(np.float32)
    b1, b2 = np.zeros(HIDDEN, np.float32), np.zeros(OUT, np.float32)
    params = [w1, b1, w2, b2]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    times = []
    for t, (x, y) in enumerate(data, 1):
        start = time.perf_counter()
        h = np.maximum(x @ w1 + b1, 0)
        logits = h @ w2 + b2
        z = logits - logits.max(1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(1, keepdims=True)
        float(-np.log(p[np.arange(BATCH), y]).mean())
        d = p
        d[np.arange(BATCH), y] -= 1
        d /= BATCH
        gw2, gb2 = h.T @ d, d.sum(0)
        dh = (d @ w2.T) * (h > 0)
        gw1, gb1 = x.T @ dh, dh.sum(0)
        for i, g in enumerate((gw1, gb1, gw2, gb2)):
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            params[i] -= 1e-3 / (1 - 0.9**t) * m[i] / (np.sqrt(v[i] / (1 - 0.999**t)) + 1e-8)
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times[2:])


def bench_torch(data) -> tuple[float, float] | None:
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, OUT))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    times = []
    for x, y in data:
        start = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(x)),
                                                 torch.from_numpy(y).long())
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times[2:])


def bench_cnn(device: str, steps: int) -> tuple[float, float | None, float]:
    """Steady images/s of the example's CNN training step, of its torch twin, and the
    seconds of picograd's first step (its compile: run with PG_CACHE=0 for a cold one)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
    from train_fashion_mnist import make_model

    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 1, 28, 28), dtype=np.float32)
    y = rng.integers(0, OUT, BATCH).astype(np.int32)
    times = _picograd_steps(make_model(device), device, [(x, y)] * (steps + 2))
    ours, first = BATCH / statistics.median(times[2:]), times[0]
    try:
        import torch
    except ImportError:
        return ours, None, first
    tnn = torch.nn
    twin = tnn.Sequential(tnn.Conv2d(1, 16, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                          tnn.Conv2d(16, 32, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                          tnn.Flatten(), tnn.Linear(32 * 7 * 7, 128), tnn.ReLU(),
                          tnn.Linear(128, 10))
    topt = torch.optim.Adam(twin.parameters(), lr=1e-3)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y).long()
    times = []
    for _ in range(steps + 2):
        start = time.perf_counter()
        tloss = tnn.functional.cross_entropy(twin(tx), ty)
        topt.zero_grad()
        tloss.backward()
        topt.step()
        tloss.item()
        times.append(time.perf_counter() - start)
    return ours, BATCH / statistics.median(times[2:]), first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="CPU")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--cnn-steps", type=int, default=8)
    args = parser.parse_args()
    if args.steps < 3 or args.cnn_steps < 0:
        # the first step compiles and the second records: the median is of the later ones
        parser.error("--steps must be at least 3 and --cnn-steps not negative")
    data = _data(args.steps)
    rows = [("picograd " + args.device, bench_picograd(args.device, data)),
            ("numpy", bench_numpy(data))]
    theirs = bench_torch(data)
    if theirs is not None:
        rows.append(("torch", theirs))
    steady_pg = rows[0][1][1]
    print(f"MLP {IN}-{HIDDEN}-{OUT}, Adam, batch {BATCH}, {args.steps} steps")
    print(f"{'':18} {'first ms':>10} {'steady ms':>10} {'images/s':>10} {'vs picograd':>12}")
    for name, (first, steady) in rows:
        print(f"{name:18} {first * 1e3:10.1f} {steady * 1e3:10.2f} {BATCH / steady:10.0f} "
              f"{steady_pg / steady:11.2f}x")
    if args.cnn_steps:
        ours, theirs, first = bench_cnn(args.device, args.cnn_steps)
        torch_part = f", torch {theirs:.0f} images/s" if theirs else ""
        print(f"Fashion-MNIST example CNN, Adam, batch {BATCH}: picograd {ours:.0f} images/s"
              f"{torch_part}; picograd's first step {first:.2f} s")


if __name__ == "__main__":
    main()
