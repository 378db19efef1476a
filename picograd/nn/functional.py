"""Functional forms of layers and losses, as compositions of Tensor ops (so autograd and
fusion apply to them unchanged).

    linear(x, w, b)                 x @ w.T + b                (defined in picograd/nn/basic.py)
    log_softmax(x, dim) / softmax(x, dim) / logsumexp(x, dim)
    cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean")
    nll_loss(logp, target) / mse_loss(a, b)
    dropout(x, p, training)                    (defined in picograd/nn/basic.py)
    binary_cross_entropy(p, y) / binary_cross_entropy_with_logits(x, y)
    one_hot(target, num_classes)
    conv{1,2,3}d / conv_transpose{1,2,3}d      (defined in picograd/nn/conv_nd.py)
    max_pool{1,2,3}d / avg_pool{1,2,3}d / lp_pool{1,2,3}d   (defined in picograd/nn/pool.py)
    unfold / fold (im2col and its adjoint)     (defined in picograd/nn/fold.py)
    adaptive_{avg,max}_pool{1,2,3}d / max_unpool{1,2,3}d   (picograd/nn/pool_adaptive.py)
    interpolate(x, size, scale_factor, mode, align_corners)  (picograd/nn/resize.py)
    scaled_dot_product_attention(q, k, v, attn_mask, ...)   (picograd/nn/attention.py)
    batch_norm / layer_norm / group_norm / rms_norm / embedding   (picograd/nn/norm.py)
    pad(x, pad, mode="constant", value=None)   torch's F.pad (picograd/frontend/ops_shape.py)
    relu / gelu / silu / sigmoid / tanh / leaky_relu / elu / softplus   the Tensor methods
"""

from __future__ import annotations

import numpy as np

from picograd.frontend.autocast import full_precision
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.ops_shape import pad
from picograd.frontend.tensor import Tensor
from picograd.nn.activation_functions import (
    celu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    logsigmoid,
    mish,
    normalize,
    prelu,
    relu6,
    rrelu,
    selu,
    softmin,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
)
from picograd.nn.attention import scaled_dot_product_attention
from picograd.nn.basic import dropout, linear
from picograd.nn.conv_nd import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from picograd.nn.fold import fold, unfold
from picograd.nn.norm import batch_norm, embedding, group_norm, layer_norm, rms_norm
from picograd.nn.pool import (
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from picograd.nn.pool_adaptive import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from picograd.nn.resize import interpolate

__all__ = [
    "avg_pool2d", "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "conv2d", "conv_transpose2d", "cross_entropy", "dropout", "elu", "embedding", "gelu",
    "group_norm", "interpolate", "layer_norm", "leaky_relu", "linear", "log_softmax",
    "logsumexp", "max_pool2d", "mse_loss", "nll_loss", "one_hot", "pad", "relu", "rms_norm",
    "scaled_dot_product_attention", "sigmoid", "silu", "softmax", "softplus", "tanh",
]
__all__ += ["conv1d", "conv3d", "conv_transpose1d", "conv_transpose3d"]
__all__ += ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
            "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "max_unpool1d",
            "max_unpool2d", "max_unpool3d"]
__all__ += ["avg_pool1d", "avg_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d",
            "max_pool3d"]
__all__ += ["fold", "unfold"]
# activation_functions.py
__all__ += ["celu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "logsigmoid",
            "mish", "normalize", "prelu", "relu6", "rrelu", "selu", "softmin", "softshrink",
            "softsign", "tanhshrink", "threshold"]

# ── activations: torch's F names for the Tensor methods ─────────────────────


def relu(x: Tensor) -> Tensor:
    return x.relu()


def gelu(x: Tensor, *, approximate: str = "none") -> Tensor:
    """x * Phi(x), exact (erf) or torch's tanh form (`approximate="tanh"`)."""
    return x.gelu(approximate)


def silu(x: Tensor) -> Tensor:
    return x.silu()


def sigmoid(x: Tensor) -> Tensor:
    return x.sigmoid()


def tanh(x: Tensor) -> Tensor:
    return x.tanh()


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    return x.leaky_relu(negative_slope)


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    return x.elu(alpha)


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return x.softplus(beta, threshold)


def logsumexp(x: Tensor, dim: int = -1, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) along `dim` (`Tensor.logsumexp`)."""
    return x.logsumexp(dim, keepdim)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    (x,) = full_precision("log_softmax", x)  # float32 inside a "cuda" pg.autocast
    return x.log_softmax(dim)


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    (x,) = full_precision("softmax", x)  # float32 inside a "cuda" pg.autocast
    return x.softmax(dim)


def one_hot(target: Tensor, num_classes: int) -> Tensor:
    """Bool tensor of shape target.shape + (num_classes,): True at each target class. A
    target holding a class outside [0, num_classes) raises IndexRangeError (torch raises
    too): a realized one here, a lazy one when the result is read."""
    if target.dtype.is_float:
        raise dtype_error("one_hot", f"class indices must be integers, got {target.dtype.name}")
    checked = target._checked_index("one_hot", target, num_classes, negative=False,
                                    noun="class")
    return _class_mask(checked, num_classes)


def _class_mask(target: Tensor, num_classes: int) -> Tensor:
    classes = Tensor(np.arange(num_classes, dtype=np.int32), device=target.device)
    return target.unsqueeze(-1) == classes


_REDUCTIONS = ("mean", "sum", "none")


def _reduce_loss(op: str, losses: Tensor, weight: Tensor | None, reduction: str) -> Tensor:
    """`losses` per sample reduced as torch does; `weight` (0/1 per sample) drops ignored
    samples, and "mean" then divides by the number kept."""
    if reduction not in _REDUCTIONS:
        raise shape_error(op, f"reduction must be one of {', '.join(_REDUCTIONS)}, got "
                              f"{reduction!r}")
    if weight is not None:
        losses = losses * weight
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / weight.sum() if weight is not None else losses.mean()


def _check_classes(op: str, scores: Tensor, target: Tensor, ignore_index: int) -> Tensor:
    """Scores (N, C) and int targets (N,): the targets as the loss uses them. A target
    holding a class outside [0, C) other than `ignore_index` raises IndexRangeError
    (torch's "Target 7 is out of bounds"): a realized one here, a lazy one when the loss
    is read (the returned targets carry the check)."""
    if scores.ndim != 2 or target.shape != scores.shape[:1]:
        raise shape_error(op, f"needs scores (N, C) and class targets (N,), got {scores.shape} "
                              f"and {target.shape}")
    return scores._checked_index(op, target, scores.shape[1], negative=False,
                                 ignore=ignore_index, noun="target")


def nll_loss(log_probs: Tensor, target: Tensor, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """-log_probs[i, target[i]], reduced over the samples whose target is not
    `ignore_index` (torch's `nll_loss` without class weights)."""
    (log_probs,) = full_precision("nll_loss", log_probs)  # inside pg.autocast
    target = _check_classes("nll_loss", log_probs, target, ignore_index)
    picked = _class_mask(target, log_probs.shape[1]).where(log_probs, 0.0).sum(1)
    return _reduce_loss("nll_loss", -picked, (target != ignore_index).float(), reduction)


def cross_entropy(logits: Tensor, target: Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0, reduction: str = "mean") -> Tensor:
    """torch's `cross_entropy` for class indices: the target distribution puts
    1 - label_smoothing on the class and spreads label_smoothing evenly over all classes;
    samples whose target is `ignore_index` count for nothing."""
    (logits,) = full_precision("cross_entropy", logits)  # inside pg.autocast
    target = _check_classes("cross_entropy", logits, target, ignore_index)
    if not 0.0 <= label_smoothing <= 1.0:
        raise shape_error("cross_entropy", f"label_smoothing must be in [0, 1], got "
                                           f"{label_smoothing}")
    log_probs = log_softmax(logits, 1)
    picked = _class_mask(target, logits.shape[1]).where(log_probs, 0.0).sum(1)
    losses = -picked
    if label_smoothing:
        losses = losses * (1 - label_smoothing) - log_probs.mean(1) * label_smoothing
    return _reduce_loss("cross_entropy", losses, (target != ignore_index).float(), reduction)


def binary_cross_entropy(probs: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """-(y log p + (1 - y) log(1 - p)), each log clamped at -100 as torch does."""
    probs, target = full_precision("binary_cross_entropy", probs, target)
    if probs.shape != target.shape:
        raise shape_error("binary_cross_entropy", f"probabilities {probs.shape} and targets "
                                                  f"{target.shape} differ in shape")
    log_p = probs.log().maximum(-100.0)
    log_q = (1 - probs).log().maximum(-100.0)
    losses = -(target * log_p + (1 - target) * log_q)
    return _reduce_loss("binary_cross_entropy", losses, None, reduction)


def binary_cross_entropy_with_logits(logits: Tensor, target: Tensor,
                                     reduction: str = "mean") -> Tensor:
    """binary_cross_entropy(sigmoid(x), y) computed stably:
    max(x, 0) - x y + log(1 + exp(-|x|))."""
    logits, target = full_precision("binary_cross_entropy_with_logits", logits, target)
    if logits.shape != target.shape:
        raise shape_error("binary_cross_entropy_with_logits", f"logits {logits.shape} and "
                                                              f"targets {target.shape} differ")
    losses = logits.relu() - logits * target + ((-logits.abs()).exp() + 1).log()
    return _reduce_loss("binary_cross_entropy_with_logits", losses, None, reduction)


def mse_loss(a: Tensor, b: Tensor) -> Tensor:
    a, b = full_precision("mse_loss", a, b)  # inside pg.autocast
    return ((a - b) * (a - b)).mean()
