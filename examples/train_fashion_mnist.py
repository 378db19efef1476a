"""Train a small CNN on Fashion-MNIST to >= 90 % test accuracy in 3 epochs.

    python examples/train_fashion_mnist.py [--epochs 3] [--device CPU] [--out runs/fashion]

The dataset comes from the Debian package `dataset-fashion-mnist`
(`scripts/install_datasets.sh` installs it). Every epoch shows a tqdm bar with the running
loss and images/s, then the test accuracy. The run leaves in `--out`:

    checkpoint.safetensors   the model and Adam's state after the last finished epoch; a new
                             run with the same --out resumes from it (`--fresh` ignores it)
    curves.png               training loss per step and test accuracy per epoch

Every training batch has the same shape (`drop_last`), so the training step (forward,
cross-entropy, backward, Adam) is one graph compiled on the first step and reused; evaluation
is a second graph.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F
from picograd.data import batches, fashion_mnist
from picograd.nn.state import load_checkpoint, save_checkpoint

MEAN, STD = 0.2860, 0.3530  # of the training images, scaled to [0, 1]


def make_model(device: str = "CPU") -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, device=device), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, device=device), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 128, device=device), nn.ReLU(),
        nn.Linear(128, 10, device=device))


def prepare(images: np.ndarray) -> np.ndarray:
    """uint8 (N, 28, 28) -> normalised float32 (N, 1, 28, 28)."""
    return ((images.astype(np.float32) / 255 - MEAN) / STD)[:, None]


def evaluate(model: nn.Module, x: np.ndarray, y: np.ndarray, device: str,
             batch_size: int = 1000) -> float:
    model.eval()
    correct = 0
    with pg.no_grad():
        for xb, yb in batches(x, y, batch_size, shuffle=False):
            logits = model(pg.Tensor(xb, device=device)).numpy()
            correct += int((logits.argmax(1) == yb).sum())
    model.train()
    return correct / len(x)


def plot(history: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(history["loss"], linewidth=0.7)
    left.set(title="training loss", xlabel="step", ylabel="cross-entropy")
    epochs = range(1, len(history["accuracy"]) + 1)
    right.plot(epochs, [100 * a for a in history["accuracy"]], marker="o")
    right.set(title="test accuracy", xlabel="epoch", ylabel="%")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def train(epochs: int = 3, device: str = "CPU", batch_size: int = 128, lr: float = 2e-3,
          out: str = "runs/fashion", fresh: bool = False, limit: int | None = None) -> dict:
    """Train (resuming from `out`/checkpoint.safetensors unless `fresh`); returns the history
    (loss per step, test accuracy per epoch, images/s per epoch)."""
    from tqdm import tqdm

    x_train, y_train, x_test, y_test = fashion_mnist()
    if limit is not None:  # a quick run on part of the data (tests)
        x_train, y_train = x_train[:limit], y_train[:limit]
        x_test, y_test = x_test[:limit], y_test[:limit]
    x_train, x_test = prepare(x_train), prepare(x_test)
    os.makedirs(out, exist_ok=True)
    checkpoint = os.path.join(out, "checkpoint.safetensors")
    pg.manual_seed(0)
    model = make_model(device)
    optimizer = pg.optim.Adam(model.parameters(), lr=lr)
    steps = len(x_train) // batch_size
    history: dict = {"loss": [], "accuracy": [], "images_per_second": []}
    start_epoch = 0
    if os.path.exists(checkpoint) and not fresh:
        extra = load_checkpoint(checkpoint, model, optimizer)
        start_epoch = int(extra["epoch"])
        history = json.loads(extra["history"])
        print(f"resumed from {checkpoint} after epoch {start_epoch}")
    for epoch in range(start_epoch, epochs):
        bar = tqdm(batches(x_train, y_train, batch_size, seed=epoch, drop_last=True),
                   total=steps, desc=f"epoch {epoch + 1}/{epochs}", unit="batch")
        begin = time.perf_counter()
        for xb, yb in bar:
            loss = F.cross_entropy(model(pg.Tensor(xb, device=device)),
                                   pg.Tensor(yb, device=device))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            history["loss"].append(loss.item())
            seen = (bar.n + 1) * batch_size
            bar.set_postfix(loss=f"{history['loss'][-1]:.3f}",
                            img_s=f"{seen / (time.perf_counter() - begin):.0f}")
        history["images_per_second"].append(steps * batch_size / (time.perf_counter() - begin))
        history["accuracy"].append(evaluate(model, x_test, y_test, device))
        print(f"epoch {epoch + 1}: test accuracy {100 * history['accuracy'][-1]:.2f} %, "
              f"{history['images_per_second'][-1]:.0f} images/s")
        save_checkpoint(checkpoint, model, optimizer, epoch=epoch + 1,
                        history=json.dumps(history))
        plot(history, os.path.join(out, "curves.png"))
    return history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--device", default="CPU")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--out", default="runs/fashion")
    parser.add_argument("--fresh", action="store_true", help="ignore an existing checkpoint")
    args = parser.parse_args()
    history = train(args.epochs, args.device, args.batch_size, args.lr, args.out, args.fresh)
    if history["accuracy"]:
        print(f"final test accuracy {100 * history['accuracy'][-1]:.2f} % "
              f"(checkpoint and curves.png in {args.out})")


if __name__ == "__main__":
    main()
