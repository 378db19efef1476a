"""The layers and functions of distance.py, dropout_more.py, layers_more.py,
embedding_bag.py and functional_aliases.py against torch: values, gradients of the float
inputs and parameters, state dicts that load torch's, train vs eval, torch's warnings, and
the built-in error class torch raises for each mistake. Dropout is random: its tests check
the kept/dropped pattern against the formula and its statistics, not torch's stream."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F

from .helpers import assert_forward_and_grads_match

TF = torch.nn.functional
inf = math.inf


def _pair(shape: tuple[int, ...], seed: int = 0, device: str = "CPU"
          ) -> tuple[pg.Tensor, torch.Tensor]:
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return pg.Tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)


def _up(shape: Any, seed: int = 9) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(tuple(shape)).astype(np.float32)


def _messages(fn: Callable[[], Any]) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


# ── distances ───────────────────────────────────────────────────────────────

SHAPES = [((4, 5), (4, 5)), ((4, 5), (5,)), ((5,), (5,)), ((), ()), ((2, 3, 4), (3, 4))]


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, inf, -inf, 0.0, -1.0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(p: float, keepdim: bool) -> None:
    for k, (s1, s2) in enumerate(SHAPES):
        (x1, t1), (x2, t2) = _pair(s1, k), _pair(s2, k + 10)
        want = TF.pairwise_distance(t1, t2, p, keepdim=keepdim)
        got = F.pairwise_distance(x1, x2, p, keepdim=keepdim)
        if p == 0:  # a count: torch records no gradient, picograd's is 0
            np.testing.assert_array_equal(got.numpy(), want.detach().numpy())
            got.sum().backward()
            assert x1.grad is not None and not x1.grad.numpy().any()
            continue
        assert_forward_and_grads_match(got, want, [x1, x2], [t1, t2], _up(want.shape), "CPU")


def test_pairwise_distance_on_every_device(device: str) -> None:
    (x1, t1), (x2, t2) = _pair((6, 3), 1, device), _pair((6, 3), 2, device)
    want = TF.pairwise_distance(t1, t2)
    assert_forward_and_grads_match(F.pairwise_distance(x1, x2), want, [x1, x2], [t1, t2],
                                   _up(want.shape), device)


def test_pairwise_distance_of_integers_is_float() -> None:
    a = np.array([[1, 2, 3], [4, 5, 7]], np.int32)
    got = F.pairwise_distance(pg.Tensor(a), pg.Tensor(a[::-1].copy()))
    want = TF.pairwise_distance(torch.tensor(a), torch.tensor(a[::-1].copy()))
    assert got.dtype == pg.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("p", [2, 1, 0, 3.5, inf])
def test_pdist(p: float) -> None:
    x, tx = _pair((5, 3))
    want = TF.pdist(tx, p)
    assert_forward_and_grads_match(F.pdist(x, p), want, [x], [tx], _up(want.shape), "CPU")


def test_pdist_of_fewer_than_two_rows_and_of_repeated_rows() -> None:
    for shape in ((1, 3), (0, 3)):
        assert F.pdist(pg.zeros(*shape)).shape == tuple(TF.pdist(torch.zeros(shape)).shape)
    a = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 5.0]], np.float32)
    x, tx = pg.Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    # a zero distance has gradient 0, as torch's
    assert_forward_and_grads_match(F.pdist(x), TF.pdist(tx), [x], [tx],
                                   np.ones(3, np.float32), "CPU")
    for p in (0.5, 1.5):  # a zero difference in one coordinate: its share is 0, not NaN
        b = np.array([[1.0, 2.0], [1.0, 3.0], [0.0, 5.0]], np.float32)
        x, tx = pg.Tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
        assert_forward_and_grads_match(F.pdist(x, p), TF.pdist(tx, p), [x], [tx],
                                       np.ones(3, np.float32), "CPU")


def test_distance_layers() -> None:
    (x1, t1), (x2, t2) = _pair((4, 6), 1), _pair((4, 6), 2)
    for ours, theirs in ((nn.PairwiseDistance(p=1.5, keepdim=True),
                          torch.nn.PairwiseDistance(p=1.5, keepdim=True)),
                         (nn.CosineSimilarity(dim=0), torch.nn.CosineSimilarity(dim=0))):
        assert ours.state_dict() == {} and repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(x1, x2).numpy(), theirs(t1, t2).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    assert nn.PairwiseDistance().norm == torch.nn.PairwiseDistance().norm == 2.0
    assert nn.CosineSimilarity().eps == torch.nn.CosineSimilarity().eps


# ── Softmax2d, dropout ──────────────────────────────────────────────────────


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 4, 5)])
def test_softmax2d(shape: tuple[int, ...]) -> None:
    x, tx = _pair(shape)
    want = torch.nn.Softmax2d()(tx)
    assert_forward_and_grads_match(nn.Softmax2d()(x), want, [x], [tx], _up(shape), "CPU")


FEATURE_DROPOUTS = {"dropout1d": (F.dropout1d, TF.dropout1d),
                    "dropout2d": (F.dropout2d, TF.dropout2d),
                    "dropout3d": (F.dropout3d, TF.dropout3d)}


@pytest.mark.parametrize("name", FEATURE_DROPOUTS)
@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("training", [True, False])
def test_feature_dropout_ranks_warnings_and_errors_as_torch(name: str, ndim: int,
                                                           training: bool) -> None:
    """Every rank: torch's warnings (the same text), and an error where torch raises one;
    where both run, the same shape."""
    ours, theirs = FEATURE_DROPOUTS[name]
    shape = (3,) * ndim
    try:
        want_messages = _messages(lambda: theirs(torch.ones(shape), 0.5, training))
    except RuntimeError:
        with pytest.raises(RuntimeError), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours(pg.ones(*shape), 0.5, training)
        return
    got: list[pg.Tensor] = []
    assert _messages(lambda: got.append(ours(pg.ones(*shape), 0.5, training))) == \
        want_messages
    assert got[0].shape == shape


def _planes(out: np.ndarray, x: np.ndarray, scale: float, plane_dims: int) -> np.ndarray:
    """Whether each plane (the last `plane_dims` dims) was kept; asserts it is all kept
    (x * scale) or all dropped (0)."""
    lead = out.shape[:out.ndim - plane_dims]
    out2, x2 = out.reshape(*lead, -1), x.reshape(*lead, -1)
    kept = np.isclose(out2, x2 * scale, rtol=1e-6).all(-1)
    dropped = (out2 == 0).all(-1)
    assert (kept ^ dropped).all(), "a plane is partly kept"
    return np.asarray(kept)


@pytest.mark.parametrize("fn,shape,plane_dims", [
    (F.dropout1d, (32, 40, 3), 1), (F.dropout1d, (64, 5), 1),  # unbatched (C, L)
    (F.dropout2d, (16, 50, 2, 3), 2), (F.dropout2d, (32, 40, 3), 1),  # 3-D: (N, C, L)
    (F.dropout3d, (8, 50, 2, 2, 2), 3), (F.dropout3d, (80, 2, 2, 2), 3),  # unbatched
])
def test_feature_dropout_keeps_or_drops_whole_planes(fn: Any, shape: tuple[int, ...],
                                                     plane_dims: int) -> None:
    p = 0.3
    pg.manual_seed(4)
    a = np.random.default_rng(1).uniform(0.5, 2.0, shape).astype(np.float32)
    x = pg.Tensor(a, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropout2d's 3-D warning
        out = fn(x, p, training=True)
    out.sum().backward()
    kept = _planes(out.numpy(), a, 1 / (1 - p), plane_dims)
    assert abs(kept.mean() - (1 - p)) < 0.06, kept.mean()
    grad = x.grad.numpy().reshape(*kept.shape, -1)  # 1 / (1 - p) where kept, 0 elsewhere
    want = np.broadcast_to(np.where(kept[..., None], 1 / (1 - p), 0.0), grad.shape)
    np.testing.assert_allclose(grad, want, rtol=1e-6)


def test_dropout2d_of_2d_input_is_elementwise_and_seeded() -> None:
    a = np.ones((40, 50), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pg.manual_seed(7)
        first = F.dropout2d(pg.Tensor(a), 0.5).numpy()
        pg.manual_seed(7)
        again = F.dropout2d(pg.Tensor(a), 0.5).numpy()
    np.testing.assert_array_equal(first, again)  # the same seed, the same mask
    assert set(np.unique(first)) == {0.0, 2.0}
    assert not (first == first[:, :1]).all()  # not one draw per row
    assert abs((first == 0).mean() - 0.5) < 0.05


def test_dropout_eval_p0_and_p1() -> None:
    x = pg.Tensor(np.array([[[1.0, math.nan]], [[2.0, 3.0]]], np.float32))  # (2, 1, 2)
    tx = torch.tensor(x.numpy())
    for ours, theirs in ((F.dropout1d, TF.dropout1d), (F.dropout2d, TF.dropout2d),
                         (F.alpha_dropout, TF.alpha_dropout),
                         (F.feature_alpha_dropout, TF.feature_alpha_dropout)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # dropout2d's 3-D warning
            assert ours(x, 0.5, training=False) is x
            assert ours(x, 0.0, training=True) is x
            got, want = ours(x, 1.0, training=True), theirs(tx, 1.0, training=True)
        np.testing.assert_array_equal(got.numpy(), want.numpy())  # x * 0: the NaN stays
    assert F.alpha_dropout(x) is x  # torch's default: training=False
    assert F.feature_alpha_dropout(x) is x


ALPHA = 1.7580993408473766


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_formula_and_statistics(p: float) -> None:
    pg.manual_seed(2)
    a = np.random.default_rng(0).standard_normal(200_000).astype(np.float32)
    x = pg.Tensor(a, requires_grad=True)
    out = F.alpha_dropout(x, p, training=True)
    out.sum().backward()
    got = out.numpy()
    s = 1 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    kept = ~np.isclose(got, ALPHA * s * (p - 1), rtol=1e-6)  # the rest: the dropped value
    np.testing.assert_allclose(got[kept], s * a[kept] + ALPHA * s * p, rtol=1e-5, atol=1e-6)
    assert abs(kept.mean() - (1 - p)) < 0.01
    assert abs(got.mean()) < 0.02 and abs(got.std() - 1) < 0.02  # N(0, 1) stays N(0, 1)
    t = TF.alpha_dropout(torch.tensor(a), p, training=True).numpy()  # torch's: the same
    assert abs(t.mean() - got.mean()) < 0.03 and abs(t.std() - got.std()) < 0.03
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, s, 0.0), rtol=1e-6)


def test_feature_alpha_dropout_per_channel() -> None:
    p = 0.4
    pg.manual_seed(3)
    a = np.random.default_rng(0).standard_normal((20, 30, 4)).astype(np.float32)
    got = F.feature_alpha_dropout(pg.Tensor(a), p, training=True).numpy()
    s = 1 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    kept = np.isclose(got, s * a + ALPHA * s * p, rtol=1e-5, atol=1e-6).all(-1)
    dropped = np.isclose(got, ALPHA * s * (p - 1), rtol=1e-6).all(-1)
    assert (kept ^ dropped).all()
    assert abs(kept.mean() - (1 - p)) < 0.07
    with pytest.raises(RuntimeError):
        F.feature_alpha_dropout(pg.ones(5), p, training=True)


def test_dropout_layers_train_eval_and_repr() -> None:
    pairs = [(nn.Dropout1d(0.2), torch.nn.Dropout1d(0.2)), (nn.Dropout2d(), torch.nn.Dropout2d()),
             (nn.Dropout3d(0.1, inplace=True), torch.nn.Dropout3d(0.1, inplace=True)),
             (nn.AlphaDropout(0.3), torch.nn.AlphaDropout(0.3)),
             (nn.FeatureAlphaDropout(0.3), torch.nn.FeatureAlphaDropout(0.3))]
    for ours, theirs in pairs:
        rank = {nn.Dropout1d: 3, nn.Dropout2d: 4}.get(type(ours), 5)
        x = pg.Tensor(np.ones((2, 3, 2, 2, 2)[:rank], np.float32))
        assert repr(ours) == repr(theirs) and ours.state_dict() == {}
        assert ours.training and ours(x).shape == x.shape
        ours.eval()
        assert ours(x) is x
    with pytest.raises(ValueError):
        nn.Dropout2d(1.5)


def test_inplace_dropout_writes_the_input() -> None:
    leaf = pg.Tensor(np.ones((4, 6, 3), np.float32), requires_grad=True)
    y = leaf * 2
    pg.manual_seed(1)
    out = F.dropout1d(y, 0.5, training=True, inplace=True)
    assert out is y
    y.sum().backward()
    values = y.numpy()
    assert set(np.unique(values)) <= {0.0, 4.0}
    np.testing.assert_array_equal(leaf.grad.numpy(), values)  # d(2x * 2 mask)/dx = values
    with pytest.raises(RuntimeError):  # a leaf that requires grad, as torch
        F.dropout2d(pg.Tensor(np.ones((2, 3, 2, 2), np.float32), requires_grad=True), 0.5,
                    inplace=True)


# ── Bilinear, ChannelShuffle, upsampling ────────────────────────────────────


@pytest.mark.parametrize("s1,s2,bias", [((3, 4), (3, 5), True), ((2, 3, 4), (2, 3, 5), True),
                                        ((4,), (5,), True), ((3, 4), (3, 5), False),
                                        ((0, 4), (0, 5), True)])
def test_bilinear(s1: tuple[int, ...], s2: tuple[int, ...], bias: bool) -> None:
    (x1, t1), (x2, t2), (w, tw) = _pair(s1, 1), _pair(s2, 2), _pair((7, 4, 5), 3)
    b, tb = _pair((7,), 4)
    params, tparams = ([x1, x2, w, b], [t1, t2, tw, tb]) if bias else ([x1, x2, w],
                                                                       [t1, t2, tw])
    want = TF.bilinear(t1, t2, tw, tb if bias else None)
    assert_forward_and_grads_match(F.bilinear(x1, x2, w, b if bias else None), want, params,
                                   tparams, _up(want.shape), "CPU")


def test_bilinear_on_every_device(device: str) -> None:
    (x1, t1), (x2, t2) = _pair((3, 4), 1, device), _pair((3, 2), 2, device)
    (w, tw), (b, tb) = _pair((5, 4, 2), 3, device), _pair((5,), 4, device)
    want = TF.bilinear(t1, t2, tw, tb)
    assert_forward_and_grads_match(F.bilinear(x1, x2, w, b), want, [x1, x2, w, b],
                                   [t1, t2, tw, tb], _up(want.shape), device)


def test_bilinear_layer_state_dict_init_and_training() -> None:
    pg.manual_seed(0)
    ours, theirs = nn.Bilinear(20, 3, 6), torch.nn.Bilinear(20, 3, 6)
    assert repr(ours) == repr(theirs)
    assert {k: v.shape for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    bound = 1 / math.sqrt(20)  # torch's: 1 / sqrt(in1_features), for the bias too
    for v in ours.state_dict().values():
        a = np.abs(v.numpy())
        assert a.max() <= bound and a.max() > 0.8 * bound
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    (x1, t1), (x2, t2) = _pair((4, 20), 1), _pair((4, 3), 2)
    want = theirs(t1, t2)
    assert ours.bias is not None
    assert_forward_and_grads_match(ours(x1, x2), want, [x1, x2, ours.weight, ours.bias],
                                   [t1, t2, theirs.weight, theirs.bias], _up(want.shape),
                                   "CPU")
    assert list(nn.Bilinear(2, 3, 4, bias=False).state_dict()) == ["weight"]


@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 2), ((2, 6, 3, 2), 3), ((1, 8, 2, 1, 2), 4),
                                          ((2, 6, 3), 1), ((2, 0, 3), 2)])
def test_channel_shuffle(shape: tuple[int, ...], groups: int) -> None:
    x, tx = _pair(shape)
    want = TF.channel_shuffle(tx, groups)
    layer = nn.ChannelShuffle(groups)
    assert repr(layer) == repr(torch.nn.ChannelShuffle(groups))
    if 0 in shape:  # (torch's backward and integer kernel refuse no channels)
        assert F.channel_shuffle(x, groups).shape == tuple(want.shape)
        return
    assert_forward_and_grads_match(F.channel_shuffle(x, groups), want, [x], [tx],
                                   _up(shape), "CPU")
    ints = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    np.testing.assert_array_equal(layer(pg.Tensor(ints)).numpy(),
                                  torch.nn.ChannelShuffle(groups)(torch.tensor(ints)).numpy())


UPSAMPLING = {
    "nearest_scale": (lambda: nn.UpsamplingNearest2d(scale_factor=2),
                      lambda: torch.nn.UpsamplingNearest2d(scale_factor=2)),
    "nearest_size": (lambda: nn.UpsamplingNearest2d(size=(5, 7)),
                     lambda: torch.nn.UpsamplingNearest2d(size=(5, 7))),
    "bilinear_scale": (lambda: nn.UpsamplingBilinear2d(scale_factor=3),
                       lambda: torch.nn.UpsamplingBilinear2d(scale_factor=3)),
    "bilinear_size": (lambda: nn.UpsamplingBilinear2d(size=5),
                      lambda: torch.nn.UpsamplingBilinear2d(size=5)),
}


@pytest.mark.parametrize("name", UPSAMPLING)
def test_upsampling_layers(name: str) -> None:
    ours, theirs = (make() for make in UPSAMPLING[name])
    x, tx = _pair((2, 3, 3, 4))
    want = theirs(tx)
    assert_forward_and_grads_match(ours(x), want, [x], [tx], _up(want.shape), "CPU")
    assert ours.state_dict() == {}


@pytest.mark.parametrize("name,kwargs", [
    ("upsample", {"scale_factor": 2, "mode": "bilinear"}),
    ("upsample", {"size": (3, 5), "mode": "bicubic", "align_corners": True}),
    ("upsample_nearest", {"scale_factor": 2}), ("upsample_bilinear", {"size": (4, 6)})])
def test_deprecated_upsample_functions_warn_as_torch(name: str, kwargs: dict[str, Any]) -> None:
    x, tx = _pair((1, 2, 3, 3))
    got: list[pg.Tensor] = []
    want: list[torch.Tensor] = []
    assert _messages(lambda: got.append(getattr(F, name)(x, **kwargs))) == \
        _messages(lambda: want.append(getattr(TF, name)(tx, **kwargs)))
    assert_forward_and_grads_match(got[0], want[0], [x], [tx], _up(want[0].shape), "CPU")


# ── embedding_bag ───────────────────────────────────────────────────────────

INDICES = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 4], np.int32)
TABLE = np.random.default_rng(5).standard_normal((10, 3)).astype(np.float32)

BAGS: dict[str, dict[str, Any]] = {
    "offsets": {"offsets": [0, 4, 7]},
    "empty_bags": {"offsets": [0, 0, 3, 3, 10]},  # the last one runs from 10 to 10
    "include_last_offset": {"offsets": [0, 3, 3, 10], "include_last_offset": True},
    "padding_idx": {"offsets": [0, 3, 5], "padding_idx": 4},
    "padding_negative": {"offsets": [0, 2, 4], "padding_idx": -1},
    "only_padding": {"offsets": [0, 2, 3], "padding_idx": 4, "index": [4, 4, 4, 1, 2]},
    "two_d": {"shape": (2, 5)},
    "two_d_padding": {"shape": (5, 2), "padding_idx": 2},
    "empty_input": {"offsets": [0, 0], "index": []},
    "no_bags": {"offsets": []},
}


def _bag_args(lib: Any, case: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    index = np.asarray(case.get("index", INDICES), np.int32)
    if "shape" in case:
        index = index.reshape(case["shape"])
    kwargs = {k: v for k, v in case.items() if k not in ("index", "shape", "offsets")}
    if "offsets" in case:
        kwargs["offsets"] = lib.tensor(np.asarray(case["offsets"], np.int32))
    indices = lib.tensor(index) if lib is pg else torch.tensor(index).long()
    return indices, kwargs


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("case", BAGS)
def test_embedding_bag(mode: str, case: str) -> None:
    w, tw = pg.Tensor(TABLE, requires_grad=True), torch.tensor(TABLE, requires_grad=True)
    index, kwargs = _bag_args(pg, BAGS[case])
    got = F.embedding_bag(index, w, mode=mode, **kwargs)
    if case == "no_bags":  # torch 2.13 crashes (a segfault) in max and in backward here
        assert got.shape == (0, 3)
        got.sum().backward()
        assert w.grad is None or not w.grad.numpy().any()
        return
    tindex, tkwargs = _bag_args(torch, BAGS[case])
    want = TF.embedding_bag(tindex, tw, mode=mode, **tkwargs)
    assert_forward_and_grads_match(got, want, [w], [tw], _up(want.shape), "CPU", atol=1e-5)


def _torch_bags(rows: torch.Tensor, offsets: list[int], end: int, mode: str) -> torch.Tensor:
    """The reference: each bag [offsets[b], offsets[b + 1] or end) of `rows` reduced."""
    bounds = [*offsets, end]
    bags = [rows[a:b] for a, b in itertools.pairwise(bounds)]
    reduce = {"sum": lambda bag: bag.sum(0), "mean": lambda bag: bag.mean(0),
              "max": lambda bag: bag.max(0).values}[mode]
    return torch.stack([reduce(bag) if len(bag) else rows[0] * 0 for bag in bags])


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq(mode: str) -> None:
    """Each occurrence's gradient divided by its index's count in the whole input, as
    torch documents and as its F.embedding does (torch 2.13's CPU embedding_bag divides by
    the wrong count, pytorch#190063: the reference is built from F.embedding)."""
    w, tw = pg.Tensor(TABLE, requires_grad=True), torch.tensor(TABLE, requires_grad=True)
    offsets = [0, 5, 6]
    got = F.embedding_bag(pg.Tensor(INDICES), w, pg.Tensor(np.array(offsets, np.int32)),
                          mode=mode, scale_grad_by_freq=True)
    rows = TF.embedding(torch.tensor(INDICES).long(), tw, scale_grad_by_freq=True)
    want = _torch_bags(rows, offsets, INDICES.size, mode)
    assert_forward_and_grads_match(got, want, [w], [tw], _up(want.shape), "CPU")


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_indices_past_the_last_offset_are_in_no_bag(mode: str) -> None:
    """include_last_offset with offsets[-1] < len(input): the last offset ends the last
    bag in every mode (torch 2.13's CPU modes disagree there, pytorch#191965)."""
    w, tw = pg.Tensor(TABLE, requires_grad=True), torch.tensor(TABLE, requires_grad=True)
    offsets = [0, 3, 3, 7]
    got = F.embedding_bag(pg.Tensor(INDICES), w, pg.Tensor(np.array(offsets, np.int32)),
                          mode=mode, include_last_offset=True)
    rows = TF.embedding(torch.tensor(INDICES).long(), tw)
    want = _torch_bags(rows, offsets[:-1], offsets[-1], mode)
    assert_forward_and_grads_match(got, want, [w], [tw], _up(want.shape), "CPU")


def test_embedding_bag_on_every_device(device: str) -> None:
    offsets = np.array([0, 3, 3, 6], np.int32)
    for mode in ("sum", "mean", "max"):
        w = pg.Tensor(TABLE, device=device, requires_grad=True)
        tw = torch.tensor(TABLE, requires_grad=True)
        got = F.embedding_bag(pg.Tensor(INDICES, device=device), w,
                              pg.Tensor(offsets, device=device), mode=mode, padding_idx=2)
        want = TF.embedding_bag(torch.tensor(INDICES).long(), tw, torch.tensor(offsets),
                                mode=mode, padding_idx=2)
        assert_forward_and_grads_match(got, want, [w], [tw], _up(want.shape), device)


def test_embedding_bag_max_picks_the_first_maximum() -> None:
    table = np.array([[1.0, 5.0], [3.0, 5.0], [3.0, 0.0]], np.float32)  # ties in each column
    index = np.array([0, 1, 2, 2, 1], np.int32)
    w, tw = pg.Tensor(table, requires_grad=True), torch.tensor(table, requires_grad=True)
    got = F.embedding_bag(pg.Tensor(index), w, pg.Tensor(np.array([0, 3], np.int32)),
                          mode="max")
    want = TF.embedding_bag(torch.tensor(index).long(), tw, torch.tensor([0, 3]), mode="max")
    assert_forward_and_grads_match(got, want, [w], [tw], np.ones((2, 2), np.float32), "CPU")


@pytest.mark.parametrize("case", ["offsets", "padding_idx", "two_d", "include_last_offset"])
def test_embedding_bag_per_sample_weights(case: str) -> None:
    w, tw = pg.Tensor(TABLE, requires_grad=True), torch.tensor(TABLE, requires_grad=True)
    index, kwargs = _bag_args(pg, BAGS[case])
    tindex, tkwargs = _bag_args(torch, BAGS[case])
    weights = np.linspace(-1, 2, INDICES.size).astype(np.float32).reshape(index.shape)
    psw = pg.Tensor(weights, requires_grad=True)
    tpsw = torch.tensor(weights, requires_grad=True)
    want = TF.embedding_bag(tindex, tw, mode="sum", per_sample_weights=tpsw, **tkwargs)
    got = F.embedding_bag(index, w, mode="sum", per_sample_weights=psw, **kwargs)
    assert_forward_and_grads_match(got, want, [w, psw], [tw, tpsw], _up(want.shape), "CPU")


@pytest.mark.parametrize("mode,norm_type", [("mean", 2.0), ("sum", 1.0), ("max", 2.0)])
def test_embedding_bag_max_norm_renormalises_the_named_rows_in_place(mode: str,
                                                                     norm_type: float) -> None:
    table = TABLE * 3
    w, tw = pg.Tensor(table, requires_grad=True), torch.tensor(table, requires_grad=True)
    index = np.array([1, 2, 2, 7, 0], np.int32)
    offsets = np.array([0, 2], np.int32)
    got = F.embedding_bag(pg.Tensor(index), w, pg.Tensor(offsets), max_norm=1.5,
                          norm_type=norm_type, mode=mode)
    want = TF.embedding_bag(torch.tensor(index).long(), tw, torch.tensor(offsets).long(),
                            max_norm=1.5, norm_type=norm_type, mode=mode)
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-6, atol=1e-6)
    assert not np.allclose(w.numpy(), table)  # rows 0, 1, 2 and 7 are shorter now
    np.testing.assert_array_equal(w.numpy()[[3, 4, 5, 6, 8, 9]], table[[3, 4, 5, 6, 8, 9]])
    assert_forward_and_grads_match(got, want, [w], [tw], _up(want.shape), "CPU")


def test_embedding_bag_layer() -> None:
    pg.manual_seed(0)
    ours = nn.EmbeddingBag(10, 3, mode="sum", padding_idx=-2)
    theirs = torch.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=-2)
    assert repr(ours) == repr(theirs) and ours.padding_idx == theirs.padding_idx == 8
    np.testing.assert_array_equal(ours.weight.numpy()[8], 0.0)  # the padding row is zero
    assert {k: v.shape for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    offsets = np.array([0, 4], np.int32)
    want = theirs(torch.tensor(INDICES).long(), torch.tensor(offsets).long())
    got = ours(pg.Tensor(INDICES), pg.Tensor(offsets))
    assert_forward_and_grads_match(got, want, [ours.weight], [theirs.weight],
                                   _up(want.shape), "CPU")
    for kwargs in ({"max_norm": 1.0, "norm_type": 1.0, "scale_grad_by_freq": True},
                   {"mode": "max", "include_last_offset": True}):
        assert repr(nn.EmbeddingBag(5, 2, **kwargs)) == repr(torch.nn.EmbeddingBag(5, 2,
                                                                                **kwargs))


# ── in-place activations, *_with_indices ───────────────────────────────────

IN_PLACE: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "relu_": (F.relu_, TF.relu_),
    "elu_": (lambda x: F.elu_(x, 0.7), lambda x: TF.elu_(x, 0.7)),
    "leaky_relu_": (lambda x: F.leaky_relu_(x, 0.2), lambda x: TF.leaky_relu_(x, 0.2)),
    "hardtanh_": (lambda x: F.hardtanh_(x, -0.5, 0.8), lambda x: TF.hardtanh_(x, -0.5, 0.8)),
    "selu_": (F.selu_, TF.selu_),
    "celu_": (lambda x: F.celu_(x, 1.3), lambda x: TF.celu_(x, 1.3)),
    "threshold_": (lambda x: F.threshold_(x, 0.1, -3.0),
                   lambda x: TF.threshold_(x, 0.1, -3.0)),  # pyright: ignore[reportAttributeAccessIssue]
    "rrelu_": (F.rrelu_, TF.rrelu_),  # eval: the mean slope
}


def test_in_place_activations_write_their_input() -> None:
    for name, (ours, theirs) in IN_PLACE.items():
        x, tx = _pair((3, 5), 2)
        y, ty = x * 1.5, tx * 1.5
        assert ours(y) is y and theirs(ty) is ty, name
        assert_forward_and_grads_match(y, ty, [x], [tx], _up((3, 5)), "CPU")
        with pytest.raises(RuntimeError):  # a leaf that requires grad, as torch
            ours(x)
        with pg.no_grad():
            ours(x)
        assert x.requires_grad


def test_rrelu_in_place_in_training_draws_slopes_in_range() -> None:
    a = -np.ones(1000, np.float32)
    y = pg.Tensor(a)
    F.rrelu_(y, 0.1, 0.3, training=True)
    slopes = -y.numpy()
    assert (slopes >= 0.1).all() and (slopes <= 0.3).all() and slopes.std() > 0.03


POOLS = [("max_pool1d_with_indices", (2, 3, 9), (3,), {"stride": 2, "padding": 1}),
         ("max_pool2d_with_indices", (2, 3, 6, 5), (2,), {"dilation": 2, "ceil_mode": True}),
         ("max_pool3d_with_indices", (1, 2, 4, 4, 4), (2,), {}),
         ("max_pool2d_with_indices", (3, 6, 5), (3,), {"return_indices": False}),  # ignored
         ("adaptive_max_pool1d_with_indices", (2, 3, 9), (4,), {}),
         ("adaptive_max_pool2d_with_indices", (2, 3, 7, 5), ((3, 2),), {}),
         ("adaptive_max_pool3d_with_indices", (1, 2, 5, 4, 3), (2,), {})]


@pytest.mark.parametrize("name,shape,args,kwargs", POOLS)
def test_pools_with_indices(name: str, shape: tuple[int, ...], args: tuple[Any, ...],
                            kwargs: dict[str, Any]) -> None:
    x, tx = _pair(shape)
    values, indices = getattr(F, name)(x, *args, **kwargs)
    want, want_indices = getattr(TF, name)(tx, *args, **kwargs)
    np.testing.assert_array_equal(indices.numpy(), want_indices.numpy())
    assert_forward_and_grads_match(values, want, [x], [tx], _up(want.shape), "CPU")


# ── mistakes: picograd's error is the built-in class torch raises ───────────

Case = tuple[str, Callable[[Any, Any], Any]]


def _z(lib: Any, *shape: int, dtype: str = "float32") -> Any:
    return lib.tensor(np.zeros(shape, dtype=dtype))


def _ids(lib: Any, values: list[int]) -> Any:
    return lib.tensor(np.asarray(values, np.int32 if lib is pg else np.int64))


MISTAKES: list[Case] = [
    ("pairwise_distance_shapes", lambda t, f: f.pairwise_distance(_z(t, 4, 5), _z(t, 3, 5))),
    ("pdist_1d", lambda t, f: f.pdist(_z(t, 4))),
    ("pdist_3d", lambda t, f: f.pdist(_z(t, 2, 3, 4))),
    ("pdist_negative_p", lambda t, f: f.pdist(_z(t, 3, 4), -1)),
    ("pdist_ints", lambda t, f: f.pdist(_z(t, 3, 4, dtype="int32"))),
    ("softmax2d_2d", lambda t, f: (torch.nn if t is torch else nn).Softmax2d()(_z(t, 3, 4))),
    ("dropout_p", lambda t, f: f.dropout2d(_z(t, 2, 3, 4, 4), 1.5)),
    ("alpha_dropout_p", lambda t, f: f.alpha_dropout(_z(t, 4), -0.1)),
    ("dropout_layer_p", lambda t, f: (torch.nn if t is torch else nn).Dropout1d(2.0)),
    ("dropout1d_rank", lambda t, f: f.dropout1d(_z(t, 2, 3, 4, 5))),
    ("feature_dropout_1d", lambda t, f: f.feature_alpha_dropout(_z(t, 4), 0.5, True)),
    ("dropout_ints_training", lambda t, f: f.dropout1d(_z(t, 2, 3, dtype="int32"), 0.5)),
    ("bilinear_batch", lambda t, f: f.bilinear(_z(t, 3, 4), _z(t, 2, 5), _z(t, 7, 4, 5))),
    ("bilinear_ranks", lambda t, f: f.bilinear(_z(t, 3, 4), _z(t, 1, 3, 5), _z(t, 7, 4, 5))),
    ("bilinear_in1", lambda t, f: f.bilinear(_z(t, 3, 5), _z(t, 3, 5), _z(t, 7, 4, 5))),
    ("bilinear_in2", lambda t, f: f.bilinear(_z(t, 3, 4), _z(t, 3, 4), _z(t, 7, 4, 5))),
    ("bilinear_bias", lambda t, f: f.bilinear(_z(t, 3, 4), _z(t, 3, 5), _z(t, 7, 4, 5),
                                              _z(t, 6))),
    ("bilinear_0d", lambda t, f: f.bilinear(_z(t), _z(t), _z(t, 7, 4, 5))),
    ("channel_shuffle_2d", lambda t, f: f.channel_shuffle(_z(t, 2, 6), 2)),
    ("channel_shuffle_groups", lambda t, f: f.channel_shuffle(_z(t, 2, 6, 3), 4)),
    ("channel_shuffle_zero", lambda t, f: f.channel_shuffle(_z(t, 2, 6, 3), 0)),
    ("bag_offsets_start", lambda t, f: f.embedding_bag(_ids(t, [1, 2, 3]), _z(t, 5, 2),
                                                       _ids(t, [1, 2]))),
    ("bag_offsets_past_end", lambda t, f: f.embedding_bag(_ids(t, [1, 2, 3]), _z(t, 5, 2),
                                                          _ids(t, [0, 4]))),
    ("bag_offsets_decrease", lambda t, f: f.embedding_bag(_ids(t, [1, 2, 3]), _z(t, 5, 2),
                                                          _ids(t, [0, 2, 1]))),
    ("bag_no_offsets", lambda t, f: f.embedding_bag(_ids(t, [1, 2, 3]), _z(t, 5, 2))),
    ("bag_2d_with_offsets", lambda t, f: f.embedding_bag(_ids(t, [1, 2]).reshape(1, 2),
                                                         _z(t, 5, 2), _ids(t, [0]))),
    ("bag_3d", lambda t, f: f.embedding_bag(_ids(t, [1, 2]).reshape(1, 1, 2), _z(t, 5, 2))),
    ("bag_2d_empty_bags", lambda t, f: f.embedding_bag(_ids(t, []).reshape(2, 0),
                                                       _z(t, 5, 2))),
    ("bag_mode", lambda t, f: f.embedding_bag(_ids(t, [1]), _z(t, 5, 2), _ids(t, [0]),
                                              mode="prod")),
    ("bag_max_freq", lambda t, f: f.embedding_bag(_ids(t, [1]), _z(t, 5, 2), _ids(t, [0]),
                                                  mode="max", scale_grad_by_freq=True)),
    ("bag_weight_1d", lambda t, f: f.embedding_bag(_ids(t, [1]), _z(t, 5), _ids(t, [0]))),
    ("bag_index_range", lambda t, f: f.embedding_bag(_ids(t, [1, 7]), _z(t, 5, 2),
                                                     _ids(t, [0])).sum().item()),
    ("bag_negative_index", lambda t, f: f.embedding_bag(_ids(t, [-1]), _z(t, 5, 2),
                                                        _ids(t, [0])).sum().item()),
    ("bag_float_index", lambda t, f: f.embedding_bag(_z(t, 2), _z(t, 5, 2), _ids(t, [0]))),
    ("bag_padding_idx", lambda t, f: f.embedding_bag(_ids(t, [1]), _z(t, 5, 2), _ids(t, [0]),
                                                     padding_idx=5)),
    ("bag_psw_shape", lambda t, f: f.embedding_bag(_ids(t, [1, 2]), _z(t, 5, 2), _ids(t, [0]),
                                                   mode="sum",
                                                   per_sample_weights=_z(t, 3))),
    ("bag_psw_mode", lambda t, f: f.embedding_bag(_ids(t, [1, 2]), _z(t, 5, 2), _ids(t, [0]),
                                                  per_sample_weights=_z(t, 2))),
    ("bag_include_last_no_offsets", lambda t, f: f.embedding_bag(
        _ids(t, [1, 2]), _z(t, 5, 2), _ids(t, []), include_last_offset=True)),
    ("relu_leaf", lambda t, f: f.relu_(torch.zeros(3, requires_grad=True) if t is torch
                                       else pg.Tensor(np.zeros(3, np.float32),
                                                      requires_grad=True))),
]


def _torch_error(make: Callable[[Any, Any], Any]) -> type[BaseException]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make(torch, TF)
    except Exception as error:  # the class is what is compared
        return type(error)
    raise AssertionError("torch raised nothing: the case is not a mistake")


@pytest.mark.parametrize("name,make", MISTAKES, ids=[name for name, _ in MISTAKES])
def test_mistakes_raise_the_class_torch_raises(name: str,
                                               make: Callable[[Any, Any], Any]) -> None:
    expected = _torch_error(make)
    with pytest.raises(pg.PicogradError) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make(pg, F)
    assert isinstance(info.value, expected), (
        f"{name}: torch raises {expected.__name__}, picograd {type(info.value).__mro__}")


def test_the_new_names_are_exported() -> None:
    layers = {"PairwiseDistance", "CosineSimilarity", "Softmax2d", "Dropout1d", "Dropout2d",
              "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "Bilinear", "ChannelShuffle",
              "UpsamplingNearest2d", "UpsamplingBilinear2d", "EmbeddingBag"}
    functions = {"pairwise_distance", "pdist", "dropout1d", "dropout2d", "dropout3d",
                 "alpha_dropout", "feature_alpha_dropout", "bilinear", "channel_shuffle",
                 "upsample", "upsample_nearest", "upsample_bilinear", "embedding_bag",
                 *IN_PLACE, *(name for name, *_ in POOLS)}
    assert layers <= set(nn.__all__) and functions <= set(F.__all__)
    assert all(hasattr(torch.nn, n) for n in layers) and all(hasattr(TF, n) for n in functions)
