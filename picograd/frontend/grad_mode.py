"""Grad mode and the record autograd keeps per tensor, for every op mixin.

    with no_grad(): ...     build graphs that record nothing (optimiser updates, eval)
    is_grad_enabled()       whether new tensors record how they were made
    Context(op, arg, src)   how a tensor was made (`TensorBase._make` records it)

The backward rules that read the records are in `picograd.frontend.autograd`; this module
holds what the op mixins need, so that they do not import the rules (which use `Tensor`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from picograd.errors import PicogradError


class AutogradError(PicogradError, RuntimeError):
    """A backward that cannot run: nothing requires grad, or a non-scalar without a gradient."""


# The grad mode of each open `no_grad` / `enable_grad` block, innermost last (read inline
# by `TensorBase._make`, which runs for every node built).
GRAD_MODES = [True]


def is_grad_enabled() -> bool:
    return GRAD_MODES[-1]


@contextlib.contextmanager
def _grad_mode(enabled: bool) -> Iterator[None]:
    GRAD_MODES.append(enabled)
    try:
        yield
    finally:
        GRAD_MODES.pop()


def no_grad() -> contextlib.AbstractContextManager[None]:
    """A context in which new tensors record no graph (as `torch.no_grad`)."""
    return _grad_mode(False)


def enable_grad() -> contextlib.AbstractContextManager[None]:
    return _grad_mode(True)


@dataclass(frozen=True, slots=True)
class Context:
    """How a tensor was made: primitive `op` with parameter `arg` over `src`."""

    op: str
    arg: Any
    src: tuple[Any, ...]  # the source tensors (Tensors: typed loosely to avoid a circle)
