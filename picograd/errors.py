"""picograd's user-facing errors: every one is a `PicogradError`.

    PicogradError
      ShapeError       shapes that do not fit an op (broadcast, matmul, reshape, axes, index);
                       also a RuntimeError and a ValueError
        DimRangeError  a dim or int index out of range, too many indices (also an IndexError)
        ArgumentTypeError  an argument of the wrong Python type (also a TypeError)
      IndexRangeError  an index tensor's value outside the dim it indexes (also an IndexError
                       and a RuntimeError)
      DTypeError       an unknown dtype, or an op that is not defined on a dtype (also a
                       TypeError and a RuntimeError)
      ZeroDivisorError an integer `//` or `%` by zero (also a ZeroDivisionError and a
                       RuntimeError)
      DeviceError      unknown device / renderer, bad buffers handed to a compiled program,
                       a tensor too large for a target's 32-bit index (PTX, WGSL)
        OutOfMemoryError  a tensor or buffer larger than the device's memory or limits
        CompileError   a device compiler rejected the generated source
      JitError         a `picograd.jit` function called with arguments its capture cannot take
      OptimizerError   an optimiser given no parameters or a hyper-parameter out of range
                       (also a ValueError)
      NonFiniteNormError  clip_grad_norm_ found a NaN or infinite total norm (also a
                       RuntimeError)
      ThreadCountError `set_num_threads` given something other than a positive int (also a
                       ValueError)
      CheckpointError  a file that is not a readable safetensors file or a checkpoint that does
                       not fit the model / optimizer (also a ValueError); names file and entry

Each class is also the built-in class torch raises for the same mistake, so code written for
torch (`except RuntimeError:`, `pytest.raises(IndexError)`) catches picograd's errors; the
table of mistakes in tests/e2e/test_errors_as_torch.py checks it against torch.

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


class ShapeError(PicogradError, RuntimeError, ValueError):
    """Shapes (or axes, or an index) that an op cannot take; names the op and the shapes.
    Also a RuntimeError (what torch raises for shapes that do not fit) and a ValueError (what
    torch.nn.functional raises for arguments out of range, and what picograd raised first)."""


class DimRangeError(ShapeError, IndexError):
    """A dim (axis) outside a tensor's dims, or an int index outside a dim's size, or more
    indices than dims: torch's IndexError ("Dimension out of range", "index 5 is out of bounds
    for dimension 0")."""


class ArgumentTypeError(ShapeError, TypeError):
    """An argument of the wrong Python type (a list where a Tensor is expected): torch's
    TypeError."""


class UnimplementedCaseError(ShapeError, NotImplementedError):
    """An input rank, mode or option combination that torch does not implement either:
    torch's NotImplementedError ("Got 3D input, but bilinear mode needs 4D input"),
    e.g. `interpolate` of a 3-D input in bilinear mode or `embedding_bag`'s
    per_sample_weights with mode 'max'."""


class IndexRangeError(PicogradError, IndexError, RuntimeError):
    """An index tensor holds a value outside the dim it indexes (torch's IndexError); names the
    op, the dim's size and the values found. Also a RuntimeError: torch's gather and scatter
    raise that for the same mistake, its index_select and embedding an IndexError."""


class DTypeError(PicogradError, TypeError, RuntimeError):
    """An unknown dtype, or an op that is not defined on the given dtype(s). Also a TypeError
    (torch's for a dtype argument that is not a dtype) and a RuntimeError (torch's for an op
    given a tensor of the wrong dtype: "mean(): could not infer output dtype")."""


class UnimplementedDTypeError(DTypeError, NotImplementedError):
    """An op that torch does not implement for the given dtype: torch's
    NotImplementedError ("grid_sampler_2d_cpu" not implemented for 'Int'), e.g.
    `grid_sample` of integers or `ctc_loss` of float16."""


class DeviceError(PicogradError):
    """A device cannot be found, or cannot do what was asked of it."""


class OutOfMemoryError(DeviceError, MemoryError):
    """A device could not allocate the buffers a realize needs (also a MemoryError, as
    numpy's and torch's are)."""


class ZeroDivisorError(PicogradError, ZeroDivisionError, RuntimeError):
    """An integer division or remainder by zero (torch raises "ZeroDivisionError"; a float
    division gives inf or NaN instead). Also the RuntimeError torch's message comes in."""


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


class NonFiniteNormError(PicogradError, RuntimeError):
    """`clip_grad_norm_(..., error_if_nonfinite=True)` found a total gradient norm that is
    NaN or infinite (torch's RuntimeError)."""


class ThreadCountError(PicogradError, ValueError):
    """`picograd.set_num_threads` given something other than a positive int (torch refuses
    0 and negative counts too)."""


class CheckpointError(PicogradError, ValueError):
    """A file that is not a (matching) safetensors file or picograd checkpoint: not a regular
    file, a broken layout, a dtype with no float32 reading, or entries and metadata (optimizer
    hyper-parameters, steps, state, extra values) that do not fit; names the file and entry.
    `picograd.nn.state` re-exports it. (Missing or mis-shaped tensors are `StateDictError`.)"""
