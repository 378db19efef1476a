"""The frontend's element types and torch's type promotion.

    DType(name, itemsize, np, ir)      np: the numpy twin (the buffer's dtype); ir: IR type
    float16 (half)  bfloat16  float32 (float)  float64 (double)  int8  uint8  int16
    int32 (int)  int64 (long)  bool  uint16  uint32  uint64
    float8_e4m3fn  float8_e5m2         storage only (FLOAT8_DTYPES, not in DTYPES): casts,
                                       movement ops and `where`; arithmetic raises (torch)
    to_dtype(x) -> DType               a DType, numpy dtype, python type, name or alias
    promote_types(a, b) -> DType       the lattice below (torch.promote_types)
    result_type(dims, zero_dims, scalars) -> DType          torch.result_type's tiers
    dtype_of_array(a) / dtype_of_list(a) / dtype_of_scalar(v)
    first_overflow(a, dtype) -> the first value of python data `dtype` cannot hold, or None

Promotion. Categories are ordered bool < integer < float. `promote_types` of two dtypes is
the one of the higher category; within floats the wider; within integers the narrowest
that holds both ranges (int8 + uint8 -> int16, uint8 + int16 -> int16, int32 + int64 ->
int64). `result_type` ranks operands in three tiers: tensors with dimensions, 0-d tensors
and python scalars. Each tier is promoted on its own; a lower tier counts only where its
category is higher than every operand above it, and then its own dtype is the result:

    int8 tensor + 5 -> int8        int8 tensor + 2.5 -> float32     float16 tensor + 2.5 -> float16
    int8 tensor + 0-d int32 -> int8               int8 tensor + 0-d float16 -> float16

A python int is an int32 (picograd's default integer, as tinygrad's; torch's is int64), a
python float a float32 (torch's default float), a python bool a bool. So `bool tensor + 1`
is int32 here and int64 in torch: the one departure from `torch.result_type`.

Numpy input keeps its dtype (float64 stays float64 and uint16/32/64 stay unsigned, as
`torch.from_numpy`). Python data (a scalar, nested
lists) of floats is float32; of ints int32, or int64 where a value does not fit int32
(torch's default int for all python ints), and an int beyond int64 fits no dtype.

Python data converted to an integer dtype must fit it, as in torch (`first_overflow`): an
int within the dtype's range (for an unsigned dtype also a negative int down to -max, which
wraps: uint8 -1 is 255), a float within the range before truncation (uint8 -0.5 and int8
127.5 overflow, NaN always). Float and bool dtypes take any value (70000 is float16 inf).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from xdsl.ir import Attribute

from picograd.dialects.dtypes import from_numpy_dtype
from picograd.errors import DTypeError

# categories, in promotion order
BOOL, INTEGER, FLOAT = 0, 1, 2


@dataclass(frozen=True, eq=False)
class DType:
    """One element type. There is exactly one instance per dtype, so `is` and `==` agree.
    Its category and sign are worked out once per dtype (cached properties): every op that
    builds a node reads them."""

    name: str
    itemsize: int
    np: np.dtype = field(repr=False)
    # a storage-only dtype (float8): held as its bits (ui8 in the IR), cast through float32
    # (frontend/float8.py); arithmetic and promotion with another dtype raise, as in torch
    storage_only: bool = False

    def __repr__(self) -> str:
        return f"picograd.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickles as the module-level singleton

    @functools.cached_property
    def category(self) -> int:
        """BOOL, INTEGER or FLOAT (the promotion order)."""
        kind = self.np.kind  # ml_dtypes' bfloat16 is a numpy "V" (void) kind: a float
        return BOOL if kind == "b" else FLOAT if kind in "fV" else INTEGER

    @functools.cached_property
    def is_float(self) -> bool:
        return self.category == FLOAT

    @functools.cached_property
    def is_int(self) -> bool:
        """An integer type (bool is not one)."""
        return self.category == INTEGER

    @functools.cached_property
    def is_bool(self) -> bool:
        return self.category == BOOL

    @functools.cached_property
    def is_signed(self) -> bool:
        """Whether negative values are representable (floats and signed integers)."""
        return self.np.kind in "fiV"

    @property
    def min(self) -> float | int:
        """The lowest value (-inf for floats); the identity of a max reduction."""
        if self.is_float:
            return float("-inf")
        return False if self.is_bool else int(np.iinfo(self.np).min)

    @property
    def max(self) -> float | int:
        if self.is_float:
            return float("inf")
        return True if self.is_bool else int(np.iinfo(self.np).max)

    @property
    def ir(self) -> Attribute:
        """The IR element type (picograd.dialects.dtypes: f16 f32 i1 i8 ui8 i16 i32 i64); a
        float8's is ui8, its bits."""
        return from_numpy_dtype(np.dtype(np.uint8) if self.storage_only else self.np)


float16 = DType("float16", 2, np.dtype(np.float16))
float32 = DType("float32", 4, np.dtype(np.float32))
float64 = DType("float64", 8, np.dtype(np.float64))
int8 = DType("int8", 1, np.dtype(np.int8))
uint8 = DType("uint8", 1, np.dtype(np.uint8))
int16 = DType("int16", 2, np.dtype(np.int16))
int32 = DType("int32", 4, np.dtype(np.int32))
int64 = DType("int64", 8, np.dtype(np.int64))
bool_ = DType("bool", 1, np.dtype(np.bool_))
uint16 = DType("uint16", 2, np.dtype(np.uint16))
uint32 = DType("uint32", 4, np.dtype(np.uint32))
uint64 = DType("uint64", 8, np.dtype(np.uint64))
bfloat16 = DType("bfloat16", 2, np.dtype(ml_dtypes.bfloat16))

DTYPES: tuple[DType, ...] = (float16, float32, float64, int8, uint8, int16, int32, int64, bool_,
                             uint16, uint32, uint64, bfloat16)
# float8 as torch's: storage with casts (not in DTYPES, which lists the dtypes ops compute in)
float8_e4m3fn = DType("float8_e4m3fn", 1, np.dtype(ml_dtypes.float8_e4m3fn), storage_only=True)
float8_e5m2 = DType("float8_e5m2", 1, np.dtype(ml_dtypes.float8_e5m2), storage_only=True)
FLOAT8_DTYPES: tuple[DType, ...] = (float8_e4m3fn, float8_e5m2)
# torch's "limited support" unsigned types: they promote with floats and themselves only
_LIMITED_UNSIGNED = frozenset({uint16, uint32, uint64})
DEFAULT_FLOAT, DEFAULT_INT = float32, int32

_BY_NAME: dict[str, DType] = {
    **{t.name: t for t in DTYPES + FLOAT8_DTYPES},
    "half": float16, "f16": float16, "float": float32, "f32": float32,
    "double": float64, "f64": float64, "bf16": bfloat16,
    "i8": int8, "u8": uint8, "ui8": uint8, "short": int16, "i16": int16,
    "int": int32, "i32": int32, "long": int64, "i64": int64, "bool_": bool_, "i1": bool_,
    "u16": uint16, "ui16": uint16, "u32": uint32, "ui32": uint32, "u64": uint64, "ui64": uint64,
}
_BY_TYPE: dict[type, DType] = {float: float32, int: int32, bool: bool_}


def _valid() -> str:
    names = ", ".join(f"picograd.{t.name}" for t in DTYPES + FLOAT8_DTYPES)
    return names + " (or their names / numpy twins)"


def to_dtype(x: object) -> DType:
    """The DType `x` names: a DType, a name ("float16", "half", "long", "torch.int8"), a
    python type, a numpy dtype or anything with a `.name` of those (a torch dtype is
    "torch.<name>"); raises `DTypeError` listing the valid ones."""
    if isinstance(x, DType):
        return x
    if isinstance(x, type) and x in _BY_TYPE:
        return _BY_TYPE[x]
    name = x if isinstance(x, str) else str(x) if type(x).__module__ == "torch" else None
    if name is not None:
        name = name.removeprefix("torch.").removeprefix("picograd.")
        if name in _BY_NAME:
            return _BY_NAME[name]
    try:
        d = np.dtype(x)  # type: ignore[call-overload]
    except TypeError:
        d = None
    for t in DTYPES + FLOAT8_DTYPES:
        if d is not None and d == t.np:  # numpy: dtype("float64") == None is True
            return t
    raise DTypeError(f"unknown dtype {x!r}; valid dtypes: {_valid()}")


def dtype_of_array(a: np.ndarray) -> DType:
    """The DType a numpy array is stored as: its own (a float numpy has and picograd lacks,
    float128, is float32)."""
    for t in DTYPES + FLOAT8_DTYPES:
        if a.dtype == t.np:
            return t
    if a.dtype.kind == "f":
        return float32
    raise DTypeError(f"cannot make a tensor of numpy dtype {a.dtype}; valid dtypes: {_valid()}")


def _python_ints(a: np.ndarray) -> bool:
    """Whether an object array holds only python ints (ints numpy could not hold in 64 bits:
    `np.array([2**64])`)."""
    return a.dtype.kind == "O" and all(isinstance(v, int) for v in a.reshape(-1).tolist())


def dtype_of_list(a: np.ndarray) -> DType:
    """The DType of python data numpy made `a` of: the defaults, whatever width numpy
    picked (floats are float32; ints int32 where every value fits it, else int64, whose
    `first_overflow` then names any value beyond int64)."""
    kind = a.dtype.kind
    if kind == "b":
        return bool_
    if kind in "iu" or _python_ints(a):
        return DEFAULT_INT if first_overflow(a, DEFAULT_INT) is None else int64
    if kind == "f":
        return DEFAULT_FLOAT
    raise DTypeError(f"cannot make a tensor of {a.dtype} elements; valid dtypes: {_valid()}")


def first_overflow(a: np.ndarray, dtype: DType) -> int | float | None:
    """The first value of python data `a` (numpy's array of it) that converting to `dtype`
    overflows, by torch's rule (module docstring), or None. Only integer dtypes overflow."""
    if not dtype.is_int or a.size == 0 or a.dtype.kind == "b":
        return None
    lo, hi = _int_range(dtype)
    if a.dtype.kind != "f" and not dtype.is_signed:
        lo = -hi  # negative ints wrap into an unsigned type, as torch's two's complement
    flat = a.reshape(-1)
    if a.dtype.kind == "O":  # python ints beyond 64 bits: compared exactly, one by one
        return next((v for v in flat.tolist() if not lo <= v <= hi), None)
    bad = flat[~((flat >= lo) & (flat <= hi))]  # NaN fails both comparisons
    return bad[0].item() if bad.size else None


def dtype_of_scalar(v: object) -> DType:
    """The weak dtype of a python (or numpy) scalar operand."""
    if isinstance(v, bool | np.bool_):
        return bool_
    if isinstance(v, int | np.integer):
        return DEFAULT_INT
    if isinstance(v, float | np.floating):
        return DEFAULT_FLOAT
    raise DTypeError(f"expected a tensor or a python scalar, got {type(v).__name__}")


def float_compute_dtype(dtype: DType) -> DType:
    """The float a `dtype` value is computed and accumulated in, as torch: float64 for
    float64, float32 for every other dtype (float16 and bfloat16 sums and matmuls accumulate
    in float32 and round once at the end; integers become the default float)."""
    return float64 if dtype is float64 else DEFAULT_FLOAT


def cast_scalar(value: float | int | bool, dtype: DType) -> float | int | bool:
    """`value` as a constant of `dtype`: a python float, bool, or an int wrapped into the
    integer type's range (int8 1000 is -24, as C's conversion and torch's scalars); a float8
    constant is its bits, an int (its IR type is ui8)."""
    if dtype.storage_only:
        return int(float8_array(np.array(value), dtype).view(np.uint8))
    if dtype.is_float:
        return float(value)
    if dtype.is_bool:
        return bool(value)
    lo, hi = int(dtype.min), int(dtype.max)
    return (int(value) - lo) % (hi - lo + 1) + lo


def float8_array(a: np.ndarray, dtype: DType) -> np.ndarray:
    """`a` converted to the float8 `dtype` as torch converts: nearest even, and e4m3fn (which
    has no inf) saturates beyond 448 and at +-inf where ml_dtypes would give NaN."""
    if dtype is float8_e4m3fn and a.dtype != dtype.np:
        wide = np.asarray(a, dtype=np.float64)
        a = np.where(np.isnan(wide), wide, np.clip(wide, -448.0, 448.0))
    return np.array(a, dtype=dtype.np, order="C")


# ── promotion ────────────────────────────────────────────────────────────────


def _int_range(t: DType) -> tuple[int, int]:
    info = np.iinfo(t.np)
    return int(info.min), int(info.max)


@functools.cache
def promote_types(a: DType, b: DType) -> DType:
    """The dtype both `a` and `b` convert to (torch.promote_types): the higher category;
    the wider float; the narrowest integer that holds both ranges. As torch, uint16, uint32
    and uint64 promote only with a float or themselves (a DTypeError otherwise)."""
    if a is b:
        return a
    if a.storage_only or b.storage_only:
        raise DTypeError(f"promotion of {a.name} and {b.name} is not supported (as in torch, "
                         "float8 types promote only with themselves); cast one operand first")
    if (a in _LIMITED_UNSIGNED and not b.is_float) or (b in _LIMITED_UNSIGNED
                                                          and not a.is_float):
        raise DTypeError(f"promotion of {a.name} and {b.name} is not supported (as in torch, "
                         "uint16, uint32 and uint64 promote only with floats and themselves); "
                         "cast one operand first")
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.is_float:
        if a.itemsize == b.itemsize:  # float16 and bfloat16: neither holds the other
            return float32
        return a if a.itemsize > b.itemsize else b
    if a.is_bool:
        return a
    (alo, ahi), (blo, bhi) = _int_range(a), _int_range(b)
    lo, hi = min(alo, blo), max(ahi, bhi)
    fits = [t for t in DTYPES if t.is_int and t not in _LIMITED_UNSIGNED
            and _int_range(t)[0] <= lo and _int_range(t)[1] >= hi]
    return min(fits, key=lambda t: t.itemsize)


def promote(a: DType, b: DType) -> DType:
    """Two tensors' common dtype (`promote_types`)."""
    return promote_types(a, b)


def _promote_all(dtypes: Iterable[DType]) -> DType | None:
    result: DType | None = None
    for t in dtypes:
        result = t if result is None else promote_types(result, t)
    return result


def result_type(dims: Iterable[DType], zero_dims: Iterable[DType] = (),
                scalars: Iterable[DType] = ()) -> DType:
    """The dtype of an elementwise op over tensors with dimensions (`dims`), 0-d tensors
    (`zero_dims`) and python scalars (`scalars`, by `dtype_of_scalar`): torch.result_type.

    Each tier is promoted on its own; a lower tier wins only with a higher category."""
    result: DType | None = None
    for tier in (dims, zero_dims, scalars):
        weak = _promote_all(tier)
        if result is None or (weak is not None and weak.category > result.category):
            # over bool torch promotes the two (which refuses bool with uint16/32/64)
            result = promote_types(result, weak) if result is not None and result.is_bool \
                else weak
    if result is None:
        raise DTypeError("result_type needs at least one operand")
    return result
