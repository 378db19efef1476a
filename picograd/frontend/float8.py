"""float8 casts (e4m3fn, e5m2) composed of integer Tensor ops on their bits, on every device.

    encode_float8(x, dtype) -> float8 tensor     x: float32; rounds to nearest even
    decode_float8(x) -> float32 tensor           exact

A float8 tensor holds its bits (ui8 in the IR): no target has float8 arithmetic picograd
could rely on, and torch itself only stores float8 and casts it (its `a + b` raises), so
picograd does the same and needs no IR of its own: a cast is a handful of i32 ops, which
every target has. torch's rules (checked against torch 2.13's CPU casts):

    e4m3fn (bias 7, no inf): beyond 448 and +-inf saturate to +-448, NaN stays NaN (0x7F)
    e5m2 (bias 15, as float16's top byte): beyond 57344 rounds to +-inf, NaN stays NaN

Subnormals (below 2**-6, 2**-14) are a count of the smallest step, rounded half to even by
`round` of the exactly scaled value; that count reaches the smallest normal's code (8, 4)
exactly where rounding carries into it. A cast from another dtype goes through float32
(exact from float16, bfloat16 and small ints; f64 rounds twice, off only within half a
float32 ulp of a float8 tie).

    >>> import picograd as pg
    >>> pg.Tensor([0.1, 500.0]).cast(pg.float8_e4m3fn).float().tolist()
    [0.1015625, 448.0]
"""

from __future__ import annotations

from typing import Any

from picograd.frontend.dtype import DType, float8_e4m3fn, float32, int32, uint8

# per format: (mantissa bits, f32 minus float8 exponent bias, largest finite code,
# code of overflow (e4m3fn saturates, e5m2 is inf), 1 / smallest subnormal step)
_FORMATS: dict[str, tuple[int, int, int, int, float]] = {
    "float8_e4m3fn": (3, 120, 0x7E, 0x7E, 2.0 ** 9),
    "float8_e5m2": (2, 112, 0x7B, 0x7C, 2.0 ** 16),
}
_ABS, _F32_INF = 0x7FFFFFFF, 0x7F800000


def encode_float8(x: Any, dtype: DType) -> Any:
    """The float32 tensor `x` cast to `dtype` (a float8), as torch rounds and saturates."""
    mant, bias, top, overflow, scale = _FORMATS[dtype.name]
    shift = 23 - mant
    bits = x.bitcast(int32)
    mag = bits & _ABS
    # nearest even on the f32 bits: add half an ulp less one, plus the kept lowest bit
    normal = ((mag + ((1 << (shift - 1)) - 1) + ((mag >> shift) & 1)) >> shift) - (bias << mant)
    normal = (normal > top).where(overflow, normal)
    sub = (x.abs() * scale).round().cast(int32)
    code = (x.abs() < _smallest_normal(dtype)).where(sub, normal)
    code = (mag > _F32_INF).where(0x7F, code)  # NaN
    code = code | ((bits < 0).where(0x80, 0))
    return code.cast(uint8).bitcast(dtype)


def _smallest_normal(dtype: DType) -> float:
    return 2.0 ** -6 if dtype is float8_e4m3fn else 2.0 ** -14


def decode_float8(x: Any) -> Any:
    """The float8 tensor `x`'s values as float32 (exact)."""
    mant, bias, _, _, scale = _FORMATS[x.dtype.name]
    b = x.bitcast(uint8).cast(int32)
    exp, frac = (b >> mant) & ((1 << (7 - mant)) - 1), b & ((1 << mant) - 1)
    normal = (((exp + bias) << 23) | (frac << (23 - mant))).bitcast(float32)
    value = (exp == 0).where(frac.cast(float32) * (1.0 / scale), normal)
    if x.dtype is float8_e4m3fn:  # 0x7F / 0xFF: NaN (its inf-exponent codes are numbers)
        value = ((b & 0x7F) == 0x7F).where(float("nan"), value)
    else:  # exponent 31: inf or NaN, as float32's 255 with the same mantissa
        value = (exp == 31).where(((frac << 21) | _F32_INF).bitcast(float32), value)
    return (b >= 0x80).where(-value, value)
