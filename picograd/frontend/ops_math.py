"""Elementwise math and activations built from the primitives (filled in by issue #4)."""

from __future__ import annotations

from picograd.frontend.ops_reduce import ReduceOps


class MathOps(ReduceOps):
    __slots__ = ()
