"""What a recorder of realizes (`picograd.jit`) is told while it captures.

    with capturing(recorder):          # recorder: a `Recorder`
        ...                            # realizes, assigns and random draws are reported

The frontend calls the active recorder at five points and knows nothing else about it:

    on_realize(program, outputs, shared, export)
                                   `realize()` ran `program`; `outputs` are the nodes it
                                   computed (still pending: their graph can be read), and
                                   `shared` intermediates of that graph it also handed
                                   buffers, from alloc slots `export` (`Program.run`)
    on_assign(target, value)       `Tensor.assign` made `value`'s buffer `target`'s
    on_random_key(refresh)         a random draw read host-side keys; `refresh()` writes the
                                   next keys into their buffers (a replay must draw anew)
    on_host_state(refresh)         host state a replay must refresh before the programs after
                                   this point run (an optimiser's step count, learning rate)
    on_guard(guard)                a realize checked `guard` (`lazy.Guard`: a computed index's
                                   range), whose node an earlier report computed: a replay
                                   must check it again

Outside `capturing`, every report is dropped: `on_host_state(fn)` and friends cost one check.
Captures do not nest (`picograd.jit` refuses a jit inside a jit before it gets here).

What a finished capture cannot see, the frontend notes here for it to check at replay:

    note_replaced(node)     a tensor was pointed away from `node` by a user's in-place op
                            (`load_state_dict`, `fill_`, `x[i] = v`): a replay that reads
                            `node` would read the old values
    note_mode_change()      a module switched between train and eval (dropout, BatchNorm)
    state_epoch() -> (int, int)   the counts of both, cheap to compare per call
    was_replaced(node)      whether `node` was noted replaced
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

from picograd.frontend.lazy import Guard, LazyOp

if TYPE_CHECKING:
    from picograd.runtimes import Program


class Recorder(Protocol):
    def on_realize(self, program: Program, outputs: list[LazyOp], shared: list[LazyOp],
                   export: list[int]) -> None: ...

    def on_assign(self, target: LazyOp, value: LazyOp) -> None: ...

    def on_random_key(self, refresh: Callable[[], None]) -> None: ...

    def on_host_state(self, refresh: Callable[[], None]) -> None: ...

    def on_guard(self, guard: Guard) -> None: ...


class _Recording(threading.local):
    """Per thread, the recorder of the capture in progress, if any (a capture records the
    realizes of its own thread only)."""

    def __init__(self) -> None:
        self.recorders: list[Recorder] = []


_recording = _Recording()


@contextlib.contextmanager
def capturing(recorder: Recorder) -> Iterator[Recorder]:
    """Report every realize, assign and random draw inside the block to `recorder`."""
    active = _recording.recorders
    assert not active, "captures do not nest"
    active.append(recorder)
    try:
        yield recorder
    finally:
        active.pop()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Report nothing inside the block: work that a replay must not repeat (the initial
    values `picograd.frontend.realize` computes on the first realize)."""
    active = _recording.recorders
    saved = active[:]
    active.clear()
    try:
        yield
    finally:
        active[:] = saved


def recorder() -> Recorder | None:
    """The recorder of the capture in progress, or None."""
    active = _recording.recorders
    return active[0] if active else None


def on_host_state(refresh: Callable[[], None]) -> None:
    """During a capture, run `refresh` at this point of every later replay (before the
    programs realized after it); outside a capture, do nothing."""
    active = _recording.recorders
    if active:
        active[0].on_host_state(refresh)


_replaced: weakref.WeakSet[LazyOp] = weakref.WeakSet()
_epoch = [0, 0]  # [nodes replaced, mode changes] so far


def note_replaced(node: LazyOp) -> None:
    """A tensor no longer holds `node`: the user replaced its values in place."""
    _replaced.add(node)
    _epoch[0] += 1


def note_mode_change() -> None:
    """A module changed between training and evaluation."""
    _epoch[1] += 1


def state_epoch() -> tuple[int, int]:
    return _epoch[0], _epoch[1]


def was_replaced(node: LazyOp) -> bool:
    return node in _replaced
