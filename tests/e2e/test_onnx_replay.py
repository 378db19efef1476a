"""A loaded model compiles once per input signature and replays (picograd/onnx/replay.py):
the graph is translated on the first two calls of a signature only, a new `batch` compiles
once more, and a model that reads a device value back to the host is translated on every
call (a replay would keep the first call's value)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import picograd as pg
import picograd.onnx as pgx

pytest.importorskip("onnx")


def _counting(model: pgx.OnnxModel) -> list[int]:
    """Wrap the model's graph runner so each translation of the main graph is counted."""
    count = [0]
    execute = model._runner.execute

    def counted(graph, inputs, outer):
        if graph is model._main:
            count[0] += 1
        return execute(graph, inputs, outer)

    model._runner.execute = counted  # type: ignore[method-assign]
    return count


def _linear_model() -> pgx.OnnxModel:
    """y = relu(x @ W + b) over a dynamic batch."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"]),
         helper.make_node("Add", ["xw", "b"], ["z"]),
         helper.make_node("Relu", ["z"], ["y"])],
        "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    return pgx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def _reference(model: pgx.OnnxModel, x: np.ndarray) -> np.ndarray:
    w, b = (np.asarray(model.weights[n].numpy() if isinstance(model.weights[n], pg.Tensor)
                       else model.weights[n]) for n in ("W", "b"))
    return np.maximum(x @ w + b, 0)


def test_a_signature_is_translated_twice_then_replayed_on_new_values():
    model = _linear_model()
    count = _counting(model)
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = rng.standard_normal((2, 4)).astype(np.float32)
        np.testing.assert_allclose(model(x)["y"], _reference(model, x), rtol=1e-5, atol=1e-6)
    assert count[0] == 2  # warm-up and capture; calls 3-5 replayed
    assert len(model.replays) == 1


def test_a_new_batch_compiles_once_more_and_the_old_one_still_replays():
    model = _linear_model()
    count = _counting(model)
    rng = np.random.default_rng(2)
    for batch in (2, 5, 2, 5, 2, 5, 2, 5):
        x = rng.standard_normal((batch, 4)).astype(np.float32)
        out = model.run(None, {"x": x})[0]
        assert out.shape == (batch, 3)
        np.testing.assert_allclose(out, _reference(model, x), rtol=1e-5, atol=1e-6)
    assert count[0] == 4 and len(model.replays) == 2


def test_a_shape_read_from_a_device_input_is_translated_on_every_call():
    """Reshape's shape is a graph input: its values are read back, so a replay would keep
    the first call's shape; the model is marked data-dependent instead."""
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [12]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["r", "c"])])
    model = pgx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    count = _counting(model)
    x = np.arange(12, dtype=np.float32)
    for shape in ([2, 6], [3, 4], [4, 3], [6, 2]):
        out = model(x, pg.Tensor(np.array(shape, np.int64)))["y"]
        assert out.shape == tuple(shape)
        np.testing.assert_array_equal(out, x.reshape(shape))
    assert model.replays.data_dependent and count[0] == 4


def test_a_model_whose_outputs_are_all_host_values_runs_every_call():
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["y"])], "shape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2])])
    model = pgx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    for n in (1, 2, 1, 2, 1, 2):
        out = model(np.zeros((n, 3), np.float32))["y"]
        assert out.dtype == np.int64 and out.tolist() == [n, 3]


def test_a_model_called_inside_the_users_jit_is_not_a_nested_jit():
    """Inside the user's pg.jit the model is translated (a nested jit would be refused);
    its numpy outputs are host values to that jit, so only its warm-up and capture calls
    are checked here."""
    model = _linear_model()

    @pg.jit
    def step(x: pg.Tensor) -> pg.Tensor:
        return pg.Tensor(model(x)["y"]) * 2

    rng = np.random.default_rng(3)
    for _ in range(2):
        x = rng.standard_normal((2, 4)).astype(np.float32)
        np.testing.assert_allclose(step(pg.Tensor(x)).numpy(), 2 * _reference(model, x),
                                   rtol=1e-5, atol=1e-6)


def test_one_tensor_given_for_two_inputs_is_translated_not_refused():
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])], "add",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = pgx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    t = pg.Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    for _ in range(3):
        np.testing.assert_array_equal(model(t, t)["y"], [2.0, 4.0, 6.0])
