"""picograd.onnx's LSTM, GRU and RNN against onnxruntime: every direction, sequence_lens,
both layouts, initial states, peepholes, input_forget, clip, linear_before_reset and the
activations (one-node models, random weights, every output compared)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

import picograd.onnx as pgx
from picograd.onnx.errors import OnnxUnsupportedError
from tests.e2e.onnx_helpers import assert_matches_ort, elem_type, ort_run

R = np.random.default_rng(0)
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
T, B, I, H = 5, 3, 4, 6


def rand(*shape: int, scale: float = 0.5) -> np.ndarray:
    return (R.standard_normal(shape) * scale).astype(np.float32)


def rnn_model(op: str, inputs: list[tuple[str, np.ndarray | None]], attrs: dict[str, Any],
              outputs: tuple[bool, ...], opset: int = 14) -> onnx.ModelProto:
    """One `op` node; `inputs` in the node's order (None: omitted), all graph inputs;
    `outputs` says which of Y, Y_h, Y_c the node names."""
    names = [n if a is not None else "" for n, a in inputs]
    outs = [f"y{i}" if on else "" for i, on in enumerate(outputs)]
    while outs and not outs[-1]:
        outs.pop()
    node = helper.make_node(op, names, outs, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, elem_type(a), a.shape) for n, a in inputs
         if a is not None],
        [helper.make_tensor_value_info(o, elem_type(inputs[0][1]), None) for o in outs if o])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    return model


def case(op: str, direction: str = "forward", layout: int = 0, bias: bool = True,
         lens: list[int] | None = None, initial: bool = False, peephole: bool = False,
         outputs: tuple[bool, ...] | None = None, **attrs: Any
         ) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    d = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    x = rand(B, T, I) if layout else rand(T, B, I, scale=1.0)
    state = (B, d, H) if layout else (d, B, H)
    inputs: list[tuple[str, np.ndarray | None]] = [
        ("X", x), ("W", rand(d, g * H, I)), ("R", rand(d, g * H, H)),
        ("B", rand(d, 2 * g * H) if bias else None),
        ("sequence_lens", None if lens is None else np.array(lens, np.int32)),
        ("initial_h", rand(*state) if initial else None)]
    if op == "LSTM":
        inputs += [("initial_c", rand(*state) if initial else None),
                   ("P", rand(d, 3 * H) if peephole else None)]
    while inputs[-1][1] is None:
        inputs.pop()
    n_out = 3 if op == "LSTM" else 2
    outputs = outputs or (True,) * n_out
    attrs = {"hidden_size": H, "direction": direction, **attrs}
    if layout:
        attrs["layout"] = layout
    model = rnn_model(op, inputs, attrs, outputs)
    return model, {n: a for n, a in inputs if a is not None}


OPTIONS: list[dict[str, Any]] = [
    {},
    {"direction": "reverse"},
    {"direction": "bidirectional"},
    {"bias": False},
    {"initial": True},
    {"initial": True, "direction": "bidirectional", "layout": 1},
    {"layout": 1},
    {"lens": [5, 2, 4]},
    {"lens": [3, 5, 1], "direction": "reverse"},
    {"lens": [4, 1, 5], "direction": "bidirectional", "initial": True},
    {"lens": [2, 5, 3], "direction": "bidirectional", "layout": 1},
    {"lens": [5, 5, 5]},
    {"clip": 0.3},
    {"outputs": (True,)},
    {"outputs": (False, True)},
]


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(
    f"{k}={v}" for k, v in o.items()) or "default")
def test_options_match_ort(op: str, options: dict[str, Any]) -> None:
    check(op, **options)


def check(op: str, **options: Any) -> None:
    """picograd equals onnxruntime on `case(op, **options)`. onnxruntime's CPU kernels have
    no layout=1: there picograd's layout-1 outputs are compared, transposed, with
    onnxruntime's layout-0 outputs of the same (transposed) inputs."""
    if not options.get("layout"):
        assert_matches_ort(*case(op, **options), rtol=1e-4, atol=1e-5)
        return
    model1, feeds1 = case(op, **options)
    model0, _ = case(op, **{**options, "layout": 0})
    # batch-major -> time-major: X (B, T, I) -> (T, B, I), states (B, D, H) -> (D, B, H)
    feeds0 = {k: v.transpose(1, 0, 2) if k in ("X", "initial_h", "initial_c") else v
              for k, v in feeds1.items()}
    ours = pgx.load(model1).run(None, feeds1)
    theirs = ort_run(model0, feeds0)
    for name, got, want in zip([o.name for o in model1.graph.output], ours, theirs,
                               strict=True):
        # Y (T, D, B, H) -> (B, T, D, H); Y_h / Y_c (D, B, H) -> (B, D, H)
        want = want.transpose(2, 0, 1, 3) if want.ndim == 4 else want.transpose(1, 0, 2)
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("options", [
    {"peephole": True},
    {"peephole": True, "initial": True, "direction": "bidirectional"},
    {"peephole": True, "lens": [5, 2, 3], "direction": "reverse"},
    {"input_forget": 1},
    {"input_forget": 1, "peephole": True, "clip": 0.5},
    {"outputs": (False, False, True)},
])
def test_lstm_options_match_ort(options: dict[str, Any]) -> None:
    check("LSTM", **options)


@pytest.mark.parametrize("options", [
    {"linear_before_reset": 1},
    {"linear_before_reset": 1, "bias": False},
    {"linear_before_reset": 1, "direction": "bidirectional", "lens": [5, 3, 1]},
    {"linear_before_reset": 1, "layout": 1, "initial": True},
])
def test_gru_linear_before_reset_matches_ort(options: dict[str, Any]) -> None:
    check("GRU", **options)


ACTIVATIONS: list[tuple[str, list[str], dict[str, Any]]] = [
    ("RNN", ["Relu"], {}),
    ("RNN", ["Sigmoid"], {}),
    ("RNN", ["Affine"], {"activation_alpha": [0.7], "activation_beta": [0.1]}),
    ("RNN", ["LeakyRelu"], {"activation_alpha": [0.2]}),
    ("RNN", ["ThresholdedRelu"], {"activation_alpha": [0.1]}),
    ("RNN", ["ScaledTanh"], {"activation_alpha": [1.5], "activation_beta": [0.8]}),
    ("RNN", ["Elu"], {"activation_alpha": [0.6]}),
    ("RNN", ["Softsign"], {}),
    ("RNN", ["Softplus"], {}),
    ("RNN", ["HardSigmoid"], {"activation_alpha": [0.3], "activation_beta": [0.4]}),
    ("RNN", ["Tanh", "Relu"], {"direction": "bidirectional"}),
    ("GRU", ["HardSigmoid", "Softsign"], {"activation_alpha": [0.25],
                                          "activation_beta": [0.45]}),
    ("GRU", ["Sigmoid", "Tanh", "HardSigmoid", "Relu"], {"direction": "bidirectional"}),
    ("LSTM", ["HardSigmoid", "Tanh", "Softsign"], {}),
    ("LSTM", ["Sigmoid", "ScaledTanh", "LeakyRelu"],
     {"activation_alpha": [1.2, 0.05], "activation_beta": [0.9]}),
]


@pytest.mark.parametrize(("op", "acts", "attrs"), ACTIVATIONS,
                         ids=[f"{o}-{'-'.join(a)}" for o, a, _ in ACTIVATIONS])
def test_activations_match_ort(op: str, acts: list[str], attrs: dict[str, Any]) -> None:
    assert_matches_ort(*case(op, activations=acts, **attrs), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_double_stays_double(op: str) -> None:
    """onnxruntime's CPU kernels have no float64: picograd's float64 result is compared
    with onnxruntime's float32 one of the same values."""
    model, feeds = case(op, direction="bidirectional", lens=[5, 3, 2])
    theirs = ort_run(model, feeds)
    for value in [*model.graph.input, *model.graph.output]:
        if value.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            value.type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
    ours = pgx.load(model).run(None, {k: v.astype(np.float64) if v.dtype == np.float32
                                      else v for k, v in feeds.items()})
    for got, want in zip(ours, theirs, strict=True):
        assert got.dtype == np.float64 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("op", "attrs", "why"), [
    ("RNN", {"activations": ["Gelu"]}, "activation 'Gelu'"),
    ("LSTM", {"activations": ["Sigmoid", "Tanh"]}, "2 activations given"),
    ("RNN", {"activations": ["Affine"]}, "needs activation_alpha"),
])
def test_unsupported_rejected_at_load(op: str, attrs: dict[str, Any], why: str) -> None:
    model, _ = case(op, **attrs)
    with pytest.raises(OnnxUnsupportedError, match=why):
        pgx.load(model)
