"""picograd.onnx's ai.onnx transformer ops (picograd/onnx/ops_attention.py: Attention,
RMSNormalization, RotaryEmbedding, Swish, SwiGLU, TensorScatter, LinearAttention,
CausalConvWithState) against onnx's reference evaluator, values and dtypes: onnxruntime 1.31
does not implement these opsets. One-node models, random inputs, every output compared."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import picograd.onnx as pgx
from picograd.onnx.errors import OnnxUnsupportedError
from tests.e2e.onnx_helpers import elem_type

R = np.random.default_rng(0)


def rand(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return R.standard_normal(shape).astype(dtype)


def one_node(op: str, inputs: list[tuple[str, np.ndarray | None]], attrs: dict[str, Any],
             n_out: int, opset: int, omit: tuple[int, ...] = ()) -> onnx.ModelProto:
    """One `op` node of `inputs` in the node's order (None: omitted), all graph inputs, with
    `n_out` outputs (but those in `omit`) whose types onnx's shape inference fills in."""
    outs = [f"y{i}" for i in range(n_out) if i not in omit]
    node = helper.make_node(op, [n if a is not None else "" for n, a in inputs],
                            [f"y{i}" if i not in omit else "" for i in range(n_out)],
                            **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, elem_type(a), a.shape) for n, a in inputs
         if a is not None], [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    known = {v.name: v for v in inferred.graph.value_info}
    model.graph.output.extend(known[o] for o in outs)
    return model


def check(op: str, inputs: list[tuple[str, np.ndarray | None]], attrs: dict[str, Any] | None
          = None, n_out: int = 1, opset: int = 24, rtol: float = 1e-5, atol: float = 1e-6,
          omit: tuple[int, ...] = ()) -> list[np.ndarray]:
    """picograd.onnx's outputs equal onnx's reference's (dtypes, shapes, values, NaNs)."""
    model = one_node(op, inputs, attrs or {}, n_out, opset, omit)
    feeds = {n: a for n, a in inputs if a is not None}
    expected = ReferenceEvaluator(model).run(None, feeds)
    got = pgx.load(model).run(None, feeds)
    for ours, theirs in zip(got, expected, strict=True):
        theirs = np.asarray(theirs)
        assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
        assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
        np.testing.assert_allclose(ours.astype(np.float64), theirs.astype(np.float64),
                                   rtol=rtol, atol=atol)
    return got


# ── Attention ───────────────────────────────────────────────────────────────

B, HQ, HKV, SQ, SKV, D = 2, 4, 2, 3, 5, 8


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_attention_gqa_past_causal_short_bool_mask_every_qk_output(mode: int) -> None:
    """GQA (4 query heads on 2 kv heads), a past cache (bottom-right causal offset), a bool
    mask shorter than the keys (padded with False) and each qk_matmul_output_mode."""
    mask = R.random((SQ, SKV + 2)) > 0.3
    mask[:, 0] = True  # every row keeps a key
    check("Attention", [("q", rand(B, HQ, SQ, D)), ("k", rand(B, HKV, SQ, D)),
                        ("v", rand(B, HKV, SQ, 6)), ("mask", mask),
                        ("past_k", rand(B, HKV, 4, D)), ("past_v", rand(B, HKV, 4, 6))],
          {"is_causal": 1, "qk_matmul_output_mode": mode, "softcap": 2.5, "scale": 0.3},
          n_out=4, opset=23)


def test_attention_3d_float_mask_broadcast() -> None:
    """3-D (batch, seq, heads * size) inputs with q_num_heads / kv_num_heads and a float
    (additive) mask broadcast over batch and heads."""
    check("Attention", [("q", rand(B, SQ, HQ * D)), ("k", rand(B, SKV, HKV * D)),
                        ("v", rand(B, SKV, HKV * 4)), ("mask", rand(SQ, SKV))],
          {"q_num_heads": HQ, "kv_num_heads": HKV}, n_out=1, opset=23)


def test_attention_nonpad_kv_seqlen_per_batch_causal() -> None:
    """opset 24's nonpad_kv_seqlen: keys past each batch's length are masked, and the causal
    frontier is offset per batch by nonpad - q_len."""
    check("Attention", [("q", rand(B, HQ, SQ, D)), ("k", rand(B, HQ, 6, D)),
                        ("v", rand(B, HQ, 6, D)), ("_m", None), ("_pk", None),
                        ("_pv", None), ("nonpad", np.array([4, 6], dtype=np.int64))],
          {"is_causal": 1}, n_out=1, opset=24)


def test_attention_fully_masked_row_is_zero_not_nan() -> None:
    """A query row whose every key is masked is 0 (onnx's reference), also in the mode-3
    probabilities, where a plain softmax gives NaN."""
    mask = np.ones((SQ, SKV), dtype=bool)
    mask[1] = False
    got = check("Attention", [("q", rand(1, 2, SQ, D)), ("k", rand(1, 2, SKV, D)),
                              ("v", rand(1, 2, SKV, D)), ("mask", mask)],
                {"qk_matmul_output_mode": 3}, n_out=4, opset=23, omit=(1, 2))
    assert not np.isnan(got[0]).any() and (got[0][:, :, 1] == 0).all()
    assert (got[1][:, :, 1] == 0).all()


def test_attention_y_only_fully_masked_row_with_nan_query_is_zero() -> None:
    """Y alone of a float32 node (picograd's SDPA path): a fully masked row is 0 even when
    its query holds NaN (the reference decides on the bias), a NaN elsewhere stays NaN."""
    mask = np.ones((SQ, SKV), dtype=bool)
    mask[1] = False
    q = rand(1, 2, SQ, D)
    q[0, 0, 1, 0] = np.nan  # in the masked row
    q[0, 1, 2, 0] = np.nan  # in an attended row
    got = check("Attention", [("q", q), ("k", rand(1, 2, SKV, D)), ("v", rand(1, 2, SKV, D)),
                              ("mask", mask)], opset=23)
    assert (got[0][:, :, 1] == 0).all() and np.isnan(got[0][0, 1, 2]).all()


def test_attention_float16_softmax_precision() -> None:
    """float16 inputs with the softmax in float32 (softmax_precision=1): outputs float16."""
    check("Attention", [("q", rand(1, 2, SQ, D, dtype=np.float16)),
                        ("k", rand(1, 2, SKV, D, dtype=np.float16)),
                        ("v", rand(1, 2, SKV, D, dtype=np.float16))],
          {"softmax_precision": onnx.TensorProto.FLOAT}, n_out=1, opset=23, rtol=2e-3,
          atol=2e-3)


def test_attention_sliding_window_opset25() -> None:
    """opset 25's left / right window sizes with a causal mask."""
    check("Attention", [("q", rand(1, 2, 6, D)), ("k", rand(1, 2, 6, D)),
                        ("v", rand(1, 2, 6, D))],
          {"left_window_size": 2, "right_window_size": 1}, n_out=1, opset=25)


@pytest.mark.parametrize("attrs, inputs, why", [
    ({"qk_matmul_output_mode": 4}, 3, "qk_matmul_output_mode=4"),
    ({"softmax_precision": onnx.TensorProto.INT32}, 3, "softmax_precision"),
    ({}, 5, "past_key and past_value must be given together"),
])
def test_attention_refused_at_load(attrs: dict[str, Any], inputs: int, why: str) -> None:
    names = ["q", "k", "v", "", "pk"][:inputs]
    node = helper.make_node("Attention", names, ["y"], **attrs)
    info = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [1, 2, 3, 4])
            for n in names if n]
    graph = helper.make_graph([node], "g", info, [
        helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 2, 3, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    with pytest.raises(OnnxUnsupportedError, match=why):
        pgx.load(model)


# ── RMSNormalization, RotaryEmbedding, Swish, SwiGLU ─────────────────────────

@pytest.mark.parametrize("axis", [-1, -2, 0])
def test_rms_normalization_axes(axis: int) -> None:
    x = rand(2, 3, 4)
    scale = rand(*x.shape[axis % 3:])
    check("RMSNormalization", [("x", x), ("scale", scale)], {"axis": axis, "epsilon": 1e-3},
          opset=23)


def test_rms_normalization_float16_stashes_in_float32() -> None:
    """float16 in, float16 out, the mean square taken in float32 (stash_type 1)."""
    x = (rand(3, 8) * 100).astype(np.float16)  # x * x overflows float16's 65504
    check("RMSNormalization", [("x", x), ("scale", rand(8, dtype=np.float16))], opset=23,
          rtol=2e-3, atol=2e-3)


def test_rms_normalization_integer_stash_type_refused() -> None:
    node = helper.make_node("RMSNormalization", ["x", "s"], ["y"],
                            stash_type=onnx.TensorProto.INT32)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [2, 3]) for n in "xs"], [
        helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    with pytest.raises(OnnxUnsupportedError, match="stash_type"):
        pgx.load(model)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding_partial_with_position_ids(interleaved: int) -> None:
    """A 4-D input, the first 4 of 8 features rotated, angles gathered by position_ids."""
    x = rand(2, 3, 5, 8)
    positions = np.array([[0, 3, 1, 2, 4], [5, 6, 0, 0, 1]], dtype=np.int64)
    check("RotaryEmbedding", [("x", x), ("cos", rand(7, 2)), ("sin", rand(7, 2)),
                              ("pos", positions)],
          {"interleaved": interleaved, "rotary_embedding_dim": 4}, opset=23)


def test_rotary_embedding_3d_without_position_ids() -> None:
    """A 3-D (batch, seq, heads * size) input with num_heads; per-batch caches."""
    check("RotaryEmbedding", [("x", rand(2, 4, 12)), ("cos", rand(2, 4, 3)),
                              ("sin", rand(2, 4, 3))], {"num_heads": 2}, opset=23)


def test_swish_alpha_with_nan_and_infinities() -> None:
    x = np.array([-np.inf, -30.0, -1.0, 0.0, 0.5, 30.0, np.inf, np.nan], dtype=np.float32)
    check("Swish", [("x", x)], {"alpha": 0.7}, opset=24)


def test_swiglu_float16() -> None:
    check("SwiGLU", [("a", rand(3, 6, dtype=np.float16)), ("b", rand(3, 6, dtype=np.float16))],
          {"alpha": 1.5}, opset=28, rtol=2e-3, atol=2e-3)


# ── TensorScatter ───────────────────────────────────────────────────────────

@pytest.mark.parametrize("mode, starts", [("linear", [0, 2]), ("circular", [3, 4])])
def test_tensor_scatter_kv_cache(mode: str, starts: list[int]) -> None:
    """Writes 2 rows into a (2, 3, 5, 4) cache along axis -2 from each batch's index; a
    circular write past the end wraps to the start."""
    check("TensorScatter", [("past", rand(2, 3, 5, 4)), ("update", rand(2, 3, 2, 4)),
                            ("idx", np.array(starts, dtype=np.int64))], {"mode": mode})


def test_tensor_scatter_linear_write_past_the_end_refused() -> None:
    """Known write indices whose rows run past a linear cache's end are an error naming
    the node (the reference raises), not silently dropped rows."""
    node = helper.make_node("TensorScatter", ["past", "update", "idx"], ["y"])
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("past", onnx.TensorProto.FLOAT, [2, 5, 3]),
        helper.make_tensor_value_info("update", onnx.TensorProto.FLOAT, [2, 2, 3])], [
        helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 5, 3])],
        [onnx.numpy_helper.from_array(np.array([0, 4], dtype=np.int64), "idx")])
    model = pgx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)]))
    with pytest.raises(OnnxUnsupportedError, match="outside a cache of length 5"):
        model(rand(2, 5, 3), rand(2, 2, 3))


def test_tensor_scatter_axis1_no_indices() -> None:
    check("TensorScatter", [("past", rand(2, 6, 3)), ("update", rand(2, 4, 3))], {"axis": 1})


# ── LinearAttention, CausalConvWithState ────────────────────────────────────

@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
def test_linear_attention_gqa_with_past(rule: str) -> None:
    """Each update rule with 4 query heads on 2 kv heads, a past state, per-key-dim decay
    (gated) and per-head beta (delta)."""
    b, t, hq, hkv, dk, dv = 2, 3, 4, 2, 4, 3
    decay = -R.random((b, t, hkv * dk)).astype(np.float32) if "gated" in rule else None
    beta = R.random((b, t, hkv)).astype(np.float32) if "delta" in rule else None
    check("LinearAttention", [("q", rand(b, t, hq * dk)), ("k", rand(b, t, hkv * dk) * 0.5),
                              ("v", rand(b, t, hkv * dv)), ("past", rand(b, hkv, dk, dv)),
                              ("decay", decay), ("beta", beta)],
          {"q_num_heads": hq, "kv_num_heads": hkv, "update_rule": rule}, n_out=2, opset=27,
          rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("k, past, activation", [(4, True, "silu"), (3, False, "none"),
                                                 (1, False, "swish")])
def test_causal_conv_with_state(k: int, past: bool, activation: str) -> None:
    """With and without a carried state, a width-1 kernel (an empty state), and the SiLU."""
    check("CausalConvWithState", [("x", rand(2, 3, 5)), ("w", rand(3, 1, k)),
                                  ("b", rand(3)),
                                  ("state", rand(2, 3, k - 1) if past else None)],
          {"activation": activation}, n_out=2, opset=27)
