"""Type promotion against torch.result_type: every pair of dtypes as tensor-tensor,
tensor-0-d tensor, 0-d-0-d, and tensor / 0-d tensor with a python int, float or bool.

The one documented departure (picograd/frontend/dtype.py): a python int is an int32 here
(picograd's default integer), an int64 in torch, so where torch's result is int64 only
because of a python int (no int64 tensor among the operands) picograd's is int32; those
cases are asserted to be exactly that. Only lazy tensors are built: nothing compiles.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import picograd as pg
from picograd.frontend.dtype import DTYPES, promote_types, result_type, to_dtype

torch = pytest.importorskip("torch", reason="torch is the oracle of the promotion tests")

TORCH = {t: getattr(torch, t.name) for t in DTYPES}
PAIRS = list(itertools.product(DTYPES, DTYPES))
SCALARS = (5, 2.5, True)


def _torch_operand(dtype, ndim: int):
    return torch.zeros((2,) * ndim, dtype=TORCH[dtype])


def _pg_operand(dtype, ndim: int) -> pg.Tensor:
    return pg.Tensor(np.zeros((2,) * ndim, dtype=dtype.np))


def _expected(torch_result, operands) -> pg.DType:
    """torch's result as a picograd dtype, with the python-int departure applied."""
    want = to_dtype(torch_result)
    has_int64_tensor = any(isinstance(o, tuple) and o[0] is pg.int64 for o in operands)
    if want is pg.int64 and not has_int64_tensor:
        assert any(type(o) is int for o in operands), "int64 must come from a python int"
        return pg.int32  # the departure: python ints are int32
    return want


def _check(operands) -> None:
    """operands: (dtype, ndim) for tensors, python scalars as themselves. A pair torch
    refuses to promote (uint32 with int8) is a DTypeError here."""
    t_ops = [_torch_operand(*o) if isinstance(o, tuple) else o for o in operands]
    p_ops = [_pg_operand(*o) if isinstance(o, tuple) else o for o in operands]
    try:
        torch_result = torch.result_type(*t_ops)
    except RuntimeError:
        with pytest.raises(pg.DTypeError, match="promot"):
            _ = p_ops[0] + p_ops[1]
        return
    want = _expected(torch_result, operands)
    got = (p_ops[0] + p_ops[1]).dtype
    assert got is want, f"{operands}: picograd {got}, torch (with the departure) {want}"


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a.name}-{b.name}" for a, b in PAIRS])
def test_tensor_tensor(a, b) -> None:
    try:
        want = to_dtype(torch.promote_types(TORCH[a], TORCH[b]))
    except RuntimeError:
        with pytest.raises(pg.DTypeError, match="promot"):
            promote_types(a, b)
    else:
        assert promote_types(a, b) is want
    for na, nb in ((1, 1), (2, 1), (1, 0), (0, 1), (0, 0)):
        _check([(a, na), (b, nb)])


@pytest.mark.parametrize("a", DTYPES, ids=[a.name for a in DTYPES])
@pytest.mark.parametrize("scalar", SCALARS, ids=["int", "float", "bool"])
def test_tensor_scalar(a, scalar) -> None:
    for ndim in (1, 0):
        _check([(a, ndim), scalar])
        _check([scalar, (a, ndim)])


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a.name}-{b.name}" for a, b in PAIRS])
def test_where(a, b) -> None:
    """`where` promotes its two values (not the condition), as torch.where."""
    cond_t, cond_p = torch.zeros(2, dtype=torch.bool), pg.Tensor([False, True])
    for x, y in (((a, 1), (b, 1)), ((a, 1), (b, 0)), ((a, 1), 5), ((a, 1), 2.5), (3, (b, 1))):
        t_ops = [_torch_operand(*o) if isinstance(o, tuple) else o for o in (x, y)]
        p_ops = [_pg_operand(*o) if isinstance(o, tuple) else o for o in (x, y)]
        try:
            torch_result = torch.where(cond_t, *t_ops).dtype
        except RuntimeError:
            with pytest.raises(pg.DTypeError, match="promot"):
                pg.where(cond_p, *p_ops)
            continue
        want = _expected(torch_result, (x, y))
        assert pg.where(cond_p, *p_ops).dtype is want, (x, y)


def test_where_of_two_scalars() -> None:
    cond = pg.Tensor(np.zeros(2, np.float16))  # the condition's dtype does not count
    assert pg.where(cond, 1, 2.5).dtype is pg.float32
    assert pg.where(cond, 1, 2).dtype is pg.int32  # torch: int64 (the departure)
    assert pg.where(cond, True, False).dtype is pg.bool


def test_result_type_tiers() -> None:
    """A lower tier counts only with a higher category than every operand above it."""
    assert result_type([pg.int8], [pg.int64], [pg.int32]) is pg.int8
    assert result_type([pg.int8], [pg.float16], [pg.float32]) is pg.float16
    assert result_type([pg.bool], [pg.bool], [pg.int32]) is pg.int32
    assert result_type([pg.int16], [pg.bool], [pg.float32]) is pg.float32
    assert result_type([], [pg.uint8], [pg.int32]) is pg.uint8
    assert result_type([], [], [pg.int32, pg.float32]) is pg.float32


def test_documented_examples() -> None:
    i8, u8 = _pg_operand(pg.int8, 1), _pg_operand(pg.uint8, 1)
    f16, b = _pg_operand(pg.float16, 1), _pg_operand(pg.bool, 1)
    assert (i8 + 5).dtype is pg.int8
    assert (i8 + 2.5).dtype is pg.float32
    assert (f16 + 2.5).dtype is pg.float16
    assert (i8 + u8).dtype is pg.int16
    assert (u8 + _pg_operand(pg.int16, 1)).dtype is pg.int16
    assert (_pg_operand(pg.int32, 1) + _pg_operand(pg.int64, 1)).dtype is pg.int64
    assert (f16 + _pg_operand(pg.int64, 1)).dtype is pg.float16
    assert (b + 1).dtype is pg.int32  # torch: int64 (the departure)
    assert (i8 + _pg_operand(pg.float16, 0)).dtype is pg.float16  # 0-d of a higher category
    assert (i8 + _pg_operand(pg.int64, 0)).dtype is pg.int8  # 0-d of the same category


@pytest.mark.parametrize("spec", ["half", "float16", "torch.float16", np.float16,
                                  np.dtype("float16"), "f16"])
def test_to_dtype_aliases(spec) -> None:
    assert to_dtype(spec) is pg.float16
    assert to_dtype(torch.int64) is pg.long is pg.int64
    assert to_dtype("uint8") is to_dtype(torch.uint8) is pg.uint8
    assert pg.int is pg.int32 and pg.float is pg.float32 and pg.half is pg.float16


def test_dtype_properties() -> None:
    assert [t.name for t in DTYPES if t.is_float] == ["float16", "float32", "float64",
                                                      "bfloat16"]
    assert [t.name for t in DTYPES if t.is_int] == ["int8", "uint8", "int16", "int32", "int64",
                                                     "uint16", "uint32", "uint64"]
    assert [t.name for t in DTYPES if t.is_signed] == ["float16", "float32", "float64", "int8",
                                                        "int16", "int32", "int64", "bfloat16"]
    assert pg.int8.min == -128 and pg.uint8.max == 255 and pg.float16.min == float("-inf")


def test_ir_types() -> None:
    from picograd.dialects.dtypes import from_numpy_dtype

    for t in DTYPES:
        assert t.ir == from_numpy_dtype(t.np)
    assert [str(t.ir) for t in DTYPES] == ["f16", "f32", "f64", "i8", "ui8", "i16", "i32", "i64",
                                           "i1", "ui16", "ui32", "ui64", "bf16"]


@pytest.mark.parametrize(("array", "want"), [
    (np.zeros(2, np.float64), pg.float64), (np.zeros(2, np.float16), pg.float16),
    (np.zeros(2, np.int8), pg.int8), (np.zeros(2, np.uint8), pg.uint8),
    (np.zeros(2, np.int16), pg.int16), (np.zeros(2, np.int64), pg.int64),
    (np.zeros(2, np.uint16), pg.uint16), (np.zeros(2, np.uint32), pg.uint32),
    (np.zeros(2, np.uint64), pg.uint64), (np.zeros(2, np.bool_), pg.bool)])
def test_numpy_input_dtypes(array, want) -> None:
    t = pg.Tensor(array)
    assert t.dtype is want and t.numpy().dtype == want.np


def test_python_input_dtypes() -> None:
    assert pg.Tensor([1, 2]).dtype is pg.int32
    assert pg.Tensor([1.0, 2]).dtype is pg.float32
    assert pg.Tensor([True]).dtype is pg.bool
    assert pg.Tensor(3).dtype is pg.int32
    assert pg.Tensor(np.int8(3)).dtype is pg.int8
    with pytest.raises(pg.DTypeError, match="300 cannot be converted to int8"):
        pg.Tensor([300], dtype=pg.int8)  # torch: "value cannot be converted ... overflow"
