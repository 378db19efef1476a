"""Matmul operand layouts (`matmul-layout`) and `Tensor.contiguous()`: `x @ W.T` as
`nn.Linear` computes it, attention's `q @ k.transpose(-1, -2)` and their gradients match
torch on every device; the transposed copy of a weight is a kernel of its own that a CPU
program makes once and keeps while the weight's buffer is the same, and makes again for a
new one, as it does a weight's copy in column panels; `contiguous()` keeps values and
gradients and makes a kernel boundary."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd import nn
from picograd.frontend.realize import compiled

from .helpers import assert_forward_and_grads_match

torch = pytest.importorskip("torch", reason="torch is the oracle of the layout tests")

rng = np.random.default_rng(19)


def _random(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def test_linear_with_a_copied_weight_matches_torch(device: str) -> None:
    x, w, b = _random(2, 40, 24), _random(20, 24), _random(20)
    px = pg.Tensor(x, device=device, requires_grad=True)
    pw = pg.Tensor(w, device=device, requires_grad=True)
    pb = pg.Tensor(b, device=device, requires_grad=True)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    assert_forward_and_grads_match(nn.functional.linear(px, pw, pb),
                                   torch.nn.functional.linear(tx, tw, tb),
                                   [px, pw, pb], [tx, tw, tb], _random(2, 40, 20), device)


def test_attention_scores_with_copied_keys_match_torch(device: str) -> None:
    q, k = _random(2, 3, 48, 8), _random(2, 3, 40, 8)
    pq, pk = (pg.Tensor(a, device=device, requires_grad=True) for a in (q, k))
    tq, tk = (torch.tensor(a, requires_grad=True) for a in (q, k))
    assert_forward_and_grads_match(pq @ pk.transpose(-1, -2), tq @ tk.transpose(-1, -2),
                                   [pq, pk], [tq, tk], _random(2, 3, 48, 40), device)


def _launch_counter(program: Any) -> list[int]:
    """Wrap `program`'s kernels so the returned list counts their calls."""
    calls = [0]

    def wrap(_: int, kernel: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any) -> Any:
            calls[0] += 1
            return kernel(*args)
        return counted

    program.wrap_kernels(wrap)
    return calls


def test_a_weight_copy_is_made_once_while_the_weight_is_unchanged() -> None:
    w, x = pg.Tensor(_random(16, 32)), pg.Tensor(_random(64, 32))
    program, inputs = compiled(x @ w.T)
    assert program.num_kernels == 2  # the transposed copy of w, then the matmul
    calls = _launch_counter(program)
    first = program.run(inputs)[0]
    second = program.run(inputs)[0]
    assert calls[0] == 3  # the second run reused the copy
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first.reshape(64, 16), x.numpy() @ w.numpy().T, rtol=1e-5,
                               atol=1e-5)
    fresh = [a.copy() for a in inputs]  # equal values, other buffers: copied again
    program.run(fresh)
    assert calls[0] == 5


def test_benchmark_times_the_kernels_a_run_with_the_same_weight_launches() -> None:
    w, x = pg.Tensor(_random(16, 32)), pg.Tensor(_random(64, 32))
    program, inputs = compiled(x @ w.T)
    calls = _launch_counter(program)
    program.benchmark(inputs, 3)
    assert calls[0] == 2 + 3  # the copy in the untimed first run, the matmul in all four


def test_a_new_weight_value_is_copied_again() -> None:
    layer = nn.Linear(32, 16, bias=False)
    x = _random(64, 32)
    for _ in range(3):
        new = _random(16, 32)
        layer.weight.assign(pg.Tensor(new))
        np.testing.assert_allclose(layer(pg.Tensor(x)).numpy(), x @ new.T, rtol=1e-5,
                                   atol=1e-5)


@pytest.mark.parametrize("transposed", [False, True])
def test_weight_rows_4_kib_apart_are_read_through_a_padded_copy_made_once(
        transposed: bool) -> None:
    # 1024 f32 columns put W's rows 4 KiB apart: the CPU pipelines pad them (matmul-layout
    # alias-bytes), in the transposed copy of x @ W.T as in a copy of its own for x @ W
    w_np, x_np = _random(1024, 48) if transposed else _random(48, 1024), _random(40, 48)
    w, x = pg.Tensor(w_np), pg.Tensor(x_np)
    program, inputs = compiled(x @ (w.T if transposed else w))
    assert program.num_kernels == 2  # the padded copy of w, then the matmul
    _assert_copy_made_once(program, inputs, x_np @ (w_np.T if transposed else w_np))


def _assert_copy_made_once(program: Any, inputs: Any, want: np.ndarray) -> None:
    """Two runs of `program` (a weight's kept copy, then the matmul) give `want` and the same
    bits, and the second launches only the matmul: it reused the copy."""
    calls = _launch_counter(program)
    first, second = program.run(inputs)[0], program.run(inputs)[0]
    assert calls[0] == 3
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first.reshape(want.shape), want, rtol=1e-4, atol=1e-4)


def test_weight_rows_that_do_not_alias_are_read_in_place() -> None:
    for w_shape in ((48, 1000), (8, 1024)):  # rows 4000 bytes apart; fewer rows than ways
        program, _ = compiled(pg.Tensor(_random(40, w_shape[0])) @ pg.Tensor(_random(*w_shape)))
        assert program.num_kernels == 1


@pytest.mark.parametrize("transposed", [False, True])
def test_a_weight_is_read_through_column_panels_made_once(transposed: bool) -> None:
    # 256 columns and k = 96: the CPU pipelines lay W out in panels of the register tile's
    # columns (matmul-layout panel-cols), also for 8 rows (a kept copy pays for few rows)
    for rows in (8, 100):
        w_np, x_np = _random(256, 96) if transposed else _random(96, 256), _random(rows, 96)
        program, inputs = compiled(pg.Tensor(x_np) @ (pg.Tensor(w_np).T if transposed
                                                      else pg.Tensor(w_np)))
        assert program.num_kernels == 2  # the panel copy of w, then the matmul
        _assert_copy_made_once(program, inputs, x_np @ (w_np.T if transposed else w_np))


def test_one_row_keeps_its_dot_products() -> None:
    w, x = pg.Tensor(_random(16, 32)), pg.Tensor(_random(1, 32))
    program, _ = compiled(x @ w.T)
    assert program.num_kernels == 1  # read once per element: a copy would cost more


def test_contiguous_keeps_values_and_gradients(device: str) -> None:
    a = _random(3, 4)
    pa = pg.Tensor(a, device=device, requires_grad=True)
    ta = torch.tensor(a, requires_grad=True)
    assert_forward_and_grads_match((pa * 2).transpose(0, 1).contiguous().reshape(12),
                                   (ta * 2).transpose(0, 1).contiguous().reshape(12),
                                   [pa], [ta], _random(12), device)


def test_contiguous_is_a_kernel_boundary_and_a_no_op_when_realized() -> None:
    t = pg.Tensor(_random(8, 8))
    assert t.contiguous() is t
    shared = (t.exp() + 1).contiguous()
    assert shared.contiguous() is shared
    program, _ = compiled(shared * 2 + shared.T)
    assert program.num_kernels == 2  # exp + 1 once, then the sum reading its buffer


@pytest.mark.parametrize("a_shape, w_shape", [((40, 0), (3, 0)), ((0, 8), (40, 8)),
                                              ((2, 40, 0), (3, 0))])
def test_empty_products_with_a_transposed_weight_match_torch(
        a_shape: tuple[int, ...], w_shape: tuple[int, ...]) -> None:
    a, w = np.ones(a_shape, np.float32), np.ones(w_shape, np.float32)
    want = torch.tensor(a) @ torch.tensor(w).T  # zeros where the sum is empty
    np.testing.assert_array_equal((pg.Tensor(a) @ pg.Tensor(w).T).numpy(), want.numpy())
