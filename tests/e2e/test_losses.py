"""Every loss (picograd.nn.losses) and loss module (picograd.nn.loss_layers) against torch:
the value and the gradients of the float inputs on every device, over extra dims, class
weights, ignore_index, label smoothing, probability targets, pos_weight and reductions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd import nn
from picograd.nn import functional as F

torch = pytest.importorskip("torch", reason="torch is the oracle of the loss tests")
TF = torch.nn.functional

rng = np.random.default_rng(3)


def _f(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _classes(c: int, *shape: int) -> np.ndarray:
    return rng.integers(0, c, shape).astype(np.int32)


def _sign(*shape: int) -> np.ndarray:
    """Targets of -1 and 1, without a gradient (float64, see `_const`)."""
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0)


def _probs(*shape: int) -> np.ndarray:
    e = np.exp(_f(*shape))
    return (e / e.sum(1, keepdims=True)).astype(np.float32)


def _const(a: np.ndarray) -> np.ndarray:
    """Marks an input without a gradient (class weights): float64 here, float32 when used."""
    return a.astype(np.float64)


W5 = _const(rng.uniform(0.2, 2.0, 5))
CLASSES_IGNORED = _classes(5, 3, 4)
CLASSES_IGNORED[0, 1] = CLASSES_IGNORED[2, 3] = -100

# name: (ours, torch's, inputs; float32 inputs get gradients, float64 ones are constants,
# int32 ones class targets)
CASES: dict[str, tuple[Callable, Callable, list[np.ndarray]]] = {
    "ce_extra_dims_weight_ignore_smooth": (
        lambda x, t, w: F.cross_entropy(x, t, w, label_smoothing=0.2),
        lambda x, t, w: TF.cross_entropy(x, t, w, label_smoothing=0.2),
        [_f(3, 5, 4), CLASSES_IGNORED, W5]),
    "ce_probability_targets_weight": (
        lambda x, t, w: F.cross_entropy(x, t, w, label_smoothing=0.1, reduction="sum"),
        lambda x, t, w: TF.cross_entropy(x, t, w, label_smoothing=0.1, reduction="sum"),
        [_f(4, 5, 2), _probs(4, 5, 2), W5]),
    "ce_unbatched": (F.cross_entropy, TF.cross_entropy, [_f(5), np.array(3, np.int32)]),
    "nll_2d_weight_none": (
        lambda x, t, w: F.nll_loss(x, t, w, reduction="none"),
        lambda x, t, w: TF.nll_loss(x, t, w, reduction="none"),
        [_f(2, 5, 3, 2), _classes(5, 2, 3, 2), W5]),
    "nll_weight_mean_ignore": (
        lambda x, t, w: F.nll_loss(x, t, w, ignore_index=1),
        lambda x, t, w: TF.nll_loss(x, t, w, ignore_index=1),
        [_f(6, 5), np.array([1, 0, 4, 1, 2, 3], np.int32), W5]),
    "bce_weight": (F.binary_cross_entropy, TF.binary_cross_entropy,
                   [rng.uniform(0.05, 0.95, (4, 3)).astype(np.float32),
                    _const(rng.uniform(0, 1, (4, 3))), _const(_f(3))]),
    "bce_logits_pos_weight": (
        lambda x, t, w, pw: F.binary_cross_entropy_with_logits(x, t, w, pos_weight=pw),
        lambda x, t, w, pw: TF.binary_cross_entropy_with_logits(x, t, w, pos_weight=pw),
        [_f(4, 3) * 4, _const(rng.uniform(0, 1, (4, 3))), _const(_f(4, 1)),
         _const(rng.uniform(0.5, 3, 3))]),
    "mse_sum": (lambda a, b: F.mse_loss(a, b, reduction="sum"),
                lambda a, b: TF.mse_loss(a, b, reduction="sum"), [_f(3, 4), _f(3, 4)]),
    "l1": (F.l1_loss, TF.l1_loss, [_f(3, 4), _f(3, 4)]),
    "smooth_l1_beta": (lambda a, b: F.smooth_l1_loss(a, b, beta=0.5),
                       lambda a, b: TF.smooth_l1_loss(a, b, beta=0.5), [_f(3, 4), _f(3, 4)]),
    "huber_delta_none": (lambda a, b: F.huber_loss(a, b, "none", 0.7),
                         lambda a, b: TF.huber_loss(a, b, "none", 0.7), [_f(3, 4), _f(3, 4)]),
    "kl_div_batchmean": (lambda a, b: F.kl_div(a, b, reduction="batchmean"),
                         lambda a, b: TF.kl_div(a, b, reduction="batchmean"),
                         [np.log(_probs(3, 4)), _const(np.concatenate(
                             [_probs(2, 4), np.array([[0.0, 0.5, 0.5, 0.0]], np.float32)]))]),
    "kl_div_log_target": (lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True),
                          lambda a, b: TF.kl_div(a, b, reduction="sum", log_target=True),
                          [np.log(_probs(3, 4)), np.log(_probs(3, 4))]),
    "cosine_similarity": (lambda a, b: F.cosine_similarity(a, b, 1),
                          lambda a, b: TF.cosine_similarity(a, b, 1), [_f(3, 4, 2), _f(3, 4, 2)]),
    "pairwise_distance_p3": (lambda a, b: F.pairwise_distance(a, b, 3.0),
                             lambda a, b: TF.pairwise_distance(a, b, 3.0), [_f(3, 4), _f(3, 4)]),
    "cosine_embedding": (lambda a, b, y: F.cosine_embedding_loss(a, b, y, 0.2),
                         lambda a, b, y: TF.cosine_embedding_loss(a, b, y, 0.2),
                         [_f(5, 4), _f(5, 4), _sign(5)]),
    "triplet_swap": (lambda a, p, n: F.triplet_margin_loss(a, p, n, 0.5, swap=True),
                     lambda a, p, n: TF.triplet_margin_loss(a, p, n, 0.5, swap=True),
                     [_f(4, 3), _f(4, 3), _f(4, 3)]),
    "margin_ranking": (lambda a, b, y: F.margin_ranking_loss(a, b, y, 0.3),
                       lambda a, b, y: TF.margin_ranking_loss(a, b, y, 0.3),
                       [_f(6), _f(6), _sign(6)]),
    "hinge_embedding": (F.hinge_embedding_loss, TF.hinge_embedding_loss, [_f(3, 4), _sign(3, 4)]),
    "soft_margin": (F.soft_margin_loss, TF.soft_margin_loss, [_f(3, 4), _sign(3, 4)]),
    "multilabel_soft_margin_weight": (
        F.multilabel_soft_margin_loss, TF.multilabel_soft_margin_loss,
        [_f(3, 4), _const(rng.integers(0, 2, (3, 4))), _const(_f(4))]),
    "multi_margin_p2_weight": (
        lambda x, t, w: F.multi_margin_loss(x, t, 2, 0.7, w),
        lambda x, t, w: TF.multi_margin_loss(x, t, 2, 0.7, w), [_f(4, 5), _classes(5, 4), W5]),
    "poisson_full": (lambda x, y: F.poisson_nll_loss(x, y, full=True),
                     lambda x, y: TF.poisson_nll_loss(x, y, full=True),
                     [_f(3, 4), _const(rng.uniform(0, 4, (3, 4)))]),
    "poisson_not_log": (lambda x, y: F.poisson_nll_loss(x, y, log_input=False),
                        lambda x, y: TF.poisson_nll_loss(x, y, log_input=False),
                        [rng.uniform(0.1, 3, (3, 4)).astype(np.float32),
                         _const(rng.uniform(0, 4, (3, 4)))]),
    "gaussian_nll": (lambda x, y, v: F.gaussian_nll_loss(x, y, v, full=True),
                     lambda x, y, v: TF.gaussian_nll_loss(x, y, v, full=True),
                     [_f(3, 4), _f(3, 4), np.concatenate(
                         [rng.uniform(0.1, 2, (2,)), [1e-9]]).astype(np.float32)]),
}


def _run(device: str, ours: Callable, theirs: Callable, arrays: list[np.ndarray]) -> None:
    mine = [pg.Tensor(a.astype(np.float32) if a.dtype == np.float64 else a, device=device,
                      requires_grad=a.dtype == np.float32) for a in arrays]
    refs = [torch.tensor(a, requires_grad=True) if a.dtype == np.float32 else
            torch.tensor(a.astype(np.float32)) if a.dtype == np.float64 else
            torch.from_numpy(a).long() for a in arrays]
    out, want = ours(*mine), theirs(*refs)
    assert out.shape == tuple(want.shape)
    upstream = _f(*out.shape)
    (out * pg.Tensor(upstream, device=device)).sum().backward()
    (want * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
    for t, r in zip(mine, refs, strict=True):
        if r.requires_grad:
            assert t.grad is not None
            np.testing.assert_allclose(t.grad.numpy(), r.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", list(CASES))
def test_loss_matches_torch(device: str, name: str) -> None:
    ours, theirs, arrays = CASES[name]
    _run(device, ours, theirs, arrays)


def _module_pair(ours: Any, theirs: Any, arrays: list[np.ndarray]) -> None:
    _run("CPU:LLVM", ours, theirs, arrays)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@pytest.mark.filterwarnings("ignore:size_average and reduce")
def test_loss_modules_match_torch() -> None:
    w = torch.tensor(W5.astype(np.float32))
    _module_pair(nn.CrossEntropyLoss(pg.Tensor(W5.astype(np.float32)), ignore_index=2,
                                     label_smoothing=0.1),
                 torch.nn.CrossEntropyLoss(w, ignore_index=2, label_smoothing=0.1),
                 [_f(4, 5), _classes(5, 4)])
    _module_pair(nn.NLLLoss(reduction="sum"), torch.nn.NLLLoss(reduction="sum"),
                 [_f(4, 5), _classes(5, 4)])
    pos = rng.uniform(0.5, 2, 3).astype(np.float32)
    _module_pair(nn.BCEWithLogitsLoss(pos_weight=pg.Tensor(pos)),
                 torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pos)),
                 [_f(2, 3), _const(rng.uniform(0, 1, (2, 3)))])
    _module_pair(nn.BCELoss(), torch.nn.BCELoss(),
                 [rng.uniform(0.1, 0.9, (2, 3)).astype(np.float32),
                  _const(rng.uniform(0, 1, (2, 3)))])
    pairs = [(nn.MSELoss(), torch.nn.MSELoss()), (nn.L1Loss(reduction="sum"),
                                                  torch.nn.L1Loss(reduction="sum")),
             (nn.SmoothL1Loss(beta=0.3), torch.nn.SmoothL1Loss(beta=0.3)),
             (nn.HuberLoss(delta=0.4), torch.nn.HuberLoss(delta=0.4)),
             (nn.SoftMarginLoss(), torch.nn.SoftMarginLoss()),
             (nn.MSELoss(None, False), torch.nn.MSELoss(None, False))]
    for ours, theirs in pairs:
        _module_pair(ours, theirs, [_f(3, 4), _sign(3, 4)])
    _module_pair(nn.KLDivLoss(reduction="batchmean", log_target=True),
                 torch.nn.KLDivLoss(reduction="batchmean", log_target=True),
                 [np.log(_probs(3, 4)), np.log(_probs(3, 4))])
    _module_pair(nn.TripletMarginLoss(0.5, p=1.0), torch.nn.TripletMarginLoss(0.5, p=1.0),
                 [_f(4, 3), _f(4, 3), _f(4, 3)])
    _module_pair(nn.CosineEmbeddingLoss(0.1), torch.nn.CosineEmbeddingLoss(0.1),
                 [_f(4, 3), _f(4, 3), _sign(4)])
    _module_pair(nn.MarginRankingLoss(0.1), torch.nn.MarginRankingLoss(0.1),
                 [_f(4), _f(4), _sign(4)])
    _module_pair(nn.HingeEmbeddingLoss(0.5), torch.nn.HingeEmbeddingLoss(0.5),
                 [_f(4), _sign(4)])
    _module_pair(nn.MultiMarginLoss(margin=0.5), torch.nn.MultiMarginLoss(margin=0.5),
                 [_f(4, 5), _classes(5, 4)])
    _module_pair(nn.MultiLabelSoftMarginLoss(), torch.nn.MultiLabelSoftMarginLoss(),
                 [_f(3, 4), _const(rng.integers(0, 2, (3, 4)))])
    _module_pair(nn.PoissonNLLLoss(), torch.nn.PoissonNLLLoss(),
                 [_f(3, 4), _const(rng.uniform(0, 4, (3, 4)))])
    _module_pair(nn.GaussianNLLLoss(), torch.nn.GaussianNLLLoss(),
                 [_f(3, 4), _f(3, 4), rng.uniform(0.1, 1, (3, 4)).astype(np.float32)])


@pytest.mark.parametrize(("make", "words"), [
    (lambda: F.cross_entropy(pg.Tensor(_f(3, 5, 2)), pg.Tensor(_classes(5, 3))),
     ("cross_entropy", "(3, 5, 2)", "(3,)")),
    (lambda: F.nll_loss(pg.Tensor(_f(3, 5)), pg.Tensor(_classes(5, 3)), pg.Tensor(_f(4))),
     ("nll_loss", "weight", "(4,)")),
    (lambda: F.cross_entropy(pg.Tensor(_f(3, 5)), pg.Tensor(_f(3, 4))),
     ("cross_entropy", "probability targets")),
    (lambda: F.l1_loss(pg.Tensor(_f(3)), pg.Tensor(_f(3)), reduction="avg"),
     ("l1_loss", "reduction")),
])
def test_errors_name_the_op(make: Any, words: tuple[str, ...]) -> None:
    with pytest.raises(pg.ShapeError) as info:
        make()
    for word in words:
        assert word in str(info.value)
