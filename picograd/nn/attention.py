"""Attention (torch's semantics), as compositions of Tensor ops.

    scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False)
    MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, batch_first=False,
                       kdim=None, vdim=None)          the layer, torch's parameter names

Masks, as torch reads them: a bool `attn_mask` of `scaled_dot_product_attention` keeps the
positions where it is True; a bool `attn_mask` or `key_padding_mask` of
`MultiheadAttention` drops them (True = do not attend). Float masks are added to the scores.

The softmax over the keys is the "safe" one torch's SDPA uses: a query whose keys are all
masked gets zero weights (and a zero output) instead of NaN.
"""

from __future__ import annotations

import math

import numpy as np

from picograd.errors import ShapeError
from picograd.frontend.autocast import lower_precision
from picograd.frontend.base import broadcast_shape
from picograd.frontend.dtype import float32
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn.basic import dropout, linear
from picograd.nn.layers import Linear, uniform
from picograd.nn.module import Module


def _masked_softmax(scores: Tensor) -> Tensor:
    """softmax over the last dim; a row that is -inf everywhere gives zeros. A masked score
    (-inf) gives 0 by a select on the score: in a row with a finite score exp(-inf - peak)
    is 0 already, and in an all-masked row every element is selected (the NaNs of
    exp(-inf - -inf) and of their sum are never used). Every op after the row's max and sum
    is then an elementwise op of the scores' shape and `e` has two readers, so max, sum and
    division fuse into one kernel that computes exp twice rather than storing it."""
    peak = scores.max(-1, keepdim=True).detach()
    e = (scores - peak).exp()
    return (scores == -math.inf).where(0.0, e / e.sum(-1, keepdim=True))


def _additive(op: str, mask: Tensor, drop_where_true: bool) -> Tensor:
    """A mask as scores to add: a bool mask becomes 0 / -inf, a float one is kept."""
    if mask.dtype.is_bool:
        return mask.where(-math.inf if drop_where_true else 0.0,
                          0.0 if drop_where_true else -math.inf)
    if not mask.dtype.is_float:
        raise dtype_error(op, f"a mask must be bool or float, got {mask.dtype.name}")
    return mask


def _repeat_heads(t: Tensor, times: int) -> Tensor:
    """(..., H, S, E) -> (..., H*times, S, E), each head repeated `times` times in a row."""
    *lead, h, s, e = t.shape
    return t.unsqueeze(-3).expand(*lead, h, times, s, e).reshape(*lead, h * times, s, e)


def _attend(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None, dropout_p: float,
            scale: float) -> tuple[Tensor, Tensor]:
    """softmax(q k^T * scale + bias) (dropped out) @ v, and the weights."""
    scores = (q @ k.transpose(-2, -1)) * scale
    if bias is not None:
        scores = scores + bias
    weights = dropout(_masked_softmax(scores), dropout_p, dropout_p > 0)
    return weights @ v, weights


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """torch's `F.scaled_dot_product_attention`: q (..., L, E), k (..., S, E),
    v (..., S, Ev) -> (..., L, Ev) = softmax(q k^T * scale + mask) @ v, scale 1/sqrt(E).
    A bool mask keeps the True positions; `is_causal` keeps key j <= query i (top-left
    aligned); dropout (probability `dropout_p`) applies whenever dropout_p > 0. With
    `enable_gqa`, k and v have fewer heads (dim -3) than q, each serving a run of q's."""
    op = "scaled_dot_product_attention"
    query, key, value, attn_mask = lower_precision(op, query, key, value, attn_mask)
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor) or t.ndim < 2:
            shape = t.shape if isinstance(t, Tensor) else type(t).__name__
            raise shape_error(op, f"{name} must be a Tensor of at least 2 dims, got {shape}")
        if not t.dtype.is_float:
            raise dtype_error(op, f"{name} must be float, got {t.dtype.name}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise shape_error(op, f"query {query.shape}, key {key.shape} and value {value.shape}: "
                              "query and key need the same last dim, key and value the same "
                              "sequence length (dim -2)")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        heads, kv_heads = query.shape[-3], key.shape[-3]
        if kv_heads == 0 or heads % kv_heads or value.shape[-3] != kv_heads:
            raise shape_error(op, f"with enable_gqa, query's {heads} heads must be a multiple "
                                  f"of key's and value's, got {key.shape} and {value.shape}")
        key, value = _repeat_heads(key, heads // kv_heads), _repeat_heads(value,
                                                                          heads // kv_heads)
    if not 0.0 <= dropout_p <= 1.0:
        raise shape_error(op, f"dropout_p must be in [0, 1], got {dropout_p}")
    big_l, big_s = query.shape[-2], key.shape[-2]
    bias = None
    if is_causal:
        if attn_mask is not None:
            raise shape_error(op, "give either attn_mask or is_causal, not both")
        keep = np.tril(np.ones((big_l, big_s), np.bool_))
        bias = _additive(op, Tensor(keep, device=query.device), drop_where_true=False)
    elif attn_mask is not None:
        bias = _additive(op, attn_mask, drop_where_true=False)
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if dropout_p == 0.0 and (fused := _fused(query, key, value, bias, scale)) is not None:
        return fused
    return _attend(query, key, value, bias, dropout_p, scale)[0]


def _fused(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None, scale: float
           ) -> Tensor | None:
    """softmax(q k^T * scale + bias) @ v as one `pg_tensor.attention` kernel, which keeps a
    tile of score rows at a time (never the L x S matrix); None where it does not apply:
    not a CPU (the GPU targets compile the kernel, but its one-thread-per-tile schedule
    is slower there than the decomposition's kernels; docs/design.md), not float32, an
    empty dim, or shapes and devices the decomposition will name in its error. Its
    backward recomputes the weights from q and k (as FlashAttention's does) and applies
    softmax's rule with the row sums of `g * out`."""
    if not q.device.upper().startswith("CPU") or \
            any(t.dtype is not float32 for t in (q, k, v)) or \
            any(0 in t.shape for t in (q, k, v)) or \
            len({t.device for t in (q, k, v)}) != 1 or \
            (bias is not None and (bias.dtype is not float32 or bias.device != q.device)):
        return None
    big_l, e = q.shape[-2:]
    big_s, ev = v.shape[-2:]
    if k.shape[-2:] != (big_s, e):
        return None
    try:
        lead = broadcast_shape("attention", broadcast_shape("attention", q.shape[:-2],
                                                            k.shape[:-2]), v.shape[:-2])
        if bias is not None and broadcast_shape("attention", bias.shape,
                                                (*lead, big_l, big_s)) != (*lead, big_l, big_s):
            return None
    except ShapeError:
        return None
    qe, ke, ve = q.expand(*lead, big_l, e), k.expand(*lead, big_s, e), v.expand(*lead, big_s, ev)
    be = None if bias is None else bias.expand(*lead, big_l, big_s)
    scale = float(np.float32(scale))  # the kernel's scale is a float32, as the product's
    with no_grad():
        zeros = Tensor.full((*lead, big_l, big_s), 0.0, float32, q.device)
        # k stored transposed: the kernel adds q[i, e] * k[j, e] along j (one copy of k)
        k_rows = ke.transpose(-2, -1).contiguous().transpose(-2, -1)
        out = qe._make("attention", (qe, k_rows, ve, zeros if be is None else be), scale,
                       (*lead, big_l, ev))

    def gradients(g: Tensor) -> tuple[Tensor | None, ...]:
        scores = (qe @ ke.transpose(-2, -1)) * scale
        if be is not None:
            scores = scores + be
        weights = _masked_softmax(scores)
        d_scores = weights * (g @ ve.transpose(-2, -1) - (g * out).sum(-1, keepdim=True))
        return ((d_scores @ ke) * scale, (d_scores.transpose(-2, -1) @ qe) * scale,
                weights.transpose(-2, -1) @ g, d_scores)

    return out._with_gradient((qe, ke, ve, be), gradients)


def _xavier(shape: tuple[int, int], device: str) -> Tensor:
    """torch's xavier_uniform_: U(-b, b), b = sqrt(6 / (fan_in + fan_out))."""
    return uniform(shape, math.sqrt(6 / (shape[0] + shape[1])), device)


class MultiheadAttention(Module):
    """torch's `nn.MultiheadAttention` (without add_bias_kv / add_zero_attn). Parameters, with
    torch's names and initialisation: in_proj_weight (3E, E) when key and value have the
    embedding's size, else q_proj_weight (E, E), k_proj_weight (E, kdim) and v_proj_weight
    (E, vdim); in_proj_bias (3E,) zeros; out_proj (a Linear E -> E, bias zeros).

    forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (output, weights or None): inputs
    (L, N, E) (or (N, L, E) with batch_first, or unbatched (L, E)); weights (N, L, S),
    or (N, heads, L, S) without averaging."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 batch_first: bool = False, kdim: int | None = None, vdim: int | None = None,
                 device: str = "CPU"):
        super().__init__()
        op = "MultiheadAttention"
        if num_heads < 1 or embed_dim % num_heads:
            raise shape_error(op, f"embed_dim {embed_dim} must be divisible by num_heads "
                                  f"{num_heads}")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.batch_first, self.head_dim = batch_first, embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        e = embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight: Tensor | None = _xavier((3 * e, e), device)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight: Tensor | None = _xavier((e, e), device)
            self.k_proj_weight: Tensor | None = _xavier((e, self.kdim), device)
            self.v_proj_weight: Tensor | None = _xavier((e, self.vdim), device)
        zeros = np.zeros(3 * e, np.float32)
        self.in_proj_bias = Tensor(zeros, device=device, requires_grad=True) if bias else None
        self.out_proj = Linear(e, e, bias=bias, device=device)
        if bias:
            self.out_proj.bias = Tensor(np.zeros(e, np.float32), device=device,
                                        requires_grad=True)

    def _projections(self) -> tuple[Tensor, Tensor, Tensor]:
        if self.in_proj_weight is not None:
            w = self.in_proj_weight
            e = self.embed_dim
            return w[:e], w[e:2 * e], w[2 * e:]
        assert self.q_proj_weight is not None and self.k_proj_weight is not None
        assert self.v_proj_weight is not None
        return self.q_proj_weight, self.k_proj_weight, self.v_proj_weight

    def _heads(self, x: Tensor, weight: Tensor, part: int) -> Tensor:
        """(N, T, D) projected and split into heads: (N, heads, T, head_dim)."""
        e = self.embed_dim
        b = None if self.in_proj_bias is None else self.in_proj_bias[part * e:(part + 1) * e]
        y = linear(x, weight, b)
        n, t = x.shape[:2]
        return y.reshape(n, t, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def _mask_bias(self, n: int, big_l: int, big_s: int, key_padding_mask: Tensor | None,
                   attn_mask: Tensor | None) -> Tensor | None:
        """The masks as one additive bias broadcast to (N, heads, L, S)."""
        op, h = "MultiheadAttention", self.num_heads
        bias = None
        if attn_mask is not None:
            if attn_mask.shape == (big_l, big_s):
                bias = _additive(op, attn_mask, drop_where_true=True)
            elif attn_mask.shape == (n * h, big_l, big_s):
                bias = _additive(op, attn_mask, True).reshape(n, h, big_l, big_s)
            else:
                raise shape_error(op, f"attn_mask must be ({big_l}, {big_s}) or "
                                      f"({n * h}, {big_l}, {big_s}), got {attn_mask.shape}")
        if key_padding_mask is not None:
            if key_padding_mask.shape not in ((n, big_s), (big_s,)):
                raise shape_error(op, f"key_padding_mask must be ({n}, {big_s}), got "
                                      f"{key_padding_mask.shape}")
            pad = _additive(op, key_padding_mask, True).reshape(-1, 1, 1, big_s)
            bias = pad if bias is None else bias + pad
        return bias

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        op = "MultiheadAttention"
        if is_causal and attn_mask is None:
            raise shape_error(op, "is_causal is a hint that attn_mask is the causal mask: it "
                                  "needs attn_mask")
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        # now (N, T, D)
        if query.ndim != 3 or key.ndim != 3 or value.ndim != 3 or \
                query.shape[-1] != self.embed_dim or key.shape[-1] != self.kdim or \
                value.shape[-1] != self.vdim or key.shape[:2] != value.shape[:2] or \
                query.shape[0] != key.shape[0]:
            raise shape_error(op, f"query {query.shape}, key {key.shape}, value {value.shape} "
                                  f"(batch first here) do not fit embed_dim {self.embed_dim}, "
                                  f"kdim {self.kdim}, vdim {self.vdim}")
        n, big_l, big_s = query.shape[0], query.shape[1], key.shape[1]
        wq, wk, wv = self._projections()
        q, k, v = self._heads(query, wq, 0), self._heads(key, wk, 1), self._heads(value, wv, 2)
        bias = self._mask_bias(n, big_l, big_s, key_padding_mask, attn_mask)
        p = self.dropout if self.training else 0.0
        scale = 1 / math.sqrt(self.head_dim)
        # without weights to return, the fused kernel (which never holds them)
        fused = None if need_weights or p else _fused(q, k, v, bias, scale)
        out, weights = (fused, None) if fused is not None else _attend(q, k, v, bias, p, scale)
        out = self.out_proj(out.permute(0, 2, 1, 3).reshape(n, big_l, self.embed_dim))
        if unbatched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        assert weights is not None  # need_weights took the decomposition
        if average_attn_weights:
            weights = weights.mean(1)
        return out, weights.squeeze(0) if unbatched else weights

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"dropout={self.dropout}, batch_first={self.batch_first}")
