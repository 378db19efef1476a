"""The native loop by which a thread claims and runs chunks of a CPU kernel's outer range
(`picograd/runtimes/parallel.py`), without the GIL and without waiting for anyone.

    claim_loop(num_args) -> ClaimLoop     ClaimLoop(kernel, args, state) -> chunks it ran
    State(bounds)                         the claim counter, the done counter, the bounds

A job's chunks are claimed with one atomic add on a shared counter: the caller and every
pool thread run the same loop over the same `State` and stop when the counter passes the
last chunk, so whichever threads are running share the work and a thread the OS has not
scheduled claims nothing (the caller never waits for it). Each finished chunk adds one to
the done counter (release order, so its stores are visible to whoever reads the counter
with acquire order); the caller waits on that counter for the chunks other threads hold.

Why native code: claiming in Python would take the GIL between chunks, and a pool thread
could then wait up to the interpreter's switch interval (5 ms) for a thread running Python.
Kernels take their buffers as separate pointer arguments, so the loop is compiled once per
argument count (`native_helper.py`; a few milliseconds, once per process).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from picograd.runtimes.native_helper import native_function

# int64 cells of a State: the claim counter and the done counter 64 bytes apart (each its
# own cache line, so claiming does not slow the reads of the waiting caller), then the
# number of chunks and their (start, end) pairs.
NEXT, DONE, COUNT, BOUNDS = 0, 8, 16, 17

ClaimLoop = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


class State:
    """The shared counters and the chunk bounds of one launch of a split kernel: new for
    every launch, so a pool thread that arrives late (holding the last launch) finds its
    counter spent rather than another launch's chunks."""

    def __init__(self, template: ctypes.Array) -> None:
        self.cells = type(template).from_buffer_copy(template)
        self.count = int(template[COUNT])
        self.address = ctypes.addressof(self.cells)

    @staticmethod
    def template(bounds: list[tuple[int, int]]) -> ctypes.Array:
        """The cells of a fresh launch over `bounds`, to copy from."""
        cells = (ctypes.c_int64 * (BOUNDS + 2 * len(bounds)))()
        cells[COUNT] = len(bounds)
        for i, (start, end) in enumerate(bounds):
            cells[BOUNDS + 2 * i] = start
            cells[BOUNDS + 2 * i + 1] = end
        return cells

    @property
    def done_address(self) -> int:
        return self.address + 8 * DONE

    def done(self) -> int:
        return self.cells[DONE]


def _ir(num_args: int) -> str:
    """LLVM IR of the loop for kernels `void k(ptr a0, ..., ptr a{n-1}, i64 start, i64 end)`:
    the buffer pointers come from the array `%args`."""
    loads = "\n".join(
        f"  %p{i} = getelementptr ptr, ptr %args, i64 {i}\n  %a{i} = load ptr, ptr %p{i}"
        for i in range(num_args))
    params = "".join(f"ptr %a{i}, " for i in range(num_args))
    return f"""
define i64 @pg_claim_chunks(ptr %kernel, ptr %args, ptr %state) {{
entry:
  %done = getelementptr i64, ptr %state, i64 {DONE}
  %count_at = getelementptr i64, ptr %state, i64 {COUNT}
  %count = load i64, ptr %count_at
{loads}
  br label %claim
claim:
  %ran = phi i64 [0, %entry], [%ran_next, %body]
  %i = atomicrmw add ptr %state, i64 1 acq_rel
  %more = icmp slt i64 %i, %count
  br i1 %more, label %body, label %exit
body:
  %pair = mul i64 %i, 2
  %start_index = add i64 %pair, {BOUNDS}
  %start_at = getelementptr i64, ptr %state, i64 %start_index
  %start = load i64, ptr %start_at
  %end_at = getelementptr i64, ptr %start_at, i64 1
  %end = load i64, ptr %end_at
  call void %kernel({params}i64 %start, i64 %end)
  %ignored = atomicrmw add ptr %done, i64 1 release
  %ran_next = add i64 %ran, 1
  br label %claim
exit:
  ret i64 %ran
}}
"""


def claim_loop(num_args: int) -> Callable[[int, int, int], int]:
    """The loop for kernels of `num_args` buffer arguments: `loop(kernel address, address of
    a void*[num_args] of buffers, State.address)` claims and runs chunks until none is left
    and returns how many it ran. Releases the GIL meanwhile (a ctypes call)."""
    return native_function(_ir(num_args), "pg_claim_chunks", ClaimLoop)
