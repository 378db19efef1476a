"""Datasets as numpy arrays, IDX files and a batch iterator.

    from picograd.data import batches, digits, fashion_mnist
    x, y = digits()                                   # (1797, 64) float32, (1797,) int32
    for xb, yb in batches(x, y, 32, seed=epoch, drop_last=True):
        loss = F.cross_entropy(model(pg.Tensor(xb)), pg.Tensor(yb))
"""

from picograd.data.datasets import DatasetNotFoundError, batches, digits, fashion_mnist
from picograd.data.idx import IDXFormatError, read_idx, write_idx

__all__ = ["DatasetNotFoundError", "IDXFormatError", "batches", "digits", "fashion_mnist",
           "read_idx", "write_idx"]
