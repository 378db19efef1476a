"""Whole models exported from torch (`torch.onnx.export(..., dynamo=False)`, the
TorchScript exporter, offline) run by picograd.onnx and compared with onnxruntime; and a
model built by hand whose Reshape shape is computed from `Shape` (folded on the host)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import picograd.onnx as pgx
from tests.e2e.onnx_helpers import assert_matches_ort

torch = pytest.importorskip("torch")


class SmallCNN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv1(x))))
        x = torch.nn.functional.gelu(self.conv2(x))
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return torch.softmax(self.fc(x), dim=-1)


class TinyTransformerBlock(torch.nn.Module):
    """Attention (one head, written out) and an MLP with LayerNorm: MatMul, Transpose,
    Softmax, Reshape from Shape, Gather / Slice of shapes, Erf-GELU."""

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(),
                                       torch.nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        att = torch.softmax(q @ k.transpose(1, 2) / d ** 0.5, dim=-1)
        x = x + self.proj((att @ v).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


def _export(module: Any, example: Any, path: str, dynamic: bool) -> None:
    module.eval()
    axes = {"x": {0: "batch"}, "y": {0: "batch"}} if dynamic else None
    torch.onnx.export(module, (example,), path, input_names=["x"], output_names=["y"],
                      dynamic_axes=axes, opset_version=17, dynamo=False)


def test_small_cnn_matches_onnxruntime(tmp_path):
    torch.manual_seed(0)
    cnn = SmallCNN()
    with torch.no_grad():  # non-trivial running statistics
        cnn.bn.running_mean.uniform_(-0.5, 0.5)
        cnn.bn.running_var.uniform_(0.5, 2.0)
    path = str(tmp_path / "cnn.onnx")
    _export(cnn, torch.randn(2, 3, 12, 12), path, dynamic=False)
    x = np.random.default_rng(0).standard_normal((2, 3, 12, 12)).astype(np.float32)
    assert_matches_ort(onnx.load(path), {"x": x}, atol=1e-5)
    with torch.no_grad():
        np.testing.assert_allclose(pgx.load(path)(x)["y"], cnn(torch.from_numpy(x)).numpy(),
                                   atol=1e-5)


def test_transformer_block_with_dynamic_batch(tmp_path):
    torch.manual_seed(0)
    block = TinyTransformerBlock()
    path = str(tmp_path / "block.onnx")
    _export(block, torch.randn(2, 5, 16), path, dynamic=True)
    model = pgx.load(path)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert {"MatMul", "Softmax", "Reshape"} <= ops
    for batch in (2, 3):  # a symbolic batch dim: other sizes are accepted
        x = np.random.default_rng(batch).standard_normal((batch, 5, 16)).astype(np.float32)
        assert_matches_ort(onnx.load(path), {"x": x}, atol=1e-5)
        assert model(x)["y"].shape == (batch, 5, 16)


def test_shape_arithmetic_is_folded_on_the_host():
    """Reshape(x, Concat(Gather(Shape(x), 0), [-1])): the shape input is a host value, and
    an int64 output stays int64."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
        helper.make_node("Mul", ["n", "n"], ["nn"]),
    ]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "zero1"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TP.FLOAT,
                                                                         [3, 2, 4])],
                              [helper.make_tensor_value_info("y", TP.FLOAT, [3, 8]),
                               helper.make_tensor_value_info("nn", TP.INT64, [])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # onnxruntime 1.31 reads IR <= 13
    x = np.arange(24, dtype=np.float32).reshape(3, 2, 4)
    loaded = pgx.load(model)
    env = loaded._execute(loaded._feeds((x,), {}), ["shape", "nn"])  # not only outputs
    assert isinstance(env["shape"], np.ndarray) and isinstance(env["nn"], np.ndarray)
    out = loaded(x)
    np.testing.assert_array_equal(out["y"], x.reshape(3, 8))
    assert out["nn"].dtype == np.int64 and out["nn"] == 9
    assert_matches_ort(model, {"x": x})
    assert loaded.run(["nn"], {"x": x})[0] == 9


def test_float16_transformer_block_matches_onnxruntime(tmp_path):
    # a half-precision export: weights, inputs and outputs float16, outputs declared so
    torch.manual_seed(0)
    block = TinyTransformerBlock().half()
    path = str(tmp_path / "block16.onnx")
    _export(block, torch.randn(2, 5, 16).half(), path, dynamic=False)
    x = np.random.default_rng(0).standard_normal((2, 5, 16)).astype(np.float16)
    out = pgx.load(path)(x)["y"]
    assert out.dtype == np.float16
    assert_matches_ort(onnx.load(path), {"x": x}, atol=2e-2)


def _mlp_model(elem: int, dtype: Any, w1: np.ndarray, w2: np.ndarray) -> onnx.ModelProto:
    """x @ w1 -> Relu -> @ w2 -> Softmax, in the element type `elem` throughout."""
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["z"]),
             helper.make_node("Softmax", ["z"], ["y"], axis=-1)]
    inits = [numpy_helper.from_array(w1.astype(dtype), "w1"),
             numpy_helper.from_array(w2.astype(dtype), "w2")]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", elem, [4, 8])],
                              [helper.make_tensor_value_info("y", elem, [4, 3])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_bfloat16_model_keeps_bfloat16_and_matches_a_float32_reference():
    # bfloat16 weights stay bfloat16 on the device; the reference computes in float32 from
    # the same rounded values (onnxruntime has no CPU bfloat16 MatMul)
    bf16 = pytest.importorskip("ml_dtypes").bfloat16
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((8, 6)), rng.standard_normal((6, 3))
    x = rng.standard_normal((4, 8)).astype(bf16)
    model = pgx.load(_mlp_model(TP.BFLOAT16, bf16, w1, w2))
    out = model(x)["y"]
    assert out.dtype == bf16
    f = [a.astype(bf16).astype(np.float32) for a in (x, w1, w2)]
    z = np.maximum(f[0] @ f[1], 0).astype(bf16).astype(np.float32) @ f[2]
    e = np.exp(z - z.max(-1, keepdims=True))
    np.testing.assert_allclose(out.astype(np.float32), e / e.sum(-1, keepdims=True),
                               atol=2e-2)
