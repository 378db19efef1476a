"""Attention and boolean reductions: torch's CPU flash-attention op (forward with its
logsumexp, and backward), `any` / `all`.

The attention is written out (scores, masked, normalised through their logsumexp) because
the forward returns the logsumexp for the backward; the backward is the vector-Jacobian
product of the same forward. Dropout inside attention is random in torch's own stream:
a graph with `dropout_p > 0` runs in torch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

import picograd as pg
from picograd.frontend.tensor import Tensor
from picograd.torch_backend.ops_nn import vjp
from picograd.torch_backend.registry import TorchUnsupported, aten

A = torch.ops.aten
_FLASH = "aten._scaled_dot_product_flash_attention_for_cpu"


def _scores(q: Tensor, k: Tensor, is_causal: bool, attn_mask: Tensor | None,
            scale: float | None) -> Tensor:
    scores = q.matmul(k.transpose(-2, -1)) * (
        scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if is_causal:
        rows, cols = scores.shape[-2], scores.shape[-1]
        keep = Tensor.ones(rows, cols, dtype=pg.bool, device=q.device).tril()
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    if attn_mask is not None:
        scores = (scores.masked_fill(attn_mask.logical_not(), float("-inf"))
                  if attn_mask.dtype == pg.bool else scores + attn_mask)
    return scores


def _attention(q: Tensor, k: Tensor, v: Tensor, is_causal: bool, attn_mask: Tensor | None,
               scale: float | None) -> tuple[Tensor, Tensor]:
    scores = _scores(q, k, is_causal, attn_mask, scale)
    lse = scores.logsumexp(-1)
    return (scores - lse.unsqueeze(-1)).exp().matmul(v), lse


def _no_dropout(dropout_p: float) -> None:
    if dropout_p:
        raise TorchUnsupported(_FLASH, f"dropout_p={dropout_p} (torch's random stream)")


@aten(A._scaled_dot_product_flash_attention_for_cpu.default)
def _flash(q: Tensor, k: Tensor, v: Tensor, dropout_p: float = 0.0, is_causal: bool = False,
           *, attn_mask: Tensor | None = None, scale: float | None = None
           ) -> tuple[Tensor, Tensor]:
    _no_dropout(dropout_p)
    return _attention(q, k, v, is_causal, attn_mask, scale)


@aten(A._scaled_dot_product_flash_attention_for_cpu_backward.default)
def _flash_backward(grad: Tensor, q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor,
                    dropout_p: float, is_causal: bool, *, attn_mask: Tensor | None = None,
                    scale: float | None = None) -> tuple[Any, ...]:
    _no_dropout(dropout_p)

    def forward(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        return _attention(q, k, v, is_causal, attn_mask, scale)[0]
    return tuple(vjp(forward, [q, k, v], grad))


def _bool_dims(x: Tensor, dim: int | Sequence[int] | None) -> Any:
    if dim is None:
        return tuple(range(x.ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


@aten(A.any.dim, A.any.dims, A.any.default)
def _any(x: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    return (x != 0).cast(pg.int32).sum(_bool_dims(x, dim), keepdim) > 0


@aten(A.all.dim, A.all.dims, A.all.default)
def _all(x: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    return (x == 0).cast(pg.int32).sum(_bool_dims(x, dim), keepdim) == 0
