"""Plain torch programs: eager, `torch.compile` (inductor) and `torch.compile(backend=
"picograd")`, in one run.

    python bench/torch_backend.py [--repeat 10] [--rows mlp,cnn,encoder] [--no-inductor]
                                  [--quick]

Rows:

    mlp       a 784-256-10 MLP training step (forward, cross-entropy, backward, AdamW),
              batch 128
    cnn       the Fashion-MNIST example's CNN (conv-relu-pool x 2, two linears) written in
              torch, the same training step, batch 128
    encoder   bench/transformer.py's BERT-style encoder forward (6 layers, hidden 384)
              under `torch.no_grad()`, 32 x 128 and 1 x 128 token ids

Columns: the first call of each compiled model (dynamo, AOTAutograd and the compiler: for
the training rows the first step, for the encoder its first forward; inductor's and
picograd's disk caches as they are, so say whether they were cold), the steady time
(median of `--repeat` calls after three warm-up calls) and its ratio to inductor's, and the
share of the model's ATen ops that ran in picograd (`picograd.torch_backend.explain`).
Each compiled model starts from the same weights as eager, and its first output is
checked against eager's (1e-3) before timing. Numbers move with machine load: quote them
from an idle machine.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from realize import _median_time
from torch import nn
from transformer import torch_encoder

from picograd.torch_backend import backend, explain


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def _cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def _step_fn(model: nn.Module, compiler: str | None) -> Callable[[torch.Tensor, torch.Tensor],
                                                                   torch.Tensor]:
    """One AdamW training step of `model` (its own copy), compiled by `compiler`."""
    model = copy.deepcopy(model)
    forward = model if compiler is None else torch.compile(
        model, backend=backend if compiler == "picograd" else compiler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(forward(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    return step


def _training_row(name: str, model: nn.Module, x: torch.Tensor, y: torch.Tensor,
                  compilers: list[str], repeat: int) -> list[str]:
    want = _step_fn(model, None)(x, y)
    rows, times = [], {}
    for compiler in ["eager", *compilers]:
        step = _step_fn(model, None if compiler == "eager" else compiler)
        start = time.perf_counter()
        got = step(x, y)
        first = time.perf_counter() - start
        torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3)
        for _ in range(2):
            step(x, y)
        times[compiler] = _median_time(lambda step=step: step(x, y), repeat)
        rows.append((compiler, first if compiler != "eager" else None))
    share = _share(model, x, backward=True)
    return _lines(name, f"{tuple(x.shape)}", rows, times, share)


def _encoder_rows(compilers: list[str], repeat: int, quick: bool) -> list[str]:
    torch.manual_seed(0)
    model = torch_encoder(1 if quick else 6).eval()
    out = []
    for shape in [(2, 16)] if quick else [(32, 128), (1, 128)]:
        ids = torch.randint(0, 30522, shape)
        with torch.no_grad():
            want = model(ids)
            rows, times = [], {}
            for compiler in ["eager", *compilers]:
                torch._dynamo.reset()
                fn = model if compiler == "eager" else torch.compile(
                    model, backend=backend if compiler == "picograd" else compiler)
                start = time.perf_counter()
                got = fn(ids)
                first = time.perf_counter() - start
                torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3)
                for _ in range(2):
                    fn(ids)
                times[compiler] = _median_time(lambda fn=fn, ids=ids: fn(ids), repeat)
                rows.append((compiler, first if compiler != "eager" else None))
            share = _share(model, ids, backward=False)
        out += _lines("encoder", f"{shape[0]} x {shape[1]}", rows, times, share)
    return out


def _share(model: nn.Module, x: torch.Tensor, backward: bool) -> str:
    report = explain(copy.deepcopy(model), x, backward=backward, verbose=False)
    ours, theirs = sum(report.picograd.values()), sum(report.torch.values())
    return f"{100 * ours / max(1, ours + theirs):.0f} %"


def _lines(name: str, shape: str, rows: list[tuple[str, float | None]],
           times: dict[str, float], share: str) -> list[str]:
    reference = times.get("inductor")
    lines = []
    for compiler, first in rows:
        ratio = f"{times[compiler] / reference:.2f}" if reference else "-"
        lines.append(f"| {name} | {shape} | {compiler} | "
                     f"{'-' if first is None else f'{first:.2f}'} | "
                     f"{times[compiler] * 1e3:.2f} | {ratio} | "
                     f"{share if compiler == 'picograd' else ''} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--rows", default="mlp,cnn,encoder")
    parser.add_argument("--no-inductor", action="store_true")
    parser.add_argument("--quick", action="store_true", help="small shapes: a smoke test")
    args = parser.parse_args()
    compilers = ([] if args.no_inductor else ["inductor"]) + ["picograd"]
    batch = 8 if args.quick else 128
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch, 1, 28, 28, generator=gen)
    y = torch.randint(0, 10, (batch,), generator=gen)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads\n")
    print("| model | input | compiler | first call s | steady ms | vs inductor "
          "| ops in picograd |")
    print("|---|---|---|---:|---:|---:|---:|")
    for row in args.rows.split(","):
        torch.manual_seed(0)
        if row in ("mlp", "cnn"):
            model = _mlp() if row == "mlp" else _cnn()
            lines = _training_row(row, model, x, y, compilers, args.repeat)
        else:
            lines = _encoder_rows(compilers, args.repeat, args.quick)
        print("\n".join(lines), flush=True)
    print("\n(medians; first call: dynamo + AOTAutograd + the compiler, disk caches as "
          "they were)")


if __name__ == "__main__":
    main()
