"""`gc_paused()`: no cyclic garbage collection while picograd builds or walks a large graph.

    with gc_paused(): ...               (nests; restores the collector as it found it)
    with gc_paused(promote=True): ...   (a block that only builds graph nodes)

Building a graph allocates tens of thousands of nodes that all stay alive until the graph
is realized, and each of CPython's collections of the oldest generation walks every live
object: a backward of a 100-step LSTM triggered several, 0.1-0.2 s of a 0.4 s step.
The nodes hold no reference cycles that must be freed early (a node's references point to
its sources, which are older), so picograd's own walks (backward, realize, a recurrent
layer's loop) run with the collector off; reference counting frees as usual, and the
collector, on again afterwards, sees the new objects once.

Once is still a lot: the first young collection after the block walks every node it made
(2-3 ms for an LSTM's 100 steps), and its survivors are walked again by the next collection
of the middle generation (30 ms at ~48k objects, every third step of that LSTM's training).
A block that only builds nodes (no cyclic garbage: realize's compiles, whose xDSL IR is,
are not such a block) ends with `promote=True`: what it made moves to the oldest
generation without a scan (`gc.freeze()` resets the young count, `gc.unfreeze()` puts the
frozen objects back, in the oldest generation); the nodes still die by reference counting.
A block inside which a plain `gc_paused` block ran (a realize: a backward rule or a
recurrent layer may sync) is not promoted.
"""

from __future__ import annotations

import gc
from typing import Any


class gc_paused:  # (lower case: used as `with gc_paused():`, like a function)
    """The collector off inside the block when it was on before it (a class, not a
    generator context manager: every realize enters one; 0.3 us against 1.4)."""

    __slots__ = ("_plain_before", "_promote", "_was_on")
    _plain_blocks = 0  # plain (not promoting) blocks entered so far

    def __init__(self, promote: bool = False):
        self._promote = promote

    def __enter__(self) -> None:
        if self._promote:
            self._plain_before = gc_paused._plain_blocks
        else:
            gc_paused._plain_blocks += 1
        self._was_on = gc.isenabled()
        if self._was_on:
            gc.disable()

    def __exit__(self, *exc: Any) -> None:
        if self._was_on:
            if self._promote and self._plain_before == gc_paused._plain_blocks:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
