"""Bound variables (`pg.Variable(...).bind(value)`): integers the kernels read at run time, so
one compile serves every value. Each test runs several values through one graph and checks
the results against numpy (or torch for gradients) and that only the first value compiled."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from picograd import debug
from picograd.errors import IndexRangeError
from picograd.frontend.realize import build_module, linearize

torch = pytest.importorskip("torch", reason="torch is the oracle of the gradient test")

A = np.arange(2 * 10 * 3, dtype=np.float32).reshape(2, 10, 3) / 7
POS = pg.Variable("pos", 0, 7)
VALUES = (0, 3, 7)


def _compiles_per_value(make, values=VALUES) -> list[int]:
    """Run `make(bound)` for each value (checking inside), the compiles each one caused."""
    counts = []
    for value in values:
        before = pg.compile_stats().compiles
        make(POS.bind(value), value)
        counts.append(pg.compile_stats().compiles - before)
    return counts


def test_a_variable_is_a_scalar_operand(device: str) -> None:
    x = pg.Tensor(A, device=device)
    idx = pg.Tensor.arange(10, dtype=pg.int32, device=device)

    def check(p: pg.SymbolicInt, v: int) -> None:
        np.testing.assert_allclose((x * (p + 1) - p).numpy(), A * (v + 1) - v, rtol=1e-6)
        np.testing.assert_array_equal((idx <= p).numpy(), np.arange(10) <= v)
        np.testing.assert_array_equal((p - 2 < idx).numpy(), v - 2 < np.arange(10))
        np.testing.assert_array_equal((idx + p).numpy(), np.arange(10) + v)

    counts = _compiles_per_value(check)
    assert counts[1:] == [0, 0], counts


def test_indexing_at_a_variable_position(device: str) -> None:
    x = pg.Tensor(A, device=device)

    def check(p: pg.SymbolicInt, v: int) -> None:
        np.testing.assert_array_equal(x[:, p].numpy(), A[:, v])
        np.testing.assert_array_equal(x[:, p:p + 3].numpy(), A[:, v:v + 3])
        np.testing.assert_array_equal(x[..., p + 1:p + 3, 1].numpy(), A[..., v + 1:v + 3, 1])
        np.testing.assert_array_equal(x[1, p + 2].numpy(), A[1, v + 2])

    counts = _compiles_per_value(check)
    assert counts[1:] == [0, 0], counts


def test_assigning_at_a_variable_position(device: str) -> None:
    ones = pg.Tensor(np.ones((2, 2, 3), np.float32), device=device)

    def check(p: pg.SymbolicInt, v: int) -> None:
        x = pg.Tensor(A, device=device)
        x[:, p:p + 2] = ones * 5
        want = A.copy()
        want[:, v:v + 2] = 5
        np.testing.assert_array_equal(x.numpy(), want)
        y = pg.Tensor(A, device=device)
        y[..., p, :] = -1.0
        want = A.copy()
        want[:, v] = -1
        np.testing.assert_array_equal(y.numpy(), want)

    counts = _compiles_per_value(check)
    assert counts[1:] == [0, 0], counts


def test_a_cache_written_at_each_step_stays_one_buffer(device: str) -> None:
    """The tinygrad-style decode loop: write at p, read the whole cache, realize a result.
    The cache becomes the buffer that step stored (no graph grows), so one compile."""
    cache = pg.Tensor.zeros(1, 8, 3, device=device).realize()
    want = np.zeros((1, 8, 3), np.float32)
    row = pg.Tensor(A[:1, :1], device=device)
    counts = []
    for v in range(8):
        p = POS.bind(v)
        before = pg.compile_stats().compiles
        cache[:, p:p + 1] = row * (p + 1)
        got = (cache * (pg.Tensor.arange(8, dtype=pg.int32, device=device) <= p
                        ).unsqueeze(-1)).sum(axis=1)
        want[:, v] = A[0, 0] * (v + 1)
        np.testing.assert_allclose(got.numpy(), want.sum(axis=1), rtol=1e-6)
        assert cache._node.op == "buffer"  # the realize handed the cache its stored value
        counts.append(pg.compile_stats().compiles - before)
    np.testing.assert_array_equal(cache.numpy(), want)
    assert not any(counts[1:]), counts


def test_the_gradient_flows_through_an_assignment_at_a_variable() -> None:
    w = pg.Tensor(A, requires_grad=True)
    tw = torch.tensor(A, requires_grad=True)
    y, ty = w * 2, tw * 2
    y[:, POS.bind(4)] = (w[:, 0] * 3)
    ty[:, 4] = tw[:, 0] * 3
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    assert w.grad is not None
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)


def test_jit_replays_with_each_call_s_values(device: str) -> None:
    x = pg.Tensor(A, device=device)
    step = pg.jit(lambda t, p: (t[:, p:p + 2] * (p + 1)).sum(axis=(0, 1)))
    for v in range(8):
        before = pg.compile_stats().compiles
        out = step(x, POS.bind(v))
        np.testing.assert_allclose(out.numpy(), (A[:, v:v + 2] * (v + 1)).sum(axis=(0, 1)),
                                   rtol=1e-5)
        # v = 0 runs eagerly, v = 1 captures: the slice's positions lie inside the dim for
        # every value of POS, so the eager graph has no range check, but a capture checks
        # every index (a replay's are not seen on the host): one graph of its own. Replays
        # (v >= 2) compile nothing.
        assert pg.compile_stats().compiles - before <= (1 if v <= 1 else 0), v


def test_jit_refuses_two_values_of_one_variable() -> None:
    step = pg.jit(lambda p, q: pg.Tensor.arange(3, dtype=pg.int32) + p + q)
    with pytest.raises(pg.JitError, match="'pos' is bound to two values"):
        step(POS.bind(1), POS.bind(2))


def test_debug_2_prints_the_values_and_the_ir_names_the_variable(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_CACHE", "0")
    pg.frontend.clear_cache()
    x = pg.Tensor(A)
    with debug.flags(debug=2, viz=False):
        for v in (2, 5):
            x[:, POS.bind(v)].realize()
    err = capsys.readouterr().err
    assert "variables pos in [0, 7]" in err  # the compile summary
    assert "variables pos=2" in err and "variables pos=5" in err  # each run
    module = build_module(*_key(x[:, POS.bind(3)]))
    assert "%pos : tensor<i32>" in str(module)


def _key(t: pg.Tensor):
    nodes, entries, _, outputs = linearize([t._node])
    return nodes, entries, outputs


def test_a_range_outside_the_dim_is_refused_before_anything_runs() -> None:
    x = pg.Tensor(A)
    with pytest.raises(IndexRangeError, match=r"positions 3\.\.10 .*'pos' in \[0, 7\].*size 10"):
        x[:, POS.bind(0) + 3]
    with pytest.raises(IndexRangeError, match="size 10"):
        x[:, POS.bind(0):POS.bind(0) + 4]
    with pytest.raises(IndexRangeError, match="size 10"):
        x[:, POS.bind(0) - 1] = 0.0
    with pytest.raises(IndexRangeError, match=r"8 is outside the range \[0, 7\] of variable "
                                              r"'pos'"):
        POS.bind(8)


def test_what_a_variable_cannot_be() -> None:
    x = pg.Tensor(A)
    p = POS.bind(2)
    with pytest.raises(pg.ShapeError, match="symbolic length"):
        x[:, :p]
    with pytest.raises(pg.ShapeError, match="symbolic length"):
        x[:, p:p + 2:2]
    with pytest.raises(pg.ShapeError, match="every other dim taken whole"):
        x[0, p] = 1.0
    with pytest.raises(TypeError, match="symbolic"):
        int(p)
    with pytest.raises(TypeError, match="symbolic"):
        range(10)[p]
    with pytest.raises(ValueError, match="empty range"):
        pg.Variable("n", 3, 2)
    with pytest.raises(ValueError, match="identifier"):
        pg.Variable("not a name", 0, 2)
