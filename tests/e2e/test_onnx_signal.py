"""DFT, STFT, the window functions and MelWeightMatrix against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import picograd.onnx as pgx
from tests.e2e.onnx_helpers import assert_matches_ort, node_model

_RNG = np.random.default_rng(0)


def _signal(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


# (a one-sided forward DFT takes a real signal, a one-sided inverse complex bins)
@pytest.mark.parametrize("inverse,onesided,complex_input", [
    (0, 0, False), (0, 0, True), (0, 1, False), (1, 0, False), (1, 0, True), (1, 1, True)])
def test_dft_opset20_axis_input(inverse: int, onesided: int, complex_input: bool) -> None:
    x = _signal(2, 8, 3, 2 if complex_input else 1)
    model = node_model("DFT", {"x": x}, {"inverse": inverse, "onesided": onesided},
                       opset=20, constants={"_none": np.empty(0), "axis": np.array(1, np.int64)})
    assert_matches_ort(model, {"x": x}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("length", [5, 8, 12])
def test_dft_length_pads_and_truncates(length: int) -> None:
    x = _signal(3, 8, 2)
    model = node_model("DFT", {"x": x}, opset=20,
                       constants={"n": np.array(length, np.int64),
                                  "axis": np.array(-2, np.int64)})
    assert_matches_ort(model, {"x": x}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("length", [6, 7, 9, 10, 12])
def test_dft_irfft_odd_and_even_length(length: int) -> None:
    """Against onnx's reference (numpy's irfft): onnxruntime 1.31 reads the bins otherwise
    when dft_length is not 2 * (bins - 1)."""
    x = _signal(1, 6, 4, 2)
    model = node_model("DFT", {"x": x}, {"inverse": 1, "onesided": 1, "axis": 1}, opset=17,
                       constants={"n": np.array(length, np.int64)})
    want = np.asarray(ReferenceEvaluator(model).run(None, {"x": x})[0])  # type: ignore[index]
    got = pgx.load(model).run(None, {"x": x})[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_dft_opset17_axis_attribute_float64() -> None:
    x = _RNG.standard_normal((4, 6, 1))
    model = node_model("DFT", {"x": x}, {"axis": 0}, opset=17)
    assert_matches_ort(model, {"x": x}, rtol=1e-10, atol=1e-10)


def test_dft_long_signal_accuracy() -> None:
    """The angles are reduced in integers, so a long transform stays float32-accurate."""
    x = _signal(1, 1024, 1)
    model = node_model("DFT", {"x": x}, opset=17)
    got = pgx.load(model).run(None, {"x": x})[0]
    want = np.fft.fft(x[0, :, 0].astype(np.float64))
    np.testing.assert_allclose(got[0, :, 0] + 1j * got[0, :, 1], want, atol=2e-3)


def test_dft_rejects_a_bad_complex_dim() -> None:
    x = _signal(1, 4, 3)
    model = node_model("DFT", {"x": x}, opset=17)
    with pytest.raises(pgx.OnnxUnsupportedError, match="last dim"):
        pgx.load(model).run(None, {"x": x})


@pytest.mark.parametrize("with_window", [False, True])
@pytest.mark.parametrize("onesided", [0, 1])
def test_stft(with_window: bool, onesided: int) -> None:
    x = _signal(2, 40, 1)
    constants: dict[str, np.ndarray] = {"step": np.array(6, np.int64)}
    if with_window:
        constants["window"] = np.hanning(16).astype(np.float32)
    else:
        constants["_none"] = np.empty(0)  # an omitted window
        constants["length"] = np.array(16, np.int64)
    model = node_model("STFT", {"x": x}, {"onesided": onesided}, constants=constants)
    assert_matches_ort(model, {"x": x}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
@pytest.mark.parametrize("out", [TensorProto.FLOAT, TensorProto.DOUBLE])
def test_windows(name: str, periodic: int, out: int) -> None:
    size = np.array(10, np.int64)
    model = node_model(name, {"size": size}, {"periodic": periodic, "output_datatype": out},
                       out_types=[out])
    assert_matches_ort(model, {"size": size}, rtol=1e-6, atol=1e-6)


def test_mel_weight_matrix() -> None:
    feeds = {"mels": np.array(8, np.int64), "n": np.array(16, np.int64),
             "rate": np.array(8192, np.int64), "lo": np.array(0, np.float32),
             "hi": np.array(4096, np.float32)}
    model = node_model("MelWeightMatrix", feeds, out_types=[TensorProto.FLOAT])
    assert_matches_ort(model, feeds)


def test_mel_edges_out_of_range_refused() -> None:
    feeds = {"mels": np.array(8, np.int64), "n": np.array(16, np.int64),
             "rate": np.array(8192, np.int64), "lo": np.array(0, np.float32),
             "hi": np.array(40960, np.float32)}
    model = node_model("MelWeightMatrix", feeds, out_types=[TensorProto.FLOAT])
    with pytest.raises(pgx.OnnxUnsupportedError, match="mel edges"):
        pgx.load(model).run(None, feeds)


def test_stft_window_and_frame_length_must_agree() -> None:
    """(onnx's shape inference rejects such a model too; onnx's checker does not)"""
    x = _signal(1, 40, 1)
    graph = helper.make_graph(
        [helper.make_node("STFT", ["x", "step", "window", "length"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "f", "b", 2])],
        [numpy_helper.from_array(np.array(4, np.int64), "step"),
         numpy_helper.from_array(np.ones(8, np.float32), "window"),
         numpy_helper.from_array(np.array(16, np.int64), "length")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(pgx.OnnxUnsupportedError, match="frame_length 16"):
        pgx.load(model).run(None, {"x": x})
