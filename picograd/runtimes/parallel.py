"""Run a large CPU kernel on every core: its outermost global range in chunks that the
caller and the pool threads claim as they come.

    c_kernel(address, num_args, outer) -> Kernel     outer: (trip, work) or None
    set_num_threads(n) / get_num_threads()           as torch's

A CPU kernel (LLVM or C) is a C function `void k(void* p0, ..., int64_t start, int64_t
end)`; `start`/`end` bound the iterations of its outermost global range when the lowering
found that range splittable (`picograd/lowering/outer_range.py`, which also estimates the
kernel's `work`, its dynamic op count in lanes).

Policy: a kernel is split when it is splittable, `work >= MIN_WORK` (a hand-off to the pool
costs ~5-20 us, which a kernel of fewer ops than that does not win back) and more than one
thread is allowed. Its range is cut into `CHUNKS_PER_THREAD` contiguous near-equal chunks
per thread; the caller posts the launch to the pool and claims chunks itself at once
(`chunk_claim.py`: an atomic counter, in native code), and so does each pool thread as it
arrives. The caller then waits only for chunks that another thread has claimed and is
running. So a launch never waits for a thread the OS has not scheduled: when numpy's
OpenBLAS threads, torch's OpenMP pool or onnxruntime's pool are still spinning on the other
CPUs (they do for up to a second after each of their calls), the caller runs the chunks the
pool threads do not get to, and the kernel takes at most its one-thread time instead of a
scheduler tick (4 ms) more. Pool threads keep no CPU affinity, so the OS may move one off a
busy CPU.

A pool thread waits for the next launch busily (yielding its CPU between reads of one word,
`spin_wait.py`) for an adaptive time before it sleeps on a condition: the wait doubles,
up to `SPIN_MAX_S`, when launches come while it waits (a training step's kernels), and
halves, down to `SPIN_MIN_S`, when it times out (an idle program stops spending CPU soon).
A kernel that finds the pool busy with another Python thread's kernel runs whole on its
caller.

Threads: `set_num_threads(n)` (as `torch.set_num_threads`, for kernels launched after it),
else `PG_THREADS=N`, else the CPUs this process may run on (`os.sched_getaffinity`, which a
container or `taskset` narrows, not `os.cpu_count()`); 1 turns splitting off.
"""

from __future__ import annotations

import ctypes
import os
import threading
import weakref
from collections.abc import Callable

from picograd import flags
from picograd.dialects.capabilities import host_cpus
from picograd.errors import ThreadCountError, user_location
from picograd.runtimes import chunk_claim, spin_wait
from picograd.runtimes.base import Kernel

# The trailing (start, end) of every kernel, declared `int64_t`, pass through ctypes as
# `void*`: on the 64-bit hosts picograd runs on both travel in the same integer register or
# stack slot, and ctypes converts a Python int to `void*` ~3x faster than to `int64_t`
# (~0.1 us per launch, which a tiny realize notices).
KERNEL_ARGS = (ctypes.c_void_p, ctypes.c_void_p)

# Dynamic ops below which a kernel stays one call. Measured (2-core x86, -O3 / -O2 code): a
# hand-off costs ~5-20 us; kernels retire ~10-40 ops per ns, so 4M ops is >= ~100-400 us of
# work, where the hand-off is a small share.
MIN_WORK = 1 << 22

# Chunks per thread: more let the threads that run absorb the share of one that is late
# (each late thread leaves the others 1/CHUNKS_PER_THREAD of its share to wait for at most);
# fewer keep each chunk's rows contiguous for the caches.
CHUNKS_PER_THREAD = 4

# The name prefix of the pool's threads (which only run kernels: they hold no lock that a
# forked compiler process could need).
POOL_THREADS = "picograd-cpu"



def fork_is_safe() -> bool:
    """Whether a forked child can run Python and LLVM: only the calling thread and the
    kernel pool's run (another thread of the program might hold a lock, llvmlite's or the
    logging module's, that the child would then wait for forever). Where other threads run
    (a notebook kernel's, a test runner's), the callers do their work in this process."""
    current = threading.current_thread()
    return all(t is current or t.name.startswith(POOL_THREADS) for t in threading.enumerate())


# Bounds of a pool thread's busy wait for the next launch (see the module docstring).
SPIN_MIN_S, SPIN_MAX_S = 50e-6, 2e-3

_wanted_threads: int | None = None  # set_num_threads; None: PG_THREADS or the CPUs


def set_num_threads(count: int) -> None:
    """Use at most `count` threads for each large CPU kernel launched from now on (as
    `torch.set_num_threads`); 1 runs every kernel on its caller alone."""
    global _wanted_threads
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ThreadCountError(f"set_num_threads expects a positive int, got {count!r}"
                               f"\n  at {user_location()}")
    _wanted_threads = count


def get_num_threads() -> int:
    """The threads a large CPU kernel launched now may use (as `torch.get_num_threads`)."""
    return threads()


def _usable_cpus() -> int:
    return host_cpus()


def threads() -> int:
    """`set_num_threads`'s count, else `PG_THREADS`, else the CPUs this process may use."""
    if _wanted_threads is not None:
        return _wanted_threads
    text = flags.threads()
    try:
        wanted = int(text) if text else 0
    except ValueError:
        wanted = 0
    return wanted if wanted > 0 else _usable_cpus()


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


class _Launch:
    """One split launch as the pool threads see it: the claim loop and its arguments. The
    arrays live as long as any thread holds this object, so a thread that arrives after the
    launch ended claims nothing from memory that is still valid."""

    def __init__(self, loop: Callable[[int, int, int], int], kernel: int,
                 args: ctypes.Array, state: chunk_claim.State) -> None:
        self.loop, self.kernel, self.args, self.state = loop, kernel, args, state

    def claim(self) -> int:
        """Run chunks until none is left; how many this thread ran."""
        return self.loop(self.kernel, ctypes.addressof(self.args), self.state.address)


class _Pool:
    """The pool threads and the launch they serve. Threads are started as launches ask
    for them and never stopped (daemons)."""

    def __init__(self) -> None:
        self.generation = (ctypes.c_int64 * 1)()  # bumped by every post; pool threads watch it
        self.launch: _Launch | None = None
        self.wake = threading.Condition()
        self.sleepers = 0  # pool threads asleep on `wake` (changed under its lock)
        self.size = 0
        self.grow_lock = threading.Lock()
        self.busy = threading.Lock()  # held by the one caller whose launch the pool serves

    def ensure(self, helpers: int) -> None:
        """At least `helpers` pool threads exist."""
        with self.grow_lock:
            while self.size < helpers:
                threading.Thread(target=self._serve, name=f"{POOL_THREADS}-{self.size}",
                                 daemon=True).start()
                self.size += 1

    def post(self, launch: _Launch) -> None:
        """Offer `launch` to the pool threads."""
        self.launch = launch
        self.generation[0] += 1
        # The GIL orders this read after the store above, and a thread going to sleep
        # counts itself before it reads the generation: one of the two sees the other.
        if self.sleepers:
            with self.wake:
                self.wake.notify_all()

    def withdraw(self) -> None:
        """The posted launch is over: a pool thread that wakes now finds nothing to run."""
        self.launch = None

    def _serve(self) -> None:
        word = ctypes.addressof(self.generation)
        spin = SPIN_MAX_S / 2
        seen = self.generation[0]
        while True:
            if spin_wait.yield_until_changed(word, seen, spin_wait.yields_for(spin)) != seen:
                spin = min(SPIN_MAX_S, spin * 2)
            else:
                spin = max(SPIN_MIN_S, spin / 2)
                with self.wake:
                    self.sleepers += 1
                    while self.generation[0] == seen:
                        self.wake.wait()
                    self.sleepers -= 1
            seen = self.generation[0]
            launch = self.launch
            if launch is not None:
                launch.claim()


_pool = _Pool()


def _forget_pool() -> None:
    """In a forked child: the pool threads stayed in the parent (a child that runs kernels,
    e.g. a data-loading process, starts its own)."""
    global _pool
    _pool = _Pool()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _wait_done(state: chunk_claim.State) -> None:
    """Return when every chunk of `state` has run: the ones left are running on threads
    that claimed them. A busy wait that yields its CPU (the thread it waits for may share
    it), for as long as a chunk runs."""
    budget = spin_wait.yields_for(SPIN_MAX_S)
    while (done := state.done()) != state.count:
        spin_wait.yield_until_changed(state.done_address, done, budget)


# launcher -> how it runs, for DEBUG=2's launch lines (`plan`)
_plans: weakref.WeakKeyDictionary[Kernel, Callable[[], str]] = weakref.WeakKeyDictionary()


def plan(kernel: Kernel) -> str:
    """How a launcher from `c_kernel` runs its kernel now ("" for any other callable): one
    call and why, or its chunks over how many threads."""
    describe = _plans.get(kernel)
    return describe() if describe is not None else ""


def read_outer(address: int | None) -> tuple[int, int] | None:
    """(trip, work) from the exported `int64_t[2]` at `address`; None where there is none."""
    if not address:
        return None
    pair = (ctypes.c_int64 * 2).from_address(address)
    return int(pair[0]), int(pair[1])


def c_kernel(address: int, num_args: int, outer: tuple[int, int] | None,
             parts: int | None = None) -> Kernel:
    """The launcher of the CPU kernel at `address` with `num_args` buffer arguments: a
    callable taking only the buffer addresses. `outer` is (trip, work) of a splittable
    kernel, None for one that ignores `(start, end)`; `parts` fixes the thread count the
    policy would choose at each launch (tests)."""
    function = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * num_args, *KERNEL_ARGS)(address)
    trip = outer[0] if outer is not None else 0
    if outer is None or trip <= 1 or (parts is None and outer[1] < MIN_WORK) or parts == 1:

        def single(*addresses: int) -> None:
            function(*addresses, 0, trip)

        why = ("no splittable outer range" if outer is None or trip <= 1 else
               "one thread asked" if parts == 1 else
               f"work {outer[1]:,} < {MIN_WORK:,} ops")
        _plans[single] = lambda: f"1 call ({why})"
        return single
    loop = chunk_claim.claim_loop(num_args)  # compiled now, not by a pool thread
    spin_wait.seconds_per_read()  # likewise measured now
    templates: dict[int, ctypes.Array] = {}  # a launch's fresh cells, by thread count

    def split(*addresses: int) -> None:
        team = parts if parts is not None else threads()
        pool = _pool
        if team <= 1 or not pool.busy.acquire(blocking=False):
            function(*addresses, 0, trip)  # one thread, or the pool serves another caller
            return
        try:
            template = templates.get(team)
            if template is None:
                bounds = chunks(trip, team * CHUNKS_PER_THREAD)
                template = templates[team] = chunk_claim.State.template(bounds)
            state = chunk_claim.State(template)
            pool.ensure(team - 1)
            launch = _Launch(loop, address, (ctypes.c_void_p * max(1, num_args))(*addresses),
                             state)
            pool.post(launch)
            launch.claim()
            _wait_done(state)
            pool.withdraw()
        finally:
            pool.busy.release()

    def describe() -> str:
        team = parts if parts is not None else threads()
        if team <= 1:
            return "1 call (one thread allowed)"
        return f"{len(chunks(trip, team * CHUNKS_PER_THREAD))} chunks on {team} threads"

    _plans[split] = describe
    return split
