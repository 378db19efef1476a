"""Containers, as torch's: modules and parameters held in a list or a dict, named by
position ("0", "1", ...) or key in `state_dict`, so torch's checkpoints load unchanged.

    blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
    heads = nn.ModuleDict({"cls": nn.Linear(8, 2), "box": nn.Linear(8, 4)})
    scales = nn.ParameterList([pg.ones(8).requires_grad_() for _ in range(3)])
    for block in blocks: x = block(x)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar, cast

from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module


def _index(op: str, i: int, length: int) -> int:
    if not -length <= i < length:
        raise IndexError(f"{op}: index {i} is out of range for length {length}")
    return i % length


V = TypeVar("V")


class _Keyed(Module, Generic[V]):
    """What ModuleDict and ParameterDict share: values by string key, in insertion order,
    with a dict's methods; each subclass checks what `__setitem__` stores."""

    _items: dict[str, V]

    def __init__(self, values: Mapping[str, V] | Iterable[tuple[str, V]] | None = None):
        super().__init__()
        object.__setattr__(self, "_items", {})
        if values is not None:
            self.update(values)

    def __setitem__(self, key: str, value: V) -> None:
        raise NotImplementedError  # abstract: each container checks what it stores

    def __getitem__(self, key: str) -> V:
        return self._items[key]

    def __delitem__(self, key: str) -> None:
        del self._items[key]

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def keys(self) -> Iterable[str]:
        return self._items.keys()

    def values(self) -> Iterable[V]:
        return self._items.values()

    def items(self) -> Iterable[tuple[str, V]]:
        return self._items.items()

    def pop(self, key: str) -> V:
        return self._items.pop(key)

    def clear(self) -> None:
        self._items.clear()

    def update(self, values: Mapping[str, V] | Iterable[tuple[str, V]]) -> None:
        pairs = values.items() if isinstance(values, Mapping) else values
        for key, value in cast(Iterable[tuple[str, V]], pairs):
            self[key] = value


class ModuleList(Module):
    """A list of modules; `forward` is the user's (iterate it)."""

    _items: list[Module]

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        object.__setattr__(self, "_items", [])
        if modules is not None:
            self.extend(modules)

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for i, module in enumerate(self._items):
            if id(module) not in seen:
                seen.add(id(module))
                yield str(i), module

    def _check(self, module: Any) -> Module:
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__} holds Modules, got {type(module).__name__}")
        return module

    def append(self, module: Module) -> ModuleList:
        self._items.append(self._check(module))
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        self._items.insert(index, self._check(module))

    def pop(self, index: int = -1) -> Module:
        return self._items.pop(_index("pop", index, len(self._items)))

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return type(self)(self._items[i])
        return self._items[_index("ModuleList", i, len(self._items))]

    def __setitem__(self, i: int, module: Module) -> None:
        self._items[_index("ModuleList", i, len(self._items))] = self._check(module)

    def __delitem__(self, i: int | slice) -> None:
        del self._items[i]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._items)

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return type(self)([*self._items, *other])


class ModuleDict(_Keyed[Module]):
    """Modules by string key, in insertion order."""

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for key, module in self._items.items():
            if id(module) not in seen:
                seen.add(id(module))
                yield key, module

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ModuleDict keys are strings, got {type(key).__name__}")
        if not isinstance(module, Module):
            raise TypeError(f"ModuleDict holds Modules, got {type(module).__name__}")
        self._items[key] = module


def _as_parameter(value: Any) -> Tensor:
    """A tensor as a parameter (it requires grad, as torch's `nn.Parameter` does)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"a parameter container holds Tensors, got {type(value).__name__}")
    if not value.requires_grad and value._ctx is None and value.dtype.is_float:
        value.requires_grad_()
    return value


class ParameterList(Module):
    """A list of parameters, named "0", "1", ... in `state_dict`."""

    _items: list[Tensor]

    def __init__(self, values: Iterable[Tensor] | None = None):
        super().__init__()
        object.__setattr__(self, "_items", [])
        if values is not None:
            self.extend(values)

    def _direct_tensors(self) -> Iterator[tuple[str, Tensor, bool]]:
        for i, tensor in enumerate(self._items):
            yield str(i), tensor, False

    def append(self, value: Tensor) -> ParameterList:
        self._items.append(_as_parameter(value))
        return self

    def extend(self, values: Iterable[Tensor]) -> ParameterList:
        for value in values:
            self.append(value)
        return self

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return type(self)(self._items[i])
        return self._items[_index("ParameterList", i, len(self._items))]

    def __setitem__(self, i: int, value: Tensor) -> None:
        self._items[_index("ParameterList", i, len(self._items))] = _as_parameter(value)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Tensor]:
        return iter(self._items)


class ParameterDict(_Keyed[Tensor]):
    """Parameters by string key, in insertion order."""

    def _direct_tensors(self) -> Iterator[tuple[str, Tensor, bool]]:
        for key, tensor in self._items.items():
            yield key, tensor, False

    def __setitem__(self, key: str, value: Tensor) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys are strings, got {type(key).__name__}")
        self._items[key] = _as_parameter(value)

