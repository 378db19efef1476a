"""Creation ops beyond `Tensor(...)`, `zeros`/`ones`/`full`/`arange`/`eye`/`rand`/`randn`
(tensor.py), as torch names them, and the in-place fills that `picograd.nn.init` uses.

    Tensor.empty(*shape)                        zero-filled (picograd never hands out
                                                uninitialised memory)
    Tensor.linspace(start, end, steps)          torch's values, bit for bit
    Tensor.randint(low, high, size)             uniform ints in [low, high) (int32, or
                                                int64 for bounds beyond int32)
    Tensor.uniform(*shape, low, high)  Tensor.normal(*shape, mean, std)
    t.zeros_like() ones_like() empty_like() full_like(v) rand_like() randn_like()
    t.randint_like(low, high)                   (as torch.zeros_like(t): same shape, and
                                                t's dtype and device unless given)
    t.uniform_(a, b)  t.normal_(mean, std)  t.fill_(v)  t.zero_()  t.copy_(src)   in place

Random values come only from `rand`/`randn`, so `manual_seed` makes every op here
reproducible. The in-place ops point the tensor at a new node (as `x[i] = v` and
`Optimizer.step` do); tensors built from it earlier keep the old values. On a leaf that
requires grad they need `no_grad()` (as torch: an in-place op on such a leaf would change
what its gradient means).

A tensor that would not fit its device's memory (`Runtime.total_memory`: physical RAM on the
CPU, the GPU's memory on CUDA) is an `OutOfMemoryError` at the creation op, naming the
shape, dtype, bytes and the device's memory (`check_fits_device`), as torch fails at the
allocation; picograd's lazy constants would otherwise compute for hours. Views (`expand`)
allocate nothing and stay lazy, as torch's do.

`data_dtype` is the dtype rule of python data that every creation function applies (dtype.py
has the rule; this adds the user's source line and the device): `Tensor([2**31])` is int64,
`full(2, 300, dtype=int8)` a DTypeError naming the value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from picograd.dialects.capabilities import capabilities
from picograd.errors import DTypeError, OutOfMemoryError, PicogradError, ShapeError
from picograd.frontend.base import Scalar, overflow_error, size_arg
from picograd.frontend.dtype import (
    DType,
    dtype_of_list,
    first_overflow,
    float32,
    int32,
    int64,
    to_dtype,
)
from picograd.frontend.grad_mode import AutogradError, is_grad_enabled
from picograd.frontend.lazy import LazyOp, dtype_error, shape_error, user_location
from picograd.frontend.ops_division import DivisionOps
from picograd.runtimes.registry import canonical_device_name, get_device

# Below this many bytes a tensor fits every device: creation skips the memory check.
_SURELY_FITS = 1 << 24


def _holds_int64(device: str) -> bool:
    """Whether `device`'s compile target has int64 (True for a device that is not present
    here: using it fails later with the reason, as LazyOp's check)."""
    try:
        renderer = get_device(device).renderer
    except (PicogradError, ImportError, OSError):
        return True
    return capabilities(renderer).supports(int64.ir)


def _device_memory(device: str) -> int | None:
    """`device`'s memory in bytes, or None when it is not present here or cannot tell."""
    try:
        return get_device(device).total_memory()
    except (PicogradError, ImportError, OSError):
        return None


def check_fits_device(op: str, shape: Sequence[int], dtype: DType, device: str) -> None:
    """An OutOfMemoryError at the user's line if a tensor of `shape` and `dtype` needs more
    bytes than `device` has memory (a device not present here is not checked)."""
    nbytes = math.prod(shape) * dtype.np.itemsize
    if nbytes < _SURELY_FITS:
        return
    memory = _device_memory(device)
    if memory is None or nbytes <= memory:
        return
    try:
        name = canonical_device_name(device)
    except PicogradError:
        name = device
    raise OutOfMemoryError(
        f"{op}: out of memory: a tensor of shape {tuple(shape)} and dtype {dtype.name} needs "
        f"{nbytes:,} bytes, more than device {name}'s {memory:,} bytes of memory\n  at "
        f"{user_location()}")


def arange_size(start: float, stop: float, step: float) -> int:
    """How many elements `arange(start, stop, step)` has (numpy's count)."""
    return max(0, math.ceil((stop - start) / step))


def data_dtype(op: str, array: np.ndarray, dtype: DType | None, device: str) -> DType:
    """The dtype of a tensor of python data on `device`, `array` being numpy's array of the
    data: `dtype` if given, else the data's own (`dtype_of_list`: int32, or int64 for ints
    beyond int32). A DTypeError names a value that overflows it, or a value that made the
    tensor int64 on a device without int64 (WEBGPU)."""
    try:
        dt = dtype if dtype is not None else dtype_of_list(array)
    except DTypeError as e:  # elements of no dtype (strings, None): say where
        raise dtype_error(op, str(e)) from None
    bad = first_overflow(array, dt)
    if bad is not None:
        raise overflow_error(op, str(bad), dt)
    if dtype is None and dt is int64 and not _holds_int64(device):
        raise dtype_error(op, f"value {first_overflow(array, int32)} does not fit int32, and "
                              f"device {device} cannot hold the int64 tensor it needs")
    return dt


def _float_dtype(op: str, dtype: object) -> DType:
    dt = to_dtype(dtype)
    if not dt.is_float:
        raise dtype_error(op, f"random samples need a float dtype, got {dt.name}")
    return dt


def _linspace_values(start: float, end: float, steps: int, dt: DType) -> np.ndarray:
    """torch's linspace: the first half counts up from `start`, the second half down from
    `end`, so both ends are exact. For float32 torch rounds start + step * i once (a fused
    multiply-add); float64 holds the product exactly, so one rounding to float32 matches."""
    if steps == 1:
        return np.array([start], dtype=dt.np)
    if dt.is_float:
        s, e = np.float32(start), np.float32(end)
        step = np.float64(np.float32((e - s) / np.float32(steps - 1)))
        s, e = np.float64(s), np.float64(e)
    else:  # integer results: torch steps in double from the integer ends
        s, e = np.float64(int(start)), np.float64(int(end))
        step = (e - s) / (steps - 1)
    i = np.arange(steps, dtype=np.float64)
    half = steps // 2
    values = np.concatenate([s + step * i[:half], e - step * (steps - 1 - i[half:])])
    return values.astype(dt.np)  # float -> int truncates, as torch's conversion


class CreationOps(DivisionOps):
    """Creation classmethods and `_like` / in-place fills (see the module docstring)."""

    __slots__ = ()

    if TYPE_CHECKING:  # provided by Tensor (tensor.py)
        @classmethod
        def full(cls, shape: int | Sequence[int], value: Scalar, dtype: object = None,
                 device: str = "CPU") -> Any: ...

        @classmethod
        def rand(cls, *shape: int | Sequence[int], device: str = "CPU") -> Any: ...

        @classmethod
        def randn(cls, *shape: int | Sequence[int], device: str = "CPU") -> Any: ...

        @classmethod
        def eye(cls, n: int, m: int | None = None, dtype: object = float32,
                device: str = "CPU") -> Any: ...

        @classmethod
        def _leaf(cls, array: np.ndarray, dtype: DType, device: str) -> Any: ...

        @classmethod
        def _filled(cls, op: str, shape: tuple[int, ...], value: Scalar, dtype: object,
                    device: str) -> Any: ...

    # ── classmethods ────────────────────────────────────────────────────────

    @classmethod
    def empty(cls, *shape: int | Sequence[int], dtype: object = float32,
              device: str = "CPU") -> Self:
        """torch.empty; picograd's is zero-filled (a lazy constant, so it costs nothing)."""
        s, dt = size_arg("empty", shape), to_dtype(dtype)
        check_fits_device("empty", s, dt, device)
        return cls.full(s, 0, dt, device)

    @classmethod
    def linspace(cls, start: Scalar, end: Scalar, steps: int, dtype: object = float32,
                 device: str = "CPU") -> Self:
        """`steps` evenly spaced values from `start` to `end`, both included (torch's values:
        `steps == 1` gives [start])."""
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise shape_error("linspace", f"steps must be a non-negative int, got {steps!r}")
        dt = to_dtype(dtype)
        if dt.is_bool:
            raise dtype_error("linspace", "needs a float or int dtype, got bool")
        check_fits_device("linspace", (steps,), dt, device)
        return cls._leaf(_linspace_values(float(start), float(end), steps, dt), dt, device)

    @classmethod
    def uniform(cls, *shape: int | Sequence[int], low: float = 0.0, high: float = 1.0,
                dtype: object = float32, device: str = "CPU") -> Self:
        """Samples from U(low, high) (tinygrad's signature: shape first, bounds by keyword)."""
        s, dt = size_arg("uniform", shape), _float_dtype("uniform", dtype)
        if not low <= high:
            raise shape_error("uniform", f"needs low <= high, got low={low}, high={high}")
        check_fits_device("uniform", s, dt, device)
        return (cls.rand(s, device=device) * (high - low) + low).cast(dt)

    @classmethod
    def normal(cls, *shape: int | Sequence[int], mean: float = 0.0, std: float = 1.0,
               dtype: object = float32, device: str = "CPU") -> Self:
        """Samples from N(mean, std^2) (shape first, as `uniform`; torch.normal takes
        the mean and std first)."""
        s, dt = size_arg("normal", shape), _float_dtype("normal", dtype)
        if not std >= 0:
            raise shape_error("normal", f"needs std >= 0, got std={std}")
        check_fits_device("normal", s, dt, device)
        return (cls.randn(s, device=device) * std + mean).cast(dt)

    @classmethod
    def randint(cls, low: int, high: int | Sequence[int] | None = None,
                size: int | Sequence[int] = (), dtype: object = None,
                device: str = "CPU") -> Self:
        """Uniform integers in [low, high); `randint(high, size)` starts at 0, as torch.
        int32 unless `dtype` is given or a bound does not fit int32 (then int64). Drawn as
        floor(rand * (high - low)) in float32, so ranges wider than 2**24 do not reach
        every integer."""
        if high is None or isinstance(high, tuple | list):
            low, high, size = 0, low, size if high is None else high
        s = size_arg("randint", (size,))
        if (isinstance(low, bool) or isinstance(high, bool) or not isinstance(low, int)
                or not isinstance(high, int)):
            raise shape_error("randint", f"needs int bounds, got low={low!r}, high={high!r}")
        if not low < high:
            raise shape_error("randint", f"needs low < high, got low={low}, high={high}")
        dt = to_dtype(dtype) if dtype is not None else data_dtype(
            "randint", np.array([low, high - 1]), None, device)
        check_fits_device("randint", s, dt, device)
        n = high - low
        draw = (cls.rand(s, device=device) * float(n)).floor().minimum(float(n - 1))
        return (draw + float(low)).cast(dt)

    # ── like another tensor ─────────────────────────────────────────────────

    def _like_args(self, dtype: object, device: str | None) -> tuple[DType, str]:
        return (self.dtype if dtype is None else to_dtype(dtype),
                self.device if device is None else device)

    def full_like(self, fill_value: Scalar, dtype: object = None,
                  device: str | None = None) -> Self:
        dt, dev = self._like_args(dtype, device)
        return type(self)._filled("full_like", self.shape, fill_value, dt, dev)

    def zeros_like(self, dtype: object = None, device: str | None = None) -> Self:
        return self.full_like(0, dtype, device)

    def ones_like(self, dtype: object = None, device: str | None = None) -> Self:
        return self.full_like(1, dtype, device)

    def empty_like(self, dtype: object = None, device: str | None = None) -> Self:
        """Zero-filled, as `empty`."""
        return self.full_like(0, dtype, device)

    def rand_like(self, dtype: object = None, device: str | None = None) -> Self:
        dt, dev = self._like_args(dtype, device)
        return type(self).uniform(self.shape, dtype=_float_dtype("rand_like", dt), device=dev)

    def randn_like(self, dtype: object = None, device: str | None = None) -> Self:
        dt, dev = self._like_args(dtype, device)
        return type(self).normal(self.shape, dtype=_float_dtype("randn_like", dt), device=dev)

    def randint_like(self, low: int, high: int | None = None, dtype: object = None,
                     device: str | None = None) -> Self:
        """Uniform integers in [low, high) (`randint_like(t, high)` starts at 0)."""
        dt, dev = self._like_args(dtype, device)
        if high is None:
            low, high = 0, low
        return type(self).randint(low, high, self.shape, dt, dev)

    # ── in place ────────────────────────────────────────────────────────────

    def _replace(self, op: str, new: CreationOps) -> Self:
        """Point this tensor at `new`'s node (same shape, cast to this dtype). The new values
        do not depend on the old ones, so the tensor stops recording a graph."""
        if is_grad_enabled() and self.requires_grad and self._ctx is None:
            raise AutogradError(f"{op}: a leaf tensor that requires grad is being used in an "
                                f"in-place operation (wrap it in no_grad())\n  at "
                                f"{user_location()}")
        node: LazyOp = new.cast(self.dtype)._node
        self._take_node(node)
        if self._ctx is not None:  # a non-leaf: its old graph no longer reaches its values
            self._ctx, self.requires_grad = None, False
        return self

    def copy_(self, src: CreationOps | Scalar) -> Self:
        """Refill with `src`'s values (broadcast to this shape, cast to this dtype)."""
        if not isinstance(src, CreationOps):
            return self.fill_(src)
        self._check_device("copy_", src)
        if src.shape != self.shape:
            try:
                src = src.expand(self.shape)
            except ShapeError:
                raise shape_error("copy_", f"source of shape {src.shape} does not broadcast "
                                           f"to {self.shape}") from None
        return self._replace("copy_", type(self)._from_node(src._node))  # values only

    def fill_(self, value: Scalar) -> Self:
        return self._replace("fill_", type(self)._filled("fill_", self.shape, value,
                                                         self.dtype, self.device))

    def zero_(self) -> Self:
        return self.fill_(0)

    def uniform_(self, a: float = 0.0, b: float = 1.0) -> Self:
        """Refill with samples from U(a, b)."""
        _float_dtype("uniform_", self.dtype)
        if not a <= b:
            raise shape_error("uniform_", f"needs a <= b, got a={a}, b={b}")
        return self._replace("uniform_", type(self).uniform(self.shape, low=a, high=b,
                                                            device=self.device))

    def normal_(self, mean: float = 0.0, std: float = 1.0) -> Self:
        """Refill with samples from N(mean, std^2)."""
        _float_dtype("normal_", self.dtype)
        if not std >= 0:
            raise shape_error("normal_", f"needs std >= 0, got std={std}")
        return self._replace("normal_", type(self).normal(self.shape, mean=mean, std=std,
                                                          device=self.device))
