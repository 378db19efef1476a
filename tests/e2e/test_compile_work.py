"""How much compiling a graph of N identical layers costs: each distinct kernel is lowered to
LLVM once however many layers repeat it, and a warm disk cache runs no pass at all."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
import picograd.compiler.driver as driver_mod
import picograd.frontend.realize as realize_mod
import picograd.nn as nn
from picograd.lowering.llvm import convert_uop_to_llvm

WIDTH = 16


class _Layer(nn.Module):
    """A post-norm residual block: the kind of layer an encoder stacks."""

    def __init__(self):
        super().__init__()
        self.up = nn.Linear(WIDTH, 2 * WIDTH, device="CPU:LLVM")
        self.down = nn.Linear(2 * WIDTH, WIDTH, device="CPU:LLVM")
        self.norm = nn.LayerNorm(WIDTH, device="CPU:LLVM")

    def forward(self, x: pg.Tensor) -> pg.Tensor:
        return self.norm(x + self.down(self.up(x).gelu()))


def _stack(layers: int) -> nn.Module:
    pg.manual_seed(0)
    return nn.Sequential(*(_Layer() for _ in range(layers)))


def _input() -> pg.Tensor:
    data = np.random.default_rng(0).standard_normal((4, 8, WIDTH)).astype(np.float32)
    return pg.Tensor(data, device="CPU:LLVM")


@pytest.fixture
def no_disk_cache(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PG_CACHE", "0")
    realize_mod.clear_cache()
    yield
    realize_mod.clear_cache()


def _lowered_kernels(layers: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(kernels the graph launches, kernels lowered to LLVM) for a forward of `layers`."""
    model, x = _stack(layers), _input()
    with pg.no_grad():
        out = model(x)
        program, _ = realize_mod.compiled(out)  # the parameters' graph compiles first
    lowered = [0]
    run = convert_uop_to_llvm._KernelLowering.run

    def counted(self):
        lowered[0] += 1
        return run(self)

    monkeypatch.setattr(convert_uop_to_llvm._KernelLowering, "run", counted)
    realize_mod.clear_cache()
    program, _ = realize_mod.compiled(out)
    monkeypatch.undo()
    return program.num_kernels, lowered[0]


def test_identical_layers_are_lowered_once(no_disk_cache, monkeypatch: pytest.MonkeyPatch):
    # the first layer reads an argument and the last writes the result: their kernels
    # differ from the middle ones', so the count is the same from three layers on
    launches_3, lowered_3 = _lowered_kernels(3, monkeypatch)
    monkeypatch.setenv("PG_CACHE", "0")
    launches_9, lowered_9 = _lowered_kernels(9, monkeypatch)
    assert launches_9 > 2 * launches_3  # three times the layers: more launches...
    assert lowered_9 == lowered_3 < launches_3  # ...of the same kernels


def test_a_warm_disk_cache_runs_no_pass(tmp_path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PG_CACHE", raising=False)
    monkeypatch.delenv("PG_DUMP", raising=False)
    realize_mod.clear_cache()
    model, x = _stack(3), _input()
    with pg.no_grad():
        cold = model(x).numpy()
    realize_mod.clear_cache()
    passes = []
    monkeypatch.setattr(driver_mod, "run_pipeline", lambda *a, **k: passes.append(a))
    try:
        with pg.no_grad():
            warm = model(x).numpy()
    finally:
        realize_mod.clear_cache()
    assert passes == []
    np.testing.assert_array_equal(warm, cold)
