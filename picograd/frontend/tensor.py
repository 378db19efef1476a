"""`Tensor`: creation, realization and conversion on top of the op mixins.

    Tensor(data, dtype=None, device="CPU")    data: numpy array, nested list, scalar, Tensor
    Tensor.zeros/ones/full/arange/eye/rand/randn(...)
    t.realize() -> t;  t.numpy(), t.tolist(), t.item();  float(t), int(t), bool(t)

Nothing computes until a result is asked for. Creating a tensor from data copies it into a
buffer leaf; `zeros`/`ones`/`full` are lazy constants; `arange` and `eye` are filled on the
host. `rand`/`randn` are lazy too: a counter-based generator that runs on the device
(picograd/frontend/random.py), keyed by (seed, call counter), so `manual_seed(n)` makes a
program's random tensors reproducible and the same on every device. The creation functions
of torch that build on these (`linspace`, `randint`, the `_like` family, in-place fills) are
in creation.py.

Python data follows torch, with picograd's default int (dtype.py): ints are int32 unless a
value does not fit it, then int64 (`Tensor([2**31])`, `full(2, 2**31)`, `arange(2**31,
2**31 + 3)`), a DTypeError naming the value on a device without int64 (WEBGPU); converted
to an integer dtype a value must fit it (`Tensor([300], dtype=int8)` is a DTypeError),
while a numpy array is cast as numpy casts. Sizes must be non-negative ints (ShapeError),
`arange`'s bounds finite and its step non-zero, a device a known name (DeviceError).
`float(t)`, `int(t)`, `bool(t)` and `item()` take a tensor of one element.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from picograd.errors import DeviceError
from picograd.frontend import autograd, capture, random
from picograd.frontend.base import Scalar, TensorBase, size_arg
from picograd.frontend.creation import CreationOps, arange_size, check_fits_device, data_dtype
from picograd.frontend.dtype import DType, dtype_of_array, float8_array, float32, to_dtype
from picograd.frontend.grad_mode import AutogradError
from picograd.frontend.lazy import LazyOp, dtype_error, shape_error, user_location
from picograd.frontend.ops_activation import ActivationOps
from picograd.frontend.ops_math import MathOps
from picograd.frontend.ops_matrix import MatrixOps
from picograd.frontend.ops_norm import NormOps
from picograd.frontend.ops_shape import ShapeOps
from picograd.frontend.ops_shape_extra import ShapeExtraOps
from picograd.frontend.ops_special import SpecialOps
from picograd.frontend.ops_stats import StatsOps
from picograd.frontend.ops_window import WindowOps
from picograd.frontend.realize import realize
from picograd.runtimes.registry import canonical_device_name


def _device(device: object) -> str:
    try:
        return canonical_device_name(device)
    except DeviceError as e:
        raise DeviceError(f"{e}\n  at {user_location()}") from None


def _python_array(data: Any) -> np.ndarray:
    """numpy's array of python data (a scalar or nested lists)."""
    try:
        array = np.array(data)
    except ValueError as e:  # ragged nested lists
        raise shape_error("Tensor", f"cannot make a tensor of {type(data).__name__}: {e}"
                          ) from None
    if array.dtype.kind == "O":  # ints beyond 64 bits: numpy keeps them, with floats too
        values = array.reshape(-1).tolist()
        if all(isinstance(v, int | float) for v in values) and any(
                isinstance(v, float) for v in values):
            return array.astype(np.float64)
    return array


def _to_array(data: Any, dtype: DType | None, device: str) -> tuple[np.ndarray, DType]:
    """A fresh C-contiguous array of `data`, and its DType: a numpy array keeps its dtype
    (see dtype.py) or is cast to `dtype` as numpy casts (as
    torch.tensor(array, dtype=...)); python data takes the defaults and must fit `dtype`
    (`data_dtype`), and so does a numpy scalar given a dtype (as in torch)."""
    if isinstance(data, np.generic) and dtype is not None:
        data = data.item()
    if isinstance(data, np.ndarray | np.generic):
        array = np.asarray(data)
        dt = dtype if dtype is not None else dtype_of_array(array)
        if dt.storage_only and array.dtype != dt.np:  # rounded and saturated as torch's
            return float8_array(array, dt), dt
        return np.array(array, dtype=dt.np, order="C", copy=True), dt
    if not isinstance(data, bool | int | float | list | tuple):
        raise shape_error("Tensor", f"cannot make a tensor of {type(data).__name__}")
    array = _python_array(data)
    if array.size == 0 and dtype is None:
        array = array.astype(np.float32)
    dt = data_dtype("Tensor", array, dtype, device)
    if dt.storage_only:
        return float8_array(array, dt), dt
    with np.errstate(over="ignore"):  # a float beyond float16 is inf, as in torch
        return np.array(array, dtype=dt.np, order="C"), dt


def _check_bound(name: str, value: Scalar) -> None:
    if isinstance(value, float | np.floating) and not math.isfinite(value):
        raise shape_error("arange", f"{name} must be finite, got {value}")


class Tensor(SpecialOps, NormOps, MatrixOps, ShapeExtraOps, CreationOps, ActivationOps, MathOps,
             WindowOps, ShapeOps, StatsOps):
    """A lazy n-dimensional array on a device. See the package docstring for the ops."""

    __slots__ = ()

    def __init__(self, data: Any, dtype: object = None, device: str | None = None,
                 requires_grad: bool = False):
        if isinstance(data, TensorBase):
            src = data.realize() if isinstance(data, Tensor) else data
            dt = to_dtype(dtype) if dtype is not None else src.dtype
            dev = _device(device) if device is not None else src.device
            array = np.array(src._node.buffer, dtype=dt.np, copy=True)
        else:
            dev = _device("CPU" if device is None else device)
            array, dt = _to_array(data, None if dtype is None else to_dtype(dtype), dev)
        self._node, self._ctx, self.grad = LazyOp.leaf(array, dt, dev), None, None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_()

    # ── creation ────────────────────────────────────────────────────────────

    @classmethod
    def _leaf(cls, array: np.ndarray, dtype: DType, device: str) -> Tensor:
        """A leaf holding `array` itself where it is C-contiguous of `dtype` (else a
        converted copy; a 0-d array stays 0-d, where `np.ascontiguousarray` gives (1,))."""
        return cls._from_node(LazyOp.leaf(np.asarray(array, dtype.np, order="C"), dtype,
                                          _device(device)))

    @classmethod
    def _filled(cls, op: str, shape: tuple[int, ...], value: Scalar, dtype: object,
                device: str) -> Tensor:
        """A lazy constant of `shape` (checked): `value`, which must fit `dtype` (when given;
        else the value's dtype, as python data)."""
        dev = _device(device)
        if not isinstance(value, bool | int | float | np.generic):
            raise dtype_error(op, f"the fill value must be a python scalar, got "
                                  f"{type(value).__name__}")
        dt = data_dtype(op, np.array(value), None if dtype is None else to_dtype(dtype), dev)
        check_fits_device(op, shape, dt, dev)
        v = float(value) if dt.is_float else bool(value) if dt.is_bool else int(value)
        return cls._from_node(LazyOp("const", (), v, shape, dt, dev))

    @classmethod
    def full(cls, shape: int | Sequence[int], value: Scalar, dtype: object = None,
             device: str = "CPU") -> Tensor:
        """A lazy constant: `shape` filled with `value` (dtype from the value if not given)."""
        return cls._filled("full", size_arg("full", (shape,)), value, dtype, device)

    @classmethod
    def zeros(cls, *shape: int | Sequence[int], dtype: object = float32,
              device: str = "CPU") -> Tensor:
        return cls._filled("zeros", size_arg("zeros", shape), 0, dtype, device)

    @classmethod
    def ones(cls, *shape: int | Sequence[int], dtype: object = float32,
             device: str = "CPU") -> Tensor:
        return cls._filled("ones", size_arg("ones", shape), 1, dtype, device)

    @classmethod
    def arange(cls, start: Scalar, stop: Scalar | None = None, step: Scalar = 1,
               dtype: object = None, device: str = "CPU") -> Tensor:
        """numpy's arange; int32 if start, stop and step are ints (int64 if one of them does
        not fit int32), else float32. The bounds must be finite and the step non-zero."""
        if stop is None:
            start, stop = 0, start
        for name, value in (("start", start), ("end", stop), ("step", step)):
            _check_bound(name, value)
        if step == 0:
            raise shape_error("arange", "step must not be zero")
        dev = _device(device)
        if dtype is not None:
            dt = to_dtype(dtype)
        elif all(isinstance(v, int) for v in (start, stop, step)):
            dt = data_dtype("arange", np.array([start, stop, step]), None, dev)
        else:
            dt = float32
        check_fits_device("arange", (arange_size(start, stop, step),), dt, dev)
        return cls._leaf(np.arange(start, stop, step).astype(dt.np), dt, dev)

    @classmethod
    def eye(cls, n: int, m: int | None = None, dtype: object = float32,
            device: str = "CPU") -> Tensor:
        """The identity matrix, n x m (n x n if `m` is None)."""
        for name, size in (("n", n), ("m", m)):
            if size is not None and (isinstance(size, bool) or not isinstance(size, int)
                                     or size < 0):
                raise shape_error("eye", f"{name} must be a non-negative int, got {size!r}")
        dt = to_dtype(dtype)
        check_fits_device("eye", (n, n if m is None else m), dt, device)
        return cls._leaf(np.eye(n, m, dtype=dt.np), dt, device)

    @classmethod
    def rand(cls, *shape: int | Sequence[int], device: str = "CPU",
             dtype: object = float32) -> Tensor:
        """Uniform samples in [0, 1), computed on the device."""
        return random.rand(cls, size_arg("rand", shape), _device(device), dtype)

    @classmethod
    def randn(cls, *shape: int | Sequence[int], device: str = "CPU",
              dtype: object = float32) -> Tensor:
        """Standard normal samples, computed on the device."""
        return random.randn(cls, size_arg("randn", shape), _device(device), dtype)

    # ── realization and conversion ─────────────────────────────────────────

    def realize(self, pipeline: str | None = None, beam: int | None = None) -> Self:
        """Compute this tensor now (compiling its graph unless a cached one fits), through
        `pipeline` when given (a pass pipeline string) and with BEAM width `beam`, as
        `picograd.realize` takes them."""
        if self._node.buffer is None or self._node.guards:
            realize(self, pipeline=pipeline, beam=beam)
        return self

    def _data(self) -> np.ndarray:
        node = self._node
        if node.buffer is None or node.guards:  # (a failed range check raises again)
            realize(self)
        assert node.buffer is not None
        return node.buffer

    def numpy(self) -> np.ndarray:
        """A new numpy array holding the tensor's values."""
        return self._data().copy()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        a = self._data().copy()
        return a if dtype is None else a.astype(dtype)

    def tolist(self) -> Any:
        return self._data().tolist()

    def _scalar(self, op: str) -> Scalar:
        """The value of a tensor of one element, as a python scalar."""
        if self.numel() != 1:
            raise shape_error(op, f"needs a tensor of one element, got shape {self.shape}")
        return self._data().reshape(-1)[0].item()

    def item(self) -> Scalar:
        return self._scalar("item")

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        """The value truncated towards zero, as `int(t.item())` (torch's `int(t)`)."""
        return int(self._scalar("int"))

    def __index__(self) -> int:
        """A tensor of one integer (or bool) element as a Python int, so `range(t)` and
        `items[t]` work as in torch; a float or multi-element tensor is a DTypeError (a
        TypeError, as torch's)."""
        if self.dtype.is_float or self.numel() != 1:
            raise dtype_error("index", f"only integer tensors of a single element can be "
                                       f"converted to an index, got {self.dtype.name} of shape "
                                       f"{self.shape}")
        return int(self._scalar("index"))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise shape_error("bool", f"the truth value of a tensor of shape {self.shape} is "
                                      "ambiguous; use .any()/.all() on numpy()")
        return bool(self.item())

    def to(self, device: str) -> Tensor:
        """This tensor's values on `device` (a copy; realizes this tensor)."""
        dev = _device(device)
        if dev == self.device:
            return self
        return Tensor._leaf(self._data(), self.dtype, dev)

    def assign(self, value: Tensor) -> Self:
        """Write `value` (same shape, dtype, device; realized now) into this tensor in
        place: its node keeps its identity and takes value's buffer, so every tensor sharing
        the node sees it, and `picograd.jit` replays the write."""
        node = self._node
        if not isinstance(value, Tensor) or value.shape != node.shape:
            got = value.shape if isinstance(value, Tensor) else type(value).__name__
            raise shape_error("assign", f"needs a tensor of shape {node.shape}, got {got}")
        if value.dtype != node.dtype:
            raise dtype_error("assign", f"needs a {node.dtype.name} tensor, got "
                                        f"{value.dtype.name}")
        if value.device != node.device:
            raise DeviceError(f"assign: needs a tensor on {node.device}, got one on "
                              f"{value.device}\n  at {user_location()}")
        array = value._data()
        recorder = capture.recorder()
        if recorder is not None:
            recorder.on_assign(node, value._node)
        node.become_buffer(array)
        return self

    def index_copy_(self, dim: int, index: Tensor, source: Tensor) -> Self:
        """torch's in-place `index_copy_`: `assign(self.index_copy(dim, index, source))`, so
        the write happens now and `picograd.jit` replays it (a KV cache a decode step
        updates at a position held in a tensor)."""
        return self.assign(self.index_copy(dim, index, source))

    # ── autograd ────────────────────────────────────────────────────────────

    def requires_grad_(self, requires_grad: bool = True) -> Self:
        """Make this leaf record the ops built on it, so `backward` fills its `.grad`."""
        if requires_grad and not self.dtype.is_float:
            raise dtype_error("requires_grad_", f"only float tensors can require grad, this is "
                                                f"{self.dtype.name}")
        if not requires_grad and self._ctx is not None:
            raise AutogradError("requires_grad_(False) on a non-leaf tensor; use detach()\n"
                                f"  at {user_location()}")
        self.requires_grad = requires_grad
        return self

    def detach(self) -> Self:
        """The same values, cut from the autograd graph (no copy)."""
        return self._from_node(self._node)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool = False) -> None:
        """Accumulate the gradient of this tensor with respect to every leaf that requires
        grad into the leaf's `.grad` (lazily). A scalar needs no `gradient`. As in torch, the
        graph is freed afterwards unless `retain_graph`: a second backward through it is an
        AutogradError."""
        autograd.backward(self, gradient, retain_graph)

    def __repr__(self) -> str:
        node = self._node
        where = f"dtype={node.dtype.name}, device='{node.device}'"
        if node.buffer is not None:
            body = np.array2string(node.buffer, separator=", ", prefix="Tensor(")
            return f"Tensor({body}, {where})"
        return f"Tensor(<pending {node.op}>, shape={node.shape}, {where})"
