"""The LLVM text route (`lowering/llvm/text_route.py`): realize() prints CPU:LLVM kernels
straight from pg_uop, and the text is the llvm dialect route's, byte for byte.

The corpus is every kernel of a few real graphs, realized through the compile driver with
a direct route that also runs the llvm dialect route on a copy and compares: an MLP's Adam
step, a small CNN's step (convolutions, max pooling, cross-entropy), an encoder layer's
forward (attention, LayerNorm, GELU, embeddings) and integer, bool and cast ops. Random
programs are in tests/property/test_llvm_routes_agree.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from xdsl.parser import Parser

import picograd as pg
import picograd.compiler.driver as driver
import picograd.compiler.parallel_lowering as parallel_lowering
import picograd.frontend.realize as realize_mod
import picograd.nn as nn
import picograd.nn.functional as F
from picograd.compiler.pipelines import CPU_LLVM, pipeline_head
from picograd.dialects import make_context
from picograd.lowering.llvm import convert_uop_to_llvm
from picograd.lowering.llvm.convert_uop_to_llvm import ConvertUopToLlvmPass
from picograd.lowering.llvm.printer import PART_SEPARATOR, module_to_llvm_ir
from picograd.lowering.llvm.text_route import NotUopStageError, uop_module_to_llvm_ir
from picograd.optim import Adam

DEVICE = "CPU:LLVM"


@pytest.fixture
def compared(monkeypatch: pytest.MonkeyPatch):
    """Realize through a direct route that checks itself against the llvm dialect route;
    yields the list of (kernels, parts) of every graph it printed."""
    monkeypatch.setenv("PG_CACHE", "0")
    # every graph lowered in this process, so that each kernel is compared (and counted)
    monkeypatch.setattr(parallel_lowering, "MIN_KERNELS", 10**9)
    realize_mod.clear_cache()
    printed: list[tuple[int, int]] = []
    route = driver.DIRECT_ROUTES["llvm"]

    def checked(module):
        slow = module.clone()
        ConvertUopToLlvmPass().apply(make_context(), slow)
        want = module_to_llvm_ir(slow)
        pieces = route.lower(module)
        got = route.assemble(pieces)
        assert got == want
        printed.append((got.count("\ndefine void "), got.count(PART_SEPARATOR) + 1))
        return pieces

    monkeypatch.setitem(driver.DIRECT_ROUTES, "llvm", dataclasses.replace(route, lower=checked))
    yield printed
    realize_mod.clear_cache()


def _step(model: nn.Module, x: np.ndarray, y: np.ndarray) -> None:
    opt = Adam(model.parameters(), lr=1e-3)
    loss = F.cross_entropy(model(pg.Tensor(x, device=DEVICE)), pg.Tensor(y, device=DEVICE))
    loss.backward()
    opt.step()
    loss.numpy()


def test_mlp_adam_step(compared):
    pg.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 48, device=DEVICE), nn.ReLU(),
                          nn.Linear(48, 10, device=DEVICE))
    rng = np.random.default_rng(0)
    _step(model, rng.standard_normal((16, 64), dtype=np.float32),
          rng.integers(0, 10, 16).astype(np.int32))
    assert sum(k for k, _ in compared) >= 20
    assert any(parts > 1 for _, parts in compared)  # a graph big enough to split


def test_cnn_step(compared):
    pg.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, device=DEVICE), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3, padding=1, device=DEVICE), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(8 * 3 * 3, 10, device=DEVICE))
    rng = np.random.default_rng(0)
    _step(model, rng.standard_normal((4, 1, 12, 12), dtype=np.float32),
          rng.integers(0, 10, 4).astype(np.int32))
    assert sum(k for k, _ in compared) >= 20


def test_encoder_layer_forward(compared):
    pg.manual_seed(0)
    hidden, heads = 32, 4
    embed = nn.Embedding(50, hidden, device=DEVICE)
    q, k, v = (nn.Linear(hidden, hidden, device=DEVICE) for _ in range(3))
    norm = nn.LayerNorm(hidden, device=DEVICE)
    up, down = nn.Linear(hidden, 64, device=DEVICE), nn.Linear(64, hidden, device=DEVICE)
    ids = pg.Tensor(np.arange(16, dtype=np.int32).reshape(2, 8) % 50, device=DEVICE)
    with pg.no_grad():
        x = embed(ids)

        def split(t: pg.Tensor) -> pg.Tensor:
            return t.reshape(2, 8, heads, hidden // heads).transpose(1, 2)

        att = F.scaled_dot_product_attention(split(q(x)), split(k(x)), split(v(x)))
        x = norm(x + att.transpose(1, 2).reshape(2, 8, hidden))
        (x + down(up(x).gelu())).softmax(-1).numpy()
    assert sum(k for k, _ in compared) >= 5


def test_integer_bool_and_cast_ops(compared):
    rng = np.random.default_rng(0)
    a = pg.Tensor(rng.integers(-100, 100, (8, 8)).astype(np.int32), device=DEVICE)
    b = pg.Tensor(rng.choice([-3, -1, 1, 2], (8, 8)).astype(np.int32), device=DEVICE)
    u = pg.Tensor(rng.integers(0, 255, (8, 8)).astype(np.uint8), device=DEVICE)
    f = pg.Tensor(rng.standard_normal((8, 8), dtype=np.float32), device=DEVICE)
    outs = [a // b, a % b, a // 255, u // 255, (a < b).where(f, -f),
            (f > 0).cast(pg.int32) + a, f.cast(pg.uint8), u.cast(pg.float16),
            f.cast(pg.int64) * 3 + a.cast(pg.int8).cast(pg.int64), a.max(axis=1),
            f.argmax(axis=0), (a == b) | (f != f), f.maximum(f * 2).sum(axis=1), (a << 2) >> 1]
    for out in outs:
        out.numpy()
    assert len(compared) >= len(outs)


def test_realize_builds_no_llvm_dialect_but_dumps_do(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path):
    """The driver prints through the text route unless PG_DUMP (or DEBUG>=2, VIZ) needs the
    target stage's IR."""
    monkeypatch.setenv("PG_CACHE", "0")
    built = [0]
    apply = ConvertUopToLlvmPass.apply

    def counted(self, ctx, op):
        built[0] += 1
        return apply(self, ctx, op)

    monkeypatch.setattr(ConvertUopToLlvmPass, "apply", counted)
    lowered = [0]
    run = convert_uop_to_llvm._KernelLowering.run

    def counted_run(self):
        lowered[0] += 1
        return run(self)

    monkeypatch.setattr(convert_uop_to_llvm._KernelLowering, "run", counted_run)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    realize_mod.clear_cache()
    got = (pg.Tensor(x, device=DEVICE).exp() + 1).numpy()
    np.testing.assert_allclose(got, np.exp(x) + 1, rtol=1e-6)
    assert built[0] == 0 and lowered[0] >= 1
    monkeypatch.setenv("PG_DUMP", str(tmp_path))
    realize_mod.clear_cache()
    np.testing.assert_allclose((pg.Tensor(x, device=DEVICE).exp() + 2).numpy(),
                               np.exp(x) + 2, rtol=1e-6)
    assert built[0] == 1
    realize_mod.clear_cache()


def test_pipeline_head():
    head = pipeline_head(CPU_LLVM, "convert-uop-to-llvm")
    assert head is not None and head + ",convert-uop-to-llvm" == CPU_LLVM
    assert pipeline_head("builtin.module(cse,convert-uop-to-llvm)", "convert-uop-to-llvm") == "cse"
    assert pipeline_head("convert-uop-to-llvm,cse", "convert-uop-to-llvm") is None
    assert pipeline_head("cse", "convert-uop-to-llvm") is None


def test_a_module_of_another_stage_is_refused():
    module = Parser(make_context(), """
llvm.func @k0() {
  llvm.return
}
""").parse_module()
    with pytest.raises(NotUopStageError, match=r"pg_uop\.kernel"):
        uop_module_to_llvm_ir(module)
