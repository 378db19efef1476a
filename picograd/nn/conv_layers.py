"""Convolution layers in 1, 2 and 3 D, with torch's parameter names, defaults, state_dict
layout (weight, bias) and repr, so torch's state dicts load unchanged:

    Conv1d / Conv2d / Conv3d(in_channels, out_channels, kernel_size, stride=1, padding=0,
                             dilation=1, groups=1, bias=True, padding_mode="zeros")
    ConvTranspose1d / 2d / 3d(in_channels, out_channels, kernel_size, stride=1, padding=0,
                              output_padding=0, groups=1, bias=True, dilation=1)

padding may be 'same' or 'valid'; padding_mode 'zeros', 'reflect', 'replicate' or
'circular' (the input is padded in that mode, then convolved without padding). Weight and
bias are drawn as torch's defaults: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in every weight
dim but the first. Example:

    layer = Conv1d(4, 8, 3, padding="same", padding_mode="circular")
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from picograd.frontend.lazy import shape_error
from picograd.frontend.ops_shape import pad
from picograd.frontend.tensor import Tensor
from picograd.nn import conv_nd
from picograd.nn.layers import uniform
from picograd.nn.module import Module
from picograd.nn.windows import Size, ntuple

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What every convolution layer shares: checked settings, torch's initialisation."""

    _n = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size, stride: Size,
                 padding: Size | str, dilation: Size, groups: int, bias: bool,
                 padding_mode: str, output_padding: Size, device: str):
        super().__init__()
        op, n = type(self).__name__, self._n
        if not isinstance(groups, int) or groups < 1 or in_channels % groups or \
                out_channels % groups:
            raise shape_error(op, f"in_channels {in_channels} and out_channels {out_channels} "
                                  f"must both be divisible by groups={groups}")
        if padding_mode not in _PADDING_MODES:
            raise shape_error(op, f"padding_mode must be one of {_PADDING_MODES}, got "
                                  f"{padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = ntuple(op, "kernel_size", kernel_size, n, 1)
        self.stride = ntuple(op, "stride", stride, n, 1)
        self.dilation = ntuple(op, "dilation", dilation, n, 1)
        self.output_padding = ntuple(op, "output_padding", output_padding, n, 0)
        self.padding_mode = padding_mode
        self.padding: tuple[int, ...] | str
        if isinstance(padding, str):
            conv_nd.resolve_padding(op, padding, self.kernel_size, self.dilation, self.stride)
            self.padding = padding
        else:
            self.padding = ntuple(op, "padding", padding, n, 0)
        if self._transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        fan_in = math.prod(shape[1:])
        bound = 1 / math.sqrt(fan_in) if fan_in else 0.0
        self.weight = uniform(shape, bound, device)
        self.bias = uniform((out_channels,), bound, device) if bias else None

    def extra_repr(self) -> str:
        n = self._n
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * n:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class _Conv(_ConvNd):
    _function: Any

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size, stride: Size = 1,
                 padding: Size | str = 0, dilation: Size = 1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device: str = "CPU"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, 0, device)

    def forward(self, x: Tensor) -> Tensor:
        function = type(self)._function
        if self.padding_mode == "zeros":
            return function(x, self.weight, self.bias, self.stride, self.padding,
                            self.dilation, self.groups)
        low, high = conv_nd.resolve_padding(type(self).__name__, self.padding,
                                            self.kernel_size, self.dilation, self.stride)
        sizes = [v for lo, hi in zip(reversed(low), reversed(high), strict=True)
                 for v in (lo, hi)]
        return function(pad(x, sizes, self.padding_mode), self.weight, self.bias,
                        self.stride, 0, self.dilation, self.groups)


class Conv1d(_Conv):
    """1-D convolution, weight (out_channels, in_channels/groups, k)."""

    _n = 1
    _function = staticmethod(conv_nd.conv1d)


class Conv2d(_Conv):
    """2-D convolution, weight (out_channels, in_channels/groups, kh, kw)."""

    _n = 2
    _function = staticmethod(conv_nd.conv2d)


class Conv3d(_Conv):
    """3-D convolution, weight (out_channels, in_channels/groups, kd, kh, kw)."""

    _n = 3
    _function = staticmethod(conv_nd.conv3d)


class _ConvTranspose(_ConvNd):
    _function: Any
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size, stride: Size = 1,
                 padding: Size = 0, output_padding: Size = 0, groups: int = 1,
                 bias: bool = True, dilation: Size = 1, padding_mode: str = "zeros",
                 device: str = "CPU"):
        if padding_mode != "zeros":
            raise shape_error(type(self).__name__, "only padding_mode 'zeros' is supported "
                                                   "(as torch)")
        if isinstance(padding, str):
            raise shape_error(type(self).__name__, f"padding must be sizes, got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, device)

    def _output_padding(self, x: Tensor, output_size: Sequence[int] | None) -> tuple[int, ...]:
        if output_size is None:
            return self.output_padding
        n = self._n
        want = tuple(output_size)[-n:]
        pads = []
        padding = self.padding
        assert not isinstance(padding, str)
        for i, size in enumerate(x.shape[-n:]):
            least = ((size - 1) * self.stride[i] - 2 * padding[i]
                     + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            if len(want) != n or not least <= want[i] < least + self.stride[i]:
                raise shape_error(type(self).__name__, f"output_size {tuple(output_size)} is "
                                                       f"not reachable from the input "
                                                       f"{x.shape}")
            pads.append(want[i] - least)
        return tuple(pads)

    def forward(self, x: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        if not isinstance(x, Tensor) or x.ndim not in (self._n + 1, self._n + 2):
            shape = x.shape if isinstance(x, Tensor) else type(x).__name__
            raise shape_error(type(self).__name__, f"expected a {self._n + 1}-D or "
                                                   f"{self._n + 2}-D input, got {shape}")
        return type(self)._function(x, self.weight, self.bias, self.stride, self.padding,
                                    self._output_padding(x, output_size), self.groups,
                                    self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution, weight (in_channels, out_channels/groups, k)."""

    _n = 1
    _function = staticmethod(conv_nd.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution, weight (in_channels, out_channels/groups, kh, kw);
    `forward(x, output_size)` picks the output_padding that gives `output_size`."""

    _n = 2
    _function = staticmethod(conv_nd.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution, weight (in_channels, out_channels/groups, kd, kh, kw)."""

    _n = 3
    _function = staticmethod(conv_nd.conv_transpose3d)
