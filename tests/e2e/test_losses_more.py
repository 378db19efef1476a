"""The losses of picograd.nn.losses_more (ctc_loss, multilabel_margin_loss,
triplet_margin_with_distance_loss) and their modules (with NLLLoss2d) against torch: the
value and the gradients over shapes, reductions, blanks and lengths (a target of length 0,
an input without frames, an input too short for its target: inf, and zero_infinity),
unbatched inputs; and the errors for bad input, each a picograd error that is also the
built-in class torch raises."""

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

rng = np.random.default_rng(7)


def _f(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _compare(device: str, ours: Any, theirs: Any, grads: list[tuple[Any, Any]],
             atol: float = 1e-5) -> None:
    """`ours` (picograd) equals `theirs` (torch), and so do the gradients of each pair in
    `grads` after back-propagating the same random upstream gradient through both (NaN
    where torch's is NaN)."""
    assert ours.shape == tuple(theirs.shape)
    upstream = _f(*ours.shape)
    (ours * pg.Tensor(upstream, device=device)).sum().backward()
    (theirs * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-4, atol=atol)
    for mine, ref in grads:
        assert mine.grad is not None
        np.testing.assert_allclose(mine.grad.numpy(), ref.grad.numpy(), rtol=1e-4, atol=atol)


# ── ctc_loss ─────────────────────────────────────────────────────────────────

# name: (T, N, C, input_lengths, target_lengths, settings). Settings: blank, reduction,
# zero_infinity; "concat" (1-D targets), "raw" (log_probs are the leaf, torch's gradient
# is not through a log_softmax), "unbatched", "tensors" (int tensor lengths), "dtype",
# "repeat" (every target one label repeated: an alignment needs 2 tl - 1 frames),
# "blank_in_target" (targets may hold the blank, which torch's docs rule out but compute),
# "neg_inf" (some log_probs -inf)
CTC_CASES: dict[str, tuple[int, int, int, list[int], list[int], dict[str, Any]]] = {
    "padded_mean": (8, 3, 5, [8, 6, 5], [3, 1, 2], {}),
    "raw_log_probs_sum": (7, 3, 6, [7, 7, 4], [2, 3, 1], {"raw": True, "reduction": "sum"}),
    "concatenated_last_blank_none": (6, 3, 5, [6, 5, 4], [3, 1, 2],
                                     {"concat": True, "blank": 4, "reduction": "none"}),
    "empty_target_and_no_frames": (6, 4, 4, [6, 0, 0, 3], [0, 0, 2, 1],
                                   {"raw": True, "reduction": "none"}),
    "too_short_is_inf": (6, 3, 5, [5, 6, 2], [3, 2, 2],
                         {"repeat": True, "raw": True, "reduction": "none"}),
    "too_short_zero_infinity": (6, 3, 5, [5, 6, 2], [3, 2, 2],
                                {"repeat": True, "zero_infinity": True, "reduction": "mean"}),
    "unbatched_none": (7, 1, 5, [7], [3], {"unbatched": True, "reduction": "none",
                                           "concat": True}),
    "unbatched_padded_mean": (7, 1, 5, [6], [2], {"unbatched": True}),
    "tensor_lengths_float64": (6, 2, 4, [6, 5], [2, 3], {"tensors": True, "dtype": "float64",
                                                         "raw": True, "reduction": "sum"}),
    "blank_in_target": (7, 3, 4, [7, 6, 7], [3, 3, 2],
                        {"blank_in_target": True, "raw": True, "reduction": "none"}),
    "neg_inf_log_probs": (6, 2, 4, [6, 6], [2, 2], {"neg_inf": True, "raw": True,
                                                    "reduction": "none"}),
    "longer_blank_2": (12, 4, 7, [12, 11, 9, 12], [5, 0, 4, 5], {"blank": 2}),
}


def _ctc_targets(n: int, c: int, tl: list[int], settings: dict[str, Any]) -> np.ndarray:
    """(N, max(tl) + 1) labels (-1 padding past each length), none the blank unless the
    case allows it."""
    blank = settings.get("blank", 0)
    labels = rng.integers(0, c, (n, max(tl) + 1))
    if not settings.get("blank_in_target"):
        labels = np.where(labels == blank, (blank + 1) % c, labels)
    if settings.get("repeat"):
        labels = np.repeat(labels[:, :1], labels.shape[1], 1)
    return np.where(np.arange(labels.shape[1]) < np.array(tl)[:, None], labels, -1)


def _run_ctc(device: str, name: str) -> None:
    t, n, c, il, tl, settings = CTC_CASES[name]
    x = _f(t, n, c).astype(settings.get("dtype", "float32"))
    if settings.get("neg_inf"):
        x = np.log(rng.dirichlet(np.ones(c), (t, n))).astype(np.float32)
        x[1, 0, 1] = x[3, 1, 0] = -np.inf
    targets = _ctc_targets(n, c, tl, settings)
    if settings.get("concat"):
        targets = np.concatenate([targets[i, :tl[i]] for i in range(n)])
    if settings.get("unbatched"):
        x, targets = x[:, 0], targets if settings.get("concat") else targets[:1]
    kwargs = {k: settings[k] for k in ("blank", "reduction", "zero_infinity") if k in settings}
    lengths: list[Any] = [il, tl]
    if settings.get("tensors"):
        lengths = [pg.Tensor(np.array(il, np.int32), device=device), torch.tensor(il),
                   pg.Tensor(np.array(tl, np.int32), device=device), torch.tensor(tl)]
    mine = pg.Tensor(x, device=device, requires_grad=True)
    ref = torch.tensor(x, requires_grad=True)
    raw = settings.get("raw")
    ours = F.ctc_loss(mine if raw else mine.log_softmax(-1),
                      pg.Tensor(targets.astype(np.int32), device=device),
                      *lengths[::2] if settings.get("tensors") else lengths, **kwargs)
    theirs = TF.ctc_loss(ref if raw else ref.log_softmax(-1), torch.tensor(targets),
                         *lengths[1::2] if settings.get("tensors") else lengths, **kwargs)
    _compare(device, ours, theirs, [(mine, ref)], atol=1e-4)


@pytest.mark.parametrize("name", ["padded_mean", "too_short_zero_infinity"])
def test_ctc_loss_matches_torch_on_every_device(device: str, name: str) -> None:
    _run_ctc(device, name)


@pytest.mark.parametrize("name", [k for k in CTC_CASES if k != "padded_mean"])
def test_ctc_loss_matches_torch(name: str) -> None:
    _run_ctc("CPU:LLVM", name)


def test_ctc_loss_gives_inf_and_nan_gradients_as_torch() -> None:
    """An input too short for its target: the loss is inf, the gradient NaN before its
    input length (torch's inf - inf) and 0 after; zero_infinity makes both 0."""
    x = pg.Tensor(_f(4, 2, 3), requires_grad=True)
    targets = pg.Tensor(np.array([[1, 1, 1], [2, 1, 0]], np.int32))
    loss = F.ctc_loss(x, targets, [3, 4], [3, 2], reduction="none")
    loss.sum().backward()
    assert x.grad is not None
    values, grad = loss.numpy(), x.grad.numpy()
    assert np.isinf(values[0]) and np.isfinite(values[1])
    assert np.isnan(grad[:3, 0]).all() and (grad[3, 0] == 0).all()
    assert np.isfinite(grad[:, 1]).all()
    x.grad = None
    F.ctc_loss(x, targets, [3, 4], [3, 2], zero_infinity=True).backward()
    assert x.grad is not None
    assert (x.grad.numpy()[:, 0] == 0).all() and np.isfinite(x.grad.numpy()).all()


def test_ctc_loss_of_a_shape_is_one_graph_whatever_the_lengths() -> None:
    """The lengths decide masks (buffers), not the graph: a second batch of the same
    shape with other lengths compiles nothing."""
    targets = pg.Tensor(rng.integers(1, 5, (3, 4)).astype(np.int32))
    F.ctc_loss(pg.Tensor(_f(9, 3, 5)), targets, [9, 7, 3], [4, 2, 1]).realize()
    before = pg.compile_stats().compiles
    F.ctc_loss(pg.Tensor(_f(9, 3, 5)), targets, [5, 9, 0], [1, 4, 0]).realize()
    assert pg.compile_stats().compiles == before


def test_ctc_loss_refuses_a_target_outside_the_classes() -> None:
    """torch reads such a label out of bounds; picograd raises when it is read (the
    labels past a target's length, padding, are not looked at)."""
    targets = pg.Tensor(np.array([[1, 7, -1], [2, -5, 99]], np.int32))
    loss = F.ctc_loss(pg.Tensor(_f(5, 2, 4)), targets, [5, 5], [2, 1])
    with pytest.raises(pg.IndexRangeError, match="target"):
        loss.numpy()
    F.ctc_loss(pg.Tensor(_f(5, 2, 4)), targets, [5, 5], [1, 1]).numpy()  # padding only


# ── multilabel_margin_loss and triplet_margin_with_distance_loss ─────────────

MULTILABEL_TARGETS = np.array([[3, 0, -1, 1, 2], [4, 4, 1, -1, -1], [-1, 2, 3, 0, 0],
                               [0, 1, 2, 3, 4]], np.int64)


def _run_multilabel(device: str, reduction: str, shape: str) -> None:
    x, target = _f(4, 5), MULTILABEL_TARGETS
    if shape != "batch":
        x, target = (x[1], target[1]) if shape == "one" else (x[0, 0], np.array(0, np.int64))
    mine = pg.Tensor(x, device=device, requires_grad=True)
    ref = torch.tensor(x, requires_grad=True)
    ours = F.multilabel_margin_loss(mine, pg.Tensor(target.astype(np.int32), device=device),
                                    reduction=reduction)
    theirs = TF.multilabel_margin_loss(ref, torch.tensor(target), reduction=reduction)
    _compare(device, ours, theirs, [(mine, ref)])


def test_multilabel_margin_loss_matches_torch_on_every_device(device: str) -> None:
    _run_multilabel(device, "mean", "batch")


@pytest.mark.parametrize(("reduction", "shape"), [
    ("sum", "batch"), ("none", "batch"), ("mean", "one"), ("none", "one"), ("none", "scalar"),
    ("sum", "scalar")])
def test_multilabel_margin_loss_matches_torch(reduction: str, shape: str) -> None:
    _run_multilabel("CPU:LLVM", reduction, shape)


@pytest.mark.filterwarnings("ignore:size_average and reduce")
def test_multilabel_margin_loss_edges() -> None:
    """A hinge of exactly 0 passes no gradient (torch's z > 0); the legacy size_average;
    an empty batch ("none" is empty, "sum" 0: torch's reductions of it are garbage)."""
    settings: list[dict[str, Any]] = [{"reduction": "sum"}, {"size_average": False}]
    for legacy in settings:
        mine = pg.Tensor(np.array([[0.0, 1.0, 0.5]], np.float32), requires_grad=True)
        ref = torch.tensor([[0.0, 1.0, 0.5]], requires_grad=True)
        theirs = TF.multilabel_margin_loss(ref, torch.tensor([[1, -1, 0]]), **legacy)
        ours = F.multilabel_margin_loss(mine, pg.Tensor(np.array([[1, -1, 0]], np.int32)),
                                        **legacy)
        _compare("CPU:LLVM", ours, theirs, [(mine, ref)])
    empty = pg.Tensor(np.zeros((0, 4), np.float32))
    labels = pg.Tensor(np.zeros((0, 4), np.int32))
    assert F.multilabel_margin_loss(empty, labels, reduction="none").shape == (0,)
    assert F.multilabel_margin_loss(empty, labels, reduction="sum").item() == 0.0


def _cosine_distance(lib: Any) -> Callable[[Any, Any], Any]:
    cosine = TF.cosine_similarity if lib is torch else F.cosine_similarity
    return lambda x, y: 1.0 - cosine(x, y)


def _run_triplet(device: str, reduction: str, swap: bool, distance: str) -> None:
    arrays = [_f(5, 6) for _ in range(3)]
    mine = [pg.Tensor(a, device=device, requires_grad=True) for a in arrays]
    refs = [torch.tensor(a, requires_grad=True) for a in arrays]
    ours = F.triplet_margin_with_distance_loss(
        *mine, distance_function=None if distance == "default" else _cosine_distance(pg),
        margin=0.8, swap=swap, reduction=reduction)
    theirs = TF.triplet_margin_with_distance_loss(
        *refs, distance_function=None if distance == "default" else _cosine_distance(torch),
        margin=0.8, swap=swap, reduction=reduction)
    _compare(device, ours, theirs, list(zip(mine, refs, strict=True)))


def test_triplet_margin_with_distance_loss_matches_torch_on_every_device(device: str) -> None:
    _run_triplet(device, "mean", True, "default")


@pytest.mark.parametrize(("reduction", "swap", "distance"), [
    ("mean", False, "default"), ("sum", True, "cosine"), ("none", False, "cosine"),
    ("none", True, "default")])
def test_triplet_margin_with_distance_loss_matches_torch(reduction: str, swap: bool,
                                                         distance: str) -> None:
    _run_triplet("CPU:LLVM", reduction, swap, distance)


def test_triplet_margin_with_distance_loss_unbatched() -> None:
    arrays = [_f(6) for _ in range(3)]
    mine = [pg.Tensor(a, requires_grad=True) for a in arrays]
    refs = [torch.tensor(a, requires_grad=True) for a in arrays]
    _compare("CPU:LLVM", F.triplet_margin_with_distance_loss(*mine, reduction="none"),
             TF.triplet_margin_with_distance_loss(*refs, reduction="none"),
             list(zip(mine, refs, strict=True)))


# ── the modules ──────────────────────────────────────────────────────────────


def test_loss_modules_match_torch() -> None:
    x, target = _f(4, 5), MULTILABEL_TARGETS
    pairs = [(nn.MultiLabelMarginLoss(reduction="sum"),
              torch.nn.MultiLabelMarginLoss(reduction="sum"), [x], [target])]
    a = [_f(3, 4) for _ in range(3)]
    pairs.append((nn.TripletMarginWithDistanceLoss(
        distance_function=_cosine_distance(pg), margin=0.5, swap=True),
        torch.nn.TripletMarginWithDistanceLoss(
            distance_function=_cosine_distance(torch), margin=0.5, swap=True), a, []))
    pairs.append((nn.TripletMarginWithDistanceLoss(reduction="none"),
                  torch.nn.TripletMarginWithDistanceLoss(reduction="none"), a, []))
    w = rng.uniform(0.5, 2.0, 4).astype(np.float32)
    with pytest.warns(FutureWarning, match="NLLLoss2d"):
        torch_nll2d = torch.nn.NLLLoss2d(torch.tensor(w), ignore_index=1)
    with pytest.warns(FutureWarning, match="NLLLoss2d"):
        nll2d = nn.NLLLoss2d(pg.Tensor(w), ignore_index=1)
    assert isinstance(nll2d, nn.NLLLoss)
    pairs.append((nll2d, torch_nll2d, [_f(2, 4, 3, 3)],
                  [rng.integers(0, 4, (2, 3, 3)).astype(np.int64)]))
    for ours, theirs, floats, ints in pairs:
        mine = [pg.Tensor(f, requires_grad=True) for f in floats]
        refs = [torch.tensor(f, requires_grad=True) for f in floats]
        out = ours(*mine, *[pg.Tensor(i.astype(np.int32)) for i in ints])
        _compare("CPU:LLVM", out, theirs(*refs, *[torch.tensor(i) for i in ints]),
                 list(zip(mine, refs, strict=True)))
        assert list(ours.state_dict()) == list(theirs.state_dict())


def test_ctc_loss_module_matches_torch() -> None:
    x = _f(6, 2, 4)
    targets = np.array([[1, 2, 3], [3, 3, 0]])
    mine, ref = pg.Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
    theirs = torch.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
    out = ours(mine.log_softmax(2), pg.Tensor(targets.astype(np.int32)), [6, 2], [3, 2])
    _compare("CPU:LLVM", out, theirs(ref.log_softmax(2), torch.tensor(targets), [6, 2],
                                     [3, 2]), [(mine, ref)], atol=1e-4)
    assert (ours.blank, ours.zero_infinity, ours.reduction) == (0, True, "sum")


# ── errors: picograd's typed error, also the built-in class torch raises ─────


def _t(lib: Any, a: np.ndarray) -> Any:
    return torch.tensor(a) if lib is torch else pg.Tensor(
        a.astype(np.int32) if a.dtype == np.int64 else a)


def _fn(lib: Any) -> Any:
    return TF if lib is torch else F


def _ctc(lib: Any, lp: np.ndarray | None = None, targets: Any = None, il: Any = (4, 4),
         tl: Any = (2, 1), **kw: Any) -> Any:
    lp = _f(4, 2, 3) if lp is None else lp
    targets = np.array([[1, 2], [2, 0]]) if targets is None else targets
    il, tl = (_t(lib, v) if isinstance(v, np.ndarray) else v for v in (il, tl))
    return _fn(lib).ctc_loss(_t(lib, lp), _t(lib, targets), il, tl, **kw)


def _mlm(lib: Any, x: np.ndarray, target: np.ndarray, **kw: Any) -> Any:
    return _fn(lib).multilabel_margin_loss(_t(lib, x), _t(lib, target), **kw)


def _triplet(lib: Any, shapes: tuple[tuple[int, ...], ...] = ((3, 4),) * 3, **kw: Any) -> Any:
    return _fn(lib).triplet_margin_with_distance_loss(
        *[_t(lib, _f(*s)) for s in shapes], **kw)


ERROR_CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("ctc blank out of range", lambda lib: _ctc(lib, blank=3)),
    ("ctc negative blank", lambda lib: _ctc(lib, blank=-1)),
    ("ctc one input length too few", lambda lib: _ctc(lib, il=[4])),
    ("ctc target lengths too many", lambda lib: _ctc(lib, tl=[1, 1, 1])),
    ("ctc input length past T", lambda lib: _ctc(lib, il=[5, 4])),
    ("ctc negative input length", lambda lib: _ctc(lib, il=[-1, 4])),
    ("ctc negative target length", lambda lib: _ctc(lib, tl=[-1, 1])),
    ("ctc padded targets too short", lambda lib: _ctc(lib, tl=[3, 1])),
    ("ctc padded targets' rows", lambda lib: _ctc(lib, targets=np.array([[1, 2]]))),
    ("ctc concatenated targets' size", lambda lib: _ctc(lib, targets=np.array([1, 2]))),
    ("ctc 3-d targets", lambda lib: _ctc(lib, targets=np.ones((2, 2, 1), np.int64))),
    ("ctc 0-d targets", lambda lib: _ctc(lib, targets=np.array(1))),
    ("ctc 4-d log_probs", lambda lib: _ctc(lib, lp=_f(4, 2, 3, 1))),
    ("ctc 1-d log_probs", lambda lib: _ctc(lib, lp=_f(4))),
    ("ctc empty log_probs", lambda lib: _ctc(lib, lp=_f(0, 2, 3), il=[0, 0], tl=[0, 0])),
    ("ctc float length tensor", lambda lib: _ctc(lib, il=np.array([4.0, 4.0]),
                                                 tl=np.array([2, 1]))),
    ("ctc list and tensor lengths", lambda lib: _ctc(lib, tl=np.array([2, 1]))),
    ("ctc int lengths", lambda lib: _ctc(lib, il=4, tl=2)),
    ("ctc float lengths", lambda lib: _ctc(lib, il=[4.0, 4.0])),
    ("ctc reduction", lambda lib: _ctc(lib, reduction="avg")),
    ("multilabel target shape", lambda lib: _mlm(lib, _f(2, 4), np.zeros((2, 3), np.int64))),
    ("multilabel 1-d target of a batch", lambda lib: _mlm(lib, _f(2, 4),
                                                          np.zeros(4, np.int64))),
    ("multilabel 3-d input", lambda lib: _mlm(lib, _f(1, 2, 4), np.zeros((1, 2, 4), np.int64))),
    ("multilabel no classes", lambda lib: _mlm(lib, _f(2, 0), np.zeros((2, 0), np.int64))),
    ("multilabel target past the classes",
     lambda lib: _mlm(lib, _f(2, 3), np.array([[1, -1, 3], [0, 1, 2]]))),
    ("multilabel target below -1",
     lambda lib: _mlm(lib, _f(2, 3), np.array([[1, -2, 0], [0, 1, 2]]))),
    ("multilabel float target", lambda lib: _mlm(lib, _f(2, 3), _f(2, 3))),
    ("multilabel reduction", lambda lib: _mlm(lib, _f(2, 3), np.zeros((2, 3), np.int64),
                                              reduction="avg")),
    ("triplet margin 0", lambda lib: _triplet(lib, margin=0.0)),
    ("triplet dims", lambda lib: _triplet(lib, ((3, 4), (3, 4), (4,)))),
    ("triplet reduction", lambda lib: _triplet(lib, reduction="avg")),
    ("triplet module margin", lambda lib: (torch.nn if lib is torch else nn)
     .TripletMarginWithDistanceLoss(margin=-1.0)),
]


@pytest.mark.parametrize(("name", "make"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_error_is_the_class_torch_raises(name: str, make: Callable[[Any], Any]) -> None:
    with pytest.raises(Exception) as theirs:  # whatever torch raises
        make(torch)
    expected = type(theirs.value)
    with pytest.raises(pg.PicogradError) as ours:
        make(pg)
    assert isinstance(ours.value, expected), (
        f"{name}: torch raises {expected.__name__}, picograd {type(ours.value).__mro__}")


@pytest.mark.parametrize("make", [
    lambda lib: _ctc(lib, lp=_f(4, 2, 3).astype(np.int64)),
    lambda lib: _ctc(lib, lp=_f(4, 2, 3).astype(np.float16)),
    lambda lib: _mlm(lib, np.zeros((2, 3), np.int64), np.zeros((2, 3), np.int64)),
])
def test_dtype_errors_are_runtime_errors(make: Callable[[Any], Any]) -> None:
    """torch's NotImplementedError for a dtype its CPU kernel lacks: picograd's
    UnimplementedDTypeError is one (and a DTypeError, a RuntimeError)."""
    with pytest.raises(NotImplementedError):
        make(torch)
    with pytest.raises(pg.UnimplementedDTypeError) as ours:
        make(pg)
    assert isinstance(ours.value, NotImplementedError | RuntimeError)
