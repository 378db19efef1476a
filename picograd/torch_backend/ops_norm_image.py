"""Normalisation outside functionalization's forms, and image sampling:

    _native_batch_norm_legit (.no_stats, and .default in eval mode), the layer and group
        norm backwards (torch's decomposition, term for term)
    upsample_bilinear2d.vec / upsample_nearest2d.vec (interpolate)
    grid_sampler_2d (+ its backward: the vector-Jacobian product of F.grid_sample)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from picograd.frontend.tensor import Tensor
from picograd.nn import grid_sample, resize
from picograd.torch_backend.ops_nn import vjp
from picograd.torch_backend.registry import (
    TorchUnsupported,
    aten,
)

A = torch.ops.aten
INF = math.inf


# ── normalisation: batch norm without functionalization, the norm backwards ────


def _per_channel(t: Tensor, ndim: int) -> Tensor:
    return t.reshape((1, t.shape[0]) + (1,) * (ndim - 2))


def _normalized(x: Tensor, weight: Tensor | None, bias: Tensor | None, mean: Tensor,
                rstd: Tensor) -> Tensor:
    out = (x - _per_channel(mean, x.ndim)) * _per_channel(rstd, x.ndim)
    if weight is not None:
        out = out * _per_channel(weight, x.ndim)
    if bias is not None:
        out = out + _per_channel(bias, x.ndim)
    return out


@aten(A._native_batch_norm_legit.no_stats)
def _batch_norm_no_stats(x: Tensor, weight: Tensor | None, bias: Tensor | None,
                         training: bool, momentum: float, eps: float
                         ) -> tuple[Tensor, Tensor, Tensor]:
    """Batch norm by the batch's own statistics (no running ones: F.batch_norm with
    None for both, or BatchNorm without track_running_stats)."""
    if not training:  # torch has no statistics to use here
        raise TorchUnsupported("aten._native_batch_norm_legit.no_stats", "training=False")
    dims = (0, *range(2, x.ndim))
    mean = x.mean(dims)
    centred = x - _per_channel(mean, x.ndim)
    rstd = ((centred * centred).mean(dims) + eps).rsqrt()
    return _normalized(x, weight, bias, mean, rstd), mean, rstd


@aten(A._native_batch_norm_legit.default)
def _batch_norm_legit(x: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor, running_var: Tensor, training: bool,
                      momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    if training:  # it updates the running statistics in place: functionalization's
        # _native_batch_norm_legit_functional returns them instead
        raise TorchUnsupported("aten._native_batch_norm_legit",
                               "training=True updates the running statistics in place")
    out = _normalized(x, weight, bias, running_mean, (running_var + eps).rsqrt())
    empty = Tensor.zeros(0, dtype=x.dtype, device=x.device)
    return out, empty, empty


@aten(A.native_layer_norm_backward.default)
def _layer_norm_backward(grad: Tensor, x: Tensor, normalized_shape: Sequence[int],
                         mean: Tensor, rstd: Tensor, weight: Tensor | None,
                         bias: Tensor | None, output_mask: Sequence[bool]) -> tuple[Any, ...]:
    """torch's decomposition of the op, term for term."""
    axis = x.ndim - len(normalized_shape)
    inner, outer = tuple(range(axis, x.ndim)), tuple(range(axis))
    n, m = math.prod(x.shape[axis:]), math.prod(x.shape[:axis])
    if n == 0 or m == 0:
        zeros = [Tensor.zeros(*s, dtype=x.dtype, device=x.device)
                 for s in (x.shape, x.shape[axis:], x.shape[axis:])]
        return tuple(z if on else None for z, on in zip(zeros, output_mask, strict=True))
    x_hat = (x - mean) * rstd
    grad_x_hat = grad * weight if weight is not None else grad
    c2 = (grad_x_hat * x_hat).sum(inner, keepdim=True)
    d_x = (rstd / n) * (grad_x_hat * n - grad_x_hat.sum(inner, keepdim=True) - x_hat * c2)
    d_w = d_b = None
    if output_mask[1] and weight is not None:
        d_w = (grad * x_hat).sum(outer) if outer else grad * x_hat
    if output_mask[2] and bias is not None:
        d_b = grad.sum(outer) if outer else grad
    return d_x if output_mask[0] else None, d_w, d_b


@aten(A.native_group_norm_backward.default)
def _group_norm_backward(grad: Tensor, x: Tensor, mean: Tensor, rstd: Tensor,
                         gamma: Tensor | None, n: int, c: int, hxw: int, group: int,
                         output_mask: Sequence[bool]) -> tuple[Any, ...]:
    """torch's decomposition of the op, term for term."""
    cpg = c // group
    ds = (grad * x).reshape(n, c, hxw).sum(2)
    db = grad.reshape(n, c, hxw).sum(2)
    d_x = d_gamma = d_bias = None
    if output_mask[0]:
        s = 1.0 / (hxw * cpg)
        g = gamma.unsqueeze(0) if gamma is not None else Tensor.ones(
            1, c, dtype=x.dtype, device=x.device)
        ds_val = (ds * g).reshape(n, group, cpg).sum(2)
        db_val = (db * g).reshape(n, group, cpg).sum(2)
        c1 = (rstd.unsqueeze(-1) * g.reshape(1, group, cpg)).unsqueeze(-1)
        c2 = (db_val * mean - ds_val) * rstd * rstd * rstd * s
        c3 = -c2 * mean - db_val * rstd * s
        d_x = (grad.reshape(n, group, cpg, hxw) * c1
               + x.reshape(n, group, cpg, hxw) * c2.reshape(n, group, 1, 1)
               + c3.reshape(n, group, 1, 1)).reshape(x.shape)
    if output_mask[1]:
        d_gamma = ((ds.reshape(n, group, cpg) - db.reshape(n, group, cpg) * mean.unsqueeze(-1))
                   * rstd.unsqueeze(-1)).sum(0).reshape(c)
    if output_mask[2]:
        d_bias = db.sum(0)
    return d_x, d_gamma, d_bias


# ── upsampling by a size or by factors (.vec) ───────────────────────────────────


def _upsample(x: Tensor, output_size: Sequence[int] | None,
              scale_factors: Sequence[float] | None, mode: str,
              align_corners: bool | None) -> Tensor:
    op = f"aten.upsample_{mode}2d.vec"
    if (output_size is None) == (scale_factors is None):
        raise TorchUnsupported(op, "exactly one of output_size and scale_factors is needed")
    if output_size is not None:
        return resize.interpolate(x, tuple(output_size), mode=mode,
                                  align_corners=align_corners)
    assert scale_factors is not None
    return resize.interpolate(x, scale_factor=tuple(scale_factors), mode=mode,
                              align_corners=align_corners)


@aten(A.upsample_bilinear2d.vec)
def _upsample_bilinear2d(x: Tensor, output_size: Sequence[int] | None, align_corners: bool,
                         scale_factors: Sequence[float] | None) -> Tensor:
    return _upsample(x, output_size, scale_factors, "bilinear", align_corners)


@aten(A.upsample_nearest2d.vec)
def _upsample_nearest2d(x: Tensor, output_size: Sequence[int] | None,
                        scale_factors: Sequence[float] | None) -> Tensor:
    return _upsample(x, output_size, scale_factors, "nearest", None)


# ── grid sampling ───────────────────────────────────────────────────────────────

_GRID_MODES = ("bilinear", "nearest", "bicubic")  # torch's GridSamplerInterpolation
_GRID_PADDINGS = ("zeros", "border", "reflection")  # torch's GridSamplerPadding


def _sampler(interpolation_mode: int, padding_mode: int, align_corners: bool) -> Any:
    if interpolation_mode not in (0, 1, 2) or padding_mode not in (0, 1, 2):
        raise TorchUnsupported("aten.grid_sampler_2d", f"interpolation_mode "
                               f"{interpolation_mode}, padding_mode {padding_mode}")

    def sample(x: Tensor, grid: Tensor) -> Tensor:
        return grid_sample.grid_sample(x, grid, _GRID_MODES[interpolation_mode],
                                       _GRID_PADDINGS[padding_mode], bool(align_corners))
    return sample


@aten(A.grid_sampler_2d.default)
def _grid_sampler_2d(x: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                     align_corners: bool) -> Tensor:
    return _sampler(interpolation_mode, padding_mode, align_corners)(x, grid)


@aten(A.grid_sampler_2d_backward.default)
def _grid_sampler_2d_backward(grad: Tensor, x: Tensor, grid: Tensor, interpolation_mode: int,
                              padding_mode: int, align_corners: bool,
                              output_mask: Sequence[bool]) -> tuple[Any, Any]:
    sample = _sampler(interpolation_mode, padding_mode, align_corners)
    grad_x, grad_grid = vjp(sample, [x, grid], grad)
    return grad_x if output_mask[0] else None, grad_grid if output_mask[1] else None
