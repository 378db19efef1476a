"""`forked`: a child's result, its error, and a child that dies before it sends anything."""

from __future__ import annotations

import os

import pytest

from picograd.runtimes import forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def test_a_child_sends_its_result() -> None:
    outcome = forked.collect(*forked.start(lambda: b"object code" * 1000))
    assert outcome == forked.Outcome(True, b"object code" * 1000)


def test_a_child_sends_the_error_it_raised() -> None:
    def fail() -> bytes:
        raise ValueError("no such kernel")

    assert forked.collect(*forked.start(fail)) == forked.Outcome(False,
                                                                 b"ValueError: no such kernel")


def test_a_child_that_dies_leaves_no_result() -> None:
    def die() -> bytes:
        os._exit(3)

    assert forked.collect(*forked.start(die)) == forked.Outcome(False, b"")
