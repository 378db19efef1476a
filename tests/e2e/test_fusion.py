"""Kernel fusion end to end: how many kernels softmax, log_softmax, LayerNorm and the
784-256-10 MLP's Adam step compile to (on CPU:LLVM, whose schedule has no buffer limit), and
that the fused kernels compute numpy's values on every device (WebGPU's schedule keeps
within its 8 storage-buffer bindings).

Row-wise reduction fusion (`picograd/passes/sched/kernel_grouping.py`) puts a row's reductions
and the elementwise work after them in one kernel: softmax and LayerNorm are one kernel
each; the targets were softmax <= 2, layernorm <= 2 and the MLP step <= 30 (32 since values
a matmul re-read per multiply-add get their own kernels).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F
from picograd.frontend.realize import clear_cache, compile_stats, compiled

rng = np.random.default_rng(11)
X = rng.standard_normal((64, 128)).astype(np.float32)


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _layernorm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * weight + bias


def _layer(device: str) -> tuple[nn.LayerNorm, np.ndarray, np.ndarray]:
    layer = nn.LayerNorm(128, device=device)
    weight = rng.standard_normal(128).astype(np.float32)
    bias = rng.standard_normal(128).astype(np.float32)
    layer.load_state_dict({"weight": weight, "bias": bias})
    return layer, weight, bias


# ── kernel counts (CPU:LLVM) ─────────────────────────────────────────────────


@pytest.mark.parametrize(("name", "most"), [("softmax", 1), ("log_softmax", 1),
                                             ("layernorm", 1)])
def test_row_wise_ops_are_one_kernel(name: str, most: int) -> None:
    x = pg.Tensor(X, device="CPU:LLVM")
    out = _layer("CPU:LLVM")[0](x) if name == "layernorm" else getattr(x, name)(-1)
    program, _ = compiled(out)
    assert program.num_kernels <= most


@pytest.mark.parametrize("op", ["erf", "tanh", "gelu"])
def test_a_piecewise_function_of_a_shared_value_is_one_kernel(op: str) -> None:
    # erf and tanh read their input, |x| and min(|x|, 4) in both branches of their
    # piecewise fits: every reader is in the one kernel, which evaluates each once
    x = pg.Tensor(X, device="CPU:LLVM")
    h = x * 2.0 + 1.0
    out = F.gelu(h) if op == "gelu" else getattr(h, op)()
    program, _ = compiled(out)
    assert program.num_kernels == 1
    want = {"erf": lambda v: np.vectorize(math.erf)(v), "tanh": np.tanh,
            "gelu": lambda v: v * 0.5 * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))}
    np.testing.assert_allclose(out.numpy(), want[op](X * 2.0 + 1.0), rtol=1e-5, atol=1e-6)


def test_a_value_read_in_two_kernels_is_still_stored_once() -> None:
    # the same shared cone read by two results (two kernels): recomputing it in both
    # would double its work, so it keeps its buffer
    x = pg.Tensor(X, device="CPU:LLVM")
    t = ((x * 2.0 + 1.0).exp() * 3.0 + 1.0).sqrt()
    a, b = t * t + t, t - t * 3.0
    program, _ = compiled(a, b)
    assert program.num_kernels == 3


def test_softmax_over_a_leading_axis_stays_within_the_target() -> None:
    # the column loops would enclose a row reduction: it keeps its own kernel
    program, _ = compiled(pg.Tensor(X, device="CPU:LLVM").softmax(0))
    assert program.num_kernels <= 3


def _mlp_step_kernels(device: str) -> list[int]:
    """Kernels compiled by two Adam steps of the 784-256-10 MLP at batch 128 (the first
    step and the steady one may be different graphs)."""
    pg.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256, device=device), nn.ReLU(),
                          nn.Linear(256, 10, device=device))
    opt = pg.optim.Adam(model.parameters(), lr=1e-3)
    data = np.random.default_rng(0)
    pg.realize(*model.parameters())  # the initial values' graph is not the step's
    clear_cache()
    counts = []
    for _ in range(2):
        x = data.standard_normal((128, 784), dtype=np.float32)
        y = data.integers(0, 10, 128).astype(np.int32)
        before = compile_stats().kernels
        loss = F.cross_entropy(model(pg.Tensor(x, device=device)), pg.Tensor(y, device=device))
        loss.backward()
        opt.step()
        opt.zero_grad()
        assert np.isfinite(loss.item())
        counts.append(compile_stats().kernels - before)
    return counts


def test_mlp_adam_step_kernel_count() -> None:
    # 26 before the reuse rule of kernel_grouping.py; it gives the six values that the
    # backward's matmuls re-evaluated per multiply-add (the relu output, its mask times the
    # gradient, the softmax gradient, ...) kernels of their own: 32, and a faster step;
    # matmul-layout adds the transposed copy of each layer's weight for the forward: 34
    counts = _mlp_step_kernels("CPU:LLVM")
    assert counts[0] > 0 and max(counts) <= 34, counts


# ── values on every device ───────────────────────────────────────────────────


def test_softmax_and_log_softmax_values(device: str) -> None:
    x = pg.Tensor(X, device=device)
    np.testing.assert_allclose(x.softmax(-1).numpy(), _softmax(X, -1), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(x.log_softmax(-1).numpy(), np.log(_softmax(X, -1)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.softmax(0).numpy(), _softmax(X, 0), rtol=1e-5, atol=1e-7)


def test_layernorm_values(device: str) -> None:
    layer, weight, bias = _layer(device)
    got = layer(pg.Tensor(X, device=device)).numpy()
    np.testing.assert_allclose(got, _layernorm(X, weight, bias), rtol=1e-4, atol=1e-5)


def test_reduction_epilogues_and_three_dimensional_rows(device: str) -> None:
    x3 = rng.standard_normal((4, 6, 10)).astype(np.float32)
    t = pg.Tensor(x3, device=device)
    np.testing.assert_allclose(t.mean(-1).numpy(), x3.mean(-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t.var((1, 2)).numpy(), x3.var((1, 2), ddof=1), rtol=1e-4)
    np.testing.assert_allclose(t.softmax(-1).numpy(), _softmax(x3, -1), rtol=1e-5,
                               atol=1e-7)
    centred = (t - t.mean((1, 2), keepdim=True)).numpy()
    np.testing.assert_allclose(centred, x3 - x3.mean((1, 2), keepdims=True), rtol=1e-4,
                               atol=1e-5)


def test_softmax_backward_values(device: str) -> None:
    x = pg.Tensor(X[:8, :16], device=device, requires_grad=True)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    (x.softmax(-1) * pg.Tensor(w, device=device)).sum().backward()
    s = _softmax(X[:8, :16], -1)
    want = s * (w - (w * s).sum(-1, keepdims=True))
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-4, atol=1e-6)


def test_mlp_adam_steps_compile_and_run(device: str) -> None:
    counts = _mlp_step_kernels(device)
    assert counts[0] > 0


def test_attention_is_one_kernel_without_the_score_matrix() -> None:
    """The keys' transposed copy, then one attention kernel (`pg_tensor.attention`), whose
    scores take a few rows, never the heads x L x S matrix the decomposition stores."""
    rng = np.random.default_rng(4)
    q, k, v = (pg.Tensor(rng.standard_normal((2, 3, 256, 8)).astype(np.float32))
               for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v)
    program, _ = compiled(out)
    assert program.num_kernels == 2
    scores = 2 * 3 * 256 * 256 * 4  # bytes of the score matrix
    # the transposed keys (24 KiB), the output (24 KiB) and 256 rows of scores (256 KiB)
    assert program.peak_bytes[0] < scores / 4
    np.testing.assert_allclose(out.numpy(), _attention(q.numpy(), k.numpy(), v.numpy()),
                               rtol=1e-5, atol=1e-6)


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    return _softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]), -1) @ v
