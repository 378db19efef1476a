"""RNN, LSTM, GRU and their cells against torch: a torch module's state dict loads unchanged
(same names and shapes), and outputs, final states and every gradient match."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest
import torch

import picograd as pg
import picograd.nn as nn
from picograd.errors import ShapeError

_RNG = np.random.default_rng(0)


def _twin(ours_cls: type, theirs_cls: type, *args: Any, device: str = "CPU", **kwargs: Any
          ) -> tuple[Any, Any]:
    torch.manual_seed(0)
    theirs = theirs_cls(*args, **kwargs)
    ours = ours_cls(*args, device=device, **kwargs)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict(state)
    return ours, theirs


def _data(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


def _check(device: str, ours: Any, theirs: Any, outs: list[pg.Tensor], touts: list[Any],
           inputs: list[pg.Tensor], tinputs: list[Any]) -> None:
    """Every output matches and so does the gradient of every parameter and input, after
    back-propagating the same random upstream gradients through all outputs."""
    ups = [_data(*o.shape) for o in outs]
    loss = sum(((o * pg.Tensor(u, device=device)).sum() for o, u in zip(outs, ups,
                                                                       strict=True)),
               pg.Tensor(0.0, device=device))
    tloss = sum((o * torch.tensor(u)).sum() for o, u in zip(touts, ups, strict=True))
    assert isinstance(loss, pg.Tensor)
    loss.backward()
    tloss.backward()  # type: ignore[union-attr]
    params, tparams = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert list(params) == list(tparams)
    pg.realize(*outs, *(p.grad for p in params.values()), *(i.grad for i in inputs))
    for o, t in zip(outs, touts, strict=True):
        np.testing.assert_allclose(o.numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)
    for name, p in params.items():
        assert p.grad is not None, name
        np.testing.assert_allclose(p.grad.numpy(), tparams[name].grad.numpy(), rtol=1e-4,
                                   atol=1e-4, err_msg=name)
    for i, t in zip(inputs, tinputs, strict=True):
        np.testing.assert_allclose(i.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)


def _leaf(a: np.ndarray, device: str) -> tuple[pg.Tensor, torch.Tensor]:
    return (pg.Tensor(a, device=device).requires_grad_(),
            torch.tensor(a, requires_grad=True))


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_two_layer_bidirectional_batch_first(device: str, kind: str) -> None:
    ours, theirs = _twin(getattr(nn, kind), getattr(torch.nn, kind), 3, 4, num_layers=2,
                         bidirectional=True, batch_first=True, device=device)
    x, tx = _leaf(_data(2, 5, 3), device)
    if kind == "LSTM":
        out, (h, c) = ours(x)
        tout, (th, tc) = theirs(tx)
        _check(device, ours, theirs, [out, h, c], [tout, th, tc], [x], [tx])
    else:
        out, h = ours(x)
        tout, th = theirs(tx)
        _check(device, ours, theirs, [out, h], [tout, th], [x], [tx])


@pytest.mark.filterwarnings("ignore:LSTM with projections")
def test_lstm_given_states_and_proj_size(device: str) -> None:
    ours, theirs = _twin(nn.LSTM, torch.nn.LSTM, 3, 5, num_layers=2, proj_size=2,
                         device=device)
    assert "weight_hr_l1" in ours.state_dict()
    x, tx = _leaf(_data(4, 2, 3), device)
    h0, th0 = _leaf(_data(2, 2, 2), device)
    c0, tc0 = _leaf(_data(2, 2, 5), device)
    out, (h, c) = ours(x, (h0, c0))
    tout, (th, tc) = theirs(tx, (th0, tc0))
    assert out.shape == (4, 2, 2) and c.shape == (2, 2, 5)
    _check(device, ours, theirs, [out, h, c], [tout, th, tc], [x, h0, c0], [tx, th0, tc0])


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_own_backward_with_given_states(device: str, bidirectional: bool) -> None:
    # an LSTM without proj_size is one op with its own backward (nn/lstm_sequence.py):
    # gradients to h0 and c0 of both directions, through several layers and steps
    ours, theirs = _twin(nn.LSTM, torch.nn.LSTM, 3, 4, num_layers=2,
                         bidirectional=bidirectional, device=device)
    rows = 4 if bidirectional else 2
    x, tx = _leaf(_data(6, 2, 3), device)
    h0, th0 = _leaf(_data(rows, 2, 4), device)
    c0, tc0 = _leaf(_data(rows, 2, 4), device)
    out, (h, c) = ours(x, (h0, c0))
    tout, (th, tc) = theirs(tx, (th0, tc0))
    _check(device, ours, theirs, [out, h, c], [tout, th, tc], [x, h0, c0], [tx, th0, tc0])


def test_lstm_one_step_input_without_grad(device: str) -> None:
    # a sequence of one step, an input that does not require grad (no input gradient is
    # built), only the last state used
    ours, theirs = _twin(nn.LSTM, torch.nn.LSTM, 3, 5, device=device)
    data = _data(1, 3, 3)
    _, (h, c) = ours(pg.Tensor(data, device=device))
    _, (th, tc) = theirs(torch.tensor(data))
    _check(device, ours, theirs, [h, c], [th, tc], [], [])


def test_unbatched_relu_rnn_without_bias(device: str) -> None:
    ours, theirs = _twin(nn.RNN, torch.nn.RNN, 3, 4, nonlinearity="relu", bias=False,
                         bidirectional=True, device=device)
    x, tx = _leaf(_data(5, 3), device)
    h0, th0 = _leaf(_data(2, 4), device)
    out, h = ours(x, h0)
    tout, th = theirs(tx, th0)
    assert out.shape == (5, 8) and h.shape == (2, 4)
    _check(device, ours, theirs, [out, h], [tout, th], [x, h0], [tx, th0])


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells(device: str, kind: str) -> None:
    ours, theirs = _twin(getattr(nn, kind), getattr(torch.nn, kind), 3, 4, device=device)
    x, tx = _leaf(_data(2, 3), device)
    h0, th0 = _leaf(_data(2, 4), device)
    if kind == "LSTMCell":
        c0, tc0 = _leaf(_data(2, 4), device)
        h, c = ours(x, (h0, c0))
        th, tc = theirs(tx, (th0, tc0))
        _check(device, ours, theirs, [h, c], [th, tc], [x, h0, c0], [tx, th0, tc0])
    else:
        h = ours(x, h0)
        th = theirs(tx, th0)
        _check(device, ours, theirs, [h], [th], [x, h0], [tx, th0])


def test_unbatched_cell_and_zero_state() -> None:
    ours, theirs = _twin(nn.GRUCell, torch.nn.GRUCell, 3, 4)
    x = _data(3)
    np.testing.assert_allclose(ours(pg.Tensor(x)).numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_dropout_between_layers_only_in_training() -> None:
    ours, theirs = _twin(nn.LSTM, torch.nn.LSTM, 3, 4, num_layers=2, dropout=0.5)
    x = _data(6, 2, 3)
    ours.eval()
    theirs.eval()
    out, _ = ours(pg.Tensor(x))
    np.testing.assert_allclose(out.numpy(), theirs(torch.tensor(x))[0].detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    ours.train()
    pg.manual_seed(1)
    dropped, _ = ours(pg.Tensor(x))
    assert not np.allclose(dropped.numpy(), out.numpy())
    # one layer: nothing lies between layers, so training mode drops nothing (as torch's)
    with pytest.warns(UserWarning):
        single, their_single = _twin(nn.LSTM, torch.nn.LSTM, 3, 4, dropout=0.5)
    np.testing.assert_allclose(single(pg.Tensor(x))[0].numpy(),
                               their_single(torch.tensor(x))[0].detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_backward_leaves_the_garbage_collector_as_it_was() -> None:
    # backward, realize and the LSTM's loop pause the collector (frontend/gc_pause.py)
    lstm = nn.LSTM(3, 4)
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            out, _ = lstm(pg.Tensor(_data(3, 2, 3)))
            out.sum().backward()
            pg.realize(*(p.grad for p in lstm.parameters()))
            assert gc.isenabled() == enabled
        finally:
            gc.enable()


def test_one_graph_per_sequence() -> None:
    """The sequence is built lazily and computed by one realize (one compile), not a
    realize per step."""
    lstm = nn.LSTM(3, 4, num_layers=2)
    x = pg.Tensor(_data(7, 2, 3))
    pg.realize(x, *lstm.parameters())
    before = pg.compile_stats().compiles
    out, (h, c) = lstm(x)
    assert pg.compile_stats().compiles == before
    pg.realize(out, h, c)
    assert pg.compile_stats().compiles - before <= 1


def test_lstm_gradient_with_an_inf_upstream_gradient_at_the_first_step() -> None:
    # the recurrent gradient into the last step starts from zeros: an inf at step 0 of the
    # upstream gradient reaches only the steps before it, as in torch
    ours, theirs = _twin(nn.LSTM, torch.nn.LSTM, 3, 4)
    data = _data(3, 2, 3)
    up = np.zeros((3, 2, 4), np.float32)
    up[0, 0, 0] = np.inf
    out, _ = ours(pg.Tensor(data))
    (out * pg.Tensor(up)).sum().backward()
    tout, _ = theirs(torch.tensor(data))
    (tout * torch.tensor(up)).sum().backward()
    for name, p in ours.named_parameters():
        want = dict(theirs.named_parameters())[name].grad.numpy()
        np.testing.assert_allclose(p.grad.numpy(), want, rtol=1e-4, atol=1e-4, err_msg=name)


def test_wrong_shapes_raise() -> None:
    for layer in (nn.LSTM(3, 4), nn.GRU(3, 4)):
        with pytest.raises(ShapeError, match="sequence length larger than 0"):
            layer(pg.zeros(0, 2, 3))
    with pytest.raises(RuntimeError):
        torch.nn.LSTM(3, 4)(torch.zeros(0, 2, 3))
    lstm = nn.LSTM(3, 4)
    with pytest.raises(ShapeError):
        lstm(pg.ones(5, 2, 6))
    with pytest.raises(ShapeError):
        lstm(pg.ones(5, 2, 3), (pg.zeros(2, 2, 4), pg.zeros(2, 2, 4)))
    with pytest.raises(ShapeError):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ShapeError):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ShapeError):
        nn.LSTMCell(3, 4)(pg.ones(2, 5))
    text = repr(nn.LSTM(3, 4, num_layers=2, batch_first=True))
    assert text == "LSTM(3, 4, num_layers=2, batch_first=True)"
