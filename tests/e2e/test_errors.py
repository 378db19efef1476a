"""User errors: typed, raised at the op call, naming the op and shapes, ending with the
user's source line."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import picograd as pg
from picograd.errors import OutOfMemoryError
from picograd.runtimes import program as program_mod
from picograd.runtimes.memory_plan import MemoryPlan


def _next_line() -> str:
    """`file:line` of the line after the caller's."""
    frame = inspect.currentframe().f_back  # type: ignore[union-attr]
    return f"{frame.f_code.co_filename}:{frame.f_lineno + 1}"  # type: ignore[union-attr]


def test_errors_are_picograd_errors() -> None:
    for cls in (pg.ShapeError, pg.DTypeError, pg.DeviceError, pg.IndexRangeError,
                pg.ZeroDivisorError, pg.OutOfMemoryError, pg.JitError, pg.OptimizerError,
                pg.CheckpointError):
        assert issubclass(cls, pg.PicogradError)
    # and what a Python user would catch, as torch's errors are
    assert issubclass(pg.IndexRangeError, IndexError)
    assert issubclass(pg.ZeroDivisorError, ZeroDivisionError)
    assert issubclass(pg.OutOfMemoryError, MemoryError)
    assert issubclass(pg.OptimizerError, ValueError) and issubclass(pg.CheckpointError,
                                                                    ValueError)


def test_broadcast_mismatch_names_op_shapes_and_line() -> None:
    a, b = pg.Tensor(np.zeros((2, 3))), pg.Tensor(np.zeros((4,)))
    with pytest.raises(pg.ShapeError) as info:
        where = _next_line()
        a + b
    message = str(info.value)
    assert "add" in message and "(2, 3)" in message and "(4,)" in message
    assert message.endswith(where)


@pytest.mark.parametrize("make,op,shapes", [
    (lambda: pg.Tensor.zeros(2, 3) @ pg.Tensor.zeros(4, 5), "matmul", ("(2, 3)", "(4, 5)")),
    (lambda: pg.Tensor.zeros(2, 3, 4) @ pg.Tensor.zeros(5, 4, 2), "matmul",
     ("(2, 3, 4)", "(5, 4, 2)")),
    (lambda: pg.Tensor.zeros(2, 3).reshape(4, 2), "reshape", ("(2, 3)", "(4, 2)")),
    (lambda: pg.Tensor.zeros(2, 3).reshape(-1, 4), "reshape", ("(2, 3)", "(-1, 4)")),
    (lambda: pg.Tensor.zeros(2, 3).permute(0, 0), "permute", ("(0, 0)", "(2, 3)")),
    (lambda: pg.Tensor.zeros(2, 3).permute(1, 0, 2), "permute", ("(1, 0, 2)", "(2, 3)")),
    (lambda: pg.Tensor.zeros(2, 3).expand(4, 3, 5), "expand", ("(2, 3)", "(4, 3, 5)")),
    (lambda: pg.Tensor.zeros(2, 3).sum(axis=2), "sum", ("(2, 3)",)),
    (lambda: pg.Tensor.zeros(2, 3).max(axis=(0, -2)), "max", ("(2, 3)",)),
    (lambda: pg.Tensor.zeros(2, 3).pad(((1, 1),)), "pad", ("(2, 3)",)),
    (lambda: pg.Tensor.zeros(2, 3).pad(((1, 1), (-1, 0))), "pad", ("(2, 3)",)),
    (lambda: pg.Tensor.zeros(2, 3).flip(3), "flip", ("(2, 3)",)),
    (lambda: pg.Tensor.zeros(2, 3)[2], "getitem", ("(2, 3)",)),
    (lambda: pg.Tensor.zeros(2, 3)[0, 0, 0], "getitem", ("(2, 3)",)),
    (lambda: pg.Tensor.zeros(2, 3)[0.5], "getitem", ()),
    (lambda: pg.where(pg.Tensor.zeros(2, 3) > 0, pg.Tensor.zeros(4), 1.0), "where", ()),
    (lambda: pg.Tensor.zeros(2, 3).item(), "item", ("(2, 3)",)),
], ids=["matmul", "matmul-batch", "reshape", "reshape-infer", "permute-dup", "permute-rank",
        "expand", "sum-axis", "max-repeated-axis", "pad-rank", "pad-negative", "flip-axis",
        "index-range", "index-count", "index-type", "where", "item"])
def test_shape_errors(make, op: str, shapes: tuple[str, ...]) -> None:
    with pytest.raises(pg.ShapeError) as info:
        make()
    message = str(info.value)
    assert message.startswith(op + ":"), message
    for s in shapes:
        assert s in message, (s, message)
    # the user's line is this file's lambda, not a picograd frame
    assert re.search(re.escape(__file__) + r":\d+$", message), message


def test_error_is_raised_at_the_op_not_at_realize() -> None:
    a = pg.Tensor.zeros(2, 3) * 2  # pending
    with pytest.raises(pg.ShapeError):
        a.reshape(7)
    assert a.numpy().shape == (2, 3)  # the tensor is still usable


def test_unknown_dtype_lists_the_valid_ones() -> None:
    with pytest.raises(pg.DTypeError, match=r"float32.*int32.*bool"):
        pg.Tensor([1, 2], dtype="complex128")
    with pytest.raises(pg.DTypeError, match="complex"):
        pg.Tensor(np.zeros(2, np.complex64))
    with pytest.raises(pg.DTypeError):
        pg.Tensor.zeros(2).cast(np.complex64)
    with pytest.raises(pg.DTypeError, match="mean"):
        pg.Tensor([1, 2]).mean()


def test_dtype_aliases() -> None:
    for spec in (pg.float32, "float32", np.float32, np.dtype("float32"), float):
        assert pg.Tensor([1], dtype=spec).dtype is pg.float32
    for spec in (pg.int32, "int32", np.int32, int):
        assert pg.Tensor([1], dtype=spec).dtype is pg.int32
    assert pg.Tensor([1], dtype=bool).dtype is pg.bool
    assert pg.bool.name == "bool" and pg.bool.itemsize == 1


def test_dtype_errors_on_undefined_ops() -> None:
    m = pg.Tensor([True, False])
    with pytest.raises(pg.DTypeError, match="sub") as info:
        where = _next_line()
        m - m
    assert str(info.value).endswith(where)
    with pytest.raises(pg.DTypeError, match="neg"):
        _ = -m
    with pytest.raises(pg.DTypeError):
        pg.Tensor([1.0]) + "x"  # type: ignore[operator]


def test_unknown_device() -> None:
    with pytest.raises(pg.DeviceError, match="TPU") as info:
        where = _next_line()
        pg.Tensor([1.0], device="TPU")
    assert "CPU:LLVM" in str(info.value) and str(info.value).endswith(where)
    with pytest.raises(pg.DeviceError):
        pg.Tensor.zeros(2, device="CPU:WASM")


def test_mixing_devices() -> None:
    with pytest.raises(pg.DeviceError, match=r"CPU:LLVM.*CPU:C|CPU:C.*CPU:LLVM"):
        pg.Tensor([1.0], device="CPU:LLVM") + pg.Tensor([1.0], device="CPU:C")


def test_cpu_follows_the_renderer_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_CPU_RENDERER", "c")
    assert pg.Tensor([1.0], device="cpu").device == "CPU:C"
    monkeypatch.setenv("PG_CPU_RENDERER", "llvm")
    assert pg.Tensor([1.0]).device == "CPU:LLVM"


@pytest.mark.parametrize("device", ["CPU:LLVM", "CPU:C"])
def test_an_allocation_that_fails_is_a_typed_out_of_memory_error(
        device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy's MemoryError while a run allocates its buffers comes back as picograd's
    OutOfMemoryError (still a MemoryError), naming the sizes, at the user's line. (A real
    4 PiB tensor cannot be compiled here: the suite also takes every graph through PTX,
    whose indices are 32-bit.) Both ways a run allocates fail: the memory plan's buffers and
    the fresh result arrays of a run without intermediates (`Program._run_lean`)."""

    def refuse(*args: object) -> None:
        raise MemoryError("Unable to allocate")

    monkeypatch.setattr(MemoryPlan, "host_buffers", refuse)
    monkeypatch.setattr(program_mod, "_empty", refuse)
    with pytest.raises(OutOfMemoryError, match=r"out of memory: a realize needs 1 buffer of "
                                               r"4,000 bytes") as e:
        line = _next_line()
        (pg.Tensor.ones(1000, device=device) * 2).realize()
    assert line in str(e.value)
    assert issubclass(OutOfMemoryError, MemoryError) and issubclass(OutOfMemoryError,
                                                                   pg.PicogradError)
