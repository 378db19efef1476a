"""picograd.onnx's ScatterElements / Scatter, ScatterND, NonZero, Compress and Unique against
onnxruntime: every reduction, negative indices, axis variants, partial index tuples, the
data-dependent output shapes (empty ones included) and the int64 dtypes of every output.

Duplicate indices are only given with a reduction: with reduction "none" ONNX leaves the
result unspecified."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto as TP

import picograd.onnx as pgx
from picograd.onnx.errors import OnnxUnsupportedError
from tests.e2e.onnx_helpers import assert_matches_ort, node_model

R = np.random.default_rng(7)
I64, F32 = int(TP.INT64), int(TP.FLOAT)  # element types as ints (the helpers' type)


def f32(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


def i64(values: Any) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _check(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any] | None = None,
           opset: int = 18, out_types: list[int] | None = None) -> None:
    model = node_model(op, inputs, attrs, opset=opset, out_types=out_types)
    assert_matches_ort(model, inputs)


# ── ScatterElements / Scatter ───────────────────────────────────────────────

_DATA = f32(3, 4)
# duplicates along each axis: allowed (and meaningful) only with a reduction
_DUP0 = i64([[0, 1, 2, 0], [2, 1, 0, 0]])          # along axis 0 of (3, 4)
_DUP1 = i64([[0, 0, 3], [1, -1, 1], [2, 2, -4]])   # along axis 1, negatives included
_UNIQ0 = i64([[1, -1, 0, 2], [-3, 0, 2, 1]])        # distinct per column along axis 0
_UNIQ1 = i64([[3, 0], [-1, 2]])                     # distinct per row along axis 1


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("axis,indices", [(0, _DUP0), (1, _DUP1), (-1, _DUP1), (-2, _DUP0)])
def test_scatter_elements_reductions(reduction: str, axis: int, indices: np.ndarray) -> None:
    _check("ScatterElements", {"data": _DATA, "indices": indices,
                               "updates": f32(*indices.shape)},
           {"axis": axis, "reduction": reduction})


@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_scatter_elements_opset16(reduction: str) -> None:
    _check("ScatterElements", {"data": _DATA, "indices": _DUP1, "updates": f32(3, 3)},
           {"axis": 1, "reduction": reduction}, opset=16)


@pytest.mark.parametrize("axis,indices", [(0, _UNIQ0), (1, _UNIQ1), (-1, _UNIQ1),
                                          (-2, _UNIQ0)])
@pytest.mark.parametrize("opset", [11, 13, 18])
def test_scatter_elements_none(axis: int, indices: np.ndarray, opset: int) -> None:
    _check("ScatterElements", {"data": _DATA, "indices": indices,
                               "updates": f32(*indices.shape)}, {"axis": axis}, opset=opset)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements_dtypes(dtype: type, reduction: str) -> None:
    data = R.integers(-5, 6, (3, 4)).astype(dtype)
    indices = _UNIQ0 if reduction == "none" else _DUP0
    updates = R.integers(-5, 6, indices.shape).astype(dtype)
    _check("ScatterElements", {"data": data, "indices": indices, "updates": updates},
           {"axis": 0, "reduction": reduction})


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int8, np.int16, np.float16])
def test_scatter_small_dtypes(dtype: type) -> None:
    data = R.integers(0, 2, (3, 4)).astype(dtype)
    _check("ScatterElements", {"data": data, "indices": _UNIQ1,
                               "updates": R.integers(0, 2, (2, 2)).astype(dtype)},
           {"axis": 1})
    _check("ScatterND", {"data": data, "indices": i64([[2], [0]]),
                         "updates": R.integers(0, 2, (2, 4)).astype(dtype)})


@pytest.mark.parametrize("dtype,reductions", [
    (np.uint8, ["add", "mul", "max", "min"]), (np.int8, ["add", "mul", "max", "min"]),
    (np.float16, ["max", "min"]),  # onnxruntime has no float16 add / mul
])
def test_scatter_elements_small_dtype_reductions(dtype: type, reductions: list[str]) -> None:
    data = np.arange(12).reshape(3, 4).astype(dtype)
    updates = R.integers(1, 4, _DUP1.shape).astype(dtype)
    for reduction in reductions:
        _check("ScatterElements", {"data": data, "indices": _DUP1, "updates": updates},
               {"axis": 1, "reduction": reduction})


def test_scatter_elements_int32_indices_3d() -> None:
    data = f32(2, 3, 4)
    indices = np.array([[[2, 0], [-1, 1]], [[0, 3], [1, 2]]], np.int32)  # (2, 2, 2), axis 2
    _check("ScatterElements", {"data": data, "indices": indices, "updates": f32(2, 2, 2)},
           {"axis": 2})
    _check("ScatterElements", {"data": data, "indices": indices, "updates": f32(2, 2, 2)},
           {"axis": 2, "reduction": "add"})


def test_scatter_elements_empty_indices() -> None:
    _check("ScatterElements", {"data": _DATA, "indices": np.zeros((0, 4), np.int64),
                               "updates": np.zeros((0, 4), np.float32)},
           {"axis": 0, "reduction": "add"})


@pytest.mark.parametrize("opset", [9, 10])
def test_scatter_old(opset: int) -> None:
    _check("Scatter", {"data": _DATA, "indices": _UNIQ1, "updates": f32(2, 2)}, {"axis": 1},
           opset=opset)
    _check("Scatter", {"data": _DATA, "indices": _UNIQ0, "updates": f32(2, 4)}, opset=opset)


# ── ScatterND ───────────────────────────────────────────────────────────────

_ND = f32(4, 3, 2)


@pytest.mark.parametrize("indices,updates", [
    (i64([[1, 2, 0], [3, 0, 1], [-1, -1, -2]]), f32(3)),   # k == rank: elements
    (i64([[1, 2], [-4, 0]]), f32(2, 2)),                    # k == 2 < rank: rows of 2
    (i64([[3], [0]]), f32(2, 3, 2)),                        # k == 1: slabs
    (i64([[[0], [2]], [[-1], [1]]]), f32(2, 2, 3, 2)),      # batched indices (2, 2, 1)
    (i64([[2, -3]]), f32(1, 2)),
])
def test_scatter_nd_none(indices: np.ndarray, updates: np.ndarray) -> None:
    for opset in (11, 13, 18):
        _check("ScatterND", {"data": _ND, "indices": indices, "updates": updates},
               opset=opset)


# repeated tuples: reductions combine them
_ND_DUP = [
    (i64([[1, 2, 0], [1, 2, 0], [-3, -1, 0], [0, 0, 1]]), f32(4)),
    (i64([[1, 2], [1, -1], [0, 0]]), f32(3, 2)),
    (i64([[3], [-1], [0]]), f32(3, 3, 2)),
]


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("case", range(len(_ND_DUP)))
def test_scatter_nd_reductions(reduction: str, case: int) -> None:
    indices, updates = _ND_DUP[case]
    _check("ScatterND", {"data": _ND, "indices": indices, "updates": updates},
           {"reduction": reduction})


@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_scatter_nd_opset16(reduction: str) -> None:
    indices, updates = _ND_DUP[1]
    _check("ScatterND", {"data": _ND, "indices": indices, "updates": updates},
           {"reduction": reduction}, opset=16)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_nd_dtypes(dtype: type, reduction: str) -> None:
    data = R.integers(-4, 5, (3, 4)).astype(dtype)
    indices = i64([[2], [0]]) if reduction == "none" else i64([[2], [0], [-1]])
    updates = R.integers(-4, 5, (indices.shape[0], 4)).astype(dtype)
    _check("ScatterND", {"data": data, "indices": indices, "updates": updates},
           {"reduction": reduction})


def test_scatter_nd_empty_indices() -> None:
    _check("ScatterND", {"data": _ND, "indices": np.zeros((0, 1), np.int64),
                         "updates": np.zeros((0, 3, 2), np.float32)})


# ── NonZero ─────────────────────────────────────────────────────────────────

@pytest.mark.parametrize("x", [
    np.array([[True, False, True], [False, False, True]]),
    np.array([[0.0, 1.5, -0.0], [np.nan, 0.0, -2.0]], np.float32),
    np.array([[[0, 3], [4, 0]], [[0, 0], [-1, 7]]], np.int32),
    np.array([0, 5, 0, 0, 9], np.int64),
    np.array([1, 0, 255], np.uint8),
    np.zeros((2, 3), np.float32),                    # no non-zero element: (2, 0)
    np.zeros((2, 0), np.float32),                    # empty input
    np.array(3.0, np.float32),                       # 0-d, non-zero: (1, 1)
    np.array(0, np.int32),                           # 0-d, zero: (1, 0)
    np.array(True),
], ids=lambda x: f"{x.dtype}-{x.shape}")
@pytest.mark.parametrize("opset", [9, 13])
def test_nonzero(x: np.ndarray, opset: int) -> None:
    _check("NonZero", {"x": x}, opset=opset, out_types=[I64])


# ── Compress ────────────────────────────────────────────────────────────────

_CX = f32(3, 4)


@pytest.mark.parametrize("axis,condition", [
    (None, [True, False, True, True, False, False, True, False, False, False, False, True]),
    (None, [False, True, True]),                       # shorter than the flattened input
    (0, [True, False, True]),
    (0, [False, True]),                                # shorter than the axis
    (1, [True, False, False, True]),
    (-1, [False, True]),
    (-2, [True, True, True]),
    (1, [False, False, False, False]),                 # nothing kept: (3, 0)
    (0, [True, False, True, True, True]),              # longer: onnxruntime ignores the rest
])
@pytest.mark.parametrize("opset", [9, 11])
def test_compress(axis: int | None, condition: list[bool], opset: int) -> None:
    attrs = {} if axis is None else {"axis": axis}
    _check("Compress", {"x": _CX, "condition": np.array(condition)}, attrs, opset=opset)


def test_compress_int_3d() -> None:
    x = R.integers(-9, 9, (2, 3, 2)).astype(np.int64)
    _check("Compress", {"x": x, "condition": np.array([False, True, True])}, {"axis": 1})


def test_compress_empty_condition() -> None:
    _check("Compress", {"x": _CX, "condition": np.zeros((0,), bool)}, {"axis": 0})


# ── Unique ──────────────────────────────────────────────────────────────────

_UI = np.array([[1, 0, 1, 2], [1, 0, 1, 2], [0, 2, 3, 0], [1, 0, 1, 2]], np.int64)


@pytest.mark.parametrize("x", [
    np.array([2.0, -1.0, 2.0, 0.5, -1.0, 3.0], np.float32),
    np.array([[4, 1, 4], [-2, 1, 9]], np.int64),          # no axis: flattened
    np.array([5, 5, 5], np.int8),
    np.array([0.25, -7.5, 0.25], np.float64),
    np.zeros((0,), np.float32),
], ids=lambda x: f"{x.dtype}-{x.shape}")
@pytest.mark.parametrize("is_sorted", [0, 1])
def test_unique_flat(x: np.ndarray, is_sorted: int) -> None:
    _check("Unique", {"x": x}, {"sorted": is_sorted}, opset=11,
           out_types=[_elem(x)] + [I64] * 3)


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
@pytest.mark.parametrize("is_sorted", [0, 1])
def test_unique_axis(axis: int, is_sorted: int) -> None:
    _check("Unique", {"x": _UI}, {"axis": axis, "sorted": is_sorted}, opset=11,
           out_types=[I64] * 4)


def test_unique_axis_3d_float() -> None:
    x = np.array([[[1.0, 2.0], [1.0, 2.0]], [[0.5, 0.5], [1.0, 2.0]]], np.float32)
    for axis in (0, 1, 2):
        _check("Unique", {"x": x}, {"axis": axis, "sorted": 0}, opset=11,
               out_types=[F32] + [I64] * 3)


def test_unique_nan_refused() -> None:
    """onnxruntime's Unique compares with <, so NaN equals everything ([nan, 1, nan] gives
    one value counted 3 times): picograd refuses NaN data with a typed error."""
    x = np.array([np.nan, 1.0, np.nan], np.float32)
    model = node_model("Unique", {"x": x}, opset=11, out_types=[F32] + [I64] * 3)
    with pytest.raises(OnnxUnsupportedError, match=r"Unique.*NaN"):
        pgx.load(model).run(None, {"x": x})


def test_unique_signed_zeros() -> None:
    x = np.array([0.0, -0.0, 1.0, -0.0], np.float32)
    _check("Unique", {"x": x}, {"sorted": 0}, opset=11, out_types=[F32] + [I64] * 3)


def test_unique_default_sorted() -> None:
    _check("Unique", {"x": np.array([3, 1, 3, 2], np.int64)}, opset=11,
           out_types=[I64] * 4)


def _elem(x: np.ndarray) -> int:
    return {np.float32: TP.FLOAT, np.float64: TP.DOUBLE, np.int64: TP.INT64,
            np.int8: TP.INT8}[x.dtype.type]
