"""The Fashion-MNIST CNN of train_fashion_mnist.py written in plain torch, compiled by picograd.

    python examples/torch_compile_fashion_mnist.py [--epochs 3] [--backend picograd]
                                                   [--batch-size 128] [--lr 2e-3]

The model, the loss, Adam and the loop are torch's; `torch.compile(model,
backend="picograd")` is the one line that hands the forward and backward to picograd
(`--backend inductor` or `eager` for comparison). The data is the Debian package
`dataset-fashion-mnist` (`scripts/install_datasets.sh`), read with picograd.data into numpy
arrays. Every epoch prints its test accuracy and images/s; the first step includes the
compile.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from picograd.data import batches, fashion_mnist

MEAN, STD = 0.2860, 0.3530  # of the training images, scaled to [0, 1]


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def prepare(images: np.ndarray) -> torch.Tensor:
    """uint8 (N, 28, 28) -> normalised float32 (N, 1, 28, 28)."""
    return torch.from_numpy(((images.astype(np.float32) / 255 - MEAN) / STD)[:, None])


def accuracy(model: nn.Module, x: torch.Tensor, y: np.ndarray, batch_size: int = 1000
             ) -> float:
    model.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, len(x), batch_size):
            logits = model(x[start:start + batch_size])
            correct += int((logits.argmax(1).numpy() == y[start:start + batch_size]).sum())
    model.train()
    return correct / len(x)


def train(epochs: int = 3, backend: str = "picograd", batch_size: int = 128,
          lr: float = 2e-3, limit: int | None = None) -> dict:
    """Train from a fixed seed; the history: loss per step, test accuracy and images/s per
    epoch. `limit` trains and tests on the first `limit` images (tests)."""
    x_train, y_train, x_test, y_test = fashion_mnist()
    if limit is not None:
        x_train, y_train, x_test, y_test = (a[:limit] for a in (x_train, y_train, x_test,
                                                                y_test))
    x_test_t = prepare(x_test)
    torch.manual_seed(0)
    model = make_model()
    run = model if backend == "eager" else torch.compile(model, backend=backend)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history: dict = {"loss": [], "accuracy": [], "images_per_second": []}
    for epoch in range(epochs):
        begin, seen = time.perf_counter(), 0
        for xb, yb in batches(x_train, y_train, batch_size, seed=epoch, drop_last=True):
            optimizer.zero_grad()
            loss = F.cross_entropy(run(prepare(xb)), torch.from_numpy(yb.astype(np.int64)))
            loss.backward()
            optimizer.step()
            history["loss"].append(loss.item())
            seen += len(xb)
        history["images_per_second"].append(seen / (time.perf_counter() - begin))
        history["accuracy"].append(accuracy(run, x_test_t, y_test))
        print(f"epoch {epoch + 1}: loss {history['loss'][-1]:.3f}, test accuracy "
              f"{100 * history['accuracy'][-1]:.2f} %, "
              f"{history['images_per_second'][-1]:.0f} images/s", flush=True)
    return history


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--backend", default="picograd",
                        help="picograd, inductor or eager")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()
    train(args.epochs, args.backend, args.batch_size, args.lr)


if __name__ == "__main__":
    main()
