"""Signal ops: DFT and STFT as matmuls, the window functions and MelWeightMatrix on the host.

A DFT along an axis is a matmul of the signal (real and imaginary parts apart: ONNX spells
a complex tensor as a trailing dim of 2, a real one as a trailing dim of 1) with cos / sin
matrices computed on the host in float64 — the angle reduced exactly as (k * n mod L) so a
long transform keeps its accuracy — and cast to the signal's dtype. Zero-padding or
truncating the signal to `dft_length` is folded into the matrices (rows past the signal or
past the length are zero), and so is the one-sided output (fewer columns) and the
Hermitian extension of an inverse one-sided transform (an irfft: doubled weights).

The windows and the mel filter bank are host values computed as onnx's reference computes
them (onnx/reference/ops/op_*_window.py, op_mel_weight_matrix.py), so they are constants a
model folds once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from picograd.frontend.ops_shape import stack
from picograd.frontend.tensor import Tensor
from picograd.onnx.dtypes import ONNX_TO_NUMPY
from picograd.onnx.registry import NodeContext, Value, op

_FLOATS = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)}


def _angles(n_in: int, n_out: int, length: int) -> np.ndarray:
    """2*pi*k*n/L for n < n_in, k < n_out, with k*n reduced mod L exactly (in integers)."""
    kn = np.outer(np.arange(n_in, dtype=np.int64), np.arange(n_out, dtype=np.int64)) % length
    return 2.0 * np.pi * kn.astype(np.float64) / length


def _forward_matrices(n_in: int, length: int, n_out: int, inverse: bool
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(C, S), (n_in, n_out) float64: a signal of n_in samples (zero-padded or truncated to
    `length`) transforms to X = x @ (C + i S). Forward: e^{-i a}; inverse: e^{+i a} / L."""
    a = _angles(n_in, n_out, length)
    cos, sin = np.cos(a), np.sin(a)
    cos[min(n_in, length):] = 0.0  # samples past dft_length are truncated away
    sin[min(n_in, length):] = 0.0
    sign = 1.0 if inverse else -1.0
    scale = 1.0 / length if inverse else 1.0
    return cos * scale, sign * sin * scale


def _irfft_matrices(n_in: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """(C, S), (n_in, length): the real signal of one-sided bins X is Xr @ C + Xi @ S, as
    numpy's irfft: the first length//2+1 bins (zero-padded) Hermitian-extended, the DC and
    (even length) Nyquist bins counted once and their imaginary parts unused."""
    half = length // 2 + 1
    a = _angles(n_in, length, length)
    weights = np.full(n_in, 2.0)
    weights[0] = 1.0
    if length % 2 == 0 and length // 2 < n_in:
        weights[length // 2] = 1.0
    weights[half:] = 0.0
    cos = np.cos(a) * weights[:, None] / length
    sin = -np.sin(a) * weights[:, None] / length
    return cos, sin


def _check_dft(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    if attrs.get("inverse", 0) not in (0, 1) or attrs.get("onesided", 0) not in (0, 1):
        return "inverse and onesided must be 0 or 1"
    return None


def _parts(x: Tensor) -> tuple[Tensor, Tensor | None]:
    """The real and imaginary parts (None for a real signal) of an ONNX complex tensor."""
    if x.shape[-1] == 1:
        return x[..., 0], None
    if x.shape[-1] == 2:
        return x[..., 0], x[..., 1]
    raise ValueError(f"the last dim must be 1 (real) or 2 (complex), got shape "
                     f"{tuple(x.shape)}")


def _apply(ctx: NodeContext, part: Tensor, matrix: np.ndarray, axis: int) -> Tensor:
    """`part` (the signal without its complex dim) times `matrix` along `axis`."""
    moved = part.movedim(axis, -1)
    m = ctx.t(matrix.astype(np.dtype(part.dtype.np)))
    return (moved @ m).movedim(-1, axis)


def dft(ctx: NodeContext, x: Tensor, length: int | None, axis: int, inverse: bool,
        onesided: bool) -> Tensor:
    """ONNX's DFT of `x` (..., 1 or 2) along the signal axis `axis` (non-negative, not the
    complex dim): complex (..., 2) out, or real (..., 1) for an inverse one-sided one."""
    try:
        re, im = _parts(x)
    except ValueError as e:
        raise ctx.unsupported(str(e)) from None
    n_in = x.shape[axis]
    if length is None:
        length = 2 * (n_in - 1) if inverse and onesided else n_in
    if length <= 0:
        raise ctx.unsupported(f"dft_length must be positive, got {length}")
    if inverse and onesided:
        cos, sin = _irfft_matrices(n_in, length)
        y = _apply(ctx, re, cos, axis)
        if im is not None:
            y = y + _apply(ctx, im, sin, axis)
        return y.unsqueeze(-1)
    n_out = length // 2 + 1 if onesided else length
    cos, sin = _forward_matrices(n_in, length, n_out, inverse)
    yr, yi = _apply(ctx, re, cos, axis), _apply(ctx, re, sin, axis)
    if im is not None:  # (a + ib)(C + iS) = aC - bS + i(aS + bC)
        yr = yr - _apply(ctx, im, sin, axis)
        yi = yi + _apply(ctx, im, cos, axis)
    return stack([yr, yi], dim=-1)


def _float_signal(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    if np.dtype(t.dtype.np) not in _FLOATS:
        raise ctx.unsupported(f"the signal must be float16, float32 or float64, got {t.dtype}")
    return t


def _dft_axis(ctx: NodeContext, axis: Value | None) -> int:
    """Opset 20 gives the axis as an input (default -2), opset 17 as an attribute (1)."""
    if ctx.opset >= 20:
        return ctx.ints(axis)[0] if axis is not None else -2
    return int(ctx.attr("axis", 1))


@op("DFT", attrs=("axis", "inverse", "onesided"), min_opset=17, check=_check_dft)
def _dft(ctx: NodeContext, x: Value, dft_length: Value | None = None,
         axis: Value | None = None) -> Tensor:
    t = _float_signal(ctx, x)
    length = ctx.ints(dft_length)[0] if dft_length is not None else None
    a = _dft_axis(ctx, axis)
    a = a + t.ndim if a < 0 else a
    if not 0 <= a < t.ndim - 1:
        raise ctx.unsupported(f"axis {a} is not a signal dim of shape {tuple(t.shape)}")
    return dft(ctx, t, length, a, bool(ctx.attr("inverse", 0)), bool(ctx.attr("onesided", 0)))


@op("STFT", attrs=("onesided",), min_opset=17)
def _stft(ctx: NodeContext, signal: Value, frame_step: Value, window: Value | None = None,
          frame_length: Value | None = None) -> Tensor:
    """Frames of the (batch, length, 1 or 2) signal every frame_step samples, each
    weighted by the window and transformed: (batch, frames, bins, 2)."""
    x = _float_signal(ctx, signal)
    step = ctx.ints(frame_step)[0]
    w = ctx.t(window) if window is not None else None
    if frame_length is not None:
        fl = ctx.ints(frame_length)[0]
    else:
        fl = w.shape[0] if w is not None else x.shape[-2]
    size = w.shape[0] if w is not None else fl
    if size != fl:  # onnx's reference frames by one and counts frames by the other
        raise ctx.unsupported(f"a window of {size} samples with frame_length {fl}")
    if step <= 0 or size <= 0 or size > x.shape[1]:
        raise ctx.unsupported(f"frame_step {step} and window {size} do not fit a signal "
                              f"of shape {tuple(x.shape)}")
    frames = x.unfold(1, size, step).movedim(-1, 2)  # (batch, frames, size, c)
    if w is not None:
        frames = frames * w.cast(frames.dtype).reshape(1, 1, size, 1)
    return dft(ctx, frames, fl, 2, False, bool(ctx.attr("onesided", 1)))


# ── host values ────────────────────────────────────────────────────────────

def _window_dtype(ctx: NodeContext) -> np.dtype:
    to = ctx.attr("output_datatype", onnx.TensorProto.FLOAT)
    dtype = ONNX_TO_NUMPY.get(to)
    if dtype is None or dtype.kind not in "fiu":
        raise ctx.unsupported(f"output_datatype {to} is not supported")
    return dtype


@op("HannWindow", "HammingWindow", "BlackmanWindow", attrs=("output_datatype", "periodic"),
    min_opset=17)
def _window(ctx: NodeContext, size: Value) -> np.ndarray:
    """The window of `size` samples, as onnx's reference computes it."""
    n = ctx.ints(size)[0]
    dtype = _window_dtype(ctx)
    periodic = ctx.attr("periodic", 1)
    denominator = n if periodic == 1 else n - 1
    name = ctx.node.op_type
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "BlackmanWindow":
            ni = np.arange(n)
            y = np.cos((ni * (np.pi * 2)) / denominator) * (-0.5)
            y = y + np.cos((ni * (np.pi * 4)) / denominator) * 0.08 + 0.42
        elif name == "HannWindow":
            y = np.sin(np.arange(n, dtype=dtype) * np.pi / denominator) ** 2
        else:
            alpha = 25.0 / 46.0
            y = alpha - np.cos(np.arange(n, dtype=dtype) * np.pi * 2 / denominator) * (1 - alpha)
    return np.asarray(y).astype(dtype)


def _mel_bins(num_mel_bins: int, dft_length: int, sample_rate: int, lower: float,
              upper: float) -> np.ndarray:
    """The num_mel_bins + 2 triangle edges, as DFT bin indices (onnx's reference)."""
    bins = np.arange(0, num_mel_bins + 2)
    low_mel = 2595 * np.log1p(lower / 700) / np.log(10)
    high_mel = 2595 * np.log1p(upper / 700) / np.log(10)
    step = (high_mel - low_mel) / bins.shape[0]
    hertz = 700 * np.expm1((bins * step + low_mel) / 2595 * np.log(10))
    return (((dft_length + 1) * hertz) // sample_rate).astype(int)


@op("MelWeightMatrix", attrs=("output_datatype",), min_opset=17)
def _mel_weight_matrix(ctx: NodeContext, num_mel_bins: Value, dft_length: Value,
                       sample_rate: Value, lower_edge_hertz: Value,
                       upper_edge_hertz: Value) -> np.ndarray:
    """(dft_length // 2 + 1, num_mel_bins) triangular filters on the host."""
    mels, length = ctx.ints(num_mel_bins)[0], ctx.ints(dft_length)[0]
    rate = ctx.host(sample_rate).reshape(-1)[0]
    lower = ctx.host(lower_edge_hertz).reshape(-1)[0]
    upper = ctx.host(upper_edge_hertz).reshape(-1)[0]
    edges = _mel_bins(mels, length, rate, lower, upper)
    n_bins = length // 2 + 1
    if mels <= 0 or edges.min() < 0 or edges.max() >= n_bins:
        raise ctx.unsupported(f"the mel edges {edges.tolist()} fall outside the {n_bins} "
                              f"DFT bins")
    out = np.zeros((n_bins, mels))
    for i in range(mels):
        left, center, right = (int(e) for e in edges[i:i + 3])
        if center == left:
            out[center, i] = 1
        else:
            for j in range(left, center + 1):
                out[j, i] = float(j - left) / float(center - left)
        for j in range(center, right):
            out[j, i] = float(right - j) / float(right - center)
    return out.astype(_window_dtype(ctx))
