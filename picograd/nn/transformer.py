"""Transformer layers, as torch's (same parameter names, so torch's state dicts load):
TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder,
Transformer, built on `MultiheadAttention`.

    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, batch_first=True, norm_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=2)
    mask = nn.Transformer.generate_square_subsequent_mask(T)
    y = encoder(x, mask=mask, is_causal=True)

Masks as torch reads them: a bool `*_mask` or `*_key_padding_mask` is True where attention is
not allowed; a float mask is added to the scores. `is_causal=True` without a mask builds the
causal mask (torch's layers require the mask and treat the flag as a hint).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from picograd.frontend.lazy import shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn.attention import MultiheadAttention
from picograd.nn.basic import dropout
from picograd.nn.containers import ModuleList
from picograd.nn.layers import Linear, uniform
from picograd.nn.module import Module
from picograd.nn.norm import LayerNorm

Activation = str | Callable[[Tensor], Tensor]


def _activation(activation: Activation) -> Callable[[Tensor], Tensor]:
    if callable(activation):
        return activation
    if activation == "relu":
        return Tensor.relu
    if activation == "gelu":
        return Tensor.gelu
    raise ValueError(f"activation should be relu/gelu, not {activation}")


def _causal_mask(size: int, device: str) -> Tensor:
    """(size, size) float mask: 0 on and below the diagonal, -inf above (torch's
    `generate_square_subsequent_mask`)."""
    return Tensor(np.triu(np.full((size, size), -np.inf, np.float32), 1), device=device)


def _mask_for(mask: Tensor | None, is_causal: bool, x: Tensor, batch_first: bool
              ) -> Tensor | None:
    if mask is None and is_causal:
        seq = x.shape[-2] if (batch_first or x.ndim == 2) else x.shape[0]
        return _causal_mask(seq, x.device)
    return mask


class _Block(Module):
    """The parts encoder and decoder layers share: the feed-forward block and the dropouts."""

    def _init_block(self, d_model: int, dim_feedforward: int, dropout_p: float,
                    activation: Activation, norm_first: bool, bias: bool, device: str) -> None:
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device)
        self.dropout_p, self.norm_first = dropout_p, norm_first
        self.activation = _activation(activation)

    def _drop(self, x: Tensor) -> Tensor:
        return dropout(x, self.dropout_p, self.training)

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self._drop(self.linear2(self._drop(self.activation(self.linear1(x)))))


class TransformerEncoderLayer(_Block):
    """Self-attention and a feed-forward block, each with a residual and a LayerNorm (after
    the residual, or before the block with `norm_first`)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: str = "CPU"):
        super().__init__()
        self._config = dict(d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward,
                            dropout=dropout, activation=activation,
                            layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                            norm_first=norm_first, bias=bias, device=device)
        self.batch_first = batch_first
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, device=device)
        self._init_block(d_model, dim_feedforward, dropout, activation, norm_first, bias,
                         device)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device)

    def _self_attention(self, x: Tensor, mask: Tensor | None, padding: Tensor | None
                        ) -> Tensor:
        return self._drop(self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                                         need_weights=False)[0])

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False
                ) -> Tensor:
        mask = _mask_for(src_mask, is_causal, src, self.batch_first)
        x = src
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), mask, src_key_padding_mask)
            return x + self._feed_forward(self.norm2(x))
        x = self.norm1(x + self._self_attention(x, mask, src_key_padding_mask))
        return self.norm2(x + self._feed_forward(x))


class TransformerDecoderLayer(_Block):
    """Self-attention, attention over the encoder's output (`memory`), and a feed-forward
    block, each with a residual and a LayerNorm."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: str = "CPU"):
        super().__init__()
        self._config = dict(d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward,
                            dropout=dropout, activation=activation,
                            layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                            norm_first=norm_first, bias=bias, device=device)
        self.batch_first = batch_first
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, device=device)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, device=device)
        self._init_block(d_model, dim_feedforward, dropout, activation, norm_first, bias,
                         device)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device)

    def _attend(self, attn: MultiheadAttention, x: Tensor, mem: Tensor, mask: Tensor | None,
                padding: Tensor | None) -> Tensor:
        return self._drop(attn(x, mem, mem, attn_mask=mask, key_padding_mask=padding,
                               need_weights=False)[0])

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        tgt_mask = _mask_for(tgt_mask, tgt_is_causal, tgt, self.batch_first)
        x = tgt
        if self.norm_first:
            h = self.norm1(x)
            x = x + self._attend(self.self_attn, h, h, tgt_mask, tgt_key_padding_mask)
            x = x + self._attend(self.multihead_attn, self.norm2(x), memory, memory_mask,
                                 memory_key_padding_mask)
            return x + self._feed_forward(self.norm3(x))
        x = self.norm1(x + self._attend(self.self_attn, x, x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._attend(self.multihead_attn, x, memory, memory_mask,
                                        memory_key_padding_mask))
        return self.norm3(x + self._feed_forward(x))


def _clones(layer: Module, n: int) -> ModuleList:
    """`n` copies of `layer`, each with its own parameters holding `layer`'s values (as
    torch's deep copies)."""
    config: dict[str, Any] = layer.__dict__["_config"]
    state = layer.state_dict()
    copies = []
    for _ in range(n):
        copy = type(layer)(**config)
        copy.load_state_dict(state)
        copies.append(copy)
    return ModuleList(copies)


class TransformerEncoder(Module):
    """`num_layers` copies of `encoder_layer`, then `norm` (if given)."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True):
        super().__init__()
        del enable_nested_tensor, mask_check  # torch's fast-path switches: nothing to switch
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool | None = None
                ) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """`num_layers` copies of `decoder_layer`, then `norm` (if given)."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """torch's `nn.Transformer`: an encoder and a decoder stack, each ending in a LayerNorm;
    weight matrices initialised xavier-uniform as torch's."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = "relu",
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: str = "CPU"):
        super().__init__()
        common: dict[str, Any] = dict(dim_feedforward=dim_feedforward, dropout=dropout,
                      activation=activation, layer_norm_eps=layer_norm_eps,
                      batch_first=batch_first, norm_first=norm_first, bias=bias,
                      device=device)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **common), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **common), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for module in self.modules():
            for name, value, is_buffer in list(module._direct_tensors()):
                if not is_buffer and value.ndim > 1:
                    fan_out, fan_in = value.shape[0], math.prod(value.shape[1:])
                    bound = math.sqrt(6 / (fan_in + fan_out))
                    setattr(module, name, uniform(value.shape, bound, value.device))

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: str = "CPU") -> Tensor:
        return _causal_mask(sz, device)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and tgt.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise shape_error("Transformer", "the batch number of src and tgt must be equal, "
                                             f"got {src.shape} and {tgt.shape}")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise shape_error("Transformer", f"the feature number of src and tgt must be "
                                             f"d_model={self.d_model}, got {src.shape} and "
                                             f"{tgt.shape}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
