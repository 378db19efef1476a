"""`gc_paused`: the collector is off inside the block and restored after it; a block that
only builds graph nodes (`promote=True`) leaves what it made in the oldest generation,
unless a plain block (a realize, whose compiles make cyclic garbage) ran inside it."""

from __future__ import annotations

import gc
import weakref

import pytest

from picograd.frontend.gc_pause import gc_paused


class _Node:
    """A tracked object that can hold a reference cycle."""

    def __init__(self) -> None:
        self.other: object = None


def _in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation))


@pytest.fixture(autouse=True)
def _collector_on():
    was_on = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was_on else gc.disable)()


def test_a_promoting_block_leaves_its_objects_in_the_oldest_generation() -> None:
    with gc_paused(promote=True):
        assert not gc.isenabled()
        node = _Node()
    assert gc.isenabled()
    assert _in_generation(node, 2) and not _in_generation(node, 0)


def test_a_plain_block_leaves_its_objects_young() -> None:
    with gc_paused():
        node = _Node()
    assert _in_generation(node, 0)


def test_cyclic_garbage_of_a_realize_inside_a_promoting_block_stays_young() -> None:
    with gc_paused(promote=True):
        with gc_paused():  # (what a realize enters)
            a, b = _Node(), _Node()
            a.other, b.other = b, a
            gone = weakref.ref(a)
        del a, b
    gc.collect(0)  # a young collection frees the cycle: it was not promoted
    assert gone() is None


def test_nested_blocks_restore_the_collector_as_they_found_it() -> None:
    gc.disable()
    with gc_paused(promote=True):
        node = _Node()
    assert not gc.isenabled()
    assert not _in_generation(node, 2)  # an outer pause (the user's) is left alone
