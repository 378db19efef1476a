"""More of torch's layers: Bilinear, ChannelShuffle and the fixed-mode upsampling layers,
with their functional forms (torch's semantics and parameter names):

    bilinear(input1, input2, weight, bias=None)
        y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o], for
        inputs (*, in1) and (*, in2) of the same batch shape (or unbatched), weight of shape
        (out, in1, in2): one matmul with weight laid out (in1, out * in2), then a product
        with input2 summed over j
    Bilinear(in1_features, in2_features, out_features, bias=True)
        weight and bias drawn from U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as torch
    channel_shuffle(input, groups) / ChannelShuffle(groups)
        (N, g * k, *) -> the channels regrouped as (k, g) (a reshape and a transpose)
    UpsamplingNearest2d(size, scale_factor), UpsamplingBilinear2d(size, scale_factor)
        Upsample with mode 'nearest', and 'bilinear' with align_corners=True
    upsample(input, size, scale_factor, mode, align_corners), upsample_nearest,
    upsample_bilinear      torch's deprecated names for interpolate (they warn as torch's)

    m = Bilinear(4, 5, 7)
    m(pg.randn(3, 4), pg.randn(3, 5)).shape          # (3, 7)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

from picograd.frontend.lazy import argument_type_error, dim_error, shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn.layers import uniform
from picograd.nn.module import Module
from picograd.nn.resize import Upsample, interpolate

SizeArg = int | Sequence[int] | None
ScaleArg = float | Sequence[float] | None


# ── bilinear ─────────────────────────────────────────────────────────────────


def _check_bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None
                    ) -> None:
    op = "bilinear"
    for name, t in (("input1", input1), ("input2", input2), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise argument_type_error(op, f"{name} must be a Tensor, got {type(t).__name__}")
    if input1.ndim == 0 or input2.ndim == 0:
        raise dim_error(op, f"inputs need at least 1 dim, got shapes {input1.shape} and "
                            f"{input2.shape}")
    if input1.ndim != input2.ndim:
        raise shape_error(op, f"input dimensions do not match: got {input1.ndim} and "
                              f"{input2.ndim}")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise shape_error(op, f"input batch dimensions do not match: got {input1.shape} and "
                              f"{input2.shape}")
    if weight.ndim != 3:
        raise shape_error(op, f"weight must be (out, in1, in2), got shape {weight.shape}")
    if input1.shape[-1] != weight.shape[1]:
        raise shape_error(op, f"input1 size does not match weight size: got "
                              f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise shape_error(op, f"input2 size does not match weight size: got "
                              f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and bias.shape != weight.shape[:1]:
        raise shape_error(op, f"bias size does not match weight size: got shape {bias.shape} "
                              f"but expected ({weight.shape[0]},)")


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """x1^T A_o x2 + b_o for every output o: (*, in1) and (*, in2) give (*, out)."""
    _check_bilinear(input1, input2, weight, bias)
    out, in1, in2 = weight.shape
    table = weight.permute(1, 0, 2).reshape(in1, out * in2)
    mixed = (input1 @ table).reshape(*input1.shape[:-1], out, in2)
    y = (mixed * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias


class Bilinear(Module):
    """y = x1^T weight x2 + bias, weight of shape (out_features, in1_features,
    in2_features)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: str = "CPU"):
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        bound = 1 / math.sqrt(in1_features) if in1_features else 0.0
        self.weight = uniform((out_features, in1_features, in2_features), bound, device)
        self.bias = uniform((out_features,), bound, device) if bias else None

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


# ── channel shuffle ──────────────────────────────────────────────────────────


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with C = groups * k: channel g * k + i moves to i * groups + g (the
    channels read as a (groups, k) matrix, transposed). Any dtype."""
    op = "channel_shuffle"
    if not isinstance(input, Tensor):
        raise argument_type_error(op, f"input must be a Tensor, got {type(input).__name__}")
    if input.ndim <= 2:
        raise shape_error(op, f"expects input with > 2 dims, but got input with sizes "
                              f"{list(input.shape)}")
    if not isinstance(groups, int) or groups <= 0:
        raise shape_error(op, f"Number of groups to divide channels in must be positive. "
                              f"Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise shape_error(op, f"Number of channels must be divisible by groups. Got {c} "
                              f"channels and {groups} groups.")
    split = input.reshape(n, groups, c // groups, *rest)
    return split.transpose(1, 2).reshape(input.shape)


class ChannelShuffle(Module):
    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


# ── upsampling ───────────────────────────────────────────────────────────────


class UpsamplingNearest2d(Upsample):
    """Upsample with mode='nearest'."""

    def __init__(self, size: SizeArg = None, scale_factor: ScaleArg = None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample with mode='bilinear' and align_corners=True."""

    def __init__(self, size: SizeArg = None, scale_factor: ScaleArg = None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


def _deprecated(name: str) -> None:
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)


def upsample(input: Tensor, size: SizeArg = None, scale_factor: ScaleArg = None,
             mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """torch's deprecated name of `interpolate` (it warns, as torch's)."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: SizeArg = None, scale_factor: ScaleArg = None
                     ) -> Tensor:
    """interpolate(input, size, scale_factor, mode='nearest'), with torch's warning."""
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: SizeArg = None, scale_factor: ScaleArg = None
                      ) -> Tensor:
    """interpolate(input, size, scale_factor, mode='bilinear', align_corners=True), with
    torch's warning."""
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
