"""Transformer layers against torch: torch's state dicts load unchanged, and outputs and
gradients match (eval mode, so dropout is off), with masks, norm_first, gelu, batch_first."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import picograd as pg
import picograd.nn as nn
from picograd.errors import ShapeError

_RNG = np.random.default_rng(0)


def _data(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


def _load(ours: Any, theirs: Any) -> None:
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict(state)
    ours.eval()
    theirs.eval()


def _compare(device: str, ours: Any, theirs: Any, out: pg.Tensor, tout: torch.Tensor,
             inputs: list[pg.Tensor], tinputs: list[torch.Tensor]) -> None:
    up = _data(*out.shape)
    (out * pg.Tensor(up, device=device)).sum().backward()
    (tout * torch.tensor(up)).sum().backward()
    params, tparams = dict(ours.named_parameters()), dict(theirs.named_parameters())
    pg.realize(out, *(p.grad for p in params.values() if p.grad is not None))
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-4, atol=1e-4)
    for name, p in params.items():
        tgrad = tparams[name].grad
        if tgrad is None:
            continue
        assert p.grad is not None, name
        np.testing.assert_allclose(p.grad.numpy(), tgrad.numpy(), rtol=1e-3, atol=1e-4,
                                   err_msg=name)
    for x, tx in zip(inputs, tinputs, strict=True):
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-4)


def _leaf(a: np.ndarray, device: str) -> tuple[pg.Tensor, torch.Tensor]:
    return pg.Tensor(a, device=device).requires_grad_(), torch.tensor(a, requires_grad=True)


@pytest.mark.parametrize(("norm_first", "activation", "batch_first"),
                         [(False, "relu", False), (True, "gelu", True)])
def test_encoder_layer(device: str, norm_first: bool, activation: str,
                       batch_first: bool) -> None:
    kw = dict(dim_feedforward=16, norm_first=norm_first, activation=activation,
              batch_first=batch_first)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, **kw)
    ours = nn.TransformerEncoderLayer(8, 2, device=device, **kw)
    _load(ours, theirs)
    x, tx = _leaf(_data(2, 5, 8) if batch_first else _data(5, 2, 8), device)
    padding = np.zeros((2, 5), bool)
    padding[1, 3:] = True
    out = ours(x, src_key_padding_mask=pg.Tensor(padding, device=device))
    tout = theirs(tx, src_key_padding_mask=torch.tensor(padding))
    _compare(device, ours, theirs, out, tout, [x], [tx])


def test_encoder_stack_causal(device: str) -> None:
    theirs = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2,
        norm=torch.nn.LayerNorm(8), enable_nested_tensor=False)
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True,
                                                            device=device), 2,
                                 norm=nn.LayerNorm(8, device=device))
    _load(ours, theirs)
    x, tx = _leaf(_data(2, 4, 8), device)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    out = ours(x, mask=pg.Tensor(mask.numpy(), device=device), is_causal=True)
    tout = theirs(tx, mask=mask, is_causal=True)
    _compare(device, ours, theirs, out, tout, [x], [tx])
    # the flag alone builds the same causal mask
    np.testing.assert_allclose(ours(x, is_causal=True).numpy(), tout.detach().numpy(),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer(device: str, norm_first: bool) -> None:
    theirs = torch.nn.TransformerDecoderLayer(8, 2, 16, norm_first=norm_first)
    ours = nn.TransformerDecoderLayer(8, 2, 16, norm_first=norm_first, device=device)
    _load(ours, theirs)
    tgt, ttgt = _leaf(_data(3, 2, 8), device)
    mem, tmem = _leaf(_data(4, 2, 8), device)
    bool_mask = np.triu(np.ones((3, 3), bool), 1)
    out = ours(tgt, mem, tgt_mask=pg.Tensor(bool_mask, device=device))
    tout = theirs(ttgt, tmem, tgt_mask=torch.tensor(bool_mask))
    _compare(device, ours, theirs, out, tout, [tgt, mem], [ttgt, tmem])


def test_transformer(device: str) -> None:
    torch.manual_seed(0)
    theirs = torch.nn.Transformer(8, 2, 1, 1, 16, batch_first=True)
    ours = nn.Transformer(8, 2, 1, 1, 16, batch_first=True, device=device)
    _load(ours, theirs)
    src, tsrc = _leaf(_data(2, 5, 8), device)
    tgt, ttgt = _leaf(_data(2, 3, 8), device)
    mask = nn.Transformer.generate_square_subsequent_mask(3, device=device)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(mask.numpy(), tmask.numpy())
    memory_padding = np.zeros((2, 5), bool)
    memory_padding[0, 4] = True
    out = ours(src, tgt, tgt_mask=mask,
               memory_key_padding_mask=pg.Tensor(memory_padding, device=device))
    tout = theirs(tsrc, ttgt, tgt_mask=tmask,
                  memory_key_padding_mask=torch.tensor(memory_padding))
    _compare(device, ours, theirs, out, tout, [src, tgt], [tsrc, ttgt])


def test_clones_are_independent_and_initialised_like_torch() -> None:
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
    w0 = encoder.layers[0].linear1.weight
    w1 = encoder.layers[1].linear1.weight
    assert w0 is not w1
    np.testing.assert_array_equal(w0.numpy(), w1.numpy())  # copies of one layer, as torch's
    model = nn.Transformer(16, 2, 1, 1, 32)
    weight = model.encoder.layers[0].linear1.weight.numpy()
    bound = np.sqrt(6 / (16 + 32))
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.8 * bound


def test_dropout_in_training_and_errors() -> None:
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = pg.Tensor(_data(3, 2, 8))
    layer.eval()
    a = layer(x).numpy()
    np.testing.assert_allclose(layer(x).numpy(), a)
    layer.train()
    assert not np.allclose(layer(x).numpy(), a)
    with pytest.raises(ValueError):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(ShapeError):
        nn.Transformer(8, 2, 1, 1, 16)(pg.ones(3, 2, 8), pg.ones(3, 4, 8))
