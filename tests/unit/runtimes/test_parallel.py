"""Large CPU kernels run their outer range in chunks on a thread pool
(picograd/runtimes/parallel.py): the chunking, the policy (`MIN_WORK`, `PG_THREADS`), the
exported `{name}_pg_outer` constant on both CPU targets, the splittability rule
(picograd/lowering/outer_range.py) and the results of split kernels against numpy."""

from __future__ import annotations

import ctypes
import itertools
import os
import re
import threading
import time

import numpy as np
import pytest
from xdsl.parser import Parser

from picograd.dialects import make_context, pg_uop
from picograd.errors import ThreadCountError
from picograd.lowering.outer_range import outer_split
from picograd.runtimes import parallel, spin_wait

CPU_DEVICES = ("CPU:LLVM", "CPU:C")


def test_chunks_cover_the_range_contiguously_and_evenly() -> None:
    assert parallel.chunks(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert parallel.chunks(2, 8) == [(0, 1), (1, 2)]  # never an empty chunk
    assert parallel.chunks(5, 1) == [(0, 5)]
    for trip in range(1, 40):
        for parts in range(1, 9):
            bounds = parallel.chunks(trip, parts)
            assert bounds[0][0] == 0 and bounds[-1][1] == trip
            assert all(a < b for a, b in bounds)
            assert all(b == c for (_, b), (c, _) in itertools.pairwise(bounds))
            sizes = [b - a for a, b in bounds]
            assert max(sizes) - min(sizes) <= 1


def test_threads_reads_pg_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_THREADS", "3")
    assert parallel.threads() == 3
    for text in ("", "0", "-2", "many"):
        monkeypatch.setenv("PG_THREADS", text)
        assert parallel.threads() >= 1


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity here")
def test_the_default_is_the_cpus_this_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not os.cpu_count(): a container or `taskset` gives a process fewer CPUs."""
    monkeypatch.delenv("PG_THREADS", raising=False)
    assert parallel.threads() == len(os.sched_getaffinity(0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {5})
    assert parallel.threads() == 1


def test_set_num_threads_overrides_pg_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_THREADS", "4")
    monkeypatch.setattr(parallel, "_wanted_threads", None)
    parallel.set_num_threads(3)
    assert parallel.get_num_threads() == 3
    for bad in (0, -1, 2.5, "2", True):
        with pytest.raises(ThreadCountError, match=re.escape(repr(bad))):
            parallel.set_num_threads(bad)  # type: ignore[arg-type]
    assert parallel.get_num_threads() == 3


_Chunk = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


class _Recorder:
    """A one-buffer "kernel" in C calling convention (a ctypes callback) that records every
    call as (buffer, start, end, thread name); `delay` seconds per call."""

    def __init__(self, delay: float = 0.0) -> None:
        self.calls: list[tuple[int, int, int, str]] = []
        self.lock = threading.Lock()
        self.delay = delay
        # ctypes passes a void* of 0 as None
        self.callback = _Chunk(lambda a, s, e: self._record(a or 0, s or 0, e or 0))
        address = ctypes.cast(self.callback, ctypes.c_void_p).value
        assert address is not None
        self.address = address

    def _record(self, address: int, start: int, end: int) -> None:
        if self.delay:
            time.sleep(self.delay)
        with self.lock:
            self.calls.append((address, start, end, threading.current_thread().name))

    def ranges(self, address: int | None = None) -> list[tuple[int, int, int]]:
        return sorted(c[:3] for c in self.calls if address is None or c[0] == address)

    def kernel(self, outer: tuple[int, int] | None, parts: int | None = None):
        return parallel.c_kernel(self.address, 1, outer, parts)


def test_small_or_unsplittable_kernels_are_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_THREADS", "4")
    recorder = _Recorder()
    recorder.kernel((100, parallel.MIN_WORK - 1))(7)
    recorder.kernel(None)(8)
    assert recorder.ranges() == [(7, 0, 100), (8, 0, 0)]


def test_large_kernels_are_split_into_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_THREADS", "2")
    monkeypatch.setattr(parallel, "_wanted_threads", None)
    recorder = _Recorder()
    recorder.kernel((20, parallel.MIN_WORK))(5)
    want = [(5, a, b) for a, b in parallel.chunks(20, 2 * parallel.CHUNKS_PER_THREAD)]
    assert recorder.ranges() == want and len(want) == 8


def test_pg_threads_1_turns_splitting_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_THREADS", "1")
    monkeypatch.setattr(parallel, "_wanted_threads", None)
    recorder = _Recorder()
    recorder.kernel((10, 1 << 40))(5)
    assert recorder.ranges() == [(5, 0, 10)]


def test_the_thread_count_is_read_at_each_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """set_num_threads applies to kernels loaded before it, and no more threads than it
    allows run chunks (the caller and the first n - 1 pool threads)."""
    monkeypatch.setattr(parallel, "_wanted_threads", None)
    recorder = _Recorder(delay=0.002)
    kernel = recorder.kernel((64, 1 << 40))
    for count in (1, 2, 3):
        parallel.set_num_threads(count)
        recorder.calls.clear()
        kernel(1)
        assert recorder.ranges() == [(1, a, b) for a, b in parallel.chunks(
            64, 1 if count == 1 else count * parallel.CHUNKS_PER_THREAD)]
        allowed = {threading.current_thread().name,
                   *(f"{parallel.POOL_THREADS}-{i}" for i in range(count - 1))}
        assert {c[3] for c in recorder.calls} <= allowed


def test_a_launch_completes_while_no_pool_thread_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pool threads that the OS does not schedule (here: held before they can claim) are
    not waited for: the caller claims every chunk itself."""
    recorder = _Recorder()
    kernel = recorder.kernel((12, 1), parts=3)
    kernel(0)  # the pool threads exist and wait for launches
    held = threading.Event()
    original = parallel._Launch.claim

    def held_back(launch: parallel._Launch) -> int:
        if threading.current_thread().name.startswith(parallel.POOL_THREADS):
            held.wait(10.0)
        return original(launch)

    monkeypatch.setattr(parallel._Launch, "claim", held_back)
    recorder.calls.clear()
    try:
        kernel(9)
        assert recorder.ranges() == [(9, a, b) for a, b in parallel.chunks(12, 12)]
        assert {c[3] for c in recorder.calls} == {threading.current_thread().name}
    finally:
        held.set()
    time.sleep(0.01)  # the released threads find the launch spent: nothing runs twice
    assert len(recorder.calls) == 12


def _kernel(text: str) -> pg_uop.KernelOp:
    module = Parser(make_context(), text).parse_module()
    (kernel,) = [op for op in module.ops if isinstance(op, pg_uop.KernelOp)]
    return kernel


def test_only_one_top_level_global_range_is_splittable() -> None:
    split = outer_split(_kernel("""
pg_uop.kernel @k(%a: !pg.buffer<12xf32>) {
  %one = pg_uop.const 1.0 : f32
  %i = pg_uop.range 0 to 3 global
  %j = pg_uop.range 0 to 4 reduce
  %two = pg_uop.binary add %one, %one : f32
  pg_uop.end %j
  pg_uop.store %one, %a[%i] : f32, !pg.buffer<12xf32>
  pg_uop.end %i
}"""))
    assert split is not None and split.trip == 3
    assert split.work == 3 * 4 + 3  # the add 12 times, the store 3 times
    for body in [
        # a store after the loop
        "%i = pg_uop.range 0 to 3 global\n pg_uop.end %i\n"
        " pg_uop.store %one, %a[%c0] : f32, !pg.buffer<12xf32>",
        # two top-level loops
        "%i = pg_uop.range 0 to 3 global\n pg_uop.end %i\n %j = pg_uop.range 0 to 3 global\n"
        " pg_uop.end %j",
        # an outer loop that is not global
        "%i = pg_uop.range 0 to 3 reduce\n pg_uop.end %i",
        # no loop at all
        "pg_uop.store %one, %a[%c0] : f32, !pg.buffer<12xf32>",
    ]:
        text = ("pg_uop.kernel @k(%a: !pg.buffer<12xf32>) {\n %one = pg_uop.const 1.0 : f32\n"
                f" %c0 = pg_uop.const 0 : index\n {body}\n}}")
        assert outer_split(_kernel(text)) is None, body


def test_the_work_of_a_vector_op_is_its_lanes() -> None:
    """MIN_WORK is in scalar ops: a vector op counts as its lanes (a vectorised 256^2 matmul
    counted 1/16 of its work and was never split)."""
    split = outer_split(_kernel("""
pg_uop.kernel @k(%a: !pg.buffer<64xf32>) {
  %i = pg_uop.range 0 to 4 global
  %c16 = pg_uop.const 16 : index
  %at = pg_uop.binary mul %i, %c16 : index
  %v = pg_uop.vload %a[%at] : !pg.buffer<64xf32> -> vector<16xf32>
  %w = pg_uop.binary add %v, %v : vector<16xf32>
  pg_uop.vstore %w, %a[%at] : vector<16xf32>, !pg.buffer<64xf32>
  pg_uop.end %i
}"""))
    assert split is not None
    assert split.work == 4 * (1 + 1 + 16 + 16 + 16)  # const, mul; vload, add, vstore


@pytest.fixture
def always_split(monkeypatch: pytest.MonkeyPatch):
    """Every splittable kernel loaded from here on runs as 3 chunks."""
    from picograd.frontend import realize

    monkeypatch.setattr(parallel, "MIN_WORK", 0)
    monkeypatch.setenv("PG_THREADS", "3")
    realize.clear_cache()
    yield
    realize.clear_cache()


@pytest.mark.parametrize("device", CPU_DEVICES)
def test_split_kernels_give_numpy_results(device: str, always_split: None,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from picograd import Tensor

    splits: list[int] = []
    original = parallel.chunks

    def counting(trip: int, parts: int) -> list[tuple[int, int]]:
        splits.append(parts)
        return original(trip, parts)

    monkeypatch.setattr(parallel, "chunks", counting)
    monkeypatch.setattr(parallel, "_wanted_threads", None)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((37, 19)).astype(np.float32)
    b = rng.standard_normal((19, 23)).astype(np.float32)
    ta, tb = Tensor(a, device=device), Tensor(b, device=device)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((ta * 2 + 1).relu().numpy(), np.maximum(a * 2 + 1, 0))
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(ta.softmax(1).numpy(), e / e.sum(1, keepdims=True),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ta.sum().numpy(), a.sum(), rtol=1e-5)
    assert splits and all(parts == 3 * parallel.CHUNKS_PER_THREAD for parts in splits)


@pytest.mark.parametrize("device", CPU_DEVICES)
def test_the_pg_outer_constant_is_exported(device: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime reads (trip, work) of a splittable kernel from the compiled code."""
    from picograd.compiler.driver import compile_module
    from picograd.lowering.c.convert_uop_to_c import ConvertUopToCPass
    from picograd.lowering.llvm.convert_uop_to_llvm import ConvertUopToLlvmPass

    text = """
pg_uop.kernel @k0(%a: !pg.buffer<6xf32>) {
  %one = pg_uop.const 1.0 : f32
  %i = pg_uop.range 0 to 6 global
  pg_uop.store %one, %a[%i] : f32, !pg.buffer<6xf32>
  pg_uop.end %i
}
func.func @main() -> !pg.buffer<6xf32> {
  %a = pg_sched.alloc : !pg.buffer<6xf32>
  pg_sched.launch @k0(%a) : !pg.buffer<6xf32>
  func.return %a : !pg.buffer<6xf32>
}"""
    module = Parser(make_context(), text).parse_module()
    target = "llvm" if device == "CPU:LLVM" else "c"
    lowering = ConvertUopToLlvmPass() if target == "llvm" else ConvertUopToCPass()
    lowering.apply(make_context(), module)
    seen: list[tuple[int, int] | None] = []
    original = parallel.c_kernel

    def spy(address, num_args, outer, parts=None):  # type: ignore[no-untyped-def]
        seen.append(outer)
        return original(address, num_args, outer, parts)

    monkeypatch.setattr(parallel, "c_kernel", spy)
    program = compile_module(module, target)
    assert seen == [(6, 6)]
    (out,) = program.run([])
    np.testing.assert_array_equal(out, np.ones(6, np.float32))


def test_chunks_run_at_the_same_time() -> None:
    """ctypes releases the GIL during the foreign call, and the claim loop is native: a
    "kernel" that sleeps 50 ms in C per chunk (libc `usleep`, its first argument the
    microseconds; the trailing start/end are ignored) over 4 threads x 4 chunks takes about
    4 x 50 ms, not 16 x 50."""
    libc = ctypes.CDLL(None)
    address = ctypes.cast(libc.usleep, ctypes.c_void_p).value
    assert address is not None
    sleeper = parallel.c_kernel(address, 1, (16, 1), parts=4)
    start = time.perf_counter()
    sleeper(50_000)
    elapsed = time.perf_counter() - start
    assert elapsed < 0.5, elapsed
    parallel.c_kernel(address, 1, None)(1)  # the unsplit launcher calls it once


def test_yield_until_changed_sees_another_threads_store_and_times_out() -> None:
    word = (ctypes.c_int64 * 1)(7)
    address = ctypes.addressof(word)
    assert spin_wait.yield_until_changed(address, 7, 10) == 7  # budget spent: the old value
    assert spin_wait.yield_until_changed(address, 6, 10) == 7  # already different

    def store() -> None:
        time.sleep(0.01)
        word[0] = 8

    writer = threading.Thread(target=store)
    writer.start()
    # a budget of ~10 s: the store 10 ms later ends the wait, not the budget
    assert spin_wait.yield_until_changed(address, 7, spin_wait.yields_for(10.0)) == 8
    writer.join()
    assert spin_wait.yields_for(0.0) == 1


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity here")
def test_pool_threads_may_run_on_any_cpu_of_the_process() -> None:
    """No pinning: the OS may move a pool thread off a CPU that another library's
    spinning thread holds."""
    recorder = _Recorder()
    recorder.kernel((4, 1), parts=3)(1)
    assert recorder.ranges() == [(1, a, b) for a, b in parallel.chunks(4, 12)]
    cpus = os.sched_getaffinity(0)
    pool = [t.native_id for t in threading.enumerate()
            if t.name.startswith(parallel.POOL_THREADS)]
    assert len(pool) >= 2
    for thread_id in pool:
        assert thread_id is not None and os.sched_getaffinity(thread_id) == cpus


def test_concurrent_callers_each_get_their_whole_range() -> None:
    """Two Python threads launching split kernels at once: one has the pool, the other
    runs its kernel whole; every range is covered exactly once per call."""
    recorder = _Recorder(delay=0.001)
    kernel = recorder.kernel((10, 1), parts=2)
    threads = [threading.Thread(target=lambda a=a: [kernel(a) for _ in range(20)])
               for a in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for address in (1, 2):
        covered = sorted(i for _, a, b in recorder.ranges(address) for i in range(a, b))
        assert covered == sorted(list(range(10)) * 20)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_runs_split_kernels_on_its_own_threads() -> None:
    recorder = _Recorder()
    kernel = recorder.kernel((4, 1), parts=2)
    kernel(1)  # the parent's pool threads exist now
    pid = os.fork()
    if pid == 0:  # the child: the same launcher must not wait for the parent's threads
        try:
            kernel(2)
            ok = recorder.ranges(2) == [(2, a, b) for a, b in parallel.chunks(4, 8)]
            os._exit(0 if ok else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
