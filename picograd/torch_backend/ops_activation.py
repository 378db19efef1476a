"""Activation ATen ops core ATen keeps whole (GELU, LeakyReLU, ELU, Hardtanh) and the
backwards of some."""

from __future__ import annotations

from typing import Any

import torch

import picograd as pg
from picograd.frontend.tensor import Tensor
from picograd.nn import functional as F
from picograd.torch_backend.ops_nn import vjp
from picograd.torch_backend.registry import aten

A = torch.ops.aten


@aten(A.gelu.default)
def _gelu(x: Tensor, *, approximate: str = "none") -> Tensor:
    return F.gelu(x, approximate=approximate)


@aten(A.gelu_backward.default)
def _gelu_backward(grad: Tensor, x: Tensor, *, approximate: str = "none") -> Tensor:
    return vjp(lambda t: F.gelu(t, approximate=approximate), [x], grad)[0]


@aten(A.leaky_relu.default)
def _leaky_relu(x: Tensor, negative_slope: Any = 0.01) -> Tensor:
    return F.leaky_relu(x, negative_slope)


@aten(A.leaky_relu_backward.default)
def _leaky_relu_backward(grad: Tensor, x: Tensor, negative_slope: Any,
                         self_is_result: bool) -> Tensor:
    # as torch's kernel: the sign of x, whether x is the input or the result
    return pg.where(x > 0, grad, grad * negative_slope)


@aten(A.elu.default)
def _elu(x: Tensor, alpha: Any = 1, scale: Any = 1, input_scale: Any = 1) -> Tensor:
    # aten's form (SELU and CELU decompose to it): scale * x above 0, else
    # scale * alpha * expm1(x * input_scale)
    negative = (x * input_scale).expm1() * (alpha * scale)
    return pg.where(x > 0, x * scale if scale != 1 else x, negative)


@aten(A.hardtanh.default)
def _hardtanh(x: Tensor, min_val: Any = -1, max_val: Any = 1) -> Tensor:
    return x.hardtanh(min_val, max_val)
