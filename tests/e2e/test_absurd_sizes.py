"""Absurd sizes are typed errors at the user's line, before anything runs (issue 11).

A creation op whose tensor would not fit its device's memory is an OutOfMemoryError naming
the shape, dtype, bytes and the device's memory (torch fails at the allocation; picograd's
lazy constants would compute for hours). Views stay lazy. A tensor too large for a target's
32-bit index (PTX, WGSL) is a DeviceError when its graph is compiled for that target; a
WebGPU buffer beyond the adapter's limits is an OutOfMemoryError before wgpu is asked.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
from picograd.compiler import driver
from picograd.errors import DeviceError, OutOfMemoryError
from picograd.runtimes import registry
from picograd.runtimes.base import host_memory
from picograd.runtimes.cpu_llvm import CpuLlvmRuntime

HUGE = 2 ** 40


def _next_line() -> str:
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return f"{frame.f_back.f_code.co_filename}:{frame.f_back.f_lineno + 1}"


def _memory() -> str:
    memory = host_memory()
    assert memory is not None and memory < HUGE  # the sizes below are absurd here
    return f"{memory:,}"


CREATIONS = {  # in creation.py and random.py
    "rand": lambda: pg.Tensor.rand(HUGE),
    "randn": lambda: pg.Tensor.randn(2 ** 20, 2 ** 20),
    "linspace": lambda: pg.Tensor.linspace(0, 1, HUGE),
    "randint": lambda: pg.Tensor.randint(0, 10, (HUGE,)),
    "uniform": lambda: pg.Tensor.uniform(HUGE, low=-1.0, high=1.0),
    "normal": lambda: pg.Tensor.normal(HUGE),
}
FILLS = {  # in tensor.py (Tensor._filled, arange, eye)
    "ones": lambda: pg.Tensor.ones(HUGE),
    "zeros": lambda: pg.Tensor.zeros(2 ** 20, 2 ** 20),
    "full": lambda: pg.Tensor.full((HUGE,), 7, dtype="int8"),
    "empty": lambda: pg.Tensor.empty(HUGE),
    "full_like": lambda: pg.Tensor.ones(1).expand(HUGE).full_like(2.0),
    "arange": lambda: pg.Tensor.arange(HUGE),
    "eye": lambda: pg.Tensor.eye(2 ** 20),
}


def _expect_out_of_memory(op: str, make: Callable[[], object]) -> None:
    with pytest.raises(OutOfMemoryError) as e:
        make()
    message = str(e.value)
    assert message.startswith(f"{op}: out of memory: a tensor of shape (")
    assert f"more than device CPU:LLVM's {_memory()} bytes of memory" in message
    assert message.endswith(f"at {__file__}:{make.__code__.co_firstlineno}")  # the lambda
    assert isinstance(e.value, MemoryError) and isinstance(e.value, pg.PicogradError)


@pytest.mark.parametrize("op", CREATIONS)
def test_a_random_or_spaced_tensor_larger_than_memory_is_an_out_of_memory_error(op: str) -> None:
    _expect_out_of_memory(op, CREATIONS[op])


@pytest.mark.parametrize("op", FILLS)
def test_a_filled_tensor_larger_than_memory_is_an_out_of_memory_error(op: str) -> None:
    """`ones(2**40).sum()` used to compute for hours (nothing is allocated: the constant
    is lazy); arange and eye were numpy's untyped MemoryError."""
    _expect_out_of_memory(op, FILLS[op])


def test_the_message_names_the_shape_dtype_and_bytes() -> None:
    with pytest.raises(OutOfMemoryError, match=r"rand: out of memory: a tensor of shape "
                                               r"\(1048576, 1048576\) and dtype float32 needs "
                                               r"4,398,046,511,104 bytes, more than device "
                                               r"CPU:LLVM's"):
        pg.Tensor.rand(2 ** 20, 2 ** 20)


def test_views_stay_lazy_and_tensors_that_fit_are_made() -> None:
    """expand allocates nothing (as torch's views): only creation checks memory."""
    view = pg.Tensor.ones(1).expand(HUGE)
    assert view.shape == (HUGE,)
    assert pg.Tensor.rand(4, 5).shape == (4, 5)
    np.testing.assert_array_equal(pg.Tensor.linspace(0, 1, 3).numpy(), [0.0, 0.5, 1.0])


# ── 32-bit indices: PTX (and WGSL) ───────────────────────────────────────────


class _PtxOnly(CpuLlvmRuntime):
    """A CUDA runtime that compiles nothing: the index check comes before the pipeline."""

    device, renderer = "CUDA", "ptx"

    def compile(self, source: str) -> Any:
        raise AssertionError("the graph should have been refused before this")


def _unwrap_ptxas_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """conftest wraps `driver._compile` to take every graph through ptxas; its frame would be
    the first outside picograd. Use the driver's own, as a user's program does."""
    cells = driver._compile.__closure__ or ()
    inner = [c.cell_contents for c in cells
             if getattr(c.cell_contents, "__qualname__", "") == "_compile"]
    if inner:
        monkeypatch.setattr(driver, "_compile", inner[0])


@pytest.mark.parametrize("make", [
    lambda: pg.Tensor.ones(2 ** 31, device="CUDA").sum(),
    lambda: (pg.Tensor.ones(2 ** 16, device="CUDA")[:, None]
             * pg.Tensor.ones(2 ** 16, device="CUDA")).max(),
])
def test_a_tensor_beyond_ptx_32_bit_index_is_a_device_error(
        make: Callable[[], pg.Tensor], monkeypatch: pytest.MonkeyPatch) -> None:
    """It used to be xDSL's PassFailedException from the PTX lowering for some graphs, and
    for others PTX whose 32-bit element index wraps (memory before the buffer written)."""
    monkeypatch.setitem(registry._INSTANCES, "CUDA", _PtxOnly())
    _unwrap_ptxas_check(monkeypatch)
    tensor = make()
    with pytest.raises(DeviceError, match=r"device CUDA indexes tensors with 32-bit integers "
                                          r"\(ptx\): a tensor of shape \(.*\) has "
                                          r"(2,147,483,648|4,294,967,296) elements, more than "
                                          r"the 2,147,483,647 it can index") as e:
        line = _next_line()
        tensor.realize()
    assert str(e.value).endswith(f"at {line}")


def test_a_tensor_within_the_index_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry._INSTANCES, "CUDA", _PtxOnly())
    with pytest.raises(AssertionError, match="refused before this"):  # reached compile
        pg.Tensor.ones(2 ** 31 - 1, device="CUDA").sum().realize()


# ── WebGPU buffers beyond the adapter's limits ───────────────────────────────


def test_a_webgpu_buffer_beyond_the_adapters_limits_is_an_out_of_memory_error() -> None:
    """Before, a buffer over max-storage-buffer-binding-size (128 MiB on llvmpipe) reached
    wgpu and failed at the launch with its raw GPUValidationError."""
    try:
        runtime = registry.get_device("WEBGPU")
    except (pg.PicogradError, ImportError, OSError) as e:
        pytest.skip(f"device WEBGPU is not available: {e}")
    limit, name = runtime.buffer_limit()  # pyright: ignore[reportAttributeAccessIssue]
    n = limit // 4 + 1
    with pytest.raises(OutOfMemoryError, match=rf"WEBGPU: out of memory: a buffer of {n:,} x "
                                               rf"float32 \({4 * n:,} bytes: 4 per element\) "
                                               rf"exceeds the adapter's {name} of {limit:,}") as e:
        line = _next_line()
        pg.Tensor.ones(n, device="WEBGPU").contiguous().realize()
    assert str(e.value).endswith(f"at {line}")
