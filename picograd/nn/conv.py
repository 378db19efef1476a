"""2-D convolution (NCHW, torch's semantics), as compositions of Tensor ops, so autograd,
fusion and every device apply to them unchanged.

    conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)
    conv_transpose2d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1)                        conv2d's adjoint (a zero-inserted conv2d)

Sizes are an int or an (h, w) pair. The 1-D and 3-D forms are in conv_nd.py, the layers in
conv_layers.py, pooling in pool.py.

How conv2d is built. The compiler fuses views and elementwise ops into the kernel of the
reduce that consumes them and gives every consumed reduce its own kernel; `loop-optimize`
gives a reduce whose output columns are consecutive in memory a register tile of vectors. So:

1. The padded input is laid out once (one kernel) as `planes` (N, C, sh*sw, L): a flat plane
   per stride phase, rows `ws` wide (the output width plus the kernel's reach). Tap (i, j)
   of the kernel is then the contiguous slice `planes[:, :, plane, offset:offset + OH*ws]`:
   no mask, no stride, for any stride and dilation.
2. Forward: one reduce (one kernel) over C/groups of the sum of the kh*kw tap products, on
   rows `ws` wide, so its OH*ws output columns are one consecutive range that the register
   tile takes; the `ws - OW` extra columns of each row are computed and dropped by the
   third kernel, which also adds the bias (and whatever elementwise op follows).
3. Backward (its own rule, `_with_gradient`, not the decomposition's): the incoming gradient
   is laid out once in rows `ws` wide; the input gradient is a transposed convolution of it
   (kernels that do not grow with kh*kw), the weight gradient one dot-product reduce per tap
   over an image's OH*ws elements plus one reduce over N of all taps, the bias gradient one
   reduce.

Forward + backward of a (128, 16, 14, 14) x (32, 16, 3, 3) convolution, padding 1, with bias
(`loss.backward()` and the realized gradients; median of 5 steady steps on a 2-core CPU:LLVM
host; torch on one thread: 10 ms), as the design went:

    im2col stacked by pad + add (kh*kw masked terms), one reduce     6 kernels   2140 ms
    im2col from repeat/reshape views (tinygrad's _pool), one reduce   7 kernels    810 ms
    one reduce over C of the sum of the kh*kw tap products           24 kernels    450 ms
      + weight broadcast in two steps, gradient barrier              33 kernels    160 ms
    one reduce per tap, 2-D strided taps of the materialised pad     42 kernels    180 ms
      + weight gradient reduced over OW first                        42 kernels     94 ms
    flat phase planes, one reduce per kernel row                     47 kernels     60 ms

With vector register tiles (2026-11), the Fashion-MNIST example's Adam step (two such
convolutions) went from 1752-1838 to 2990-3225 images/s when the forward became one reduce
and the backward its own rule (A/B in one session, `bench/train_step.py`'s CNN step).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from picograd.frontend.autocast import lower_precision
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.ops_shape import stack
from picograd.frontend.tensor import Tensor

Size = int | Sequence[int]


def _pair(op: str, name: str, value: Any, minimum: int) -> tuple[int, int]:
    """`value` (an int or a pair of ints) as a pair, each at least `minimum`."""
    pair = tuple(value) if isinstance(value, tuple | list) else (value, value)
    if len(pair) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair):
        raise shape_error(op, f"{name} must be an int or a pair of ints, got {value!r}")
    if min(pair) < minimum:
        raise shape_error(op, f"{name} must be at least {minimum}, got {value!r}")
    return pair[0], pair[1]


def _out_size(op: str, x: Tensor, kernel: tuple[int, int], stride: tuple[int, int],
              padding: tuple[int, int], dilation: tuple[int, int]) -> tuple[int, int]:
    out = []
    for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation, strict=True):
        reach = d * (k - 1) + 1
        if n + 2 * p < reach:
            raise shape_error(op, f"input of shape {x.shape} padded by {padding} is smaller than "
                                  f"the kernel {kernel} (dilation {dilation})")
        out.append((n + 2 * p - reach) // s + 1)
    return out[0], out[1]


def _check_4d(op: str, x: Tensor) -> None:
    if not isinstance(x, Tensor) or x.ndim != 4:
        shape = x.shape if isinstance(x, Tensor) else type(x).__name__
        raise shape_error(op, f"expected a 4-D input (N, C, H, W), got {shape}")


# ── graph shaping helpers (candidates for Tensor methods) ────────────────────


def _materialize(t: Tensor) -> Tensor:
    """`t`, computed into its own buffer: a float sum over a new size-1 axis is a reduce the
    compiler keeps (0.0 + -0.0 is not -0.0), and a consumed reduce is a kernel. Readers then
    index a buffer instead of recomputing `t` (masks, pads, permutes) per read. Its gradient
    passes through unchanged."""
    return t.unsqueeze(-1).sum(-1)


# ── convolution ──────────────────────────────────────────────────────────────


# The register tiles of `loop-optimize` take 16 consecutive output columns at a time (an
# AVX-512 vector of f32; two AVX2 ones); a flat output range that is not a multiple of 16
# leaves a tail that runs element by element. A (64, 64, 7, 7) convolution has 7 * 9 = 63
# columns: its tail of 15 took 3/4 of the kernel's time (38 against 150 GFLOP/s for the
# 14 * 16 = 224 columns of the layer before). Computing a few more dropped columns is cheaper.
_TILE_COLUMNS = 16


def _tile_rounded(m: int) -> int:
    """`m` output columns rounded up to whole register tiles when that adds at most 1/8."""
    rounded = -(-m // _TILE_COLUMNS) * _TILE_COLUMNS
    return rounded if (rounded - m) * 8 <= m else m


def _phase_planes(x: Tensor, kernel: tuple[int, int], stride: tuple[int, int],
                  padding: tuple[int, int], dilation: tuple[int, int], out: tuple[int, int]
                  ) -> tuple[Tensor, int, int, list[list[tuple[int, int]]]]:
    """The padded input as (N, C, sh*sw, L) flat planes of row width `ws`, one per stride
    phase, the number `m` (at least OH * ws) of consecutive output columns a tap reads, and
    per kernel tap (i, j) its (plane, offset): output (oh, ow) of the tap reads
    `planes[:, :, plane, offset + oh*ws + ow]` for every ow < ws (ow >= OW is dropped, as are
    the columns past OH * ws)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    n, c, h, w = x.shape
    reach_h, reach_w = dh * (kh - 1) // sh, dw * (kw - 1) // sw  # in plane rows / columns
    ws = out[1] + reach_w
    m = _tile_rounded(out[0] * ws)
    # rows past the last window: the last tap's run goes reach_w + (m - OH*ws) columns on
    spill = reach_w + m - out[0] * ws
    hs = out[0] + reach_h + -(-spill // ws)
    rows, cols = hs * sh, ws * sw
    xp = x.pad(((0, 0), (0, 0), (ph, max(0, rows - h - ph)), (pw, max(0, cols - w - pw))))
    xp = xp[:, :, :rows, :cols]  # what lies beyond every window is never read
    planes = xp.reshape(n, c, hs, sh, ws, sw).permute(0, 1, 3, 5, 2, 4)
    planes = _materialize(planes.reshape(n, c, sh * sw, hs * ws))
    taps = [[((i * dh % sh) * sw + j * dw % sw, (i * dh // sh) * ws + j * dw // sw)
             for j in range(kw)] for i in range(kh)]
    return planes, ws, m, taps


def _check_conv_args(op: str, x: Tensor, weight: Tensor, bias: Tensor | None,
                     groups: int) -> None:
    _check_4d(op, x)
    if not isinstance(weight, Tensor) or weight.ndim != 4:
        shape = weight.shape if isinstance(weight, Tensor) else type(weight).__name__
        raise shape_error(op, f"expected a 4-D weight (O, C/groups, kh, kw), got {shape}")
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise shape_error(op, f"groups must be a positive int, got {groups!r}")
    if not (x.dtype.is_float and weight.dtype.is_float):
        raise dtype_error(op, f"needs float input and weight, got {x.dtype.name} and "
                              f"{weight.dtype.name}")
    c = x.shape[1]
    o, cg = weight.shape[:2]
    if c % groups or o % groups or c // groups != cg:
        raise shape_error(op, f"input of shape {x.shape} and weight of shape {weight.shape} "
                              f"with groups={groups}: the weight expects {cg * groups} input "
                              f"channels ({cg} per group), the input has {c}"
                          + (f"; {o} output channels are not divisible by {groups}"
                             if o % groups else ""))
    if bias is not None and bias.shape != (o,):
        raise shape_error(op, f"bias of shape {bias.shape} does not match the weight of shape "
                              f"{weight.shape}: expected ({o},)")


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,
           padding: Size = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """torch's `conv2d`: x (N, C, H, W), weight (O, C/groups, kh, kw), bias (O,) ->
    (N, O, OH, OW) with OH = (H + 2*padding - dilation*(kh-1) - 1) // stride + 1."""
    op = "conv2d"
    x, weight, bias = lower_precision(op, x, weight, bias)  # inside pg.autocast
    _check_conv_args(op, x, weight, bias, groups)
    n = x.shape[0]
    o, cg, kh, kw = weight.shape
    s = _pair(op, "stride", stride, 1)
    p = _pair(op, "padding", padding, 0)
    d = _pair(op, "dilation", dilation, 1)
    oh, ow = _out_size(op, x, (kh, kw), s, p, d)
    with no_grad():
        planes, ws, m, taps = _phase_planes(x, (kh, kw), s, p, d, (oh, ow))
        out: Tensor | None = None
        for i in range(kh):
            for j, (plane, offset) in enumerate(taps[i]):
                w_tap = weight[:, :, i, j].reshape(1, groups, o // groups, cg, 1)
                term = _tap_rows(planes, plane, offset, m, groups) * w_tap
                out = term if out is None else out + term
        assert out is not None
        # one reduce (one kernel) over C/groups, on rows `ws` wide: its m >= OH*ws columns
        # are consecutive in both the planes and the result, one range the register tile
        # takes
        y = out.sum(3)[..., :oh * ws].reshape(n, o, oh, ws)
        if bias is not None:
            y = y + bias.reshape(1, o, 1, 1)
        y = y[:, :, :, :ow]

    def gradients(g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        # one buffer, rows `ws` wide as the planes' (zeros past OW), read by every gradient
        g_rows = _materialize(g.pad(((0, 0), (0, 0), (0, 0), (0, ws - ow))))
        g = g_rows[..., :ow]
        dx = dw = db = None
        if x.requires_grad:
            # conv2d's adjoint; output_padding restores the rows and columns no window
            # reached (the input size minus the size a transposed convolution gives)
            extra = tuple(size - ((out_size - 1) * st - 2 * pd + dl * (k - 1) + 1)
                          for size, out_size, st, pd, dl, k in
                          zip(x.shape[2:], (oh, ow), s, p, d, (kh, kw), strict=True))
            dx = conv_transpose2d(g, weight, None, s, p, extra, groups, d)
        if weight.requires_grad:
            dw = _weight_gradient(g_rows, planes, taps, groups)
        if bias is not None and bias.requires_grad:
            # the zeros past OW add nothing: per image a contiguous row sum (vector lanes),
            # rather than a sum over the cropped view (an index division per element)
            db = g_rows.reshape(n, o, -1).sum(2).sum(0)
        return dx, dw, db

    return y._with_gradient((x, weight, bias), gradients)


def _tap_rows(planes: Tensor, plane: int, offset: int, m: int, groups: int) -> Tensor:
    """Kernel tap (plane, offset) of `_phase_planes`: the `m` (>= OH * ws) consecutive plane
    elements it reads, as (N, groups, 1, C/groups, m)."""
    n, c = planes.shape[:2]
    return planes[:, :, plane, offset:offset + m].reshape(n, groups, 1, c // groups, m)


def _weight_gradient(g_rows: Tensor, planes: Tensor, taps: list[list[tuple[int, int]]],
                     groups: int) -> Tensor:
    """d(loss)/d(weight) from the output gradient in rows as wide as the planes' (`g_rows`,
    (N, O, OH, ws), zeros past OW), as (O, C/groups, kh, kw): per kernel tap, a reduce over
    the OH * ws consecutive elements of the gradient and of the tap, per image (vector dot
    products, no im2col tensor), then one reduce over N of all taps together.

    Where the input holds an infinity or a NaN that a tap reads only in a dropped column,
    that tap's gradient is NaN (0 * inf) where torch's is finite."""
    n, o, oh, ws = g_rows.shape
    rows = g_rows.reshape(n, groups, o // groups, 1, oh * ws)
    partial = [(rows * _tap_rows(planes, plane, offset, oh * ws, groups)).sum(4)
               for row in taps for plane, offset in row]  # each (N, groups, O/groups, C/g)
    kh, kw = len(taps), len(taps[0])
    return stack(partial, -1).sum(0).reshape(o, planes.shape[1] // groups, kh, kw)


# ── transposed convolution ───────────────────────────────────────────────────


def _check_transpose_args(op: str, x: Tensor, weight: Tensor, bias: Tensor | None,
                          groups: int) -> None:
    _check_4d(op, x)
    if not isinstance(weight, Tensor) or weight.ndim != 4:
        shape = weight.shape if isinstance(weight, Tensor) else type(weight).__name__
        raise shape_error(op, f"expected a 4-D weight (C, O/groups, kh, kw), got {shape}")
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise shape_error(op, f"groups must be a positive int, got {groups!r}")
    if not (x.dtype.is_float and weight.dtype.is_float):
        raise dtype_error(op, f"needs float input and weight, got {x.dtype.name} and "
                              f"{weight.dtype.name}")
    c = x.shape[1]
    if weight.shape[0] != c or c % groups:
        raise shape_error(op, f"input of shape {x.shape} and weight of shape {weight.shape} "
                              f"with groups={groups}: the weight expects {weight.shape[0]} "
                              f"input channels, the input has {c}"
                          + (f"; {c} channels are not divisible by {groups}"
                             if c % groups else ""))
    o = weight.shape[1] * groups
    if bias is not None and bias.shape != (o,):
        raise shape_error(op, f"bias of shape {bias.shape} does not match the weight of shape "
                              f"{weight.shape} with groups={groups}: expected ({o},)")


def conv_transpose2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,
                     padding: Size = 0, output_padding: Size = 0, groups: int = 1,
                     dilation: Size = 1) -> Tensor:
    """torch's `conv_transpose2d` (the gradient of conv2d with respect to its input):
    x (N, C, H, W), weight (C, O/groups, kh, kw), bias (O,) -> (N, O, OH, OW) with
    OH = (H-1)*stride - 2*padding + dilation*(kh-1) + output_padding + 1.

    Built as a stride-1 conv2d: `stride - 1` zeros go between the input's elements (a pad of
    a new axis, then a reshape), the result is padded by dilation*(k-1) - padding on each
    side (cropped where that is negative; output_padding more at the end), and the weight is
    flipped in space with its in/out channels swapped per group."""
    op = "conv_transpose2d"
    _check_transpose_args(op, x, weight, bias, groups)
    s = _pair(op, "stride", stride, 1)
    p = _pair(op, "padding", padding, 0)
    d = _pair(op, "dilation", dilation, 1)
    extra = _pair(op, "output_padding", output_padding, 0)
    if extra[0] >= max(s[0], d[0]) or extra[1] >= max(s[1], d[1]):
        raise shape_error(op, f"output_padding {output_padding!r} must be smaller than the "
                              f"stride {stride!r} or the dilation {dilation!r}")
    n, c, h, w = x.shape
    cg, og, kh, kw = weight.shape
    out = [(size - 1) * st - 2 * pd + dl * (k - 1) + e + 1 for size, st, pd, dl, k, e in
           zip((h, w), s, p, d, (kh, kw), extra, strict=True)]
    if min(out) < 1:
        raise shape_error(op, f"input of shape {x.shape} with kernel {(kh, kw)}, stride {s}, "
                              f"padding {p}, dilation {d} gives an empty output {tuple(out)}")
    if s != (1, 1):  # zeros between the elements: (H, sh, W, sw) with all but [:, 0, :, 0] 0
        spread = x.reshape(n, c, h, 1, w, 1).pad(((0, 0), (0, 0), (0, 0), (0, s[0] - 1),
                                                  (0, 0), (0, s[1] - 1)))
        x = spread.reshape(n, c, h * s[0], w * s[1])[:, :, :(h - 1) * s[0] + 1,
                                                     :(w - 1) * s[1] + 1]
    lo = [dl * (k - 1) - pd for dl, k, pd in zip(d, (kh, kw), p, strict=True)]
    hi = [low + e for low, e in zip(lo, extra, strict=True)]
    x = x.pad(((0, 0), (0, 0), (max(lo[0], 0), max(hi[0], 0)), (max(lo[1], 0), max(hi[1], 0))))
    x = x[:, :, max(-lo[0], 0):x.shape[2] - max(-hi[0], 0),
          max(-lo[1], 0):x.shape[3] - max(-hi[1], 0)]
    flipped = weight.reshape(groups, cg // groups, og, kh, kw).permute(0, 2, 1, 3, 4)
    flipped = flipped.reshape(groups * og, cg // groups, kh, kw).flip(2, 3)
    return conv2d(x, flipped, bias, 1, 0, d, groups)
