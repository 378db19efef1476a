"""The Python bindings through which a jitted function reaches tensors, checked per replay.

A replay does not run the function, so it cannot see that a name now leads to another
tensor (`W = other` at module level, `mymod.W = other`, `Cfg.W = other`, a closure variable
rebound, `params[0] = other`, `model = Net()`): it would compute with the old one. So when a
capture starts, `walk(fn)` records what the function's code can reach by name:

  - the globals its code names (`co_names` of its code and of the code nested in it:
    lambdas, comprehensions, inner functions), its closure cells and its default values;
  - through modules, classes and objects, their attributes of those names (`mymod.W`,
    `Cfg.W`, `self.W`: the instance, then its class and bases, as Python looks them up), and
    the items of lists, tuples and dicts;
  - the functions of user code it reaches (not picograd's, the standard library's or
    installed packages': they keep no user tensors), walked the same way with their globals.

When the capture ends, `Bindings.finish(read)` keeps the bindings that matter, where `read`
holds the nodes the capture computed with: a binding to a tensor the capture read, the
modules, classes and containers on the way to one, and every object and function binding
(the capture may have read through it: `model(x)` reads `model`'s parameters). A tensor the
function only wrote to a name (`global last; last = out`) is not kept, nor a binding the
capture itself changed unless a tensor it read lies behind it: those are the Python side
effects a replay does not redo.

`Bindings.changed()` then compares each kept binding with identity checks (a dict lookup or
a cell read each, no scan of any namespace), so the jit captures again after any rebinding,
to any shape, and back.

Not followed: python scalars and numpy arrays (host values a capture bakes in), objects
without a `__dict__` (`__slots__`, builtins), sets, the parts of functions, modules and
classes of library code (above). Attribute names are looked up on every namespace reached,
whichever code used them (a method's `self.W` is found on the object the caller named).
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from types import CodeType, FunctionType, MethodType, ModuleType
from typing import Any

import numpy as np

from picograd.frontend.lazy import LazyOp
from picograd.frontend.tensor import Tensor

_MISSING = object()  # an absent key or attribute; also an empty closure cell
_PLAIN = frozenset({type(None), bool, int, float, complex, str, bytes, bytearray, range,
                    slice, np.ndarray})  # host values: baked into a capture, not followed

# how an entry's current value is read (`_Entry.current`)
_DICT, _CELL, _ATTR, _ITEM, _LEN, _FIXED = range(6)


def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    dirs = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")
            if k in paths}
    return tuple(d + os.sep for d in dirs)


_LIBRARY_DIRS = _library_dirs()


@functools.lru_cache(maxsize=1024)
def _is_library(module_name: Any) -> bool:
    """Whether functions of `module_name` are picograd's, the standard library's or an
    installed package's (their globals hold no user tensors, so they are not walked)."""
    if not isinstance(module_name, str) or not module_name:
        return False
    if module_name.partition(".")[0] == "picograd":
        return True
    file = getattr(sys.modules.get(module_name), "__file__", None)
    if file is None:
        return module_name in sys.builtin_module_names
    return os.path.realpath(file).startswith(_LIBRARY_DIRS)


@functools.lru_cache(maxsize=1024)
def _code_names(code: CodeType) -> frozenset[str]:
    """The global and attribute names `code` and the code objects nested in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _code_names(const)
    return frozenset(names)


def _user_functions(value: Any) -> list[FunctionType] | None:
    """For a function, static / class method or property: its functions of user code (see
    `_is_library`); None for anything else."""
    if isinstance(value, FunctionType):
        parts = [value]
    elif isinstance(value, staticmethod | classmethod):
        parts = [value.__func__]
    elif isinstance(value, property):
        parts = [value.fget, value.fset, value.fdel]
    else:
        return None
    return [f for f in parts if isinstance(f, FunctionType) and not _is_library(f.__module__)]


def _class_spaces(cls: type) -> list[Any]:
    """The `__dict__`s an attribute of `cls` is looked up in, in order (library classes'
    hold no user state and are left out)."""
    return [c.__dict__ for c in cls.__mro__ if not _is_library(c.__module__)]


def _namespace(value: Any) -> dict | None:
    """`value.__dict__` without running a user `__getattr__` or property, or None."""
    try:
        space = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None
    return space if isinstance(space, dict) else None


class _Entry:
    """One binding: `holder[key]` (_DICT, _ITEM), a cell's contents (_CELL), `holder.key`
    (_ATTR), `len(holder)` (_LEN), or a fixed part of its parent (_FIXED: a tuple's item, a
    bound method's function), which is checked only through the parent."""

    __slots__ = ("always", "holder", "how", "keep", "key", "node", "parent", "read_below",
                 "tied_to", "value")

    def __init__(self, how: int, holder: Any, key: Any, value: Any, parent: _Entry | None):
        self.how, self.holder, self.key, self.value, self.parent = how, holder, key, value, parent
        self.node: LazyOp | None = value._node if isinstance(value, Tensor) else None
        self.always = False  # kept whatever lies behind it (an object, a function)
        # kept with that entry: a shadowing check, a len, a second binding of one value
        self.tied_to: _Entry | None = None
        self.keep = self.read_below = False

    def current(self) -> Any:
        how, holder, key = self.how, self.holder, self.key
        if how == _DICT:
            return holder.get(key, _MISSING)
        if how == _CELL:
            try:
                return holder.cell_contents
            except ValueError:  # the cell was emptied (`del` of the variable)
                return _MISSING
        if how == _ATTR:
            return getattr(holder, key, _MISSING)
        if how == _ITEM:
            return holder[key] if key < len(holder) else _MISSING
        if how == _LEN:
            return len(holder)
        return self.value


class _Walk:
    """Records the entries reachable from a function (see the module docstring); `names` is
    every name of the code walked so far, for attribute lookups (`self.W` in a method)."""

    def __init__(self, names: set[str]):
        self.names = sorted(names)  # sorted: the same walk in every process
        self.names_seen: set[str] = set()
        self.entries: list[_Entry] = []
        self.first: dict[int, _Entry] = {}  # id of each value followed: its first entry
        self.todo: list[tuple[Any, _Entry]] = []

    def run(self, fn: Any) -> list[_Entry]:
        self.visit(_FIXED, None, None, fn, None)
        while self.todo:
            value, entry = self.todo.pop()
            self.follow(value, entry)
        return self.entries

    def visit(self, how: int, holder: Any, key: Any, value: Any, parent: _Entry | None
              ) -> _Entry | None:
        """An entry for `value` if it can lead to a tensor (else None); its parts later."""
        if value.__class__ in _PLAIN or isinstance(value, np.generic):
            return None
        if isinstance(value, Tensor):
            entry = _Entry(how, holder, key, value, parent)
            self.entries.append(entry)
            return entry
        functions = _user_functions(value)
        if isinstance(value, ModuleType | type | list | tuple | dict):
            if isinstance(value, ModuleType | type) and _is_library(getattr(
                    value, "__name__" if isinstance(value, ModuleType) else "__module__", None)):
                return None  # picograd's, the standard library's, a package's: no user state
            always = False  # kept only when something kept lies behind it
        elif isinstance(value, MethodType):
            always = True
        elif functions is not None:
            if not functions:
                return None  # library code: its globals hold no user tensors
            always = True
        elif _namespace(value) is None:
            return None  # no attributes to rebind (a builtin, an array, a __slots__ object)
        else:
            always = True  # an object: the capture may have read through it (`model(x)`)
        entry = _Entry(how, holder, key, value, parent)
        entry.always = always
        self.entries.append(entry)
        first = self.first.get(id(value))
        if first is None:
            self.first[id(value)] = entry
            self.todo.append((value, entry))
        else:  # followed once: this binding matters when that one does (`B = A`)
            entry.tied_to = first
        return entry

    def follow(self, value: Any, entry: _Entry) -> None:
        functions = _user_functions(value)
        if functions:
            if isinstance(value, FunctionType):
                self.function(value, entry)
            else:  # a static or class method, a property: their functions are fixed parts
                for fn in functions:
                    self.visit(_FIXED, None, None, fn, entry)
        elif isinstance(value, MethodType):
            self.visit(_FIXED, None, None, value.__func__, entry)
            self.visit(_FIXED, None, None, value.__self__, entry)
        elif isinstance(value, functools.partial):  # its parts cannot be reassigned
            for part in (value.func, value.args, value.keywords):
                self.visit(_FIXED, None, None, part, entry)
        elif isinstance(value, list | tuple | dict):
            self.items(value, entry)
        elif isinstance(value, ModuleType):
            self.attributes([vars(value)], entry)
        elif isinstance(value, type):
            self.attributes(_class_spaces(value), entry)
        else:  # an object: its own attributes, then its class's
            call = next((c.__dict__["__call__"] for c in type(value).__mro__
                         if "__call__" in c.__dict__), None)
            if isinstance(call, FunctionType):  # what `fn(...)` runs when fn is this object
                self.names_seen |= _code_names(call.__code__)
            space = _namespace(value)
            self.attributes(([space] if space is not None else []) + _class_spaces(
                type(value)), entry)

    def items(self, value: list | tuple | dict, entry: _Entry) -> None:
        """A tuple's items are fixed parts; a list's and a dict's are bindings, and so is
        their length (an item added is one the code may read)."""
        if isinstance(value, tuple):
            for i, item in enumerate(value):
                self.visit(_FIXED, value, i, item, entry)
            return
        if isinstance(value, list):
            for i, item in enumerate(value):
                self.visit(_ITEM, value, i, item, entry)
        else:
            for key, item in list(value.items()):
                self.visit(_DICT, value, key, item, entry)
        self.tie(_Entry(_LEN, value, None, len(value), entry), entry)

    def function(self, fn: FunctionType, entry: _Entry) -> None:
        names = _code_names(fn.__code__)
        self.names_seen |= names
        space = fn.__globals__
        for name in sorted(names):
            if name in space:
                self.visit(_DICT, space, name, space[name], entry)
        for cell in fn.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:  # not assigned yet
                continue
            self.visit(_CELL, cell, None, contents, entry)
        for attr in ("__defaults__", "__kwdefaults__"):
            defaults = getattr(fn, attr)
            if defaults:  # replaced only by assigning a new tuple / dict to the attribute
                self.visit(_ATTR, fn, attr, defaults, entry)

    def attributes(self, holders: list[Any], entry: _Entry) -> None:
        """`value.name` for every name: found in the first of `holders` (Python's lookup
        order) that has it; the earlier ones must go on lacking it."""
        for name in self.names:
            for i, space in enumerate(holders):
                if name in space:
                    found = self.visit(_DICT, space, name, space[name], entry)
                    if found is not None:
                        for earlier in holders[:i]:
                            self.tie(_Entry(_DICT, earlier, name, _MISSING, entry), found)
                    break

    def tie(self, entry: _Entry, to: _Entry) -> None:
        entry.tied_to = to
        self.entries.append(entry)


class Bindings:
    """The bindings one capture depends on: `walk(fn)` before the capture runs,
    `finish(read)` after it, then `changed()` before every replay."""

    __slots__ = ("_checks", "_entries", "_lookups", "_stale")

    def __init__(self, entries: list[_Entry]):
        self._entries: list[_Entry] | None = entries
        self._lookups: tuple[tuple[Any, Any, Any], ...] = ()  # (dict, key, value): the most
        self._checks: tuple[_Entry, ...] = ()  # the others
        self._stale = False

    def finish(self, read: set[LazyOp]) -> None:
        """Keep the entries the capture depends on (module docstring); `read` holds the nodes
        it computed with."""
        entries = self._entries
        assert entries is not None, "finish() runs once"
        self._entries = None
        for entry in entries:
            if entry.node is not None and entry.node in read:
                e: _Entry | None = entry
                while e is not None and not e.read_below:
                    e.read_below = True
                    e = e.parent
        untied = [e for e in entries if e.tied_to is None]
        for entry in reversed(untied):  # children before their parents
            if entry.current() is not entry.value:  # the capture itself rebound it
                entry.keep = entry.read_below
                self._stale |= entry.keep  # the next call must capture again
            elif entry.node is not None:
                entry.keep = entry.read_below
            else:
                entry.keep = entry.keep or entry.always
            if entry.keep and entry.parent is not None:
                entry.parent.keep = True
        for entry in entries:  # in order: an entry tied to a tied one comes after it
            if entry.tied_to is None:
                continue
            changed = entry.current() != entry.value if entry.how == _LEN else (
                entry.current() is not entry.value)
            entry.keep = entry.tied_to.read_below if changed else entry.tied_to.keep
            self._stale |= changed and entry.keep
            e = entry.parent if entry.keep else None
            while e is not None and not e.keep:  # and the bindings on the way to it
                e.keep = True
                e = e.parent
        kept = [e for e in entries if e.keep and e.how != _FIXED]
        self._lookups = tuple((e.holder, e.key, e.value) for e in kept if e.how == _DICT)
        self._checks = tuple(e for e in kept if e.how != _DICT)

    def changed(self) -> bool:
        """Whether a kept binding now holds another value (cheap: one lookup per binding)."""
        if self._stale:
            return True
        for holder, key, value in self._lookups:
            if holder.get(key, _MISSING) is not value:
                return True
        for entry in self._checks:
            value = entry.current()
            if value is not entry.value and not (entry.how == _LEN and value == entry.value):
                return True
        return False

    def __len__(self) -> int:
        return len(self._lookups) + len(self._checks)


def walk(fn: Any) -> Bindings:
    """The entries reachable from `fn` (call at the start of a capture, then `finish`)."""
    names: set[str] = set()
    while True:  # until no walked function names an attribute the walk has not looked up
        w = _Walk(names)
        entries = w.run(fn)
        if w.names_seen <= names:
            return Bindings(entries)
        names = names | w.names_seen


__all__ = ["Bindings", "walk"]
