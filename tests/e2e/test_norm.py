"""Normalisation layers and Embedding against torch on every device: outputs, gradients of
the input and the affine parameters, running statistics over training steps, eval mode,
state-dict names; the functional forms."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from picograd.errors import DTypeError, IndexRangeError, ShapeError
from picograd.frontend import autograd
from picograd.frontend.realize import realize
from picograd.nn import norm
from picograd.optim import SGD

torch = pytest.importorskip("torch", reason="torch is the oracle of the norm tests")

rng = np.random.default_rng(5)


def _randn(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _copy_params(ours: pg.nn.Module, theirs: torch.nn.Module) -> None:
    """Give both layers the same random affine parameters."""
    for name, p in theirs.named_parameters():
        values = _randn(*p.shape)
        with torch.no_grad():
            p.copy_(torch.from_numpy(values))
        ours.load_state_dict({name: values}, strict=False)


def _check_step(device: str, ours: pg.nn.Module, theirs: torch.nn.Module, x: np.ndarray,
                rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """One forward + seeded backward on both: outputs, input and parameter gradients."""
    xo = pg.Tensor(x, device=device, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    out, ref = ours(xo), theirs(xt)
    seed = _randn(*ref.shape)
    (out * pg.Tensor(seed, device=device)).sum().backward()
    (ref * torch.from_numpy(seed)).sum().backward()
    params = dict(ours.named_parameters())
    realize(out, *(t.grad for t in (xo, *params.values()) if t.grad is not None))  # one graph
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=rtol, atol=atol)
    assert xo.grad is not None and xt.grad is not None
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=rtol, atol=atol)
    for name, p in theirs.named_parameters():
        got = params[name].grad
        assert got is not None and p.grad is not None, name
        np.testing.assert_allclose(got.numpy(), p.grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=name)
    ours.zero_grad()
    theirs.zero_grad()


def _check_state(ours: pg.nn.Module, theirs: torch.nn.Module) -> None:
    """Same state-dict names (in order) and values."""
    mine, ref = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(ref)
    realize(*mine.values())  # one graph
    for name, value in ref.items():
        np.testing.assert_allclose(mine[name].numpy(), value.numpy(), rtol=1e-5, atol=1e-5,
                                   err_msg=name)


def _put(ours: pg.nn.Module, device: str) -> pg.nn.Module:
    """The layer with its state on `device` (the layers are built on the CPU)."""
    for _, t in ours.state_dict().items():
        t._node = t.to(device)._node
    return ours


BATCH_NORMS = {
    "bn2d": (lambda: norm.BatchNorm2d(3), lambda: torch.nn.BatchNorm2d(3), (4, 3, 5, 5)),
    "bn2d_cumulative": (lambda: norm.BatchNorm2d(3, momentum=None, eps=1e-3),
                        lambda: torch.nn.BatchNorm2d(3, momentum=None, eps=1e-3), (2, 3, 4, 4)),
    "bn2d_no_affine": (lambda: norm.BatchNorm2d(2, affine=False),
                       lambda: torch.nn.BatchNorm2d(2, affine=False), (3, 2, 3, 3)),
    "bn2d_no_stats": (lambda: norm.BatchNorm2d(2, track_running_stats=False),
                      lambda: torch.nn.BatchNorm2d(2, track_running_stats=False), (3, 2, 3, 3)),
    "bn1d": (lambda: norm.BatchNorm1d(4, momentum=0.3), lambda: torch.nn.BatchNorm1d(
        4, momentum=0.3), (6, 4)),
}


@pytest.mark.parametrize("name", list(BATCH_NORMS))
def test_batch_norm_trains_and_evaluates_like_torch(device: str, name: str) -> None:
    make_ours, make_theirs, shape = BATCH_NORMS[name]
    ours, theirs = _put(make_ours(), device), make_theirs()
    _copy_params(ours, theirs)
    _check_state(ours, theirs)
    for _ in range(2):  # training: batch statistics, running statistics updated
        _check_step(device, ours, theirs, _randn(*shape) * 2 + 1)
    _check_state(ours, theirs)
    ours.eval()
    theirs.eval()
    for _ in range(1):  # eval: running statistics used, not updated
        _check_step(device, ours, theirs, _randn(*shape))
    _check_state(ours, theirs)
    autograd.pending_roots.clear()


def test_batch_norm_statistics_are_realized_by_the_optimizer_step(device: str) -> None:
    ours = _put(norm.BatchNorm2d(2), device)
    theirs = torch.nn.BatchNorm2d(2)
    opt, topt = SGD(ours.parameters(), lr=0.1), torch.optim.SGD(theirs.parameters(), lr=0.1)
    for _ in range(3):
        x = _randn(4, 2, 3, 3)
        y = ours(pg.Tensor(x, device=device))
        (y * y).mean().backward()
        opt.step()
        opt.zero_grad()
        ref = theirs(torch.from_numpy(x))
        (ref * ref).mean().backward()
        topt.step()
        topt.zero_grad()
        assert ours.running_mean is not None and ours.running_mean._node.realized
        assert ours.running_var is not None and ours.running_var._node.realized
    _check_state(ours, theirs)


def test_batch_norm_loads_torch_state(device: str) -> None:
    theirs = torch.nn.BatchNorm2d(3)
    theirs(torch.randn(4, 3, 2, 2))  # moves the running statistics, counts one batch
    ours = norm.BatchNorm2d(3, device=device)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    _check_state(ours, theirs)
    assert ours.num_batches_tracked is not None and ours.num_batches_tracked.dtype == pg.int32
    autograd.pending_roots.clear()


def test_batch_norm_chain_is_cut_without_a_step(device: str) -> None:
    ours = _put(norm.BatchNorm1d(2), device)
    previous = []
    for _ in range(3):
        assert ours.running_mean is not None
        previous.append(ours.running_mean._node)
        ours(pg.Tensor(_randn(5, 2), device=device))
        # the previous batch's statistics were realized; the current ones are pending
        assert all(node.realized for node in previous)
        assert not ours.running_mean._node.realized
    autograd.pending_roots.clear()


NORMS = {
    "layer_norm": (lambda: norm.LayerNorm((4, 5)), lambda: torch.nn.LayerNorm((4, 5)),
                   (3, 4, 5)),
    "layer_norm_1d_no_bias": (lambda: norm.LayerNorm(6, eps=1e-3, bias=False),
                              lambda: torch.nn.LayerNorm(6, eps=1e-3, bias=False), (2, 6)),
    "layer_norm_no_affine": (lambda: norm.LayerNorm(5, elementwise_affine=False),
                             lambda: torch.nn.LayerNorm(5, elementwise_affine=False), (2, 3, 5)),
    "group_norm": (lambda: norm.GroupNorm(3, 6), lambda: torch.nn.GroupNorm(3, 6),
                   (2, 6, 3, 3)),
    "group_norm_3d": (lambda: norm.GroupNorm(2, 4, eps=1e-3, affine=False),
                      lambda: torch.nn.GroupNorm(2, 4, eps=1e-3, affine=False), (3, 4, 5)),
    "rms_norm": (lambda: norm.RMSNorm(5), lambda: torch.nn.RMSNorm(5), (3, 5)),
    "rms_norm_eps": (lambda: norm.RMSNorm((2, 3), eps=0.5), lambda: torch.nn.RMSNorm(
        (2, 3), eps=0.5), (4, 2, 3)),
    "rms_norm_no_affine": (lambda: norm.RMSNorm(4, elementwise_affine=False),
                           lambda: torch.nn.RMSNorm(4, elementwise_affine=False), (3, 4)),
}


@pytest.mark.parametrize("name", list(NORMS))
def test_norm_layers_match_torch(device: str, name: str) -> None:
    make_ours, make_theirs, shape = NORMS[name]
    ours, theirs = _put(make_ours(), device), make_theirs()
    _copy_params(ours, theirs)
    _check_state(ours, theirs)
    _check_step(device, ours, theirs, _randn(*shape) * 3)


def test_rms_norm_default_eps_is_float32_eps(device: str) -> None:
    x = np.full((2, 3), 1e-5, np.float32)  # mean(x^2) = 1e-10 << eps: eps decides the result
    got = norm.rms_norm(pg.Tensor(x, device=device), 3).numpy()
    want = torch.nn.functional.rms_norm(torch.from_numpy(x), (3,)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_embedding_matches_torch(device: str) -> None:
    ours, theirs = _put(norm.Embedding(10, 4), device), torch.nn.Embedding(10, 4)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    weight = ours.weight.numpy()
    assert abs(float(weight.mean())) < 1 and 0.3 < float(weight.std()) < 2  # N(0, 1)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(weight))
    idx = rng.integers(0, 10, (3, 5)).astype(np.int32)
    idx[0, :2] = 7  # a repeated index accumulates its gradient
    out, ref = ours(pg.Tensor(idx, device=device)), theirs(torch.from_numpy(idx).long())
    seed = _randn(*ref.shape)
    (out * pg.Tensor(seed, device=device)).sum().backward()
    (ref * torch.from_numpy(seed)).sum().backward()
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-6, atol=1e-6)
    assert ours.weight.grad is not None and theirs.weight.grad is not None
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-5, atol=1e-5)


def test_functional_forms(device: str) -> None:
    x = _randn(4, 3, 2, 2)
    xo, xt = pg.Tensor(x, device=device), torch.from_numpy(x)
    rm, rv = _randn(3), np.abs(_randn(3)) + 0.5
    w, b = _randn(3), _randn(3)
    T = [torch.from_numpy(a) for a in (rm, rv, w, b)]
    P = [pg.Tensor(a, device=device) for a in (rm, rv, w, b)]
    cases = [
        (norm.batch_norm(xo, *P), torch.nn.functional.batch_norm(xt, *T)),  # eval: running
        (norm.batch_norm(xo, None, None, training=True),
         torch.nn.functional.batch_norm(xt, None, None, training=True)),
        (norm.layer_norm(xo, (2, 2)), torch.nn.functional.layer_norm(xt, (2, 2))),
        (norm.group_norm(xo, 3, P[2], P[3]), torch.nn.functional.group_norm(xt, 3, T[2], T[3])),
        (norm.rms_norm(xo, 2, eps=1e-3), torch.nn.functional.rms_norm(xt, (2,), eps=1e-3)),
        (norm.embedding(pg.Tensor(np.array([2, 0], np.int32), device=device), P[2].reshape(3, 1)),
         torch.nn.functional.embedding(torch.tensor([2, 0]), T[2].reshape(3, 1))),
    ]
    for got, want in cases:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    # training updates the running statistics in place, as torch's
    norm.batch_norm(xo, P[0], P[1], training=True, momentum=0.2)
    torch.nn.functional.batch_norm(xt, T[0], T[1], training=True, momentum=0.2)
    np.testing.assert_allclose(P[0].numpy(), T[0].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(P[1].numpy(), T[1].numpy(), rtol=1e-5, atol=1e-6)
    autograd.pending_roots.clear()


def test_errors() -> None:
    with pytest.raises(DTypeError, match="embedding: indices must be an int32"):
        norm.Embedding(5, 2)(pg.Tensor(np.zeros(3, np.float32)))
    with pytest.raises(IndexRangeError, match=r"embedding: index 5 is out of bounds for a dim "
                                              r"of size 5"):
        norm.Embedding(5, 2)(pg.Tensor(np.array([1, 5], np.int32)))
    with pytest.raises(ShapeError, match="BatchNorm2d: expected a 4-D input"):
        norm.BatchNorm2d(3)(pg.Tensor(np.zeros((2, 3), np.float32)))
    with pytest.raises(ShapeError, match="has 4 channels, the layer 3"):
        norm.BatchNorm2d(3)(pg.Tensor(np.zeros((2, 4, 2, 2), np.float32)))
    with pytest.raises(ShapeError, match="more than 1 value per channel"):
        norm.BatchNorm1d(3)(pg.Tensor(np.zeros((1, 3), np.float32)))
    with pytest.raises(ShapeError, match="layer_norm: input of shape"):
        norm.LayerNorm(4)(pg.Tensor(np.zeros((2, 3), np.float32)))
    with pytest.raises(ShapeError, match="GroupNorm: num_channels=5"):
        norm.GroupNorm(2, 5)
    with pytest.raises(DTypeError, match="rms_norm: needs a float32 input"):
        norm.RMSNorm(3)(pg.Tensor(np.zeros((2, 3), np.int32)))
