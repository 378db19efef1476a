"""Sliding windows, as torch names them.

    unfold(dimension, size, step)   every window of `size` elements along `dimension`, taken
                                    every `step`: that dim becomes the window count and a
                                    new last dim of `size` holds each window

One gather by a host-built index (window w, element k reads position w * step + k), so the
gradient is one scatter_add that adds overlapping windows back up (the gather's backward).
`picograd.nn.functional.unfold` / `fold` (im2col and its adjoint) are built the same way in
picograd/nn/fold.py.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from picograd.frontend.dtype import int32
from picograd.frontend.lazy import LazyOp, shape_error
from picograd.frontend.ops_draw import DrawOps


class WindowOps(DrawOps):
    __slots__ = ()

    def unfold(self, dimension: int, size: int, step: int) -> Self:
        """torch's Tensor.unfold: `x.unfold(0, 3, 2)` of shape (7,) is (3, 3), the windows
        x[0:3], x[2:5], x[4:7]."""
        op = "unfold"
        d = self._sort_dim(op, dimension)
        n = self.shape[d] if self.ndim else 1
        for name, v, low in (("size", size, 0), ("step", step, 1)):
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise shape_error(op, f"{name} must be an int >= {low}, got {v!r}")
        if size > n:
            raise shape_error(op, f"size {size} is larger than dim {d} of size {n}")
        x: Any = self.reshape(1) if self.ndim == 0 else self
        count = (n - size) // step + 1
        at = np.arange(count)[:, None] * step + np.arange(size)[None, :]  # (count, size)
        index = type(self)._from_node(LazyOp.leaf(at.reshape(-1).astype(np.int32), int32,
                                                  self.device))
        picked = x._take(d, index, negative=False, op=op)  # dim d: count * size
        shape = (*x.shape[:d], count, size, *x.shape[d + 1:])
        out = picked.reshape(shape).movedim(d + 1, -1)
        return out.reshape((size,)) if self.ndim == 0 else out
