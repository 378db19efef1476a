"""A caching allocator: each runtime keeps the buffers a run gave back, for the next run.

    pool = pool_of(runtime)              the runtime's pool (made on first use)
    buffer = pool.take(size, dtype)      an idle buffer of exactly that size and dtype, or a
                                         new one from `runtime.allocate`
    pool.give(buffer)                    idle again (freed at once if it would not fit)
    pool.stats() -> PoolStats            hits, misses, idle bytes, evictions
    pool.clear()                         free every idle buffer
    set_reporter(fn)                     fn(line) after every take (DEBUG >= 2 sets one)

A `Program` takes what one run needs and gives it back when the run ends: on the CPU the
arena of its intermediates (results escape to the caller and come from numpy), on a GPU
every buffer of the run (inputs, intermediates, results: the results are copied out before
they are given back). The second run of a program therefore allocates nothing, and neither
does a program whose buffers have the sizes of another's.

Buffers are matched on (elements, dtype) exactly: a CPU arena is a byte array, so any two
arenas of one size match; device buffers carry their element type. Idle buffers are bounded
by `PG_POOL_MB` (default 1024) per pool: giving back past it frees the least recently given
idle buffers first; a buffer larger than the bound is freed at once. `PG_POOL_MB=0` turns
pooling off (every take allocates, every give frees). An allocation the device refuses
for lack of memory frees the idle buffers and is tried once more before it fails.

Runs on one device are in program order (see `memory_plan.py`), and a buffer is given back
only after the run's last launch that uses it was queued, so a later run that takes it writes
it after every earlier use: CPU launches are synchronous, CUDA and WebGPU queues are ordered.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from picograd import flags

_Key = tuple[int, str]


@dataclass(frozen=True)
class PoolStats:
    hits: int
    misses: int
    idle_bytes: int
    idle_buffers: int
    evictions: int


_reporter: Callable[[str], None] | None = None


def set_reporter(report: Callable[[str], None] | None) -> None:
    """Call `report(line)` after every take of every pool (None: stop)."""
    global _reporter
    _reporter = report


def _size(nbytes: int) -> str:
    if nbytes < 2**10:
        return f"{nbytes} B"
    if nbytes < 2**20:
        return f"{nbytes / 2**10:.1f} KB"
    return f"{nbytes / 2**20:.1f} MB"


class BufferPool:
    """The idle buffers of one runtime (see the module docstring)."""

    def __init__(self, runtime: Any, limit_bytes: int | None = None):
        self.runtime = runtime
        self.limit_bytes = flags.pool_limit_bytes() if limit_bytes is None else limit_bytes
        # idle buffers, least recently given first: id -> (key, nbytes, buffer)
        self._idle: OrderedDict[int, tuple[_Key, int, Any]] = OrderedDict()
        self._by_key: dict[_Key, list[int]] = {}
        self._idle_bytes = 0
        self._hits = self._misses = self._evictions = 0
        self._lock = threading.Lock()

    def take(self, size: int, dtype: np.dtype) -> Any:
        dtype = np.dtype(dtype)
        key = (size, dtype.str)
        with self._lock:
            ids = self._by_key.get(key)
            if ids:
                _, nbytes, buffer = self._idle.pop(ids.pop())
                self._idle_bytes -= nbytes
                self._hits += 1
                hit = True
            else:
                buffer, hit = None, False
                self._misses += 1
        if buffer is None:
            buffer = self._allocate(size, dtype)
        report = _reporter
        if report is not None:
            report(f"pool {self.runtime.name}: {'reuse' if hit else 'allocate'} "
                   f"{_size(size * dtype.itemsize)} ({self._hits} hits, {self._misses} misses, "
                   f"{_size(self._idle_bytes)} idle)")
        return buffer

    def _allocate(self, size: int, dtype: np.dtype) -> Any:
        """A new buffer; if the device is out of memory, free the idle buffers and try once
        more (as torch's caching allocator does) before the OutOfMemoryError is the user's."""
        try:
            return self.runtime.allocate(size, dtype)
        except MemoryError:  # numpy's on the host, OutOfMemoryError on a device
            if not self._idle:
                raise
        self.clear()
        return self.runtime.allocate(size, dtype)

    def give(self, buffer: Any) -> None:
        size, dtype = _spec(buffer)
        nbytes = size * dtype.itemsize
        freed: list[Any] = []
        with self._lock:
            if nbytes > self.limit_bytes:
                freed.append(buffer)
            else:
                key = (size, dtype.str)
                self._idle[id(buffer)] = (key, nbytes, buffer)
                self._by_key.setdefault(key, []).append(id(buffer))
                self._idle_bytes += nbytes
                while self._idle_bytes > self.limit_bytes:
                    freed.append(self._evict_oldest())
        for b in freed:
            self.runtime.free(b)

    def _evict_oldest(self) -> Any:
        ident, (key, nbytes, buffer) = self._idle.popitem(last=False)
        ids = self._by_key[key]
        ids.remove(ident)
        if not ids:
            del self._by_key[key]
        self._idle_bytes -= nbytes
        self._evictions += 1
        return buffer

    def clear(self) -> None:
        with self._lock:
            buffers = [b for _, _, b in self._idle.values()]
            self._idle.clear()
            self._by_key.clear()
            self._idle_bytes = 0
        for b in buffers:
            self.runtime.free(b)

    def stats(self) -> PoolStats:
        with self._lock:
            return PoolStats(self._hits, self._misses, self._idle_bytes, len(self._idle),
                             self._evictions)


def _spec(buffer: Any) -> tuple[int, np.dtype]:
    """(elements, dtype) of a host array or a device buffer (both have `size`, `dtype`)."""
    return int(buffer.size), np.dtype(buffer.dtype)


_pools: weakref.WeakKeyDictionary[Any, BufferPool] = weakref.WeakKeyDictionary()
_pools_lock = threading.Lock()


def pool_of(runtime: Any) -> BufferPool:
    """The pool of `runtime` (one per runtime object, made on first use)."""
    pool = _pools.get(runtime)
    if pool is None:
        with _pools_lock:
            pool = _pools.get(runtime)
            if pool is None:
                pool = _pools[runtime] = BufferPool(runtime)
    return pool
