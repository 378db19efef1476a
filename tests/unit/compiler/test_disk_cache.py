"""The on-disk cache: entries verified before use, every key part counted, private directory,
atomic writes, and the kernel-level cache of the CPU runtimes."""

from __future__ import annotations

import dataclasses
import enum
import os
import stat
import threading

import numpy as np
import pytest

from picograd import disk_store
from picograd.compiler import disk_cache
from picograd.runtimes import cpu_c as cpu_c_mod
from picograd.runtimes import cpu_llvm as cpu_llvm_mod
from picograd.runtimes import get_device
from picograd.runtimes.cpu_c import CpuCRuntime, split_units
from picograd.runtimes.cpu_llvm import CpuLlvmRuntime

C_SOURCE = """#include <math.h>
#include <stdint.h>

void k0(float* restrict p0, float* restrict p1) {
  for (int64_t i = 0; i < 4; i++) {
    p1[i] = sqrtf(p0[i]);
  }
}

void k1(float* restrict p0, float* restrict p1) {
  for (int64_t i = 0; i < 4; i++) {
    p1[i] = p0[i] * 2.0f;
  }
}
"""

LLVM_SOURCE = """
define void @twice(ptr %a, ptr %out) {
  %x = load double, ptr %a
  %y = fmul double %x, 2.0
  store double %y, ptr %out
  ret void
}
"""


@pytest.fixture
def cache(tmp_path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh, empty cache directory, with the cache on."""
    path = str(tmp_path / "cache")
    monkeypatch.setenv("PG_CACHE_DIR", path)
    monkeypatch.delenv("PG_CACHE", raising=False)
    return path


def _entries(root: str, kind: str) -> list[str]:
    folder = os.path.join(root, kind)
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if not n.startswith("."))


# ── entries ──────────────────────────────────────────────────────────────────


def test_round_trip_in_a_private_directory(cache: str) -> None:
    disk_store.write("kernels", "key", b"payload")
    assert disk_store.read("kernels", "key") == b"payload"
    assert disk_store.read("kernels", "other key") is None
    for path in (cache, os.path.join(cache, "kernels")):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    assert not [n for n in os.listdir(os.path.join(cache, "kernels")) if n.startswith(".tmp")]


def _corrupt_flip_payload(entry: bytes) -> bytes:
    return entry[:-1] + bytes([entry[-1] ^ 1])


def _corrupt_flip_header(entry: bytes) -> bytes:
    return entry[:20] + bytes([entry[20] ^ 0x80]) + entry[21:]


CORRUPTIONS = {
    "flip a payload byte": _corrupt_flip_payload,
    "flip a header byte": _corrupt_flip_header,
    "truncate": lambda e: e[:-3],
    "truncate the header": lambda e: e[:10],
    "empty": lambda e: b"",
    "wrong magic": lambda e: b"NOTCACHE" + e[8:],
    "wrong format version": lambda e: e[:8] + (99).to_bytes(4, "little") + e[12:],
    "another key's entry": lambda e: disk_store.encode("another key", b"payload"),
    "longer payload": lambda e: e + b"x",
}


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_a_corrupt_entry_is_deleted_never_trusted(cache: str, corrupt) -> None:
    disk_store.write("kernels", "key", b"payload")
    [path] = _entries(cache, "kernels")
    with open(path, "rb") as f:
        entry = f.read()
    with open(path, "wb") as f:
        f.write(corrupt(entry))
    assert disk_store.read("kernels", "key") is None
    assert not os.path.exists(path)
    disk_store.write("kernels", "key", b"payload")  # rebuilt
    assert disk_store.read("kernels", "key") == b"payload"


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a file to another user")
def test_an_entry_of_another_user_is_not_trusted(cache: str) -> None:
    disk_store.write("kernels", "key", b"payload")
    [path] = _entries(cache, "kernels")
    os.chown(path, 12345, 12345)
    assert disk_store.read("kernels", "key") is None


def test_a_shared_directory_is_refused_a_readable_one_narrowed(cache: str) -> None:
    os.makedirs(cache, mode=0o700)
    os.chmod(cache, 0o777)
    with pytest.warns(RuntimeWarning, match="writable by group or others"):
        assert disk_store.cache_dir() is None
    disk_store.write("kernels", "key", b"payload")
    assert not os.path.exists(os.path.join(cache, "kernels"))
    os.chmod(cache, 0o755)
    assert disk_store.cache_dir() == cache
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a directory to another user")
def test_a_directory_of_another_user_is_refused(cache: str) -> None:
    os.makedirs(cache, mode=0o700)
    os.chown(cache, 12345, 12345)
    with pytest.warns(RuntimeWarning, match="belongs to another user"):
        assert disk_store.cache_dir() is None


def test_pg_cache_0_reads_and_writes_nothing(cache: str, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    monkeypatch.setenv("PG_CACHE", "0")
    disk_store.write("kernels", "key", b"payload")
    assert disk_store.read("kernels", "key") is None
    CpuCRuntime().compile(C_SOURCE)
    CpuLlvmRuntime().compile(LLVM_SOURCE)
    assert not os.path.exists(cache)


def test_a_read_during_writes_sees_a_whole_entry_or_none(cache: str) -> None:
    payloads = [bytes([i]) * (4 << 20) for i in range(2)]
    done = threading.Event()

    def writer() -> None:
        for i in range(12):
            disk_store.write("graphs", "key", payloads[i % 2])
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    seen = 0
    while not done.is_set():
        payload = disk_store.read("graphs", "key")
        assert payload is None or payload in payloads
        seen += payload is not None
    thread.join()
    assert disk_store.read("graphs", "key") == payloads[1]
    assert not [n for n in os.listdir(os.path.join(cache, "graphs")) if n.startswith(".tmp")]


def test_key_text_is_unambiguous() -> None:
    assert disk_store.key_text("a", "b") != disk_store.key_text("a\n1:'b'")
    assert disk_store.key_text("a", "b") != disk_store.key_text("ab")


# ── every part of the graph key ─────────────────────────────────────────────

GRAPH = ("CPU:LLVM", ((("buffer", None, (4,), "float32"), ()),), (0,))


def _other_capabilities(target: str):
    from picograd.dialects.capabilities import _TABLES

    return dataclasses.replace(_TABLES[target], index_bits=32)


GRAPH_PARTS = {
    "source": lambda mp: {"key": ("CPU:LLVM", GRAPH[1], (1,))},
    "pipeline": lambda mp: {"spec": "cse"},
    "target": lambda mp: {"target": "c"},
    "capabilities": lambda mp: mp.setattr("picograd.dialects.capabilities.capabilities",
                                          _other_capabilities),
    "toolchain": lambda mp: mp.setattr(CpuLlvmRuntime, "toolchain_fingerprint",
                                       lambda self: "llvm 99"),
    "picograd version": lambda mp: mp.setattr(disk_store, "picograd_version", lambda: "9.9"),
}


@pytest.mark.parametrize("change", GRAPH_PARTS.values(), ids=GRAPH_PARTS.keys())
def test_changing_any_part_of_the_graph_key_misses(cache: str, change,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    args = {"key": GRAPH, "spec": "cse,uop-simplify", "target": "llvm",
            "runtime": get_device("CPU:LLVM")}
    base = disk_cache.graph_key(**args)
    assert base is not None and base == disk_cache.graph_key(**args)
    disk_store.write("graphs", base, b"plan")
    changed = disk_cache.graph_key(**{**args, **(change(monkeypatch) or {})})
    assert changed is not None and changed != base
    assert disk_store.read("graphs", changed) is None
    assert disk_store.read("graphs", base) == b"plan"


def test_a_key_with_an_object_address_is_not_cached(cache: str) -> None:
    key = ("CPU:LLVM", (((object(),), ()),), (0,))
    assert disk_cache.graph_key(key, "cse", "llvm", get_device("CPU:LLVM")) is None


# ── the kernel level of the CPU runtimes ────────────────────────────────────


def _run_c(binary) -> np.ndarray:
    runtime = CpuCRuntime()
    a, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    runtime.load(binary, "k0", 2)(a.ctypes.data, out.ctypes.data)
    return out


def _run_llvm(binary) -> float:
    a, out = np.array([1.5]), np.zeros(1)
    CpuLlvmRuntime().load(binary, "twice", 2)(a.ctypes.data, out.ctypes.data)
    return float(out[0])


def test_c_warm_compile_runs_no_compiler(cache: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CpuCRuntime, "_parts", lambda self, source: self.jobs)
    cold = CpuCRuntime(jobs=2).compile(C_SOURCE)
    assert len(cold.libraries) == 2 and len(_entries(cache, "kernels")) == 1

    def no_compiler(*args, **kwargs):
        raise AssertionError("a warm compile must not run the compiler")

    monkeypatch.setattr(cpu_c_mod.subprocess, "run", no_compiler)
    monkeypatch.setattr(CpuCRuntime, "_parts", lambda self, source: 1)  # another split
    warm = CpuCRuntime(jobs=1).compile(C_SOURCE)
    assert len(warm.libraries) == 2
    np.testing.assert_allclose(_run_c(warm), np.sqrt(np.arange(4)))


def test_library_payloads_are_checked() -> None:
    assert cpu_c_mod.unpack_libraries(b"") is None
    assert cpu_c_mod.unpack_libraries((0).to_bytes(4, "little")) is None
    good = (2).to_bytes(4, "little") + (1).to_bytes(8, "little") + (2).to_bytes(8, "little")
    assert cpu_c_mod.unpack_libraries(good + b"abc") == [b"a", b"bc"]
    assert cpu_c_mod.unpack_libraries(good + b"ab") is None
    assert cpu_c_mod.unpack_libraries(good + b"abcd") is None


def test_llvm_warm_compile_optimises_nothing(cache: str, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    assert _run_llvm(CpuLlvmRuntime().compile(LLVM_SOURCE)) == 3.0
    assert len(_entries(cache, "kernels")) == 1

    def no_optimizer(source: str):
        raise AssertionError("a warm compile must not optimise")

    monkeypatch.setattr(cpu_llvm_mod, "_optimize", no_optimizer)
    warm = CpuLlvmRuntime().compile(LLVM_SOURCE)
    assert warm.module is None and _run_llvm(warm) == 3.0
    monkeypatch.undo()
    assert "define void @twice" in warm.optimized_ir  # optimised again on demand


KERNEL_PARTS = {
    "source": lambda mp: None,
    "flags": lambda mp: mp.setattr(cpu_c_mod, "C_FLAGS", (*cpu_c_mod.C_FLAGS, "-g0")),
    "toolchain": lambda mp: [mp.setattr(cls, "toolchain_fingerprint", lambda self: "cc 99")
                             for cls in (CpuCRuntime, CpuLlvmRuntime)],
    "picograd version": lambda mp: mp.setattr(disk_store, "picograd_version", lambda: "9.9"),
}


@pytest.mark.parametrize("part", KERNEL_PARTS, ids=KERNEL_PARTS.keys())
@pytest.mark.parametrize("target", ["c", "llvm"])
def test_changing_any_part_of_a_kernel_key_misses(cache: str, part: str, target: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    source = C_SOURCE if target == "c" else LLVM_SOURCE
    runtime = CpuCRuntime(jobs=1) if target == "c" else CpuLlvmRuntime()
    runtime.compile(source)
    runtime.compile(source)
    assert len(_entries(cache, "kernels")) == 1
    if part == "source":
        source = source.replace("2.0", "3.0")
    elif part == "flags" and target == "llvm":
        monkeypatch.setattr(cpu_llvm_mod, "OPT_LEVEL", 2)
    else:
        KERNEL_PARTS[part](monkeypatch)
    runtime.compile(source)
    assert len(_entries(cache, "kernels")) == 2


def test_a_corrupt_library_is_rebuilt(cache: str) -> None:
    CpuCRuntime(jobs=1).compile(C_SOURCE)
    [path] = _entries(cache, "kernels")
    with open(path, "r+b") as f:
        f.seek(-100, os.SEEK_END)
        f.write(b"\xff" * 8)
    binary = CpuCRuntime(jobs=1).compile(C_SOURCE)  # the bad entry is not loaded
    np.testing.assert_allclose(_run_c(binary), np.sqrt(np.arange(4)))
    key = CpuCRuntime(jobs=1)._key(C_SOURCE)
    assert key is not None and disk_store.read("kernels", key) is not None  # rewritten whole
    assert _entries(cache, "kernels") == [path]


# ── splitting C sources for parallel compiles ───────────────────────────────


def test_split_units_keeps_the_prelude_in_each_unit() -> None:
    units = split_units(C_SOURCE, 4)
    assert len(units) == 2
    assert all(u.startswith("#include <math.h>\n#include <stdint.h>\n") for u in units)
    assert "void k0" in units[0] and "void k1" not in units[0] and "void k1" in units[1]
    assert split_units(C_SOURCE, 1) == [C_SOURCE]


def test_split_units_refuses_a_source_with_helpers_between_kernels() -> None:
    helper = C_SOURCE.replace("void k1", "static float helper(float x) { return x; }\n\nvoid k1")
    assert split_units(helper, 4) == [helper]
    assert split_units("void k0(float* a) { a[0] = 1; }\n", 4) == [
        "void k0(float* a) { a[0] = 1; }\n"]


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity here")
def test_c_compile_jobs_are_the_cpus_this_process_may_use(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Not os.cpu_count(): a container's cpuset or `taskset` leaves a process one CPU of
    many, and a second translation unit would only wait for it."""
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    source = "#include <stdint.h>\n" + "".join(
        f"\nvoid k{i}(float* restrict p0) {{\n  p0[0] = {i}.0f;\n}}\n" for i in range(26))
    assert CpuCRuntime().jobs == 1
    assert CpuCRuntime(jobs=16)._parts(source) == 1  # one idle CPU of this process's
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3, 5})
    assert CpuCRuntime().jobs == 2


def test_one_unit_per_idle_core_with_enough_kernels_each(cache: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    source = "#include <stdint.h>\n" + "".join(
        f"\nvoid k{i}(float* restrict p0) {{\n  p0[0] = {i}.0f;\n}}\n" for i in range(26))
    monkeypatch.setattr(cpu_c_mod, "host_cpus", lambda: 16)
    monkeypatch.setattr(cpu_c_mod.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert CpuCRuntime(jobs=16)._parts(source) == 6  # 26 kernels, at least 4 a unit
    assert CpuCRuntime(jobs=2)._parts(source) == 2
    binary = CpuCRuntime(jobs=16).compile(source)
    assert len(binary.libraries) == 6
    out = np.zeros(1, np.float32)
    CpuCRuntime().load(binary, "k25", 1)(out.ctypes.data)
    assert out[0] == 25.0
    monkeypatch.setattr(cpu_c_mod.os, "getloadavg", lambda: (15.8, 0.0, 0.0))
    assert CpuCRuntime(jobs=16)._parts(source) == 1  # a busy machine: no extra units


def test_stats_count_hits_and_misses(tmp_path: os.PathLike[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """DEBUG=1's summary reads these counters: a missing entry is a miss, a stored one a hit."""
    monkeypatch.setenv("PG_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PG_CACHE", raising=False)
    before = disk_store.stats()
    assert disk_store.read("graphs", "k" * 64) is None
    disk_store.write("graphs", "k" * 64, b"payload")
    assert disk_store.read("graphs", "k" * 64) == b"payload"
    after = disk_store.stats()
    assert (after.hits - before.hits, after.misses - before.misses) == (1, 1)


class _Kind(enum.Enum):
    MUL = "mul"


@dataclasses.dataclass(frozen=True)
class _Spec:
    axes: frozenset
    name: str


def test_stable_text_spells_plain_values_as_repr_and_sorts_sets():
    value = ("CPU", [1, ("f", "0x1p+0"), None, True, b"x"], _Kind.MUL,
             {"b": 2, "a": {3, 1}}, _Spec(frozenset({"y", "x"}), "s"), ())
    assert disk_store.stable_text(value) == (
        "('CPU', (1, ('f', '0x1p+0'), None, True, b'x'), <_Kind.MUL: 'mul'>, "
        "{'a': {1, 3}, 'b': 2}, _Spec(axes={'x', 'y'}, name='s'), ())")
    # a one-element tuple and its element differ, as do 1, 1.0 and True
    assert len({disk_store.stable_text(v) for v in [(1,), 1, 1.0, True, ((1,),)]}) == 5
