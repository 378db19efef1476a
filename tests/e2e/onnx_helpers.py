"""Building one-node ONNX models with onnx.helper and comparing picograd.onnx with
onnxruntime on them (values and dtypes)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import picograd.onnx as pgx

onnxruntime = pytest.importorskip("onnxruntime")


def elem_type(array: np.ndarray) -> int:
    return helper.np_dtype_to_tensor_dtype(np.asarray(array).dtype)


def node_model(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any] | None = None,
               opset: int = 17, out_types: list[int] | None = None,
               constants: dict[str, np.ndarray] | None = None, n_out: int = 1
               ) -> onnx.ModelProto:
    """A model of one `op` node: `inputs` are graph inputs, `constants` initializers (both
    in the node's input order: inputs first, then constants, None names an omitted one)."""
    constants = constants or {}
    names = [*inputs, *constants]
    first = next(iter(inputs.values()))
    out_types = out_types or [elem_type(first)] * n_out
    outs = [f"y{i}" for i in range(len(out_types))]
    node = helper.make_node(op, [n if not n.startswith("_none") else "" for n in names],
                            outs, **(attrs or {}))
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, elem_type(a), a.shape) for n, a in inputs.items()],
        [helper.make_tensor_value_info(o, t, None) for o, t in zip(outs, out_types,
                                                                    strict=True)],
        [numpy_helper.from_array(a, n) for n, a in constants.items()
         if not n.startswith("_none")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    # the checker wants the outputs' shapes: onnx's shape inference fills them in
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    for out in model.graph.output:
        if not out.type.tensor_type.HasField("shape"):
            out.type.tensor_type.shape.SetInParent()  # a scalar
    return model


def ort_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def assert_matches_ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray],
                       rtol: float = 1e-5, atol: float = 1e-6, device: str = "CPU") -> None:
    """picograd.onnx's outputs equal onnxruntime's: same dtypes, shapes and values."""
    expected = ort_run(model, feeds)
    got = pgx.load(model, device=device).run(None, feeds)
    assert len(got) == len(expected)
    for ours, theirs in zip(got, expected, strict=True):
        assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
        assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
        if ours.dtype.kind == "f":
            np.testing.assert_allclose(ours.astype(np.float64), theirs.astype(np.float64),
                                       rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(ours, theirs)
