"""Autograd: every primitive's backward rule, and composites through them, against torch
(forward values and input gradients) on every device; errors and no_grad semantics."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import picograd as pg

torch = pytest.importorskip("torch", reason="torch is the oracle of the autograd tests")

rng = np.random.default_rng(7)

# name -> (function of one or two tensors, works on both libraries), input shapes, positive?
CASES: dict[str, tuple[Callable, tuple[tuple[int, ...], ...], bool]] = {
    "add_broadcast": (lambda a, b: a + b, ((3, 4), (4,)), False),
    "sub": (lambda a, b: a - b, ((3, 4), (3, 4)), False),
    "mul_broadcast": (lambda a, b: a * b, ((2, 3, 4), (3, 1)), False),
    "div": (lambda a, b: a / b, ((3, 4), (3, 4)), True),
    "neg": (lambda a: -a, ((5,),), False),
    "exp": (lambda a: a.exp(), ((3, 4),), False),
    "log": (lambda a: a.log(), ((3, 4),), True),
    "sqrt": (lambda a: a.sqrt(), ((3, 4),), True),
    "sin": (lambda a: a.sin(), ((3, 4),), False),
    "relu": (lambda a: a.relu(), ((3, 4),), False),
    "maximum": (lambda a, b: a.maximum(b) if hasattr(a, "maximum") else None,
                ((3, 4), (3, 4)), False),
    "sum_axis": (lambda a: a.sum(1), ((3, 4),), False),
    "sum_keepdim": (lambda a: a.sum(0, keepdim=True), ((3, 4),), False),
    "mean": (lambda a: a.mean(), ((3, 4),), False),
    "max_axis": (lambda a: a.max(1)[0] if isinstance(a, torch.Tensor) else a.max(1),
                 ((3, 4),), False),
    "matmul": (lambda a, b: a @ b, ((3, 5), (5, 2)), False),
    "batched_matmul": (lambda a, b: a @ b, ((2, 3, 5), (5, 2)), False),
    "reshape_permute": (lambda a: a.reshape(4, 6).permute(1, 0) * 2, ((2, 3, 4),), False),
    "transpose_expand": (lambda a: a.transpose(0, 1).expand(2, 4, 3), ((3, 4),), False),
    "slice_step": (lambda a: a[1:, ::2] * 3, ((4, 5),), False),
    "slice_step_3": (lambda a: a[:, 1::3], ((2, 8),), False),
    "int_index": (lambda a: a[1], ((3, 4),), False),
    "flip": (lambda a: a.flip(1) * a, ((3, 4),), False),
    "where": (lambda a, b: (a > b).where(a, b) if not isinstance(a, torch.Tensor)
              else torch.where(a > b, a, b), ((3, 4), (3, 4)), False),
    "softmax": (lambda a: a.softmax(1) if isinstance(a, torch.Tensor)
                else pg.nn.functional.softmax(a, 1), ((3, 5),), False),
    "log_softmax": (lambda a: a.log_softmax(1) if isinstance(a, torch.Tensor)
                    else pg.nn.functional.log_softmax(a, 1), ((3, 5),), False),
    "chain": (lambda a, b: ((a * b).sum(1, keepdim=True) - a).exp().mean(0), ((3, 4), (3, 4)),
              False),
}


def _torch_pad(a):
    return torch.nn.functional.pad(a, (1, 2, 0, 1), value=0.5)


@pytest.mark.parametrize("name", list(CASES))
def test_gradients_match_torch(device: str, name: str) -> None:
    fn, shapes, positive = CASES[name]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    if positive:
        arrays = [np.abs(a) + 0.5 for a in arrays]
    ours = [pg.Tensor(a, device=device, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, ref = fn(*ours), fn(*theirs)
    seed = rng.standard_normal(ref.shape).astype(np.float32)
    (out * pg.Tensor(seed, device=device)).sum().backward()
    (ref * torch.from_numpy(seed)).sum().backward()
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    for o, t in zip(ours, theirs, strict=True):
        assert o.grad is not None and o.grad.shape == o.shape
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_pad_gradient_matches_torch(device: str) -> None:
    a = rng.standard_normal((3, 4)).astype(np.float32)
    ours = pg.Tensor(a, device=device, requires_grad=True)
    theirs = torch.tensor(a, requires_grad=True)
    w = rng.standard_normal((4, 7)).astype(np.float32)
    (ours.pad(((0, 1), (1, 2)), value=0.5) * pg.Tensor(w, device=device)).sum().backward()
    (_torch_pad(theirs) * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)


def test_relu_gradient_at_its_edges_is_torchs(device: str) -> None:
    """torch's rule (threshold_backward): 0 at x == 0 (either sign) and below, the gradient
    at NaN and above 0 — not `maximum`'s tie rule, which gives x == 0 half."""
    a = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-30, -1e-30, 2.0], np.float32)
    ours = pg.Tensor(a, device=device, requires_grad=True)
    theirs = torch.tensor(a, requires_grad=True)
    w = np.arange(1, 9, dtype=np.float32)
    (ours.relu() * pg.Tensor(w, device=device)).sum().backward()
    (torch.relu(theirs) * torch.from_numpy(w)).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_gradients_accumulate_across_backward_calls() -> None:
    x = pg.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 7.0, 9.0])


def test_a_tensor_used_twice_gets_both_gradients() -> None:
    x = pg.Tensor([2.0, -1.0], requires_grad=True)
    y = x * x + x  # d/dx = 2x + 1
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, -1.0])


def test_no_grad_and_detach_record_nothing() -> None:
    x = pg.Tensor([1.0, 2.0], requires_grad=True)
    with pg.no_grad():
        y = x * 2
    assert not y.requires_grad
    z = x.detach() * 2
    assert not z.requires_grad
    assert (x * 2).requires_grad


def test_backward_errors_name_the_problem() -> None:
    with pytest.raises(pg.AutogradError, match="does not require grad"):
        pg.Tensor([1.0]).sum().backward()
    x = pg.Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(pg.AutogradError, match=r"non-scalar tensor of shape \(2,\)"):
        (x * 2).backward()
    with pytest.raises(pg.DTypeError, match="only float tensors can require grad"):
        pg.Tensor([1, 2], requires_grad=True)


def test_gradient_argument_of_a_non_scalar() -> None:
    x = pg.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).backward(pg.Tensor([1.0, 0.5, 0.0]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 0.0])


def test_a_composite_op_with_its_own_gradient_rule() -> None:
    # _with_gradient: the value is the no_grad graph's; backward calls the rule once with the
    # output gradient; a None source (an absent bias) gets nothing, the rule's other
    # gradients reach their sources, and the decomposition's rules are not used
    x = pg.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = pg.Tensor([4.0, 5.0, 6.0], requires_grad=True)
    calls = []

    def rule(g: pg.Tensor) -> tuple[pg.Tensor | None, ...]:
        calls.append(g.shape)
        return g * 10, None, g * w

    with pg.no_grad():
        value = x * x
    y = value._with_gradient((x, None, w), rule)
    assert y.requires_grad and not value.requires_grad
    np.testing.assert_allclose(y.numpy(), [1.0, 4.0, 9.0])
    (y * 2).sum().backward()
    assert calls == [(3,)]
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 20.0, 20.0])
    np.testing.assert_allclose(w.grad.numpy(), [8.0, 10.0, 12.0])
    with pg.no_grad():
        assert not value._with_gradient((x, None, w), rule).requires_grad
    plain = pg.Tensor([1.0])._with_gradient((pg.Tensor([2.0]),), rule)
    assert not plain.requires_grad and plain._ctx is None
