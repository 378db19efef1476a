"""picograd.onnx's loss ops (ops_loss.py) and the extra normalization / pool / index ops
(ops_norm_extra.py) against onnxruntime, or onnx's ReferenceEvaluator where onnxruntime
1.31 lacks the op at that opset: values and dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto
from onnx.reference import ReferenceEvaluator

import picograd.onnx as pgx
from picograd.errors import IndexRangeError
from picograd.onnx.errors import OnnxUnsupportedError
from tests.e2e.onnx_helpers import assert_matches_ort, node_model, ort_run

RNG = np.random.default_rng(7)


def _randn(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def _matches_reference(model, feeds, rtol=1e-5, atol=1e-6) -> None:
    """picograd.onnx's outputs equal onnx's ReferenceEvaluator's: dtypes, shapes, values."""
    expected = [np.asarray(e) for e in ReferenceEvaluator(model).run(None, feeds)]
    got = pgx.load(model).run(None, feeds)
    assert len(got) == len(expected)
    for ours, theirs in zip(got, expected, strict=True):
        assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
        assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
        np.testing.assert_allclose(ours.astype(np.float64), theirs.astype(np.float64),
                                   rtol=rtol, atol=atol)


# ── NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss ──────────────────────

@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_reductions_weights_negative_ignore_index(reduction, weighted):
    x = _randn(3, 5, 4)
    t = RNG.integers(0, 5, (3, 4)).astype(np.int64)
    t[0, 1] = t[2, 3] = -1  # ignored, and outside 0..C-1
    inputs = {"x": x, "t": t}
    if weighted:
        inputs["w"] = RNG.uniform(0.1, 2.0, 5).astype(np.float32)
    model = node_model("NegativeLogLikelihoodLoss", inputs,
                       {"reduction": reduction, "ignore_index": -1}, opset=13)
    assert_matches_ort(model, inputs)


def test_nll_mean_divides_by_the_weights_of_counted_targets():
    """A mean over weights [w0, w2] of the two counted targets, not over the count 3."""
    x = np.log(np.array([[0.5, 0.499, 0.001], [0.1, 0.2, 0.7], [0.25, 0.25, 0.5]], np.float32))
    t = np.array([0, 1, 2], np.int64)
    w = np.array([2.0, 3.0, 4.0], np.float32)
    model = node_model("NegativeLogLikelihoodLoss", {"x": x, "t": t, "w": w},
                       {"ignore_index": 1}, opset=13)
    got = pgx.load(model).run(None, {"x": x, "t": t, "w": w})[0]
    want = -(2.0 * x[0, 0] + 4.0 * x[2, 2]) / (2.0 + 4.0)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert_matches_ort(model, {"x": x, "t": t, "w": w})


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_nll_float16_float64(dtype):
    x, t = _randn(4, 3, 2, 2, dtype=dtype), RNG.integers(0, 3, (4, 2, 2)).astype(np.int64)
    model = node_model("NegativeLogLikelihoodLoss", {"x": x, "t": t}, opset=13)
    assert_matches_ort(model, {"x": x, "t": t}, rtol=2e-3 if dtype == np.float16 else 1e-7)


def test_nll_out_of_range_target_raises_not_a_wrong_number():
    x, t = _randn(2, 3), np.array([1, 3], np.int64)
    model = node_model("NegativeLogLikelihoodLoss", {"x": x, "t": t}, opset=13)
    with pytest.raises(IndexRangeError):
        pgx.load(model).run(None, {"x": x, "t": t})


def test_nll_int32_targets_and_positive_ignore_index_sum():
    x, t = _randn(6, 4), np.array([0, 3, 3, 1, 2, 3], np.int32)
    model = node_model("NegativeLogLikelihoodLoss", {"x": x, "t": t},
                       {"reduction": "sum", "ignore_index": 3}, opset=13)
    assert_matches_ort(model, {"x": x, "t": t})


def test_nll_unknown_reduction_is_refused_at_load():
    x, t = _randn(2, 3), np.array([1, 2], np.int64)
    model = node_model("NegativeLogLikelihoodLoss", {"x": x, "t": t}, opset=13)
    model.graph.node[0].attribute.add(name="reduction", s=b"max", type=3)
    with pytest.raises(OnnxUnsupportedError, match="reduction"):
        pgx.load(model)


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_sce_log_prob_output_nd_weights_ignore_index(reduction):
    s = _randn(2, 4, 3, 2) * 3
    t = RNG.integers(0, 4, (2, 3, 2)).astype(np.int64)
    t[1, 0, 1] = 2
    w = RNG.uniform(0.5, 1.5, 4).astype(np.float32)
    inputs = {"s": s, "t": t, "w": w}
    model = node_model("SoftmaxCrossEntropyLoss", inputs,
                       {"reduction": reduction, "ignore_index": 2}, opset=13,
                       out_types=[TensorProto.FLOAT, TensorProto.FLOAT])
    assert_matches_ort(model, inputs, rtol=1e-5, atol=1e-5)


def test_sce_float16_sum():
    s, t = _randn(5, 6, dtype=np.float16), RNG.integers(0, 6, 5).astype(np.int64)
    model = node_model("SoftmaxCrossEntropyLoss", {"s": s, "t": t}, {"reduction": "sum"},
                       opset=13)
    assert_matches_ort(model, {"s": s, "t": t}, rtol=2e-3, atol=2e-3)


# ── pools ────────────────────────────────────────────────────────────────────

@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2], "p": 1},
    {"kernel_shape": [3, 2], "p": 3, "strides": [2, 1], "pads": [1, 0, 0, 1]},
    {"kernel_shape": [2, 2], "dilations": [2, 2]},
    {"kernel_shape": [3, 3], "auto_pad": "SAME_LOWER", "strides": [2, 2]},
])
def test_lp_pool_2d(attrs):
    x = _randn(1, 3, 6, 5)
    assert_matches_ort(node_model("LpPool", {"x": x}, attrs, opset=18), {"x": x},
                       rtol=1e-4, atol=1e-5)


def test_lp_pool_1d_and_ceil_mode_refused():
    x = _randn(2, 2, 7)
    assert_matches_ort(node_model("LpPool", {"x": x}, {"kernel_shape": [3], "strides": [2]},
                                  opset=18), {"x": x}, rtol=1e-5)
    model = node_model("LpPool", {"x": x}, {"kernel_shape": [2], "strides": [2]}, opset=18)
    model.graph.node[0].attribute.add(name="ceil_mode", i=1, type=2)
    with pytest.raises(OnnxUnsupportedError, match="ceil_mode"):
        pgx.load(model)


def test_max_unpool_of_max_pool_indices():
    x = _randn(2, 3, 4, 4)
    pool = node_model("MaxPool", {"x": x}, {"kernel_shape": [2, 2], "strides": [2, 2]},
                      opset=12, out_types=[TensorProto.FLOAT, TensorProto.INT64])
    values, indices = ort_run(pool, {"x": x})
    feeds = {"v": values, "i": indices}
    model = node_model("MaxUnpool", feeds, {"kernel_shape": [2, 2], "strides": [2, 2]},
                       opset=11)
    assert_matches_ort(model, feeds)
    bigger = node_model("MaxUnpool", feeds, {"kernel_shape": [2, 2], "strides": [2, 2]},
                        opset=11, constants={"shape": np.array([2, 3, 5, 5], np.int64)})
    _matches_reference(bigger, feeds)


# ── normalizations ───────────────────────────────────────────────────────────

@pytest.mark.parametrize("attrs", [{}, {"p": 1, "axis": 0}, {"p": 2, "axis": -2}])
def test_lp_normalization(attrs):
    x = _randn(3, 4, 5)
    assert_matches_ort(node_model("LpNormalization", {"x": x}, attrs, opset=13), {"x": x})


def test_lp_normalization_zero_norm_gives_zero():
    x = np.array([[0, 0, 0], [3, -4, 0]], np.float32)
    for p in (1, 2):
        assert_matches_ort(node_model("LpNormalization", {"x": x}, {"p": p}, opset=13),
                           {"x": x})


def test_lp_normalization_p3_refused():
    model = node_model("LpNormalization", {"x": _randn(3, 4)}, {"p": 1}, opset=13)
    model.graph.node[0].attribute[0].i = 3
    with pytest.raises(OnnxUnsupportedError, match="p=3"):
        pgx.load(model)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_group_normalization_opset21(dtype):
    x = _randn(2, 6, 3, 2, dtype=dtype) * 2 + 1
    scale, bias = _randn(6, dtype=dtype), _randn(6, dtype=dtype)
    model = node_model("GroupNormalization", {"x": x, "scale": scale, "bias": bias},
                       {"num_groups": 3, "epsilon": 1e-3}, opset=21)
    tol = 5e-3 if dtype == np.float16 else 1e-5
    _matches_reference(model, {"x": x, "scale": scale, "bias": bias}, rtol=tol, atol=tol)


def test_group_normalization_wrong_scale_shape_is_refused():
    x, scale, bias = _randn(2, 4, 5), _randn(2), _randn(2)
    model = node_model("GroupNormalization", {"x": x, "scale": scale, "bias": bias},
                       {"num_groups": 2}, opset=21)
    with pytest.raises(OnnxUnsupportedError, match="per channel"):
        pgx.load(model).run(None, {"x": x, "scale": scale, "bias": bias})


@pytest.mark.parametrize("attrs", [{"axes": [0, 2, 3]}, {"axes": [1]}, {"axes": [-1, 0]}])
def test_mean_variance_normalization(attrs):
    x = _randn(2, 3, 4, 2) * 4 - 1
    assert_matches_ort(node_model("MeanVarianceNormalization", {"x": x}, attrs, opset=13),
                       {"x": x}, rtol=1e-4, atol=1e-5)


# ── scans, reductions, creation ──────────────────────────────────────────────

@pytest.mark.parametrize("attrs", [{}, {"exclusive": 1}, {"reverse": 1},
                                   {"exclusive": 1, "reverse": 1}])
@pytest.mark.parametrize("axis", [0, -1])
def test_cumprod(attrs, axis):
    x = RNG.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    model = node_model("CumProd", {"x": x}, attrs, opset=26,
                       constants={"axis": np.array(axis, np.int64)})
    _matches_reference(model, {"x": x})


def test_cumprod_empty_axis_and_int64():
    empty = np.zeros((2, 0), np.float32)
    model = node_model("CumProd", {"x": empty}, {"exclusive": 1}, opset=26,
                       constants={"axis": np.array(1, np.int64)})
    _matches_reference(model, {"x": empty})
    x = np.array([[3, -1], [2, 5], [-4, 2]], np.int64)
    model = node_model("CumProd", {"x": x}, {"reverse": 1}, opset=26,
                       constants={"axis": np.array(0, np.int32)})
    _matches_reference(model, {"x": x})


def test_cumprod_int32_wraps_like_int32():
    x = np.array([70000, 70000, 3, -2], np.int32)
    model = node_model("CumProd", {"x": x}, {}, opset=26,
                       constants={"axis": np.array(0, np.int64)})
    got = pgx.load(model).run(None, {"x": x})[0]
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.cumprod(x, dtype=np.int32))


@pytest.mark.parametrize("attrs", [{}, {"k": 2}, {"k": -1, "dtype": TensorProto.INT32},
                                   {"k": 9}])
def test_eye_like(attrs):
    x = _randn(3, 5)
    out = [attrs.get("dtype", TensorProto.FLOAT)]
    assert_matches_ort(node_model("EyeLike", {"x": x}, attrs, opset=13, out_types=out),
                       {"x": x})


@pytest.mark.parametrize("opset,keep", [(13, 1), (13, 0), (18, 1), (18, 0)])
def test_reduce_log_sum_axes_attribute_and_input(opset, keep):
    x = RNG.uniform(0.1, 2.0, (3, 4, 2)).astype(np.float32)
    if opset < 18:
        model = node_model("ReduceLogSum", {"x": x}, {"axes": [-1, 0], "keepdims": keep},
                           opset=opset)
    else:
        model = node_model("ReduceLogSum", {"x": x}, {"keepdims": keep}, opset=opset,
                           constants={"axes": np.array([-1, 0], np.int64)})
    assert_matches_ort(model, {"x": x})


def test_reduce_log_sum_all_and_empty():
    x = RNG.uniform(0.1, 2.0, (3, 4)).astype(np.float32)
    assert_matches_ort(node_model("ReduceLogSum", {"x": x}, opset=18), {"x": x})
    empty = np.zeros((2, 0, 3), np.float32)
    model = node_model("ReduceLogSum", {"x": empty}, opset=18,
                       constants={"axes": np.array([1], np.int64)})
    got = pgx.load(model).run(None, {"x": empty})[0]
    assert got.dtype == np.float32 and got.shape == (2, 1, 3) and np.all(got == -np.inf)


# ── index ops ────────────────────────────────────────────────────────────────

def test_gather_nd_negative_indices_and_slices():
    data = _randn(3, 4, 2)
    idx = np.array([[[0, -1]], [[2, 1]], [[-3, 0]]], np.int64)
    assert_matches_ort(node_model("GatherND", {"d": data, "i": idx}, opset=13),
                       {"d": data, "i": idx})
    part = np.array([[1], [-1]], np.int64)
    assert_matches_ort(node_model("GatherND", {"d": data, "i": part}, opset=13),
                       {"d": data, "i": part})


def test_gather_nd_batch_dims():
    data = _randn(2, 3, 4, 5)
    idx = RNG.integers(-3, 3, (2, 6, 1)).astype(np.int64)
    assert_matches_ort(node_model("GatherND", {"d": data, "i": idx}, {"batch_dims": 1},
                                  opset=13), {"d": data, "i": idx})
    idx2 = RNG.integers(0, 4, (2, 3, 1)).astype(np.int64)
    assert_matches_ort(node_model("GatherND", {"d": data, "i": idx2}, {"batch_dims": 2},
                                  opset=13), {"d": data, "i": idx2})


def test_gather_nd_component_out_of_range_raises():
    """[0, 4] of a (3, 4) table would land on [1, 0] if the tuple were only flattened."""
    data, idx = _randn(3, 4), np.array([[0, 4]], np.int64)
    model = node_model("GatherND", {"d": data, "i": idx}, opset=13)
    with pytest.raises(IndexRangeError):
        pgx.load(model).run(None, {"d": data, "i": idx})


@pytest.mark.parametrize("time_axis", [0, 1])
def test_reverse_sequence(time_axis):
    x = _randn(4, 3, 2) if time_axis == 0 else _randn(3, 4, 2)
    lens = np.array([4, 1, 2], np.int64)
    model = node_model("ReverseSequence", {"x": x, "l": lens},
                       {"time_axis": time_axis, "batch_axis": 1 - time_axis}, opset=13)
    assert_matches_ort(model, {"x": x, "l": lens})


def test_reverse_sequence_too_long_raises():
    x, lens = _randn(3, 2), np.array([4, 1], np.int64)
    model = node_model("ReverseSequence", {"x": x, "l": lens}, opset=13)
    with pytest.raises(IndexRangeError):
        pgx.load(model).run(None, {"x": x, "l": lens})


# ── Det ──────────────────────────────────────────────────────────────────────

@pytest.mark.parametrize("shape,dtype", [((3, 3), np.float32), ((2, 5, 5), np.float64),
                                         ((2, 0, 0), np.float32), ((1, 1), np.float32)])
def test_det(shape, dtype):
    x = _randn(*shape, dtype=dtype)
    model = node_model("Det", {"x": x}, opset=11)
    if dtype == np.float64:  # onnxruntime's Det is float32 only
        _matches_reference(model, {"x": x}, rtol=1e-10, atol=1e-12)
    else:
        assert_matches_ort(model, {"x": x}, rtol=1e-4, atol=1e-5)


def test_det_zero_pivots_and_singular_matrices():
    """A zero leading entry needs a row exchange (the sign flips); an all-zero column
    gives 0, not the NaN of dividing by the zero pivot."""
    x = np.array([[[0, 1], [1, 0]], [[0, 1], [0, 2]], [[0, 0], [0, 0]],
                  [[1, 2], [2, 4]]], np.float32)
    got = pgx.load(node_model("Det", {"x": x}, opset=11)).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, np.array([-1, 0, 0, 0], np.float32))
    assert_matches_ort(node_model("Det", {"x": x}, opset=11), {"x": x})
