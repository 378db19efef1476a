"""picograd.onnx against onnxruntime, one op family at a time: one-node models built with
onnx.helper, random inputs, values and dtypes compared (tests/e2e/onnx_helpers.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper

import picograd.onnx as pgx
from tests.e2e.onnx_helpers import assert_matches_ort, node_model

R = np.random.default_rng(0)


def f32(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


def i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _case(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any] | None = None,
          opset: int = 17, constants: dict[str, np.ndarray] | None = None,
          out_types: list[int] | None = None, **tol: float) -> Any:
    return pytest.param(op, inputs, attrs, opset, constants, out_types, tol,
                        id=f"{op}-{opset}-{len(constants or {})}-{sorted(attrs or {})}")


_POS = (np.abs(f32(3, 4)) + 0.1)
ELEMENTWISE = [
    *[_case(op, {"a": f32(3, 4), "b": f32(4)}) for op in ("Add", "Sub", "Mul")],
    _case("Div", {"a": f32(3, 4), "b": _POS}),
    _case("Div", {"a": np.array([7, -7, 9], np.int32), "b": np.array([2, 2, -4], np.int32)}),
    _case("Pow", {"a": _POS, "b": f32(3, 4)}),
    _case("Pow", {"a": _POS, "b": np.array(2, np.int64)}),
    *[_case(op, {"x": f32(2, 5)}) for op in (
        "Neg", "Abs", "Exp", "Relu", "Sigmoid", "Tanh", "Erf", "Floor", "Ceil", "Sign",
        "Sin", "Cos", "Softplus", "HardSwish")],
    *[_case(op, {"x": _POS}) for op in ("Log", "Sqrt", "Reciprocal")],
    _case("Round", {"x": np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.4], np.float32)}),
    _case("LeakyRelu", {"x": f32(2, 5)}, {"alpha": 0.2}),
    _case("LeakyRelu", {"x": f32(2, 5)}),
    _case("Elu", {"x": f32(2, 5)}, {"alpha": 0.5}),
    _case("Selu", {"x": f32(2, 5)}),
    _case("HardSigmoid", {"x": f32(2, 5)}, {"alpha": 0.3, "beta": 0.4}),
    _case("Gelu", {"x": f32(2, 5)}, opset=20),
    _case("Gelu", {"x": f32(2, 5)}, {"approximate": "tanh"}, opset=20),
    _case("Clip", {"x": f32(3, 4)}, constants={"lo": np.array(-0.5, np.float32),
                                               "hi": np.array(0.5, np.float32)}),
    _case("Clip", {"x": f32(3, 4)}, {"min": -0.2, "max": 0.3}, opset=6),
    _case("Clip", {"x": np.array([-5, 0, 7], np.int64)}, constants={"lo": np.array(-1, np.int64)}),
    *[_case(op, {"a": f32(3, 1), "b": f32(4), "c": f32(3, 4)}) for op in
      ("Min", "Max", "Sum", "Mean")],
    *[_case(op, {"a": f32(3, 4), "b": f32(4)}, out_types=[TP.BOOL]) for op in
      ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual")],
    _case("Equal", {"a": np.array([1, 2, 3], np.int64), "b": np.array([1, 0, 3], np.int64)},
          out_types=[TP.BOOL]),
    *[_case(op, {"a": R.random((3, 4)) < 0.5, "b": R.random(4) < 0.5}) for op in
      ("And", "Or", "Xor")],
    _case("Not", {"x": R.random((3, 4)) < 0.5}),
    _case("Where", {"c": R.random((3, 4)) < 0.5, "a": f32(3, 4), "b": f32(4)},
          out_types=[TP.FLOAT]),
    _case("Cast", {"x": f32(3, 4) * 10}, {"to": TP.INT32}, out_types=[TP.INT32]),
    _case("Cast", {"x": f32(3, 4)}, {"to": TP.FLOAT16}, out_types=[TP.FLOAT16]),
    _case("Cast", {"x": np.array([1, 0, 3], np.int64)}, {"to": TP.BOOL}, out_types=[TP.BOOL]),
    _case("Cast", {"x": f32(3, 4)}, {"to": TP.DOUBLE}, out_types=[TP.DOUBLE]),
    _case("CastLike", {"x": f32(3, 4) * 10, "like": np.zeros(1, np.int64)},
          out_types=[TP.INT64]),
    _case("Identity", {"x": f32(3, 4)}),
    _case("Mod", {"a": np.array([5, -5, 7], np.int64), "b": np.array([3, 3, -2], np.int64)}),
    _case("Mod", {"a": f32(5), "b": _POS[0, :1]}, {"fmod": 1}),
]


def _run(op: str, inputs: dict, attrs: dict | None, opset: int, constants: dict | None,
         out_types: list | None, tol: dict, n_out: int = 1) -> None:
    model = node_model(op, inputs, attrs, opset, out_types, constants, n_out)
    assert_matches_ort(model, inputs, **tol)


@pytest.mark.parametrize(("op", "inputs", "attrs", "opset", "constants", "out_types", "tol"),
                         ELEMENTWISE)
def test_elementwise(op, inputs, attrs, opset, constants, out_types, tol):
    _run(op, inputs, attrs, opset, constants, out_types, tol)


_X4 = f32(2, 3, 7, 6)
NN = [
    _case("MatMul", {"a": f32(2, 3, 4), "b": f32(4, 5)}, atol=1e-5),
    _case("MatMul", {"a": f32(4), "b": f32(4, 5)}, atol=1e-5),
    _case("Gemm", {"a": f32(4, 3), "b": f32(5, 4)}, {"transA": 1, "transB": 1, "alpha": 0.5,
                                                    "beta": 2.0},
          constants={"c": f32(5)}, atol=1e-5),
    _case("Conv", {"x": _X4}, {"pads": [1, 0, 2, 1], "strides": [2, 1]},
          constants={"w": f32(4, 3, 3, 2), "b": f32(4)}, atol=1e-4),
    _case("Conv", {"x": _X4}, {"pads": [2, 1, 2, 1], "group": 3, "dilations": [2, 1]},
          constants={"w": f32(6, 1, 3, 3)}, atol=1e-4),
    _case("Conv", {"x": f32(1, 2, 9)}, {"auto_pad": "SAME_LOWER", "strides": [2]},
          constants={"w": f32(3, 2, 4)}, atol=1e-4),
    _case("Conv", {"x": f32(1, 2, 4, 5, 4)}, {"pads": [1, 1, 0, 1, 1, 0]},
          constants={"w": f32(2, 2, 3, 3, 2)}, atol=1e-4),
    _case("ConvTranspose", {"x": f32(1, 2, 4, 3)}, {"strides": [2, 3], "pads": [1, 0, 0, 1],
                                                    "output_padding": [1, 0]},
          constants={"w": f32(2, 3, 3, 3), "b": f32(3)}, atol=1e-4),
    _case("MaxPool", {"x": _X4}, {"kernel_shape": [3, 2], "strides": [2, 2],
                                  "pads": [1, 0, 1, 1]}),
    _case("MaxPool", {"x": _X4}, {"kernel_shape": [3, 3], "ceil_mode": 1, "strides": [2, 2]}),
    _case("MaxPool", {"x": f32(1, 2, 7, 8)}, {"kernel_shape": [2, 2], "ceil_mode": 1,
                                              "strides": [3, 3], "pads": [0, 1, 1, 1]}),
    _case("MaxPool", {"x": f32(1, 2, 7, 8)}, {"kernel_shape": [3, 2], "ceil_mode": 1,
                                              "strides": [2, 2], "pads": [1, 0, 0, 1],
                                              "dilations": [1, 2]}),
    _case("AveragePool", {"x": _X4}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    _case("AveragePool", {"x": _X4}, {"kernel_shape": [3, 2], "pads": [0, 1, 2, 0],
                                      "count_include_pad": 1}),
    _case("AveragePool", {"x": _X4}, {"kernel_shape": [2, 3], "auto_pad": "SAME_UPPER"}),
    _case("GlobalAveragePool", {"x": _X4}),
    _case("GlobalMaxPool", {"x": _X4}),
    _case("BatchNormalization", {"x": _X4}, {"epsilon": 1e-3},
          constants={"s": f32(3), "b": f32(3), "m": f32(3), "v": np.abs(f32(3)) + 0.5},
          atol=1e-5),
    _case("LayerNormalization", {"x": f32(2, 3, 8)}, {"axis": -1},
          constants={"s": f32(8), "b": f32(8)}, atol=1e-5),
    _case("LayerNormalization", {"x": f32(2, 3, 8)}, {"axis": 1},
          constants={"s": f32(3, 8)}, atol=1e-5),
    _case("InstanceNormalization", {"x": _X4}, constants={"s": f32(3), "b": f32(3)},
          atol=1e-5),
    _case("Softmax", {"x": f32(2, 3, 4)}, {"axis": 1}),
    _case("Softmax", {"x": f32(2, 3, 4)}, {"axis": 1}, opset=11),
    _case("LogSoftmax", {"x": f32(2, 3, 4)}),
    _case("LogSoftmax", {"x": f32(2, 3, 4)}, opset=11),
]


@pytest.mark.parametrize(("op", "inputs", "attrs", "opset", "constants", "out_types", "tol"),
                         NN)
def test_nn(op, inputs, attrs, opset, constants, out_types, tol):
    _run(op, inputs, attrs, opset, constants, out_types, tol)


_X3 = f32(2, 3, 4)
SHAPE = [
    _case("Reshape", {"x": _X3}, constants={"s": i64(0, -1)}),
    _case("Reshape", {"x": np.zeros((0, 3), np.float32)}, {"allowzero": 1},
          constants={"s": i64(3, 0)}, opset=14),
    _case("Flatten", {"x": _X3}, {"axis": 2}),
    _case("Flatten", {"x": _X3}, {"axis": -1}),
    _case("Transpose", {"x": _X3}, {"perm": [2, 0, 1]}),
    _case("Transpose", {"x": _X3}),
    _case("Concat", {"a": _X3, "b": f32(2, 1, 4)}, {"axis": -2}),
    _case("Slice", {"x": _X3}, constants={"s": i64(1, -1), "e": i64(3, -100),
                                          "a": i64(1, 2), "st": i64(1, -2)}),
    _case("Slice", {"x": _X3}, constants={"s": i64(0, 1), "e": i64(9, 3)}),
    _case("Slice", {"x": _X3}, {"starts": [1], "ends": [3], "axes": [2]}, opset=9),
    _case("Squeeze", {"x": f32(2, 1, 3, 1)}, constants={"a": i64(-1)}),
    _case("Squeeze", {"x": f32(2, 1, 3, 1)}),
    _case("Squeeze", {"x": f32(2, 1, 3, 1)}, {"axes": [1]}, opset=11),
    _case("Unsqueeze", {"x": f32(2, 3)}, constants={"a": i64(0, -1)}),
    _case("Unsqueeze", {"x": f32(2, 3)}, {"axes": [1]}, opset=11),
    _case("Expand", {"x": f32(3, 1)}, constants={"s": i64(2, 1, 4)}),
    _case("Gather", {"x": _X3}, {"axis": 1}, constants={"i": np.array([[0, -1], [2, 1]],
                                                                        np.int64)}),
    _case("Gather", {"x": _X3, "i": np.array([1, -2], np.int32)}),
    _case("GatherElements", {"x": _X3}, {"axis": 2},
          constants={"i": R.integers(-4, 4, (2, 3, 2)).astype(np.int64)}),
    _case("Tile", {"x": _X3}, constants={"r": i64(2, 1, 3)}),
    _case("Pad", {"x": _X3}, constants={"p": i64(0, 1, 2, 0, 0, 1),
                                        "v": np.array(1.5, np.float32)}),
    _case("Pad", {"x": _X3}, {"mode": "reflect"}, constants={"p": i64(0, 1, 2, 0, 2, 1)}),
    _case("Pad", {"x": _X3}, {"mode": "edge"}, constants={"p": i64(0, 0, 3, 0, 1, -1)}),
    _case("Pad", {"x": _X3}, {"mode": "wrap"}, constants={"p": i64(0, 1, 1, 0, 1, 2)},
          opset=19),
    _case("Shape", {"x": _X3}, out_types=[TP.INT64]),
    _case("Shape", {"x": _X3}, {"start": 1, "end": -1}, out_types=[TP.INT64], opset=15),
    _case("Size", {"x": _X3}, out_types=[TP.INT64]),
]


@pytest.mark.parametrize(("op", "inputs", "attrs", "opset", "constants", "out_types", "tol"),
                         SHAPE)
def test_shape(op, inputs, attrs, opset, constants, out_types, tol):
    _run(op, inputs, attrs, opset, constants, out_types, tol)


def test_split_variants():
    x = f32(6, 4)
    _run("Split", {"x": x}, {"axis": 0}, 17, {"s": i64(1, 5)}, None, {}, n_out=2)
    _run("Split", {"x": x}, {"axis": 1}, 11, None, None, {}, n_out=2)
    _run("Split", {"x": f32(7, 2)}, {"num_outputs": 3}, 18, None, None, {}, n_out=3)


_R4 = f32(2, 3, 4, 5)
REDUCE = [
    *[_case(op, {"x": _R4}, {"keepdims": k}, constants={"a": i64(1, -1)}, opset=18, atol=1e-5)
      for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd") for k in (0, 1)],
    _case("ReduceSum", {"x": _R4}, constants={"a": i64(0, 2)}, opset=13, atol=1e-5),
    _case("ReduceSum", {"x": _R4}, {"keepdims": 0}, opset=13, atol=1e-5),
    _case("ReduceSum", {"x": _R4}, {"noop_with_empty_axes": 1}, opset=13),
    _case("ReduceSum", {"x": _R4}, {"axes": [1]}, opset=11, atol=1e-5),
    _case("ReduceMean", {"x": _R4}, {"axes": [-1, 0], "keepdims": 0}, opset=13, atol=1e-5),
    _case("ReduceMax", {"x": np.array([[1, 5, 2], [7, 0, 3]], np.int64)}, {"axes": [1]},
          opset=13),
    _case("ReduceSum", {"x": np.array([[1, 5, 2], [7, 0, 3]], np.int32)},
          constants={"a": i64(1)}, opset=13),
    _case("ReduceLogSumExp", {"x": _R4}, constants={"a": i64(1, 3)}, opset=18, atol=1e-5),
    _case("ArgMax", {"x": _R4}, {"axis": 2}, out_types=[TP.INT64]),
    _case("ArgMin", {"x": _R4}, {"axis": -1, "keepdims": 0}, out_types=[TP.INT64]),
    _case("ArgMax", {"x": np.array([[1, 3, 3, 0]], np.float32)}, {"axis": 1,
                                                                   "select_last_index": 1},
          out_types=[TP.INT64]),
]


@pytest.mark.parametrize(("op", "inputs", "attrs", "opset", "constants", "out_types", "tol"),
                         REDUCE)
def test_reduce(op, inputs, attrs, opset, constants, out_types, tol):
    _run(op, inputs, attrs, opset, constants, out_types, tol)


MISC = [
    _case("CumSum", {"x": f32(3, 4)}, constants={"a": i64(1)}, atol=1e-5),
    _case("CumSum", {"x": np.arange(12, dtype=np.int32).reshape(3, 4)}, {"exclusive": 1,
                                                                          "reverse": 1},
          constants={"a": np.array(0, np.int32)}),
    _case("Einsum", {"a": f32(2, 3, 4), "b": f32(2, 4, 5)}, {"equation": "bij,bjk->bik"},
          opset=12, atol=1e-5),
    _case("Range", {"s": np.array(1, np.int64), "l": np.array(10, np.int64),
                    "d": np.array(3, np.int64)}, opset=11),
    _case("Range", {"s": np.array(1.0, np.float32), "l": np.array(-2.0, np.float32),
                    "d": np.array(-0.5, np.float32)}, opset=11),
    _case("ConstantOfShape", {"s": i64(2, 3)}, out_types=[TP.FLOAT]),
    _case("OneHot", {"i": np.array([[0, 3], [-1, 2]], np.int64)}, {"axis": 1},
          constants={"d": np.array(4, np.int64), "v": np.array([0.5, 2.0], np.float32)},
          out_types=[TP.FLOAT]),
    _case("Hardmax", {"x": np.array([[1, 3, 3], [2, 0, 1]], np.float32)}, opset=13),
    _case("Hardmax", {"x": f32(2, 3, 4)}, opset=11),
    _case("DepthToSpace", {"x": f32(1, 8, 2, 3)}, {"blocksize": 2}),
    _case("DepthToSpace", {"x": f32(1, 8, 2, 3)}, {"blocksize": 2, "mode": "CRD"}),
    _case("SpaceToDepth", {"x": f32(1, 2, 4, 6)}, {"blocksize": 2}),
    _case("LRN", {"x": f32(2, 5, 3, 3)}, {"size": 3}, atol=1e-5),
    _case("Shrink", {"x": f32(3, 4)}, {"bias": 0.2, "lambd": 0.3}),
    _case("IsInf", {"x": np.array([1.0, np.inf, -np.inf, np.nan], np.float32)},
          {"detect_negative": 0}, opset=10, out_types=[TP.BOOL]),
    _case("Trilu", {"x": f32(4, 5)}, {"upper": 0}, constants={"k": np.array(1, np.int64)},
          opset=14),
]


@pytest.mark.parametrize(("op", "inputs", "attrs", "opset", "constants", "out_types", "tol"),
                         MISC)
def test_misc(op, inputs, attrs, opset, constants, out_types, tol):
    _run(op, inputs, attrs, opset, constants, out_types, tol)


def test_topk_values_and_indices():
    x = R.permutation(24).astype(np.float32).reshape(4, 6)
    _run("TopK", {"x": x}, {"axis": 1}, 11, {"k": i64(3)}, [TP.FLOAT, TP.INT64], {}, n_out=2)
    _run("TopK", {"x": x}, {"axis": 0, "largest": 0}, 11, {"k": i64(2)}, [TP.FLOAT, TP.INT64],
         {}, n_out=2)
    ties = np.array([[1, 3, 3, 2, 3, 0]], np.float32)  # equal values: the lower index first
    for largest in (0, 1):
        _run("TopK", {"x": ties}, {"largest": largest}, 11, {"k": i64(3)},
             [TP.FLOAT, TP.INT64], {}, n_out=2)


def test_dropout_is_identity_at_inference():
    x = f32(3, 4)
    _run("Dropout", {"x": x}, None, 13, {"r": np.array(0.5, np.float32)}, None, {})


def test_conv_model_on_each_cpu_renderer(device):
    """A conv model on both CPU renderers (LLVM and C) through the `device` fixture."""
    if device not in ("CPU:LLVM", "CPU:C"):
        pytest.skip("the CPU renderers are enough here; GPU devices run the e2e suite")
    x = f32(1, 2, 5, 5)
    model = node_model("Conv", {"x": x}, {"pads": [1, 1, 1, 1]}, 17, None,
                       {"w": f32(3, 2, 3, 3)})
    assert_matches_ort(model, {"x": x}, atol=1e-4, device=device)


def test_lrn_with_an_even_size_follows_the_spec_formula():
    """onnxruntime takes odd sizes only (and onnx 1.23's reference LRN loops over the batch,
    not the channels), so the even window is checked against the spec's formula: channels
    c - floor((size-1)/2) .. c + ceil((size-1)/2)."""
    x = f32(2, 6, 3, 3)
    size, alpha, beta, bias = 4, 0.5, 0.75, 2.0
    model = node_model("LRN", {"x": x}, {"size": size, "alpha": alpha, "bias": bias}, 17)
    square_sum = np.zeros_like(x)
    for c in range(x.shape[1]):
        lo, hi = max(0, c - (size - 1) // 2), min(x.shape[1], c + -(-(size - 1) // 2) + 1)
        square_sum[:, c] = (x[:, lo:hi] ** 2).sum(axis=1)
    expected = x / (bias + alpha / size * square_sum) ** beta
    np.testing.assert_allclose(pgx.load(model)(x)["y0"], expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis, b_shape", [(1, (3,)), (None, (4,)), (0, (2, 1)), (1, (3, 4))])
def test_opset_6_broadcast_attribute_aligns_b_at_axis(axis, b_shape):
    # opsets 1-6: B broadcasts to A only with broadcast=1, its dims matching A's from `axis`
    a = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal(b_shape).astype(np.float32)
    attrs = {"broadcast": 1} | ({} if axis is None else {"axis": axis})
    node = helper.make_node("Add", ["a", "b"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("a", TP.FLOAT, a.shape),
        helper.make_tensor_value_info("b", TP.FLOAT, b.shape)],
        [helper.make_tensor_value_info("y", TP.FLOAT, a.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])
    model.ir_version = 3
    start = a.ndim - b.ndim if axis is None else axis
    expected = a + b.reshape(b.shape + (1,) * (a.ndim - start - b.ndim))
    np.testing.assert_allclose(pgx.load(model)(a, b)["y"], expected, rtol=1e-6)


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 2], "dilations": [2, 1], "strides": [1, 2]},
    {"kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 0, 1, 1],
     "count_include_pad": 1},
    {"kernel_shape": [3, 3], "dilations": [1, 2], "pads": [1, 1, 0, 1], "ceil_mode": 1,
     "strides": [2, 2]},
    {"kernel_shape": [3, 3], "pads": [0, 1, 1, 0], "ceil_mode": 1, "strides": [2, 2],
     "count_include_pad": 1},
])
def test_average_pool_dilations_and_uneven_pads_with_ceil_mode(attrs):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 8)).astype(np.float32)
    assert_matches_ort(node_model("AveragePool", {"x": x}, attrs, opset=19), {"x": x},
                       atol=1e-5)
