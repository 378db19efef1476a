"""picograd.onnx's com.microsoft contrib ops against onnxruntime: one-node models of every
op, with each optional input and output onnxruntime accepts, in float32 and float16.
onnxruntime's CPU provider runs float16 nodes that have only a float kernel by casting
around them, so it is the reference for float16 too; BiasAdd has no CPU kernel at all and
is compared with its definition in numpy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import picograd.onnx as pgx
from picograd.onnx.errors import OnnxModelError, OnnxUnsupportedError
from tests.e2e.onnx_helpers import assert_matches_ort, elem_type, onnxruntime, ort_run

R = np.random.default_rng(0)
MS = "com.microsoft"
F16 = {"rtol": 2e-3, "atol": 2e-3}
TOL = {np.float32: {"rtol": 1e-5, "atol": 1e-5}, np.float16: F16}

Output = tuple[Any, tuple[int, ...]] | None
Inputs = Sequence[tuple[str, np.ndarray | None]]


def rand(*shape: int, dtype: Any = np.float32, scale: float = 1.0) -> np.ndarray:
    return (R.standard_normal(shape) * scale).astype(dtype)


def ms_model(op: str, inputs: Inputs, outputs: list[Output],
             attrs: dict[str, Any] | None = None, constants: tuple[str, ...] = (),
             domain: str = MS) -> onnx.ModelProto:
    """A model of one `op` node of `domain`: `inputs` in the node's order (None: omitted),
    graph inputs except the names in `constants` (initializers); `outputs` the node's
    outputs as (numpy dtype, shape), None for one omitted. onnx's shape inference knows no
    contrib op, so the outputs' types are declared here."""
    names = [n if a is not None else "" for n, a in inputs]
    outs = [f"y{i}" if o is not None else "" for i, o in enumerate(outputs)]
    node = helper.make_node(op, names, outs, domain=domain, **(attrs or {}))
    given = [(n, a) for n, a in inputs if a is not None]
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, elem_type(a), a.shape) for n, a in given
         if n not in constants],
        [helper.make_tensor_value_info(name, elem_type(np.empty(0, o[0])), o[1])
         for name, o in zip(outs, outputs, strict=True) if o is not None],
        [numpy_helper.from_array(a, n) for n, a in given if n in constants])
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def feeds_of(inputs: Inputs, constants: tuple[str, ...] = ()
             ) -> dict[str, np.ndarray]:
    return {n: a for n, a in inputs if a is not None and n not in constants}


def check(op: str, inputs: Inputs, outputs: list[Output],
          attrs: dict[str, Any] | None = None, constants: tuple[str, ...] = (),
          tol: dict[str, float] | None = None) -> None:
    """The node's outputs from picograd equal onnxruntime's (dtypes, shapes, values)."""
    model = ms_model(op, inputs, outputs, attrs, constants)
    tol = tol or TOL[np.float32]
    assert_matches_ort(model, feeds_of(inputs, constants), tol["rtol"], tol["atol"])


def rejected(op: str, inputs: Inputs, outputs: list[Output],
             attrs: dict[str, Any] | None = None, match: str = "") -> None:
    """Loading the node fails with OnnxUnsupportedError naming the node and `match`."""
    model = ms_model(op, inputs, outputs, attrs)
    model.graph.node[0].name = "the_node"
    with pytest.raises(OnnxUnsupportedError, match=rf"the_node.*{match}"):
        pgx.load(model)


# ── the GELU family and BiasAdd ─────────────────────────────────────────────

DTYPES = [np.float32, np.float16]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,attrs", [("Gelu", {}), ("FastGelu", {}), ("QuickGelu", {}),
                                      ("QuickGelu", {"alpha": 1.0})])
def test_gelu_unary(op: str, attrs: dict[str, Any], dtype: Any) -> None:
    x = rand(2, 3, 16, dtype=dtype, scale=3.0)
    check(op, [("x", x)], [(dtype, x.shape)], attrs, tol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["BiasGelu", "FastGelu"])
def test_gelu_with_bias(op: str, dtype: Any) -> None:
    x, bias = rand(2, 3, 16, dtype=dtype, scale=3.0), rand(16, dtype=dtype)
    check(op, [("x", x), ("bias", bias)], [(dtype, x.shape)], tol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_bias_add(dtype: Any) -> None:
    x, bias, skip = rand(2, 3, 8, dtype=dtype), rand(8, dtype=dtype), rand(2, 3, 8, dtype=dtype)
    model = ms_model("BiasAdd", [("x", x), ("bias", bias), ("skip", skip)],
                     [(dtype, x.shape)])
    (got,) = pgx.load(model).run(None, {"x": x, "bias": bias, "skip": skip})
    want = (x.astype(np.float32) + bias.astype(np.float32) + skip.astype(np.float32))
    assert got.dtype == dtype
    np.testing.assert_allclose(got.astype(np.float32), want.astype(dtype).astype(np.float32),
                               TOL[dtype]["rtol"], TOL[dtype]["atol"])


# ── skip layer norms ────────────────────────────────────────────────────────

SKIP_OUTPUTS = [(True, False, False, False), (True, True, True, True),
                (True, False, True, False), (True, False, False, True)]


def _skip_outputs(which: tuple[bool, ...], dtype: Any, shape: tuple[int, ...]
                  ) -> list[Output]:
    stat = (*shape[:-1], 1)
    kinds: list[Output] = [(dtype, shape), (np.float32, stat), (np.float32, stat),
                           (dtype, shape)]
    outs = [k if on else None for k, on in zip(kinds, which, strict=True)]
    while outs[-1] is None:
        outs.pop()
    return outs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("outputs", SKIP_OUTPUTS)
@pytest.mark.parametrize("beta,bias", [(False, False), (True, False), (False, True),
                                       (True, True)])
def test_skip_layer_norm(beta: bool, bias: bool, outputs: tuple[bool, ...], dtype: Any
                         ) -> None:
    x, skip = rand(2, 3, 16, dtype=dtype, scale=2.0), rand(2, 3, 16, dtype=dtype)
    inputs = [("x", x), ("skip", skip), ("gamma", rand(16, dtype=dtype)),
              ("beta", rand(16, dtype=dtype) if beta else None),
              ("bias", rand(16, dtype=dtype) if bias else None)]
    while inputs[-1][1] is None:
        inputs.pop()
    check("SkipLayerNormalization", inputs, _skip_outputs(outputs, dtype, x.shape),
          {"epsilon": 1e-5}, tol=TOL[dtype])


@pytest.mark.parametrize("skip_shape", [(3, 16), (1, 3, 16)])
def test_skip_layer_norm_broadcast_skip(skip_shape: tuple[int, ...]) -> None:
    x = rand(2, 3, 16)
    inputs = [("x", x), ("skip", rand(*skip_shape)), ("gamma", rand(16)),
              ("beta", rand(16))]
    check("SkipLayerNormalization", inputs, [(np.float32, x.shape)], constants=("gamma",),
          tol=TOL[np.float32])


def test_skip_layer_norm_2d_default_epsilon() -> None:
    x = rand(5, 16)
    inputs = [("x", x), ("skip", rand(5, 16)), ("gamma", rand(16))]
    check("SkipLayerNormalization", inputs, _skip_outputs((True,) * 4, np.float32, x.shape),
          tol=TOL[np.float32])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("outputs", [(True, False, False, False), (True, False, True, True),
                                     (True, False, False, True)])
@pytest.mark.parametrize("bias", [False, True])
def test_skip_simplified_layer_norm(bias: bool, outputs: tuple[bool, ...], dtype: Any
                                    ) -> None:
    x = rand(2, 3, 16, dtype=dtype, scale=2.0)
    inputs = [("x", x), ("skip", rand(2, 3, 16, dtype=dtype)),
              ("gamma", rand(16, dtype=dtype)), ("bias", rand(16, dtype=dtype) if bias else None)]
    if not bias:
        inputs.pop()
    check("SkipSimplifiedLayerNormalization", inputs, _skip_outputs(outputs, dtype, x.shape),
          {"epsilon": 1e-6}, tol=TOL[dtype])


def test_skip_simplified_layer_norm_mean_rejected() -> None:
    x = rand(2, 3, 16)
    rejected("SkipSimplifiedLayerNormalization",
             [("x", x), ("skip", rand(2, 3, 16)), ("gamma", rand(16))],
             _skip_outputs((True, True, False, False), np.float32, x.shape),
             match=r"output\(s\) \[1\]")


def test_simplified_layer_norm_never_reaches_the_importer() -> None:
    """onnxruntime's SimplifiedLayerNormalization lives in the default domain, where onnx
    has no schema: onnx's checker refuses the model, so picograd has no translation."""
    x = rand(2, 3, 16)
    model = ms_model("SimplifiedLayerNormalization", [("x", x), ("gamma", rand(16))],
                     [(np.float32, x.shape)], domain="")
    assert ort_run(model, {"x": x, "gamma": rand(16)})[0].shape == x.shape
    with pytest.raises(OnnxModelError, match="checker"):
        pgx.load(model)


# ── FusedMatMul ─────────────────────────────────────────────────────────────

@pytest.mark.parametrize("a_shape,b_shape,attrs", [
    ((3, 4), (4, 5), {}),
    ((3, 4), (4, 5), {"alpha": 0.5}),
    ((4, 3), (4, 5), {"transA": 1}),
    ((3, 4), (5, 4), {"transB": 1, "alpha": 2.0}),
    ((2, 4, 3), (2, 5, 4), {"transA": 1, "transB": 1}),
    ((2, 3, 4), (4, 5), {}),
    ((2, 1, 3, 4), (5, 4, 6), {}),
    ((3, 2, 4), (2, 4, 5), {"transBatchA": 1}),
    ((3, 2, 4), (4, 2, 5), {"transBatchA": 1, "transBatchB": 1}),
    ((4, 2, 3), (2, 4, 5), {"transBatchA": 1, "transA": 1}),
    ((2, 3, 4), (5, 2, 4), {"transBatchB": 1, "transB": 1, "alpha": 0.25}),
])
def test_fused_matmul(a_shape: tuple[int, ...], b_shape: tuple[int, ...],
                      attrs: dict[str, Any]) -> None:
    a, b = rand(*a_shape), rand(*b_shape)
    expected = ort_run(ms_model("FusedMatMul", [("a", a), ("b", b)],
                                [(np.float32, ())], attrs), {"a": a, "b": b})[0]
    check("FusedMatMul", [("a", a), ("b", b)], [(np.float32, expected.shape)], attrs,
          tol=TOL[np.float32])


@pytest.mark.parametrize("a_shape,b_shape", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5))])
def test_fused_matmul_trans_batch_needs_equal_ranks_from_3(a_shape: tuple[int, ...],
                                                           b_shape: tuple[int, ...]) -> None:
    """onnxruntime refuses transBatch unless both ranks are equal and at least 3."""
    a, b = rand(*a_shape), rand(*b_shape)
    model = ms_model("FusedMatMul", [("a", a), ("b", b)], [(np.float32, ())],
                     {"transBatchA": 1})
    model.graph.node[0].name = "fmm"
    with pytest.raises(onnxruntime.capi.onnxruntime_pybind11_state.Fail):
        ort_run(model, {"a": a, "b": b})
    with pytest.raises(OnnxUnsupportedError, match=r"fmm.*transBatch"):
        pgx.load(model).run(None, {"a": a, "b": b})


def test_fused_matmul_float16() -> None:
    a, b = rand(2, 3, 8, dtype=np.float16), rand(2, 5, 8, dtype=np.float16)
    check("FusedMatMul", [("a", a), ("b", b)], [(np.float16, (2, 3, 5))], {"transB": 1},
          tol=F16)


# ── Attention ───────────────────────────────────────────────────────────────

B, S, HID, HEADS = 2, 5, 8, 2


def _attention_inputs(dtype: Any, sizes: tuple[int, int, int] = (HID, HID, HID),
                      mask: np.ndarray | None = None, bias: bool = True, seq: int = S
                      ) -> list[tuple[str, np.ndarray | None]]:
    return [("x", rand(B, seq, HID, dtype=dtype)),
            ("weights", rand(HID, sum(sizes), dtype=dtype, scale=0.5)),
            ("bias", rand(sum(sizes), dtype=dtype) if bias else None),
            ("mask_index", mask)]


MASKS = {
    "none": None,
    "lengths": np.array([5, 2], np.int32),
    "length_zero": np.array([3, 0], np.int32),
    "ends_starts": np.array([5, 4, 1, 2], np.int32),
    "2d": np.array([[1, 1, 0, 1, 0], [0, 0, 0, 0, 0]], np.int32),
    "2d_negative": np.array([[1, -1, 2, 1, 0], [1, 1, 1, 0, 1]], np.int32),
    "3d": (R.random((B, S, S)) > 0.4).astype(np.int32),
}


def _trim(inputs: list[tuple[str, np.ndarray | None]]) -> list[tuple[str, np.ndarray | None]]:
    while inputs[-1][1] is None:
        inputs = inputs[:-1]
    return inputs


@pytest.mark.parametrize("unidirectional", [0, 1])
@pytest.mark.parametrize("mask", list(MASKS))
def test_attention_masks(mask: str, unidirectional: int) -> None:
    inputs = _trim(_attention_inputs(np.float32, mask=MASKS[mask]))
    check("Attention", inputs, [(np.float32, (B, S, HID))],
          {"num_heads": HEADS, "unidirectional": unidirectional}, constants=("weights",),
          tol=TOL[np.float32])


@pytest.mark.parametrize("attrs", [{"scale": 0.3}, {"scale": 0.0}, {"mask_filter_value": -50.0},
                                   {"mask_filter_value": -1e9, "unidirectional": 1},
                                   {"qkv_hidden_sizes": [8, 8, 4]},
                                   {"qkv_hidden_sizes": [4, 4, 12], "num_heads": 4}])
def test_attention_attributes(attrs: dict[str, Any]) -> None:
    sizes = tuple(attrs.get("qkv_hidden_sizes", (HID, HID, HID)))
    inputs = _attention_inputs(np.float32, sizes, MASKS["2d"])  # type: ignore[arg-type]
    check("Attention", inputs, [(np.float32, (B, S, sizes[2]))],
          {"num_heads": HEADS, **attrs}, tol=TOL[np.float32])


def test_attention_without_bias() -> None:
    """onnxruntime's CPU kernel crashes on an Attention without bias: it is compared with
    the same node given a zero bias."""
    inputs = _attention_inputs(np.float32, mask=MASKS["lengths"], bias=False)
    outputs: list[Output] = [(np.float32, (B, S, HID))]
    model = ms_model("Attention", inputs, outputs, {"num_heads": 4})
    zero_bias = [*inputs[:2], ("bias", np.zeros(3 * HID, np.float32)), inputs[3]]
    expected = ort_run(ms_model("Attention", zero_bias, outputs, {"num_heads": 4}),
                       feeds_of(zero_bias))
    got = pgx.load(model).run(None, feeds_of(inputs))
    assert got[0].dtype == expected[0].dtype
    np.testing.assert_allclose(got[0], expected[0], 1e-5, 1e-5)


@pytest.mark.parametrize("bias_shape", [(B, HEADS, S, S), (1, HEADS, S, S), (B, 1, S, S),
                                        (1, 1, S, S)])
def test_attention_attention_bias(bias_shape: tuple[int, ...]) -> None:
    # no row masked throughout: there the -10000 swamps the bias's low bits
    inputs = [*_attention_inputs(np.float32, mask=MASKS["lengths"]), ("past", None),
              ("attention_bias", rand(*bias_shape))]
    check("Attention", inputs, [(np.float32, (B, S, HID))], {"num_heads": HEADS},
          tol=TOL[np.float32])


@pytest.mark.parametrize("mask", ["none", "lengths", "2d"])
def test_attention_float16(mask: str) -> None:
    inputs = _trim(_attention_inputs(np.float16, mask=MASKS[mask]))
    check("Attention", inputs, [(np.float16, (B, S, HID))],
          {"num_heads": HEADS, "unidirectional": 1}, tol=F16)


@pytest.mark.parametrize("attrs,extra,outputs,match", [
    ({"do_rotary": 1}, [], 1, "do_rotary"),
    ({"past_present_share_buffer": 1}, [], 1, "past_present_share_buffer"),
    ({"qkv_hidden_sizes": [8, 4, 4]}, [], 1, "qkv_hidden_sizes"),
    ({"rotary_embedding_dim": 4}, [], 1, "rotary_embedding_dim"),
    ({}, [("past", rand(2, B, HEADS, 3, HID // HEADS)), ("attention_bias", None),
          ("past_sequence_length", np.array(3, np.int32))], 1, "past_sequence_length"),
])
def test_attention_rejected(attrs: dict[str, Any], extra: list[tuple[str, np.ndarray]],
                            outputs: int, match: str) -> None:
    inputs = [*_attention_inputs(np.float32, mask=MASKS["lengths"]), *extra]
    outs: list[Output] = [(np.float32, (B, S, HID)), (np.float32, (2, B, HEADS, S, 4))]
    rejected("Attention", inputs, outs[:outputs], {"num_heads": HEADS, **attrs}, match)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("unidirectional", [0, 1])
@pytest.mark.parametrize("mask", ["none", "lengths", "2d"])
@pytest.mark.parametrize("seq", [1, S])  # one decoding step, a prompt after a cache
def test_attention_past_present(seq: int, mask: str, unidirectional: int, dtype: Any
                                ) -> None:
    total = PAST + seq
    masks = {"none": None, "lengths": np.array([total, total - 2], np.int32),
             "2d": (R.random((B, total)) > 0.3).astype(np.int32)}
    inputs = [*_attention_inputs(dtype, mask=masks[mask], seq=seq),
              ("past", rand(2, B, HEADS, PAST, HID // HEADS, dtype=dtype))]
    outputs: list[Output] = [(dtype, (B, seq, HID)), (dtype, (2, B, HEADS, total, HID // HEADS))]
    check("Attention", inputs, outputs, {"num_heads": HEADS, "unidirectional": unidirectional},
          tol=TOL[dtype])


def test_attention_present_without_past() -> None:
    outputs: list[Output] = [(np.float32, (B, S, HID)),
                             (np.float32, (2, B, HEADS, S, HID // HEADS))]
    check("Attention", _attention_inputs(np.float32, mask=MASKS["2d"]), outputs,
          {"num_heads": HEADS})


def test_attention_4d_mask_is_a_typed_error() -> None:
    mask = np.ones((B, 1, S, S), np.int32)
    model = ms_model("Attention", _attention_inputs(np.float32, mask=mask),
                     [(np.float32, (B, S, HID))], {"num_heads": HEADS})
    model.graph.node[0].name = "att"
    feeds = {n.name: a for n, a in zip(model.graph.input,
                                       [a for _, a in _attention_inputs(np.float32, mask=mask)],
                                       strict=False)}
    with pytest.raises(OnnxUnsupportedError, match=r"att.*mask of shape"):
        pgx.load(model).run(None, feeds)


# ── MultiHeadAttention ──────────────────────────────────────────────────────

KV, PAST, DV = 6, 3, 12  # key / value length, cached length, value width


def _mha_inputs(dtype: Any, kv: int = KV, bias: bool = True, mask: np.ndarray | None = None,
                attention_bias: np.ndarray | None = None, past: int = 0, seq: int = S,
                dv: int = DV) -> list[tuple[str, np.ndarray | None]]:
    cache = [("past_key", rand(B, HEADS, past, HID // HEADS, dtype=dtype)),
             ("past_value", rand(B, HEADS, past, dv // HEADS, dtype=dtype))] if past else []
    return _trim([("query", rand(B, seq, HID, dtype=dtype)),
                  ("key", rand(B, kv, HID, dtype=dtype)),
                  ("value", rand(B, kv, dv, dtype=dtype)),
                  ("bias", rand(2 * HID + dv, dtype=dtype) if bias else None),
                  ("key_padding_mask", mask), ("attention_bias", attention_bias), *cache])


def _mha_outputs(dtype: Any, total: int, presents: bool, seq: int = S, dv: int = DV
                 ) -> list[Output]:
    out: list[Output] = [(dtype, (B, seq, dv))]
    if presents:
        out += [(dtype, (B, HEADS, total, HID // HEADS)), (dtype, (B, HEADS, total, dv // HEADS))]
    return out


MHA_CASES = [(kv, mask, attrs) for kv in (S, KV) for mask in ("none", "lengths", "2d")
             for attrs in ({}, {"unidirectional": 1}, {"scale": 0.5},
                           {"mask_filter_value": -100.0})
             if kv == S or not attrs.get("unidirectional")]  # causal cross: see below


@pytest.mark.parametrize("kv,mask,attrs", MHA_CASES)
def test_multi_head_attention(kv: int, mask: str, attrs: dict[str, Any]) -> None:
    masks = {"none": None, "lengths": np.array([kv, 2], np.int32),
             "2d": (R.random((B, kv)) > 0.3).astype(np.int32)}
    inputs = _mha_inputs(np.float32, kv, mask=masks[mask])
    check("MultiHeadAttention", inputs, _mha_outputs(np.float32, kv, False),
          {"num_heads": HEADS, **attrs}, tol=TOL[np.float32])


@pytest.mark.parametrize("bias", [False, True])
def test_multi_head_attention_bias_and_attention_bias(bias: bool) -> None:
    inputs = _mha_inputs(np.float32, bias=bias, attention_bias=rand(1, HEADS, S, KV))
    check("MultiHeadAttention", inputs, _mha_outputs(np.float32, KV, True),
          {"num_heads": HEADS}, tol=TOL[np.float32])


def test_multi_head_attention_causal_cross_rejected() -> None:
    """Causal attention of 5 queries over 6 keys: onnxruntime leaves the last query
    unmasked, an alignment picograd refuses rather than guesses."""
    inputs = _mha_inputs(np.float32, KV)
    model = ms_model("MultiHeadAttention", inputs, _mha_outputs(np.float32, KV, False),
                     {"num_heads": HEADS, "unidirectional": 1})
    model.graph.node[0].name = "mha"
    with pytest.raises(OnnxUnsupportedError, match=r"mha.*unidirectional"):
        pgx.load(model).run(None, feeds_of(inputs))


@pytest.mark.parametrize("unidirectional", [0, 1])
@pytest.mark.parametrize("seq", [1, S])  # one decoding step, a prompt after a cache
def test_multi_head_attention_past(seq: int, unidirectional: int) -> None:
    """With a cache onnxruntime wants value heads as wide as the query's."""
    mask = (R.random((B, PAST + seq)) > 0.2).astype(np.int32)
    inputs = _mha_inputs(np.float32, seq, mask=mask, past=PAST, seq=seq, dv=HID)
    check("MultiHeadAttention", inputs, _mha_outputs(np.float32, PAST + seq, True, seq, HID),
          {"num_heads": HEADS, "unidirectional": unidirectional}, tol=TOL[np.float32])


@pytest.mark.parametrize("past", [0, PAST])
def test_multi_head_attention_float16(past: int) -> None:
    inputs = _mha_inputs(np.float16, S, mask=np.array([S + past, 3], np.int32), past=past,
                         dv=HID)
    check("MultiHeadAttention", inputs, _mha_outputs(np.float16, past + S, True, dv=HID),
          {"num_heads": HEADS, "unidirectional": 1}, tol=F16)


def test_multi_head_attention_head_layout_key_is_a_typed_error() -> None:
    """A (batch, heads, seq, size) key and value (no bias): not translated."""
    inputs = [("query", rand(B, S, HID)), ("key", rand(B, HEADS, KV, HID // HEADS)),
              ("value", rand(B, HEADS, KV, HID // HEADS))]
    model = ms_model("MultiHeadAttention", inputs, [(np.float32, (B, S, HID))],
                     {"num_heads": HEADS})
    model.graph.node[0].name = "mha"
    assert ort_run(model, feeds_of(inputs))[0].shape == (B, S, HID)
    with pytest.raises(OnnxUnsupportedError, match=r"mha.*packed layouts"):
        pgx.load(model).run(None, feeds_of(inputs))


@pytest.mark.parametrize("change,match", [
    ("no_value", "packed"),
    ("no_past_value", "together"),
    ("past_sequence_length", "past_sequence_length"),
    ("qk_output", r"output\(s\) \[3\]"),
])
def test_multi_head_attention_rejected(change: str, match: str) -> None:
    inputs = _mha_inputs(np.float32, past=PAST, dv=HID)
    outputs = _mha_outputs(np.float32, PAST + KV, True, dv=HID)
    if change == "no_value":
        inputs = [(n, None if n == "value" else a) for n, a in inputs]
    elif change == "no_past_value":
        inputs = inputs[:-1]
    elif change == "past_sequence_length":
        inputs += [("past_sequence_length", np.array([PAST], np.int32))]
    else:
        outputs += [(np.float32, (B, HEADS, S, PAST + KV))]
    rejected("MultiHeadAttention", inputs, outputs, {"num_heads": HEADS}, match)


# ── RotaryEmbedding ─────────────────────────────────────────────────────────

MAX_POS = 16


def _caches(half: int, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of positions 0..MAX_POS-1 at half inverse frequencies."""
    inv = 1.0 / 10000 ** (np.arange(half) / half)
    angles = np.arange(MAX_POS)[:, None] * inv[None, :]
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


ROTARY_CASES = [  # input shape, cache half width, attributes
    ((B, S, 16), 4, {}),  # 2 heads of 8
    ((B, S, 16), 4, {"interleaved": 1}),
    ((B, S, 24), 2, {"rotary_embedding_dim": 4, "num_heads": 3}),  # partial rotation
    ((B, S, 24), 2, {"rotary_embedding_dim": 4, "num_heads": 3, "interleaved": 1}),
    ((B, 2, S, 8), 4, {}),  # (batch, heads, seq, head size)
    ((B, 2, S, 8), 4, {"interleaved": 1}),
    ((B, 2, S, 8), 2, {"rotary_embedding_dim": 4, "num_heads": 2}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("positions", ["ids", "offset"])
@pytest.mark.parametrize("shape,half,attrs", ROTARY_CASES)
def test_rotary_embedding(shape: tuple[int, ...], half: int, attrs: dict[str, Any],
                          positions: str, dtype: Any) -> None:
    cos, sin = _caches(half, dtype)
    ids = (R.integers(0, MAX_POS, (B, S)) if positions == "ids" else np.array([3]))
    inputs = [("x", rand(*shape, dtype=dtype)), ("position_ids", ids.astype(np.int64)),
              ("cos_cache", cos), ("sin_cache", sin)]
    check("RotaryEmbedding", inputs, [(dtype, shape)], attrs,
          constants=("cos_cache", "sin_cache"), tol=TOL[dtype])


@pytest.mark.parametrize("attrs,match", [({"is_packed_batching": 1}, "is_packed_batching"),
                                         ({"scale": 2.0}, "scale"),
                                         ({"rotary_embedding_dim": 4}, "num_heads")])
def test_rotary_embedding_rejected(attrs: dict[str, Any], match: str) -> None:
    cos, sin = _caches(4, np.float32)
    inputs = [("x", rand(B, S, 16)), ("position_ids", np.array([0], np.int64)),
              ("cos_cache", cos), ("sin_cache", sin)]
    rejected("RotaryEmbedding", inputs, [(np.float32, (B, S, 16))], attrs, match)


# ── EmbedLayerNormalization ─────────────────────────────────────────────────

VOCAB, POSITIONS, SEGMENTS = 11, 9, 3


def _embed_inputs(segments: bool, mask: bool, position_ids: np.ndarray | None,
                  dtype: Any = np.float32) -> list[tuple[str, np.ndarray | None]]:
    return _trim([
        ("input_ids", R.integers(0, VOCAB, (B, S)).astype(np.int32)),
        ("segment_ids", R.integers(0, SEGMENTS, (B, S)).astype(np.int32) if segments else None),
        ("word_embedding", rand(VOCAB, HID, dtype=dtype)),
        ("position_embedding", rand(POSITIONS, HID, dtype=dtype)),
        ("segment_embedding", rand(SEGMENTS, HID, dtype=dtype) if segments else None),
        ("gamma", rand(HID, dtype=dtype)), ("beta", rand(HID, dtype=dtype)),
        ("mask", np.array([[1, 1, 1, 0, 0], [1, 0, 1, 2, 1]], np.int32) if mask else None),
        ("position_ids", position_ids)])


EMBED_OUTPUTS: list[Output] = [(np.float32, (B, S, HID)), (np.int32, (B,)),
                               (np.float32, (B, S, HID))]


@pytest.mark.parametrize("n_outputs", [2, 3])  # onnxruntime wants mask_index
@pytest.mark.parametrize("position_ids", ["none", "batch", "shared"])
@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("segments", [False, True])
def test_embed_layer_norm(segments: bool, mask: bool, position_ids: str, n_outputs: int
                          ) -> None:
    ids = {"none": None,
           "batch": R.integers(0, POSITIONS, (B, S)).astype(np.int32),
           "shared": R.integers(0, POSITIONS, (1, S)).astype(np.int32)}[position_ids]
    inputs = _embed_inputs(segments, mask, ids)
    check("EmbedLayerNormalization", inputs, EMBED_OUTPUTS[:n_outputs], {"epsilon": 1e-5},
          constants=("word_embedding", "position_embedding", "segment_embedding"))


@pytest.mark.parametrize("mask_index_type", [0, 1])
def test_embed_layer_norm_mask_index_type(mask_index_type: int) -> None:
    inputs = _embed_inputs(True, True, None)
    check("EmbedLayerNormalization", inputs, EMBED_OUTPUTS,
          {"mask_index_type": mask_index_type})


def test_embed_layer_norm_float16() -> None:
    inputs = _embed_inputs(True, True, None, np.float16)
    outputs: list[Output] = [(np.float16, (B, S, HID)), (np.int32, (B,)),
                             (np.float16, (B, S, HID))]
    check("EmbedLayerNormalization", inputs, outputs, tol=F16)


# ── GroupQueryAttention ─────────────────────────────────────────────────────

GQA_SIZE = 8  # onnxruntime wants head sizes in multiples of 8


def _gqa_inputs(dtype: Any, seq: int, lengths: list[int], cached: int, heads: int = 4,
                kv_heads: int = 2) -> list[tuple[str, np.ndarray | None]]:
    """A batch of len(lengths) rows of `seq` new tokens, row b then holding lengths[b]
    tokens, after a cache buffer of `cached` entries (0: none)."""
    batch = len(lengths)
    cache = [("past_key", rand(batch, kv_heads, cached, GQA_SIZE, dtype=dtype)),
             ("past_value", rand(batch, kv_heads, cached, GQA_SIZE, dtype=dtype))]
    return [("query", rand(batch, seq, heads * GQA_SIZE, dtype=dtype)),
            ("key", rand(batch, seq, kv_heads * GQA_SIZE, dtype=dtype)),
            ("value", rand(batch, seq, kv_heads * GQA_SIZE, dtype=dtype)),
            *(cache if cached else [("past_key", None), ("past_value", None)]),
            ("seqlens_k", np.array(lengths, np.int32) - 1),
            ("total_sequence_length", np.array(max(lengths), np.int32))]


def _gqa_outputs(dtype: Any, seq: int, batch: int, length: int, heads: int = 4,
                 kv_heads: int = 2) -> list[Output]:
    cache = (dtype, (batch, kv_heads, length, GQA_SIZE))
    return [(dtype, (batch, seq, heads * GQA_SIZE)), cache, cache]


GQA_CASES = [  # new tokens, row lengths, cache buffer
    (5, [5, 5], 0),  # first prompt
    (5, [5, 5], 8),  # first prompt into a larger buffer
    (1, [4, 7], 8),  # one decoding step, rows of different lengths
    (1, [7, 7], 6),  # a buffer that grows
    (3, [6], 8),  # a prompt after a cache (a batch of one)
]


@pytest.mark.parametrize("attrs", [{}, {"local_window_size": 2}, {"softcap": 2.0},
                                   {"scale": 0.3}, {"num_heads": 2}])
@pytest.mark.parametrize("seq,lengths,cached", GQA_CASES)
def test_group_query_attention(seq: int, lengths: list[int], cached: int,
                               attrs: dict[str, Any]) -> None:
    heads = attrs.get("num_heads", 4)
    inputs = _gqa_inputs(np.float32, seq, lengths, cached, heads)
    outputs = _gqa_outputs(np.float32, seq, len(lengths), max(cached, max(lengths)), heads)
    check("GroupQueryAttention", inputs, outputs, {"num_heads": 4, "kv_num_heads": 2, **attrs})


@pytest.mark.parametrize("seq,lengths,cached", GQA_CASES[::2])
def test_group_query_attention_float16(seq: int, lengths: list[int], cached: int) -> None:
    inputs = _gqa_inputs(np.float16, seq, lengths, cached)
    outputs = _gqa_outputs(np.float16, seq, len(lengths), max(cached, max(lengths)))
    check("GroupQueryAttention", inputs, outputs, {"num_heads": 4, "kv_num_heads": 2},
          tol=F16)


def test_group_query_attention_padded_prompt_is_a_typed_error() -> None:
    inputs = _gqa_inputs(np.float32, 5, [5, 3], 0)
    model = ms_model("GroupQueryAttention", inputs, _gqa_outputs(np.float32, 5, 2, 5),
                     {"num_heads": 4, "kv_num_heads": 2})
    model.graph.node[0].name = "gqa"
    with pytest.raises(OnnxUnsupportedError, match=r"gqa.*padded first prompt"):
        pgx.load(model).run(None, feeds_of(inputs))


def test_group_query_attention_row_past_the_cache_is_a_typed_error() -> None:
    inputs = _gqa_inputs(np.float32, 1, [4, 7], 6)
    inputs[-1] = ("total_sequence_length", np.array(5, np.int32))  # row 1 holds 7
    model = ms_model("GroupQueryAttention", inputs, _gqa_outputs(np.float32, 1, 2, 6),
                     {"num_heads": 4, "kv_num_heads": 2})
    model.graph.node[0].name = "gqa"
    with pytest.raises(OnnxUnsupportedError, match=r"gqa.*row lengths \[4, 7\]"):
        pgx.load(model).run(None, feeds_of(inputs))


@pytest.mark.parametrize("attrs,extra,outputs,match", [
    ({"do_rotary": 1}, [], 3, "do_rotary"),
    ({"smooth_softmax": 1}, [], 3, "smooth_softmax"),
    ({"causal": 0}, [], 3, "causal"),
    ({"k_quant_type": "PER_TENSOR"}, [], 3, "quantized"),
    ({}, [("cos_cache", rand(8, 2)), ("sin_cache", rand(8, 2))], 3, "cos_cache"),
    ({}, [], 4, r"output\(s\) \[3\]"),
])
def test_group_query_attention_rejected(attrs: dict[str, Any],
                                        extra: list[tuple[str, np.ndarray]], outputs: int,
                                        match: str) -> None:
    inputs = [*_gqa_inputs(np.float32, 1, [4, 7], 8), *extra]
    outs = [*_gqa_outputs(np.float32, 1, 2, 8), (np.float32, (2, 4, 1, 8))]
    rejected("GroupQueryAttention", inputs, outs[:outputs],
             {"num_heads": 4, "kv_num_heads": 2, **attrs}, match)
