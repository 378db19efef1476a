"""1-, 2- and 3-D convolutions and transposed convolutions (torch's semantics and argument
names), built on conv.py's 2-D ones, so their fused kernels and gradient rules apply:

    conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)
    conv2d / conv3d                      the same; padding may be 'same' or 'valid'
    conv_transpose1d / conv_transpose3d(x, weight, bias=None, stride=1, padding=0,
                                        output_padding=0, groups=1, dilation=1)

A 1-D convolution is a 2-D one of height 1. A 3-D convolution is a sum over the kernel's
depth taps of 2-D convolutions, each of the input's depth slices that tap reads batched into
N. A 3-D transposed convolution is a stride-1 3-D convolution of the input spread with
zeros (as conv_transpose2d is built). Example:

    y = conv1d(x, w, padding="same")        # x (N, C, L), w (O, C, k)
"""

from __future__ import annotations

from typing import Any

from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn import conv as conv_2d
from picograd.nn.windows import Size, ntuple

Padding = Size | str


def resolve_padding(op: str, padding: Padding, kernel: tuple[int, ...],
                    dilation: tuple[int, ...], stride: tuple[int, ...]
                    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Per spatial dim the (low, high) zeros a convolution adds: torch's 'valid' (none),
    'same' (d*(k-1) in all, the odd one at the end; stride 1 only) or symmetric sizes."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * n, (0,) * n
        if padding != "same":
            raise shape_error(op, f"padding must be 'same', 'valid' or sizes, got {padding!r}")
        if any(s != 1 for s in stride):
            raise shape_error(op, "padding='same' is not supported for strided convolutions")
        total = tuple(d * (k - 1) for d, k in zip(dilation, kernel, strict=True))
        return tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)
    sizes = ntuple(op, "padding", padding, n, 0)
    return sizes, sizes


def _check(op: str, x: Any, weight: Any, n: int) -> None:
    for name, t in (("input", x), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise shape_error(op, f"expected a Tensor {name}, got {type(t).__name__}")
    if weight.ndim != n + 2:
        raise shape_error(op, f"expected a {n + 2}-D weight, got {weight.shape}")
    if x.ndim not in (n + 1, n + 2):
        raise shape_error(op, f"expected a {n + 1}-D or {n + 2}-D input, got {x.shape}")
    if not (x.dtype.is_float and weight.dtype.is_float):
        raise dtype_error(op, f"needs float input and weight, got {x.dtype.name} and "
                              f"{weight.dtype.name}")


def _pad_zeros(x: Tensor, low: tuple[int, ...], high: tuple[int, ...]) -> Tensor:
    return x.pad(((0, 0), (0, 0), *zip(low, high, strict=True)))


def _conv(op: str, n: int, x: Tensor, weight: Tensor, bias: Tensor | None, stride: Size,
          padding: Padding, dilation: Size, groups: int) -> Tensor:
    _check(op, x, weight, n)
    batched = x.ndim == n + 2
    if not batched:
        x = x.unsqueeze(0)
    kernel = tuple(weight.shape[2:])
    s = ntuple(op, "stride", stride, n, 1)
    d = ntuple(op, "dilation", dilation, n, 1)
    low, high = resolve_padding(op, padding, kernel, d, s)
    if low != high:  # 'same' with an even reach: the odd zero goes at the end
        x, low = _pad_zeros(x, low, high), (0,) * n
    if n == 1:
        y = conv_2d.conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, s[0]), (0, low[0]),
                           (1, d[0]), groups).squeeze(2)
    elif n == 2:
        y = conv_2d.conv2d(x, weight, bias, s, low, d, groups)
    else:
        y = _conv3d(x, weight, bias, s, low, d, groups)
    return y if batched else y.squeeze(0)


def _conv3d(x: Tensor, weight: Tensor, bias: Tensor | None, s: tuple[int, ...],
            p: tuple[int, ...], d: tuple[int, ...], groups: int) -> Tensor:
    """Per depth tap i, a 2-D convolution of the depth slices it reads (all output depths
    batched into N) with weight[:, :, i]; their sum, plus the bias."""
    op = "conv3d"
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise shape_error(op, f"groups must be a positive int, got {groups!r}")
    n, c = x.shape[:2]
    o, cg, kd = weight.shape[:3]
    if c % groups or o % groups or c // groups != cg:
        raise shape_error(op, f"input of shape {x.shape} and weight of shape {weight.shape} "
                              f"with groups={groups}: the weight expects {cg * groups} input "
                              f"channels, the input has {c}")
    if bias is not None and bias.shape != (o,):
        raise shape_error(op, f"bias of shape {bias.shape} does not match the weight of shape "
                              f"{weight.shape}: expected ({o},)")
    x = _pad_zeros(x, (p[0], 0, 0), (p[0], 0, 0))
    depth = x.shape[2]
    if depth < d[0] * (kd - 1) + 1:
        raise shape_error(op, f"input of shape {x.shape} padded by {p} is smaller than the "
                              f"kernel {tuple(weight.shape[2:])} (dilation {d})")
    od = (depth - d[0] * (kd - 1) - 1) // s[0] + 1
    out: Tensor | None = None
    for i in range(kd):
        start = i * d[0]
        slices = x[:, :, start:start + s[0] * (od - 1) + 1:s[0]]  # (N, C, OD, H, W)
        planes = slices.permute(0, 2, 1, 3, 4).reshape(n * od, c, *x.shape[3:])
        term = conv_2d.conv2d(planes, weight[:, :, i], None, s[1:], p[1:], d[1:], groups)
        out = term if out is None else out + term
    assert out is not None
    y = out.reshape(n, od, o, *out.shape[2:]).permute(0, 2, 1, 3, 4)
    return y if bias is None else y + bias.reshape(1, o, 1, 1, 1)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,
           padding: Padding = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """torch's conv1d: input (N, C, L) or (C, L), weight (O, C/groups, k) -> (N, O, OL)."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,
           padding: Padding = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """torch's conv2d (conv.py's, plus 'same'/'valid' padding and unbatched inputs)."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,
           padding: Padding = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """torch's conv3d: input (N, C, D, H, W), weight (O, C/groups, kd, kh, kw)."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


# ── transposed convolutions ─────────────────────────────────────────────────


def _conv_transpose(op: str, n: int, x: Tensor, weight: Tensor, bias: Tensor | None,
                    stride: Size, padding: Size, output_padding: Size, groups: int,
                    dilation: Size) -> Tensor:
    _check(op, x, weight, n)
    batched = x.ndim == n + 2
    if not batched:
        x = x.unsqueeze(0)
    s = ntuple(op, "stride", stride, n, 1)
    p = ntuple(op, "padding", padding, n, 0)
    d = ntuple(op, "dilation", dilation, n, 1)
    extra = ntuple(op, "output_padding", output_padding, n, 0)
    if n == 1:
        y = conv_2d.conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, s[0]),
                                     (0, p[0]), (0, extra[0]), groups, (1, d[0])).squeeze(2)
    elif n == 2:
        y = conv_2d.conv_transpose2d(x, weight, bias, s, p, extra, groups, d)
    else:
        y = _conv_transpose3d(x, weight, bias, s, p, extra, groups, d)
    return y if batched else y.squeeze(0)


def _conv_transpose3d(x: Tensor, weight: Tensor, bias: Tensor | None, s: tuple[int, ...],
                      p: tuple[int, ...], extra: tuple[int, ...], groups: int,
                      d: tuple[int, ...]) -> Tensor:
    """A stride-1 conv3d of x with stride - 1 zeros between its elements, padded by
    d*(k-1) - p (cropped where negative; output_padding more at the end), with the weight
    flipped in space and its in/out channels swapped per group."""
    op = "conv_transpose3d"
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise shape_error(op, f"groups must be a positive int, got {groups!r}")
    n, c = x.shape[:2]
    cg, og = weight.shape[:2]
    kernel = tuple(weight.shape[2:])
    if cg != c or c % groups:
        raise shape_error(op, f"input of shape {x.shape} and weight of shape {weight.shape} "
                              f"with groups={groups}: the weight expects {cg} input channels")
    if any(e >= max(st, dl) for e, st, dl in zip(extra, s, d, strict=True)):
        raise shape_error(op, f"output_padding {extra} must be smaller than the stride {s} or "
                              f"the dilation {d}")
    if bias is not None and bias.shape != (og * groups,):
        raise shape_error(op, f"bias of shape {bias.shape} does not match the weight of shape "
                              f"{weight.shape} with groups={groups}")
    size = x.shape[2:]
    out = [(i - 1) * st - 2 * pd + dl * (k - 1) + e + 1
           for i, st, pd, dl, k, e in zip(size, s, p, d, kernel, extra, strict=True)]
    if min(out) < 1:
        raise shape_error(op, f"input of shape {x.shape} gives an empty output {tuple(out)}")
    if s != (1, 1, 1):  # zeros between the elements
        spread = x.reshape(n, c, size[0], 1, size[1], 1, size[2], 1)
        spread = spread.pad(((0, 0), (0, 0), *(pair for st in s for pair in
                                                ((0, 0), (0, st - 1)))))
        x = spread.reshape(n, c, *(i * st for i, st in zip(size, s, strict=True)))
        x = x[(slice(None), slice(None), *(slice(0, (i - 1) * st + 1) for i, st in
                                           zip(size, s, strict=True)))]
    lo = [dl * (k - 1) - pd for dl, k, pd in zip(d, kernel, p, strict=True)]
    hi = [low + e for low, e in zip(lo, extra, strict=True)]
    x = _pad_zeros(x, tuple(max(v, 0) for v in lo), tuple(max(v, 0) for v in hi))
    x = x[(slice(None), slice(None), *(slice(max(-low, 0), x.shape[2 + j] - max(-high, 0))
                                       for j, (low, high) in enumerate(zip(lo, hi,
                                                                           strict=True))))]
    flipped = weight.reshape(groups, cg // groups, og, *kernel).permute(0, 2, 1, 3, 4, 5)
    flipped = flipped.reshape(groups * og, cg // groups, *kernel).flip(2, 3, 4)
    return _conv3d(x, flipped, bias, (1, 1, 1), (0, 0, 0), d, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                     groups: int = 1, dilation: Size = 1) -> Tensor:
    """torch's conv_transpose1d: input (N, C, L), weight (C, O/groups, k)."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                     groups: int = 1, dilation: Size = 1) -> Tensor:
    """torch's conv_transpose2d (conv.py's, plus unbatched inputs)."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                     groups: int = 1, dilation: Size = 1) -> Tensor:
    """torch's conv_transpose3d: input (N, C, D, H, W), weight (C, O/groups, kd, kh, kw)."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)
