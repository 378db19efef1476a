"""Layers: Linear, Sequential, ReLU, Flatten, Dropout.

Initialisation follows torch's defaults (so a model trains like its torch twin): `Linear`
draws weight and bias from U(-1/sqrt(in), 1/sqrt(in)) — kaiming-uniform with a=sqrt(5).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from picograd.frontend.realize import realize_later
from picograd.frontend.tensor import Tensor
from picograd.nn.basic import dropout, linear
from picograd.nn.module import Module


def uniform(shape: Sequence[int], bound: float, device: str) -> Tensor:
    """A float32 leaf that requires grad, drawn from U(-bound, bound) by the device's
    generator (picograd's seed; the numbers are fixed now). It is computed by the next
    realize of anything (`realize_later`), so every graph that reads it reads a buffer, and
    never if `load_state_dict` replaces it first."""
    values = Tensor.rand(*shape, device=device) * (2 * bound) - bound
    realize_later(values)
    return values.requires_grad_()


class Linear(Module):
    """y = x @ weight.T + bias, weight of shape (out_features, in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: str = "CPU"):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features) if in_features else 0.0
        self.weight = uniform((out_features, in_features), bound, device)
        self.bias = uniform((out_features,), bound, device) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class ReLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.relu()


class Flatten(Module):
    """Flatten every dim from `start_dim` on (torch's default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1):
        super().__init__()
        self.start_dim = start_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.reshape((*x.shape[:self.start_dim], -1))


class Dropout(Module):
    """Zero each element with probability `p` in training mode, scaling the rest by 1/(1-p)."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training)


class Sequential(Module):
    """Apply the layers in order. Takes layers, or an OrderedDict of named layers (their
    names are then the state-dict prefixes), as torch's; indexing, slicing, `len` and
    `append` as torch's."""

    _named: dict[str, Module]

    def __init__(self, *layers: Module | Mapping[str, Module]):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], Mapping):
            named = dict(layers[0])
        else:
            named = {str(i): layer for i, layer in enumerate(layers)}
        for layer in named.values():
            if not isinstance(layer, Module):
                raise TypeError(f"Sequential holds Modules, got {type(layer).__name__}")
        object.__setattr__(self, "_named", named)

    @property
    def _layers(self) -> list[Module]:
        return list(self._named.values())

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The layers by position ("0", "1", ...) or by their given names, as torch's."""
        yield from self._named.items()

    def forward(self, x: Tensor) -> Tensor:
        for layer in self._named.values():
            x = layer(x)
        return x

    def __getitem__(self, i: int | slice) -> Any:
        layers = self._layers
        if isinstance(i, slice):
            names = list(self._named)[i]
            return Sequential(OrderedDict((n, self._named[n]) for n in names))
        if not -len(layers) <= i < len(layers):
            raise IndexError(f"Sequential: index {i} is out of range for length {len(layers)}")
        return layers[i]

    def __len__(self) -> int:
        return len(self._named)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._layers)

    def append(self, layer: Module) -> Sequential:
        self._named[str(len(self._named))] = layer
        return self
