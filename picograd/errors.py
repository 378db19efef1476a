"""picograd's user-facing errors: every one is a `PicogradError`.

    PicogradError
      ShapeError       shapes that do not fit an op (broadcast, matmul, reshape, axes, index)
      IndexRangeError  an index tensor's value outside the dim it indexes (also an IndexError)
      DTypeError       an unknown dtype, or an op that is not defined on a dtype
      ZeroDivisorError an integer `//` or `%` by zero (also a ZeroDivisionError)
      DeviceError      unknown device / renderer, bad buffers handed to a compiled program,
                       a tensor too large for a target's 32-bit index (PTX, WGSL)
        OutOfMemoryError  a tensor or buffer larger than the device's memory or limits
        CompileError   a device compiler rejected the generated source
      JitError         a `picograd.jit` function called with arguments its capture cannot take
      OptimizerError   an optimiser given no parameters or a hyper-parameter out of range
                       (also a ValueError)
      ThreadCountError `set_num_threads` given something other than a positive int (also a
                       ValueError)
      CheckpointError  a file that is not a readable safetensors file or a checkpoint that does
                       not fit the model / optimizer (also a ValueError); names file and entry

The frontend raises ShapeError and DTypeError at the op call (not at realize), and ends
their message with the user's source line (`\n  at file.py:12`); `user_location()` finds
it for layers below the frontend.
"""

from __future__ import annotations

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_location() -> str:
    """`file:line` of the innermost stack frame outside the picograd package: the user's
    line that an error points at."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


class PicogradError(Exception):
    """Root of every error picograd raises for a user mistake or a failed compilation."""


class ShapeError(PicogradError, ValueError):
    """Shapes (or axes, or an index) that an op cannot take; names the op and the shapes."""


class IndexRangeError(PicogradError, IndexError):
    """An index tensor holds a value outside the dim it indexes (torch's IndexError); names the
    op, the dim's size and the values found."""


class DTypeError(PicogradError, TypeError):
    """An unknown dtype, or an op that is not defined on the given dtype(s)."""


class DeviceError(PicogradError):
    """A device cannot be found, or cannot do what was asked of it."""


class OutOfMemoryError(DeviceError, MemoryError):
    """A device could not allocate the buffers a realize needs (also a MemoryError, as
    numpy's and torch's are)."""


class ZeroDivisorError(PicogradError, ZeroDivisionError):
    """An integer division or remainder by zero (torch raises "ZeroDivisionError"; a float
    division gives inf or NaN instead)."""


class CompileError(DeviceError):
    """A device compiler failed; carries its message and where the source was written."""

    def __init__(self, message: str, *, log: str = "", source_path: str | None = None):
        details = [message]
        if source_path is not None:
            details.append(f"source: {source_path}")
        if log:
            details.append(log.rstrip())
        super().__init__("\n".join(details))
        self.log = log
        self.source_path = source_path


class JitError(PicogradError):
    """A `picograd.jit` call that cannot capture or replay: arguments that differ from the
    capture (shape, dtype, device), arguments that alias, nothing captured, nested jits."""


class OptimizerError(PicogradError, ValueError):
    """An optimiser built with arguments torch refuses too: no parameters, a
    hyper-parameter of the wrong type or out of its range (a negative lr, betas outside
    [0, 1), Nesterov without momentum)."""


class ThreadCountError(PicogradError, ValueError):
    """`picograd.set_num_threads` given something other than a positive int (torch refuses
    0 and negative counts too)."""


class CheckpointError(PicogradError, ValueError):
    """A file that is not a (matching) safetensors file or picograd checkpoint: not a regular
    file, a broken layout, a dtype with no float32 reading, or entries and metadata (optimizer
    hyper-parameters, steps, state, extra values) that do not fit; names the file and entry.
    `picograd.nn.state` re-exports it. (Missing or mis-shaped tensors are `StateDictError`.)"""
