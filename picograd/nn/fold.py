"""im2col and its adjoint, as torch's F.unfold / F.fold and nn.Unfold / nn.Fold.

    unfold(x, kernel_size, dilation=1, padding=0, stride=1)
        (N, C, H, W) -> (N, C * kh * kw, L): every sliding block, flattened, as a column
    fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1)
        (N, C * kh * kw, L) -> (N, C, H, W): the columns summed back where their blocks lie

Both take an unbatched input too ((C, H, W), (C * kh * kw, L)), as torch. The block
positions are an index built on the host once per shape: column l, kernel offset (i, j)
reads padded pixel (oh * stride + i * dilation, ow * stride + j * dilation). `unfold` is one
gather of the padded image (flattened) at that index; `fold` is one scatter_add of the
columns into a zero padded image, cropped. Each is the other's adjoint, so their gradients
are each other (the gather's backward is a scatter_add and the reverse).

    cols = F.unfold(x, 3, padding=1)                 # (N, C * 9, H * W)
    y = F.fold(cols, (H, W), 3, padding=1)           # each pixel times its block count
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from picograd.frontend.dtype import int32
from picograd.frontend.lazy import shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module

Pair = int | Sequence[int]


def _pair(op: str, name: str, v: Pair, low: int) -> tuple[int, int]:
    pair = (v, v) if isinstance(v, int) else tuple(v)
    if len(pair) != 2 or any(isinstance(p, bool) or not isinstance(p, int) or p < low
                             for p in pair):
        raise shape_error(op, f"{name} must be an int >= {low} or a pair of them, got {v!r}")
    return pair[0], pair[1]


def _blocks(op: str, size: tuple[int, int], kernel: tuple[int, int], dilation: tuple[int, int],
            padding: tuple[int, int], stride: tuple[int, int]
            ) -> tuple[np.ndarray, tuple[int, int], tuple[int, int]]:
    """The flat padded-image position of every (kernel offset, block), (kh*kw, L), the
    padded size and the block grid."""
    padded = (size[0] + 2 * padding[0], size[1] + 2 * padding[1])
    grid = tuple((p - dilation[a] * (kernel[a] - 1) - 1) // stride[a] + 1
                 for a, p in enumerate(padded))
    if grid[0] <= 0 or grid[1] <= 0:
        raise shape_error(op, f"the kernel {kernel} (dilation {dilation}) does not fit the "
                              f"padded input {padded}")
    i = np.arange(kernel[0])[:, None, None, None] * dilation[0]
    j = np.arange(kernel[1])[None, :, None, None] * dilation[1]
    oh = np.arange(grid[0])[None, None, :, None] * stride[0]
    ow = np.arange(grid[1])[None, None, None, :] * stride[1]
    flat = (oh + i) * padded[1] + (ow + j)
    return flat.reshape(kernel[0] * kernel[1], -1).astype(np.int32), padded, (grid[0], grid[1])


def unfold(x: Tensor, kernel_size: Pair, dilation: Pair = 1, padding: Pair = 0,
           stride: Pair = 1) -> Tensor:
    """torch's F.unfold (im2col): (N, C, H, W) -> (N, C * kh * kw, L)."""
    op = "unfold"
    if x.ndim not in (3, 4):
        raise shape_error(op, f"needs a 3-D or 4-D input, got shape {x.shape}")
    batched = x if x.ndim == 4 else x.unsqueeze(0)
    n, c, h, w = batched.shape
    kernel = _pair(op, "kernel_size", kernel_size, 1)
    pad = _pair(op, "padding", padding, 0)
    pos, padded, grid = _blocks(op, (h, w), kernel, _pair(op, "dilation", dilation, 1), pad,
                                _pair(op, "stride", stride, 1))
    image = batched.pad(((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    index = Tensor(pos.reshape(1, 1, -1), dtype=int32, device=x.device)
    k = pos.size
    cols = image.reshape(n, c, padded[0] * padded[1]).gather(2, index.expand(n, c, k))
    out = cols.reshape(n, c * kernel[0] * kernel[1], grid[0] * grid[1])
    return out if x.ndim == 4 else out.squeeze(0)


def fold(x: Tensor, output_size: Pair, kernel_size: Pair, dilation: Pair = 1,
         padding: Pair = 0, stride: Pair = 1) -> Tensor:
    """torch's F.fold (col2im): (N, C * kh * kw, L) -> (N, C, H, W), overlaps summed."""
    op = "fold"
    if x.ndim not in (2, 3):
        raise shape_error(op, f"needs a 2-D or 3-D input, got shape {x.shape}")
    batched = x if x.ndim == 3 else x.unsqueeze(0)
    n, ck, length = batched.shape
    size = _pair(op, "output_size", output_size, 1)
    kernel = _pair(op, "kernel_size", kernel_size, 1)
    pad = _pair(op, "padding", padding, 0)
    if ck % (kernel[0] * kernel[1]):
        raise shape_error(op, f"dim 1 of the input ({ck}) must be divisible by the kernel's "
                              f"{kernel[0] * kernel[1]} elements")
    c = ck // (kernel[0] * kernel[1])
    pos, padded, grid = _blocks(op, size, kernel, _pair(op, "dilation", dilation, 1), pad,
                                _pair(op, "stride", stride, 1))
    if grid[0] * grid[1] != length:
        raise shape_error(op, f"the input has {length} blocks, the sizes give {grid[0]} x "
                              f"{grid[1]} = {grid[0] * grid[1]}")
    index = Tensor(pos.reshape(1, 1, -1), dtype=int32, device=x.device)
    k = pos.size
    zeros = Tensor.zeros(n, c, padded[0] * padded[1], dtype=x.dtype, device=x.device)
    image = zeros.scatter_add(2, index.expand(n, c, k), batched.reshape(n, c, k))
    image = image.reshape(n, c, *padded)[:, :, pad[0]:pad[0] + size[0], pad[1]:pad[1] + size[1]]
    return image if x.ndim == 3 else image.squeeze(0)


class Unfold(Module):
    """nn.Unfold: `F.unfold` with the sizes fixed at construction."""

    def __init__(self, kernel_size: Pair, dilation: Pair = 1, padding: Pair = 0,
                 stride: Pair = 1):
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, x: Tensor) -> Tensor:
        return unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(Module):
    """nn.Fold: `F.fold` with the sizes fixed at construction."""

    def __init__(self, output_size: Pair, kernel_size: Pair, dilation: Pair = 1,
                 padding: Pair = 0, stride: Pair = 1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, x: Tensor) -> Tensor:
        return fold(x, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)
