"""ONNX element types <-> numpy dtypes (the picograd dtype of a Tensor made from an array of
that numpy dtype), and the host-only element types.

`ONNX_TO_NUMPY` holds the types picograd has a dtype for. The small types it has none for
(INT4, UINT4, INT2, UINT2, FLOAT4E2M1, FLOAT8E4M3FNUZ, FLOAT8E5M2FNUZ, FLOAT8E8M0) are
*host-only* (`HOST_ONLY`): their values are host numpy arrays of the ml_dtypes type — as
onnx's numpy_helper gives them, fed, stored in initializers and returned bit-exact — and
never device Tensors (GraphRunner.to_tensor refuses them, so a translation that does not
handle them fails instead of computing on a wrong type). Cast / CastLike to and from them
run on the host (`cast_host`: onnx's reference conversions). A translation that computes
on them (DequantizeLinear, QuantizeLinear) goes through their *storage*: `to_storage`
gives the exact values as int8 (INT4, INT2), uint8 (UINT4, UINT2) or float32 (the float
kinds), `storage_tensor` their device Tensor (made once per array); `from_storage` turns
values computed on the device and read back into the host-only type, refusing any value
the type cannot hold exactly.
Other types (strings, complex) are not supported."""

from __future__ import annotations

import weakref

import ml_dtypes
import numpy as np
from onnx import TensorProto, numpy_helper

from picograd.frontend.tensor import Tensor

ONNX_TO_NUMPY: dict[int, np.dtype] = {
    TensorProto.FLOAT: np.dtype(np.float32),
    TensorProto.DOUBLE: np.dtype(np.float64),
    TensorProto.FLOAT16: np.dtype(np.float16),
    TensorProto.BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    TensorProto.FLOAT8E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    TensorProto.FLOAT8E5M2: np.dtype(ml_dtypes.float8_e5m2),
    TensorProto.INT8: np.dtype(np.int8),
    TensorProto.INT16: np.dtype(np.int16),
    TensorProto.INT32: np.dtype(np.int32),
    TensorProto.INT64: np.dtype(np.int64),
    TensorProto.UINT8: np.dtype(np.uint8),
    TensorProto.UINT16: np.dtype(np.uint16),
    TensorProto.UINT32: np.dtype(np.uint32),
    TensorProto.UINT64: np.dtype(np.uint64),
    TensorProto.BOOL: np.dtype(np.bool_),
}


HOST_ONLY: dict[int, np.dtype] = {
    TensorProto.INT4: np.dtype(ml_dtypes.int4),
    TensorProto.UINT4: np.dtype(ml_dtypes.uint4),
    TensorProto.INT2: np.dtype(ml_dtypes.int2),
    TensorProto.UINT2: np.dtype(ml_dtypes.uint2),
    TensorProto.FLOAT4E2M1: np.dtype(ml_dtypes.float4_e2m1fn),
    TensorProto.FLOAT8E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    TensorProto.FLOAT8E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    TensorProto.FLOAT8E8M0: np.dtype(ml_dtypes.float8_e8m0fnu),
}
_HOST_ONLY_TYPES = {dt: t for t, dt in HOST_ONLY.items()}
_ALL_TYPES = {dt: t for t, dt in ONNX_TO_NUMPY.items()} | _HOST_ONLY_TYPES
# the dtype holding each host-only type's values exactly
_STORAGE = {np.dtype(ml_dtypes.int4): np.dtype(np.int8),
            np.dtype(ml_dtypes.int2): np.dtype(np.int8),
            np.dtype(ml_dtypes.uint4): np.dtype(np.uint8),
            np.dtype(ml_dtypes.uint2): np.dtype(np.uint8)}
# storage_tensor's uploads: (id, device) -> (a weak reference to the array, its Tensor)
_STORAGE_TENSORS: dict[tuple[int, str], tuple[weakref.ref, Tensor]] = {}
_FLOAT8_SATURATING = {TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ,
                      TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ}


def onnx_type_name(elem_type: int) -> str:
    """"FLOAT", "INT64", ... for messages."""
    try:
        return TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"<element type {elem_type}>"


def numpy_dtype(elem_type: int) -> np.dtype | None:
    """The numpy dtype of an ONNX element type (a host-only one's ml_dtypes type), or None
    where the importer supports none."""
    return ONNX_TO_NUMPY.get(elem_type) or HOST_ONLY.get(elem_type)


def onnx_type(dtype: np.dtype) -> int | None:
    """The ONNX element type of a numpy dtype (None: none the importer supports)."""
    return _ALL_TYPES.get(np.dtype(dtype))


def is_host_only(dtype: np.dtype | None) -> bool:
    """Whether `dtype` is a host-only element type's (INT4, FLOAT4E2M1, the fnuz float8
    kinds, ...): picograd has no dtype for it."""
    return dtype is not None and np.dtype(dtype) in _HOST_ONLY_TYPES


def storage_dtype(dtype: np.dtype) -> np.dtype:
    """The picograd-supported dtype that holds a host-only type's values exactly: int8 for
    INT4 / INT2, uint8 for UINT4 / UINT2, float32 for the float kinds."""
    return _STORAGE.get(np.dtype(dtype), np.dtype(np.float32))


def to_storage(array: np.ndarray) -> np.ndarray:
    """A host-only array's values in `storage_dtype` (exact), ready for a device Tensor."""
    return np.asarray(array).astype(storage_dtype(array.dtype))


def storage_tensor(array: np.ndarray, device: str) -> Tensor:
    """The device Tensor of a host-only array's storage values (`to_storage`), made once
    per array and device while the array lives: a model's INT4 weights are converted and
    uploaded on their first use, not on every run."""
    key = (id(array), device)
    cached = _STORAGE_TENSORS.get(key)
    if cached is not None and cached[0]() is array:
        return cached[1]
    tensor = Tensor(to_storage(array), device=device)
    _STORAGE_TENSORS[key] = (weakref.ref(array), tensor)
    weakref.finalize(array, _STORAGE_TENSORS.pop, key, None)
    return tensor


def from_storage(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`values` (computed in the storage dtype, e.g. read back from the device) as the
    host-only `dtype`; ValueError unless every value is one `dtype` holds exactly (NaN
    included where the type has one), so a value out of range is an error, not a wrap."""
    values = np.asarray(values)
    out = values.astype(dtype)
    back = out.astype(values.dtype)
    same = (back == values) | (np.isnan(back) & np.isnan(values)
                               if values.dtype.kind == "f" else False)
    if not np.all(same):
        bad = values[~same].reshape(-1)[:4].tolist()
        raise ValueError(f"the value(s) {bad} are not {dtype} values")
    return out


def cast_host(x: np.ndarray, to: int, saturate: bool = True, round_mode: str = "up"
              ) -> np.ndarray:
    """ONNX Cast of a host array to element type `to`, as onnx's reference
    (onnx/reference/ops/op_cast.py): the float8 kinds saturate unless told not to,
    FLOAT8E8M0 rounds by `round_mode` ("up", "down", "nearest"), every other type is
    numpy's / ml_dtypes' conversion."""
    dtype = numpy_dtype(to)
    if dtype is None:
        raise ValueError(f"no cast to element type {onnx_type_name(to)}")
    x = np.asarray(x)
    with np.errstate(invalid="ignore", over="ignore"):  # NaN to an integer type is defined
        if to in _FLOAT8_SATURATING and saturate:
            return numpy_helper.saturate_cast(x, dtype)
        if to == TensorProto.FLOAT8E8M0:
            return numpy_helper.to_float8e8m0(x, saturate, round_mode).astype(dtype)
        return x.astype(dtype)
