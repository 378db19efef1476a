"""Datasets: Fashion-MNIST from the Debian package (skipped when it is not installed), the
digits from scikit-learn, a missing dataset's error, and the batch iterator."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from picograd.data import DatasetNotFoundError, batches, digits, fashion_mnist, write_idx
from picograd.data.datasets import FASHION_MNIST_ROOT
from picograd.errors import PicogradError, ShapeError


@pytest.mark.skipif(not os.path.isdir(FASHION_MNIST_ROOT),
                    reason=f"Fashion-MNIST is not installed ({FASHION_MNIST_ROOT} is missing: "
                           "apt-get install dataset-fashion-mnist, or scripts/install_datasets.sh)")
def test_fashion_mnist_shapes_and_dtypes() -> None:
    x_train, y_train, x_test, y_test = fashion_mnist()
    assert (x_train.shape, x_train.dtype) == ((60000, 28, 28), np.uint8)
    assert (x_test.shape, x_test.dtype) == ((10000, 28, 28), np.uint8)
    assert (y_train.shape, y_train.dtype) == ((60000,), np.int32)
    assert (y_test.shape, y_test.dtype) == ((10000,), np.int32)
    np.testing.assert_array_equal(np.bincount(y_train), [6000] * 10)
    np.testing.assert_array_equal(np.bincount(y_test), [1000] * 10)
    assert x_train.max() == 255


def test_fashion_mnist_reads_raw_files_from_any_root(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    for prefix, n in (("train", 6), ("t10k", 4)):
        write_idx(tmp_path / f"{prefix}-images-idx3-ubyte",
                  rng.integers(0, 256, (n, 28, 28)).astype(np.uint8))
        write_idx(tmp_path / f"{prefix}-labels-idx1-ubyte.gz", np.arange(n, dtype=np.uint8))
    x_train, y_train, x_test, y_test = fashion_mnist(tmp_path)
    assert x_train.shape == (6, 28, 28) and x_test.shape == (4, 28, 28)
    np.testing.assert_array_equal(y_test, [0, 1, 2, 3])
    assert y_train.dtype == np.int32


def test_missing_fashion_mnist_says_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(DatasetNotFoundError, match="dataset-fashion-mnist") as info:
        fashion_mnist(tmp_path)
    assert str(tmp_path) in str(info.value)
    assert isinstance(info.value, PicogradError | FileNotFoundError)


def test_digits() -> None:
    pytest.importorskip("sklearn", reason="digits() reads scikit-learn's bundled data")
    x, y = digits()
    assert (x.shape, x.dtype, y.shape, y.dtype) == ((1797, 64), np.float32, (1797,), np.int32)
    assert x.min() == 0 and x.max() == 1
    assert set(np.unique(y)) == set(range(10))


X = np.arange(20, dtype=np.float32).reshape(10, 2)
Y = np.arange(10, dtype=np.int32)


def test_batches_in_order_keep_the_last_partial_batch() -> None:
    got = list(batches(X, Y, 4, shuffle=False))
    assert [len(yb) for _, yb in got] == [4, 4, 2]
    np.testing.assert_array_equal(np.concatenate([yb for _, yb in got]), Y)
    np.testing.assert_array_equal(got[1][0], X[4:8])


def test_batches_drop_last() -> None:
    assert [len(yb) for _, yb in batches(X, Y, 4, drop_last=True)] == [4, 4]
    assert [len(yb) for _, yb in batches(X, Y, 5, drop_last=True)] == [5, 5]


def test_shuffled_batches_are_a_permutation_fixed_by_the_seed() -> None:
    first = [yb for _, yb in batches(X, Y, 3, seed=1)]
    again = [yb for _, yb in batches(X, Y, 3, seed=1)]
    other = [yb for _, yb in batches(X, Y, 3, seed=2)]
    order = np.concatenate(first)
    assert sorted(order) == list(Y) and list(order) != list(Y)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert list(np.concatenate(other)) != list(order)
    for xb, yb in batches(X, Y, 3, seed=1):  # rows stay paired with their labels
        np.testing.assert_array_equal(xb[:, 0], yb * 2)


@pytest.mark.parametrize(("x", "size", "message"), [
    (X[:9], 4, "x has 9 rows but y has 10"),
    (X, 0, "batch_size must be positive"),
])
def test_batches_errors(x: np.ndarray, size: int, message: str) -> None:
    with pytest.raises(ShapeError, match=message):
        batches(x, Y, size)
