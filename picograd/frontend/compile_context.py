"""`pg.Context`: compile settings for a block of code, as tinygrad's `Context(BEAM=2)`.

    with pg.Context(beam=2):            every compile in the block searches its schedules
        y = model(x).numpy()
    with pg.Context(pipeline="..."):    ... or runs this pipeline (as `realize(pipeline=)`)

`beam` is a BEAM width (0: the heuristic's schedules, whatever `$BEAM` says; docs/design.md,
"BEAM search"); the innermost block wins. A graph compiled under one setting is another
program than under another: both stay in the compile cache.
"""

from __future__ import annotations

import contextlib
from types import TracebackType

from picograd.compiler.driver import beam_scope, pipeline_scope
from picograd.errors import ArgumentTypeError, user_location


class Context:
    """Compile settings for the `with` block (see the module docstring)."""

    def __init__(self, *, beam: int | None = None, pipeline: str | None = None):
        if beam is not None and (isinstance(beam, bool) or not isinstance(beam, int)
                                 or beam < 0):
            raise ArgumentTypeError(f"Context: beam must be an integer of 0 or more, got "
                                    f"{beam!r}\n  at {user_location()}")
        if pipeline is not None and not isinstance(pipeline, str):
            raise ArgumentTypeError(f"Context: pipeline must be a pass pipeline string, got "
                                    f"{type(pipeline).__name__}\n  at {user_location()}")
        self.beam = beam
        self.pipeline = pipeline
        self._stack: contextlib.ExitStack | None = None

    def __enter__(self) -> Context:
        stack = contextlib.ExitStack()
        stack.enter_context(beam_scope(self.beam))
        stack.enter_context(pipeline_scope(self.pipeline))
        self._stack = stack
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()
