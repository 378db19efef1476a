"""Sliding windows over the spatial dims of an (N, C, *spatial) tensor, as one view, and the
size arithmetic pooling and convolution share (torch's rules).

    windows(x, kernel, stride, dilation, out)   (N, C, *out, *kernel): [.., o, .., i, ..] is
                                                x[.., o*stride + i*dilation, ..]
    ntuple(op, "stride", 2, 3, minimum=1)        (2, 2, 2), with a typed error otherwise

Pooling reduces a windows view over its kernel axes: one reduce, whose backward is one
reduce over the view's expand, however many taps the kernel has. (A chain of one
elementwise op per tap, as pooling was first built, nests kh*kw deep: an 11 x 28 kernel's
308-deep chain exceeded the compiler's recursion limit in `convert-sched-to-loop`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from picograd.frontend.lazy import shape_error
from picograd.frontend.tensor import Tensor

Size = int | Sequence[int]


def ntuple(op: str, name: str, value: Any, n: int, minimum: int) -> tuple[int, ...]:
    """`value` (an int, or a sequence of `n` ints) as `n` ints, each at least `minimum`."""
    values = tuple(value) if isinstance(value, tuple | list) else (value,) * n
    if len(values) == 1 and n > 1:
        values = values * n
    if len(values) != n or not all(isinstance(v, int) and not isinstance(v, bool)
                                   for v in values):
        many = {1: "one int", 2: "a pair of ints", 3: "a triple of ints"}.get(n, f"{n} ints")
        raise shape_error(op, f"{name} must be an int or {many}, got {value!r}")
    if min(values) < minimum:
        raise shape_error(op, f"{name} must be at least {minimum}, got {value!r}")
    return values


def check_spatial(op: str, x: Any, n: int) -> None:
    """`x` is a Tensor of n spatial dims, batched (N, C, *spatial) or not (C, *spatial)."""
    if not isinstance(x, Tensor) or x.ndim not in (n + 1, n + 2):
        shape = x.shape if isinstance(x, Tensor) else type(x).__name__
        raise shape_error(op, f"expected a {n + 1}-D or {n + 2}-D input (N, C, "
                              f"{n} spatial dims), got {shape}")


def _dim_windows(x: Tensor, k: int, s: int, d: int, o: int) -> Tensor:
    """The last dim of `x` (size L) as (k, o): [i, j] = x[j*s + i*d]. The dim, repeated,
    read in rows of L + d: row i starts i*d further along, a view (no copy)."""
    length = x.shape[-1]
    lead = x.shape[:-1]
    if k == 1:
        return x[..., 0:(o - 1) * s + 1:s].unsqueeze(-2)
    row = length + d
    reps = -(-k * row // length)
    flat = x.unsqueeze(-2).expand(*lead, reps, length).reshape(*lead, reps * length)
    rows = flat[..., :k * row].reshape(*lead, k, row)
    return rows[..., 0:(o - 1) * s + 1:s]


def windows(x: Tensor, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
            out: Sequence[int]) -> Tensor:
    """x (*lead, *spatial), each spatial size at least (o-1)*s + (k-1)*d + 1, as the view
    (*lead, *out, *kernel) of its windows."""
    n = len(kernel)
    lead = x.ndim - n
    for j in range(n):
        # x: (lead, O_<j, L_j, L_>j, K_<j); L_j to the end, split it into (K_j, O_j)
        moved = x.movedim(lead + j, -1)
        split = _dim_windows(moved, kernel[j], stride[j], dilation[j], out[j])
        x = split.movedim(-1, lead + j)  # (lead, O_<=j, L_>j, K_<=j)
    return x


def pool_out_size(op: str, size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """torch's pooled size: floor (or ceil) of (size + 2p - d(k-1) - 1) / s, plus one; in
    ceil mode the last window must start inside the input or its left padding."""
    span = size + 2 * p - d * (k - 1) - 1
    o = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    if span < 0 or o < 1:
        raise shape_error(op, f"input size {size} padded by {p} is smaller than the kernel "
                              f"{k} (dilation {d}): the output would be empty")
    return o
