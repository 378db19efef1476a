"""Shape and indexing ops built from the movement primitives (filled in by issue #4)."""

from __future__ import annotations

from picograd.frontend.ops_reduce import ReduceOps


class ShapeOps(ReduceOps):
    __slots__ = ()
