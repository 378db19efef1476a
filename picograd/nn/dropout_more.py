"""Channel-wise and self-normalising dropout, and Softmax2d, with torch's semantics:

    dropout1d(x, p=0.5, training=True, inplace=False)     (N, C, L) or unbatched (C, L)
    dropout2d(x, p=0.5, training=True, inplace=False)     (N, C, H, W); see below
    dropout3d(x, p=0.5, training=True, inplace=False)     (N, C, D, H, W) or (C, D, H, W)
    alpha_dropout(x, p=0.5, training=False, inplace=False)
    feature_alpha_dropout(x, p=0.5, training=False, inplace=False)   per channel
    Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout, Softmax2d   layers

Channel-wise dropout keeps or zeroes each (sample, channel) plane whole: one draw per
plane, the mask of shape (N, C, 1, ...) broadcast over the plane, kept planes scaled by
1 / (1 - p). Alpha dropout (for SELU networks) keeps the mean and variance of its input:
with alpha = 1.7580993408473766 (SELU's scale * alpha) and a = 1 / sqrt((alpha^2 p + 1)
(1 - p)), a kept element becomes a x + alpha a p and a dropped one alpha a (p - 1) (torch's
formula, its gradient a on kept elements and 0 on dropped ones).

torch's rules for inputs of other ranks are kept, warnings included: dropout1d refuses
anything but 2-D and 3-D (ShapeError, a RuntimeError); dropout2d warns for ranks other than
3 and 4 and treats a 3-D input as batched (N, C, L), as torch does for now; dropout3d warns
for ranks other than 4 and 5 and treats every rank but 5 as unbatched. A feature dropout of
fewer than 2 dims (after that) fails in training only, and so does an integer input. Eval
mode and p = 0 return the input itself, an empty input its values; p = 1 gives x * 0 (NaN
stays NaN), as torch.

The masks come from picograd's generator (`pg.manual_seed`), not torch's: the same seed
gives the same planes here, other planes than torch's. `inplace=True` writes the result into
the input tensor (`functional_aliases.in_place`) and returns it.
"""

from __future__ import annotations

import math
import warnings

from picograd.frontend.autocast import full_precision
from picograd.frontend.lazy import argument_type_error, dtype_error, shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn.functional_aliases import in_place
from picograd.nn.module import Module

_ALPHA = 1.7580993408473766  # SELU's scale * alpha (SELU saturates at minus this)


def _check(op: str, x: Tensor, p: float) -> None:
    if not isinstance(x, Tensor):
        raise argument_type_error(op, f"input must be a Tensor, got {type(x).__name__}")
    _check_p(p)


def _check_p(p: float) -> None:
    if not 0 <= p <= 1:
        raise shape_error("dropout", f"dropout probability has to be between 0 and 1, but "
                                     f"got {p}")


def _dropout(op: str, x: Tensor, p: float, feature: bool, alpha: bool) -> Tensor:
    """torch's `_dropout_impl` in training: one keep draw per element (or per (N, C) plane
    when `feature`), kept values scaled by 1 / (1 - p), or alpha dropout's affine map."""
    if x.numel() == 0:
        return x
    if not x.dtype.is_float:
        raise dtype_error(op, f"needs a float input in training, got {x.dtype.name}")
    if feature and x.ndim < 2:
        raise shape_error(op, f"Feature dropout requires at least 2 dimensions in the input, "
                              f"got shape {x.shape}")
    if p == 1:
        return x * 0.0
    shape = (*x.shape[:2], *(1,) * (x.ndim - 2)) if feature else x.shape
    keep = Tensor.rand(*shape, device=x.device, dtype=x.dtype) >= p  # P(keep) = 1 - p
    if not alpha:
        return x * keep.where(1 / (1 - p), 0.0).cast(x.dtype)
    a = 1 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    noise = keep.where(a, 0.0).cast(x.dtype)
    shift = keep.where(_ALPHA * a * p, _ALPHA * a * (p - 1)).cast(x.dtype)
    return x * noise + shift


def _run(op: str, x: Tensor, p: float, training: bool, inplace: bool, *, feature: bool,
         alpha: bool = False, batched: bool = True) -> Tensor:
    """The dropout in training (the input itself otherwise, as torch), on x with a batch
    dim of 1 added and removed again unless `batched`; with `inplace`, written into x."""
    if not training or p == 0:
        return x

    def run(t: Tensor) -> Tensor:
        if batched:
            return _dropout(op, t, p, feature, alpha)
        return _dropout(op, t.unsqueeze(0), p, feature, alpha).squeeze(0)

    return in_place(op, x, run) if inplace else run(x)


def _warn_rank(op: str, x: Tensor, spatial: int) -> None:
    if x.ndim not in (spatial + 1, spatial + 2):
        warnings.warn(
            f"{op}: Received a {x.ndim}-D input to {op}, which is deprecated and will "
            f"result in an error in a future release. To retain the behavior and silence "
            f"this warning, please use dropout instead. Note that {op} exists to provide "
            f"channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
            f"dimension, and an optional batch dimension (i.e. {spatial + 1}D or "
            f"{spatial + 2}D inputs).", stacklevel=3)


# ── functional ───────────────────────────────────────────────────────────────


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, L) or (C, L) input with probability p."""
    op = "dropout1d"
    _check(op, input, p)
    if input.ndim not in (2, 3):
        raise shape_error(op, f"Expected 2D or 3D input, but received a {input.ndim}D input. "
                              "Note that dropout1d exists to provide channel-wise dropout on "
                              "inputs with 1 spatial dimension, a channel dimension, and an "
                              "optional batch dimension (i.e. 2D or 3D inputs).")
    return _run(op, input, p, training, inplace, feature=True, batched=input.ndim == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels (dim 1) of an (N, C, H, W) input with probability p. Like torch,
    a 3-D input is read as (N, C, L) (with a warning), other ranks warn and still drop
    along dim 1."""
    op = "dropout2d"
    _check(op, input, p)
    _warn_rank(op, input, 2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret "
            "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _run(op, input, p, training, inplace, feature=True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input with probability p
    (other ranks warn, and are read as unbatched, as torch)."""
    op = "dropout3d"
    _check(op, input, p)
    _warn_rank(op, input, 3)
    return _run(op, input, p, training, inplace, feature=True, batched=input.ndim == 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Alpha dropout of each element (keeps a SELU network's mean and variance); note
    torch's default training=False."""
    _check("alpha_dropout", input, p)
    return _run("alpha_dropout", input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (dim 1) of an (N, C, ...) input."""
    _check("feature_alpha_dropout", input, p)
    return _run("feature_alpha_dropout", input, p, training, inplace, feature=True,
                alpha=True)


# ── layers ───────────────────────────────────────────────────────────────────


class _DropoutNd(Module):
    """The p and inplace the dropout layers share (p checked here, as torch)."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        _check_p(p)
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return feature_alpha_dropout(input, self.p, self.training, self.inplace)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        if not isinstance(input, Tensor) or input.ndim not in (3, 4):
            got = f"{input.ndim}D" if isinstance(input, Tensor) else type(input).__name__
            raise shape_error("Softmax2d", f"expected input to be 3D or 4D, got {got} instead")
        (x,) = full_precision("softmax", input)  # float32 inside a "cuda" pg.autocast
        return x.softmax(-3)
