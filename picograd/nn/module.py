"""`Module`: torch-style containers of parameters and buffers.

    model.parameters() / named_parameters()     tensors that require grad, in definition order
    model.state_dict() / load_state_dict(sd, strict=True)
    model.train() / model.eval()                 `training` on the module and its children
    model(x)                                     calls `forward`

Attributes that are Tensors requiring grad are parameters; other Tensors registered with
`register_buffer` are buffers (running statistics); Modules (and lists/tuples of them, as in
`Sequential`) are children. Names are dotted paths (`layers.0.weight`) as in torch.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from picograd.errors import ShapeError
from picograd.frontend import capture
from picograd.frontend.lazy import user_location
from picograd.frontend.tensor import Tensor


class StateDictError(ShapeError, KeyError):
    """`load_state_dict` found missing, unexpected or mis-shaped entries (all are listed)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class Module:
    """Base class of every layer; subclasses set attributes in `__init__` and define
    `forward`."""

    training: bool = True

    def __init__(self) -> None:
        object.__setattr__(self, "_buffers", {})
        self.training = True

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        old = self.__dict__.get(name)
        if isinstance(old, Tensor) and old is not value:
            capture.note_replaced(old._node)  # a jit that read the old tensor captures again
        object.__setattr__(self, name, value)

    def register_buffer(self, name: str, tensor: Tensor) -> None:
        """A tensor saved in the state dict that is not trained (e.g. running mean)."""
        self.__dict__.setdefault("_buffers", {})[name] = True
        object.__setattr__(self, name, tensor)

    # ── traversal ───────────────────────────────────────────────────────────

    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value
            elif isinstance(value, list | tuple):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield f"{name}.{i}", item

    def children(self) -> Iterator[Module]:
        for _, child in self.named_children():
            yield child

    def modules(self) -> Iterator[Module]:
        yield self
        for child in self.children():
            yield from child.modules()

    def _named_tensors(self, prefix: str, buffers: bool) -> Iterator[tuple[str, Tensor]]:
        registered = self.__dict__.get("_buffers", {})
        for name, value in vars(self).items():
            if not isinstance(value, Tensor):
                continue
            if name in registered:
                if buffers:
                    yield prefix + name, value
            elif value.requires_grad:
                yield prefix + name, value
        for name, child in self.named_children():
            yield from child._named_tensors(f"{prefix}{name}.", buffers)

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        yield from self._named_tensors(prefix, buffers=False)

    def parameters(self) -> list[Tensor]:
        return [p for _, p in self.named_parameters()]

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = None

    # ── modes ───────────────────────────────────────────────────────────────

    def train(self, mode: bool = True) -> Module:
        for m in self.modules():
            m.training = mode
        capture.note_mode_change()  # a jit captured in the other mode captures again
        return self

    def eval(self) -> Module:
        return self.train(False)

    # ── state ───────────────────────────────────────────────────────────────

    def state_dict(self) -> dict[str, Tensor]:
        """Parameters and buffers by dotted name (the tensors themselves, not copies)."""
        return dict(self._named_tensors("", buffers=True))

    def load_state_dict(self, state: Mapping[str, Any], strict: bool = True
                        ) -> tuple[list[str], list[str]]:
        """Copy `state` (tensors or arrays by name) into this module's parameters and
        buffers. Returns (missing keys, unexpected keys). With `strict`, any missing or
        unexpected key, and in any mode a shape mismatch, raises `StateDictError` listing
        every problem."""
        own = self.state_dict()
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        mismatched = []
        for name, tensor in own.items():
            if name in state:
                shape = tuple(np.shape(state[name]))
                if shape != tensor.shape:
                    mismatched.append(f"{name}: checkpoint {shape}, model {tensor.shape}")
        problems = []
        if strict and missing:
            problems.append("missing keys: " + ", ".join(missing))
        if strict and unexpected:
            problems.append("unexpected keys: " + ", ".join(unexpected))
        if mismatched:
            problems.append("shape mismatches: " + "; ".join(mismatched))
        if problems:
            raise StateDictError(f"load_state_dict into {type(self).__name__}: "
                                 + " | ".join(problems) + f"\n  at {user_location()}")
        for name, tensor in own.items():
            if name in state:
                value = state[name]
                array = value._data() if isinstance(value, Tensor) else value
                # one copy, cast on the way (a mapped file's array is read from the page cache)
                loaded = Tensor(np.asarray(array), dtype=tensor.dtype, device=tensor.device)
                tensor._take_node(loaded._node)  # a jit that read the old captures again
                tensor.grad = None
        return missing, unexpected

    def __repr__(self) -> str:
        children = [f"  ({name}): {child!r}".replace("\n", "\n  ")
                    for name, child in self.named_children()]
        if not children:
            return f"{type(self).__name__}({self.extra_repr()})"
        return f"{type(self).__name__}(\n" + "\n".join(children) + "\n)"

    def extra_repr(self) -> str:
        return ""
