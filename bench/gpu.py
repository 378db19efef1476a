"""GPU kernels against torch on the same machine: fp32 matmul and a fused elementwise op.

    python bench/gpu.py [--device CUDA|WEBGPU|CPU] [--sizes 1024,2048,4096] [--repeat N]

For each size N it times, with the inputs already in device memory (copies excluded, see
`Program.benchmark`): an NxN @ NxN fp32 matmul and the fused `relu(a*b + c)` on NxN, and
prints GFLOP/s (matmul) or GB/s (elementwise) next to torch's for the same computation on
the same machine (torch on CUDA when `--device CUDA` and torch sees a GPU, else torch on the
CPU), and their ratio. Each result is checked against numpy before it is timed.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import picograd as pg
from picograd.frontend.realize import compiled


def _torch_time(fn: Callable[[], object], device: str, repeat: int) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    fn()
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _torch_ops(n: int, arrays: list[np.ndarray], use_cuda: bool):
    import torch

    device = "cuda" if use_cuda else "cpu"
    a, b, c = (torch.from_numpy(x).to(device) for x in arrays)
    return device, (lambda: a @ b), (lambda: torch.relu(a * b + c))


def bench(device: str, n: int, repeat: int) -> list[tuple[str, float, float | None, str]]:
    rng = np.random.default_rng(n)
    arrays = [rng.standard_normal((n, n), dtype=np.float32) for _ in range(3)]
    a, b, c = (pg.Tensor(x, device=device) for x in arrays)
    rows = []
    for name, tensor, want, work, unit in (
        (f"matmul {n}x{n}", a @ b, lambda: arrays[0] @ arrays[1], 2 * n**3, "GFLOP/s"),
        (f"relu(a*b+c) {n}x{n}", (a * b + c).relu(),
         lambda: np.maximum(arrays[0] * arrays[1] + arrays[2], 0), 4 * 4 * n * n, "GB/s"),
    ):
        program, inputs = compiled(tensor)
        got = program.run(inputs)[0].reshape(n, n)
        np.testing.assert_allclose(got, want(), rtol=1e-3, atol=1e-3)
        seconds = program.benchmark(inputs, repeat)
        rows.append((name, work / seconds / 1e9, None, unit))
    try:
        import torch

        use_cuda = device == "CUDA" and torch.cuda.is_available()
        torch_device, matmul, elementwise = _torch_ops(n, arrays, use_cuda)
        for i, (fn, work) in enumerate(((matmul, 2 * n**3), (elementwise, 16 * n * n))):
            t = _torch_time(fn, torch_device, repeat)
            name, rate, _, unit = rows[i]
            rows[i] = (name, rate, work / t / 1e9 if t else None, f"{unit} (torch {torch_device})")
    except ImportError:
        pass
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="CUDA")
    parser.add_argument("--sizes", default="1024,2048,4096")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    print(f"{'kernel':24} {'picograd':>10} {'torch':>10} {'ratio':>7}  unit   [{args.device}]")
    for n in (int(s) for s in args.sizes.split(",")):
        for name, ours, theirs, unit in bench(args.device, n, args.repeat):
            ratio = f"{ours / theirs:7.2f}" if theirs else "    n/a"
            theirs_s = f"{theirs:10.1f}" if theirs else "       n/a"
            print(f"{name:24} {ours:10.1f} {theirs_s} {ratio}  {unit}")


if __name__ == "__main__":
    main()
