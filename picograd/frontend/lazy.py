"""`LazyOp`: one node of the pending graph, and the frontend's error helpers.

A node is one pg_tensor op (`op` is the op's short name) over source nodes, with a static
shape, a dtype and a device. `op == "buffer"` marks a leaf that holds its data (`buffer`, a
C-contiguous numpy array of the node's shape and dtype); every other node is pending.
Realizing a node turns it, in place, into a buffer leaf, so every tensor that shares the node
sees the data and the graph behind it is dropped. `op == "var"` is a leaf too: a bound
symbolic integer (`picograd.frontend.variable`), whose `buffer` holds this call's value and
whose `arg` (the Variable, not the value) is what the cache key sees.

`arg` is the op's parameter, in the form `picograd.frontend.realize` builds IR from:

    const     the scalar (python float / int / bool; an int wrapped into the dtype's range)
    unary     UnaryKind               binary  BinaryKind          cmp  CmpKind
    where     None                    cast    None (dtype is the node's)
    reduce    (ReduceKind, axes)      keeps reduced dims as size 1
    reshape / expand                  None (the node's shape is the target)
    permute   perm                    flip    axes
    pad       (low, high, value)      slice   (start, step)
    contiguous  None (a kernel boundary: the value stored in a buffer of its own)
    placeholder the input's position (a `StepTemplate` recording's input: never realized)

`sig` is the node's part of the realize cache key, computed once at construction: the op,
`arg` made exact (floats by their hex form, so -0.0 and NaN key correctly), shape, dtype.
`key` is the node's structure as built, an int kept as nodes are built: one number per
distinct (`sig`, sources' keys), so two nodes have equal keys exactly when the trees they
unfold to are equal (leaves by shape and dtype, variables by variable, never by contents).
It is not the whole story of a graph (which nodes are shared is not in it) and a realized
node's key becomes a buffer's while its consumers keep theirs: a realize looks its cached
plan up by the outputs' keys and checks the graph against the plan (`realize._match`). The
numbers are never reused: past `_MAX_STRUCTURES` the table starts afresh, and a structure
seen again then gets a new number (a plan miss, never a wrong hit).

`guards` are the range checks of computed indices the node's value depends on (`Guard`):
a node inherits its sources' guards, and realizing it computes them too and raises
`IndexRangeError` if one fails (`picograd.frontend.realize`). A node whose guard failed
keeps it, so reading it again raises again; a node whose guards passed drops them.

Every node checks, at construction, that its device can hold its dtype (the device's
capability table, looked up once per (device, dtype)): a tensor of a dtype the device lacks
(int64 on WEBGPU) is a DTypeError at the line that creates, moves or computes it.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from typing import Any

import numpy as np

from picograd.dialects.capabilities import TRANSCENDENTALS, capabilities
from picograd.dialects.pg import BinaryKind, CmpKind, UnaryKind
from picograd.errors import (
    ArgumentTypeError,
    DimRangeError,
    DTypeError,
    IndexRangeError,
    PicogradError,
    ShapeError,
    UnimplementedCaseError,
    UnimplementedDTypeError,
    ZeroDivisorError,
    user_location,
)
from picograd.frontend.dtype import DTYPES, DType, cast_scalar
from picograd.runtimes.registry import get_device


def _exact(value: Any) -> Any:
    """A hashable, exactly-comparing form of an op parameter (floats by their bits)."""
    if value is None:
        return None
    if isinstance(value, float):
        return ("f", value.hex())
    if isinstance(value, tuple):
        if all(v.__class__ is int for v in value):  # axes, a permutation: exact already
            return value
        return tuple(_exact(v) for v in value)
    return value


# Structural keys (the module docstring): (sig, source keys...) -> its number.
_STRUCTURES: dict[tuple, int] = {}
_numbers = itertools.count()
_MAX_STRUCTURES = 200_000  # about 40 MB of keys; a model's graph has a few thousand


def structure_key(sig: tuple, src: tuple[LazyOp, ...]) -> int:
    """The number of a node of signature `sig` over `src` (module docstring)."""
    n = len(src)  # (the common arities spelt out: this runs for every node built)
    entry = ((sig,) if n == 0 else (sig, src[0].key) if n == 1 else
             (sig, src[0].key, src[1].key) if n == 2 else (sig, *[s.key for s in src]))
    key = _STRUCTURES.get(entry)
    return key if key is not None else _new_structure(entry)


def _new_structure(entry: tuple) -> int:
    """A fresh number for the structure `entry` (`structure_key`'s miss)."""
    if len(_STRUCTURES) >= _MAX_STRUCTURES:
        _STRUCTURES.clear()
    key = _STRUCTURES[entry] = next(_numbers)
    return key


# Classes of op parameters that are exact and hashable as they are (`_exact` returns them
# unchanged): the op kinds (str enums), ints, strings, bools.
_EXACT_AS_IS = frozenset({int, str, bool, UnaryKind, BinaryKind, CmpKind})


class LazyOp:
    """A node of the lazy graph (see the module docstring)."""

    __slots__ = ("__weakref__", "arg", "buffer", "device", "dtype", "guards", "key", "op",
                 "shape", "sig", "src", "traced")

    def __init__(self, op: str, src: tuple[LazyOp, ...], arg: Any, shape: tuple[int, ...],
                 dtype: DType, device: str, buffer: np.ndarray | None = None):
        # (this runs for every node built: the common cases are spelt out inline)
        if op == "const":
            arg = cast_scalar(arg, dtype)
        self.op = op
        self.src: tuple[LazyOp, ...] = src
        self.arg: Any = arg
        self.shape = shape
        self.dtype = dtype
        self.device = device
        self.buffer = buffer
        # a weak reference to the tensor whose autograd context made this node, if any: the
        # realize tells references from that graph apart from a user's (realize.py)
        self.traced: Any = None
        sig = self.sig = (op, arg if arg is None or arg.__class__ in _EXACT_AS_IS
                          else _exact(arg), shape, dtype.name)
        n = len(src)
        entry = ((sig,) if n == 0 else (sig, src[0].key) if n == 1 else
                 (sig, src[0].key, src[1].key) if n == 2 else (sig, *[s.key for s in src]))
        key = _STRUCTURES.get(entry)
        self.key: int = key if key is not None else _new_structure(entry)
        guards: tuple[Guard, ...] = ()
        for s in src:
            if s.guards:
                guards = s.guards if not guards else tuple(dict.fromkeys(guards + s.guards))
        self.guards = guards
        # a source of the same dtype on the same device passed this check already
        if (not n or src[0].dtype is not dtype or src[0].device != device) and not _holds(
                device, dtype):
            raise _unsupported(op, device, dtype)
        if (op == "unary" and dtype.itemsize == 8 and dtype.is_float
                and isinstance(arg, UnaryKind) and arg.value in _MATH):
            _check_math(arg.value, device, dtype)

    @classmethod
    def replica(cls, model: LazyOp, src: tuple[LazyOp, ...]) -> LazyOp:
        """`model`'s op over `src`, sources of the shapes, dtypes and devices of `model`'s
        (`step_template`): the signature and the construction checks are `model`'s, so only
        the structure key and the sources' guards are computed."""
        node = object.__new__(cls)
        node.op, node.src, node.arg, node.shape = model.op, src, model.arg, model.shape
        node.dtype, node.device, node.buffer, node.traced = model.dtype, model.device, None, None
        sig = node.sig = model.sig
        n = len(src)  # (`structure_key` inline: this runs for every node a replay builds)
        entry = ((sig, src[0].key) if n == 1 else (sig, src[0].key, src[1].key) if n == 2
                 else (sig, *[s.key for s in src]))
        key = _STRUCTURES.get(entry)
        node.key = key if key is not None else _new_structure(entry)
        guards: tuple[Guard, ...] = ()
        for s in src:
            if s.guards:
                guards = s.guards if not guards else tuple(dict.fromkeys(guards + s.guards))
        node.guards = guards
        return node

    @classmethod
    def leaf(cls, array: np.ndarray, dtype: DType, device: str) -> LazyOp:
        """A buffer leaf holding `array` (owned by the node from now on)."""
        return cls("buffer", (), None, tuple(array.shape), dtype, device, array)

    @classmethod
    def variable(cls, variable: Any, value: int, dtype: DType, device: str) -> LazyOp:
        """A 0-d leaf holding a bound `variable`'s value (`picograd.frontend.variable`): an
        input like a buffer leaf, but keyed by the variable, so its value is not part of the
        realize cache key."""
        return cls("var", (), variable, (), dtype, device, np.array(value, dtype.np))

    def become_buffer(self, array: np.ndarray) -> None:
        """Turn this node into a leaf holding `array` (its realized value)."""
        if (self.dtype.np.kind == "V" or self.dtype.storage_only) and array.dtype != self.dtype.np:
            # bfloat16, float8 (e5m2 is numpy kind "f"): the kernels' bits of it
            array = array.view(self.dtype.np)
        self.op, self.src, self.arg, self.buffer = "buffer", (), None, array
        sig = self.sig = ("buffer", None, self.shape, self.dtype.name)
        key = _STRUCTURES.get((sig,))
        self.key = key if key is not None else structure_key(sig, ())

    @property
    def realized(self) -> bool:
        return self.buffer is not None

    def __repr__(self) -> str:
        return f"LazyOp({self.op}, {self.arg!r}, shape={self.shape}, {self.dtype.name})"


# Shared constants (`shared_const`): (value's key, shape, dtype, device) -> a weak reference
# to the node; dead entries are dropped when the table is full.
_SHARED: dict[tuple, weakref.ref[LazyOp]] = {}
_MAX_SHARED = 4096


def shared_const(value: float | int | bool, shape: tuple[int, ...], dtype: DType,
                 device: str) -> LazyOp:
    """A constant node of `value` (a python scalar), `shape`, `dtype` and `device`, the same
    node for every call with an equal value while that node is alive and still a constant:
    hash-consing, so that the python numbers of a graph (`x * 0.5`, `x + 1e-5`, repeated
    through every layer) are one node each instead of one per use (fewer nodes to build and
    to match against a realize's plan). Only an op's operands are shared
    (`ElementwiseOps._operands`): an op never hands its operand back as its result, so no
    user's tensor holds a shared node (`assign` writes a node in place, which would write
    every graph that uses it). The table holds nodes weakly (a node it kept alive would
    count as referenced outside its graph, see `realize._referenced_elsewhere`), and a node
    that became a buffer (an intermediate a realize handed back) is replaced, not reused.
    Equal values are those equal as python numbers, with a float zero's sign apart (`-0.0`
    is its own constant; NaN, equal to nothing, is never shared)."""
    key = (value if value or value.__class__ is not float else (value, str(value)), shape,
           dtype, device)
    ref = _SHARED.get(key)
    node = ref() if ref is not None else None
    if node is None or node.op != "const":
        node = LazyOp("const", (), value, shape, dtype, device)
        if len(_SHARED) >= _MAX_SHARED:
            for stale in [k for k, r in _SHARED.items() if r() is None]:
                del _SHARED[stale]
            if len(_SHARED) >= _MAX_SHARED // 2:
                _SHARED.clear()
        _SHARED[key] = weakref.ref(node)
    return node


# Views whose elements are the source's values, each exactly once (no padding, no slicing).
_VALUE_VIEWS = ("reshape", "expand", "permute", "flip")


def view_source(node: LazyOp) -> LazyOp:
    """The node a chain of value views (reshape, expand, permute, flip) of `node` starts
    from: a value of the source is a value of the view, so a check of the source's values
    (a realized buffer, a constant) is one of the view's."""
    while node.op in _VALUE_VIEWS:
        node = node.src[0]
    return node


# A realized index leaf of at most this many elements is read on the host for its range
# (`static_range`); a larger one is checked on the device as a computed index is.
_RANGE_READ_ELEMENTS = 64
_RANGE_DEPTH = 8  # nodes deep: an index is a short chain (arange + a position, a view)


def static_range(node: LazyOp, depth: int = _RANGE_DEPTH) -> tuple[int, int] | None:
    """Bounds `(low, high)` that every element of the integer node's value lies in, known
    before it is computed, or None when they are not: a small realized leaf by its values,
    a bound variable by its range (`bind` refuses a value outside it), an int constant,
    value views of these, casts to an integer type that holds the source's range, and
    add / sub / max / min of two such values when the result's bounds fit the dtype (so no
    element wraps). A computed index inside bounds like these needs no range check on the
    device (`IndexOps._checked_index`)."""
    op = node.op
    if node.dtype.is_float or depth == 0:
        return None
    if op == "buffer":
        values = node.buffer
        if values is None or not 0 < values.size <= _RANGE_READ_ELEMENTS:
            return None
        return int(values.min()), int(values.max())
    if op == "var":
        return node.arg.min, node.arg.max
    if op == "const":
        return (int(node.arg), int(node.arg))
    if op in _VALUE_VIEWS or op == "contiguous":
        return static_range(node.src[0], depth - 1)
    if op == "cast":
        inner = static_range(node.src[0], depth - 1)
    elif op == "binary" and node.arg in _RANGE_RULES:
        a = static_range(node.src[0], depth - 1)
        b = static_range(node.src[1], depth - 1) if a is not None else None
        inner = None if a is None or b is None else _RANGE_RULES[node.arg](a, b)
    else:
        return None
    if inner is None or not node.dtype.min <= inner[0] <= inner[1] <= node.dtype.max:
        return None
    return inner


# binary kind -> the bounds of its result from its operands' (as exact integers)
_RANGE_RULES: dict[BinaryKind, Any] = {
    BinaryKind.ADD: lambda a, b: (a[0] + b[0], a[1] + b[1]),
    BinaryKind.SUB: lambda a, b: (a[0] - b[1], a[1] - b[0]),
    BinaryKind.MAX: lambda a, b: (max(a[0], b[0]), max(a[1], b[1])),
    BinaryKind.MIN: lambda a, b: (min(a[0], b[0]), min(a[1], b[1])),
}


class Guard:
    """A check of values computed on the device, which cannot be read before they are:
    `node` (pending until realized) holds what the check reads, and `failure` judges it when
    a value that depends on the checked op is realized. `where` is the user's line of the
    op. Subclasses say what is checked (`problem`) and the error it raises."""

    __slots__ = ("node", "op", "where")
    error: type[PicogradError] = PicogradError

    def __init__(self, node: LazyOp, op: str):
        self.node, self.op = node, op
        self.where = user_location()

    def problem(self, values: np.ndarray) -> str | None:
        """What is wrong with the realized `values`, or None."""
        raise NotImplementedError

    def failure(self, values: np.ndarray | None = None) -> PicogradError | None:
        """The error for the realized values (`values`, by default the node's buffer), or
        None when they pass."""
        if values is None:
            values = self.node.buffer
        assert values is not None
        problem = self.problem(values)
        if problem is None:
            return None
        return self.error(f"{self.op}: {problem}; computed on the device, it was checked "
                          f"when a result that depends on it was read\n  at {self.where}")


class RangeGuard(Guard):
    """An index's range: `node` holds its (min, max), which must lie in `[low, size)`."""

    __slots__ = ("low", "noun", "size")
    error = IndexRangeError

    def __init__(self, node: LazyOp, op: str, noun: str, low: int, size: int):
        super().__init__(node, op)
        self.noun, self.low, self.size = noun, low, size

    def problem(self, values: np.ndarray) -> str | None:
        low, high = (int(v) for v in values)
        if self.low <= low and high < self.size:
            return None
        bad = high if high >= self.size else low
        return (f"{self.noun} {bad} is out of bounds for a dim of size {self.size} "
                f"({self.noun} values lie in [{low}, {high}])")


class ZeroDivisorGuard(Guard):
    """An integer divisor: `node` holds whether any element is zero."""

    __slots__ = ()
    error = ZeroDivisorError

    def problem(self, values: np.ndarray) -> str | None:
        return "integer division by zero (the divisor holds a zero)" if values.any() else None


@functools.cache
def _holds(device: str, dtype: DType) -> bool:
    """Whether `device`'s compile target supports `dtype` (True for a device that is not
    present here: using it fails later with the reason)."""
    try:
        renderer = get_device(device).renderer
    except (PicogradError, ImportError, OSError):
        return True
    return capabilities(renderer).supports(dtype.ir)


_MATH = frozenset(TRANSCENDENTALS)


def _check_math(function: str, device: str, dtype: DType) -> None:
    """Raise a DTypeError where `device`'s target cannot compute `function` on `dtype` (PTX
    has no float64 exp, log or sin: no hardware approximation to build them from)."""
    try:
        renderer = get_device(device).renderer
    except (PicogradError, ImportError, OSError):
        return
    if not capabilities(renderer).computes(function, dtype.ir):
        raise dtype_error(function, f"device {device} cannot compute {function} on "
                                    f"{dtype.name} (its {renderer} target has no {dtype.name} "
                                    f"{function}); cast to float32 first, e.g. .float()")


def _unsupported(op: str, device: str, dtype: DType) -> PicogradError:
    target = get_device(device).renderer
    held = ", ".join(t.name for t in DTYPES if capabilities(target).supports(t.ir))
    return dtype_error(op, f"device {device} cannot hold {dtype.name} tensors (its {target} "
                           f"target supports {held})")


def _located(cls: type[PicogradError], message: str) -> PicogradError:
    return cls(f"{message}\n  at {user_location()}")


def shape_error(op: str, message: str) -> PicogradError:
    """A ShapeError for `op`, ending with the user's source line."""
    return _located(ShapeError, f"{op}: {message}")


def index_error(op: str, message: str) -> PicogradError:
    """An IndexRangeError for `op`, ending with the user's source line."""
    return _located(IndexRangeError, f"{op}: {message}")


def dim_error(op: str, message: str) -> PicogradError:
    """A DimRangeError (a ShapeError that is also torch's IndexError) for a dim or int index
    out of range, ending with the user's source line."""
    return _located(DimRangeError, f"{op}: {message}")


def argument_type_error(op: str, message: str) -> PicogradError:
    """An ArgumentTypeError (a ShapeError that is also torch's TypeError) for an argument of
    the wrong Python type, ending with the user's source line."""
    return _located(ArgumentTypeError, f"{op}: {message}")


def dtype_error(op: str, message: str) -> PicogradError:
    return _located(DTypeError, f"{op}: {message}")


def unimplemented_error(op: str, message: str, dtype: bool = False) -> PicogradError:
    """An UnimplementedCaseError (or, for a dtype, an UnimplementedDTypeError): a case
    torch raises NotImplementedError for, ending with the user's source line."""
    return _located(UnimplementedDTypeError if dtype else UnimplementedCaseError,
                    f"{op}: {message}")
