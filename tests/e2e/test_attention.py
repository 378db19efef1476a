"""Attention (picograd.nn.attention) against torch: `scaled_dot_product_attention` with
causal, bool and float masks, a custom scale and grouped-query heads, and
`nn.MultiheadAttention` loaded with a torch layer's state dict (seq-first and batch-first,
unbatched, kdim/vdim, no bias, key padding and attention masks, per-head weights): outputs,
attention weights and the gradients of the inputs and every parameter on every device;
dropout in training only; and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.parser import Parser

import picograd as pg
from picograd.compiler.driver import compile_module
from picograd.compiler.pipelines import DEFAULT_PIPELINES, run_pipeline
from picograd.dialects import make_context
from picograd.interpreter import run
from picograd.nn import MultiheadAttention
from picograd.nn import functional as F

from .helpers import assert_forward_and_grads_match

torch = pytest.importorskip("torch", reason="torch is the oracle of the attention tests")
TF = torch.nn.functional

rng = np.random.default_rng(14)


def _random(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _close(ours: pg.Tensor, theirs: Any) -> None:
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-4, atol=1e-5)


def _keep_mask(*shape: int) -> np.ndarray:
    mask = rng.random(shape) > 0.4
    mask[..., 0] = True  # every query keeps a key
    return mask


# name -> (q, k, v shapes, the mask or None, keyword arguments)
SDPA_CASES: dict[str, tuple[Any, ...]] = {
    "plain": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), None, {}),
    "causal": ((1, 2, 4, 3), (1, 2, 6, 3), (1, 2, 6, 3), None, {"is_causal": True}),
    "scale_3d": ((2, 4, 3), (2, 5, 3), (2, 5, 2), None, {"scale": 0.3}),
    "bool_mask": ((2, 4, 5), (2, 6, 5), (2, 6, 3), _keep_mask(4, 6), {}),
    "float_mask": ((2, 2, 4, 5), (2, 2, 6, 5), (2, 2, 6, 3), _random(2, 1, 4, 6), {}),
    "gqa": ((1, 4, 3, 2), (1, 2, 5, 2), (1, 2, 5, 3), None, {"enable_gqa": True}),
    # the fused kernel's tiles: 4 queries at once, several tiles per work item (more rows
    # than the 256 in flight), lanes along S and Ev, and odd sizes that take no lanes
    "tiles": ((2, 3, 64, 16), (2, 3, 48, 16), (2, 3, 48, 32), _keep_mask(64, 48), {}),
    "odd_sizes": ((3, 7, 5), (3, 9, 5), (3, 9, 3), None, {"is_causal": True}),
    "broadcast_batch": ((2, 3, 4, 8), (1, 3, 6, 8), (2, 1, 6, 4), None, {}),
}


@pytest.mark.parametrize("name", list(SDPA_CASES))
def test_sdpa_matches_torch(device: str, name: str) -> None:
    qs, ks, vs, mask, kwargs = SDPA_CASES[name]
    arrays = [_random(*qs), _random(*ks), _random(*vs)]
    ours = [pg.Tensor(a, device=device, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = F.scaled_dot_product_attention(
        *ours, attn_mask=None if mask is None else pg.Tensor(mask, device=device), **kwargs)
    want = TF.scaled_dot_product_attention(
        *theirs, attn_mask=None if mask is None else torch.tensor(mask), **kwargs)
    assert_forward_and_grads_match(out, want, ours, theirs, _random(*out.shape), device, atol=1e-5)


def test_a_query_with_every_key_masked_gets_zeros(device: str) -> None:
    q, k, v = _random(4, 5), _random(6, 5), _random(6, 3)
    mask = np.ones((4, 6), np.bool_)
    mask[1] = False
    out = F.scaled_dot_product_attention(*(pg.Tensor(x, device=device) for x in (q, k, v)),
                                         attn_mask=pg.Tensor(mask, device=device))
    want = TF.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v),
                                           attn_mask=torch.tensor(mask))
    _close(out, want)
    assert not out.numpy()[1].any()


def test_a_float_mask_gets_its_gradient(device: str) -> None:
    arrays = [_random(2, 4, 8), _random(2, 6, 8), _random(2, 6, 3), _random(4, 6)]
    ours = [pg.Tensor(a, device=device, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = F.scaled_dot_product_attention(*ours[:3], attn_mask=ours[3])
    want = TF.scaled_dot_product_attention(*theirs[:3], attn_mask=theirs[3])
    assert_forward_and_grads_match(out, want, ours, theirs, _random(*out.shape), device, atol=1e-5)


def test_the_attention_kernel_on_every_target(device: str) -> None:
    """The GPU targets compile `pg_tensor.attention` too (the frontend gives it only to the
    CPUs, where it is faster than the decomposition): the kernel through the device's own
    pipeline against stage 1's interpreter, a fully masked row included."""
    target = {"CPU:LLVM": "llvm", "CPU:C": "c", "CUDA": "ptx", "WEBGPU": "wgsl"}[device]
    arrays = [_random(2, 8, 4), _random(2, 6, 4), _random(2, 6, 16), _random(2, 8, 6)]
    arrays[3][1, 5] = -np.inf
    text = ("builtin.module {\n  func.func @main(%q: tensor<2x8x4xf32>, %k: tensor<2x6x4xf32>,"
            " %v: tensor<2x6x16xf32>, %b: tensor<2x8x6xf32>) -> tensor<2x8x16xf32> {\n"
            "    %r = pg_tensor.attention %q, %k, %v, %b scale 0.5 : tensor<2x8x4xf32>, "
            "tensor<2x6x4xf32>, tensor<2x6x16xf32>, tensor<2x8x6xf32> -> tensor<2x8x16xf32>\n"
            "    func.return %r : tensor<2x8x16xf32>\n  }\n}\n")
    (want,) = run(Parser(make_context(), text).parse_module(), arrays)
    module = run_pipeline(Parser(make_context(), text).parse_module(),
                          DEFAULT_PIPELINES[target])
    (got,) = compile_module(module, target).run(arrays)
    np.testing.assert_allclose(np.asarray(got).reshape(want.shape), want, rtol=1e-5, atol=1e-6)


def test_infinities_and_nan_in_the_scores_as_torch() -> None:
    """A +inf score, a NaN and a row masked but for one key: the fused kernel's peak and
    weights give torch's NaNs and values."""
    q, k, v = _random(3, 4), _random(5, 4), _random(5, 2)
    bias = np.zeros((3, 5), np.float32)
    bias[0, 2] = np.inf
    bias[1, 1] = np.nan
    bias[2, 1:] = -np.inf
    out = F.scaled_dot_product_attention(pg.Tensor(q), pg.Tensor(k), pg.Tensor(v),
                                         attn_mask=pg.Tensor(bias))
    want = TF.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v),
                                           attn_mask=torch.tensor(bias))
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert np.isnan(out.numpy()[:2]).all() and not np.isnan(out.numpy()[2]).any()


# name -> (layer keyword arguments, forward options: unbatched, key padding, attn mask, ...)
MHA_CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "seq_first": ({}, {}),
    "batch_first_causal_no_weights": ({"batch_first": True}, {"need_weights": False,
                                                              "mask": "causal",
                                                              "is_causal": True}),
    "kdim_vdim_float_mask_per_head": ({"kdim": 3, "vdim": 5}, {"average_attn_weights": False,
                                                               "mask": "float"}),
    "no_bias_masks": ({"bias": False, "batch_first": True}, {"padding": True, "mask": "bool"}),
    "unbatched_padding": ({}, {"unbatched": True, "padding": True}),
}

E, HEADS, L, S, N = 4, 2, 3, 5, 2


def _masks(options: dict[str, Any]) -> dict[str, np.ndarray]:
    masks = {}
    if options.get("padding"):
        padding = rng.random((S,) if options.get("unbatched") else (N, S)) > 0.6
        padding[..., 0] = False  # True = padding, ignored; keep one key
        masks["key_padding_mask"] = padding
    kind = options.get("mask")
    if kind == "bool":
        drop = rng.random((L, S)) > 0.7
        drop[:, 0] = False
        masks["attn_mask"] = drop
    elif kind == "float":
        masks["attn_mask"] = _random(N * HEADS, L, S)
    elif kind == "causal":
        masks["attn_mask"] = np.triu(np.ones((L, S), np.bool_), 1)
    return masks


@pytest.mark.parametrize("name", list(MHA_CASES))
def test_multihead_attention_matches_torch(device: str, name: str) -> None:
    config, options = MHA_CASES[name]
    pg.manual_seed(0)
    ours = MultiheadAttention(E, HEADS, device=device, **config)
    theirs = torch.nn.MultiheadAttention(E, HEADS, **config)
    state = theirs.state_dict()
    assert list(state) == list(ours.state_dict())
    ours.load_state_dict({k: v.numpy() for k, v in state.items()})
    kdim, vdim = config.get("kdim", E), config.get("vdim", E)

    def shape(t: int, d: int) -> tuple[int, ...]:
        if options.get("unbatched"):
            return (t, d)
        return (N, t, d) if config.get("batch_first") else (t, N, d)

    arrays = [_random(*shape(L, E)), _random(*shape(S, kdim)), _random(*shape(S, vdim))]
    inputs = [pg.Tensor(a, device=device, requires_grad=True) for a in arrays]
    tinputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    flags = {k: options[k] for k in ("need_weights", "average_attn_weights", "is_causal")
             if k in options}
    masks = _masks(options)
    out, weights = ours(*inputs, **flags, **{k: pg.Tensor(m, device=device)
                                             for k, m in masks.items()})
    want, twant = theirs(*tinputs, **flags, **{k: torch.tensor(m) for k, m in masks.items()})
    assert out.shape == tuple(want.shape)
    assert (weights is None) == (twant is None)
    upstream = _random(*out.shape)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    params = dict(ours.named_parameters())
    pg.realize(out, *(t.grad for t in inputs), *(p.grad for p in params.values()))
    _close(out, want)
    if weights is not None:
        assert weights.shape == tuple(twant.shape)
        _close(weights, twant)
    for t, tt in zip(inputs, tinputs, strict=True):
        _close(t.grad, tt.grad)
    tparams = dict(theirs.named_parameters())
    assert list(params) == list(tparams)
    for pname, p in params.items():
        _close(p.grad, tparams[pname].grad)


def test_parameters_and_init_follow_torch() -> None:
    pg.manual_seed(2)
    layer = MultiheadAttention(8, 2)
    assert layer.in_proj_weight is not None and layer.in_proj_weight.shape == (24, 8)
    assert np.abs(layer.in_proj_weight.numpy()).max() <= (6 / 32) ** 0.5  # xavier uniform
    assert layer.in_proj_bias is not None and not layer.in_proj_bias.numpy().any()
    assert layer.out_proj.bias is not None and not layer.out_proj.bias.numpy().any()
    separate = MultiheadAttention(8, 2, kdim=3, vdim=5)
    assert [name for name, _ in separate.named_parameters()] == [
        "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "out_proj.weight",
        "out_proj.bias"]
    assert [n for n, _ in MultiheadAttention(8, 2, bias=False).named_parameters()] == [
        "in_proj_weight", "out_proj.weight"]


def test_dropout_applies_in_training_only() -> None:
    pg.manual_seed(3)
    layer = MultiheadAttention(4, 2, dropout=0.5)
    x = pg.Tensor(_random(3, 2, 4))
    out, weights = layer(x, x, x, average_attn_weights=False)
    assert out.shape == (3, 2, 4) and weights is not None and weights.shape == (2, 2, 3, 3)
    dropped = weights.numpy()
    layer.eval()
    first, kept = layer(x, x, x, average_attn_weights=False)
    second, _ = layer(x, x, x)
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    assert kept is not None and np.allclose(kept.numpy().sum(-1), 1, atol=1e-6)
    # in training each weight was zeroed or scaled by 1 / (1 - p)
    zeroed = dropped == 0
    assert zeroed.any() and not zeroed.all()
    np.testing.assert_allclose(dropped[~zeroed], 2 * kept.numpy()[~zeroed], rtol=1e-5)
    out = F.scaled_dot_product_attention(x, x, x, dropout_p=0.5)
    assert out.shape == (3, 2, 4)


Q = pg.Tensor.zeros(2, 3, 4)


@pytest.mark.parametrize("make,words", [
    (lambda: F.scaled_dot_product_attention(Q, pg.Tensor.zeros(2, 3, 5), Q), ("(2, 3, 5)",)),
    (lambda: F.scaled_dot_product_attention(Q, Q, Q, attn_mask=pg.Tensor.zeros(3, 3),
                                            is_causal=True), ("not both",)),
    (lambda: F.scaled_dot_product_attention(Q, Q, Q, dropout_p=2.0), ("dropout_p",)),
    (lambda: F.scaled_dot_product_attention(pg.Tensor.zeros(4), Q, Q), ("query", "(4,)")),
    (lambda: MultiheadAttention(6, 4), ("embed_dim 6", "num_heads 4")),
    (lambda: MultiheadAttention(4, 2)(Q, Q, Q, is_causal=True), ("is_causal", "attn_mask")),
    (lambda: MultiheadAttention(4, 2)(Q, Q, Q, attn_mask=pg.Tensor.zeros(3, 3)),
     ("attn_mask", "(3, 3)")),
    (lambda: MultiheadAttention(4, 2)(Q, Q, Q, key_padding_mask=pg.Tensor.zeros(2, 2)),
     ("key_padding_mask", "(3, 2)")),
    (lambda: MultiheadAttention(5, 1)(Q, Q, Q), ("embed_dim 5",)),
])
def test_errors_name_the_op_and_the_shapes(make, words: tuple[str, ...]) -> None:
    with pytest.raises(pg.ShapeError) as info:
        make()
    message = str(info.value)
    assert "attention" in message or "MultiheadAttention" in message
    for word in words:
        assert word in message
    assert __file__ in message
