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

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from picograd.errors import ShapeError
from picograd.frontend import capture
from picograd.frontend.dtype import to_dtype
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

    # ── registration ─────────────────────────────────────────────────────────

    def add_module(self, name: str, module: Module | None) -> None:
        """Register `module` as the child `name` (torch's `add_module`)."""
        if not isinstance(module, Module | None):
            raise TypeError(f"add_module: {type(module).__name__} is not a Module")
        if not isinstance(name, str) or "." in name or name == "":
            raise KeyError(f'module name must be a non-empty string without ".", got {name!r}')
        setattr(self, name, module)

    register_module = add_module

    def register_parameter(self, name: str, param: Tensor | None) -> None:
        """Register `param` (a tensor that requires grad, or None) as `name`."""
        if param is not None and not param.requires_grad:
            param.requires_grad_()
        setattr(self, name, param)

    def get_submodule(self, target: str) -> Module:
        """The module at dotted path `target` ("" is this module), as torch's."""
        module: Module = self
        for part in target.split(".") if target else []:
            children = dict(module.named_children())
            if part not in children:
                raise AttributeError(f"{type(module).__name__} has no submodule {part!r} "
                                     f"(looking up {target!r})")
            module = children[part]
        return module

    # ── traversal ───────────────────────────────────────────────────────────

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, value in vars(self).items():
            if isinstance(value, Module):
                if id(value) not in seen:
                    seen.add(id(value))
                    yield name, value
            elif isinstance(value, list | tuple):
                for i, item in enumerate(value):
                    if isinstance(item, Module) and id(item) not in seen:
                        seen.add(id(item))
                        yield f"{name}.{i}", item

    def children(self) -> Iterator[Module]:
        for _, child in self.named_children():
            yield child

    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every descendant by dotted name, each once (a module shared by
        two parents is listed under its first name), as torch's."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self.named_children():
            yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                           remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def apply(self, fn: Callable[[Module], object]) -> Module:
        """Call `fn` on every child (recursively), then on this module; returns self
        (as torch's, e.g. `model.apply(init_weights)`)."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def _direct_tensors(self) -> Iterator[tuple[str, Tensor, bool]]:
        """(name, tensor, is_buffer) of the tensors held by this module itself."""
        registered = self.__dict__.get("_buffers", {})
        frozen = self.__dict__.get("_frozen", ())
        for name, value in vars(self).items():
            if not isinstance(value, Tensor):
                continue
            if name in registered:
                yield name, value, True
            elif value.requires_grad or name in frozen:
                yield name, value, False

    def _named_tensors(self, prefix: str, buffers: bool) -> Iterator[tuple[str, Tensor]]:
        for name, value, is_buffer in self._direct_tensors():
            if buffers or not is_buffer:
                yield prefix + name, value
        for name, child in self.named_children():
            yield from child._named_tensors(f"{prefix}{name}.", buffers)

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Parameters by dotted name; a tensor shared by two modules (tied weights) once,
        under its first name, unless `remove_duplicate=False`; with `recurse=False` only
        this module's own."""
        if recurse:
            items = self._named_tensors(prefix, buffers=False)
        else:
            items = ((prefix + name, t) for name, t, is_buffer in self._direct_tensors()
                     if not is_buffer)
        seen: set[int] = set()
        for name, tensor in items:
            if remove_duplicate:
                if id(tensor) in seen:
                    continue
                seen.add(id(tensor))
            yield name, tensor

    def parameters(self, recurse: bool = True) -> list[Tensor]:
        return [p for _, p in self.named_parameters(recurse=recurse)]

    def named_buffers(self, prefix: str = "", recurse: bool = True
                      ) -> Iterator[tuple[str, Tensor]]:
        if not recurse:
            yield from ((prefix + n, t) for n, t, is_buffer in self._direct_tensors()
                        if is_buffer)
            return
        for name, module in self.named_modules():
            inner = f"{prefix}{name}." if name else prefix
            yield from ((inner + n, t) for n, t, is_buffer in module._direct_tensors()
                        if is_buffer)

    def buffers(self, recurse: bool = True) -> list[Tensor]:
        return [b for _, b in self.named_buffers(recurse=recurse)]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = p.grad.zeros_like()

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Turn gradient recording of every parameter on or off (torch's: a frozen
        parameter stays a parameter, in `state_dict` and `parameters()` alike)."""
        for module in self.modules():
            frozen = module.__dict__.setdefault("_frozen", set())
            for name, value, is_buffer in list(module._direct_tensors()):
                if not is_buffer:
                    value.requires_grad_(requires_grad)
                    (frozen.discard if requires_grad else frozen.add)(name)
        return self

    # ── devices and dtypes ──────────────────────────────────────────────────

    def _convert(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Replace every parameter and buffer, in place, by `fn` of it (same Tensor
        objects, so an optimiser built before keeps its references)."""
        for module in self.modules():
            for _, tensor, _ in list(module._direct_tensors()):
                new = fn(tensor.detach())
                if new._node is not tensor._node:
                    tensor._take_node(new._node)
                    tensor.grad = None
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """`to(device)`, `to(dtype)` or `to(device, dtype)`: moves / casts the floating
        parameters and buffers in place, as torch's; returns self."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        if kwargs:
            raise TypeError(f"to() got unexpected arguments {sorted(kwargs)}")
        for arg in args:
            if isinstance(arg, str):
                device = arg
            else:
                dtype = arg
        if device is not None:
            self._convert(lambda t: t.to(str(device)))
        if dtype is not None:
            self._convert(lambda t: t.cast(dtype) if t.dtype.is_float else t)
        return self

    def float(self) -> Module:
        return self.to(to_dtype("float32"))

    def half(self) -> Module:
        return self.to(to_dtype("float16"))

    def double(self) -> Module:
        return self.to(to_dtype("float64"))

    def cpu(self) -> Module:
        return self.to("CPU")

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
