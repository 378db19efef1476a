"""ONNX element types <-> numpy dtypes (the picograd dtype of a Tensor made from an array of
that numpy dtype). Types picograd has no dtype for (strings, complex, int4, the fnuz float8
kinds) are not in the table: a model using them is unsupported."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto

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


def onnx_type_name(elem_type: int) -> str:
    """"FLOAT", "INT64", ... for messages."""
    try:
        return TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"<element type {elem_type}>"


def numpy_dtype(elem_type: int) -> np.dtype | None:
    """The numpy dtype of an ONNX element type, or None where picograd has none."""
    return ONNX_TO_NUMPY.get(elem_type)
