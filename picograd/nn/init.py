"""Parameter initialisers, as `torch.nn.init`: each refills a tensor in place (under
`no_grad`, so parameters that require grad can be refilled) and returns it.

    calculate_gain(nonlinearity, param=None)
    uniform_(t, a, b)  normal_(t, mean, std)  trunc_normal_(t, mean, std, a, b)
    constant_(t, v)  ones_(t)  zeros_(t)  eye_(t)  dirac_(t, groups)
    xavier_uniform_(t, gain)  xavier_normal_(t, gain)
    kaiming_uniform_(t, a, mode, nonlinearity)  kaiming_normal_(t, a, mode, nonlinearity)

Fans are torch's: for a weight of shape (out, in, *kernel), fan_in = in * prod(kernel) and
fan_out = out * prod(kernel). Random values come from the tensor's `uniform_`/`normal_`
(picograd's seeded generator), so the statistics match torch's but not the samples.
The new values are lazy like every picograd op: the first graph that reads them computes
them (call `.realize()` to fix them in a buffer now).
"""

from __future__ import annotations

import math
import warnings
from typing import TypeVar

import numpy as np

from picograd.frontend.autograd import no_grad
from picograd.frontend.creation import CreationOps
from picograd.frontend.dtype import float32
from picograd.frontend.lazy import shape_error

T = TypeVar("T", bound=CreationOps)

_GAIN_ONE = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
             "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor that keeps activations' variance through `nonlinearity` (torch's table)."""
    if nonlinearity in _GAIN_ONE:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, int | float) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param} is not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4  # torch's choice, for self-normalising networks
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def calculate_fan_in_and_fan_out(tensor: CreationOps) -> tuple[int, int]:
    """(in * receptive field, out * receptive field) of a weight (out, in, *kernel)."""
    if tensor.ndim < 2:
        raise shape_error("init", f"fan in and fan out need a tensor of at least 2 dims, got "
                                  f"shape {tensor.shape}")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: CreationOps, mode: str) -> int:
    if mode.lower() not in ("fan_in", "fan_out"):
        raise ValueError(f"init: mode {mode!r} is not supported, use 'fan_in' or 'fan_out'")
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode.lower() == "fan_in" else fan_out


# ── plain fills ──────────────────────────────────────────────────────────────


def uniform_(tensor: T, a: float = 0.0, b: float = 1.0) -> T:
    with no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor: T, mean: float = 0.0, std: float = 1.0) -> T:
    with no_grad():
        return tensor.normal_(mean, std)


def constant_(tensor: T, val: float) -> T:
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: T) -> T:
    return constant_(tensor, 1.0)


def zeros_(tensor: T) -> T:
    return constant_(tensor, 0.0)


def eye_(tensor: T) -> T:
    """The identity in a 2-D tensor (ones on the main diagonal of a rectangle too)."""
    if tensor.ndim != 2:
        raise shape_error("eye_", f"needs a 2-D tensor, got shape {tensor.shape}")
    n, m = tensor.shape
    with no_grad():
        return tensor.copy_(type(tensor).eye(n, m, device=tensor.device))


def dirac_(tensor: T, groups: int = 1) -> T:
    """A convolution weight (out, in, *kernel) that passes channels through unchanged: in
    each of `groups` groups, out channel d reads in channel d at the kernel's centre."""
    if tensor.ndim not in (3, 4, 5):
        raise shape_error("dirac_", f"needs a 3-, 4- or 5-D tensor, got shape {tensor.shape}")
    out, cin, *kernel = tensor.shape
    if groups < 1 or out % groups:
        raise shape_error("dirac_", f"out channels {out} must be divisible by groups={groups}")
    per_group = out // groups
    weight = np.zeros(tensor.shape, np.float32)
    centre = tuple(k // 2 for k in kernel)
    for g in range(groups):
        for d in range(min(per_group, cin)):
            weight[(g * per_group + d, d, *centre)] = 1.0
    with no_grad():
        return tensor.copy_(type(tensor)._leaf(weight, float32, tensor.device))


def _erfinv(x: CreationOps) -> CreationOps:
    """erf^-1 on (-1, 1): Giles' single-precision polynomials in w = -log(1 - x^2), one for
    the centre (w < 5) and one, in sqrt(w), for the tails."""
    w = -((1.0 - x) * (1.0 + x)).log()
    centre, tail = w - 2.5, w.sqrt() - 3.0
    p = centre * 0.0 + 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
        p = p * centre + c
    q = tail * 0.0 - 0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
        q = q * tail + c
    return (w < 5.0).where(p, q) * x


def trunc_normal_(tensor: T, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0) -> T:
    """N(mean, std^2) restricted to [a, b], by inverting the normal CDF of uniform samples
    drawn between the CDF's values at a and b (as torch)."""
    if not a < b:
        raise shape_error("trunc_normal_", f"needs a < b, got a={a}, b={b}")

    def cdf(v: float) -> float:
        return (1.0 + math.erf((v - mean) / std / math.sqrt(2.0))) / 2.0

    with no_grad():
        lo, hi = 2 * cdf(a) - 1, 2 * cdf(b) - 1
        u = type(tensor).uniform(tensor.shape, low=lo, high=hi, device=tensor.device)
        values = (_erfinv(u) * (std * math.sqrt(2.0)) + mean).clamp(a, b)
        return tensor.copy_(values)


# ── scaled by the fans ───────────────────────────────────────────────────────


def xavier_uniform_(tensor: T, gain: float = 1.0) -> T:
    """U(-r, r) with r = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio)."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: T, gain: float = 1.0) -> T:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def _kaiming_std(tensor: CreationOps, a: float, mode: str, nonlinearity: str) -> float | None:
    if 0 in tensor.shape:
        warnings.warn("init: initialising a zero-element tensor is a no-op", stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))


def kaiming_uniform_(tensor: T, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> T:
    """U(-r, r) with r = gain * sqrt(3 / fan) (He et al.); `a` is leaky_relu's slope.
    torch's layers default to a = sqrt(5), which gives r = 1 / sqrt(fan_in)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else uniform_(tensor, -math.sqrt(3.0) * std,
                                               math.sqrt(3.0) * std)


def kaiming_normal_(tensor: T, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> T:
    """N(0, std^2) with std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else normal_(tensor, 0.0, std)
