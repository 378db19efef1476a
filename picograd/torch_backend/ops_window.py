"""Adaptive average pools and the reflection / replication pads, core ATen ops that torch
does not decompose, with the backwards of the adaptive pools and the replication pads
(through picograd's autograd, `ops_nn.vjp`; torch decomposes the reflection pads'
backwards itself)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from picograd.frontend.tensor import Tensor
from picograd.nn import functional as F
from picograd.torch_backend.ops_nn import vjp
from picograd.torch_backend.registry import aten

A = torch.ops.aten


def _adaptive(pool: Callable[[Tensor, Any], Tensor]) -> Callable[..., Tensor]:
    def forward(x: Tensor, output_size: Sequence[int]) -> Tensor:
        return pool(x, tuple(output_size))
    return forward


_ADAPTIVE = {A._adaptive_avg_pool2d.default: F.adaptive_avg_pool2d,
             A._adaptive_avg_pool3d.default: F.adaptive_avg_pool3d,
             A.adaptive_avg_pool1d.default: F.adaptive_avg_pool1d}
for _overload, _pool in _ADAPTIVE.items():
    aten(_overload)(_adaptive(_pool))


def _adaptive_backward(pool: Callable[[Tensor, Any], Tensor], spatial: int
                       ) -> Callable[[Tensor, Tensor], Tensor]:
    def backward(grad: Tensor, x: Tensor) -> Tensor:
        # the gradient's spatial sizes are the forward's output size
        size = tuple(grad.shape[-spatial:])
        return vjp(lambda t: pool(t, size), [x], grad)[0]
    return backward


aten(A._adaptive_avg_pool2d_backward.default)(_adaptive_backward(F.adaptive_avg_pool2d, 2))
aten(A._adaptive_avg_pool3d_backward.default)(_adaptive_backward(F.adaptive_avg_pool3d, 3))


def _pad(mode: str) -> Callable[[Tensor, Sequence[int]], Tensor]:
    def forward(x: Tensor, padding: Sequence[int]) -> Tensor:
        return F.pad(x, tuple(padding), mode=mode)
    return forward


for _overload in (A.reflection_pad1d.default, A.reflection_pad2d.default,
                  A.reflection_pad3d.default):
    aten(_overload)(_pad("reflect"))
for _overload in (A.replication_pad1d.default, A.replication_pad2d.default,
                  A.replication_pad3d.default):
    aten(_overload)(_pad("replicate"))


def _pad_backward(mode: str) -> Callable[[Tensor, Tensor, Sequence[int]], Tensor]:
    def backward(grad: Tensor, x: Tensor, padding: Sequence[int]) -> Tensor:
        return vjp(lambda t: F.pad(t, tuple(padding), mode=mode), [x], grad)[0]
    return backward


for _overload in (A.replication_pad1d_backward.default, A.replication_pad2d_backward.default,
                  A.replication_pad3d_backward.default):
    aten(_overload)(_pad_backward("replicate"))
