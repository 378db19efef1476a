"""onnxruntime's contrib ops (domain com.microsoft) that transformer exports emit: the GELU
family, BiasAdd, the fused skip layer norms, FusedMatMul, the fused Attention and
MultiHeadAttention, GroupQueryAttention (a cache, no rotary, no quantization),
RotaryEmbedding and EmbedLayerNormalization, each written out in Tensor ops. Inputs,
attributes and outputs a translation cannot follow exactly are refused at load (`check=`),
or, where only the shapes (or GroupQueryAttention's seqlens_k) tell, by an
OnnxUnsupportedError naming the node when it runs.

onnxruntime computes these ops on float16 / bfloat16 data in float32 (its CPU kernels cast,
its CUDA kernels accumulate in float), so the translations do too and round once at the
end. onnxruntime's SimplifiedLayerNormalization and its opset-1 LayerNormalization are
registered in the *default* domain, where onnx has no such schema (or only from opset 17):
onnx's checker rejects a model using them before the importer sees it, so they have no
translation here; onnxruntime registers no com.microsoft LayerNormalization.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx

from picograd.frontend import where
from picograd.frontend.ops_shape import cat, stack
from picograd.frontend.tensor import Tensor
from picograd.onnx.registry import MICROSOFT, NodeContext, Value, op

_LOW_PRECISION = ("float16", "bfloat16")


def _in_float32(t: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    """fn(t), computed in float32 when t is float16 / bfloat16 and rounded back once."""
    if t.dtype.name in _LOW_PRECISION:
        return fn(t.cast("float32")).cast(t.dtype)
    return fn(t)


def _work(ctx: NodeContext, v: Value) -> Tensor:
    """`v` as a device Tensor in the precision the op computes in (float32 for halves)."""
    t = ctx.t(v)
    return t.cast("float32") if t.dtype.name in _LOW_PRECISION else t


# ── the GELU family and BiasAdd ─────────────────────────────────────────────

@op("Gelu", domain=MICROSOFT)
def _gelu(ctx: NodeContext, x: Value) -> Tensor:
    """GELU with the exact (erf) form."""
    return _in_float32(ctx.t(x), lambda t: t.gelu())


@op("BiasGelu", domain=MICROSOFT)
def _bias_gelu(ctx: NodeContext, x: Value, bias: Value) -> Tensor:
    """GELU (erf) of x + bias (over the last dim), both in float32 for halves."""
    t = ctx.t(x)
    return (_work(ctx, x) + _work(ctx, bias)).gelu().cast(t.dtype)


@op("FastGelu", domain=MICROSOFT)
def _fast_gelu(ctx: NodeContext, x: Value, bias: Value | None = None) -> Tensor:
    """The tanh approximation of GELU, of x + bias when a bias is given."""
    t = ctx.t(x)
    work = _work(ctx, x) if bias is None else _work(ctx, x) + _work(ctx, bias)
    return work.gelu(approximate="tanh").cast(t.dtype)


@op("QuickGelu", attrs=("alpha",), domain=MICROSOFT)
def _quick_gelu(ctx: NodeContext, x: Value) -> Tensor:
    """x * sigmoid(alpha * x)."""
    alpha = float(ctx.attr("alpha", 1.702))
    return _in_float32(ctx.t(x), lambda t: t * (t * alpha).sigmoid())


@op("BiasAdd", domain=MICROSOFT)
def _bias_add(ctx: NodeContext, x: Value, bias: Value, skip: Value) -> Tensor:
    """x + bias + skip (bias over the last dim), summed in float32 for halves."""
    t = ctx.t(x)
    return (_work(ctx, x) + _work(ctx, bias) + _work(ctx, skip)).cast(t.dtype)


# ── skip layer norms ────────────────────────────────────────────────────────

def _only_outputs(*allowed: int) -> Any:
    """A load-time check: the node's outputs past the first are only those `allowed`."""
    def check(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
        extra = [i for i, name in enumerate(node.output) if name and i and i not in allowed]
        return f"output(s) {extra} of {node.op_type} are not supported" if extra else None
    return check


def _skip_norm(ctx: NodeContext, x: Value, skip: Value, gamma: Value, beta: Value | None,
               bias: Value | None, simplified: bool) -> tuple[Tensor, ...]:
    """(Y, mean, inv_std_var, x + skip + bias) as onnxruntime's kernels compute them: the
    sum, the statistics (float32, shape (..., 1)) and Y in float32 (float64 stays), Y and
    the sum rounded to x's dtype at the end."""
    t = ctx.t(x)
    total = _work(ctx, x) + _work(ctx, skip)
    if bias is not None:
        total = total + _work(ctx, bias)
    if total.dtype.name != "float64":
        total = total.cast("float32")
    dim = (total.ndim - 1,)
    mean = total.mean(dim, keepdim=True)
    centred = total if simplified else total - mean
    inv_std = ((centred * centred).mean(dim, keepdim=True)
               + float(ctx.attr("epsilon", 1e-12))).rsqrt()
    out = centred * inv_std * _work(ctx, gamma)
    if beta is not None:
        out = out + _work(ctx, beta)
    return (out.cast(t.dtype), mean.cast("float32"), inv_std.cast("float32"),
            total.cast(t.dtype))


@op("SkipLayerNormalization", attrs=("epsilon",), domain=MICROSOFT)
def _skip_layer_norm(ctx: NodeContext, x: Value, skip: Value, gamma: Value,
                     beta: Value | None = None, bias: Value | None = None
                     ) -> tuple[Tensor, ...]:
    """LayerNorm(x + skip + bias) * gamma + beta over the last dim; outputs (Y, mean,
    inv_std_var, x + skip + bias)."""
    return _skip_norm(ctx, x, skip, gamma, beta, bias, False)


@op("SkipSimplifiedLayerNormalization", attrs=("epsilon",), domain=MICROSOFT,
    check=_only_outputs(2, 3))
def _skip_simplified_layer_norm(ctx: NodeContext, x: Value, skip: Value, gamma: Value,
                                bias: Value | None = None) -> tuple[Tensor, ...]:
    """RMSNorm(x + skip + bias) * gamma over the last dim; outputs (Y, mean, inv_std_var,
    x + skip + bias), the mean rejected at load (an RMS norm has none: onnxruntime leaves
    that output unwritten)."""
    return _skip_norm(ctx, x, skip, gamma, None, bias, True)


# ── FusedMatMul ─────────────────────────────────────────────────────────────

def _fused_operand(ctx: NodeContext, t: Tensor, trans: int, trans_batch: int) -> Tensor:
    """A or B as the product reads it: transBatch moves dim 0 behind the batch dims
    (d1, ..., d(n-2), d0, d(n-1)); trans then swaps the last two dims."""
    if trans and t.ndim < 2:
        raise ctx.unsupported(f"transA / transB of a rank-{t.ndim} operand are not "
                              "supported")
    perm = list(range(t.ndim))
    if trans_batch:
        perm = [*range(1, t.ndim - 1), 0, t.ndim - 1]
    if trans:
        perm[-2], perm[-1] = perm[-1], perm[-2]
    return t.permute(*perm) if perm != list(range(t.ndim)) else t


@op("FusedMatMul", attrs=("alpha", "transA", "transB", "transBatchA", "transBatchB"),
    domain=MICROSOFT)
def _fused_matmul(ctx: NodeContext, a: Value, b: Value) -> Tensor:
    """alpha * op(A) @ op(B), op transposing as transA / transBatchA (transB / ...) say;
    halves are multiplied in float32."""
    ta, tb = _work(ctx, a), _work(ctx, b)
    batch_a, batch_b = ctx.attr("transBatchA", 0), ctx.attr("transBatchB", 0)
    if (batch_a or batch_b) and not ta.ndim == tb.ndim >= 3:
        # onnxruntime refuses these too
        raise ctx.unsupported(f"transBatchA / transBatchB of operands of ranks {ta.ndim} "
                              f"and {tb.ndim} (they must be equal and at least 3)")
    left = _fused_operand(ctx, ta, ctx.attr("transA", 0), batch_a)
    right = _fused_operand(ctx, tb, ctx.attr("transB", 0), batch_b)
    out = left @ right
    alpha = float(ctx.attr("alpha", 1.0))
    return (out if alpha == 1.0 else out * alpha).cast(ctx.t(a).dtype)


# ── fused attention ─────────────────────────────────────────────────────────

def _key_masked(ctx: NodeContext, mask: Value, batch: int, seq: int, total: int) -> Tensor:
    """Where a key is masked out, (batch, 1, seq or 1, total) bool, from mask_index: 1-D
    (batch,) key lengths (right padding) or (2 * batch,) ends then starts, 2-D
    (batch, total) or 3-D (batch, seq, total) masks (a key is kept where the mask is > 0)."""
    m = ctx.t(mask)
    if m.ndim == 1 and m.shape[0] in (batch, 2 * batch):
        lengths = m.cast("int64")
        positions = ctx.t(np.arange(total, dtype=np.int64).reshape(1, total))
        out = positions >= lengths[:batch].reshape(batch, 1)
        if m.shape[0] == 2 * batch:
            out = out | (positions < lengths[batch:].reshape(batch, 1))
        return out.reshape(batch, 1, 1, total)
    if m.ndim == 2 and tuple(m.shape) == (batch, total):
        return (m <= 0).reshape(batch, 1, 1, total)
    if m.ndim == 3 and tuple(m.shape) == (batch, seq, total):
        return (m <= 0).reshape(batch, 1, seq, total)
    raise ctx.unsupported(f"a mask of shape {tuple(m.shape)} (supported: (batch,) key "
                          "lengths, (2 * batch,) ends and starts, (batch, total) and "
                          "(batch, seq, total) masks)")


def _score_bias(ctx: NodeContext, mask: Value | None, attention_bias: Value | None,
                shape: tuple[int, ...], dtype: str, past: int) -> Tensor | None:
    """What onnxruntime adds to the scaled scores (batch, heads, seq, total): the mask's
    mask_filter_value where a key is masked (added, not set: a row masked throughout keeps
    its softmax), the lowest float where unidirectional hides key past + i + 1 on from
    query i (for more than one query), and attention_bias."""
    batch, _, seq, total = shape
    bias: Tensor | None = None
    if mask is not None:
        fill = float(ctx.attr("mask_filter_value", -10000.0))
        bias = where(_key_masked(ctx, mask, batch, seq, total), fill, 0.0).cast(dtype)
    if ctx.attr("unidirectional", 0) and seq > 1:
        if total - past != seq:
            # onnxruntime's CPU kernel then leaves the last query unmasked: no one causal
            # alignment to follow
            raise ctx.unsupported(f"unidirectional with {seq} queries and {total - past} "
                                  "new keys (supported: as many keys as queries)")
        later = np.triu(np.ones((seq, total), dtype=bool), past + 1)
        low = float(np.finfo(np.dtype(dtype)).min)
        future = ctx.t(later)
        bias = where(future, low, 0.0 if bias is None else bias).cast(dtype)
    if attention_bias is not None:
        extra = _work(ctx, attention_bias).cast(dtype)
        bias = extra if bias is None else bias + extra
    return bias


def _heads(part: Tensor, heads: int) -> Tensor:
    """(batch, seq, heads * size) as (batch, heads, seq, size)."""
    batch, seq, width = part.shape
    return part.reshape(batch, seq, heads, width // heads).permute(0, 2, 1, 3)


def _attend(ctx: NodeContext, q: Tensor, k: Tensor, v: Tensor, mask: Value | None,
            attention_bias: Value | None, past: int = 0) -> Tensor:
    """softmax(scale * q k^T + bias) v over (batch, heads, seq, size) heads (k and v with
    `past` cached keys first), merged back to (batch, seq, heads * v_size); scale 0 or
    absent is onnxruntime's 1 / sqrt(q's head size)."""
    scale = float(ctx.attr("scale", 0.0)) or 1.0 / math.sqrt(q.shape[-1])
    scores = (q @ k.transpose(-1, -2)) * scale
    bias = _score_bias(ctx, mask, attention_bias, tuple(scores.shape), scores.dtype.name,
                       past)
    if bias is not None:
        scores = scores + bias
    out = scores.softmax(-1) @ v
    batch, heads, seq, size = out.shape
    return out.permute(0, 2, 1, 3).reshape(batch, seq, heads * size)


def _reject_inputs(node: onnx.NodeProto, names: dict[int, str]) -> str | None:
    """Why the node is unsupported if it gives any of the optional inputs `names`."""
    given = [name for i, name in names.items() if i < len(node.input) and node.input[i]]
    return f"the input(s) {', '.join(given)} are not supported" if given else None


def _reject_outputs(node: onnx.NodeProto, first: int) -> str | None:
    """Why the node is unsupported if it names an output from index `first` on."""
    given = [i for i, name in enumerate(node.output) if name and i >= first]
    return f"output(s) {given} of {node.op_type} are not supported" if given else None


def _check_attention(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    for flag in ("do_rotary", "past_present_share_buffer"):
        if attrs.get(flag, 0):
            return f"{flag}=1 is not supported"
    sizes = attrs.get("qkv_hidden_sizes")
    if sizes is not None and (len(sizes) != 3 or sizes[0] != sizes[1]):
        return f"qkv_hidden_sizes {list(sizes)} (three sizes, q's equal to k's) is invalid"
    return _reject_inputs(node, {6: "past_sequence_length"}) or _reject_outputs(node, 2)


@op("Attention", attrs=("num_heads", "qkv_hidden_sizes", "unidirectional",
                        "mask_filter_value", "scale", "do_rotary",
                        "past_present_share_buffer"),
    domain=MICROSOFT, check=_check_attention)
def _attention(ctx: NodeContext, x: Value, weights: Value, bias: Value | None = None,
               mask_index: Value | None = None, past: Value | None = None,
               attention_bias: Value | None = None) -> Tensor | tuple[Tensor, Tensor]:
    """Multi-head self-attention with the Q, K, V projections fused into one weight
    (hidden, q + k + v), after the cached keys and values `past` (2, batch, heads, past,
    size), computed in float32 for halves; outputs (output, present), present being the
    keys and values attended to, stacked as past is (built only when the node names it)."""
    dtype = ctx.t(x).dtype
    heads = int(ctx.attr("num_heads"))
    w = _work(ctx, weights)
    sizes = list(ctx.attr("qkv_hidden_sizes", [])) or [w.shape[1] // 3] * 3
    if sum(sizes) != w.shape[1] or any(size % heads for size in sizes):
        raise ctx.unsupported(f"weights of width {w.shape[1]} for q, k, v sizes {sizes} "
                              f"and {heads} heads")
    proj = _work(ctx, x) @ w
    if bias is not None:
        proj = proj + _work(ctx, bias)
    q, k, v = (_heads(part, heads) for part in proj.split(sizes, dim=-1))
    present = len(ctx.node.output) > 1 and bool(ctx.node.output[1])
    if (past is not None or present) and sizes[1] != sizes[2]:
        raise ctx.unsupported(f"past / present with k and v of different sizes {sizes[1:]}")
    past_len = 0
    if past is not None:
        cache = _work(ctx, past)
        if cache.ndim != 5 or cache.shape[0] != 2:
            raise ctx.unsupported(f"a past of shape {tuple(cache.shape)} (supported: (2, "
                                  "batch, heads, past, size))")
        k, v = _cat_past(ctx, cache[0], k), _cat_past(ctx, cache[1], v)
        past_len = cache.shape[3]
    out = _attend(ctx, q, k, v, mask_index, attention_bias, past_len).cast(dtype)
    return (out, stack([k, v]).cast(dtype)) if present else out


# ── MultiHeadAttention ──────────────────────────────────────────────────────

def _check_mha(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    inputs = list(node.input)
    if len(inputs) < 3 or not inputs[1] or not inputs[2]:
        return "packed QKV / KV (key or value omitted) are not supported"
    if (len(inputs) > 6 and bool(inputs[6])) != (len(inputs) > 7 and bool(inputs[7])):
        return "past_key and past_value must be given together"
    return (_reject_inputs(node, {8: "past_sequence_length", 9: "cache_indirection"})
            or _reject_outputs(node, 3))


def _mha_heads(ctx: NodeContext, v: Value, bias: Tensor | None, heads: int, what: str
               ) -> Tensor:
    """A (batch, seq, heads * size) query / key / value (plus its slice of the bias) as
    (batch, heads, seq, size) float32 (for halves) heads."""
    t = _work(ctx, v)
    if t.ndim != 3 or t.shape[-1] % heads:
        raise ctx.unsupported(f"{what} of shape {tuple(t.shape)} (supported: (batch, seq, "
                              f"hidden) with hidden divisible by num_heads {heads})")
    return _heads(t if bias is None else t + bias, heads)


@op("MultiHeadAttention", attrs=("num_heads", "unidirectional", "scale", "mask_filter_value"),
    domain=MICROSOFT, check=_check_mha)
def _multi_head_attention(ctx: NodeContext, query: Value, key: Value, value: Value,
                          bias: Value | None = None, key_padding_mask: Value | None = None,
                          attention_bias: Value | None = None, past_key: Value | None = None,
                          past_value: Value | None = None) -> tuple[Tensor, ...]:
    """Multi-head attention of separate (batch, seq, hidden) query, key and value, the
    bias (q + k + v) added to each, after the cached past_key / past_value
    (batch, heads, past, size); outputs (output, present_key, present_value), the presents
    being the cached keys and values followed by the new ones."""
    dtype = ctx.t(query).dtype
    heads = int(ctx.attr("num_heads"))
    shapes = [tuple(ctx.t(t).shape) for t in (query, key, value)]
    if any(len(shape) != 3 for shape in shapes):
        raise ctx.unsupported(f"query, key, value of shapes {shapes} (supported: (batch, "
                              "seq, hidden) each; not the (batch, heads, seq, size) or "
                              "packed layouts)")
    widths = [shape[-1] for shape in shapes]
    parts: list[Tensor | None] = [None, None, None]
    if bias is not None:
        b = _work(ctx, bias)
        if tuple(b.shape) != (sum(widths),):
            raise ctx.unsupported(f"a bias of shape {tuple(b.shape)} for q, k, v widths "
                                  f"{widths}")
        parts = list(b.split(widths, dim=-1))
    q = _mha_heads(ctx, query, parts[0], heads, "query")
    k = _mha_heads(ctx, key, parts[1], heads, "key")
    v = _mha_heads(ctx, value, parts[2], heads, "value")
    past = 0
    if past_key is not None and past_value is not None:
        k = _cat_past(ctx, past_key, k)
        v = _cat_past(ctx, past_value, v)
        past = ctx.t(past_key).shape[2]
    out = _attend(ctx, q, k, v, key_padding_mask, attention_bias, past)
    return out.cast(dtype), k.cast(dtype), v.cast(dtype)


def _cat_past(ctx: NodeContext, cached: Value, new: Tensor) -> Tensor:
    """The cached (batch, heads, past, size) keys or values followed by the new ones."""
    c = _work(ctx, cached)
    if c.ndim != 4 or [c.shape[i] for i in (0, 1, 3)] != [new.shape[i] for i in (0, 1, 3)]:
        raise ctx.unsupported(f"a past of shape {tuple(c.shape)} for keys / values of shape "
                              f"{tuple(new.shape)} (batch, heads, seq, size)")
    return cat([c, new], dim=2)


# ── RotaryEmbedding ─────────────────────────────────────────────────────────

def _check_rotary(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    if attrs.get("is_packed_batching", 0):
        return "is_packed_batching=1 is not supported"
    if float(attrs.get("scale", 1.0)) != 1.0:
        return "scale other than 1 is not supported"
    if attrs.get("rotary_embedding_dim", 0) and not attrs.get("num_heads", 0):
        return "rotary_embedding_dim needs num_heads"
    return None


def _rotary_layout(ctx: NodeContext, t: Tensor, half: int) -> tuple[int, int, int]:
    """(heads, head size, rotated dims) of the (batch, seq, hidden) or (batch, heads, seq,
    head size) input, as onnxruntime reads them from the attributes and the caches'
    width `half`."""
    if t.ndim not in (3, 4):
        raise ctx.unsupported(f"an input of shape {tuple(t.shape)} (supported: (batch, seq, "
                              "hidden) and (batch, heads, seq, head size))")
    hidden = t.shape[2] if t.ndim == 3 else t.shape[1] * t.shape[3]
    rotary, heads = int(ctx.attr("rotary_embedding_dim", 0)), int(ctx.attr("num_heads", 0))
    size = hidden // heads if rotary else 2 * half
    rotary = rotary or size
    heads = heads or (hidden // size if size else 0)
    if (rotary % 2 or rotary != 2 * half or rotary > size or heads * size != hidden
            or (t.ndim == 4 and (heads, size) != (t.shape[1], t.shape[3]))):
        raise ctx.unsupported(f"an input of shape {tuple(t.shape)} with caches of width "
                              f"{half}, rotary_embedding_dim {rotary} and {heads} heads")
    return heads, size, rotary


def _rotary_angles(ctx: NodeContext, position_ids: Value, cache: Value, batch: int,
                   seq: int) -> Tensor:
    """The cache's rows at each (batch or 1, seq) position: position_ids (batch, seq), or
    one offset the positions count on from."""
    ids = ctx.t(position_ids).cast("int64")
    if ids.numel() == 1 and ids.ndim <= 1:
        ids = ids.reshape(1, 1) + ctx.t(np.arange(seq, dtype=np.int64).reshape(1, seq))
    elif tuple(ids.shape) != (batch, seq):
        raise ctx.unsupported(f"position_ids of shape {tuple(ids.shape)} (supported: (1) "
                              f"and (batch, seq) = ({batch}, {seq}))")
    rows = _work(ctx, cache).index_select(0, ids.reshape(-1))
    return rows.reshape(ids.shape[0], seq, 1, rows.shape[-1])


@op("RotaryEmbedding", attrs=("num_heads", "rotary_embedding_dim", "interleaved",
                              "is_packed_batching", "scale"),
    domain=MICROSOFT, check=_check_rotary)
def _rotary_embedding(ctx: NodeContext, x: Value, position_ids: Value, cos_cache: Value,
                      sin_cache: Value) -> Tensor:
    """Rotates the first rotary_embedding_dim dims of each head by the cached angles of its
    position: halves (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin), or interleaved
    pairs; the other dims pass through."""
    t = ctx.t(x)
    half = ctx.t(cos_cache).shape[-1]
    heads, size, rotary = _rotary_layout(ctx, t, half)
    work = _work(ctx, x)
    batch, seq = t.shape[0], t.shape[1] if t.ndim == 3 else t.shape[2]
    heads_view = (work.reshape(batch, seq, heads, size) if t.ndim == 3
                  else work.permute(0, 2, 1, 3))  # (batch, seq, heads, size)
    cos = _rotary_angles(ctx, position_ids, cos_cache, batch, seq)
    sin = _rotary_angles(ctx, position_ids, sin_cache, batch, seq)
    rot, rest = heads_view[..., :rotary], heads_view[..., rotary:]
    if ctx.attr("interleaved", 0):
        pairs = rot.reshape(batch, seq, heads, half, 2)
        x1, x2 = pairs[..., 0], pairs[..., 1]
        turned = stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).reshape(
            batch, seq, heads, rotary)
    else:
        x1, x2 = rot[..., :half], rot[..., half:]
        turned = cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    out = cat([turned, rest], dim=-1) if rotary < size else turned
    out = out.reshape(tuple(t.shape)) if t.ndim == 3 else out.permute(0, 2, 1, 3)
    return out.cast(t.dtype)


# ── EmbedLayerNormalization ─────────────────────────────────────────────────

def _gather_rows(ctx: NodeContext, table: Value, ids: Value) -> Tensor:
    """table[ids]: the (…, hidden) rows of an embedding table at integer ids."""
    i = ctx.t(ids).cast("int64")
    rows = _work(ctx, table).index_select(0, i.reshape(-1))
    return rows.reshape(*i.shape, rows.shape[-1])


@op("EmbedLayerNormalization", attrs=("epsilon", "mask_index_type"), domain=MICROSOFT)
def _embed_layer_norm(ctx: NodeContext, input_ids: Value, segment_ids: Value | None,
                      word_embedding: Value, position_embedding: Value,
                      segment_embedding: Value | None, gamma: Value, beta: Value,
                      mask: Value | None = None, position_ids: Value | None = None
                      ) -> tuple[Tensor, Tensor, Tensor]:
    """LayerNorm(word[input_ids] + position[position_ids or 0..seq-1] + segment[segment_ids])
    * gamma + beta; outputs (output, mask_index: each row's count of mask == 1 (0 without a
    mask), the embedding sum)."""
    ids = ctx.t(input_ids)
    batch, seq = ids.shape
    positions = (ctx.t(np.arange(seq, dtype=np.int64).reshape(1, seq)) if position_ids is None
                 else position_ids)
    total = _gather_rows(ctx, word_embedding, ids) + _gather_rows(ctx, position_embedding,
                                                                  positions)
    if segment_ids is not None and segment_embedding is not None:
        total = total + _gather_rows(ctx, segment_embedding, segment_ids)
    elif (segment_ids is None) != (segment_embedding is None):
        raise ctx.unsupported("segment_ids and segment_embedding must be given together")
    mean = total.mean(-1, keepdim=True)
    centred = total - mean
    inv_std = ((centred * centred).mean(-1, keepdim=True)
               + float(ctx.attr("epsilon", 1e-12))).rsqrt()
    out = centred * inv_std * _work(ctx, gamma) + _work(ctx, beta)
    dtype = ctx.t(word_embedding).dtype
    if mask is None:
        mask_index = ctx.t(np.zeros(batch, dtype=np.int32))
    else:
        mask_index = (ctx.t(mask) == 1).cast("int32").sum(-1).cast("int32")
    return out.cast(dtype), mask_index, total.cast(dtype)


# ── GroupQueryAttention ─────────────────────────────────────────────────────

_GQA_ATTRS = ("num_heads", "kv_num_heads", "scale", "softcap", "local_window_size",
              "do_rotary", "rotary_interleaved", "smooth_softmax", "qk_output",
              "k_quant_type", "v_quant_type", "kv_cache_bit_width", "sliding_window_cache",
              "causal", "qk_norm_epsilon")


def _check_gqa(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    followed = {"do_rotary": (0,), "smooth_softmax": (-1, 0), "qk_output": (0,),
                "sliding_window_cache": (0,), "causal": (1,)}
    for name, values in followed.items():
        if name in attrs and attrs[name] not in values:
            return f"{name}={attrs[name]} is not supported"
    for name in ("k_quant_type", "v_quant_type"):
        if attrs.get(name, b"NONE") not in (b"NONE", "NONE"):
            return f"{name}={attrs[name]!r} (a quantized cache) is not supported"
    if attrs.get("kv_cache_bit_width"):
        return "kv_cache_bit_width (a quantized cache) is not supported"
    inputs = list(node.input)
    if len(inputs) < 3 or not inputs[1] or not inputs[2]:
        return "packed QKV (key or value omitted) is not supported"
    if (len(inputs) > 3 and bool(inputs[3])) != (len(inputs) > 4 and bool(inputs[4])):
        return "past_key and past_value must be given together"
    names = ("cos_cache", "sin_cache", "position_ids", "attention_bias", "head_sink",
             "k_scale", "v_scale", "q_norm_weight", "k_norm_weight")
    return (_reject_inputs(node, dict(enumerate(names, start=7)))
            or _reject_outputs(node, 3))


def _gqa_pasts(ctx: NodeContext, seqlens_k: Value, total: int, seq: int, batch: int
               ) -> list[int]:
    """Each batch row's cached length, as onnxruntime reads seqlens_k (total - 1 per row):
    0 for a first prompt (seq == total_sequence_length, refused when a row is padded),
    else that row's total - seq."""
    totals = [n + 1 for n in ctx.ints(seqlens_k)]
    if len(totals) != batch:
        raise ctx.unsupported(f"seqlens_k of {len(totals)} values for a batch of {batch}")
    if seq == total:
        if any(t != seq for t in totals):
            raise ctx.unsupported(f"a padded first prompt (row lengths {totals} of {seq}): "
                                  "onnxruntime leaves the padded rows unspecified")
        return [0] * batch
    if seq != 1 and batch != 1:
        raise ctx.unsupported("a prompt after a cache with a batch of more than one")
    pasts = [t - seq for t in totals]
    if any(p < 0 for p in pasts):
        raise ctx.unsupported(f"row lengths {totals} shorter than the {seq} new tokens")
    return pasts


def _gqa_present(ctx: NodeContext, past: Value | None, new: Tensor, pasts: list[int],
                 length: int) -> Tensor:
    """The present cache (batch, kv heads, length, size): each row's cached entries, its
    new ones, then zeros."""
    rows = []
    batch, heads, seq, size = new.shape
    cache = None if past is None else _work(ctx, past)
    for b, p in enumerate(pasts):
        parts = [new[b:b + 1]]
        if p:
            if cache is None or cache.shape[2] < p:
                raise ctx.unsupported(f"row {b} needs {p} cached entries, the past has "
                                      f"{0 if cache is None else cache.shape[2]}")
            parts.insert(0, cache[b:b + 1, :, :p])
        if length > p + seq:
            parts.append(ctx.t(np.zeros((1, heads, length - p - seq, size),
                                        dtype=np.dtype(new.dtype.np))))
        rows.append(cat(parts, dim=2) if len(parts) > 1 else parts[0])
    return cat(rows, dim=0) if batch > 1 else rows[0]


def _gqa_allowed(pasts: list[int], seq: int, length: int, window: int) -> np.ndarray:
    """(batch, 1, seq, length) bool: query i of a row with p cached entries sees keys
    0 .. p + i (only the last `window` of them when window > 0, as onnxruntime counts)."""
    keys = np.arange(length)[None, :]
    queries = np.arange(seq)[:, None]
    allowed = []
    for p in pasts:
        last = p + queries
        ok = keys <= last
        if window > 0:
            ok &= keys > last - window
        allowed.append(ok)
    return np.stack(allowed)[:, None]


@op("GroupQueryAttention", attrs=_GQA_ATTRS, domain=MICROSOFT, check=_check_gqa)
def _group_query_attention(ctx: NodeContext, query: Value, key: Value, value: Value,
                           past_key: Value | None, past_value: Value | None,
                           seqlens_k: Value, total_sequence_length: Value
                           ) -> tuple[Tensor, Tensor, Tensor]:
    """Causal attention of num_heads query heads over kv_num_heads key / value heads (each
    shared by num_heads / kv_num_heads queries), the new keys and values appended to each
    row's cache; outputs (output, present_key, present_value)."""
    dtype = ctx.t(query).dtype
    heads, kv_heads = int(ctx.attr("num_heads")), int(ctx.attr("kv_num_heads"))
    q = _mha_heads(ctx, query, None, heads, "query")
    k = _mha_heads(ctx, key, None, kv_heads, "key")
    v = _mha_heads(ctx, value, None, kv_heads, "value")
    batch, _, seq, size = q.shape
    total = ctx.ints(total_sequence_length)[0]
    if heads % kv_heads or k.shape[-1] != size:
        raise ctx.unsupported(f"{heads} query heads of size {size} over {kv_heads} kv "
                              f"heads of size {k.shape[-1]}")
    pasts = _gqa_pasts(ctx, seqlens_k, total, seq, batch)
    cached = 0 if past_key is None else ctx.t(past_key).shape[2]
    length = max(cached, total)
    if max(pasts) + seq > length:
        raise ctx.unsupported(f"row lengths {[p + seq for p in pasts]} past "
                              f"total_sequence_length {total} and the cache's {cached}")
    present_k = _gqa_present(ctx, past_key, k, pasts, length)
    present_v = _gqa_present(ctx, past_value, v, pasts, length)
    group = heads // kv_heads

    def spread(t: Tensor) -> Tensor:  # each kv head to its group of query heads
        return t.reshape(batch, kv_heads, 1, length, size).expand(
            batch, kv_heads, group, length, size).reshape(batch, heads, length, size)

    scale = float(ctx.attr("scale", 0.0)) or 1.0 / math.sqrt(size)
    scores = (q @ spread(present_k).transpose(-1, -2)) * scale
    softcap = float(ctx.attr("softcap", 0.0))
    if softcap > 0:
        scores = (scores * (1.0 / softcap)).tanh() * softcap
    allowed = ctx.t(_gqa_allowed(pasts, seq, length, int(ctx.attr("local_window_size", -1))))
    scores = where(allowed, scores, float("-inf"))
    out = scores.softmax(-1) @ spread(present_v)
    out = out.permute(0, 2, 1, 3).reshape(batch, seq, heads * size)
    return out.cast(dtype), present_k.cast(dtype), present_v.cast(dtype)
