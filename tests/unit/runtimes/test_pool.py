"""The buffer pool (picograd/runtimes/pool.py): exact-size reuse, the idle bound and its
least-recently-given eviction, PG_POOL_MB=0, CPU runs reusing their arena (also from two
threads at once), and the DEBUG=2 lines."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import picograd as pg
from picograd import debug
from picograd.frontend.realize import compiled
from picograd.runtimes import get_device
from picograd.runtimes.pool import BufferPool, pool_of


class CountingRuntime:
    """Host memory with a count of allocations and frees."""

    name = "FAKE"

    def __init__(self) -> None:
        self.allocated: list[np.ndarray] = []
        self.freed: list[np.ndarray] = []

    def allocate(self, size: int, dtype: np.dtype) -> np.ndarray:
        self.allocated.append(np.empty(size, dtype))
        return self.allocated[-1]

    def free(self, buffer: np.ndarray) -> None:
        self.freed.append(buffer)


F32, I32 = np.dtype(np.float32), np.dtype(np.int32)


def test_a_given_buffer_is_taken_again_for_the_same_size_and_dtype_only() -> None:
    runtime = CountingRuntime()
    pool = BufferPool(runtime, limit_bytes=1 << 20)
    a = pool.take(100, F32)
    pool.give(a)
    assert pool.take(100, F32) is a
    pool.give(a)
    b, c = pool.take(100, I32), pool.take(101, F32)  # other dtype, other size: new buffers
    assert b is not a and c is not a and len(runtime.allocated) == 3
    stats = pool.stats()
    assert (stats.hits, stats.misses, stats.idle_buffers, stats.idle_bytes) == (1, 3, 1, 400)
    pool.clear()
    assert runtime.freed == [a] and pool.stats().idle_bytes == 0


def test_idle_bytes_stay_under_the_bound_evicting_the_oldest_first() -> None:
    runtime = CountingRuntime()
    pool = BufferPool(runtime, limit_bytes=1000)
    first, second, third = (pool.take(100, F32) for _ in range(3))  # 400 bytes each
    pool.give(first)
    pool.give(second)
    pool.give(third)  # 1200 > 1000: the oldest goes
    assert runtime.freed == [first]
    assert pool.stats().idle_bytes == 800 and pool.stats().evictions == 1
    big = pool.take(1000, F32)
    pool.give(big)  # larger than the bound: freed at once, the idle ones stay
    assert runtime.freed == [first, big] and pool.stats().idle_buffers == 2


def test_pg_pool_mb_0_turns_pooling_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_POOL_MB", "0")
    runtime = CountingRuntime()
    pool = BufferPool(runtime)
    a = pool.take(10, F32)
    pool.give(a)
    assert runtime.freed == [a] and pool.take(10, F32) is not a


def _x(n: int) -> np.ndarray:
    return np.arange(n * 64, dtype=np.float32).reshape(n, 64) / (n * 64)


def _pending(n: int) -> pg.Tensor:
    # the product is stored (a column mean and an elementwise op read it): an arena to plan
    h = pg.Tensor(_x(n)) @ pg.Tensor(np.eye(64, dtype=np.float32)[::-1].copy())
    return h - h.mean(0, keepdim=True)


def _want(n: int) -> np.ndarray:
    h = _x(n)[:, ::-1]
    return h - h.mean(0, keepdims=True)


def test_the_second_run_of_a_cpu_program_reuses_the_first_runs_arena() -> None:
    program, inputs = compiled(_pending(300))
    assert program.peak_bytes[1] > 0, "the test needs a program with an arena"
    pool = pool_of(program.runtime)
    before = pool.stats()
    first = program.run(inputs)[0]
    middle = pool.stats()
    second = program.run(inputs)[0]
    after = pool.stats()
    assert after.hits == middle.hits + 1 and after.misses == middle.misses
    assert middle.hits + middle.misses == before.hits + before.misses + 1
    np.testing.assert_allclose(first.reshape(300, 64), _want(300), rtol=1e-5)
    np.testing.assert_array_equal(first, second)
    assert first is not second and not np.shares_memory(first, second)


def test_runs_of_one_program_from_two_threads_get_arenas_of_their_own() -> None:
    program, inputs = compiled(_pending(500))
    want = _want(500).reshape(-1)
    failures: list[str] = []

    def work() -> None:
        for _ in range(20):
            got = program.run(inputs)[0]
            if not np.allclose(got, want, rtol=1e-5):
                failures.append("wrong result")

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_debug_2_shows_the_pools_reuse(capsys: pytest.CaptureFixture[str]) -> None:
    program, inputs = compiled(_pending(200))
    program.run(inputs)
    name = get_device("CPU").name
    with debug.flags(debug=2):
        program.run(inputs)
    lines = [line for line in capsys.readouterr().err.splitlines() if "pool" in line]
    assert len(lines) == 1 and lines[0].startswith(f"[pg] pool {name}: reuse ")
    assert "hits" in lines[0] and "idle" in lines[0]
    with debug.flags(debug=0):
        program.run(inputs)
    assert "pool" not in capsys.readouterr().err
