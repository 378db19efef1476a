"""Small datasets as numpy arrays, and a batch iterator.

    x_train, y_train, x_test, y_test = fashion_mnist()   # Debian's dataset-fashion-mnist
    x, y = digits()                                      # scikit-learn's 8x8 digits
    for xb, yb in batches(x, y, 32, seed=epoch): ...

Labels are int32 (what `cross_entropy` takes as class indices); Fashion-MNIST's images stay
uint8 in [0, 255] (scale them as the model wants), the digits are float32 in [0, 1].
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from picograd.data.idx import IDXFormatError, read_idx
from picograd.errors import PicogradError, ShapeError

FASHION_MNIST_ROOT = "/usr/share/datasets/fashion-mnist"
FASHION_MNIST_PACKAGE = "dataset-fashion-mnist"


class DatasetNotFoundError(PicogradError, FileNotFoundError):
    """A dataset's files (or the package that provides it) are not installed; the message
    says what to install."""


def fashion_mnist(root: str | os.PathLike[str] = FASHION_MNIST_ROOT
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fashion-MNIST: (x_train uint8 (60000, 28, 28), y_train int32 (60000,), x_test uint8
    (10000, 28, 28), y_test int32 (10000,)), from the IDX files under `root` (gzipped or not,
    as the Debian package `dataset-fashion-mnist` installs them)."""
    x_train = read_idx(_find(root, "train-images-idx3-ubyte"))
    y_train = read_idx(_find(root, "train-labels-idx1-ubyte"))
    x_test = read_idx(_find(root, "t10k-images-idx3-ubyte"))
    y_test = read_idx(_find(root, "t10k-labels-idx1-ubyte"))
    for name, images, labels in (("train", x_train, y_train), ("t10k", x_test, y_test)):
        if images.ndim != 3 or labels.shape != images.shape[:1]:
            raise IDXFormatError(f"{os.fspath(root)}: the {name} images {images.shape} and "
                                 f"labels {labels.shape} do not match")
    return x_train, y_train.astype(np.int32), x_test, y_test.astype(np.int32)


def _find(root: str | os.PathLike[str], stem: str) -> str:
    for name in (stem + ".gz", stem):
        path = os.path.join(root, name)
        if os.path.isfile(path):
            return path
    raise DatasetNotFoundError(
        f"Fashion-MNIST: no {stem}[.gz] under {os.fspath(root)}; install the Debian package "
        f"{FASHION_MNIST_PACKAGE} (`sudo apt-get install {FASHION_MNIST_PACKAGE}`, or run "
        "scripts/install_datasets.sh), or pass root= the folder holding the IDX files")


def digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8x8 handwritten digits: (x float32 (1797, 64) in [0, 1],
    y int32 (1797,)). Needs scikit-learn (`pip install picograd[examples]`)."""
    try:
        from sklearn.datasets import (  # pyright: ignore[reportMissingTypeStubs]
            load_digits,  # optional: only this loader needs scikit-learn
        )
    except ImportError as e:
        raise DatasetNotFoundError("digits() needs scikit-learn: pip install scikit-learn "
                                   "(or picograd[examples])") from e
    bunch: Any = load_digits()
    x = np.asarray(bunch.data, dtype=np.float32) / np.float32(16)  # pixel values are 0..16
    return x, np.asarray(bunch.target, dtype=np.int32)


def batches(x: np.ndarray, y: np.ndarray, batch_size: int, shuffle: bool = True,
            seed: int = 0, drop_last: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(x, y) batches of `batch_size` rows, in an order drawn from `seed` when `shuffle` (pass
    a different seed each epoch, e.g. the epoch number, for a new order). With `drop_last`,
    a last, smaller batch is left out (every batch then has one shape: one compiled graph)."""
    if len(x) != len(y):
        raise ShapeError(f"batches: x has {len(x)} rows but y has {len(y)}")
    if batch_size < 1:
        raise ShapeError(f"batches: batch_size must be positive, got {batch_size}")
    order = np.random.default_rng(seed).permutation(len(x)) if shuffle else np.arange(len(x))
    end = len(x) - len(x) % batch_size if drop_last else len(x)
    # a generator expression, so that the checks above run at the call, not at the first next()
    return ((x[order[i:i + batch_size]], y[order[i:i + batch_size]])
            for i in range(0, end, batch_size))
