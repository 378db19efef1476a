"""Loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12+, 13+ for
the current forms).

Both read an (N, C, d1, ...) input with (N, d1, ...) integer targets, an optional per-class
weight (C,), `reduction` (none / sum / mean) and `ignore_index`. A target equal to
ignore_index contributes 0 and is left out of the mean's divisor, which is the sum of the
weights of the counted targets (the count of them without weights). The per-element losses
are summed in float32 at least, so a float16 mean does not lose the small terms.
"""

from __future__ import annotations

from typing import Any

import onnx

from picograd.frontend import where
from picograd.frontend.tensor import Tensor
from picograd.onnx.registry import NodeContext, Value, op

_REDUCTIONS = ("none", "sum", "mean")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _check_reduction(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    reduction = _text(attrs.get("reduction", "mean"))
    return None if reduction in _REDUCTIONS else f"reduction={reduction!r}"


def _accumulate(t: Tensor) -> Tensor:
    """`t` in a dtype wide enough to sum many terms (float16 / bfloat16 -> float32)."""
    return t.cast("float32") if t.dtype.itemsize < 4 else t


def _reduce(ctx: NodeContext, loss: Tensor, weight: Tensor, dtype: Any) -> Tensor:
    """The reduction of the per-target losses `loss` (weighted already) by `reduction`;
    `weight` holds each target's weight (0 for an ignored one), the mean's divisor."""
    reduction = _text(ctx.attr("reduction", "mean"))
    if reduction == "none":
        return loss
    total = _accumulate(loss).sum()
    if reduction == "mean":
        total = total / _accumulate(weight).sum()
    return total.cast(dtype)


def nll_loss(ctx: NodeContext, x: Tensor, target: Value, weight: Value | None) -> Tensor:
    """ONNX's NegativeLogLikelihoodLoss of log-probabilities `x` (N, C, d1, ...)."""
    if x.ndim < 2:
        raise ctx.unsupported(f"an input of shape {x.shape}: it needs (N, C, ...)")
    if tuple(target.shape) != (x.shape[0], *x.shape[2:]):
        raise ctx.unsupported(f"targets of shape {tuple(target.shape)} for an input of "
                              f"shape {x.shape}: they need shape (N, d1, ...)")
    if weight is not None and tuple(weight.shape) != (x.shape[1],):
        raise ctx.unsupported(f"weights of shape {tuple(weight.shape)}: they need one per "
                              f"class ({x.shape[1]})")
    tgt = ctx.t(target).cast("int64")
    ignore = ctx.attr("ignore_index")
    ignored = None if ignore is None else tgt == int(ignore)
    # an ignored target may lie outside 0..C-1: gather class 0 for it, then zero it
    safe = tgt if ignored is None else where(ignored, tgt * 0, tgt)
    picked = x.gather(1, safe.unsqueeze(1)).squeeze(1)
    if weight is None:
        w = (safe * 0 + 1).cast(x.dtype)
    else:
        w = ctx.t(weight).cast(x.dtype).gather(0, safe.reshape(-1)).reshape(safe.shape)
    if ignored is not None:
        w = where(ignored, w * 0, w)
    loss = -(picked * w)
    return _reduce(ctx, loss, w, x.dtype)


@op("NegativeLogLikelihoodLoss", attrs=("reduction", "ignore_index"), min_opset=12,
    check=_check_reduction)
def _nll(ctx: NodeContext, x: Value, target: Value, weight: Value | None = None) -> Tensor:
    return nll_loss(ctx, ctx.t(x), target, weight)


@op("SoftmaxCrossEntropyLoss", attrs=("reduction", "ignore_index"), min_opset=12,
    check=_check_reduction)
def _sce(ctx: NodeContext, scores: Value, labels: Value, weight: Value | None = None
         ) -> Tensor | tuple[Tensor, Tensor]:
    """NLL of log_softmax(scores) over the class dim 1; the second, optional output is
    those log-probabilities."""
    s = ctx.t(scores)
    if s.ndim < 2:
        raise ctx.unsupported(f"scores of shape {s.shape}: they need (N, C, ...)")
    log_prob = _accumulate(s).log_softmax(1).cast(s.dtype)
    loss = nll_loss(ctx, log_prob, labels, weight)
    if ctx.n_outputs > 1 and ctx.node.output[1]:
        return loss, log_prob
    return loss
