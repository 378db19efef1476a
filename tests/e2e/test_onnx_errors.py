"""picograd.onnx's typed errors: an unsupported op or attribute fails at load naming the
node, a truncated or missing file names the file, feeds that do not match the graph's
declared inputs name the input; and the command line prints one line for each."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper

import picograd as pg
import picograd.onnx as pgx
from picograd.errors import PicogradError
from picograd.onnx import OnnxInputError, OnnxModelError, OnnxUnsupportedError
from picograd.onnx.__main__ import main


def _model(node: onnx.NodeProto, opset: int = 17, dims: list | None = None) -> onnx.ModelProto:
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TP.FLOAT, dims or [2, 3])],
                              [helper.make_tensor_value_info("y", TP.FLOAT, dims or [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                    helper.make_opsetid("custom.x", 1)])
    model.ir_version = 8
    return model


def test_unsupported_op_fails_at_load_naming_the_node():
    # TfIdfVectorizer (n-gram counts, a text-processing op) has no translation
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="the_tfidf", mode="TF",
                            min_gram_length=1, max_gram_length=1, max_skip_count=0,
                            ngram_counts=[0], ngram_indexes=[0], pool_int64s=[2])
    model = _model(node, opset=13, dims=[3, 3])
    with pytest.raises(OnnxUnsupportedError) as info:
        pgx.load(model)
    message = str(info.value)
    for part in ("the_tfidf", "TfIdfVectorizer", "ai.onnx", "opset 13"):
        assert part in message
    assert isinstance(info.value, NotImplementedError | PicogradError)


def test_other_domains_and_unknown_attributes_are_unsupported():
    custom = _model(helper.make_node("Relu", ["x"], ["y"], name="r", domain="custom.x"))
    with pytest.raises(OnnxUnsupportedError, match=r"custom\.x"):
        pgx.load(custom)
    weird = _model(helper.make_node("Relu", ["x"], ["y"], name="r"))
    weird.graph.node[0].attribute.append(helper.make_attribute("frobnicate", 1))
    with pytest.raises((OnnxUnsupportedError, OnnxModelError), match="frobnicate"):
        pgx.load(weird)


def test_unsupported_attribute_value_fails_at_load():
    model = _model(helper.make_node("BatchNormalization", ["x", "x", "x", "x", "x"], ["y"],
                                    name="bn", training_mode=1), opset=15)
    with pytest.raises(OnnxUnsupportedError, match=r"bn.*training_mode"):
        pgx.load(model)


def test_truncated_and_missing_files_name_the_file(tmp_path):
    model = _model(helper.make_node("Relu", ["x"], ["y"]))
    data = model.SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) - 7])
    with pytest.raises(OnnxModelError, match=r"cut\.onnx"):
        pgx.load(str(path))
    with pytest.raises(OnnxModelError, match=r"nothing\.onnx"):
        pgx.load(str(tmp_path / "nothing.onnx"))
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\xff" * 64)
    with pytest.raises(OnnxModelError, match=r"garbage\.onnx"):
        pgx.load(garbage)


def test_feeds_are_checked_against_the_declared_inputs():
    model = pgx.load(_model(helper.make_node("Relu", ["x"], ["y"]), dims=["n", 3]))
    ok = np.ones((5, 3), np.float32)
    assert model(ok)["y"].shape == (5, 3)  # "n" is symbolic
    assert model(x=ok)["y"].dtype == np.float32
    np.testing.assert_array_equal(model(pg.Tensor(-ok))["y"], np.zeros((5, 3), np.float32))
    with pytest.raises(OnnxInputError, match=r"'x'.*int32"):
        model(pg.Tensor(np.ones((5, 3), np.int32)))
    with pytest.raises(OnnxInputError, match=r"'x'.*dim 1"):
        model(np.ones((5, 4), np.float32))
    with pytest.raises(OnnxInputError, match=r"'x'.*rank"):
        model(np.ones((5,), np.float32))
    with pytest.raises(OnnxInputError, match=r"'x'.*float64"):
        model(np.ones((5, 3), np.float64))
    with pytest.raises(OnnxInputError, match="'x' is missing"):
        model()
    with pytest.raises(OnnxInputError, match="'z'"):
        model(z=ok)


def test_cli_prints_shapes_timings_and_the_ort_difference(tmp_path, capsys):
    path = tmp_path / "relu.onnx"
    onnx.save(_model(helper.make_node("Relu", ["x"], ["y"])), str(path))
    assert main([str(path), "--check-ort"]) == 0
    out = capsys.readouterr().out
    assert "y: shape (2, 3) dtype float32" in out
    assert "first run" in out and "later run" in out
    assert "largest difference to onnxruntime: 0" in out
    feeds = tmp_path / "in.npz"
    np.savez(feeds, x=np.full((2, 3), -1.0, np.float32))
    assert main([str(path), "--inputs", str(feeds)]) == 0


def test_cli_errors_are_one_line_without_a_traceback(tmp_path):
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(b"\x08\x07\x12")
    result = subprocess.run([sys.executable, "-m", "picograd.onnx", str(cut)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "cut.onnx" in result.stderr
    assert "Traceback" not in result.stderr


def _external_model(folder) -> tuple[str, np.ndarray]:
    """A MatMul model whose weight lives in `folder`/w.bin (onnx's external data)."""
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TP.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TP.FLOAT, [2, 4])],
        [onnx.numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = str(folder / "model.onnx")
    onnx.save_model(model, path, save_as_external_data=True, location="w.bin",
                    size_threshold=0)
    return path, w


def _retarget(path: str, key: str, value: str, name: str) -> str:
    """A copy of the model at `path` whose weight's external-data `key` is `value`."""
    model = onnx.load(path, load_external_data=False)
    (entry,) = [e for e in model.graph.initializer[0].external_data if e.key == key]
    entry.value = value
    out = path.replace("model.onnx", name)
    onnx.save_model(model, out)
    return out


def test_external_data_is_read_from_the_model_folder(tmp_path):
    path, w = _external_model(tmp_path)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(pgx.load(path)(x)["y"], x @ w)


@pytest.mark.parametrize("key, value, why", [
    ("location", "../outside.bin", "points outside"),
    ("location", "/etc/passwd", "w"),
    ("location", "missing.bin", "missing.bin"),
    ("length", "4000", "4000"),
])
def test_external_data_outside_the_folder_missing_or_short_is_refused(tmp_path, key, value,
                                                                      why):
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "outside.bin").write_bytes(np.ones(12, np.float32).tobytes())
    path, _ = _external_model(folder)
    bad = _retarget(path, key, value, "bad.onnx")
    with pytest.raises(OnnxModelError) as info:
        pgx.load(bad)
    assert "bad.onnx" in str(info.value) and why in str(info.value)


def test_external_data_through_a_symlink_is_refused(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "outside.bin").write_bytes(np.ones(12, np.float32).tobytes())
    (folder / "link.bin").symlink_to(tmp_path / "outside.bin")
    path, _ = _external_model(folder)
    with pytest.raises(OnnxModelError, match="symbolic link"):
        pgx.load(_retarget(path, "location", "link.bin", "linked.onnx"))


def test_a_model_proto_without_its_external_data_is_a_typed_error(tmp_path):
    path, _ = _external_model(tmp_path)
    with pytest.raises(OnnxModelError, match=r"w\.bin"):
        pgx.load(onnx.load(path, load_external_data=False))
