"""Loss functions with torch's semantics and argument order (the deprecated size_average and
reduce keep their positions and meaning), as compositions of Tensor ops:

    nll_loss / cross_entropy           (N, C) or (N, C, d1, ...) scores, class or (soft)
                                       probability targets, weight, ignore_index,
                                       label_smoothing
    binary_cross_entropy(_with_logits) weight, pos_weight
    mse_loss, l1_loss, smooth_l1_loss(beta), huber_loss(delta), kl_div(log_target)
    soft_margin_loss, multilabel_soft_margin_loss, multi_margin_loss, hinge_embedding_loss,
    margin_ranking_loss, cosine_embedding_loss, triplet_margin_loss, poisson_nll_loss,
    gaussian_nll_loss (the distances, cosine_similarity and pairwise_distance, are in
    distance.py)

reduction is "mean" (default), "sum" or "none" (kl_div also "batchmean"). Example:

    loss = cross_entropy(logits, target, weight=w, label_smoothing=0.1)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from picograd.frontend.autocast import full_precision
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn.distance import pairwise_distance

_REDUCTIONS = ("mean", "sum", "none")


def _reduction(op: str, size_average: bool | None, reduce: bool | None, reduction: str,
               allowed: tuple[str, ...] = _REDUCTIONS) -> str:
    """torch's legacy size_average/reduce flags, where given, decide the reduction."""
    if size_average is not None or reduce is not None:
        if reduce is False:
            return "none"
        return "sum" if size_average is False else "mean"
    if reduction not in allowed:
        raise shape_error(op, f"reduction must be one of {', '.join(allowed)}, got "
                              f"{reduction!r}")
    return reduction


def _reduce(losses: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


def _class_mask(target: Tensor, num_classes: int) -> Tensor:
    classes = Tensor(np.arange(num_classes, dtype=np.int32), device=target.device)
    return target.unsqueeze(-1) == classes


def _classes_last(op: str, scores: Tensor, target: Tensor) -> tuple[Tensor, Tensor, bool]:
    """Scores (N, C, d1, ...) (or unbatched (C,)) with the class dim moved last, the target,
    and whether the target holds class probabilities (a float target of the scores'
    shape) rather than class indices ((N, d1, ...))."""
    if not isinstance(scores, Tensor) or not isinstance(target, Tensor) or scores.ndim == 0:
        raise shape_error(op, "needs Tensor scores (N, C, ...) and targets")
    if scores.ndim == 1:
        scores, target = scores.unsqueeze(0), target.unsqueeze(0)
    soft = target.dtype.is_float
    if soft and target.shape != scores.shape:
        raise shape_error(op, f"probability targets must have the scores' shape {scores.shape}"
                              f", got {target.shape}")
    if not soft and target.shape != scores.shape[:1] + scores.shape[2:]:
        raise shape_error(op, f"needs scores (N, C, ...) and class targets (N, ...), got "
                              f"{scores.shape} and {target.shape}")
    last = scores.movedim(1, -1)
    return last, (target.movedim(1, -1) if soft else target), soft


def _check_weight(op: str, weight: Tensor | None, num_classes: int) -> None:
    if weight is not None and weight.shape != (num_classes,):
        raise shape_error(op, f"weight must hold one value per class ({num_classes},), got "
                              f"{weight.shape}")


def _class_loss(op: str, log_probs: Tensor, target: Tensor, weight: Tensor | None,
                ignore_index: int, reduction: str, label_smoothing: float) -> Tensor:
    """Class-index targets: -w[t] log_probs[t] (smoothed towards the mean over classes),
    0 where the target is ignore_index; "mean" divides by the kept targets' weights."""
    num_classes = log_probs.shape[-1]
    target = log_probs._checked_index(op, target, num_classes, negative=False,
                                      ignore=ignore_index, noun="target")
    mask = _class_mask(target, num_classes)
    kept = target != ignore_index
    if weight is None:
        picked, weight_t = mask.where(log_probs, 0.0).sum(-1), kept.float()
        smooth = log_probs.sum(-1) if label_smoothing else None
    else:
        weighted = log_probs * weight
        picked = mask.where(weighted, 0.0).sum(-1)
        weight_t = kept.where(mask.where(weight, 0.0).sum(-1), 0.0)
        smooth = weighted.sum(-1) if label_smoothing else None
    losses = -picked
    if smooth is not None:
        losses = losses * (1 - label_smoothing) - smooth * (label_smoothing / num_classes)
    losses = kept.where(losses, 0.0)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / weight_t.sum()


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """-weight[t] * input[n, t, ...] per element; "mean" divides by the sum of the kept
    elements' weights (targets equal to ignore_index count for nothing)."""
    input, target = full_precision("nll_loss", input, target)  # autocast
    op = "nll_loss"
    red = _reduction(op, size_average, reduce, reduction)
    log_probs, target, soft = _classes_last(op, input, target)
    if soft:
        raise dtype_error(op, f"class targets must be integers, got {target.dtype.name}")
    _check_weight(op, weight, log_probs.shape[-1])
    out = _class_loss(op, log_probs, target, weight, ignore_index, red, 0.0)
    return out.squeeze(0) if input.ndim == 1 and red == "none" else out


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dim (1), then nll_loss; class-index or probability
    targets. label_smoothing mixes the target with the uniform distribution."""
    input, target = full_precision("cross_entropy", input, target)  # autocast
    op = "cross_entropy"
    red = _reduction(op, size_average, reduce, reduction)
    if not isinstance(label_smoothing, int | float) or not 0.0 <= label_smoothing <= 1.0:
        raise shape_error(op, f"label_smoothing must be in [0, 1], got {label_smoothing}")
    scores, target, soft = _classes_last(op, input, target)
    num_classes = scores.shape[-1]
    _check_weight(op, weight, num_classes)
    log_probs = scores.log_softmax(-1)
    if not soft:
        out = _class_loss(op, log_probs, target, weight, ignore_index, red, label_smoothing)
    else:
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / num_classes
        terms = log_probs * target if weight is None else log_probs * target * weight
        out = _reduce(-terms.sum(-1), red)
    return out.squeeze(0) if input.ndim == 1 and red == "none" else out


def _same_shape(op: str, a: Tensor, b: Tensor) -> None:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or a.shape != b.shape:
        shapes = tuple(getattr(t, "shape", type(t).__name__) for t in (a, b))
        raise shape_error(op, f"input and target differ in shape: {shapes[0]} and "
                              f"{shapes[1]}")


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """-weight * (y log p + (1 - y) log(1 - p)), each log clamped at -100 as torch does."""
    input, target = full_precision("binary_cross_entropy", input, target)  # autocast
    op = "binary_cross_entropy"
    red = _reduction(op, size_average, reduce, reduction)
    _same_shape(op, input, target)
    log_p = input.log().maximum(-100.0)
    log_q = (1 - input).log().maximum(-100.0)
    losses = -(target * log_p + (1 - target) * log_q)
    return _reduce(losses if weight is None else losses * weight, red)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """binary_cross_entropy(sigmoid(x), y) computed stably, the positive term scaled by
    pos_weight: (1 - y) x + (1 + (pos_weight - 1) y) (log(1 + exp(-|x|)) + max(-x, 0))."""
    input, target = full_precision("binary_cross_entropy_with_logits", input, target)  # autocast
    op = "binary_cross_entropy_with_logits"
    red = _reduction(op, size_average, reduce, reduction)
    _same_shape(op, input, target)
    softplus_neg = ((-input.abs()).exp() + 1).log() + (-input).relu()  # log(1 + exp(-x))
    if pos_weight is None:
        losses = (1 - target) * input + softplus_neg
    else:
        losses = (1 - target) * input + (1 + (pos_weight - 1) * target) * softplus_neg
    return _reduce(losses if weight is None else losses * weight, red)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    input, target = full_precision("mse_loss", input, target)  # autocast
    red = _reduction("mse_loss", size_average, reduce, reduction)
    diff = input - target
    return _reduce(diff * diff, red)


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    input, target = full_precision("l1_loss", input, target)  # autocast
    red = _reduction("l1_loss", size_average, reduce, reduction)
    return _reduce((input - target).abs(), red)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (beta = 0: the L1 loss)."""
    input, target = full_precision("smooth_l1_loss", input, target)  # autocast
    op = "smooth_l1_loss"
    red = _reduction(op, size_average, reduce, reduction)
    if beta < 0:
        raise shape_error(op, f"beta must be non-negative, got {beta}")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, red)
    return _reduce((d < beta).where(d * d * (0.5 / beta), d - 0.5 * beta), red)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",
               delta: float = 1.0) -> Tensor:
    """0.5 d**2 where |d| <= delta, else delta (|d| - 0.5 delta)."""
    input, target = full_precision("huber_loss", input, target)  # autocast
    red = _reduction("huber_loss", None, None, reduction)
    d = (input - target).abs()
    return _reduce((d <= delta).where(d * d * 0.5, (d - 0.5 * delta) * delta), red)


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """target * (log(target) - input) per element (0 where target is 0); input holds log
    probabilities, the target probabilities (log ones with log_target). "batchmean"
    divides the sum by the batch size (dim 0), torch's mathematically right mean."""
    input, target = full_precision("kl_div", input, target)  # autocast
    op = "kl_div"
    red = _reduction(op, size_average, reduce, reduction, (*_REDUCTIONS, "batchmean"))
    if log_target:
        losses = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = positive.where(target, 1.0)
        losses = positive.where(target * (safe.log() - input), -(target * input))
    if red == "batchmean":
        return losses.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(losses, red)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where the target is 1, max(0, cos - margin) where it is -1."""
    red = _reduction("cosine_embedding_loss", size_average, reduce, reduction)
    dim = input1.ndim - 1
    eps = 1e-12  # torch's, added to each squared norm
    cos = (input1 * input2).sum(dim) / (((input1 * input1).sum(dim) + eps)
                                        * ((input2 * input2).sum(dim) + eps)).sqrt()
    losses = (target == 1).where(1 - cos, 0.0) + (target == -1).where((cos - margin).relu(), 0.0)
    return _reduce(losses, red)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -y (x1 - x2) + margin)."""
    red = _reduction("margin_ranking_loss", size_average, reduce, reduction)
    return _reduce((-target * (input1 - input2) + margin).relu(), red)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """x where the target is 1, max(0, margin - x) where it is -1 (as torch sums them)."""
    red = _reduction("hinge_embedding_loss", size_average, reduce, reduction)
    losses = (target != 1).where((margin - input).relu(), 0.0) + \
        (target != -1).where(input, 0.0)
    return _reduce(losses, red)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-y x))."""
    red = _reduction("soft_margin_loss", size_average, reduce, reduction)
    z = -target * input
    return _reduce(z.relu() + ((-z.abs()).exp() + 1).log(), red)


def _log_sigmoid(x: Tensor) -> Tensor:
    return -((-x.abs()).exp() + 1).log() - (-x).relu()


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)), weighted, averaged over classes."""
    red = _reduction("multilabel_soft_margin_loss", size_average, reduce, reduction)
    losses = -(target * _log_sigmoid(input) + (1 - target) * _log_sigmoid(-input))
    if weight is not None:
        losses = losses * weight
    return _reduce(losses.mean(input.ndim - 1), red)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """sum over classes i != y of max(0, margin - x[y] + x[i])**p, times weight[y], / C."""
    op = "multi_margin_loss"
    red = _reduction(op, size_average, reduce, reduction)
    if p not in (1, 2):
        raise shape_error(op, f"only p = 1 and 2 are supported, got {p}")
    scores = input if input.ndim == 2 else input.unsqueeze(0)
    target = target if input.ndim == 2 else target.reshape(1)
    num_classes = scores.shape[1]
    target = scores._checked_index(op, target, num_classes, negative=False, noun="target")
    mask = _class_mask(target, num_classes)
    picked = mask.where(scores, 0.0).sum(1, keepdim=True)
    hinge = (scores - picked + margin).relu()
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * mask.where(weight, 0.0).sum(1, keepdim=True)
    losses = mask.where(0.0, hinge).sum(1) / num_classes
    out = _reduce(losses, red)
    return out.squeeze(0) if input.ndim == 1 and red == "none" else out


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0) with pairwise_distance d; `swap` uses the
    smaller of d(a, n) and d(p, n)."""
    red = _reduction("triplet_margin_loss", size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).relu(), red)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """exp(x) - y x (log_input) or x - y log(x + eps); `full` adds Stirling's term
    y log y - y + 0.5 log(2 pi y) where y > 1."""
    red = _reduction("poisson_nll_loss", size_average, reduce, reduction)
    losses = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        big = target > 1
        safe = big.where(target, 2.0)
        stirling = safe * safe.log() - safe + (safe * (2 * math.pi)).log() * 0.5
        losses = losses + big.where(stirling, 0.0)
    return _reduce(losses, red)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """0.5 (log var + (x - y)**2 / var) (+ 0.5 log(2 pi) with `full`); var is clamped at
    eps for the value only (its gradient passes through, as torch's in-place clamp)."""
    op = "gaussian_nll_loss"
    red = _reduction(op, None, None, reduction)
    v: Any = var
    if not isinstance(v, Tensor):
        v = Tensor(np.full((), float(v), np.float32), device=input.device)
    if v.ndim == input.ndim - 1 and v.ndim and v.shape == input.shape[:-1]:
        v = v.unsqueeze(-1)
    clamped = v + (v.maximum(eps) - v).detach()
    losses = (clamped.log() + (input - target) * (input - target) / clamped) * 0.5
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return _reduce(losses, red)
