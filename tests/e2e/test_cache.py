"""The realize cache: keyed by graph structure, never by buffer contents; a hit builds no IR."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import picograd as pg
import picograd.frontend.realize as realize_mod
from picograd.compiler import driver

from .helpers import assert_matches

rng = np.random.default_rng(1)


def _graph(a: np.ndarray, b: np.ndarray, device: str) -> pg.Tensor:
    return (pg.Tensor(a, device=device) * pg.Tensor(b, device=device) + 1.5).relu().sum(axis=1)


def _delta(before: pg.CompileStats) -> tuple[int, int]:
    after = pg.compile_stats()
    return after.compiles - before.compiles, after.cache_hits - before.cache_hits


def test_same_structure_new_data_compiles_nothing(device: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = (rng.standard_normal((5, 9)).astype(np.float32) for _ in range(2))
    _graph(a, b, device).realize()
    a2, b2 = (rng.standard_normal((5, 9)).astype(np.float32) for _ in range(2))

    def no_ir(*args: object) -> None:
        raise AssertionError("a cache hit must not build IR")

    monkeypatch.setattr(realize_mod, "build_module", no_ir)
    before = pg.compile_stats()
    y = _graph(a2, b2, device)
    assert_matches(y, np.maximum(a2 * b2 + 1.5, 0).sum(axis=1), rtol=1e-5, atol=1e-5)
    assert _delta(before) == (0, 1)


def test_a_new_shape_recompiles(device: str) -> None:
    a = rng.standard_normal((5, 10)).astype(np.float32)
    _graph(a, a, device).realize()
    before = pg.compile_stats()
    b = rng.standard_normal((5, 11)).astype(np.float32)
    assert_matches(_graph(b, b, device), np.maximum(b * b + 1.5, 0).sum(axis=1))
    assert _delta(before) == (1, 0)


def test_constants_dtypes_and_devices_are_in_the_key(device: str) -> None:
    pg.frontend.clear_cache()
    x = rng.standard_normal(7).astype(np.float32)
    t = pg.Tensor(x, device=device)
    (t * 2.0).realize()
    before = pg.compile_stats()
    assert_matches(t * 3.0, x * 3)  # another constant: another program
    assert_matches(t * -0.0, x * np.float32(-0.0))
    if device != "WEBGPU":  # Vulkan/WGSL need not keep the sign of zero (Mesa folds x*-0 to +0)
        assert np.signbit((pg.Tensor([1.0], device=device) * -0.0).numpy()).all()
    else:
        (pg.Tensor([1.0], device=device) * -0.0).realize()  # a program of its own all the same
    assert_matches(pg.Tensor(x.astype(np.int32), device=device) * 2, x.astype(np.int32) * 2)
    assert _delta(before)[0] == 4
    other = "CPU:C" if device == "CPU:LLVM" else "CPU:LLVM"
    before = pg.compile_stats()
    assert_matches(pg.Tensor(x, device=other) * 2.0, x * 2)
    assert _delta(before) == (1, 0)


def test_realize_drops_the_graph(device: str) -> None:
    a = pg.Tensor(rng.standard_normal((4, 4)).astype(np.float32), device=device)
    intermediate = a.exp()
    ref = weakref.ref(intermediate._node)
    y = (intermediate * 2).sum()
    del intermediate
    y.realize()
    assert y._node.op == "buffer" and y._node.src == ()
    gc.collect()
    assert ref() is None


def test_the_in_memory_cache_keeps_the_most_recently_realized_graphs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """PG_CACHE_GRAPHS bounds the compiled graphs kept in memory: past it the least recently
    realized is dropped (and compiled again when realized again), a recent one still hits."""
    monkeypatch.setenv("PG_CACHE_GRAPHS", "3")
    monkeypatch.setenv("PG_CACHE", "0")  # a dropped graph must compile, not load from disk
    pg.frontend.clear_cache()
    shapes = [(2, n) for n in range(3, 8)]
    for shape in shapes:
        _graph(np.ones(shape, np.float32), np.ones(shape, np.float32), "CPU").realize()
    assert len(driver._CACHE) == 3
    before = pg.compile_stats()
    _graph(np.ones(shapes[-1], np.float32), np.ones(shapes[-1], np.float32), "CPU").realize()
    assert _delta(before) == (0, 1)  # kept
    before = pg.compile_stats()
    y = _graph(np.ones(shapes[0], np.float32), np.full(shapes[0], 2, np.float32), "CPU")
    assert_matches(y, np.full(2, 3.5 * 3, np.float32))
    assert _delta(before) == (1, 0)  # dropped, compiled again
    assert len(driver._CACHE) == 3
