"""Wait for a word of memory to change without the GIL and without sleeping: how a pool
thread waits for its next kernel chunk, and the caller for the chunks
(`picograd/runtimes/parallel.py`).

    yield_until_changed(address, old, budget) -> int    the new value, or `old` on time-out
    yields_for(seconds) -> int                          the budget that waits ~`seconds`

Why not sleep: a pool thread that sleeps between kernels has to be woken for each chunk,
which costs 20-100 us, and on the virtual machines picograd is measured on (2 vCPUs) the
woken thread often ran on the caller's CPU, so a 2.5 ms matmul ran on one core about half
the time (512^2 fp32: 96-110 GFLOP/s in one `Program.benchmark`, 190-216 in the next).
Why yield rather than spin: a thread that spins with `pause` starves whatever shares its
CPU (the Python caller, or the thread it waits for), and the scheduler did not move them
apart: with a spinning caller, chunks waited a whole spin (1 ms) before they started. A
`sched_yield` between reads keeps the CPU for this thread only while nothing else wants it.

The loop is native code, so it holds no GIL while it waits: a few lines of LLVM IR
compiled once per process (`native_helper.py`); `sched_yield` comes from the C
library the process already has.
"""

from __future__ import annotations

import ctypes
import functools
import time
from collections.abc import Callable

from picograd.runtimes.native_helper import native_function

_IR = """
declare i32 @sched_yield()

define i64 @pg_yield_until_changed(ptr %word, i64 %old, i64 %budget) {
entry:
  br label %read
read:
  %spun = phi i64 [0, %entry], [%next, %wait]
  %now = load atomic i64, ptr %word acquire, align 8
  %changed = icmp ne i64 %now, %old
  br i1 %changed, label %done, label %wait
wait:
  %ignored = call i32 @sched_yield()
  %next = add i64 %spun, 1
  %more = icmp ult i64 %next, %budget
  br i1 %more, label %read, label %done
done:
  ret i64 %now
}
"""

_Wait = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


@functools.cache
def _native() -> Callable[[int, int, int], int]:
    return native_function(_IR, "pg_yield_until_changed", _Wait)


def yield_until_changed(address: int, old: int, budget: int) -> int:
    """Read the int64 at `address` until it differs from `old` (its new value) or `budget`
    reads were made (`old`), yielding the CPU between reads. Releases the GIL meanwhile (a
    ctypes call)."""
    return _native()(address, old, budget)


@functools.cache
def seconds_per_read() -> float:
    """How long one read of the wait loop takes here (measured once per process)."""
    word = ctypes.c_int64(0)
    reads = 1 << 10
    best = float("inf")
    for _ in range(3):  # the fastest of three: a preempted measurement only overestimates
        start = time.perf_counter()
        yield_until_changed(ctypes.addressof(word), 0, reads)
        best = min(best, time.perf_counter() - start)
    return max(best / reads, 1e-9)


def yields_for(seconds: float) -> int:
    """The read budget that waits about `seconds` on this machine (at least one read)."""
    return max(1, int(seconds / seconds_per_read()))
