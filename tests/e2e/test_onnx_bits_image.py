"""ops_bits (BitShift, Bitwise*, BitCast) and ops_image (GridSample, AffineGrid, Col2Im,
CenterCropPad, RoiAlign, NonMaxSuppression) against onnxruntime, or onnx's reference
where onnxruntime 1.31 has no kernel at that opset (BitCast, signed BitShift, 5-D
GridSample cubic): values and dtypes; the inputs the translations refuse fail at load (or,
for data the host reads, at run) with OnnxUnsupportedError naming the node."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import picograd.onnx as pgx
from picograd.onnx.errors import OnnxUnsupportedError
from tests.e2e.onnx_helpers import assert_matches_ort, node_model

R = np.random.default_rng(0)


def assert_matches_reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray],
                             rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """picograd.onnx's outputs equal onnx's reference evaluator's (values and dtypes)."""
    expected = [np.asarray(e) for e in ReferenceEvaluator(model).run(None, feeds)]
    got = pgx.load(model, device="CPU").run(None, feeds)
    for ours, theirs in zip(got, expected, strict=True):
        assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
        assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
        if ours.dtype.kind == "f":
            np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(ours, theirs)


def ints(dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Values over the whole range of an integer dtype, its limits included."""
    info = np.iinfo(dtype)
    values = R.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    values.reshape(-1)[:2] = (info.min, info.max)
    return values


# ── BitShift ───────────────────────────────────────────────────────────────

@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64])  # ort: no uint16
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift_unsigned_matches_ort(dtype: Any, direction: str) -> None:
    """Every in-range amount (onnxruntime's shifts by >= the width are C's undefined
    behaviour, so they are checked against the reference below), broadcast (4, 1) x (w,)."""
    width = np.dtype(dtype).itemsize * 8
    x = ints(dtype, (4, 1))
    y = np.arange(width, dtype=dtype)
    model = node_model("BitShift", {"x": x, "y": y}, {"direction": direction}, opset=11)
    assert_matches_ort(model, {"x": x, "y": y})


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint64])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift_any_amount_matches_reference(dtype: Any, direction: str) -> None:
    """Signed inputs (opset 26), negative amounts and amounts >= the width: 0, or the sign
    for a signed right shift; a signed left shift wraps."""
    width = np.dtype(dtype).itemsize * 8
    x = ints(dtype, (6, 1))
    signed = np.dtype(dtype).kind == "i"
    top = int(np.iinfo(dtype).max)
    y = np.array(([-3, -1] if signed else []) + [0, 1, width - 1, width, width + 5,
                                                  min(200, top)], dtype=dtype)
    model = node_model("BitShift", {"x": x, "y": y}, {"direction": direction}, opset=26)
    model.ir_version = 13
    assert_matches_reference(model, {"x": x, "y": y})


def test_bitshift_bad_direction_is_refused() -> None:
    x = np.array([1, 2], np.uint8)
    node = helper.make_node("BitShift", ["x", "y"], ["z"], direction="UP")
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("x", TensorProto.UINT8, [2]),
        helper.make_tensor_value_info("y", TensorProto.UINT8, [2])],
        [helper.make_tensor_value_info("z", TensorProto.UINT8, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 8
    with pytest.raises(OnnxUnsupportedError, match=r"BitShift.*direction"):
        pgx.load(model, device="CPU").run(None, {"x": x, "y": x})


# ── Bitwise ────────────────────────────────────────────────────────────────

@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint32, np.uint64])
def test_bitwise_binary_matches_ort(op: str, dtype: Any) -> None:
    a, b = ints(dtype, (2, 3, 4)), ints(dtype, (4,))
    assert_matches_ort(node_model(op, {"a": a, "b": b}, opset=18), {"a": a, "b": b})


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint16,
                                   np.uint64])
def test_bitwise_not_matches_ort(dtype: Any) -> None:
    x = ints(dtype, (3, 5))
    assert_matches_ort(node_model("BitwiseNot", {"x": x}, opset=18), {"x": x})


def test_bitwise_of_an_empty_tensor() -> None:
    a = np.zeros((0, 3), np.int32)
    assert_matches_ort(node_model("BitwiseXor", {"a": a, "b": a}, opset=18),
                       {"a": a, "b": a})


# ── BitCast ────────────────────────────────────────────────────────────────

def bitcast_model(x: np.ndarray, to: int) -> onnx.ModelProto:
    model = node_model("BitCast", {"x": x}, {"to": to}, opset=26, out_types=[to])
    model.ir_version = 13
    return model


@pytest.mark.parametrize(("src", "to"), [
    (np.float32, TensorProto.INT32), (np.int32, TensorProto.FLOAT),
    (np.float64, TensorProto.UINT64), (np.int64, TensorProto.DOUBLE),
    (np.float16, TensorProto.INT16), (np.uint16, TensorProto.FLOAT16),
    (np.int8, TensorProto.UINT8), (np.uint32, TensorProto.INT32),
    (np.bool_, TensorProto.UINT8),
])
def test_bitcast_matches_reference(src: Any, to: int) -> None:
    """Bit patterns kept exactly: NaN, infinities, -0.0 and the integer limits."""
    if np.dtype(src).kind == "f":
        x = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-3], src)
    elif src is np.bool_:
        x = np.array([True, False, True], np.bool_)
    else:
        x = ints(src, (2, 4))
    assert_matches_reference(bitcast_model(x, to), {"x": x})


def test_bitcast_between_sizes_is_refused() -> None:
    """onnx's checker lets a mismatched pair through (only shape inference sees it): the
    translation names the node."""
    node = helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.DOUBLE)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
    model.ir_version = 13
    with pytest.raises(OnnxUnsupportedError, match=r"BitCast.*item sizes"):
        pgx.load(model, device="CPU").run(None, {"x": np.zeros(2, np.float32)})


# ── GridSample ─────────────────────────────────────────────────────────────

IMAGE = R.standard_normal((2, 3, 4, 5)).astype(np.float32)
# coordinates inside, on and outside [-1, 1] (reflection folds the far ones several times)
GRID = R.uniform(-2.7, 2.7, (2, 3, 6, 2)).astype(np.float32)
GRID[0, 0, :4] = [[-1, -1], [1, 1], [0, 0], [-1, 1]]


# bicubic with border padding is refused (test_gridsample_cubic_border_is_refused)
@pytest.mark.parametrize(("mode", "padding"), [
    (m, p) for m in ("bilinear", "nearest", "bicubic")
    for p in ("zeros", "border", "reflection") if (m, p) != ("bicubic", "border")])
@pytest.mark.parametrize("align", [0, 1])
def test_gridsample_4d_matches_ort(mode: str, padding: str, align: int) -> None:
    model = node_model("GridSample", {"x": IMAGE, "grid": GRID},
                       {"mode": mode, "padding_mode": padding, "align_corners": align},
                       opset=16)
    assert_matches_ort(model, {"x": IMAGE, "grid": GRID}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_gridsample_5d_matches_ort(mode: str, padding: str) -> None:
    x = R.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    grid = R.uniform(-1.6, 1.6, (1, 2, 3, 4, 3)).astype(np.float32)
    model = node_model("GridSample", {"x": x, "grid": grid},
                       {"mode": mode, "padding_mode": padding}, opset=20)
    assert_matches_ort(model, {"x": x, "grid": grid}, rtol=1e-4, atol=1e-5)


def test_gridsample_5d_cubic_matches_reference() -> None:
    """onnxruntime has no volumetric cubic: the reference is the oracle (64 taps)."""
    x = R.standard_normal((1, 1, 3, 4, 4)).astype(np.float32)
    grid = R.uniform(-1.3, 1.3, (1, 2, 2, 3, 3)).astype(np.float32)
    model = node_model("GridSample", {"x": x, "grid": grid},
                       {"mode": "cubic", "padding_mode": "reflection"}, opset=20)
    assert_matches_reference(model, {"x": x, "grid": grid}, rtol=1e-4, atol=1e-5)


def test_gridsample_cubic_border_is_refused() -> None:
    model = node_model("GridSample", {"x": IMAGE, "grid": GRID},
                       {"mode": "bicubic", "padding_mode": "border"}, opset=16)
    with pytest.raises(OnnxUnsupportedError, match=r"GridSample.*border"):
        pgx.load(model, device="CPU")


def test_gridsample_float64_and_one_pixel_axis() -> None:
    """float64 X sums in float64 (positions in float32, as the reference's); a one-pixel
    axis with align_corners has no span to reflect over (the reference divides by 0)."""
    x = R.standard_normal((1, 2, 1, 4))
    grid = R.uniform(-1.5, 1.5, (1, 2, 3, 2))
    model = node_model("GridSample", {"x": x, "grid": grid},
                       {"padding_mode": "reflection", "align_corners": 1}, opset=20)
    assert_matches_ort(model, {"x": x, "grid": grid}, rtol=1e-6, atol=1e-7)


def test_gridsample_non_finite_coordinates_are_nan() -> None:
    """onnxruntime reads some pixel for a NaN or infinite coordinate; ours is NaN there and
    the finite samples are unchanged."""
    grid = GRID.copy()
    grid[1, 2, 3] = [np.nan, 0.0]
    grid[1, 2, 4] = [0.0, np.inf]
    model = node_model("GridSample", {"x": IMAGE, "grid": grid}, opset=16)
    got = pgx.load(model, device="CPU").run(None, {"x": IMAGE, "grid": grid})[0]
    assert np.isnan(got[1, :, 2, 3:5]).all()
    finite = np.isfinite(grid).all(-1)
    clean = grid.copy()
    clean[~finite] = 0
    want = pgx.load(model, device="CPU").run(None, {"x": IMAGE, "grid": clean})[0]
    np.testing.assert_array_equal(got.transpose(0, 2, 3, 1)[finite],
                                  want.transpose(0, 2, 3, 1)[finite])


# ── AffineGrid ─────────────────────────────────────────────────────────────

@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 1, 3, 4, 2]])
def test_affine_grid_matches_ort(align: int, size: list[int]) -> None:
    rank = len(size) - 2
    theta = R.standard_normal((2, rank, rank + 1)).astype(np.float32)
    model = node_model("AffineGrid", {"theta": theta}, {"align_corners": align}, opset=20,
                       constants={"size": np.array(size, np.int64)})
    assert_matches_ort(model, {"theta": theta}, rtol=1e-5, atol=1e-6)


def test_affine_grid_one_pixel_aligned_is_refused() -> None:
    theta = np.zeros((1, 2, 3), np.float32)
    model = node_model("AffineGrid", {"theta": theta}, {"align_corners": 1}, opset=20,
                       constants={"size": np.array([1, 1, 1, 3], np.int64)})
    with pytest.raises(OnnxUnsupportedError, match=r"AffineGrid.*spatial size of 1"):
        pgx.load(model, device="CPU").run(None, {"theta": theta})


# ── Col2Im ─────────────────────────────────────────────────────────────────

@pytest.mark.parametrize(("image", "block", "attrs"), [
    ([5, 5], [2, 2], {}),
    ([5, 6], [2, 3], {"strides": [2, 1], "dilations": [1, 2]}),
    ([4, 4], [3, 3], {"pads": [1, 0, 2, 1]}),
    ([3, 4, 3], [2, 2, 2], {"pads": [1, 0, 0, 0, 1, 1]}),
])
def test_col2im_matches_ort(image: list[int], block: list[int], attrs: dict) -> None:
    rank = len(image)
    pads = attrs.get("pads", [0] * 2 * rank)
    strides = attrs.get("strides", [1] * rank)
    dilations = attrs.get("dilations", [1] * rank)
    counts = [(s + pads[i] + pads[i + rank] - dilations[i] * (k - 1) - 1) // strides[i] + 1
              for i, (s, k) in enumerate(zip(image, block, strict=True))]
    blocks = int(np.prod(counts))
    x = R.standard_normal((2, 3 * int(np.prod(block)), blocks)).astype(np.float32)
    model = node_model("Col2Im", {"x": x}, attrs, opset=18, constants={
        "image": np.array(image, np.int64), "block": np.array(block, np.int64)})
    assert_matches_ort(model, {"x": x}, rtol=1e-5, atol=1e-5)


def test_col2im_wrong_block_count_is_refused() -> None:
    x = np.zeros((1, 4, 7), np.float32)
    model = node_model("Col2Im", {"x": x}, opset=18, constants={
        "image": np.array([5, 5], np.int64), "block": np.array([2, 2], np.int64)})
    with pytest.raises(OnnxUnsupportedError, match="Col2Im"):
        pgx.load(model, device="CPU").run(None, {"x": x})


# ── CenterCropPad ──────────────────────────────────────────────────────────

@pytest.mark.parametrize(("shape", "axes"), [
    ([3, 5, 6], None), ([8, 9, 4], None), ([2, 10, 4], None), ([3, 8], [-3, -2]),
    ([7], [2]),
])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_center_crop_pad_matches_ort(shape: list[int], axes: list[int] | None,
                                     dtype: Any) -> None:
    x = (R.standard_normal((5, 6, 4)) * 50).astype(dtype)
    attrs = {} if axes is None else {"axes": axes}
    model = node_model("CenterCropPad", {"x": x}, attrs, opset=18,
                       constants={"shape": np.array(shape, np.int64)})
    assert_matches_ort(model, {"x": x})


# ── RoiAlign ───────────────────────────────────────────────────────────────

ROIS = np.array([[0.5, 0.7, 6.2, 4.9], [1.0, 1.0, 1.0, 1.0], [-2.0, -1.0, 9.0, 12.0],
                 [3.3, 0.0, 4.1, 2.5]], np.float32)


@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_avg_matches_ort(transform: str, ratio: int) -> None:
    """Zero-size, partly outside and sub-pixel ROIs; sampling_ratio 0 sizes each bin's
    grid by the ROI."""
    x = R.standard_normal((2, 3, 7, 8)).astype(np.float32)
    batch = np.array([0, 1, 1, 0], np.int64)
    model = node_model("RoiAlign", {"x": x, "rois": ROIS, "batch": batch},
                       {"coordinate_transformation_mode": transform, "output_height": 3,
                        "output_width": 2, "sampling_ratio": ratio,
                        "spatial_scale": 0.8}, opset=16)
    assert_matches_ort(model, {"x": x, "rois": ROIS, "batch": batch}, rtol=1e-4,
                       atol=1e-5)


def test_roi_align_max_matches_reference() -> None:
    """max mode: the largest weighted corner of any sample (onnxruntime and the reference
    agree on the backend suite's case; the reference is the oracle here)."""
    x = R.standard_normal((1, 2, 6, 6)).astype(np.float32)
    batch = np.zeros(4, np.int64)
    model = node_model("RoiAlign", {"x": x, "rois": ROIS, "batch": batch},
                       {"mode": "max", "output_height": 2, "output_width": 3}, opset=16)
    assert_matches_reference(model, {"x": x, "rois": ROIS, "batch": batch}, rtol=1e-4,
                             atol=1e-5)


def test_roi_align_bad_batch_index_is_refused() -> None:
    x = np.zeros((1, 1, 4, 4), np.float32)
    batch = np.array([0, 1, 0, 0], np.int64)
    model = node_model("RoiAlign", {"x": x, "rois": ROIS, "batch": batch}, opset=16)
    with pytest.raises(OnnxUnsupportedError, match=r"RoiAlign.*batch indices"):
        pgx.load(model, device="CPU").run(None, {"x": x, "rois": ROIS, "batch": batch})


# ── NonMaxSuppression ──────────────────────────────────────────────────────

def nms_model(boxes: np.ndarray, scores: np.ndarray, limit: int, iou: float,
              score: float | None, center: int = 0) -> onnx.ModelProto:
    constants = {"limit": np.array([limit], np.int64), "iou": np.array([iou], np.float32)}
    if score is not None:
        constants["score"] = np.array([score], np.float32)
    return node_model("NonMaxSuppression", {"boxes": boxes, "scores": scores},
                      {"center_point_box": center}, opset=11, constants=constants,
                      out_types=[TensorProto.INT64])


@pytest.mark.parametrize(("limit", "iou", "score"), [
    (3, 0.5, None), (100, 0.3, 0.2), (0, 0.5, None), (2, 0.0, None), (10, 1.0, 0.9)])
@pytest.mark.parametrize("center", [0, 1])
def test_nms_matches_ort(limit: int, iou: float, score: float | None, center: int
                         ) -> None:
    """Overlapping random boxes (corners in either order), tied scores, two batches and
    three classes."""
    corners = R.uniform(0, 4, (2, 12, 4)).astype(np.float32)
    scores = R.choice(np.array([0.1, 0.3, 0.5, 0.7, 0.9], np.float32), (2, 3, 12))
    model = nms_model(corners, scores, limit, iou, score, center)
    assert_matches_ort(model, {"boxes": corners, "scores": scores})


def test_nms_nan_score_is_refused() -> None:
    boxes = np.zeros((1, 2, 4), np.float32)
    scores = np.array([[[0.5, np.nan]]], np.float32)
    model = nms_model(boxes, scores, 5, 0.5, None)
    with pytest.raises(OnnxUnsupportedError, match=r"NonMaxSuppression.*NaN"):
        pgx.load(model, device="CPU").run(None, {"boxes": boxes, "scores": scores})


def test_roi_align_nan_roi_is_refused() -> None:
    """A NaN ROI has no sample grid (the reference's ceil(NaN) raises)."""
    x = np.zeros((1, 1, 4, 4), np.float32)
    rois = ROIS.copy()
    rois[1, 2] = np.nan
    batch = np.zeros(4, np.int64)
    model = node_model("RoiAlign", {"x": x, "rois": rois, "batch": batch}, opset=16)
    with pytest.raises(OnnxUnsupportedError, match=r"RoiAlign.*NaN"):
        pgx.load(model, device="CPU").run(None, {"x": x, "rois": rois, "batch": batch})


def test_col2im_negative_pads_are_refused() -> None:
    x = np.zeros((1, 4, 9), np.float32)
    model = node_model("Col2Im", {"x": x}, {"pads": [-1, 0, 0, 0]}, opset=18, constants={
        "image": np.array([4, 4], np.int64), "block": np.array([2, 2], np.int64)})
    with pytest.raises(OnnxUnsupportedError, match=r"Col2Im.*pads"):
        pgx.load(model, device="CPU").run(None, {"x": x})


def test_gridsample_integer_image_is_refused() -> None:
    """opset 20 lets X be an integer tensor; how its samples round is not defined."""
    x = np.arange(20, dtype=np.int32).reshape(1, 1, 4, 5)
    model = node_model("GridSample", {"x": x, "grid": GRID[:1]}, opset=20)
    with pytest.raises(OnnxUnsupportedError, match=r"GridSample.*float only"):
        pgx.load(model, device="CPU").run(None, {"x": x, "grid": GRID[:1]})
