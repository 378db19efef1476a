"""The losses losses.py does not have, with torch's semantics and argument order:

    ctc_loss                           connectionist temporal classification (alpha-beta
                                       recursion in log space, torch's own gradient)
    multilabel_margin_loss             class-index targets ended by the first -1
    triplet_margin_with_distance_loss  triplet margin loss over any distance function

Example:

    log_probs = logits.log_softmax(2)                       # (T, N, C)
    loss = ctc_loss(log_probs, targets, [50] * 16, target_lengths, blank=0)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from picograd.frontend.gc_pause import gc_paused
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import (
    argument_type_error,
    dtype_error,
    shape_error,
    unimplemented_error,
)
from picograd.frontend.ops_shape import cat, pad, stack
from picograd.frontend.tensor import Tensor
from picograd.nn.distance import pairwise_distance
from picograd.nn.losses import _REDUCTIONS, _reduce, _reduction

# log(0) in the recursions: finite, so exp(_NEG - m) is 0 and so are its gradients (an
# -inf would make them 0 * inf = NaN); a likelihood below _NEG / 2 means no alignment
_NEG = -1e30


# ── ctc_loss ─────────────────────────────────────────────────────────────────


def _host_lengths(op: str, name: str, lengths: Any) -> list[int]:
    """Lengths as torch takes them: a sequence of ints, or an int tensor (read here)."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.is_float or lengths.dtype.is_bool:
            raise dtype_error(op, f"{name} must be integral, got {lengths.dtype.name}")
        return [int(v) for v in lengths.numpy().reshape(-1)]
    try:
        if isinstance(lengths, list | tuple):
            return [operator.index(v) for v in lengths]
    except TypeError:
        pass
    raise argument_type_error(op, f"{name} must be a list or tuple of ints or an int tensor"
                                  f", got {type(lengths).__name__}")


def _check_ctc(op: str, log_probs: Any, targets: Any, il: list[int], tl: list[int],
               blank: int) -> None:
    """torch's argument checks, with its messages' facts (log_probs already (T, N, C))."""
    t_max, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise shape_error(op, f"blank must be in label range [0, {classes}), got {blank}")
    if len(il) != batch or len(tl) != batch:
        raise shape_error(op, f"input_lengths and target_lengths must have one entry per "
                              f"sample ({batch}), got {len(il)} and {len(tl)}")
    if min(tl, default=0) < 0 or min(il, default=0) < 0:
        raise shape_error(op, f"lengths must be at least 0, got input_lengths {il} and "
                              f"target_lengths {tl}")
    if max(il, default=0) > t_max:
        raise shape_error(op, f"input_lengths must be at most {t_max}, got {max(il)}")
    if targets.ndim == 1 and targets.shape[0] != sum(tl):
        raise shape_error(op, f"concatenated targets must hold sum(target_lengths) = "
                              f"{sum(tl)} labels, got {targets.shape[0]}")
    if targets.ndim == 2 and (targets.shape[0] != batch or targets.shape[1] < max(tl)):
        raise shape_error(op, f"padded targets must be (N, >= max(target_lengths)) = "
                              f"({batch}, >= {max(tl)}), got {targets.shape}")


def _labels(targets: Tensor, tl: list[int], blank: int, classes: int) -> Tensor:
    """The extended label sequences (N, 2 S + 1), S = max(tl): blank, l1, blank, l2, ...,
    blank; blank past each sample's own 2 tl + 1 (padding the recursion never reads)."""
    batch, s = len(tl), max(tl)
    lengths = np.array(tl)
    dev = targets.device
    if s == 0:
        return Tensor(np.full((batch, 1), blank, np.int32), device=dev)
    k = np.arange(s)
    if targets.ndim == 1:  # concatenated: sample n's labels start at the sum of those before
        offsets = np.cumsum(lengths) - lengths
        at = offsets[:, None] + np.minimum(k[None, :], np.maximum(lengths - 1, 0)[:, None])
        labels = targets.take(Tensor(at.astype(np.int32), device=dev))
    else:
        labels = targets[:, :s]
    labels = Tensor(k[None, :] < lengths[:, None], device=dev).where(labels.int(), blank)
    labels = labels._checked_index("ctc_loss", labels, classes, negative=False, noun="target")
    blanks = Tensor(np.full((batch, s), blank, np.int32), device=dev)
    pairs = stack([blanks, labels], 2).reshape(batch, 2 * s)
    return cat([pairs, blanks[:, :1]], 1)


def _skips(ext: Tensor) -> tuple[Tensor, Tensor]:
    """Whether state s may be reached from s - 2, and whether s + 2 from s (N, L): the two
    states hold different labels (never for blanks)."""
    if ext.shape[1] < 3:
        none = Tensor(np.zeros(ext.shape, bool), device=ext.device)
        return none, none
    edge = Tensor(np.zeros((ext.shape[0], 2), bool), device=ext.device)
    differ = ext[:, 2:] != ext[:, :-2]
    return cat([edge, differ], 1), cat([differ, edge], 1)


def _lse3(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    m = a.maximum(b).maximum(c)
    return ((a - m).exp() + (b - m).exp() + (c - m).exp()).log() + m


def _shift(x: Tensor, k: int) -> Tensor:
    """x moved k states right (left for k < 0) along the last dim, _NEG coming in."""
    if abs(k) >= x.shape[-1]:
        return Tensor(np.full(x.shape, _NEG, x.dtype.np), device=x.device)
    return pad(x, (k, -k), value=_NEG)


def _alphas(emit: Tensor, skip: Tensor) -> list[Tensor]:
    """log alpha_t (N, L) for every t: paths of labels ending in state s at t. `emit`
    (N, T, L) holds log_probs at each state's label, `skip` (N, L) whether state s may be
    reached from s - 2 (a label unlike the one before it)."""
    states = np.arange(emit.shape[2])
    alpha = Tensor(states < 2, device=emit.device).where(emit[:, 0], _NEG)
    alphas = [alpha]
    for t in range(1, emit.shape[1]):
        alpha = _lse3(alpha, _shift(alpha, 1), skip.where(_shift(alpha, 2), _NEG)) + emit[:, t]
        alphas.append(alpha)
    return alphas


def _betas(emit: Tensor, skip_from: Tensor, il: list[int], final: Tensor) -> list[Tensor]:
    """log beta_t (N, L): paths from state s at t to the end, s's emission included;
    sample n's recursion starts at t = il[n] - 1 from its last two states (`final`).
    `skip_from` (N, L): whether state s + 2 may be reached from s."""
    start = np.array(il) - 1
    beta = Tensor(np.full(emit.shape[::2], _NEG, emit.dtype.np), device=emit.device)
    betas = [beta] * emit.shape[1]
    for t in reversed(range(emit.shape[1])):
        e = emit[:, t]
        if t < emit.shape[1] - 1:
            beta = _lse3(beta, _shift(beta, -1), skip_from.where(_shift(beta, -2), _NEG)) + e
        # (a select at every step, whatever the lengths: one graph for every batch of a shape)
        beta = Tensor((start == t)[:, None], device=e.device).where(final.where(e, _NEG), beta)
        betas[t] = beta
    return betas


class _Alignments:
    """The forward recursion of one batch, log_probs (T, N, C) and extended labels `ext`
    (N, L), and what the backward reuses of it: `ll` (N,) is log p(target | log_probs),
    below _NEG / 2 where no alignment fits."""

    def __init__(self, log_probs: Tensor, ext: Tensor, il: list[int], tl: list[int]):
        t_max, batch, states = log_probs.shape[0], log_probs.shape[1], ext.shape[1]
        self.log_probs, self.ext, self.il, self.tl = log_probs, ext, il, tl
        dev, lengths, inputs = log_probs.device, np.array(tl), np.array(il)
        s = np.arange(states)
        self.final = Tensor((s == 2 * lengths[:, None]) | (s == 2 * lengths[:, None] - 1),
                            device=dev)
        self.emit = log_probs.permute(1, 0, 2).gather(
            2, ext.unsqueeze(1).expand(batch, t_max, states)).maximum(_NEG)  # (N, T, L)
        skip, self.skip_from = _skips(ext)
        self.alphas = stack(_alphas(self.emit, skip), 1)  # (N, T, L)
        at = np.broadcast_to(np.maximum(inputs - 1, 0)[:, None, None], (batch, 1, states))
        last = self.alphas.gather(1, Tensor(at.astype(np.int32), device=dev))[:, 0]
        ll = self.final.where(last, _NEG).logsumexp(1)
        # no frames: p = 1 for an empty target, else 0
        ll = Tensor((inputs == 0) & (lengths == 0), device=dev).where(
            0.0, Tensor(inputs == 0, device=dev).where(_NEG, ll))
        self.ll, self.impossible = ll, ll < _NEG / 2

    def _occupancy(self) -> Tensor:
        """alpha_t(s) beta_t(s) / y_t(s) / p (N, T, L): the share of the alignments that
        are in state s at t (0 past a sample's input length: beta is _NEG there)."""
        betas = stack(_betas(self.emit, self.skip_from, self.il, self.final), 1)
        batch, t_max, states = self.emit.shape
        occupancy = (self.alphas + betas - self.emit - self.ll.reshape(batch, 1, 1)).exp()
        # torch assigns (does not add) the last label's share at the last frame, dropping
        # the final blank's where that label is the blank itself (which its docs rule out)
        lengths, inputs = np.array(self.tl), np.array(self.il)
        at = np.maximum(2 * lengths - 1, 0)[:, None]
        last_is_blank = self.ext.gather(1, Tensor(at.astype(np.int32), device=self.ext.device))
        t, s = np.arange(t_max)[None, :, None], np.arange(states)[None, None, :]
        end = ((t == inputs[:, None, None] - 1) & (s == 2 * lengths[:, None, None])
               & (lengths[:, None, None] > 0))
        dropped = Tensor(end, device=self.ext.device) & (
            last_is_blank == self.ext[:, :1]).reshape(batch, 1, 1)  # ext[:, 0] is the blank
        return dropped.where(0.0, occupancy)

    def gradient(self, g: Tensor, zero_infinity: bool) -> Tensor:
        """torch's rule (LossCTC.cpp), for an upstream `g` (N,): exp(lp) minus the share of
        the alignments that emit lp's class at t, times g. The exp(lp) term is the gradient
        of log_softmax's normaliser: right through a log_softmax, not for log_probs taken
        as they are, but it is what torch returns. NaN (torch's inf - inf) at a log_prob of
        -inf and for a sample with no alignment; 0 past the input lengths and, with
        zero_infinity, for a sample with no alignment."""
        lp = self.log_probs
        t_max, batch, classes = lp.shape
        classes_of = (self.ext.unsqueeze(-1) == Tensor(
            np.arange(classes, dtype=np.int32), device=lp.device)).cast(lp.dtype)
        per_class = (self._occupancy() @ classes_of).permute(1, 0, 2)  # (T, N, C)
        grad = lp.isneginf().where(float("nan"), (lp.exp() - per_class) * g.reshape(1, batch, 1))
        grad = self.impossible.reshape(1, batch, 1).where(
            0.0 if zero_infinity else float("nan"), grad)
        active = np.arange(t_max)[:, None, None] < np.array(self.il)[None, :, None]
        return Tensor(active, device=lp.device).where(grad, 0.0)


def _nll(log_probs: Tensor, ext: Tensor, il: list[int], tl: list[int],
         zero_infinity: bool) -> Tensor:
    """-log p(target | log_probs) per sample (N,) for log_probs (T, N, C), inf where no
    alignment fits (0 with zero_infinity), with torch's gradient (`_Alignments`)."""
    with no_grad(), gc_paused(promote=True):
        paths = _Alignments(log_probs, ext, il, tl)
        nll = paths.impossible.where(0.0 if zero_infinity else float("inf"), -paths.ll)
    return nll._with_gradient((log_probs,), lambda g: (paths.gradient(g, zero_infinity),))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Sequence[int] | Tensor,
             target_lengths: Sequence[int] | Tensor, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss (torch.nn.functional.ctc_loss): -log of the summed probability of
    every alignment of each target to its input frames. log_probs (T, N, C) or unbatched
    (T, C) (log_softmax outputs); targets padded (N, S) or concatenated (sum of lengths,);
    lengths as lists/tuples of ints or int tensors (read on the host). "mean" divides
    each loss by its target length (at least 1), then averages; "none" gives (N,).
    `zero_infinity` makes impossible alignments' losses (inf) and gradients 0.

    >>> ctc_loss(lp.log_softmax(2), targets, [50] * 16, target_lengths)
    """
    op = "ctc_loss"
    red = _reduction(op, None, None, reduction)
    if not isinstance(log_probs, Tensor) or not isinstance(targets, Tensor):
        raise argument_type_error(op, "log_probs and targets must be Tensors")
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise argument_type_error(op, "input_lengths and target_lengths must both be "
                                      "sequences of ints or both be int tensors")
    il = _host_lengths(op, "input_lengths", input_lengths)
    tl = _host_lengths(op, "target_lengths", target_lengths)
    if log_probs.dtype.name not in ("float32", "float64"):
        raise unimplemented_error(op, f"log_probs must be float32 or float64, got "
                                      f"{log_probs.dtype.name}", dtype=True)
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if lp.ndim != 3:
        raise shape_error(op, f"log_probs must be (T, N, C) or (T, C), got {log_probs.shape}")
    if lp.numel() == 0:
        raise shape_error(op, f"log_probs tensor must not be empty, got {log_probs.shape}")
    if targets.ndim not in (1, 2):
        raise shape_error(op, f"targets must be 1-D or 2-D, got {targets.shape}")
    _check_ctc(op, lp, targets, il, tl, blank)
    ext = _labels(targets, tl, blank, lp.shape[2])
    losses = _nll(lp, ext, il, tl, zero_infinity)
    if red == "mean":
        return (losses / Tensor(np.maximum(np.array(tl), 1).astype(lp.dtype.np),
                                device=lp.device)).mean()
    if red == "sum":
        return losses.sum()
    return losses if batched else losses.squeeze(0)


# ── multilabel_margin_loss ───────────────────────────────────────────────────


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """sum over the target classes j and the other classes i of max(0, 1 - (x[j] - x[i])),
    / C. `target` has the input's shape and holds class indices, the first -1 ending
    them (torch.nn.functional.multilabel_margin_loss). input (C,), (N, C) or 0-d.

    >>> multilabel_margin_loss(x, Tensor([[3, 0, -1, 1]]))   # targets 3 and 0
    """
    op = "multilabel_margin_loss"
    red = _reduction(op, size_average, reduce, reduction)
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise argument_type_error(op, "input and target must be Tensors")
    if not input.dtype.is_float:
        raise unimplemented_error(op, f"input must be a float tensor, got {input.dtype.name}",
                                  dtype=True)
    if target.dtype.is_float or target.dtype.is_bool:
        raise dtype_error(op, f"target must hold class indices, got {target.dtype.name}")
    if input.ndim > 2 or (input.ndim and input.shape[-1] == 0):
        raise shape_error(op, f"expected a non-empty vector or matrix (with an optional 0-dim"
                              f" batch size), got {input.shape}")
    classes = input.shape[-1] if input.ndim else 1
    if (target.ndim > 1 or target.numel() != classes) if input.ndim <= 1 else (
            target.shape != input.shape):
        raise shape_error(op, f"inconsistent target size {target.shape} for input of size "
                              f"{input.shape}")
    scores, labels = input.reshape(-1, classes), target.reshape(-1, classes)
    if scores.shape[0] == 0:  # no samples: torch's sum and mean are uninitialised memory
        return _reduce(scores.sum(1), "none") if red == "none" else _reduce(scores, red)
    labels = scores._checked_index(op, labels, classes, negative=False, ignore=-1,
                                   noun="target")
    kept = (labels < 0).int().cumsum(1) == 0  # before the first -1
    names = kept.unsqueeze(-1) & (labels.unsqueeze(-1) == Tensor(
        np.arange(classes, dtype=np.int32), device=input.device))  # (N, K, C): k names c
    picked = names.where(scores.unsqueeze(1), 0.0).sum(-1, keepdim=True)  # x[target k]
    z = 1.0 - picked + scores.unsqueeze(1)
    counted = kept.unsqueeze(-1) & ~names.any(1, keepdim=True) & (z > 0)  # torch's z > 0
    losses = counted.where(z, 0.0).sum((1, 2)) / classes
    if red == "none":
        return losses if input.ndim == 2 else losses.reshape(())
    return _reduce(losses, red)


# ── triplet_margin_with_distance_loss ────────────────────────────────────────


def triplet_margin_with_distance_loss(
        anchor: Tensor, positive: Tensor, negative: Tensor, *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0) for any distance d (default pairwise_distance);
    `swap` uses the smaller of d(a, n) and d(p, n)
    (torch.nn.functional.triplet_margin_with_distance_loss).

    >>> triplet_margin_with_distance_loss(a, p, n, distance_function=lambda x, y:
    ...     1 - cosine_similarity(x, y), margin=0.5)
    """
    op = "triplet_margin_with_distance_loss"
    if reduction not in _REDUCTIONS:
        raise shape_error(op, f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise shape_error(op, f"margin must be greater than 0, got {margin}")
    if not all(isinstance(t, Tensor) for t in (anchor, positive, negative)):
        raise argument_type_error(op, "anchor, positive and negative must be Tensors")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise shape_error(op, f"anchor, positive and negative must have the same number of "
                              f"dims, got {anchor.ndim}, {positive.ndim} and {negative.ndim}")
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    z = margin + d_pos - d_neg
    return _reduce((z < 0).where(0.0, z), reduction)  # clamp_min's: the gradient passes at 0
