"""Random numbers computed on the device: a counter-based generator over lazy int32 ops.

    manual_seed(seed)                       restart the stream (host state: seed, call count)
    iota(cls, shape, axis, device, dtype)   each element's index along `axis` (no buffer)
    bits(cls, shape, device)                32 random bits per element, as int32
    rand(cls, shape, device, dtype)         uniform in [0, 1)
    randn(cls, shape, device, dtype)        standard normal (Box-Muller)

`cls` is the tensor class to build (`Tensor`), so this module does not import tensor.py.

Design. Element `i` (its row-major position) of the call `n` after `manual_seed(s)` gets

    bits[i] = mix(mix(i ^ k0) ^ k1)         mix = lowbias32, all arithmetic mod 2**32

where (k0, k1) are the two halves of splitmix64(splitmix64(s) ^ n), computed on the host. The
keys enter the graph as two 0-d int32 input buffers, not constants, so every call with the
same shape and device reuses one compiled kernel (`compile_stats()` shows no new compile);
all the rest (iota, xor, wrapping int32 multiply, shifts) runs on the device, and since
every target computes int32 `^ * >>` identically, `bits` and `rand` are bit-identical on
every device (`randn` up to the last bits of each device's log, sqrt and cos).

Why this hash: `lowbias32` (C. Wellons' hash prospector: x ^= x >> 16; x *= 0x7feb352d;
x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16) is a bijection of 32-bit words with a very low
avalanche bias, built only from 32-bit xor, logical shift and multiply, which every target
has (WGSL has no 64-bit integers, which rules out Philox's 32x32->64 multiply-high and makes
Threefry's rotations cost two shifts each). One round is a good mixer but keyless; two rounds
with the second key xored in between make each element a keyed function of (i, k0, k1) whose
outputs pass the mean / variance / bucket checks of the tests. Each round is a bijection, so
within one call distinct elements never share a 32-bit word. It is not cryptographic.

Logical right shifts are the arithmetic int32 `>>` masked to the low 32 - k bits. Floats take
the top bits (24 for float32, 11 for float16) times 2**-bits, so `rand` never gives 1.0.
A tensor that would not fit its device's memory is an OutOfMemoryError naming its shape,
dtype and bytes (`creation.check_fits_device`), before the limit of 2**31 - 1 words a call.
`randn` draws 2 * numel words in one call: u1 in (0, 1] from the first half, u2 in [0, 1) from
the second, z = sqrt(-2 ln u1) * cos(2 pi u2).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from picograd.frontend import capture
from picograd.frontend.creation import check_fits_device
from picograd.frontend.dtype import DType, float32, int32, int64, to_dtype
from picograd.frontend.lazy import LazyOp, dtype_error, shape_error

_MASK64 = (1 << 64) - 1
_state = {"seed": 0, "counter": 0}

# lowbias32's multipliers as int32 (the low 32 bits are what a wrapping multiply uses)
_M1 = 0x7FEB352D
_M2 = 0x846CA68B - (1 << 32)
_MANTISSA_BITS = {"float32": 24, "float16": 11}


def manual_seed(seed: int) -> None:
    """Restart the generator: the calls after it give the same values on every device."""
    _state["seed"], _state["counter"] = int(seed) & _MASK64, 0


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def _next_keys() -> tuple[int, int]:
    """The two int32 key words of the next call (advancing the host counter)."""
    z = _splitmix64(_splitmix64(_state["seed"]) ^ _state["counter"])
    _state["counter"] += 1
    words = np.array([z & 0xFFFFFFFF, z >> 32], dtype=np.uint32).view(np.int32)
    return int(words[0]), int(words[1])


def iota(cls: Any, shape: tuple[int, ...], axis: int, device: str, dtype: DType = int32) -> Any:
    """A tensor of `shape` whose elements are their index along `axis` (int32 or int64),
    computed where it is used: the lazy "iota" op (pg_tensor.iota)."""
    if dtype not in (int32, int64):
        raise dtype_error("iota", f"needs int32 or int64, got {dtype.name}")
    if not 0 <= axis < len(shape):
        raise shape_error("iota", f"axis {axis} is out of range for shape {shape}")
    return cls._from_node(LazyOp("iota", (), axis, tuple(shape), dtype, device))


def _srl(x: Any, k: int) -> Any:
    """Logical right shift of int32 words: the arithmetic shift, high bits cleared."""
    return (x >> k) & ((1 << (32 - k)) - 1)


def _lowbias32(x: Any) -> Any:
    x = x ^ _srl(x, 16)
    x = x * _M1
    x = x ^ _srl(x, 15)
    x = x * _M2
    return x ^ _srl(x, 16)


def _rekey_on_jit_replay(k0: Any, k1: Any) -> None:
    """Under a `picograd.jit` capture, give each replay the next keys (written into the key
    buffers in place), so a replayed step draws new numbers as the eager one would."""
    recorder = capture.recorder()
    if recorder is None:
        return

    def rekey() -> None:
        k0._node.buffer[...], k1._node.buffer[...] = _next_keys()

    recorder.on_random_key(rekey)


def _words(cls: Any, count: int, device: str) -> Any:
    """`count` random int32 words (a flat tensor) from the next key."""
    if count >= 1 << 31:
        raise shape_error("rand", f"at most 2**31 - 1 random elements per call, got {count}")
    k0, k1 = (cls(np.int32(k), device=device) for k in _next_keys())  # 0-d input buffers
    _rekey_on_jit_replay(k0, k1)
    counter = iota(cls, (count,), 0, k0.device)
    return _lowbias32(_lowbias32(counter ^ k0) ^ k1)


def _numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def bits(cls: Any, shape: tuple[int, ...], device: str) -> Any:
    """32 random bits per element, as int32."""
    shape = tuple(shape)
    check_fits_device("bits", shape, int32, device)
    if _numel(shape) == 0:
        return cls.full(shape, 0, int32, device)
    return _words(cls, _numel(shape), device).reshape(shape)


def _float_dtype(op: str, dtype: object) -> DType:
    dt = to_dtype(dtype)
    if dt.name not in _MANTISSA_BITS:
        raise dtype_error(op, f"random samples need float32 or float16, got {dt.name}")
    return dt


def _unit(words: Any, dt: DType, offset: int) -> Any:
    """(top bits of each word + offset) * 2**-bits: [0, 1) for offset 0, (0, 1] for 1."""
    n = _MANTISSA_BITS[dt.name]
    top = _srl(words, 32 - n)
    if offset:
        top = top + offset
    return (top.cast(float32) * (2.0 ** -n)).cast(dt)


def rand(cls: Any, shape: tuple[int, ...], device: str, dtype: object = float32) -> Any:
    """Uniform samples in [0, 1)."""
    shape, dt = tuple(shape), _float_dtype("rand", dtype)
    check_fits_device("rand", shape, dt, device)
    if _numel(shape) == 0:
        return cls.full(shape, 0.0, dt, device)
    return _unit(_words(cls, _numel(shape), device), dt, 0).reshape(shape)


def randn(cls: Any, shape: tuple[int, ...], device: str, dtype: object = float32) -> Any:
    """Standard normal samples (Box-Muller on two uniforms per element, in float32)."""
    shape, dt = tuple(shape), _float_dtype("randn", dtype)
    check_fits_device("randn", shape, dt, device)
    n = _numel(shape)
    if n == 0:
        return cls.full(shape, 0.0, dt, device)
    words = _words(cls, 2 * n, device).reshape((2, n))
    u1 = _unit(words[0], float32, 1)  # (0, 1]: the log is finite
    u2 = _unit(words[1], float32, 0)
    z = (u1.log() * -2.0).sqrt() * (u2 * (2 * math.pi)).cos()
    return z.cast(dt).reshape(shape)


__all__ = ["bits", "iota", "manual_seed", "rand", "randn"]
