"""The default domain's (ai.onnx) transformer ops: Attention (opsets 23-25), RMSNormalization,
RotaryEmbedding, Swish, SwiGLU, TensorScatter (the KV-cache update), and opset 27's
LinearAttention and CausalConvWithState.

Attention follows onnx's reference (onnx/reference/ops/op_attention.py): ONNX scales q and k
by sqrt(scale) each (in the input dtype), applies the softcap before the additive bias,
aligns the causal mask bottom-right (offset by the past length, or per batch by
nonpad_kv_seqlen), pads a short mask with -inf / False, and zeroes a row whose *bias* is
entirely -inf (also where its scores are NaN). Y of a float32 node without softcap or
qk_matmul_output comes from picograd's SDPA (its fused CPU kernel), which differs from that
only in rounding once those rows are zeroed; every other case is composed from Tensor ops
step by step as the reference computes it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
from onnx import helper

from picograd.frontend import where
from picograd.frontend.ops_shape import cat
from picograd.frontend.tensor import Tensor
from picograd.nn import conv_nd
from picograd.nn.attention import scaled_dot_product_attention
from picograd.onnx.registry import NodeContext, Value, is_host, op

_ATTENTION_ATTRS = ("scale", "is_causal", "q_num_heads", "kv_num_heads", "softmax_precision",
                    "softcap", "qk_matmul_output_mode", "left_window_size",
                    "right_window_size")
_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _text(value: Any) -> str:
    """A string attribute as str (onnx gives bytes)."""
    return value.decode() if isinstance(value, bytes) else str(value)


# ── Attention ───────────────────────────────────────────────────────────────

def _check_attention(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    mode = attrs.get("qk_matmul_output_mode", 0)
    if mode not in (0, 1, 2, 3):
        return f"qk_matmul_output_mode={mode}"
    precision = _check_float_attr("softmax_precision", None)(node, attrs, opset)
    if precision is not None:
        return precision
    for side in ("left_window_size", "right_window_size"):
        if attrs.get(side, -1) < -1:
            return f"{side}={attrs[side]} (-1 or a size is expected)"
    inputs = list(node.input) + [""] * (7 - len(node.input))
    if bool(inputs[4]) != bool(inputs[5]):
        return "past_key and past_value must be given together"
    if inputs[6] and inputs[4]:
        return "nonpad_kv_seqlen cannot be combined with past_key / past_value"
    return None


def _to_heads(ctx: NodeContext, x: Tensor, heads_attr: str) -> Tensor:
    """A 3-D (batch, seq, heads * size) input as (batch, heads, seq, size); 4-D as it is."""
    if x.ndim == 4:
        return x
    heads = ctx.attr(heads_attr)
    if x.ndim != 3 or heads is None or x.shape[2] % int(heads):
        raise ctx.unsupported(f"a 3-D input needs {heads_attr} dividing its hidden size; got "
                              f"shape {tuple(x.shape)} and {heads_attr}={heads}")
    b, s, hidden = x.shape
    return x.reshape(b, s, int(heads), hidden // int(heads)).permute(0, 2, 1, 3)


def _neg_inf_where_not(allowed: Tensor, dtype: str, ctx: NodeContext) -> Tensor:
    """0 where `allowed`, -inf elsewhere, in `dtype` (the reference's Where(allowed, 0, -inf))."""
    zero = ctx.t(np.zeros((), dtype=np.float32)).cast(dtype)
    neg_inf = ctx.t(np.full((), -np.inf, dtype=np.float32)).cast(dtype)
    return where(allowed, zero, neg_inf)


def _mask_bias(ctx: NodeContext, mask: Value, kv_len: int, dtype: str) -> Tensor:
    """attn_mask as an additive bias of `dtype`: a bool mask is 0 (attend) / -inf, a float
    mask is added as it is; a mask shorter than the keys is padded with -inf / False."""
    m = ctx.t(mask)
    short = kv_len - m.shape[-1]
    bias = _neg_inf_where_not(m, dtype, ctx) if m.dtype.name == "bool" else m
    if short > 0:
        fill = _neg_inf_where_not(ctx.t(np.zeros((*m.shape[:-1], short), dtype=bool)),
                                  dtype, ctx)
        bias = cat([bias, fill.cast(bias.dtype)], dim=-1)
    elif short < 0:
        raise ctx.unsupported(f"attn_mask's last dim {m.shape[-1]} is longer than the "
                              f"{kv_len} keys")
    return bias


def _frontier(ctx: NodeContext, q_len: int, kv_len: int, offset: int | Tensor
              ) -> tuple[Tensor, bool]:
    """(i + offset - j) for query i, key j: (q, kv), or (batch, 1, q, kv) for a per-batch
    offset tensor; and whether it is per batch."""
    i = np.arange(q_len, dtype=np.int64).reshape(q_len, 1)
    j = np.arange(kv_len, dtype=np.int64).reshape(1, kv_len)
    if isinstance(offset, int):
        return ctx.t(i + offset - j), False
    diff = ctx.t(i - j).reshape(1, q_len, kv_len) + offset.reshape(-1, 1, 1)
    return diff.reshape(diff.shape[0], 1, q_len, kv_len), True


def _offset(ctx: NodeContext, past: Tensor | None, nonpad: Tensor | None, q_len: int
            ) -> int | Tensor:
    """The count of valid keys before the query block: the past length, per batch
    nonpad_kv_seqlen - q_len (an external cache), else 0."""
    if past is not None:
        return past.shape[2]
    if nonpad is not None:
        return nonpad.cast("int64") - q_len
    return 0


def _attention_bias(ctx: NodeContext, mask: Value | None, past: Tensor | None,
                    nonpad: Tensor | None, q_len: int, kv_len: int, dtype: str) -> Tensor:
    """The additive bias: the mask, the causal and sliding-window limits and the
    nonpad_kv_seqlen padding, each 0 or -inf (adding them equals the reference's order)."""
    bias = ctx.t(np.zeros((q_len, kv_len), dtype=np.float32)).cast(dtype)
    if mask is not None:
        bias = bias + _mask_bias(ctx, mask, kv_len, dtype)
    left, right = ctx.attr("left_window_size", -1), ctx.attr("right_window_size", -1)
    if ctx.attr("is_causal", 0) or left >= 0 or right >= 0:
        diff, _ = _frontier(ctx, q_len, kv_len, _offset(ctx, past, nonpad, q_len))
        if ctx.attr("is_causal", 0):
            bias = bias + _neg_inf_where_not(diff >= 0, dtype, ctx)
        if left >= 0:
            bias = bias + _neg_inf_where_not(diff <= left, dtype, ctx)
        if right >= 0:
            bias = bias + _neg_inf_where_not(-diff <= right, dtype, ctx)
    if nonpad is not None:
        keys = ctx.t(np.arange(kv_len, dtype=np.int64).reshape(1, kv_len))
        valid = keys < nonpad.cast("int64").reshape(-1, 1)
        bias = bias + _neg_inf_where_not(valid, dtype, ctx).reshape(-1, 1, 1, kv_len)
    return bias


def _repeat_kv(ctx: NodeContext, q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """k and v with each head repeated for its group of q's heads (GQA / MQA)."""
    qh, kh = q.shape[1], k.shape[1]
    if qh == kh and v.shape[1] == kh:
        return k, v
    if qh % kh or v.shape[1] != kh:
        raise ctx.unsupported(f"{qh} query heads with {kh} key and {v.shape[1]} value heads "
                              "(the query heads must be a multiple of equal kv heads)")
    rep = qh // kh
    return k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)


def _safe_softmax(x: Tensor, ctx: NodeContext) -> Tensor:
    """The reference's softmax: a row whose max is -inf is shifted by 0, a zero sum is 1."""
    top = x.amax(-1, keepdim=True)
    zero = ctx.t(np.zeros((), dtype=np.float32)).cast(x.dtype.name)
    one = ctx.t(np.ones((), dtype=np.float32)).cast(x.dtype.name)
    e = (x - where(top.isneginf(), zero, top)).exp()
    s = e.sum(-1, keepdim=True)
    return e / where(s == 0, one, s)


def _scale(ctx: NodeContext, q: Tensor) -> float:
    """The `scale` attribute, by default 1 / sqrt(head size)."""
    scale = ctx.attr("scale")
    return 1.0 / math.sqrt(q.shape[3]) if scale is None else float(scale)


def _scores(ctx: NodeContext, q: Tensor, k: Tensor) -> Tensor:
    """(q * sqrt(scale)) @ (k * sqrt(scale))^T, softcapped; sqrt(scale) in q's dtype."""
    scale = _scale(ctx, q)
    # rounded on the host straight to q's dtype, as numpy's Q.dtype.type(sqrt(scale))
    host = np.float32 if q.dtype.name == "bfloat16" else np.dtype(q.dtype.name)
    root = ctx.t(np.asarray(math.sqrt(scale), dtype=host)).cast(q.dtype.name)
    scores = (q * root) @ (k * root).transpose(-1, -2)
    cap = float(ctx.attr("softcap", 0.0))
    if cap > 0:
        scores = (scores / cap).tanh() * cap
    return scores


@op("Attention", attrs=_ATTENTION_ATTRS, min_opset=23, check=_check_attention)
def _attention(ctx: NodeContext, q_in: Value, k_in: Value, v_in: Value,
               attn_mask: Value | None = None, past_key: Value | None = None,
               past_value: Value | None = None, nonpad_kv_seqlen: Value | None = None
               ) -> tuple[Tensor, ...]:
    """softmax(q k^T * scale (softcapped) + bias) @ v; outputs (Y, present_key,
    present_value, qk_matmul_output)."""
    q0 = ctx.t(q_in)
    q = _to_heads(ctx, q0, "q_num_heads")
    k = _to_heads(ctx, ctx.t(k_in), "kv_num_heads")
    v = _to_heads(ctx, ctx.t(v_in), "kv_num_heads")
    past = None if past_key is None else ctx.t(past_key)
    if past is not None and past_value is not None:
        k = cat([past, k], dim=2)
        v = cat([ctx.t(past_value), v], dim=2)
    present_k, present_v = k, v
    nonpad = None if nonpad_kv_seqlen is None else ctx.t(nonpad_kv_seqlen)
    dtype = q.dtype.name
    bias = _attention_bias(ctx, attn_mask, past, nonpad, q.shape[2], k.shape[2], dtype)
    k, v = _repeat_kv(ctx, q, k, v)
    # a row with no attendable key (decided on the bias, not on possibly-NaN scores) is 0
    masked = bias.amax(-1, keepdim=True).isneginf()
    if _fusable(ctx, q):
        y = scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=_scale(ctx, q))
        y = where(masked, ctx.t(np.zeros((), dtype=np.float32)), y)
        return _merge_heads(y, q0), present_k, present_v
    scores = _scores(ctx, q, k)
    with_bias = scores + bias
    mode = ctx.attr("qk_matmul_output_mode", 0)
    precision = ctx.attr("softmax_precision")
    work = with_bias if precision is None else with_bias.cast(_float_name(int(precision)))
    probs = _safe_softmax(work, ctx)
    probs = where(masked, ctx.t(np.zeros((), dtype=np.float32)).cast(probs.dtype.name), probs)
    qk_out = {0: scores, 1: scores, 2: with_bias, 3: probs}[mode].cast(dtype)
    return _merge_heads(probs.cast(dtype) @ v, q0), present_k, present_v, qk_out


def _merge_heads(y: Tensor, q_in: Tensor) -> Tensor:
    """Y (batch, heads, seq, size) back in the query's layout: 3-D as (batch, seq, hidden)."""
    if q_in.ndim == 3:
        return y.permute(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
    return y


def _fusable(ctx: NodeContext, q: Tensor) -> bool:
    """Whether Y alone may come from picograd's SDPA (its fused float32 CPU kernel): no
    softcap, no qk_matmul_output, the softmax in float32. It then differs from the
    reference's q * sqrt(scale) @ (k * sqrt(scale))^T only in rounding; its rows of an
    all -inf bias (zeros, NaN for NaN scores) are zeroed by the caller as the reference."""
    precision = ctx.attr("softmax_precision")
    wants_qk = len(ctx.node.output) > 3 and bool(ctx.node.output[3])
    return (q.dtype.name == "float32" and float(ctx.attr("softcap", 0.0)) <= 0
            and not wants_qk and precision in (None, onnx.TensorProto.FLOAT))


# ── normalization, rotary embedding, activations ─────────────────────────────

def _float_name(elem_type: int) -> str:
    """The picograd dtype name of an ONNX float element type (bfloat16 has no numpy type)."""
    if elem_type == onnx.TensorProto.BFLOAT16:
        return "bfloat16"
    return helper.tensor_dtype_to_np_dtype(elem_type).name


def _check_float_attr(name: str, default: int | None) -> Any:
    """A load-time check: the element-type attribute `name` names a float type."""
    def check(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
        value = attrs.get(name, default)
        if value is None:
            return None
        try:
            ok = _float_name(int(value)) in _FLOATS
        except (KeyError, ValueError, TypeError):
            ok = False
        return None if ok else f"{name}={value} (a float element type is expected)"
    return check


@op("RMSNormalization", attrs=("axis", "epsilon", "stash_type"), min_opset=23,
    check=_check_float_attr("stash_type", 1))
def _rms_norm(ctx: NodeContext, x: Value, scale: Value) -> Tensor:
    """X / sqrt(mean(X^2 over axis..) + epsilon) * scale, computed in float32 when
    stash_type is 1 (the default) and cast back to X's type before the scale."""
    t = ctx.t(x)
    axis = int(ctx.attr("axis", -1))
    axis = axis + t.ndim if axis < 0 else axis
    if not 0 <= axis < t.ndim:
        raise ctx.unsupported(f"axis {ctx.attr('axis')} of a {t.ndim}-D input")
    work = t.cast(_float_name(int(ctx.attr("stash_type", 1))))
    dims = tuple(range(axis, t.ndim))
    rms = ((work * work).mean(dims, keepdim=True) + float(ctx.attr("epsilon", 1e-5))).sqrt()
    return (work / rms).cast(t.dtype.name) * ctx.t(scale)


def _check_rotary(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    dim = attrs.get("rotary_embedding_dim", 0)
    if dim < 0 or dim % 2:
        return f"rotary_embedding_dim={dim} (an even size is expected)"
    return None


@op("RotaryEmbedding", attrs=("interleaved", "num_heads", "rotary_embedding_dim"),
    min_opset=23, check=_check_rotary)
def _rotary(ctx: NodeContext, x: Value, cos_cache: Value, sin_cache: Value,
            position_ids: Value | None = None) -> Tensor:
    """Rotate the first rotary_embedding_dim features of each head by the cached angles
    (halves, or even / odd pairs when interleaved) of each token's position."""
    t = ctx.t(x)
    shape = tuple(t.shape)
    if t.ndim == 4:  # (batch, heads, seq, size) -> (batch, seq, heads, size)
        t = t.permute(0, 2, 1, 3)
    else:
        heads = int(ctx.attr("num_heads", 0))
        if t.ndim != 3 or not heads or shape[2] % heads:
            raise ctx.unsupported(f"a 3-D input needs num_heads dividing its hidden size; "
                                  f"got shape {shape}, num_heads={heads}")
        t = t.reshape(shape[0], shape[1], heads, shape[2] // heads)
    size = t.shape[3]
    dim = int(ctx.attr("rotary_embedding_dim", 0)) or size
    cos, sin = ctx.t(cos_cache), ctx.t(sin_cache)
    if position_ids is not None:
        pos = ctx.t(position_ids).cast("int64")
        cos, sin = cos[pos], sin[pos]
    if cos.shape[-1] != dim // 2 or sin.shape[-1] != dim // 2:
        raise ctx.unsupported(f"caches of last dim {cos.shape[-1]} / {sin.shape[-1]} for a "
                              f"rotary dim of {dim}")
    cos, sin = cos.unsqueeze(2), sin.unsqueeze(2)
    rot, rest = t[..., :dim], t[..., dim:]
    if ctx.attr("interleaved", 0):
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
    else:
        x1, x2 = rot[..., :dim // 2], rot[..., dim // 2:]
    real = cos * x1 - sin * x2
    imag = sin * x1 + cos * x2
    if ctx.attr("interleaved", 0):
        rot = cat([real.unsqueeze(-1), imag.unsqueeze(-1)], dim=-1).reshape(rot.shape)
    else:
        rot = cat([real, imag], dim=-1)
    out = cat([rot, rest], dim=-1) if dim < size else rot
    return out.reshape(shape) if len(shape) == 3 else out.permute(0, 2, 1, 3)


def _swish(ctx: NodeContext, t: Tensor) -> Tensor:
    alpha = float(ctx.attr("alpha", 1.0))
    return t * (t * alpha).sigmoid() if alpha != 1.0 else t * t.sigmoid()


@op("Swish", attrs=("alpha",), min_opset=24)
def _swish_op(ctx: NodeContext, x: Value) -> Tensor:
    """x * sigmoid(alpha * x)."""
    return _swish(ctx, ctx.t(x))


@op("SwiGLU", attrs=("alpha",), min_opset=28)
def _swiglu(ctx: NodeContext, a: Value, b: Value) -> Tensor:
    """Swish_alpha(A) * B (same shapes, no broadcasting)."""
    ta, tb = ctx.t(a), ctx.t(b)
    if tuple(ta.shape) != tuple(tb.shape):
        raise ctx.unsupported(f"A {tuple(ta.shape)} and B {tuple(tb.shape)} differ in shape")
    return _swish(ctx, ta) * tb


# ── TensorScatter ───────────────────────────────────────────────────────────

def _check_scatter(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    mode = _text(attrs.get("mode", "linear"))
    return None if mode in ("linear", "circular") else f"mode={mode!r}"


@op("TensorScatter", attrs=("axis", "mode"), min_opset=24, check=_check_scatter)
def _tensor_scatter(ctx: NodeContext, past: Value, update: Value,
                    write_indices: Value | None = None) -> Tensor:
    """The cache with update's rows written along `axis` from each batch's write index
    (modulo the cache length in circular mode): each cache row p of batch b takes update
    row p - write_indices[b] when that is one of update's rows."""
    cache, upd = ctx.t(past), ctx.t(update)
    axis = int(ctx.attr("axis", -2))
    axis = axis + cache.ndim if axis < 0 else axis
    if not 0 < axis < cache.ndim or upd.ndim != cache.ndim or any(
            a != b for i, (a, b) in enumerate(zip(cache.shape, upd.shape, strict=True))
            if i != axis) or upd.shape[axis] > cache.shape[axis]:
        raise ctx.unsupported(f"an update of shape {tuple(upd.shape)} for a cache of shape "
                              f"{tuple(cache.shape)} along axis {ctx.attr('axis', -2)}")
    batch, length, seq = cache.shape[0], cache.shape[axis], upd.shape[axis]
    circular = _text(ctx.attr("mode", "linear")) == "circular"
    if write_indices is None:
        write_indices = np.zeros(batch, dtype=np.int64)
    if is_host(write_indices) and not circular:
        # a linear write past the cache's end (onnx's reference: an IndexError) would
        # silently drop the rows; refused where the indices are known on the host
        ends = np.asarray(write_indices).astype(np.int64).reshape(-1) + seq
        if ends.size and (ends.max() > length or np.asarray(write_indices).min() < 0):
            raise ctx.unsupported(f"write_indices {np.asarray(write_indices).tolist()} write "
                                  f"{seq} rows outside a cache of length {length}")
    starts = ctx.t(write_indices).cast("int64")
    rows = ctx.t(np.arange(length, dtype=np.int64).reshape(1, length)) - starts.reshape(-1, 1)
    if circular:
        rows = rows % length
    valid = (rows >= 0) & (rows < seq)  # (batch, length)
    # index and mask shaped (batch, 1.., length, 1..) to broadcast over the other dims
    view = [batch] + [1] * (cache.ndim - 1)
    view[axis] = length
    index = where(valid, rows, 0).reshape(view).expand(
        *[length if i == axis else s for i, s in enumerate(cache.shape)])
    taken = upd.gather(axis, index)
    return where(valid.reshape(view), taken, cache)


# ── recurrent ops (opset 27): LinearAttention, CausalConvWithState ──────────

_UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")


def _check_linear_attention(node: onnx.NodeProto, attrs: dict[str, Any], opset: int
                            ) -> str | None:
    rule = _text(attrs.get("update_rule", "gated_delta"))
    if rule not in _UPDATE_RULES:
        return f"update_rule={rule!r}"
    qh, kvh = attrs.get("q_num_heads"), attrs.get("kv_num_heads")
    if qh is None or kvh is None or qh <= 0 or kvh <= 0 or qh % kvh:
        return (f"q_num_heads={qh} and kv_num_heads={kvh} (both required, q a positive "
                "multiple of kv)")
    inputs = list(node.input) + [""] * (6 - len(node.input))
    gating, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gating != bool(inputs[4]):
        return f"update_rule {rule!r} {'needs' if gating else 'forbids'} the decay input"
    if delta != bool(inputs[5]):
        return f"update_rule {rule!r} {'needs' if delta else 'forbids'} the beta input"
    return None


def _per_head(ctx: NodeContext, x: Tensor, heads: int, size: int, name: str) -> Tensor:
    """decay / beta (B, T, heads * size or heads or 1) as float32 (B, heads or 1, T, size
    or 1), the layout the state update broadcasts against."""
    b, t, last = x.shape
    if last == heads * size:
        return x.reshape(b, t, heads, size).permute(0, 2, 1, 3).cast("float32")
    if last in (heads, 1):
        return x.reshape(b, t, last, 1).permute(0, 2, 1, 3).cast("float32")
    raise ctx.unsupported(f"{name} of shape {tuple(x.shape)} for {heads} kv heads of key "
                          f"size {size}")


def _linear_inputs(ctx: NodeContext, query: Value, key: Value, value: Value
                   ) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v (B, T, H * D) as float32 (B, H, T, D)."""
    qh, kvh = int(ctx.attr("q_num_heads")), int(ctx.attr("kv_num_heads"))
    out = []
    for name, x, heads in (("query", query, qh), ("key", key, kvh), ("value", value, kvh)):
        t = ctx.t(x)
        if t.ndim != 3 or t.shape[2] % heads:
            raise ctx.unsupported(f"{name} of shape {tuple(t.shape)} (rank 3 with a last "
                                  f"dim divisible by {heads} heads is expected)")
        b, s, hidden = t.shape
        out.append(t.reshape(b, s, heads, hidden // heads).permute(0, 2, 1, 3)
                   .cast("float32"))
    return out[0], out[1], out[2]


@op("LinearAttention", attrs=("chunk_size", "kv_num_heads", "q_num_heads", "scale",
                              "update_rule"), min_opset=27, check=_check_linear_attention)
def _linear_attention(ctx: NodeContext, query: Value, key: Value, value: Value,
                      past_state: Value | None = None, decay: Value | None = None,
                      beta: Value | None = None) -> tuple[Tensor, Tensor]:
    """The recurrence S_t = exp(g_t) S_{t-1} + k_t (x) (beta_t (v_t - exp(g_t) S_{t-1}^T k_t))
    (the gate and the delta term per update_rule), o_t = scale q_t^T S_t, token by token in
    float32 as onnx's reference; outputs (output (B, T, Hq * Dv), present_state)."""
    q, k, v = _linear_inputs(ctx, query, key, value)
    b, qh, steps, d_k = q.shape
    kvh, d_v = k.shape[1], v.shape[3]
    if k.shape[3] != d_k or k.shape[2] != steps or v.shape[2] != steps:
        raise ctx.unsupported(f"query {tuple(q.shape)}, key {tuple(k.shape)} and value "
                              f"{tuple(v.shape)} (as (B, H, T, D)) do not match")
    g = None if decay is None else _per_head(ctx, ctx.t(decay), kvh, d_k, "decay")
    rate = None if beta is None else _per_head(ctx, ctx.t(beta), kvh, 1, "beta")
    if past_state is None:
        state = ctx.t(np.zeros((b, kvh, d_k, d_v), dtype=np.float32))
        state_dtype = ctx.t(query).dtype.name
    else:
        given = ctx.t(past_state)
        if tuple(given.shape) != (b, kvh, d_k, d_v):
            raise ctx.unsupported(f"past_state of shape {tuple(given.shape)}, expected "
                                  f"{(b, kvh, d_k, d_v)}")
        state, state_dtype = given.cast("float32"), given.dtype.name
    scale = float(ctx.attr("scale", 0.0)) or 1.0 / math.sqrt(d_k)
    outputs = []
    for i in range(steps):
        k_t, v_t = k[:, :, i, :], v[:, :, i, :]
        if g is not None:
            state = state * g[:, :, i, :].exp().unsqueeze(-1)
        if rate is not None:
            retrieved = (state * k_t.unsqueeze(-1)).sum(-2)
            v_t = rate[:, :, i, :] * (v_t - retrieved)
        state = state + k_t.unsqueeze(-1) * v_t.unsqueeze(-2)
        read = state if qh == kvh else state.repeat_interleave(qh // kvh, dim=1)
        outputs.append((q[:, :, i, :].unsqueeze(-1) * read).sum(-2) * scale)
    out = cat([o.unsqueeze(2) for o in outputs], dim=2)  # (B, Hq, T, Dv)
    out = out.permute(0, 2, 1, 3).reshape(b, steps, qh * d_v)
    return out.cast(ctx.t(query).dtype.name), state.cast(state_dtype)


def _check_causal_conv(node: onnx.NodeProto, attrs: dict[str, Any], opset: int
                       ) -> str | None:
    activation = _text(attrs.get("activation", "none"))
    return None if activation in ("none", "silu", "swish") else f"activation={activation!r}"


def _half_depthwise(padded: Tensor, w: Tensor, bias: Tensor | None) -> Tensor:
    """The valid depthwise conv1d of a float16 / bfloat16 input as onnx's reference (numpy's
    half matmul) rounds it: the taps summed in float32, rounded once to the half type, then
    the bias added in the half type."""
    taps = w.shape[2]
    length = padded.shape[2] - taps + 1
    wide, kernel = padded.cast("float32"), w.cast("float32").reshape(1, -1, taps)
    acc = wide[:, :, 0:length] * kernel[:, :, 0:1]
    for j in range(1, taps):
        acc = acc + wide[:, :, j:j + length] * kernel[:, :, j:j + 1]
    out = acc.cast(padded.dtype.name)
    return out if bias is None else out + bias.reshape(1, -1, 1)


@op("CausalConvWithState", attrs=("activation",), min_opset=27, check=_check_causal_conv)
def _causal_conv(ctx: NodeContext, x: Value, weight: Value, bias: Value | None = None,
                 past_state: Value | None = None) -> tuple[Tensor, Tensor]:
    """A depthwise causal conv1d over [past_state (zeros if omitted), input] with the
    optional SiLU (in float32); outputs (output, the last k - 1 positions as the state)."""
    t, w = ctx.t(x), ctx.t(weight)
    if t.ndim != 3 or w.ndim != 3 or w.shape[0] != t.shape[1] or w.shape[1] != 1:
        raise ctx.unsupported(f"input {tuple(t.shape)} with weight {tuple(w.shape)} "
                              "(expected (B, C, L) and (C, 1, k))")
    batch, channels, _ = t.shape
    keep = w.shape[2] - 1
    if past_state is not None:
        padded = cat([ctx.t(past_state), t], dim=2)
    elif keep:
        padded = cat([ctx.t(np.zeros((batch, channels, keep), dtype=np.float32))
                      .cast(t.dtype.name), t], dim=2)
    else:
        padded = t
    if t.dtype.name in ("float16", "bfloat16"):
        out = _half_depthwise(padded, w, None if bias is None else ctx.t(bias))
    else:
        out = conv_nd.conv1d(padded, w, None if bias is None else ctx.t(bias), 1, 0, 1,
                             channels)
    if _text(ctx.attr("activation", "none")) in ("silu", "swish"):
        wide = out.cast("float32")
        out = (wide * wide.sigmoid()).cast(t.dtype.name)
    return out, padded[:, :, padded.shape[2] - keep:]
