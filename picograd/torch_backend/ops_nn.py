"""Layer ATen ops: convolution, normalisation, pooling, embedding, and the backward ops
core ATen keeps whole (convolution_backward, the pooling backwards).

A backward op is the vector-Jacobian product of picograd's own forward op (`vjp`), except
max pooling's, which scatters the gradient to the indices torch recorded, so that ties
route exactly as in torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

import picograd as pg
from picograd.frontend import autograd
from picograd.frontend.tensor import Tensor
from picograd.nn import conv_nd, pool
from picograd.nn.norm import embedding
from picograd.torch_backend.registry import TorchUnsupported, aten

A = torch.ops.aten


def vjp(fn: Callable[..., Tensor], inputs: Sequence[Tensor], grad: Tensor) -> list[Any]:
    """The gradients of `fn(*inputs)` (a picograd op) towards each input, for `grad`."""
    leaves = [x.detach().requires_grad_() for x in inputs]
    with pg.enable_grad():
        out = fn(*leaves)
    out.backward(grad)
    # not a step of a picograd optimiser: nothing is to realize this root later
    if autograd.pending_roots and autograd.pending_roots[-1] is out:
        autograd.pending_roots.pop()
    return [leaf.grad for leaf in leaves]


def _conv_fn(transposed: bool, ndim: int, op: str) -> Callable[..., Tensor]:
    if ndim not in (1, 2, 3):
        raise TorchUnsupported(op, f"a {ndim}-d convolution")
    prefix = "conv_transpose" if transposed else "conv"
    return getattr(conv_nd, f"{prefix}{ndim}d")


def _conv(x: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int],
          padding: Sequence[int], dilation: Sequence[int], transposed: bool,
          output_padding: Sequence[int], groups: int) -> Tensor:
    fn = _conv_fn(transposed, weight.ndim - 2, "aten.convolution")
    if transposed:
        return fn(x, weight, bias, tuple(stride), tuple(padding), tuple(output_padding),
                  groups, tuple(dilation))
    return fn(x, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


@aten(A.convolution.default)
def _convolution(*args: Any) -> Tensor:
    return _conv(*args)


@aten(A.convolution_backward.default)
def _convolution_backward(grad: Tensor, x: Tensor, weight: Tensor, bias_sizes: Any,
                          stride: Sequence[int], padding: Sequence[int],
                          dilation: Sequence[int], transposed: bool,
                          output_padding: Sequence[int], groups: int,
                          output_mask: Sequence[bool]) -> tuple[Any, ...]:
    def forward(x: Tensor, weight: Tensor) -> Tensor:
        return _conv(x, weight, None, stride, padding, dilation, transposed, output_padding,
                     groups)

    grad_x, grad_w = vjp(forward, [x, weight], grad)
    grad_b = grad.sum(tuple(d for d in range(grad.ndim) if d != 1)) if output_mask[2] else None
    return (grad_x if output_mask[0] else None, grad_w if output_mask[1] else None, grad_b)


@aten(A.native_layer_norm.default)
def _native_layer_norm(x: Tensor, normalized_shape: Sequence[int], weight: Tensor | None,
                       bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    # written out (not nn.layer_norm) because the backward graph reads mean and rstd
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(dims, keepdim=True)
    centred = x - mean
    rstd = ((centred * centred).mean(dims, keepdim=True) + eps).rsqrt()
    out = centred * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def _channel(t: Tensor, ndim: int) -> Tensor:
    """A per-channel vector shaped to broadcast over (N, C, ...)."""
    return t.reshape((1, t.shape[0]) + (1,) * (ndim - 2))


@aten(A._native_batch_norm_legit_no_training.default)
def _batch_norm_eval(x: Tensor, weight: Tensor | None, bias: Tensor | None,
                     running_mean: Tensor, running_var: Tensor, momentum: float,
                     eps: float) -> tuple[Tensor, Tensor, Tensor]:
    out = (x - _channel(running_mean, x.ndim)) * _channel((running_var + eps).rsqrt(), x.ndim)
    if weight is not None:
        out = out * _channel(weight, x.ndim)
    if bias is not None:
        out = out + _channel(bias, x.ndim)
    empty = Tensor.zeros(0, dtype=x.dtype, device=x.device)
    return out, empty, empty


@aten(A._native_batch_norm_legit_functional.default)
def _batch_norm_train(x: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor, running_var: Tensor, training: bool,
                      momentum: float, eps: float) -> tuple[Tensor, ...]:
    """Training-mode batch norm with the running statistics' new values as results
    (AOTAutograd writes them back into the module's buffers); the batch's mean and rstd
    are results too, for the backward graph."""
    if not training:
        raise TorchUnsupported("aten._native_batch_norm_legit_functional", "training=False")
    dims = (0, *range(2, x.ndim))
    mean = x.mean(dims)
    centred = x - _channel(mean, x.ndim)
    var = (centred * centred).mean(dims)
    rstd = (var + eps).rsqrt()
    out = centred * _channel(rstd, x.ndim)
    if weight is not None:
        out = out * _channel(weight, x.ndim)
    if bias is not None:
        out = out + _channel(bias, x.ndim)
    n = x.numel() // x.shape[1]
    unbiased = var * (n / (n - 1)) if n > 1 else var  # torch's running var is unbiased
    new_mean = running_mean * (1 - momentum) + mean * momentum
    new_var = running_var * (1 - momentum) + unbiased * momentum
    return out, mean, rstd, new_mean, new_var


@aten(A.native_group_norm.default)
def _native_group_norm(x: Tensor, weight: Tensor | None, bias: Tensor | None, n: int, c: int,
                       hxw: int, group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """Group norm with each group's mean and rstd, (N, group), as the backward reads them."""
    grouped = x.reshape(n, group, -1)
    mean = grouped.mean(2, keepdim=True)
    centred = grouped - mean
    rstd = ((centred * centred).mean(2, keepdim=True) + eps).rsqrt()
    out = (centred * rstd).reshape(x.shape)
    if weight is not None:
        out = out * _channel(weight, x.ndim)
    if bias is not None:
        out = out + _channel(bias, x.ndim)
    return out, mean.reshape(n, group), rstd.reshape(n, group)


def _stride(stride: Sequence[int], kernel_size: Sequence[int]) -> tuple[int, ...]:
    return tuple(stride) if len(stride) else tuple(kernel_size)


def _max_pool(max_pool: Callable[..., Any]) -> Callable[..., tuple[Tensor, Tensor]]:
    def forward(x: Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (),
                padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,),
                ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
        values, indices = max_pool(x, tuple(kernel_size), _stride(stride, kernel_size),
                                   tuple(padding), tuple(dilation), ceil_mode,
                                   return_indices=True)
        return values, indices.cast(pg.int64)
    return forward


aten(A.max_pool2d_with_indices.default)(_max_pool(pool.max_pool2d))
aten(A.max_pool3d_with_indices.default)(_max_pool(pool.max_pool3d))


def _max_pool_backward(spatial: int) -> Callable[..., Tensor]:
    """The backward of a max pool over `spatial` dims: the gradient scattered to the
    indices the forward recorded (flat over each plane's spatial positions, as torch's)."""
    def backward(grad: Tensor, x: Tensor, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, ceil_mode: bool, indices: Tensor) -> Tensor:
        planes = x.shape[0] * x.shape[1] if x.ndim == spatial + 2 else x.shape[0]
        positions = 1
        for n in x.shape[-spatial:]:
            positions *= n
        flat = Tensor.zeros(planes, positions, dtype=grad.dtype, device=x.device)
        flat = flat.scatter_add(1, indices.reshape(planes, -1), grad.reshape(planes, -1))
        return flat.reshape(x.shape)
    return backward


aten(A.max_pool2d_with_indices_backward.default)(_max_pool_backward(2))
aten(A.max_pool3d_with_indices_backward.default)(_max_pool_backward(3))


def _avg_pool_fn(avg_pool: Callable[..., Tensor], kernel_size: Sequence[int],
                 stride: Sequence[int], padding: Sequence[int], ceil_mode: bool,
                 count_include_pad: bool,
                 divisor_override: int | None) -> Callable[[Tensor], Tensor]:
    def forward(x: Tensor) -> Tensor:
        return avg_pool(x, tuple(kernel_size), _stride(stride, kernel_size), tuple(padding),
                        ceil_mode, count_include_pad, divisor_override)
    return forward


def _avg_pool(avg_pool: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def forward(x: Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (),
                padding: Sequence[int] = (0,), ceil_mode: bool = False,
                count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
        return _avg_pool_fn(avg_pool, kernel_size, stride, padding, ceil_mode,
                            count_include_pad, divisor_override)(x)
    return forward


def _avg_pool_backward(avg_pool: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def backward(grad: Tensor, x: Tensor, kernel_size: Sequence[int], stride: Sequence[int],
                 padding: Sequence[int], ceil_mode: bool, count_include_pad: bool,
                 divisor_override: int | None) -> Tensor:
        forward = _avg_pool_fn(avg_pool, kernel_size, stride, padding, ceil_mode,
                               count_include_pad, divisor_override)
        return vjp(forward, [x], grad)[0]
    return backward


@aten(A.avg_pool1d.default)
def _avg_pool1d(x: Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (),
                padding: Sequence[int] = (0,), ceil_mode: bool = False,
                count_include_pad: bool = True) -> Tensor:
    return pool.avg_pool1d(x, tuple(kernel_size), _stride(stride, kernel_size),
                           tuple(padding), ceil_mode, count_include_pad)


for _forward, _backward, _pool in (
        (A.avg_pool2d.default, A.avg_pool2d_backward.default, pool.avg_pool2d),
        (A.avg_pool3d.default, A.avg_pool3d_backward.default, pool.avg_pool3d)):
    aten(_forward)(_avg_pool(_pool))
    aten(_backward)(_avg_pool_backward(_pool))


@aten(A.embedding.default)
def _embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
               scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    # padding_idx and scale_grad_by_freq change only the backward, which arrives as its
    # own op (embedding_dense_backward, or its decomposition)
    return embedding(indices, weight)


@aten(A.embedding_dense_backward.default)
def _embedding_dense_backward(grad: Tensor, indices: Tensor, num_weights: int,
                              padding_idx: int, scale_grad_by_freq: bool) -> Tensor:
    """Each looked-up row's gradient summed into its row of the table; the padding row's
    stays zero; with `scale_grad_by_freq` each row's sum is divided by how often its index
    occurs (as torch's)."""
    dim = grad.shape[-1]
    flat, rows = indices.reshape(-1), grad.reshape(-1, dim)
    if padding_idx >= 0:  # a select, not a 0/1 product: a NaN there stays out, as torch's
        rows = (flat != padding_idx).unsqueeze(1).where(rows, 0.0)
    table = Tensor.zeros(num_weights, dim, dtype=grad.dtype, device=grad.device)
    table = table.index_add(0, flat, rows)
    if scale_grad_by_freq:
        ones = Tensor.ones(flat.shape[0], dtype=grad.dtype, device=grad.device)
        counts = Tensor.zeros(num_weights, dtype=grad.dtype, device=grad.device)
        counts = counts.index_add(0, flat, ones)
        table = table / counts.maximum(1.0).unsqueeze(1)
    return table
