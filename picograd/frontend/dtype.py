"""The frontend's element types: `float32`, `int32`, `bool`, and type promotion.

    DType(name, itemsize, np)          np: the numpy twin (also the buffer's dtype)
    to_dtype(x) -> DType               x: a DType, numpy dtype, python type or name string
    promote(a, b) -> DType             bool < int32 < float32
    dtype_of_array(a) / dtype_of_scalar(v)

Numpy arrays of another float width become float32, of another integer width int32 (as
tinygrad and torch's default dtypes do); anything else is a `DTypeError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from picograd.errors import DTypeError


@dataclass(frozen=True, eq=False)
class DType:
    """One element type. There is exactly one instance per dtype, so `is` and `==` agree."""

    name: str
    itemsize: int
    np: np.dtype = field(repr=False)
    rank: int = field(repr=False)  # promotion order: the result of mixing two is the higher

    def __repr__(self) -> str:
        return f"picograd.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickles as the module-level singleton

    @property
    def is_float(self) -> bool:
        return self is float32

    @property
    def is_bool(self) -> bool:
        return self is bool_


bool_ = DType("bool", 1, np.dtype(np.bool_), 0)
int32 = DType("int32", 4, np.dtype(np.int32), 1)
float32 = DType("float32", 4, np.dtype(np.float32), 2)

DTYPES: tuple[DType, ...] = (float32, int32, bool_)

_BY_NAME: dict[str, DType] = {
    "float32": float32, "float": float32, "f32": float32,
    "int32": int32, "int": int32, "i32": int32,
    "bool": bool_,
}
_BY_TYPE: dict[type, DType] = {float: float32, int: int32, bool: bool_}


def _valid() -> str:
    return "picograd.float32, picograd.int32, picograd.bool (or their names / numpy twins)"


def to_dtype(x: object) -> DType:
    """The DType `x` names; raises `DTypeError` listing the valid ones."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str) and x in _BY_NAME:
        return _BY_NAME[x]
    if isinstance(x, type) and x in _BY_TYPE:
        return _BY_TYPE[x]
    try:
        d = np.dtype(x)  # type: ignore[call-overload]
    except TypeError:
        d = None
    for t in DTYPES:
        if d == t.np:
            return t
    raise DTypeError(f"unknown dtype {x!r}; valid dtypes: {_valid()}")


def dtype_of_array(a: np.ndarray) -> DType:
    """The DType a numpy array is stored as (wider floats / ints are narrowed)."""
    kind = a.dtype.kind
    if kind == "b":
        return bool_
    if kind in "iu":
        return int32
    if kind == "f":
        return float32
    raise DTypeError(f"cannot make a tensor of numpy dtype {a.dtype}; valid dtypes: {_valid()}")


def dtype_of_scalar(v: object) -> DType:
    if isinstance(v, bool | np.bool_):
        return bool_
    if isinstance(v, int | np.integer):
        return int32
    if isinstance(v, float | np.floating):
        return float32
    raise DTypeError(f"expected a tensor or a python scalar, got {type(v).__name__}")


def promote(a: DType, b: DType) -> DType:
    return a if a.rank >= b.rank else b
