"""`stash` applies only where computing the shared value once keeps every store: each case
breaks one condition and is refused with the reason, the kernel left as it was."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.parser import Parser

from picograd.dialects import make_context
from picograd.dialects import pg_loop as L
from picograd.passes.loop.schedule import ScheduleError, stash

SOFTMAX = (Path(__file__).parents[2] / "filecheck" / "passes" / "loop-stash.mlir").read_text()


def kernel(old: str = "", new: str = "") -> L.KernelOp:
    text = SOFTMAX
    if old:
        assert old in text
        text = text.replace(old, new)
    module = Parser(make_context(), text).parse_module()
    return next(op for op in module.walk() if isinstance(op, L.KernelOp))


@pytest.mark.parametrize(("n", "old", "new", "reason"), [
    (0, "", "", "it combines loaded values as they are: nothing to compute once"),
    (1, "pg_loop.range %i = 0 to 8 global", "pg_loop.range %i = 0 to 8 loop",
     "no independent range over the reduce's iterations follows it"),
    (1, "%ec = pg_uop.unary exp %dc", "%ec = pg_uop.unary neg %dc",
     "the range after it does not compute the value the reduce combines"),
    (1, "pg_loop.store %q, %out[%at]", "pg_loop.store %q, %out[%r]",
     "the range after it does not store one element per iteration"),
    (1, "%xa = pg_loop.load %x[%ia]", "%xa = pg_loop.load %out[%ia]",
     "the stored buffer is read in the reduce's block"),
])
def test_stash_refuses_with_the_reason(n: int, old: str, new: str, reason: str) -> None:
    k = kernel(old, new)
    before = str(k)
    with pytest.raises(ScheduleError, match=re.escape(reason)):
        stash(k, n)
    assert str(k) == before
