"""onnxruntime's contrib ops (domain com.microsoft) that transformer exports emit: the GELU
family, the fused skip / simplified (RMS) layer norms, BiasAdd and the fused Attention,
each written out in Tensor ops. SimplifiedLayerNormalization is onnxruntime's op of the
*default* domain (onnx itself has no schema for it, so onnx's checker rejects a model that
uses it before the importer sees it)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx

from picograd.frontend import where
from picograd.frontend.tensor import Tensor
from picograd.onnx.registry import MICROSOFT, NodeContext, Value, op


def _gelu_erf(t: Tensor) -> Tensor:
    return t.gelu()


@op("Gelu", domain=MICROSOFT)
def _gelu(ctx: NodeContext, x: Value) -> Tensor:
    return _gelu_erf(ctx.t(x))


@op("BiasGelu", domain=MICROSOFT)
def _bias_gelu(ctx: NodeContext, x: Value, bias: Value) -> Tensor:
    return _gelu_erf(ctx.t(x) + ctx.t(bias))


@op("FastGelu", domain=MICROSOFT)
def _fast_gelu(ctx: NodeContext, x: Value, bias: Value | None = None) -> Tensor:
    """The tanh approximation of GELU, of x + bias when a bias is given."""
    t = ctx.t(x) if bias is None else ctx.t(x) + ctx.t(bias)
    return t.gelu(approximate="tanh")


@op("QuickGelu", attrs=("alpha",), domain=MICROSOFT)
def _quick_gelu(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    return t * (t * float(ctx.attr("alpha", 1.702))).sigmoid()


@op("BiasAdd", domain=MICROSOFT)
def _bias_add(ctx: NodeContext, x: Value, bias: Value, skip: Value) -> Tensor:
    return ctx.t(x) + ctx.t(bias) + ctx.t(skip)


# ── layer norms ─────────────────────────────────────────────────────────────

def _normalize(work: Tensor, dims: tuple[int, ...], epsilon: float, simplified: bool
               ) -> tuple[Tensor, Tensor, Tensor]:
    """(normalized, mean, 1/std) over `dims` (kept); simplified: RMS, no centring (the
    mean is then unused, and being lazy, never computed)."""
    mean = work.mean(dims, keepdim=True)
    centred = work if simplified else work - mean
    inv_std = ((centred * centred).mean(dims, keepdim=True) + epsilon).sqrt().reciprocal()
    return centred * inv_std, mean, inv_std


def _only_outputs(*allowed: int) -> Any:
    """A load-time check: the node's outputs past the first are only those `allowed`."""
    def check(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
        extra = [i for i, name in enumerate(node.output) if name and i and i not in allowed]
        return f"output(s) {extra} of {node.op_type} are not supported" if extra else None
    return check


@op("SimplifiedLayerNormalization", attrs=("axis", "epsilon", "stash_type"),
    check=_only_outputs(1))
def _simplified_layer_norm(ctx: NodeContext, x: Value, scale: Value
                           ) -> tuple[Tensor, Tensor]:
    """RMS normalization over the dims from `axis`: (Y, inv_std_var)."""
    t = ctx.t(x)
    axis = ctx.attr("axis", -1)
    axis = axis + t.ndim if axis < 0 else axis
    work = t.cast("float32") if ctx.attr("stash_type", 1) == 1 else t
    y, _, inv_std = _normalize(work, tuple(range(axis, t.ndim)), ctx.attr("epsilon", 1e-5),
                               True)
    return y.cast(t.dtype) * ctx.t(scale), inv_std


def _skip_norm(ctx: NodeContext, x: Value, skip: Value, gamma: Value, beta: Value | None,
               bias: Value | None, simplified: bool) -> tuple[Tensor, ...]:
    t = ctx.t(x)
    total = t + ctx.t(skip)
    if bias is not None:
        total = total + ctx.t(bias)
    work = total if t.dtype.name == "float64" else total.cast("float32")
    y, mean, inv_std = _normalize(work, (total.ndim - 1,), ctx.attr("epsilon", 1e-12),
                                  simplified)
    out = y.cast(t.dtype) * ctx.t(gamma)
    if beta is not None:
        out = out + ctx.t(beta)
    return out, mean, inv_std, total


@op("SkipLayerNormalization", attrs=("epsilon",), domain=MICROSOFT,
    check=_only_outputs(3))
def _skip_layer_norm(ctx: NodeContext, x: Value, skip: Value, gamma: Value,
                     beta: Value | None = None, bias: Value | None = None
                     ) -> tuple[Tensor, ...]:
    """LayerNorm(x + skip + bias) * gamma + beta over the last dim; outputs (Y, mean,
    inv_std_var, x + skip + bias), the middle two rejected at load (onnxruntime leaves
    their contents to the kernel)."""
    return _skip_norm(ctx, x, skip, gamma, beta, bias, False)


@op("SkipSimplifiedLayerNormalization", attrs=("epsilon",), domain=MICROSOFT,
    check=_only_outputs(3))
def _skip_simplified_layer_norm(ctx: NodeContext, x: Value, skip: Value, gamma: Value,
                                bias: Value | None = None) -> tuple[Tensor, ...]:
    """RMSNorm(x + skip + bias) * gamma over the last dim; outputs as SkipLayerNorm's."""
    return _skip_norm(ctx, x, skip, gamma, None, bias, True)


# ── fused attention ─────────────────────────────────────────────────────────

_ATTENTION_ATTRS = ("num_heads", "qkv_hidden_sizes", "unidirectional", "mask_filter_value",
                    "scale", "do_rotary", "past_present_share_buffer")


def _check_attention(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    if attrs.get("do_rotary", 0):
        return "do_rotary=1 is not supported"
    if attrs.get("past_present_share_buffer", 0):
        return "past_present_share_buffer=1 is not supported"
    inputs = list(node.input)
    if any(inputs[4:]):
        return "past, attention_bias and past_sequence_length inputs are not supported"
    if len(node.output) > 1 and node.output[1]:
        return "the present output is not supported"
    return None


def _key_masked(ctx: NodeContext, mask: Value, batch: int, seq: int, total: int) -> Tensor:
    """Where a key is masked out, (batch, 1, seq or 1, total) bool, from mask_index: 1-D
    (batch,) key lengths (right padding), 2-D (batch, total) 1 keep / 0 mask, or 3-D
    (batch, seq, total)."""
    m = ctx.t(mask)
    if m.ndim == 1 and m.shape[0] == batch:
        positions = ctx.t(np.arange(total, dtype=np.int64).reshape(1, total))
        return (positions >= m.cast("int64").reshape(batch, 1)).reshape(batch, 1, 1, total)
    if m.ndim == 2 and tuple(m.shape) == (batch, total):
        return (m == 0).reshape(batch, 1, 1, total)
    if m.ndim == 3 and tuple(m.shape) == (batch, seq, total):
        return (m == 0).reshape(batch, 1, seq, total)
    raise ctx.unsupported(f"mask_index of shape {tuple(m.shape)} (supported: (batch,) key "
                          "lengths, (batch, total) and (batch, seq, total) masks)")


@op("Attention", attrs=_ATTENTION_ATTRS, domain=MICROSOFT, check=_check_attention)
def _attention(ctx: NodeContext, x: Value, weights: Value, bias: Value | None = None,
               mask_index: Value | None = None, *rest: Value | None) -> Tensor:
    """Multi-head self-attention with the Q, K, V projections fused into one weight
    (hidden, q + k + v); a masked score is set to mask_filter_value (onnxruntime sets it,
    it does not add it), unidirectional masks the future."""
    t = ctx.t(x)
    batch, seq, _ = t.shape
    heads = int(ctx.attr("num_heads"))
    w = ctx.t(weights)
    sizes = list(ctx.attr("qkv_hidden_sizes", [])) or [w.shape[1] // 3] * 3
    proj = t @ w
    if bias is not None:
        proj = proj + ctx.t(bias)
    q_size, k_size, v_size = sizes
    q = proj[:, :, :q_size]
    k = proj[:, :, q_size:q_size + k_size]
    v = proj[:, :, q_size + k_size:]

    def split(part: Tensor, size: int) -> Tensor:  # (batch, heads, seq, size / heads)
        return part.reshape(batch, seq, heads, size // heads).permute(0, 2, 1, 3)

    qh, kh, vh = split(q, q_size), split(k, k_size), split(v, v_size)
    scale = ctx.attr("scale")
    scale = 1.0 / math.sqrt(q_size // heads) if scale is None else float(scale)
    scores = (qh @ kh.transpose(-1, -2)) * scale  # (batch, heads, seq, seq)
    masked: Tensor | None = None
    if mask_index is not None:
        masked = _key_masked(ctx, mask_index, batch, seq, seq)
    if ctx.attr("unidirectional", 0):
        future = ctx.t(np.triu(np.ones((seq, seq), dtype=bool), 1))
        masked = future if masked is None else masked | future
    if masked is not None:
        fill = ctx.t(np.asarray(float(ctx.attr("mask_filter_value", -10000.0)),
                                dtype=np.dtype(scores.dtype.np)))
        scores = where(masked, fill, scores)
    out = scores.softmax(-1) @ vh  # (batch, heads, seq, v / heads)
    return out.permute(0, 2, 1, 3).reshape(batch, seq, v_size)
