"""`grid_sample` and `affine_grid`: torch's spatial-transformer sampling, forward and
backward, as compositions of Tensor ops.

    affine_grid(theta, size, align_corners)
        theta (N, 2, 3), size (N, C, H, W)       -> grid (N, H, W, 2)     (x, y) per point
        theta (N, 3, 4), size (N, C, D, H, W)    -> grid (N, D, H, W, 3)  (x, y, z)
    grid_sample(input, grid, mode, padding_mode, align_corners)
        input (N, C, H, W), grid (N, Ho, Wo, 2)         -> (N, C, Ho, Wo)
        input (N, C, D, H, W), grid (N, Do, Ho, Wo, 3)  -> (N, C, Do, Ho, Wo)

A grid value of -1 is the input's left (top, front) edge and 1 its right (bottom, back)
one: the centres of the corner pixels with `align_corners`, their outer edges without (the
default, as in torch, which warns when it is not given; so does this). Each point reads
its neighbours, one per axis for 'nearest' (rounded half to even), two for 'bilinear'
(trilinear on a 5-D input), four for 'bicubic' (4-D only: torch's cubic convolution,
A = -0.75), and weights them. `padding_mode` says what a point outside reads: 'zeros' 0
at each neighbour outside, 'border' the nearest edge (the point is clamped), 'reflection'
the point reflected at the edges (the corner pixels' centres with `align_corners`, their
outer edges without) until it lands inside. 'bicubic' pads each of its 16 neighbours on
its own, not the point (torch's rule): a point outside keeps its cubic weights, over the
neighbours' padded values.

How it is built: per axis, the neighbours' integer positions (as floats, so huge and
infinite coordinates never reach an int cast), whether each lies inside, and its weight;
the positions combine into flat indices into each (N, C) plane and one gather reads every
neighbour of every point, so the input's gradient is the scatter_add of the weighted
output gradient (torch's). The weights are Tensor ops of the source coordinate, whose own
gradient is torch's multiplier: the unnormalising scale, times zero at and beyond a
'border' edge (torch counts the edges as outside), times the reflection's sign. So the
grid's gradient is torch's as well; 'nearest' gives the grid a zero gradient, as torch.

NaN and infinite grid values give what torch's CPU kernels give, which differ between a
4-D input (torch's vectorised kernel) and a 5-D one (its scalar kernel): with 'zeros' a
non-finite coordinate reads nothing, which is NaN for 'bilinear' and 'bicubic' on 4-D
(0 * NaN weights) and 0 otherwise; 'border' clamps inf to the edge and a NaN to the first
pixel (4-D) or the last (5-D); 'reflection' sends any non-finite coordinate to where
'border' sends a NaN; 'bicubic' is NaN at any non-finite point. Their gradients there are
not torch's (torch's own are not defined there). One more difference, at finite but huge
coordinates: 5-D 'reflection' past 2^31 spans of the input (|grid| beyond about 1e9 / size)
counts its reflections with an int that overflows in torch's scalar kernel; this reflects
as its 4-D kernel does.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from picograd.frontend.dtype import bool_, int32
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import (
    argument_type_error,
    dtype_error,
    shape_error,
    unimplemented_error,
)
from picograd.frontend.ops_shape import stack
from picograd.frontend.tensor import Tensor

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")
_CUBIC_A = -0.75  # torch's cubic convolution constant (as its bicubic upsampling)


def _align(align_corners: bool | None) -> bool:
    """torch's default, False, with torch's warning when it was not given."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


# ── affine_grid ──────────────────────────────────────────────────────────────


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None
                ) -> Tensor:
    """torch's `F.affine_grid`: the sampling grid of the affine maps `theta` (N, 2, 3) for
    an output of `size` (N, C, H, W), or (N, 3, 4) for (N, C, D, H, W): each output point's
    normalised position (x, y[, z], 1) times theta^T. Differentiable in theta.

        >>> theta = Tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> affine_grid(theta, (1, 1, 2, 2), align_corners=True)[0, :, :, 0].tolist()
        [[-1.0, 1.0], [-1.0, 1.0]]
    """
    op = "affine_grid"
    align = _align(align_corners)
    if not isinstance(theta, Tensor):
        raise argument_type_error(op, f"theta must be a Tensor, got {type(theta).__name__}")
    if not theta.dtype.is_float:  # torch raises a ValueError: ShapeError is one
        raise shape_error(op, f"theta must be a float tensor, got {theta.dtype.name}")
    size = tuple(size)
    if len(size) not in (4, 5):
        raise unimplemented_error(op, f"size must be 4-D (N, C, H, W) or 5-D "
                                      f"(N, C, D, H, W), got {size}")
    k = len(size) - 2
    if theta.ndim != 3 or theta.shape[1:] != (k, k + 1):
        raise shape_error(op, f"a size of {len(size)} dims needs theta of shape "
                              f"(N, {k}, {k + 1}), got {theta.shape}")
    spatial = size[2:]
    if align and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an issue for standard, "
                      "non-unit-size grids.", UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise shape_error(op, f"size must be positive, got {size}")
    if theta.shape[0] != size[0]:
        raise shape_error(op, f"theta holds {theta.shape[0]} maps for a batch of {size[0]}")
    base = _base_grid(spatial, align, theta)  # (1, points, k + 1)
    return (base @ theta.transpose(1, 2)).reshape(size[0], *spatial, k)


def _base_grid(spatial: Sequence[int], align: bool, theta: Tensor) -> Tensor:
    """(1, prod(spatial), k + 1): every output point's (x, y[, z], 1), x along the last
    spatial dim (torch's `make_base_grid`)."""
    k = len(spatial)
    columns = []
    for j, n in enumerate(reversed(spatial)):  # x (the last dim) first
        axis = k - 1 - j
        line = _linspace_from_neg_one(n, align, theta)
        shape = tuple(n if a == axis else 1 for a in range(k))
        columns.append(line.reshape(shape).expand(tuple(spatial)))
    columns.append(Tensor.ones(*spatial, dtype=theta.dtype, device=theta.device))
    return stack(columns, -1).reshape(1, -1, k + 1)


def _linspace_from_neg_one(n: int, align: bool, theta: Tensor) -> Tensor:
    """torch's: n positions from -1 to 1 (pixel centres), scaled by (n - 1) / n without
    align_corners; a single 0 for n = 1."""
    if n <= 1:
        return Tensor.zeros(n, dtype=theta.dtype, device=theta.device)
    line = Tensor.linspace(-1.0, 1.0, n, dtype=theta.dtype, device=theta.device)
    return line if align else line * (n - 1) / n


# ── grid_sample: per-axis source coordinates ────────────────────────────────


@dataclass(frozen=True)
class _Axis:
    """One spatial axis of the input, with the formulas torch uses along it: those of its
    vectorised kernel for a 4-D input (`vector`), of its scalar kernel for a 5-D one."""

    size: int
    align: bool
    padding: str
    vector: bool

    @property
    def top(self) -> float:
        return float(self.size - 1)


def _unnormalized(g: Tensor, axis: _Axis) -> tuple[Tensor, float]:
    """Grid values in [-1, 1] as input positions, and d position / d grid."""
    n = axis.size
    scale = (n - 1) / 2 if axis.align else n / 2
    if axis.vector:
        x = (g + 1.0) * scale
        return (x if axis.align else x - 0.5), scale
    if axis.align:
        return (g + 1.0) / 2 * (n - 1), scale
    return ((g + 1.0) * n - 1) / 2, scale


def _reflected(x: Tensor, axis: _Axis) -> tuple[Tensor, Tensor | float]:
    """x reflected into [low, low + span] (the corner pixels' centres with align_corners,
    their outer edges without), and the reflection's sign (d result / d x)."""
    if axis.align and axis.size <= 1:  # an empty span: everything at 0, no gradient
        return x.zeros_like(), 0.0
    low, twice = (0.0, 2.0 * axis.top) if axis.align else (-0.5, 2.0 * axis.size)
    shifted = x - low
    distance = shifted.abs()
    extra = distance - (distance / twice).trunc() * twice  # |x - low| mod 2 spans
    flip = extra > twice - extra  # in the second span: one more reflection
    sign = (flip != (shifted < 0)).where(-1.0, 1.0)
    return flip.where(twice - extra, extra) + low, sign


def _padded(x: Tensor, axis: _Axis) -> tuple[Tensor, Tensor | float]:
    """x moved inside [0, size - 1] as `axis.padding` says ('zeros' leaves it), and the
    move's d result / d x: zero at and past an edge, as torch's `clip_coordinates_set_grad`
    (edges count as outside), times the reflection's sign."""
    if axis.padding == "zeros":
        return x, 1.0
    undefined = x.isnan()
    sign: Tensor | float = 1.0
    if axis.padding == "reflection":
        undefined = ~x.isfinite()  # no reflection of inf: torch's NaN, then clamped
        x, sign = _reflected(x, axis)
    inside = (x > 0.0) & (x < axis.top)
    clamped = x.clamp(0.0, axis.top)
    # a NaN clamps to 0 in torch's vectorised kernel, to the last pixel in its scalar one
    value = undefined.where(0.0 if axis.vector else axis.top, clamped)
    return value, inside.where(sign, 0.0)


def _source(g: Tensor, axis: _Axis, padded: bool) -> Tensor:
    """The input position grid values `g` sample along `axis` (padded unless the mode pads
    its neighbours itself), with torch's gradient multiplier as its gradient."""
    with no_grad():
        x, scale = _unnormalized(g, axis)
        multiplier: Tensor | float = scale
        if padded:
            x, move = _padded(x, axis)
            multiplier = move * scale
    return x._with_gradient((g,), lambda d: (d * multiplier,))


# ── grid_sample: neighbours along one axis ──────────────────────────────────

# (positions, weights), each (N, points, neighbours): the neighbours' integer positions
# (floats, no gradient) and their weights (None for 'nearest': one neighbour, weight 1)
_Taps = tuple[Tensor, Tensor | None]


def _row(c: Tensor, values: Sequence[float]) -> Tensor:
    """`values` as a constant of c's dtype and device, shaped to broadcast along a new last
    dim of c."""
    return Tensor(list(values), dtype=c.dtype, device=c.device).reshape(
        *(1,) * c.ndim, len(values))


def _nearest_taps(c: Tensor, axis: _Axis) -> _Taps:
    with no_grad():
        return c.round().unsqueeze(-1), None  # half to even: torch's nearbyint


def _linear_taps(c: Tensor, axis: _Axis) -> _Taps:
    with no_grad():
        low = c.floor()
    high = c - low
    # torch's 4-D kernel takes 1 - w, its 5-D one (low + 1) - x
    low_weight = 1.0 - high if axis.vector else (low + 1.0) - c
    return low.unsqueeze(-1) + _row(c, (0.0, 1.0)), stack([low_weight, high], -1)


def _cubic_taps(c: Tensor, axis: _Axis) -> _Taps:
    """Four neighbours, each padded on its own (torch's `get_value_bounded`), weighted by
    the cubic kernel at their distances t + 1, t, 1 - t and 2 - t."""
    offsets = _row(c, (-1.0, 0.0, 1.0, 2.0))
    with no_grad():
        low = c.floor().unsqueeze(-1)
        positions = _padded(low + offsets, axis)[0]
    # (t - offset) * sign: the distances, each rounded once as torch's t + 1 and 1 - t
    x = (c.unsqueeze(-1) - low - offsets) * _row(c, (1.0, 1.0, -1.0, -1.0))
    a = _CUBIC_A
    near = ((a + 2) * x - (a + 3)) * x * x + 1.0  # |distance| <= 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # 1 < |distance| < 2
    return positions, _row(c, (0.0, 1.0, 1.0, 0.0)).cast(bool_).where(near, far)


_TAPS: dict[str, Callable[[Tensor, _Axis], _Taps]] = {
    "nearest": _nearest_taps, "bilinear": _linear_taps, "bicubic": _cubic_taps}


# ── grid_sample ──────────────────────────────────────────────────────────────


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """torch's `F.grid_sample`: `input` (N, C, H, W) read at the normalised positions
    `grid` (N, Ho, Wo, 2) gives (N, C, Ho, Wo); a 5-D input (N, C, D, H, W) with a grid
    (N, Do, Ho, Wo, 3) gives (N, C, Do, Ho, Wo). `grid[..., 0]` is x (along W), then y,
    then z. Differentiable in input and grid (see the module docstring).

        >>> x = Tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
        >>> grid_sample(x, Tensor([[[[0.0, 0.0]]]]), align_corners=True).item()
        2.5
    """
    _check(input, grid, mode, padding_mode)
    align = _align(align_corners)
    n, c, *spatial = input.shape
    out_spatial, k = grid.shape[1:-1], len(spatial)
    if 0 in out_spatial:  # no points: an empty result, zero gradients
        empty = input._const(0.0, (n, c, *out_spatial), input.dtype)
        return empty._with_gradient((input, grid), lambda d: (input.zeros_like(),
                                                              grid.zeros_like()))
    points = grid.reshape(n, prod(out_spatial), k)  # (no -1: n may be 0)
    index, valid, weight = _neighbours(points, spatial, mode, padding_mode, align)
    out = _read(input, index, valid, weight, k == 2).reshape(n, c, *out_spatial)
    if mode == "nearest":  # torch's grid gradient: zero
        return out._with_gradient((out, grid), lambda d: (d, grid.zeros_like()))
    return out


def _neighbours(points: Tensor, spatial: Sequence[int], mode: str, padding: str,
                align: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """For grid points (N, P, k): each neighbour's flat position in an input plane, whether
    it lies inside (1 or 0) and its weight (None for 'nearest'), all (N, P, *neighbours per
    axis), the axes in the input's order."""
    n, p, k = points.shape
    index: Tensor | None = None
    valid: Tensor | None = None
    weight: Tensor | None = None
    stride = 1
    for j in range(k):  # x (the last input dim) first, as torch multiplies the weights
        dim = k - 1 - j
        axis = _Axis(spatial[dim], align, padding, vector=k == 2)
        source = _source(points[:, :, j], axis, padded=mode != "bicubic")
        positions, weights = _TAPS[mode](source, axis)
        shape = (n, p, *(positions.shape[-1] if a == dim else 1 for a in range(k)))
        at = positions.reshape(shape)
        inside = (at >= 0.0) & (at <= axis.top)  # False for NaN
        step = inside.where(at, 0.0).cast(int32) * stride
        index = step if index is None else index + step
        # 0 / 1 ints, not bools: LLVM takes seconds over an `and` of i8s in small loops
        ok = inside.cast(int32)
        valid = ok if valid is None else valid * ok
        if weights is not None:
            w = weights.reshape(shape)
            weight = w if weight is None else weight * w
        stride *= axis.size
    assert index is not None and valid is not None
    return index, valid, weight


def _read(input: Tensor, index: Tensor, valid: Tensor, weight: Tensor | None,
          vector: bool) -> Tensor:
    """The weighted sum over the neighbours (the dims after (N, points) of `index`) of the
    input values at `index` (flat positions in a plane), reading 0 where not `valid`:
    (N, C, points)."""
    n, c, *spatial = input.shape
    p, m = index.shape[1], prod(index.shape[2:])
    shape = (n, 1, p, m)
    flat = index.reshape(n, 1, p * m).expand(n, c, p * m)
    values = input.reshape(n, c, prod(spatial))._gather_along(2, flat).reshape(n, c, p, m)
    inside = valid.reshape(shape) != 0
    if weight is None:  # 'nearest': one neighbour
        return inside.where(values, 0.0).sum(-1)
    w = weight.reshape(shape)
    if vector:  # torch's 4-D kernel: (value or 0) * weight, so a NaN weight gives NaN
        return (inside.where(values, 0.0) * w).sum(-1)
    return inside.where(values * w, 0.0).sum(-1)  # its 5-D one adds inside neighbours only


def _check(input: Tensor, grid: Tensor, mode: str, padding_mode: str) -> None:
    """torch's argument checks, as picograd's typed errors (each also the class torch
    raises; for integer tensors torch's NotImplementedError, an UnimplementedDTypeError)."""
    op = "grid_sample"
    for name, t in (("input", input), ("grid", grid)):
        if not isinstance(t, Tensor):
            raise argument_type_error(op, f"{name} must be a Tensor, got {type(t).__name__}")
    if mode not in _MODES:
        raise shape_error(op, f"mode must be 'bilinear', 'nearest' or 'bicubic', got {mode!r}")
    if padding_mode not in _PADDINGS:
        raise shape_error(op, f"padding_mode must be 'zeros', 'border' or 'reflection', got "
                              f"{padding_mode!r}")
    input._check_device(op, grid)
    if not input.dtype.is_float:  # torch's NotImplementedError for integer tensors
        raise unimplemented_error(op, f"needs a float input and grid, got "
                                      f"{input.dtype.name}", dtype=True)
    if grid.dtype != input.dtype:
        raise dtype_error(op, f"needs float input and grid of one dtype, got "
                              f"{input.dtype.name} and {grid.dtype.name}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise shape_error(op, f"needs a 4-D or 5-D input and a grid of as many dims, got "
                              f"shapes {input.shape} and {grid.shape}")
    if grid.shape[0] != input.shape[0] or grid.shape[-1] != input.ndim - 2:
        raise shape_error(op, f"input of shape {input.shape} needs a grid of shape "
                              f"({input.shape[0]}, ..., {input.ndim - 2}), got {grid.shape}")
    if 0 in input.shape[2:]:
        raise shape_error(op, f"input of shape {input.shape} has an empty spatial dim")
    if mode == "bicubic" and input.ndim == 5:
        raise shape_error(op, f"mode 'bicubic' needs a 4-D input, got shape {input.shape}")
