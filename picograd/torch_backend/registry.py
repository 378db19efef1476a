"""The table of translated ATen ops: `ATEN[overload] = fn(*args, **kwargs) -> value`.

Each op family module registers its translations with `@aten(torch.ops.aten.x.overload,
...)`. A translation receives the FX node's arguments with every node replaced by its
value (a picograd `Tensor`, or a tuple of them for multi-output ops) and the rest as FX
holds them (ints, floats, lists, torch dtypes); it returns a Tensor or a tuple. An
argument it cannot express exactly is a `TorchUnsupported` naming the op (the graph then
runs in torch), never an approximate answer. A translation registered with `@aten_node`
gets the FX node first, to read torch's records of its arguments' layouts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import picograd as pg
from picograd.errors import PicogradError
from picograd.frontend.tensor import Tensor

Translation = Callable[..., Any]
ATEN: dict[Any, Translation] = {}


class TorchUnsupported(PicogradError, NotImplementedError):
    """An ATen op (or an argument of it) that picograd cannot express exactly: the graph
    that holds it runs in torch."""

    def __init__(self, op: str, why: str = "no translation"):
        super().__init__(f"{op}: {why}")
        self.op, self.why = op, why


# translations that take the FX node first: what torch's layout of an argument is (its
# strides and storage offset, in the node's records) decides their result, and a picograd
# value is only its elements in order
TAKES_NODE: set[Any] = set()


def aten(*overloads: Any) -> Callable[[Translation], Translation]:
    """Register `fn` as the translation of the ATen `overloads`."""
    def register(fn: Translation) -> Translation:
        for overload in overloads:
            ATEN[overload] = fn
        return fn
    return register


def aten_node(*overloads: Any) -> Callable[[Translation], Translation]:
    """Register `fn(node, *args, **kwargs)` as the translation of the ATen `overloads`."""
    def register(fn: Translation) -> Translation:
        TAKES_NODE.update(overloads)
        return aten(*overloads)(fn)
    return register


DTYPES: dict[torch.dtype, Any] = {
    torch.float32: pg.float32, torch.float64: pg.float64, torch.float16: pg.float16,
    torch.int8: pg.int8, torch.uint8: pg.uint8, torch.int16: pg.int16,
    torch.int32: pg.int32, torch.int64: pg.int64, torch.bool: pg.bool,
}


def pg_dtype(dtype: torch.dtype | None, op: str, default: Any = None) -> Any:
    """picograd's dtype for torch's `dtype` (None: `default`); bfloat16 and the complex
    types have no numpy view, so a graph that uses them runs in torch."""
    if dtype is None:
        return default
    found = DTYPES.get(dtype)
    if found is None:
        raise TorchUnsupported(op, f"dtype {dtype}")
    return found


def op_name(overload: Any) -> str:
    """`aten.add.Tensor` for an overload, the function's name for anything else."""
    return str(overload) if isinstance(overload, torch._ops.OpOverload) else getattr(
        overload, "__name__", repr(overload))


def check_placement(op: str, layout: Any, device: Any, pin_memory: Any) -> None:
    """TorchUnsupported for a tensor-making op's placement that picograd does not make: a
    layout other than strided, pinned memory, a device other than the CPU."""
    if layout not in (None, torch.strided) or pin_memory:
        raise TorchUnsupported(op, f"layout {layout}, pin_memory {pin_memory}")
    if device is not None and torch.device(device).type != "cpu":
        raise TorchUnsupported(op, f"device {device}")


def like(x: Tensor, value: Any) -> Tensor:
    """`value` (a Tensor or a python scalar) as a Tensor on x's device."""
    return value if isinstance(value, Tensor) else Tensor.full((), value, device=x.device)


def int_index(values: np.ndarray, device: str) -> Tensor:
    """Host-computed positions as an int32 index tensor on `device`."""
    return Tensor(np.ascontiguousarray(values, dtype=np.int32), dtype=pg.int32, device=device)
