"""Work in a forked child whose result comes back through a pipe.

    start(work) -> (pid, read_end)       the child runs `work()` and sends its bytes
    collect(pid, read_end) -> Outcome    the parent reads them and reaps the child
    collect_by(pid, read_end, deadline)  ... or kills a child still working at `deadline`

Both CPU compile steps that use a second core fork this way (llvmlite holds a process-wide
lock around every LLVM call and xDSL holds the GIL, so threads would not overlap): the
LLVM runtime compiles a module per child (`cpu_llvm.py`), the compile driver lowers half
of a graph's kernels in one (`picograd/compiler/parallel_lowering.py`). The caller checks
`parallel.fork_is_safe()` first. The child leaves with `os._exit`, running no cleanup of
the parent's state; a message is framed by its length, so a child that dies part-way
leaves an outcome that is not `ok`.
"""

from __future__ import annotations

import os
import select
import signal
import struct
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

_LENGTH = struct.Struct("<Q")


@dataclass(frozen=True)
class Outcome:
    """What a child sent: `ok` and its result, or not `ok` and its error text ("" when it
    ended without a whole message)."""

    ok: bool
    data: bytes


def start(work: Callable[[], bytes]) -> tuple[int, int]:
    """Fork a child that runs `work()` and writes its result, or the error it raised, to a
    pipe: (its pid, the pipe's read end, for `collect`)."""
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():  # 3.12+ warns of threads: the pool's hold no lock
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: work, send, and leave without running any cleanup
        os.close(read_end)
        try:
            payload = b"O" + work()
        except BaseException as e:  # any failure is the parent's to report
            payload = b"E" + f"{type(e).__name__}: {e}".encode(errors="replace")
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(_LENGTH.pack(len(payload)) + payload)
        os._exit(0)
    os.close(write_end)
    return pid, read_end


def collect(pid: int, read_end: int) -> Outcome:
    """Read what child `pid` sent through `read_end` and reap it."""
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return _outcome(data)


def _outcome(data: bytes) -> Outcome:
    size = _LENGTH.unpack(data[:_LENGTH.size])[0] if len(data) >= _LENGTH.size else -1
    payload = data[_LENGTH.size:]
    if size != len(payload) or payload[:1] not in (b"O", b"E"):
        return Outcome(False, b"")
    return Outcome(payload[:1] == b"O", payload[1:])


def collect_by(pid: int, read_end: int, deadline: float) -> Outcome:
    """`collect`, but a child that has not finished sending by `deadline` (a
    `time.perf_counter()` value) is killed and reaped: an outcome that is not `ok`, with
    the error text "timed out" (BEAM's candidates: a compile that would take minutes)."""
    chunks: list[bytes] = []
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        while True:
            left = deadline - time.perf_counter()
            ready = select.select([pipe], [], [], max(left, 0.0))[0] if left > 0 else []
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return Outcome(False, b"timed out")
            chunk = pipe.read(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    return _outcome(b"".join(chunks))
