"""Realized intermediates are reused (docs/design.md, "Intermediates that outlive their
realize"): a value a realize stores in a buffer and that a live tensor or another pending
graph still references becomes that buffer, so a later realize reads it instead of computing
it again; values nothing else references are not kept; backward() frees its graph (as torch),
so a training step's realize keeps no forward activations alive."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd.frontend import capture
from picograd.frontend.realize import compiled

rng = np.random.default_rng(7)
X = rng.standard_normal((48, 64)).astype(np.float32)
W = [rng.standard_normal((64, 64)).astype(np.float32) for _ in range(3)]


def _layer_norm(t: Any) -> Any:
    m = t.mean(-1, keepdims=True) if isinstance(t, np.ndarray) else t.mean(-1, keepdim=True)
    c = t - m
    v = (c * c).mean(-1, keepdims=True) if isinstance(t, np.ndarray) else \
        (c * c).mean(-1, keepdim=True)
    return c / np.sqrt(v + 1e-5) if isinstance(t, np.ndarray) else c / (v + 1e-5).sqrt()


H = _layer_norm(X)


class Shared:
    """A capture recorder that keeps only what each realize handed to intermediates."""

    def __init__(self) -> None:
        self.shared: list[int] = []

    def on_realize(self, program, outputs, shared, export) -> None:
        self.shared.append(len(shared))

    def on_assign(self, target, value) -> None: ...

    def on_random_key(self, refresh: Callable[[], None]) -> None: ...

    def on_host_state(self, refresh: Callable[[], None]) -> None: ...


def test_a_stored_value_a_tensor_holds_is_its_buffer_after_the_realize(device: str) -> None:
    x, w0, w1 = (pg.Tensor(a, device=device) for a in (X, W[0], W[1]))
    h = _layer_norm(x)
    q = (h @ w0).realize()
    assert h._node.op == "buffer", "the layer norm, stored for the matmul, was not kept"
    np.testing.assert_allclose(h.numpy(), H, rtol=1e-4, atol=1e-5)
    program, inputs = compiled(h @ w1)
    assert any(a is h._node.buffer for a in inputs) and program.num_kernels <= 2
    np.testing.assert_allclose(q.numpy(), H @ W[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose((h @ w1).numpy(), H @ W[1], rtol=1e-4, atol=1e-4)


def test_a_pending_graph_that_reads_a_stored_value_reads_its_buffer() -> None:
    x, w0 = pg.Tensor(X), pg.Tensor(W[0])
    h = _layer_norm(x)
    later = h * 3  # pending, in no realize yet
    q = h @ w0
    del h
    q.realize()
    (source,) = later._node.src[:1]
    assert source.op == "buffer"
    np.testing.assert_allclose(later.numpy(), H * 3, rtol=1e-4, atol=1e-5)


def test_a_value_only_its_graph_references_is_not_kept() -> None:
    recorder = Shared()
    x, w0 = pg.Tensor(X), pg.Tensor(W[0])
    with capture.capturing(recorder):
        out = (_layer_norm(x) @ w0).realize()
        h = _layer_norm(x)
        (h @ w0).realize()
    assert recorder.shared[0] == 0 and recorder.shared[1] >= 1
    np.testing.assert_allclose(out.numpy(), H @ W[0], rtol=1e-4, atol=1e-4)


def test_a_training_step_keeps_no_forward_activation() -> None:
    """The loss the user holds references the forward through autograd until backward()
    frees it; the optimiser's realize then hands no intermediate a buffer."""
    pg.manual_seed(0)
    model = pg.nn.Sequential(pg.nn.Linear(64, 64), pg.nn.ReLU(), pg.nn.Linear(64, 4))
    opt = pg.optim.Adam(model.parameters(), 1e-2)
    y = pg.Tensor(rng.integers(0, 4, 48).astype(np.int32))
    recorder = Shared()
    for _ in range(2):
        loss = pg.nn.functional.cross_entropy(model(pg.Tensor(X)), y)
        loss.backward()
        with capture.capturing(recorder):
            opt.step()
        opt.zero_grad()
    assert recorder.shared and not any(recorder.shared)


def test_backward_frees_its_graph_unless_retain_graph_as_torch() -> None:
    torch = pytest.importorskip("torch")
    w = pg.Tensor(W[0][:4, :4], requires_grad=True)
    loss = (w.exp() * w).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    tw = torch.tensor(W[0][:4, :4], requires_grad=True)
    tloss = (tw.exp() * tw).sum()
    tloss.backward(retain_graph=True)
    tloss.backward()
    assert w.grad is not None and tw.grad is not None
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5)
    with pytest.raises(pg.AutogradError, match=r"freed by an earlier backward\(\).*"
                                               r"retain_graph=True") as info:
        loss.backward()
    assert __file__ in str(info.value)
    with pytest.raises(RuntimeError, match="second time"):
        tloss.backward()


def test_a_jit_replays_the_handed_buffers() -> None:
    @pg.jit
    def f(x: pg.Tensor, w0: pg.Tensor) -> pg.Tensor:
        h = _layer_norm(x)
        a = (h @ w0).realize()
        b = (h * 2).realize()
        return a + b

    w0 = pg.Tensor(W[0])
    for i in range(4):
        xi = X + i
        out = f(pg.Tensor(xi), w0).numpy()
        hi = _layer_norm(xi)
        np.testing.assert_allclose(out, hi @ W[0] + 2 * hi, rtol=1e-4, atol=1e-4)


def test_in_grad_mode_only_the_tensors_a_user_holds_are_kept() -> None:
    """A forward outside no_grad: the output's autograd graph references every intermediate,
    which does not count; a tensor the user holds does."""
    pg.manual_seed(1)
    model = pg.nn.Sequential(pg.nn.Linear(64, 64), pg.nn.GELU(), pg.nn.Linear(64, 64),
                             pg.nn.LayerNorm(64), pg.nn.Linear(64, 8))
    recorder = Shared()
    x = pg.Tensor(X)
    with capture.capturing(recorder):
        out = model(x)
        out.realize()
        h = model[3](model[2](model[1](model[0](x))))
        (h @ pg.Tensor(W[0])).realize()
    assert out.requires_grad and recorder.shared[0] == 0
    assert recorder.shared[1] >= 1 and h._node.op == "buffer"
