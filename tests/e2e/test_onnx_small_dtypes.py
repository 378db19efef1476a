"""The host-only element types (INT4, UINT4, INT2, UINT2, FLOAT4E2M1, FLOAT8E4M3FNUZ,
FLOAT8E5M2FNUZ, FLOAT8E8M0: picograd/onnx/dtypes.py) against onnx's reference evaluator,
bit for bit: fed and returned as ml_dtypes arrays, held in initializers, cast to and from
with onnx's rounding and saturation, refused where a translation would compute on them."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import picograd.onnx as pgx
from picograd.onnx.dtypes import from_storage, storage_tensor

_SMALL: dict[int, Any] = {T.INT4: ml_dtypes.int4, T.UINT4: ml_dtypes.uint4, T.INT2: ml_dtypes.int2,
          T.UINT2: ml_dtypes.uint2, T.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
          T.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
          T.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz, T.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu}
# rounding ties, saturation, infinities, NaN, negative zero, tiny values, integer limits
_FLOATS = np.array([0.0, -0.0, 0.25, 0.5, 0.75, 1.5, 2.5, -2.5, 3.5, 5.0, 6.0, 7.0, 7.5, -8.5,
                    100.0, 239.0, 250.0, -1e5, 6e4, 1e-3, 2.0**-10, 2.0**-130, 1e38,
                    np.inf, -np.inf, np.nan], np.float32)


def _model(nodes: list[onnx.NodeProto], inputs: list[tuple[str, int, Any]],
           outputs: list[tuple[str, int, Any]], inits: list[onnx.TensorProto] | None = None,
           opset: int = 23) -> onnx.ModelProto:
    """A model of `nodes`; a shape None is one dynamic dim."""
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, t, s or ["n"]) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s or ["n"]) for n, t, s in outputs],
        inits or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 11
    onnx.checker.check_model(model)
    return model


def _bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).view(np.uint8) if np.asarray(a).dtype.itemsize == 1 else \
        np.asarray(a).view(np.uint8).reshape(*np.asarray(a).shape, -1)


def _assert_reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> None:
    """picograd's outputs equal the reference evaluator's: dtype, shape and bits."""
    want = ReferenceEvaluator(model).run(None, feeds)
    got = pgx.load(model).run(None, feeds)
    for ours, theirs in zip(got, want, strict=True):
        theirs = np.asarray(theirs)
        assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(_bits(ours), _bits(theirs))


def _every_value(dtype: np.dtype) -> np.ndarray:
    """Every value of a host-only type (every bit pattern of the 8-bit floats)."""
    if dtype in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4), np.dtype(ml_dtypes.int2),
                 np.dtype(ml_dtypes.uint2)):
        info = ml_dtypes.iinfo(dtype)
        return np.arange(int(info.min), int(info.max) + 1).astype(dtype)
    if dtype == np.dtype(ml_dtypes.float4_e2m1fn):
        return np.arange(16, dtype=np.uint8).view(dtype)
    return np.arange(256, dtype=np.uint8).view(dtype)


def _cast(source: int, to: int, opset: int = 23, **attrs: Any) -> onnx.ModelProto:
    node = helper.make_node("Cast", ["x"], ["y"], to=to, **attrs)
    return _model([node], [("x", source, None)], [("y", to, None)], opset=opset)


@pytest.mark.parametrize("to", list(_SMALL))
@pytest.mark.parametrize("source", [T.FLOAT, T.FLOAT16])
def test_cast_to_host_only_types(source: int, to: int) -> None:
    x = _FLOATS.astype(helper.tensor_dtype_to_np_dtype(source))
    _assert_reference(_cast(source, to), {"x": x})


@pytest.mark.parametrize("to", [T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2FNUZ, T.FLOAT8E8M0])
def test_cast_without_saturation(to: int) -> None:
    _assert_reference(_cast(T.FLOAT, to, saturate=0), {"x": _FLOATS})


@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
def test_cast_to_e8m0_round_modes(round_mode: str) -> None:
    x = np.array([1.0, 1.4, 1.5, 1.6, 3.0, 0.3, 2.0**-127, 1e38, np.inf, np.nan], np.float32)
    _assert_reference(_cast(T.FLOAT, T.FLOAT8E8M0, opset=24, round_mode=round_mode),
                      {"x": x})


@pytest.mark.parametrize("source", list(_SMALL))
@pytest.mark.parametrize("to", [T.FLOAT, T.FLOAT16, T.INT8, T.UINT4, T.FLOAT8E4M3FN])
def test_cast_from_host_only_types(source: int, to: int) -> None:
    _assert_reference(_cast(source, to), {"x": _every_value(np.dtype(_SMALL[source]))})


def test_cast_like_a_host_only_initializer() -> None:
    like = numpy_helper.from_array(np.zeros(70, ml_dtypes.int4), "like")  # not a small one
    node = helper.make_node("CastLike", ["x", "like"], ["y"])
    model = _model([node], [("x", T.FLOAT, None)], [("y", T.INT4, None)], [like])
    _assert_reference(model, {"x": _FLOATS})


def test_cast_like_a_host_only_input_and_identity() -> None:
    nodes = [helper.make_node("CastLike", ["x", "like"], ["y"]),
             helper.make_node("Identity", ["like"], ["z"])]
    model = _model(nodes, [("x", T.FLOAT, None), ("like", T.FLOAT4E2M1, (3,))],
                   [("y", T.FLOAT4E2M1, None), ("z", T.FLOAT4E2M1, (3,))])
    like = np.array([0.5, -6.0, 1.5], ml_dtypes.float4_e2m1fn)
    _assert_reference(model, {"x": _FLOATS, "like": like})


def test_device_value_cast_to_int4_after_arithmetic() -> None:
    """A device result cast to INT4 is read back and converted on the host."""
    nodes = [helper.make_node("Mul", ["x", "x"], ["sq"]),
             helper.make_node("Cast", ["sq"], ["y"], to=T.UINT4)]
    model = _model(nodes, [("x", T.FLOAT, (5,))], [("y", T.UINT4, (5,))])
    _assert_reference(model, {"x": np.array([0, 1, 2, 3, 3.9], np.float32)})


def test_reshape_and_transpose_keep_int4_on_the_host() -> None:
    shape = numpy_helper.from_array(np.array([3, 2], np.int64), "shape")
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("Transpose", ["r"], ["y"])]
    model = _model(nodes, [("x", T.INT4, (2, 3))], [("y", T.INT4, (2, 3))], [shape])
    _assert_reference(model, {"x": np.array([[-8, -1, 0], [3, 7, 2]], ml_dtypes.int4)})


def test_an_op_computing_on_a_host_only_value_fails() -> None:
    pads = numpy_helper.from_array(np.array([0, 1], np.int64), "pads")
    model = _model([helper.make_node("Pad", ["x", "pads"], ["y"])], [("x", T.INT4, (2,))],
                   [("y", T.INT4, (3,))], [pads])
    with pytest.raises(pgx.OnnxUnsupportedError, match="int4 values on the host"):
        pgx.load(model).run(None, {"x": np.array([1, 2], ml_dtypes.int4)})


def test_a_feed_of_the_storage_dtype_is_refused() -> None:
    model = _cast(T.INT4, T.FLOAT)
    with pytest.raises(pgx.OnnxInputError, match="int4"):
        pgx.load(model).run(None, {"x": np.array([1, 2], np.int8)})


def test_an_unknown_round_mode_is_refused_at_load() -> None:
    model = _cast(T.FLOAT, T.FLOAT8E8M0, opset=24, round_mode="odd")
    with pytest.raises(pgx.OnnxUnsupportedError, match="round_mode"):
        pgx.load(model)


def test_storage_round_trip() -> None:
    """The storage interface the quantization ops use: exact values in, exact values out,
    anything the type cannot hold refused."""
    x = np.array([-8, -1, 0, 7], ml_dtypes.int4)
    t = storage_tensor(x, "CPU")
    assert t is storage_tensor(x, "CPU")  # uploaded once
    back = from_storage(t.numpy(), np.dtype(ml_dtypes.int4))
    assert back.dtype == x.dtype and np.array_equal(_bits(back), _bits(x))
    with pytest.raises(ValueError, match="not int4"):
        from_storage(np.array([8], np.int8), np.dtype(ml_dtypes.int4))
    with pytest.raises(ValueError, match="not float4_e2m1fn"):
        from_storage(np.array([0.7], np.float32), np.dtype(ml_dtypes.float4_e2m1fn))


@pytest.mark.parametrize("op", ["Cast", "CastLike"])
def test_e4m3fn_without_saturation_is_nan_past_the_range(op: str) -> None:
    """picograd's e4m3fn kernels saturate: saturate=0 (NaN past +-448) runs on the host,
    for Cast and for CastLike, whose target type is known only from its input."""
    if op == "Cast":
        node = helper.make_node("Cast", ["x"], ["y"], to=T.FLOAT8E4M3FN, saturate=0)
        inits = []
    else:
        node = helper.make_node("CastLike", ["x", "like"], ["y"], saturate=0)
        inits = [numpy_helper.from_array(np.zeros(1, ml_dtypes.float8_e4m3fn), "like")]
    model = _model([node], [("x", T.FLOAT, None)], [("y", T.FLOAT8E4M3FN, None)], inits)
    _assert_reference(model, {"x": _FLOATS})
    got = pgx.load(model).run(None, {"x": np.array([1e5, 448.0], np.float32)})[0]
    assert np.isnan(got.astype(np.float32)[0]) and got.astype(np.float32)[1] == 448.0


def test_repeated_runs_read_each_device_value_back() -> None:
    """A cast of a device value to INT4 reads it back, so the run is never replayed from
    a capture holding an earlier run's host values."""
    nodes = [helper.make_node("Cast", ["x"], ["q"], to=T.INT4),
             helper.make_node("Cast", ["q"], ["y"], to=T.FLOAT)]
    model = pgx.load(_model(nodes, [("x", T.FLOAT, (3,))], [("y", T.FLOAT, (3,))]))
    for i in range(5):
        x = np.array([i, -i, i + 0.5], np.float32)
        np.testing.assert_array_equal(model(x)["y"], x.astype(ml_dtypes.int4).astype(np.float32))
