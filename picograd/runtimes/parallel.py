"""Run a large CPU kernel on every core: its outermost global range in contiguous chunks.

    host_kernel(function, outer) -> Kernel        outer: (trip, work) or None

A CPU kernel (LLVM or C) is a C function `void k(void* p0, ..., int64_t start, int64_t
end)`; `start`/`end` bound the iterations of its outermost global range when the lowering
found that range splittable (`picograd/lowering/outer_range.py`, which also estimates the
kernel's `work`, its dynamic op count). ctypes releases the GIL for the length of a foreign
call, so chunks of one kernel run on a persistent thread pool really run at once.

Policy: a kernel is split when it is splittable, `work >= MIN_WORK` (handing a chunk to a
pool thread and waiting for it costs ~10-30 us, which a kernel of fewer ops than that does
not win back) and more than one thread is allowed; it is cut into `min(threads, trip)`
near-equal contiguous chunks, the last one runs on the calling thread and the call returns
when all are done. Every other kernel is one call with `(0, trip)`.

`PG_THREADS=N` caps the threads (default: the CPU count); `PG_THREADS=1` turns splitting
off. It is read when a kernel is loaded (cached programs keep their choice).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from picograd import flags
from picograd.runtimes.base import Kernel

# The trailing (start, end) of every kernel, declared `int64_t`, pass through ctypes as
# `void*`: on the 64-bit hosts picograd runs on both travel in the same integer register or
# stack slot, and ctypes converts a Python int to `void*` ~3x faster than to `int64_t`
# (~0.1 us per launch, which a tiny realize notices).
KERNEL_ARGS = (ctypes.c_void_p, ctypes.c_void_p)

# Dynamic ops below which a kernel stays one call. Measured (2-core x86, -O3 / -O2 code):
# a split costs ~20 us of hand-off and wait; kernels retire ~10-40 ops per ns, so 4M ops
# is >= ~100-400 us of work, where the hand-off is a small share.
MIN_WORK = 1 << 22

# The name prefix of the pool's threads (which only run kernels: they hold no lock that a
# forked compiler process could need).
POOL_THREADS = "picograd-cpu"

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def threads() -> int:
    """How many threads one kernel may use: `PG_THREADS`, else the CPU count."""
    text = flags.threads()
    try:
        wanted = int(text) if text else 0
    except ValueError:
        wanted = 0
    return wanted if wanted > 0 else (os.cpu_count() or 1)


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < workers:  # grow (rare): the old one stays usable
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=POOL_THREADS)
            _pool_size = workers
        return _pool


def chunks(trip: int, parts: int) -> list[tuple[int, int]]:
    """`[0, trip)` as `parts` contiguous near-equal `(start, end)` chunks (none empty)."""
    parts = max(1, min(parts, trip))
    share, extra = divmod(trip, parts)
    bounds, at = [], 0
    for i in range(parts):
        n = share + (i < extra)
        bounds.append((at, at + n))
        at += n
    return bounds


def c_kernel(address: int, num_args: int, outer: tuple[int, int] | None) -> Kernel:
    """The launcher of the CPU kernel at `address` with `num_args` buffer arguments (see
    `host_kernel`)."""
    prototype = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * num_args, *KERNEL_ARGS)
    return host_kernel(prototype(address), outer)


def read_outer(address: int | None) -> tuple[int, int] | None:
    """(trip, work) from the exported `int64_t[2]` at `address`; None where there is none."""
    if not address:
        return None
    pair = (ctypes.c_int64 * 2).from_address(address)
    return int(pair[0]), int(pair[1])


def host_kernel(function: Callable[..., None], outer: tuple[int, int] | None,
                parts: int | None = None) -> Kernel:
    """The launcher of a loaded CPU kernel `function` (buffer addresses, then start and end):
    a callable taking only the buffer addresses. `outer` is (trip, work) of a splittable
    kernel, None for one that ignores `(start, end)`; `parts` overrides the policy (tests)."""
    trip = outer[0] if outer is not None else 0
    if parts is None:
        parts = threads() if outer is not None and outer[1] >= MIN_WORK else 1
    bounds = chunks(trip, parts) if trip > 0 else [(0, 0)]
    if len(bounds) == 1:
        start, end = bounds[0]

        def single(*addresses: int) -> None:
            function(*addresses, start, end)

        return single
    pool = _executor(len(bounds) - 1)
    *others, (last_start, last_end) = bounds

    def split(*addresses: int) -> None:
        futures: list[Future[None]] = [pool.submit(function, *addresses, a, b)
                                       for a, b in others]
        try:
            function(*addresses, last_start, last_end)
        finally:
            for future in futures:
                future.result()

    return split
