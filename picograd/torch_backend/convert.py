"""torch CPU tensors to picograd Tensors and back, without copies where they can be shared.

In: a contiguous torch tensor is picograd's leaf as it is: the leaf's array is the tensor's
numpy view (`tensor.numpy()`), so picograd reads torch's memory; any other layout is made
contiguous first (one copy). This is sound because picograd never writes a leaf's array
and a call computes everything it reads from its inputs before it returns to torch.
Parameters are bound once: the picograd Tensor made for an `nn.Parameter` is kept while the
parameter's version counter (bumped by every in-place update, the optimiser's included)
stays the same; a new binding is a new numpy view, so nothing picograd keeps per array
(a weight's kept layout copy) outlives an update.

Out: a result is handed to torch as the array picograd computed it in (`torch.from_numpy`)
when that memory is the result's alone: a C-contiguous, writeable array of a dtype torch
reads, whose bytes overlap no input of the call and no result handed out before it in the
same call (`Handout`). A result that shares memory (a view of an input, one buffer given
for two results) is copied, so that an in-place op in torch on one never changes another.
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
        array, dtype = _array(value), pg_dtype(value.dtype, "input")
        if array.dtype == dtype.np:  # the leaf reads torch's memory (module docstring)
            return Tensor._leaf(array, dtype, self.device)
        return Tensor(array, dtype=dtype, device=self.device)

    def _tensor(self, value: torch.Tensor) -> Tensor:
        if not isinstance(value, torch.nn.Parameter):
            return self._fresh(value)
        entry = self._bound.get(id(value))
        if entry is not None and entry[0]() is value and entry[1] == value._version:
            return entry[2]
        tensor = self._fresh(value)
        self._bound[id(value)] = (weakref.ref(value), value._version, tensor)
        return tensor


# numpy dtypes `torch.from_numpy` shares as they are
_SHARED_DTYPES = frozenset(np.dtype(t) for t in (
    np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
    np.bool_))


def _storage_span(t: torch.Tensor) -> tuple[int, int]:
    storage = t.untyped_storage()
    return (storage.data_ptr(), storage.data_ptr() + storage.nbytes())


class Handout:
    """Hands one call's results to torch (module docstring, "Out"): shared where their
    memory is theirs alone, else copied."""

    def __init__(self, inputs: list[Any]) -> None:
        # byte ranges no result may share: the inputs' storages, then the results so far
        self.taken = [_storage_span(t) for t in inputs if isinstance(t, torch.Tensor)]

    def __call__(self, value: Tensor) -> torch.Tensor:
        array = value._data()
        start = array.__array_interface__["data"][0]
        end = start + array.nbytes
        alone = (array.flags.c_contiguous and array.flags.writeable
                 and array.dtype in _SHARED_DTYPES
                 and not any(start < e and s < end for s, e in self.taken))
        if not alone:
            array = np.array(array, order="C")
            start = array.__array_interface__["data"][0]
            end = start + array.nbytes
        self.taken.append((start, end))
        return torch.from_numpy(array)

