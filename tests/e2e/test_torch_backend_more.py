"""The translations of ops_distance.py, ops_layout.py and ops_norm_image.py (the core
ATen ops the other families leave out, and the backward ops their graphs call) against
torch eager: compiled with `torch.compile(fn, backend=backend)`, values over several
calls (the later ones replay picograd's programs) and gradients, with `explain` showing
that no part ran in torch. Ops torch's decompositions lower before picograd sees them
are called as ATen ops directly; ops that read torch's layout of an input run in FX
graphs made by hand, whose records give it."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch._decomp import decompositions

import picograd as pg
from picograd.torch_backend import backend, explain
from picograd.torch_backend.convert import Binder
from picograd.torch_backend.graph import has_translation, translate
from picograd.torch_backend.registry import ATEN, TorchUnsupported

A = torch.ops.aten
CALLS = 4  # calls 1-2 of a signature run eagerly, 3+ replay the captured programs
Maker = Callable[[int], tuple[Any, ...]]


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _randn(*shape: int, seed: int, grad: bool = True) -> torch.Tensor:
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    return x.requires_grad_(grad)


def _copies(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.detach().clone().requires_grad_(a.requires_grad)
                 if isinstance(a, torch.Tensor) else a for a in args)


def _leaves(args: tuple[Any, ...]) -> list[torch.Tensor]:
    return [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]


def _check(fn: Callable[..., Any], make: Maker, atol: float = 1e-5) -> None:
    """`fn` compiled by picograd gives eager's results on CALLS calls with new inputs, and
    eager's gradients of a weighted sum of its first result; every graph ran in picograd."""
    compiled = torch.compile(fn, backend=backend)
    for seed in range(CALLS):
        eager_args = make(seed)
        mine = _copies(eager_args)
        want, got = fn(*eager_args), compiled(*mine)
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        for w, g in zip(want, got, strict=True):
            torch.testing.assert_close(g, w, atol=atol, rtol=1e-5, equal_nan=True)
        if not _leaves(eager_args):
            continue
        weights = _randn(*want[0].shape, seed=100 + seed, grad=False)
        (want[0] * weights).sum().backward()
        (got[0] * weights).sum().backward()
        for g, w in zip(_leaves(mine), _leaves(eager_args), strict=True):
            torch.testing.assert_close(g.grad, w.grad, atol=1e-4, rtol=1e-4, equal_nan=True)
    _ran_in_picograd(fn, *_copies(make(0)))


def _ran_in_picograd(fn: Callable[..., Any], *args: Any) -> None:
    report = explain(fn, *args, backward=bool(_leaves(args)), verbose=False)
    assert report.graphs and not report.torch, str(report)


def _direct(op: Any, *args: Any) -> None:
    """The translation of `op` called on picograd copies of `args` gives torch's results
    (an op torch's decompositions lower before picograd sees it)."""
    want = op(*args)
    got = ATEN[op](*[pg.Tensor(a.numpy()) if isinstance(a, torch.Tensor) else a
                     for a in args])
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(want, got, strict=True):
        assert (w is None) == (g is None)
        if w is not None:
            torch.testing.assert_close(torch.from_numpy(g.numpy()).to(w.dtype), w,
                                       atol=1e-5, rtol=1e-5)


# ── cdist, pdist ────────────────────────────────────────────────────────────────

_P = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf]


def _with_ties(seed: int, rows: int) -> torch.Tensor:
    # equal rows (distance 0) and equal components (a difference of 0) where the
    # gradients have their special cases
    x = torch.randn(rows, 3, generator=torch.Generator().manual_seed(seed)).round()
    x[1] = x[0]
    x[2, 0] = x[0, 0]
    return x.requires_grad_()


@pytest.mark.parametrize("p", _P, ids=[f"p{p}" for p in _P])
def test_cdist_and_pdist(p: float) -> None:
    _check(lambda a, b: torch.cdist(a, b, p=p), lambda s: (_with_ties(s, 4), _with_ties(s, 5)))
    _check(lambda a: F.pdist(a, p), lambda s: (_with_ties(s, 5),))


def test_cdist_broadcasts_batches() -> None:
    _check(lambda a, b: torch.cdist(a, b, p=1.5),
           lambda s: (_randn(2, 1, 4, 3, seed=s), _randn(3, 5, 3, seed=s + 9)))


@pytest.mark.parametrize("mode", [None, 1, 2], ids=["rows_past_25", "use_mm", "no_mm"])
def test_cdist_compute_mode(mode: int | None) -> None:
    # torch's matmul form for p = 2 where compute_mode asks for it or (mode 0) either side
    # has more than 25 rows; called as the ATen op (torch.cdist lowers that form itself)
    _check(lambda a, b: A._cdist_forward(a, b, 2.0, mode),
           lambda s: (_randn(30, 3, seed=s), _randn(4, 3, seed=s + 9)))


# ── embedding_bag ───────────────────────────────────────────────────────────────

_INDICES = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 4])
_OFFSETS = torch.tensor([0, 4, 4, 6])  # an empty bag, a bag of one padding entry...


def _bag_inputs(seed: int, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, ...]:
    weight = torch.randn(10, 3, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    weight[3, 1] = weight[5, 1]  # a tie in a max
    return _INDICES, _OFFSETS, weight.requires_grad_()


def _frozen_bag_inputs(seed: int, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    indices, offsets, weight = _bag_inputs(seed, dtype)
    return indices, offsets, weight.detach()


@pytest.mark.parametrize("padding_idx", [None, 4])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode: str, padding_idx: int | None) -> None:
    _check(lambda i, o, w: F.embedding_bag(i, w, o, mode=mode, padding_idx=padding_idx),
           _bag_inputs)
    last = torch.tensor([0, 4, 4, 6, 9])  # include_last_offset: the offsets end with the end
    _check(lambda i, w: F.embedding_bag(i, w, last, mode=mode, padding_idx=padding_idx,
                                        include_last_offset=True),
           lambda s: (_INDICES, _bag_inputs(s)[2]))


def test_embedding_bag_weights_frequency_and_2d_input() -> None:
    def sample_weights(seed: int) -> tuple[torch.Tensor, ...]:
        return (*_bag_inputs(seed), _randn(9, seed=seed + 5))

    _check(lambda i, o, w, s: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=s),
           sample_weights)
    # torch's CPU backward divides by the count of the r-th smallest index (r: the rank
    # of the entry's own index), not by its own count: kept, it is what torch computes
    _check(lambda i, o, w: F.embedding_bag(i, w, o, mode="mean", scale_grad_by_freq=True),
           _bag_inputs)
    _check(lambda i, w: F.embedding_bag(i, w, mode="max"),
           lambda s: (_INDICES[:8].reshape(2, 4), _bag_inputs(s)[2]))


@pytest.mark.parametrize(("mode", "dtype"), [
    (0, torch.float32), (1, torch.float32), (2, torch.float32), (0, torch.float64)],
    ids=["sum", "mean", "max", "sum_f64"])
def test_embedding_bag_results_are_torchs_all_four(mode: int, dtype: torch.dtype) -> None:
    # offset2bag, bag_size and max_indices as torch's CPU kernel fills them (a graph split
    # hands them to torch's backward), include_last_offset with entries past the last
    # offset included: the fast float32 sum stops at that offset, the other paths and
    # bag_size run the last bag to the end
    for padding_idx, last in ((-1, False), (4, False), (-1, True), (4, True)):
        def bag(i: torch.Tensor, o: torch.Tensor, w: torch.Tensor,
                padding_idx: int = padding_idx, last: bool = last) -> Any:
            return A._embedding_bag(w, i, o, False, mode, False, None, last, padding_idx)

        _check(bag, lambda s: _frozen_bag_inputs(s, dtype))


def test_embedding_bag_forward_only() -> None:
    # a weight without a gradient: torch's _embedding_bag_forward_only
    _check(lambda i, o, w: F.embedding_bag(i, w, o, mode="mean", padding_idx=2),
           lambda s: (_INDICES, _OFFSETS, _bag_inputs(s)[2].detach()))
    # with include_last_offset torch's meta kernel and its CPU kernel disagree on the
    # shapes of bag_size and max_indices: that graph runs in torch
    last = torch.tensor([0, 4, 4, 6, 9])
    weight = _bag_inputs(0)[2].detach()

    def fn(i: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return F.embedding_bag(i, w, last, mode="sum", include_last_offset=True)

    torch.testing.assert_close(torch.compile(fn, backend=backend)(_INDICES, weight),
                               fn(_INDICES, weight))
    assert explain(fn, _INDICES, weight, verbose=False).torch == {
        "aten._embedding_bag_forward_only.default": 1}


# ── as_strided, masked_scatter, col2im ──────────────────────────────────────────


def test_as_strided() -> None:
    # overlapping windows of a contiguous input (the gradient: as_strided_scatter), and a
    # window over a transposed value's storage (torch's order, not the value's)
    _check(lambda x: x.as_strided((3, 2), (2, 3), 1) * 2, lambda s: (_randn(4, 3, seed=s),))
    _check(lambda x: (x * 1).t().as_strided((2, 3), (1, 4), 2) * 2,
           lambda s: (_randn(3, 4, seed=s),))


def _fx_graph(target: Any, records: list[torch.Tensor], *args: Any) -> torch.fx.GraphModule:
    """A graph of one call of `target` on placeholders recorded as `records`."""
    graph = torch.fx.Graph()
    inputs = []
    for i, record in enumerate(records):
        node = graph.placeholder(f"x{i}")
        node.meta["val"] = record
        inputs.append(node)
    graph.output((graph.call_function(target, (*inputs, *args)),))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def _run_fx(gm: torch.fx.GraphModule, *values: torch.Tensor) -> Any:
    [out] = translate(gm, [pg.Tensor(v.contiguous().numpy()) for v in values], Binder("CPU"))
    return out


@pytest.mark.parametrize(("view", "size", "stride", "offset"), [
    (lambda b: b.t(), [2, 2], [1, 3], 1),
    (lambda b: b.t(), [3, 4], [4, 1], None),
    (lambda b: b[1:], [2, 2], [1, 4], 4),
    (lambda b: b[1:], [2, 3], [4, 1], None),
    (lambda b: b.permute(1, 0).reshape(4, 3), [2, 2], [1, 1], 0),
], ids=["transposed", "transposed_all", "offset", "offset_default", "copied"])
def test_as_strided_reads_torchs_storage_order(view: Callable[[torch.Tensor], torch.Tensor],
                                               size: list[int], stride: list[int],
                                               offset: int | None) -> None:
    base = torch.arange(12.0).reshape(3, 4)
    value = view(base)
    got = _run_fx(_fx_graph(A.as_strided.default, [value], size, stride, offset), value)
    want = value.as_strided(size, stride, offset)
    torch.testing.assert_close(torch.from_numpy(got.numpy()), want)


def test_as_strided_of_a_value_with_gaps_runs_in_torch() -> None:
    # a slice's elements do not fill a block of storage: which element torch reads at a
    # gap is nothing picograd's value holds
    base = torch.arange(12.0).reshape(3, 4)
    with pytest.raises(TorchUnsupported, match="gaps"):
        _run_fx(_fx_graph(A.as_strided.default, [base[:, :2]], [2, 2], [1, 4], 0), base[:, :2])

    def fn(x: torch.Tensor) -> torch.Tensor:
        return (x * 1)[:, :2].as_strided((2, 2), (1, 4), 1) + 1

    torch.testing.assert_close(torch.compile(fn, backend=backend)(base), fn(base))


def test_sym_stride_and_storage_offset_read_torchs_records() -> None:
    base = torch.arange(12.0).reshape(3, 4)
    stride = _run_fx(_fx_graph(A.sym_stride.int, [base.t()], 1), base.t())
    offset = _run_fx(_fx_graph(A.sym_storage_offset.default, [base[1:]]), base[1:])
    contiguous = _run_fx(_fx_graph(A.sym_is_contiguous.default, [base.t()]), base.t())
    assert (stride, offset, contiguous) == (base.t().stride(1), base[1:].storage_offset(),
                                            False)


def _mask(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) > 0.5


def test_masked_scatter() -> None:
    # a source longer than the mask's count, and a mask broadcast over rows
    _check(lambda x, m, s: x.masked_scatter(m, s),
           lambda seed: (_randn(3, 4, seed=seed), _mask((3, 4), seed),
                         _randn(14, seed=seed + 3)))
    _check(lambda x, m, s: x.masked_scatter(m, s),
           lambda seed: (_randn(3, 4, seed=seed), _mask((4,), seed) | torch.tensor(
               [True, False, False, False]), _randn(2, 5, seed=seed + 3)))


def test_col2im() -> None:
    _direct(A.col2im.default, _randn(1, 12, 12, seed=0, grad=False), [4, 5], [2, 2], [1, 1],
            [0, 0], [1, 1])
    _direct(A.col2im.default, _randn(2, 8, 9, seed=1, grad=False), [5, 4], [2, 2], [2, 1],
            [1, 0], [2, 1])


# ── data-dependent and random ops ───────────────────────────────────────────────


def test_nonzero_syncs_and_runs_in_picograd() -> None:
    # the row count only the values decide: picograd reads them on the host (each call:
    # a replay could not), and torch's checks of that count run on picograd's
    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.nonzero(x > 0).float().sum(0) + torch.nonzero(x).shape[0]

    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        _check(fn, lambda s: (_randn(4, 3, seed=s, grad=False).round(),))


def test_item_in_a_graph_syncs_and_runs_in_picograd() -> None:
    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        _check(lambda x: x.clamp(max=x.mean().item()), lambda s: (_randn(6, seed=s, grad=False),))


def test_randperm_draws_from_picograds_generator() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        return x[torch.randperm(16)]

    compiled = torch.compile(fn, backend=backend)
    x = torch.arange(16.0)
    draws = [compiled(x) for _ in range(CALLS)]
    for drawn in draws:
        assert sorted(drawn.tolist()) == x.tolist()
    assert not torch.equal(draws[-1], draws[-2])  # replays draw anew
    _ran_in_picograd(fn, x)


# ── normalisation and upsampling ────────────────────────────────────────────────


def test_batch_norm_without_running_statistics() -> None:
    _check(lambda x: F.batch_norm(x, None, None, training=True),
           lambda s: (_randn(4, 3, 2, seed=s),))
    _check(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True, eps=1e-3),
           lambda s: (_randn(4, 3, 2, 2, seed=s), _randn(3, seed=s + 1), _randn(3, seed=s + 2)))
    _check(lambda x: F.instance_norm(x), lambda s: (_randn(2, 3, 5, seed=s),))


def test_batch_norm_legit_direct() -> None:
    x = _randn(4, 3, 2, seed=0, grad=False)
    mean, var = _randn(3, seed=1, grad=False), torch.rand(3) + 0.5
    w, b = _randn(3, seed=2, grad=False), _randn(3, seed=3, grad=False)
    _direct(A._native_batch_norm_legit.default, x, w, b, mean, var, False, 0.1, 1e-5)
    _direct(A._native_batch_norm_legit.no_stats, x, w, None, True, 0.1, 1e-5)
    # training updates the running statistics in place (functionalization's op returns
    # them instead); no statistics at all in eval mode is torch's error
    with pytest.raises(TorchUnsupported, match="in place"):
        ATEN[A._native_batch_norm_legit.default](pg.Tensor(x.numpy()), None, None,
                                                 pg.Tensor(mean.numpy()),
                                                 pg.Tensor(var.numpy()), True, 0.1, 1e-5)
    with pytest.raises(TorchUnsupported, match="training=False"):
        ATEN[A._native_batch_norm_legit.no_stats](pg.Tensor(x.numpy()), None, None, False,
                                                  0.1, 1e-5)


def test_norm_backwards_direct() -> None:
    x, grad = _randn(2, 3, 4, seed=0, grad=False), _randn(2, 3, 4, seed=1, grad=False)
    w, b = _randn(4, seed=2, grad=False), _randn(4, seed=3, grad=False)
    _, mean, rstd = A.native_layer_norm(x, [4], w, b, 1e-5)
    _direct(A.native_layer_norm_backward.default, grad, x, [4], mean, rstd, w, b,
            [True, True, True])
    _, mean, rstd = A.native_layer_norm(x, [3, 4], None, None, 1e-5)
    _direct(A.native_layer_norm_backward.default, grad, x, [3, 4], mean, rstd, None, None,
            [True, False, False])
    x, grad = _randn(2, 6, 5, seed=4, grad=False), _randn(2, 6, 5, seed=5, grad=False)
    gamma = _randn(6, seed=6, grad=False)
    _, mean, rstd = A.native_group_norm(x, gamma, None, 2, 6, 5, 3, 1e-5)
    _direct(A.native_group_norm_backward.default, grad, x, mean, rstd, gamma, 2, 6, 5, 3,
            [True, True, True])
    # without gamma torch's CPU kernel fails; its decomposition is the reference
    args = (grad, x, mean, rstd, None, 2, 6, 5, 3, [True, False, True])
    want = decompositions.native_group_norm_backward(*args)
    got = ATEN[A.native_group_norm_backward.default](
        *[pg.Tensor(a.numpy()) if isinstance(a, torch.Tensor) else a for a in args])
    assert got[1] is None
    for g, wanted in ((got[0], want[0]), (got[2], want[2])):
        torch.testing.assert_close(torch.from_numpy(g.numpy()), wanted, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize(("op", "args"), [
    (A.upsample_bilinear2d.vec, ([5, 7], False, None)),
    (A.upsample_bilinear2d.vec, (None, True, [1.5, 2.3])),
    (A.upsample_bilinear2d.vec, (None, False, [1.7, 0.6])),
    (A.upsample_nearest2d.vec, ([5, 7], None)),
    (A.upsample_nearest2d.vec, (None, [2.0, 1.3])),
], ids=["bilinear_size", "bilinear_scale_corners", "bilinear_scale", "nearest_size",
        "nearest_scale"])
def test_upsample_vec_direct(op: Any, args: tuple[Any, ...]) -> None:
    _direct(op, _randn(1, 2, 3, 5, seed=0, grad=False), *args)


# ── grid sampling ───────────────────────────────────────────────────────────────

_SAMPLING = [(mode, padding) for mode in ("bilinear", "nearest", "bicubic")
             for padding in ("zeros", "border", "reflection")]


@pytest.mark.parametrize(("mode", "padding"), _SAMPLING,
                         ids=[f"{m}_{p}" for m, p in _SAMPLING])
def test_grid_sampler_2d(mode: str, padding: str) -> None:
    # points inside and past the edges; align_corners both ways across the cases
    align = _SAMPLING.index((mode, padding)) % 2 == 0

    def grid(seed: int) -> torch.Tensor:
        u = torch.rand(2, 4, 3, 2, generator=torch.Generator().manual_seed(seed + 7))
        return (u * 2.4 - 1.2).requires_grad_()

    _check(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding,
                                      align_corners=align),
           lambda s: (_randn(2, 3, 5, 6, seed=s), grid(s)), atol=1e-4)


# ── what is left ────────────────────────────────────────────────────────────────

_LEFT = {  # the core ATen overloads without a translation, and why (docs/design.md)
    "aten._fft_r2c.default", "aten._fft_c2r.default",  # complex results or inputs
    "aten.atan2.out",  # writes its `out` argument: functionalization gives atan2.Tensor
    "aten.resize_.default",  # resizes its argument in place
}


def _core_overloads() -> list[Any]:
    """Every overload torch tags core, from every ATen schema (`dir(torch.ops.aten)` lists
    only the packets loaded so far)."""
    found = []
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith("aten::"):
            packet = getattr(A, schema.name.removeprefix("aten::"), None)
            op = getattr(packet, schema.overload_name or "default", None)
            if op is not None and torch.Tag.core in op.tags:
                found.append(op)
    return found


def test_core_aten_overloads_left_untranslated() -> None:
    core = _core_overloads()
    missing = {str(op) for op in core if not has_translation(op)}
    assert len({str(op) for op in core}) == 193
    assert missing == _LEFT, missing
    assert has_translation(operator.ge)  # the checks torch puts on a data-dependent size
