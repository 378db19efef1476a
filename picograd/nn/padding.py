"""The padding layers (torch's names, arguments and repr) and Unflatten:

    ZeroPad{1,2,3}d(padding), ConstantPad{1,2,3}d(padding, value),
    ReflectionPad{1,2,3}d / ReplicationPad{1,2,3}d / CircularPad{1,2,3}d(padding)
    Unflatten(dim, unflattened_size)

padding is an int (every side) or torch's flat (left, right, top, bottom, front, back) form
with 2 sizes per padded dim; negative sizes crop. Each calls F.pad (ops_shape.pad).
Example:

    layer = ReflectionPad2d((1, 1, 2, 0))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from picograd.frontend.lazy import shape_error
from picograd.frontend.ops_shape import pad
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module


class _Pad(Module):
    _n = 1
    _mode = "constant"

    def __init__(self, padding: int | Sequence[int], value: float = 0.0):
        super().__init__()
        sizes = (padding,) * (2 * self._n) if isinstance(padding, int) else tuple(padding)
        if len(sizes) != 2 * self._n or not all(isinstance(v, int) for v in sizes):
            raise shape_error(type(self).__name__, f"padding must be an int or {2 * self._n} "
                                                   f"ints, got {padding!r}")
        self.padding, self.value = sizes, value

    def forward(self, x: Tensor) -> Tensor:
        if self._mode == "constant":
            return pad(x, self.padding, "constant", self.value)
        return pad(x, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPad(_Pad):
    def __init__(self, padding: int | Sequence[int], value: float):
        super().__init__(padding, value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


def _layer(name: str, base: type[_Pad], n: int, mode: str) -> Any:
    return type(name, (base,), {"_n": n, "_mode": mode,
                                "__doc__": f"torch.nn.{name}: F.pad in mode {mode!r}."})


ZeroPad1d = _layer("ZeroPad1d", _Pad, 1, "constant")
ZeroPad2d = _layer("ZeroPad2d", _Pad, 2, "constant")
ZeroPad3d = _layer("ZeroPad3d", _Pad, 3, "constant")
ConstantPad1d = _layer("ConstantPad1d", _ConstantPad, 1, "constant")
ConstantPad2d = _layer("ConstantPad2d", _ConstantPad, 2, "constant")
ConstantPad3d = _layer("ConstantPad3d", _ConstantPad, 3, "constant")
ReflectionPad1d = _layer("ReflectionPad1d", _Pad, 1, "reflect")
ReflectionPad2d = _layer("ReflectionPad2d", _Pad, 2, "reflect")
ReflectionPad3d = _layer("ReflectionPad3d", _Pad, 3, "reflect")
ReplicationPad1d = _layer("ReplicationPad1d", _Pad, 1, "replicate")
ReplicationPad2d = _layer("ReplicationPad2d", _Pad, 2, "replicate")
ReplicationPad3d = _layer("ReplicationPad3d", _Pad, 3, "replicate")
CircularPad1d = _layer("CircularPad1d", _Pad, 1, "circular")
CircularPad2d = _layer("CircularPad2d", _Pad, 2, "circular")
CircularPad3d = _layer("CircularPad3d", _Pad, 3, "circular")


class Unflatten(Module):
    """Dim `dim` split into `unflattened_size` (Tensor.unflatten)."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        return x.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
