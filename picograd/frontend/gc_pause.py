"""`gc_paused()`: no cyclic garbage collection while picograd builds or walks a large graph.

    with gc_paused(): ...   (nests; restores the collector as it found it)

Building a graph allocates tens of thousands of nodes that all stay alive until the graph
is realized, and each of CPython's collections of the oldest generation walks every live
object: a backward of a 100-step LSTM triggered several, 0.1-0.2 s of a 0.4 s step.
The nodes hold no reference cycles that must be freed early (a node's references point to
its sources, which are older), so picograd's own walks (backward, realize, a recurrent
layer's loop) run with the collector off; reference counting frees as usual, and the
collector, on again afterwards, sees the new objects once.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    if not gc.isenabled():  # paused by an outer block (or by the user): leave it so
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
