"""Statistics and scans built from the reduce primitives (filled in by issue #4)."""

from __future__ import annotations

from picograd.frontend.ops_reduce import ReduceOps


class StatsOps(ReduceOps):
    __slots__ = ()
