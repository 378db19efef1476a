"""torch CPU tensors to picograd Tensors and back.

A contiguous torch tensor is read through its numpy view (`tensor.numpy()`, no copy on the
torch side); any other layout is made contiguous first. Parameters are bound once: the
picograd Tensor made for an `nn.Parameter` is kept while the parameter's version counter
(bumped by every in-place update, the optimiser's included) stays the same.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import torch
from torch.fx.experimental.symbolic_shapes import optimization_hint

from picograd.frontend.tensor import Tensor
from picograd.torch_backend.registry import TorchUnsupported, pg_dtype


def hint(size: Any) -> int:
    """The example value of a size (an int, or a SymInt of a graph dynamo made dynamic)."""
    if isinstance(size, int):
        return size
    if not isinstance(size, torch.SymInt):
        raise TorchUnsupported("input", f"a {type(size).__name__} input")
    value = optimization_hint(size, fallback=-1)
    if value < 0:
        raise TorchUnsupported("input", f"a size without an example value ({size})")
    return value


def check_input(value: Any) -> None:
    """Raise TorchUnsupported for an input picograd cannot read: a tensor off the CPU or
    of a dtype without a numpy view, a size with no example value. Sizes (SymInts) and
    symbolic dims are fine: each call's concrete sizes pick a compiled signature."""
    if not isinstance(value, torch.Tensor):
        hint(value)
        return
    if value.device.type != "cpu":
        raise TorchUnsupported("input", f"a tensor on {value.device}")
    for size in value.shape:
        hint(size)
    pg_dtype(value.dtype, "input")


def _array(t: torch.Tensor) -> np.ndarray:
    t = t.detach()
    if not t.is_contiguous():
        t = t.contiguous()
    return t.numpy()


class Binder:
    """Makes the picograd Tensors of a graph's inputs, parameters bound once."""

    def __init__(self, device: str) -> None:
        self.device = device
        # id(parameter) -> (weak reference, version, picograd Tensor)
        self._bound: dict[int, tuple[weakref.ref[Any], int, Tensor]] = {}

    def __call__(self, values: list[Any]) -> list[Any]:
        """Each input as picograd reads it: a tensor as a Tensor, a size as an int."""
        out: list[Any] = []
        seen: set[int] = set()
        for value in values:
            if not isinstance(value, torch.Tensor):
                out.append(int(value))
                continue
            tensor = self._tensor(value) if id(value) not in seen else self._fresh(value)
            seen.add(id(value))  # a tied parameter passed twice gets two nodes (jit rule)
            out.append(tensor)
        return out

    def _fresh(self, value: torch.Tensor) -> Tensor:
        return Tensor(_array(value), dtype=pg_dtype(value.dtype, "input"), device=self.device)

    def _tensor(self, value: torch.Tensor) -> Tensor:
        if not isinstance(value, torch.nn.Parameter):
            return self._fresh(value)
        entry = self._bound.get(id(value))
        if entry is not None and entry[0]() is value and entry[1] == value._version:
            return entry[2]
        tensor = self._fresh(value)
        self._bound[id(value)] = (weakref.ref(value), value._version, tensor)
        return tensor


def to_torch(value: Tensor) -> torch.Tensor:
    """A picograd Tensor's value as a torch tensor (sharing the array numpy() returns)."""
    array = value.numpy()
    if not array.flags.writeable or not array.flags.c_contiguous:
        array = np.array(array)
    return torch.from_numpy(array)
