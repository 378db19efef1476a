"""The loss modules, torch's names and constructor arguments, each calling its function in
losses.py with the module's settings:

    criterion = CrossEntropyLoss(weight=w, label_smoothing=0.1)
    loss = criterion(logits, target)

A `weight` (and BCEWithLogitsLoss's `pos_weight`) is a buffer, as in torch's state_dict.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from picograd.frontend.lazy import shape_error
from picograd.frontend.tensor import Tensor
from picograd.nn import losses as L
from picograd.nn import losses_more as LM
from picograd.nn.module import Module


class _Loss(Module):
    """reduction, with torch's legacy size_average/reduce folded into it."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean"):
        super().__init__()
        self.reduction = L._reduction(type(self).__name__, size_average, reduce, reduction,
                                      (*L._REDUCTIONS, "batchmean"))

    def extra_repr(self) -> str:
        return ""


class _WeightedLoss(_Loss):
    weight: Tensor | None
    pos_weight: Tensor | None

    def _buffer(self, name: str, tensor: Tensor | None) -> None:
        if tensor is None:
            object.__setattr__(self, name, None)
        else:
            self.register_buffer(name, tensor)

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self._buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_WeightedLoss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None):
        super().__init__(weight, size_average, reduce, reduction)
        self._buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.multilabel_soft_margin_loss(input, target, self.weight,
                                             reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                   reduction=self.reduction)


_LEGACY = ("size_average", "reduce", "reduction")


def _simple(name: str, function: Any, order: tuple[str, ...] = _LEGACY,
            **settings: Any) -> Any:
    """A loss module whose forward is `function(*inputs, **settings, reduction=...)`, its
    constructor taking the settings (torch's names and defaults) and the reduction, in
    torch's positional `order`."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        values = dict(settings)
        legacy: dict[str, Any] = {}
        if len(args) > len(order):
            raise TypeError(f"{name}() takes at most {len(order)} positional arguments")
        for key, value in zip(order, args, strict=False):
            kwargs[key] = value
        for key in ("size_average", "reduce", "reduction"):
            if key in kwargs:
                legacy[key] = kwargs.pop(key)
        for key, value in kwargs.items():
            if key not in values:
                raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
            values[key] = value
        _Loss.__init__(self, legacy.get("size_average"), legacy.get("reduce"),
                       legacy.get("reduction", "mean"))
        for key, value in values.items():
            setattr(self, key, value)

    def forward(self: Any, *inputs: Tensor) -> Tensor:
        values = {key: getattr(self, key) for key in settings}
        return function(*inputs, **values, reduction=self.reduction)

    return type(name, (_Loss,), {"__init__": __init__, "forward": forward,
                                 "__doc__": f"torch.nn.{name}: {function.__name__}."})


MSELoss = _simple("MSELoss", L.mse_loss)
L1Loss = _simple("L1Loss", L.l1_loss)
SmoothL1Loss = _simple("SmoothL1Loss", L.smooth_l1_loss, (*_LEGACY, "beta"), beta=1.0)
HuberLoss = _simple("HuberLoss", L.huber_loss, ("reduction", "delta"), delta=1.0)
KLDivLoss = _simple("KLDivLoss", L.kl_div, (*_LEGACY, "log_target"), log_target=False)
SoftMarginLoss = _simple("SoftMarginLoss", L.soft_margin_loss)
HingeEmbeddingLoss = _simple("HingeEmbeddingLoss", L.hinge_embedding_loss,
                             ("margin", *_LEGACY), margin=1.0)
MarginRankingLoss = _simple("MarginRankingLoss", L.margin_ranking_loss, ("margin", *_LEGACY),
                            margin=0.0)
CosineEmbeddingLoss = _simple("CosineEmbeddingLoss", L.cosine_embedding_loss,
                              ("margin", *_LEGACY), margin=0.0)
TripletMarginLoss = _simple("TripletMarginLoss", L.triplet_margin_loss,
                            ("margin", "p", "eps", "swap", *_LEGACY), margin=1.0, p=2.0,
                            eps=1e-6, swap=False)
PoissonNLLLoss = _simple("PoissonNLLLoss", L.poisson_nll_loss,
                         ("log_input", "full", "size_average", "eps", "reduce", "reduction"),
                         log_input=True, full=False, eps=1e-8)
GaussianNLLLoss = _simple("GaussianNLLLoss", L.gaussian_nll_loss, (), full=False, eps=1e-6)


# ── the losses of losses_more.py, and torch's deprecated NLLLoss2d ───────────


class CTCLoss(_Loss):
    """torch.nn.CTCLoss: ctc_loss (losses_more.py) with the module's blank and
    zero_infinity.

        criterion = CTCLoss(blank=0, zero_infinity=True)
        loss = criterion(log_probs, targets, input_lengths, target_lengths)
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor,
                input_lengths: Sequence[int] | Tensor,
                target_lengths: Sequence[int] | Tensor) -> Tensor:
        return LM.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                           self.reduction, self.zero_infinity)


MultiLabelMarginLoss = _simple("MultiLabelMarginLoss", LM.multilabel_margin_loss)


class TripletMarginWithDistanceLoss(_Loss):
    """torch.nn.TripletMarginWithDistanceLoss: triplet_margin_with_distance_loss
    (losses_more.py); keyword-only arguments, as torch's. Without a distance_function
    it is pairwise_distance (torch keeps a PairwiseDistance() module there; here the
    attribute stays None).

        criterion = TripletMarginWithDistanceLoss(distance_function=my_distance, margin=0.5)
    """

    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                 margin: float = 1.0, swap: bool = False, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise shape_error(type(self).__name__, f"expected margin to be greater than 0, "
                                                   f"got {margin} instead")
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return LM.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """torch.nn.NLLLoss2d: NLLLoss under its deprecated name (a FutureWarning when made,
    as torch's)."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
