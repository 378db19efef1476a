"""`torch.compile(model, backend="picograd")` against torch eager: outputs, gradients
through `loss.backward()`, an SGD training loop, the entry point, and the fallback of a
graph with an op picograd lacks."""

from __future__ import annotations

import copy
import itertools
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn as nn

import picograd as pg
from picograd.torch_backend import backend, explain
from picograd.torch_backend.convert import Binder, Handout
from picograd.torch_backend.registry import ATEN

CALLS = 4  # calls 1-2 of a signature run eagerly, 3+ replay the captured programs


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _inputs(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _grads(model: nn.Module, x: torch.Tensor) -> list[torch.Tensor | None]:
    return [p.grad for p in model.parameters()] + [x.grad]


def _check_layer(make: Callable[[], nn.Module], shape: tuple[int, ...],
                 make_input: Callable[[int], torch.Tensor] | None = None,
                 atol: float = 1e-5) -> None:
    """The layer compiled by picograd gives eager's outputs on several calls (new inputs
    each: the replays must read them) and eager's gradients of a weighted loss."""
    torch.manual_seed(0)
    eager = make()
    compiled_model = copy.deepcopy(eager)
    compiled = torch.compile(compiled_model, backend=backend)
    new_input = make_input or (lambda seed: _inputs(shape, seed).requires_grad_())
    for seed in range(CALLS):
        x_eager = new_input(seed)
        x_compiled = x_eager.detach().clone().requires_grad_(x_eager.requires_grad)
        want, got = eager(x_eager), compiled(x_compiled)
        torch.testing.assert_close(got, want, atol=atol, rtol=1e-5)
        weights = _inputs(tuple(want.shape), 100 + seed)
        if any(p.requires_grad for p in eager.parameters()) or x_eager.requires_grad:
            eager.zero_grad()
            compiled_model.zero_grad()
            (want * weights).sum().backward()
            (got * weights).sum().backward()
            for g_got, g_want in zip(_grads(compiled_model, x_compiled),
                                     _grads(eager, x_eager), strict=True):
                assert (g_got is None) == (g_want is None)
                if g_want is not None:
                    torch.testing.assert_close(g_got, g_want, atol=atol, rtol=1e-5)


def _ran_in_picograd(model: nn.Module, *inputs: Any) -> None:
    report = explain(model, *inputs, backward=True, verbose=False)
    assert report.graphs and not report.torch, str(report)


def test_linear() -> None:
    _check_layer(lambda: nn.Linear(6, 4), (3, 6))
    _ran_in_picograd(nn.Linear(6, 4), _inputs((3, 6), 0).requires_grad_())


def test_conv2d() -> None:
    _check_layer(lambda: nn.Conv2d(3, 5, 3, stride=2, padding=1), (2, 3, 9, 9), atol=1e-4)
    _ran_in_picograd(nn.Conv2d(3, 5, 3), _inputs((2, 3, 9, 9), 0).requires_grad_())


def test_batchnorm2d_eval() -> None:
    def make() -> nn.Module:
        bn = nn.BatchNorm2d(4)
        assert bn.running_mean is not None and bn.running_var is not None
        with torch.no_grad():  # running statistics that are not the identity
            bn.running_mean.uniform_(-1, 1)
            bn.running_var.uniform_(0.5, 2)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-1, 1)
        return bn.eval()
    _check_layer(make, (2, 4, 5, 5))
    _ran_in_picograd(make(), _inputs((2, 4, 5, 5), 0).requires_grad_())


def test_layer_norm() -> None:
    def make() -> nn.Module:
        ln = nn.LayerNorm(7)
        with torch.no_grad():
            ln.weight.uniform_(0.5, 1.5)
            ln.bias.uniform_(-1, 1)
        return ln
    _check_layer(make, (2, 3, 7))
    _ran_in_picograd(make(), _inputs((2, 3, 7), 0).requires_grad_())


@pytest.mark.parametrize("make", [lambda: nn.MaxPool2d(2), lambda: nn.MaxPool2d(3, 2, 1),
                                  lambda: nn.AvgPool2d(2), lambda: nn.AvgPool2d(3, 2, 1)],
                         ids=["max2", "max3s2p1", "avg2", "avg3s2p1"])
def test_pooling(make: Callable[[], nn.Module]) -> None:
    _check_layer(make, (2, 3, 8, 8))
    _ran_in_picograd(make(), _inputs((2, 3, 8, 8), 0).requires_grad_())


def test_embedding() -> None:
    def indices(seed: int) -> torch.Tensor:
        # repeated indices: the weight's gradient accumulates them
        return torch.randint(0, 10, (3, 5), generator=torch.Generator().manual_seed(seed))
    _check_layer(lambda: nn.Embedding(10, 4), (), make_input=indices)
    _ran_in_picograd(nn.Embedding(10, 4), indices(0))
    # the padding row gets no gradient; scale_grad_by_freq divides by each index's count
    for make in (lambda: nn.Embedding(10, 4, padding_idx=2),
                 lambda: nn.Embedding(10, 4, padding_idx=0, scale_grad_by_freq=True)):
        _check_layer(make, (), make_input=indices)
        _ran_in_picograd(make(), indices(0))


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def _train(model: nn.Module, step_loss: Callable[..., torch.Tensor]) -> list[float]:
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(3):
        x = _inputs((6, 8), step)
        y = torch.randint(0, 4, (6,), generator=torch.Generator().manual_seed(10 + step))
        opt.zero_grad()
        loss = step_loss(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_mlp_sgd_training_matches_eager() -> None:
    torch.manual_seed(0)
    eager, mine = _mlp(), _mlp()
    mine.load_state_dict(eager.state_dict())

    def eager_loss(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(eager(x), y)

    def my_loss(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(mine(x), y)

    want = _train(eager, eager_loss)
    got = _train(mine, torch.compile(my_loss, backend=backend))
    assert got == pytest.approx(want, abs=1e-4)
    assert len(set(want)) == 3  # the steps changed the model
    for p_got, p_want in zip(mine.parameters(), eager.parameters(), strict=True):
        torch.testing.assert_close(p_got, p_want, atol=1e-5, rtol=1e-5)


def test_entry_point_found_without_importing_picograd() -> None:
    code = ("import sys, torch\n"
            "assert 'picograd' in torch._dynamo.list_backends(), torch._dynamo.list_backends()\n"
            "assert 'picograd' not in sys.modules\n"
            "m = torch.nn.Linear(3, 2); x = torch.randn(4, 3)\n"
            "out = torch.compile(m, backend='picograd')(x)\n"
            "torch.testing.assert_close(out, m(x))\n"
            "assert 'picograd.torch_backend' in sys.modules\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300, cwd="/")
    assert done.returncode == 0, done.stderr[-3000:]


def test_unsupported_op_runs_in_torch_with_one_log_line(caplog: pytest.LogCaptureFixture
                                                       ) -> None:
    # picograd has no Bessel functions: the graph is split around it, torch runs it and
    # says so once, picograd runs the rest
    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.special.bessel_j0(x * 2) + 1

    compiled = torch.compile(f, backend=backend)
    with caplog.at_level(logging.WARNING, logger="picograd.torch_backend"):
        for seed in range(3):
            x = _inputs((5,), seed)
            torch.testing.assert_close(compiled(x), f(x))
        torch._dynamo.reset()
        compiled = torch.compile(f, backend=backend)
        torch.testing.assert_close(compiled(_inputs((5,), 9)), f(_inputs((5,), 9)))
    lines = [r.getMessage() for r in caplog.records if r.name == "picograd.torch_backend"]
    assert len(lines) == 1 and "aten.special_bessel_j0" in lines[0], lines
    report = explain(f, _inputs((5,), 0), verbose=False)
    assert report.torch == {"aten.special_bessel_j0.default": 1}
    assert report.picograd == {"aten.mul.Tensor": 1, "aten.add.Tensor": 1}


def test_a_graph_split_around_untranslated_ops_trains_as_eager() -> None:
    # lgamma (forward) and digamma (its gradient) have no translation: both graphs are
    # split, and outputs and gradients are eager's
    def f(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        h = torch.lgamma((x @ w).abs() + 1).relu()
        return (h * h).sum()

    compiled = torch.compile(f, backend=backend)
    for seed in range(3):
        x, w = _inputs((4, 3), seed).requires_grad_(), _inputs((3, 5), seed + 7).requires_grad_()
        got = compiled(x, w)
        got.backward()
        gx, gw = x.grad, w.grad
        x.grad = w.grad = None
        want = f(x, w)
        want.backward()
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(gx, x.grad)
        torch.testing.assert_close(gw, w.grad)
    report = explain(f, _inputs((4, 3), 0).requires_grad_(), _inputs((3, 5), 1).requires_grad_(),
                     backward=True, verbose=False)
    assert report.torch == {"aten.lgamma.default": 1, "aten.digamma.default": 1}
    assert report.picograd["aten.mm.default"] >= 1


def test_batchnorm2d_training_updates_running_statistics() -> None:
    torch.manual_seed(0)
    eager = nn.BatchNorm2d(3)
    mine = copy.deepcopy(eager)
    _check_layer(lambda: eager, (4, 3, 5, 5))  # outputs and gradients; updates `eager`
    compiled = torch.compile(mine, backend=backend)
    reference = nn.BatchNorm2d(3)
    for seed in range(CALLS):
        x = _inputs((4, 3, 5, 5), seed)
        torch.testing.assert_close(compiled(x), reference(x), atol=1e-5, rtol=1e-5)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        torch.testing.assert_close(getattr(mine, name), getattr(reference, name))
    _ran_in_picograd(nn.BatchNorm2d(3), _inputs((4, 3, 5, 5), 0).requires_grad_())


def test_new_sizes_compile_again_and_stay_in_picograd(
        caplog: pytest.LogCaptureFixture) -> None:
    torch.manual_seed(0)
    eager = _mlp()
    mine = copy.deepcopy(eager)
    compiled = torch.compile(mine, backend=backend)
    with caplog.at_level(logging.INFO, logger="picograd.torch_backend"):
        for seed, batch in enumerate([3, 5, 7, 5, 5, 5, 3]):
            x = _inputs((batch, 8), seed)
            torch.testing.assert_close(compiled(x), eager(x), atol=1e-5, rtol=1e-5)
            compiled(x).sum().backward()
            eager(x).sum().backward()
    for p_got, p_want in zip(mine.parameters(), eager.parameters(), strict=True):
        torch.testing.assert_close(p_got.grad, p_want.grad, atol=1e-4, rtol=1e-5)
    records = [r for r in caplog.records if r.name == "picograd.torch_backend"]
    assert not [r for r in records if r.levelno >= logging.WARNING]  # nothing fell back
    assert any("new input sizes" in r.getMessage() for r in records)


@pytest.mark.parametrize("how", ["dynamic=True", "mark_dynamic"])
def test_dynamic_sizes_compile_per_size_and_say_so(how: str,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    # picograd's kernels have static shapes: a dim torch keeps symbolic compiles once per
    # concrete size, each later size logged with the dims torch made symbolic
    torch.manual_seed(0)
    eager = _mlp()
    compiled = torch.compile(copy.deepcopy(eager), backend=backend,
                             dynamic=True if how == "dynamic=True" else None)
    with caplog.at_level(logging.INFO, logger="picograd.torch_backend"):
        for seed, batch in enumerate([6, 3, 9, 3]):
            x = _inputs((batch, 8), seed)
            if how == "mark_dynamic":
                torch._dynamo.mark_dynamic(x, 0)
            with torch.no_grad():
                torch.testing.assert_close(compiled(x), eager(x), atol=1e-5, rtol=1e-5)
    notes = [r.getMessage() for r in caplog.records if r.name == "picograd.torch_backend"
             and "new input sizes" in r.getMessage()]
    assert len(notes) == 2 and all("dims [0]" in n and "static shapes" in n for n in notes)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING
                and r.name == "picograd.torch_backend"]


def _trains_as_eager(eager: nn.Module, optimizer: Callable[[Any], torch.optim.Optimizer],
                     x_shape: tuple[int, ...], classes: int, steps: int) -> None:
    """`eager` and its copy compiled by picograd, trained side by side by their own
    `optimizer`s on the same batches: equal losses at every step, equal final states."""
    mine = copy.deepcopy(eager)
    compiled = torch.compile(mine, backend=backend)
    losses: dict[str, list[float]] = {"eager": [], "picograd": []}
    for name, model, run in (("eager", eager, eager), ("picograd", mine, compiled)):
        opt = optimizer(model.parameters())
        for step in range(steps):
            x = _inputs(x_shape, step)
            y = torch.randint(0, classes, x_shape[:1],
                              generator=torch.Generator().manual_seed(step))
            opt.zero_grad()
            loss = nn.functional.cross_entropy(run(x), y)
            loss.backward()
            opt.step()
            losses[name].append(loss.item())
    assert losses["picograd"] == pytest.approx(losses["eager"], abs=1e-4)
    assert len(set(losses["eager"])) == steps
    for p_got, p_want in zip(mine.state_dict().values(), eager.state_dict().values(),
                             strict=True):
        torch.testing.assert_close(p_got, p_want, atol=1e-5, rtol=1e-4)


def test_cnn_sgd_momentum_training_matches_eager() -> None:
    torch.manual_seed(0)
    cnn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Conv2d(4, 6, 3), nn.ReLU(), nn.AvgPool2d(2),
                        nn.Flatten(), nn.Linear(6 * 2 * 2, 3))
    _trains_as_eager(cnn, lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9),
                     (5, 1, 12, 12), 3, 3)


def test_mlp_adamw_training_matches_eager() -> None:
    # the optimiser is torch's (outside the compiled region): AdamW's decoupled weight
    # decay and bias corrections act on the gradients picograd computed
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(12, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4))
    _trains_as_eager(mlp, lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1),
                     (8, 12), 4, 5)


def test_an_error_inside_a_replayed_graph_reaches_the_user_as_torchs() -> None:
    embedding = nn.Embedding(10, 4)
    compiled = torch.compile(embedding, backend=backend)
    for start in range(CALLS):  # past the capture: the replay checks the indices too
        torch.testing.assert_close(compiled(torch.tensor([start, start + 1])),
                                   embedding(torch.tensor([start, start + 1])))
    with pytest.raises(IndexError):  # what torch raises
        embedding(torch.tensor([1, 20]))
    with pytest.raises(IndexError, match="embedding: index 20 is out of bounds"):
        compiled(torch.tensor([1, 20]))


class _SelfAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attention = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.attention(x, x, x)[0]


class _Attention(nn.Module):
    """torch's scaled_dot_product_attention (its CPU flash op), causal or with a mask.
    Keys and values are parameters: with k and v computed from q, AOTAutograd with the
    core ATen decompositions gets the gradient wrong in torch 2.13 itself (its own
    aot_eager is right), so such a model cannot be checked against eager."""

    def __init__(self, causal: bool) -> None:
        super().__init__()
        self.causal = causal
        self.k = nn.Parameter(torch.randn(2, 2, 5, 4))
        self.v = nn.Parameter(torch.randn(2, 2, 5, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = x, self.k, self.v
        mask = None if self.causal else torch.ones(x.shape[-2], x.shape[-2],
                                                  dtype=torch.bool).triu()
        return nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                          is_causal=self.causal)


@pytest.mark.parametrize(("make", "shape"), [
    (lambda: nn.Conv1d(3, 4, 3, padding=1), (2, 3, 9)),
    (lambda: nn.Conv3d(2, 3, 3, stride=2), (1, 2, 6, 6, 6)),
    (lambda: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1), (1, 3, 5, 5)),
    (lambda: nn.GroupNorm(2, 4), (2, 4, 3, 3)),
    (lambda: nn.GELU(), (3, 4)), (lambda: nn.GELU("tanh"), (3, 4)),
    (lambda: nn.LeakyReLU(0.2), (3, 4)), (lambda: nn.Softmax(-1), (3, 4)),
    (_SelfAttention, (2, 5, 8)),
    (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), (2, 5, 8)),
    (lambda: _Attention(causal=True), (2, 2, 5, 4)),
    (lambda: _Attention(causal=False), (2, 2, 5, 4)),
    (lambda: nn.AdaptiveAvgPool2d((3, 2)), (2, 3, 7, 5)),
    (lambda: nn.AdaptiveAvgPool1d(3), (2, 3, 7)),
    (lambda: nn.AdaptiveAvgPool3d(2), (1, 2, 5, 4, 3)),
    (lambda: nn.ReflectionPad2d((1, 2, 0, 1)), (2, 3, 4, 5)),
    (lambda: nn.ReflectionPad1d(2), (2, 3, 5)),
    (lambda: nn.ReplicationPad2d(1), (2, 3, 4, 5)),
    (lambda: nn.ReplicationPad3d((1, 0, 2, 1, 0, 1)), (1, 2, 3, 4, 3)),
    (lambda: nn.AvgPool3d(2, stride=(1, 2, 2), padding=1, count_include_pad=False),
     (1, 2, 4, 5, 4)),
    (lambda: nn.MaxPool3d(3, stride=2, padding=1), (2, 2, 5, 4, 6)),
], ids=["conv1d", "conv3d", "conv_transpose2d", "group_norm", "gelu", "gelu_tanh",
        "leaky_relu", "softmax", "multihead_attention", "transformer_encoder_layer",
        "sdpa_causal", "sdpa_mask", "adaptive_avg_pool2d", "adaptive_avg_pool1d",
        "adaptive_avg_pool3d", "reflection_pad2d", "reflection_pad1d", "replication_pad2d",
        "replication_pad3d", "avg_pool3d", "max_pool3d"])
def test_more_layers(make: Callable[[], nn.Module], shape: tuple[int, ...]) -> None:
    _check_layer(make, shape, atol=1e-4)
    _ran_in_picograd(make(), _inputs(shape, 0).requires_grad_())


def _elementwise(x: torch.Tensor) -> torch.Tensor:
    y = torch.remainder(x * 3, 2) + torch.fmod(x * 3, -2) + torch.atan2(x, x.flip(0) + 0.1)
    y = y + torch.log1p(x.abs()) + torch.expm1(x) + torch.log2(x.abs() + 1) + x.sign()
    y = y + x.floor() + x.ceil() + x.trunc() + (x * 2).tril(-1) + x.triu(1)
    return y + x.cumsum(1) + x.flip(1, 0)


def test_elementwise_and_movement_ops() -> None:
    compiled = torch.compile(_elementwise, backend=backend)
    for seed in range(CALLS):
        x = _inputs((5, 6), seed) * 3
        torch.testing.assert_close(compiled(x), _elementwise(x), atol=1e-5, rtol=1e-5)
    report = explain(_elementwise, _inputs((5, 6), 0), verbose=False)
    assert report.graphs and not report.torch, str(report)


# core ATen ops that torch does not decompose, each compiled alone (inference: a few have
# no gradient), against eager; the inputs hold ties, zeros and values inside each domain
_CORE_OPS: dict[str, Callable[..., Any]] = {
    "trig": lambda x: torch.tan(x) + torch.asin(x / 4) + torch.acos(x / 4)
    + torch.atan(x),
    "hyperbolic": lambda x: torch.sinh(x) + torch.cosh(x) + torch.asinh(x)
    + torch.acosh(x.abs() + 1) + torch.atanh(x / 4),
    "round_log10": lambda x: torch.round(x * 2) + torch.log10(x.abs() + 1),
    "isinf_isnan": lambda x: torch.isinf(1 / x) | torch.isnan(torch.log(x)),
    "bitwise_scalar": lambda x: ((x * 3).to(torch.int32) & 6) | 1 ^ 3,
    "logical_xor": lambda x: torch.logical_xor(x > 0, x < 1),
    "pow_scalar_base": lambda x: torch.pow(2.0, x),
    "clamp_tensor": lambda x: torch.clamp(x, x * 0 - 0.5, x * 0 + 0.5),
    "div_modes": lambda x: torch.div(x, 0.7, rounding_mode="floor")
    + torch.div(x * 3, x * 0 + 2, rounding_mode="trunc"),
    "fill": lambda x: x.clone().fill_(2.5) + x,
    "elu_hardtanh": lambda x: torch.nn.functional.elu(x, 0.5) + torch.nn.functional.selu(x)
    + torch.nn.functional.hardtanh(x, -0.5, 0.25),
    "prod_var": lambda x: x.prod(1).sum() + x.prod() + x.var(0)
    + x.var(1, unbiased=False).sum(),
    "arg_reductions": lambda x: (x.argmax(1) + x.argmin(0).sum()).float()
    + x.max(1).values + x.min(0).indices.float().sum(),
    "sort_topk": lambda x: x.sort(1, descending=True).values
    + x.sort(0).indices.float()[:, :1] + x.topk(2, 1).values.sum(),
    "repeat_diagonal": lambda x: x.repeat(2, 1)[:, :4] + x.diagonal().sum(),
    # functionalized in-place code: copy_, slice and select assignment, a filled empty
    "copy": lambda x: x.clone().copy_(x[0] * 2) + x,
    "slice_scatter": lambda x: _assigned(x, (slice(None), slice(1, 3)), x[:, :2] * 2),
    "select_scatter": lambda x: _assigned(x, (1,), x[2] - 1),
    "strided_slice_scatter": lambda x: _assigned(x, (slice(None), slice(None, None, 2)),
                                                 x[:, 1::2] * -3),
    "empty": lambda x: torch.empty(3, 4).fill_(1.5) * x,
    "avg_pool1d": lambda x: torch.nn.functional.avg_pool1d(x.unsqueeze(0), 2, 1, 1,
                                                          count_include_pad=False),
    "scatter_reduce": lambda x: x.scatter_reduce(
        1, (x * 7).abs().long() % 4, x * 2, "amax")
    + x.scatter_reduce(0, (x * 5).abs().long() % 3, x, "mean", include_self=False),
}


def _assigned(x: torch.Tensor, index: tuple[Any, ...], value: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[index] = value
    return y


@pytest.mark.parametrize("name", list(_CORE_OPS))
def test_core_aten_ops_run_in_picograd(name: str) -> None:
    fn = _CORE_OPS[name]
    x = torch.tensor([[0.5, -1.25, 2.0, 0.0], [3.0, -0.5, 1.5, 2.5], [-2.0, 0.75, -3.5, 1.0]])
    with torch.no_grad():
        got = torch.compile(fn, backend=backend)(x)
        torch.testing.assert_close(got, fn(x), equal_nan=True)
        report = explain(fn, x, verbose=False)
    assert report.graphs and not report.torch, str(report)


def test_pipeline_and_debug_options_reach_picograds_realizes(
        capfd: pytest.CaptureFixture[str]) -> None:
    # a pipeline without loop-optimize (untiled kernels: the same values), DEBUG=1 lines
    # while the compiled graphs run, and a pipeline that does not parse is picograd's
    # PipelineError at the call
    pipeline = ("tensor-simplify,convert-tensor-to-sched,convert-sched-to-loop,loop-simplify,"
                "convert-loop-to-uop,uop-simplify,cse,convert-uop-to-llvm")

    def f(x: torch.Tensor) -> torch.Tensor:
        return (x @ x.T).softmax(-1) * 3

    x = _inputs((6, 5), 0)
    compiled = torch.compile(f, backend="picograd",
                             options={"device": "CPU:LLVM", "pipeline": pipeline, "debug": 1})
    for _ in range(3):
        torch.testing.assert_close(compiled(x), f(x))
    assert "[pg] graph" in capfd.readouterr().err
    torch._dynamo.reset()
    broken = torch.compile(f, backend="picograd", options={"pipeline": "no-such-pass"})
    with pytest.raises(Exception, match="no-such-pass"):
        broken(x)
    with pytest.raises(Exception, match="debug must be a DEBUG level"):
        torch.compile(f, backend="picograd", options={"debug": 9})(x)


class _Recurrent(nn.Module):
    """A 2-layer recurrent layer's output sequence (the states are left out)."""

    def __init__(self, cell: type[nn.Module], **options: Any):
        super().__init__()
        self.rnn = cell(6, 8, num_layers=2, batch_first=True, **options)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rnn(x)[0]


@pytest.mark.parametrize("make", [lambda: _Recurrent(nn.LSTM, bidirectional=True),
                                  lambda: _Recurrent(nn.GRU),
                                  lambda: _Recurrent(nn.RNN, nonlinearity="relu")],
                         ids=["lstm_bidirectional", "gru", "rnn_relu"])
def test_recurrent_layers(make: Callable[[], nn.Module]) -> None:
    # dynamo runs RNN modules eagerly unless `allow_rnn` is set: with it, the unrolled
    # steps are ATen graphs like any other, forward and backward in picograd
    with torch._dynamo.config.patch(allow_rnn=True):
        _check_layer(make, (3, 5, 6), atol=1e-4)
        _ran_in_picograd(make(), _inputs((3, 5, 6), 0).requires_grad_())


def test_a_transformers_bert_trains_as_eager() -> None:
    # a BERT from transformers (small random config, padding mask): every op in picograd,
    # forward and backward; gradients as eager's. The pooler's output is not in the loss:
    # eager leaves its gradients None, AOTAutograd's backward gives them as zeros
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=37, max_position_embeddings=64, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0)
    eager = transformers.BertModel(config).train()
    mine = copy.deepcopy(eager)
    compiled = torch.compile(mine, backend=backend)
    ids = torch.randint(0, 99, (2, 7), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[1, 5:] = 0
    for step in range(3):
        weights = _inputs((2, 7, 32), step)
        want = (eager(input_ids=ids, attention_mask=mask).last_hidden_state * weights).sum()
        got = (compiled(input_ids=ids, attention_mask=mask).last_hidden_state * weights).sum()
        want.backward()
        got.backward()
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4)
    for (name, p_want), p_got in zip(eager.named_parameters(), mine.parameters(), strict=True):
        if p_want.grad is None:
            assert name.startswith("pooler.") and (p_got.grad is None or not p_got.grad.any())
        else:
            torch.testing.assert_close(p_got.grad, p_want.grad, rtol=1e-4, atol=1e-4)
    report = explain(copy.deepcopy(eager), ids, mask, backward=True, verbose=False)
    assert [g.kind for g in report.graphs] == ["forward", "backward"] and not report.torch


def test_integer_sums_and_products_accumulate_in_int64_as_torch() -> None:
    # torch sums and multiplies int32 and bool in int64: past 2**31 the values differ from
    # an int32 accumulation, not only the dtype
    x = torch.tensor([[3, -7, 2**31 - 1, 0], [-2**31, 5, 5, -1]], dtype=torch.int32)

    def f(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return x.prod(1), x.sum(1), x.sum(), x.cumsum(1), (x > 0).sum(0), x[:, 1:].prod()

    with torch.no_grad():
        got, want = torch.compile(f, backend=backend)(x), f(x)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == torch.int64
        torch.testing.assert_close(g, w)


def test_inputs_and_results_are_shared_not_copied() -> None:
    # a contiguous input is the leaf's array itself; a non-contiguous one is copied once
    x = torch.randn(4, 6)
    [leaf, strided] = Binder("CPU")([x, x.t()])
    assert np.shares_memory(leaf._node.buffer, x.numpy())
    assert not np.shares_memory(strided._node.buffer, x.numpy())
    # a 0-d input stays 0-d (BatchNorm's num_batches_tracked)
    [count] = Binder("CPU")([torch.tensor(3)])
    assert count.shape == () and count.item() == 3
    # a result is handed out as the array picograd computed it in, unless its memory is
    # an input's or another result's
    computed = (pg.Tensor(x.numpy()) * 2).realize()
    handout = Handout([x])
    first, again, of_input = handout(computed), handout(computed), handout(leaf)
    assert first.data_ptr() == computed._node.buffer.__array_interface__["data"][0]
    assert again.data_ptr() != first.data_ptr() and of_input.data_ptr() != x.data_ptr()
    for got in (first, again, of_input):
        torch.testing.assert_close(got, (x * 2) if got is not of_input else x)


def test_in_place_ops_on_results_change_nothing_else() -> None:
    # results that picograd computed as views of inputs, as one buffer twice, or from a
    # parameter: an in-place op in torch on one reaches what it reaches in eager (the input
    # `x.reshape(-1)` views) and nothing else: not the other result, the parameter, or
    # what later calls compute
    torch.manual_seed(0)
    w = nn.Parameter(torch.randn(8, 8))

    def f(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = x + 1
        return x.reshape(-1), a * 2, a * 2, w.t().contiguous(), w.t().contiguous() @ x, x.clone()

    compiled = torch.compile(f, backend=backend)
    x = torch.randn(8, 8)
    w_before = w.detach().clone()
    for _ in range(CALLS):
        mine, theirs = x.clone(), x.clone()
        got, want = compiled(mine), f(theirs)
        for g, e in zip(got, want, strict=True):
            torch.testing.assert_close(g, e)
        with torch.no_grad():
            for results in (got, want):
                for n in (0, 1, 3, 5):
                    results[n].add_(100.0)
        for g, e in zip(got, want, strict=True):
            torch.testing.assert_close(g, e)
        torch.testing.assert_close(mine, theirs)
        torch.testing.assert_close(w.detach(), w_before)


@pytest.mark.parametrize(("padding_idx", "by_freq"), [(-1, False), (1, False), (1, True)])
def test_embedding_dense_backward_translation(padding_idx: int, by_freq: bool) -> None:
    # the op itself (torch's decompositions usually lower it before picograd sees it):
    # repeated indices add up, the padding row stays zero even under a NaN, counts divide
    ids = torch.tensor([[1, 2, 2], [0, 1, 2]])
    grad = _inputs((2, 3, 4), 0)
    grad[0, 0, 0] = float("nan")
    want = torch.ops.aten.embedding_dense_backward(grad, ids, 5, padding_idx, by_freq)
    got = ATEN[torch.ops.aten.embedding_dense_backward.default](
        pg.Tensor(grad.numpy()), pg.Tensor(ids.numpy()), 5, padding_idx, by_freq)
    torch.testing.assert_close(torch.from_numpy(got.numpy()), want, equal_nan=True)


_DIRECT = {  # translations torch's decompositions usually bypass, called as ATen ops
    "select_scatter": (torch.ops.aten.select_scatter.default,
                       lambda x: (x, x[1] * -2, 0, 2)),
    "select_scatter_last": (torch.ops.aten.select_scatter.default,
                            lambda x: (x, x[:, :, 3] + 1, 2, -1)),
    "avg_pool1d": (torch.ops.aten.avg_pool1d.default,
                   lambda x: (x, [2], [1], [1], True, False)),
}


@pytest.mark.parametrize("name", list(_DIRECT))
def test_translations_called_directly_match_aten(name: str) -> None:
    op, arguments = _DIRECT[name]
    x = _inputs((3, 4, 5), 0)
    x[0, 0, 0] = float("nan")
    args = arguments(x)
    mine = [pg.Tensor(a.numpy()) if isinstance(a, torch.Tensor) else a for a in args]
    got = ATEN[op](*mine)
    torch.testing.assert_close(torch.from_numpy(got.numpy()), op(*args), equal_nan=True)


def test_random_tensors_made_in_a_graph_are_picograds() -> None:
    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x + torch.rand(4096), x + torch.randn(4096)

    compiled = torch.compile(f, backend=backend)
    x = torch.zeros(4096)
    draws = [compiled(x) for _ in range(CALLS)]
    for uniform, normal in draws:
        assert uniform.min() >= 0 and uniform.max() < 1 and abs(uniform.mean() - 0.5) < 0.02
        assert abs(normal.mean()) < 0.05 and abs(normal.std() - 1) < 0.05
    assert not torch.equal(draws[-1][0], draws[-2][0])  # replays draw anew
    report = explain(f, x, verbose=False)
    assert report.graphs and not report.torch, str(report)


def test_train_mode_dropout_runs_in_picograd_with_torchs_scale_and_rate() -> None:
    # picograd draws its own mask: the same rate and 1 / (1 - p) scale as torch, gradients
    # through the same mask, and a new mask on every call (replays included)
    p = 0.25
    model = nn.Sequential(nn.Linear(64, 256), nn.Dropout(p))
    compiled = torch.compile(model, backend=backend)
    x = _inputs((32, 64), 0)
    masks = []
    for _ in range(CALLS):
        model.zero_grad()
        out = compiled(x)
        kept = out != 0
        full = model[0](x).detach()
        torch.testing.assert_close(out[kept], full[kept] / (1 - p))
        assert abs(kept.float().mean().item() - (1 - p)) < 0.02
        out.sum().backward()
        grad = model[0].bias.grad
        assert grad is not None
        torch.testing.assert_close(grad, kept.float().sum(0) / (1 - p))
        masks.append(kept)
    assert not any(torch.equal(a, b) for a, b in itertools.pairwise(masks))
    report = explain(model, x, verbose=False)
    assert report.graphs and not report.torch, str(report)
