"""`TensorBase`: what every op mixin builds on — the node a tensor refers to, its metadata,
and making new lazy nodes. `Tensor` (tensor.py) adds creation and realization on top of
the op mixins (ops_movement.py, ops_elementwise.py, ops_reduce.py)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Self

import numpy as np

from picograd.errors import PicogradError
from picograd.frontend import capture
from picograd.frontend.dtype import DType, cast_scalar, first_overflow
from picograd.frontend.grad_mode import GRAD_MODES, Context, is_grad_enabled
from picograd.frontend.lazy import (
    Guard,
    LazyOp,
    dim_error,
    dtype_error,
    shape_error,
    shared_const,
)
from picograd.frontend.realize import realize

Scalar = float | int | bool


def prod(shape: Iterable[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def shape_arg(op: str, args: Sequence[Any]) -> tuple[int, ...]:
    """`f(2, 3)` and `f((2, 3))` both mean the shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], tuple | list):
        args = tuple(args[0])
    for d in args:  # (plain ints, the common case, are checked by class alone)
        if d.__class__ is not int and (not isinstance(d, int) or isinstance(d, bool)):
            raise shape_error(op, f"a shape must be ints, got {tuple(args)}")
    return tuple(args)


def size_arg(op: str, args: Sequence[Any]) -> tuple[int, ...]:
    """A new tensor's shape (as `shape_arg`); ShapeError naming a negative size."""
    shape = shape_arg(op, args)
    for dim, size in enumerate(shape):
        if size < 0:
            raise shape_error(op, f"negative dimension in shape {shape} (size {size} at dim "
                                  f"{dim})")
    return shape


def fill_scalar(op: str, value: Scalar, dtype: DType) -> Scalar:
    """A python fill value (pad, masked_fill) as a constant of `dtype`, by torch's scalar
    rule (`first_overflow`): an integer dtype refuses NaN, inf and values beyond its range
    with a DTypeError (torch's "value cannot be converted ... without overflow"); a negative
    int wraps into an unsigned dtype (uint8 -1 is 255), a float is truncated."""
    if first_overflow(np.array([value]), dtype) is not None:
        raise overflow_error(op, repr(value), dtype)
    return cast_scalar(value, dtype)


def overflow_error(op: str, value: str, dtype: DType) -> PicogradError:
    """The DTypeError of a python value that `dtype` cannot hold (torch's "value cannot be
    converted to type ... without overflow")."""
    return dtype_error(op, f"value {value} cannot be converted to {dtype.name} without "
                           f"overflow ({dtype.name} holds {dtype.min} to {dtype.max})")


def normalize_axis(op: str, axis: int, ndim: int, shape: tuple[int, ...]) -> int:
    if not -ndim <= axis < ndim:
        raise dim_error(op, f"axis {axis} is out of range for shape {shape} ({ndim} dims)")
    return axis % ndim


def broadcast_shape(op: str, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcast of two shapes; ShapeError naming `op` and both shapes."""
    if a == b:
        return a
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(pa, pb, strict=True):
        if x != y and x != 1 and y != 1:
            raise shape_error(op, f"shapes {a} and {b} cannot be broadcast together")
        out.append(y if x == 1 else x)
    return tuple(out)


# the ops a storage-only dtype (float8) allows: they move or pick its bits, computing nothing
_STORAGE_OPS = frozenset({"bitcast", "reshape", "expand", "permute", "pad", "slice", "flip",
                          "contiguous", "where", "gather"})


class TensorBase:
    """A lazy tensor: a reference to a `LazyOp` node. Ops return new tensors.

    Autograd state (see autograd.py): `requires_grad`, `grad` (a tensor once a backward
    reached this leaf) and `_ctx` (how a tensor that requires grad was made; None on leaves).
    """

    __slots__ = ("__weakref__", "_ctx", "_node", "grad", "requires_grad")

    _node: LazyOp
    _ctx: Context | None
    grad: Any
    requires_grad: bool

    @classmethod
    def _from_node(cls, node: LazyOp) -> Self:
        t = object.__new__(cls)
        t._node, t._ctx, t.grad, t.requires_grad = node, None, None, False
        return t

    def _make(self, op: str, src: tuple[TensorBase, ...], arg: Any, shape: tuple[int, ...],
              dtype: DType | None = None) -> Self:
        """A new tensor whose node applies `op` to the nodes of `src` (same device); it
        records its context for autograd when grad mode is on and a source requires grad."""
        n = len(src)  # (the common arities spelt out: this runs for every node built)
        nodes = ((src[0]._node,) if n == 1 else (src[0]._node, src[1]._node) if n == 2 else
                 tuple([s._node for s in src]))
        mine = self._node
        if mine.dtype.storage_only and op not in _STORAGE_OPS:
            raise dtype_error(op, f"not implemented for {mine.dtype.name} (as in torch, float8 "
                              "is storage with casts and float8 * float8, abs, ==, !=, "
                              "where): cast it to float32 first")
        node = LazyOp(op, nodes, arg, shape, mine.dtype if dtype is None else dtype,
                      mine.device)
        out = object.__new__(type(self))  # (`_from_node`, inline)
        out._node, out._ctx, out.grad, out.requires_grad = node, None, None, False
        if GRAD_MODES[-1] and (src[0].requires_grad if n == 1 else
                               src[0].requires_grad or src[1].requires_grad if n == 2 else
                               any(s.requires_grad for s in src)):
            out.requires_grad = True
            out._ctx = Context(op, arg, src)  # type: ignore[arg-type]
            node.traced = weakref.ref(out)
        return out

    def _view_node(self, node: LazyOp, op: str, arg: Any) -> Self:
        """A tensor of `node` (a view of this tensor's value that a movement op made
        without a node of its own over this one: a reshape of a reshape is one reshape of
        the first one's source) recorded for autograd as `op(arg)` of this tensor, as
        `_make` would, so its backward is that op's."""
        out = object.__new__(type(self))
        out._node, out._ctx, out.grad, out.requires_grad = node, None, None, False
        if self.requires_grad and GRAD_MODES[-1]:
            out.requires_grad = True
            out._ctx = Context(op, arg, (self,))  # type: ignore[arg-type]
            node.traced = weakref.ref(out)
        return out

    def _carrying(self, guard: Guard) -> Self:
        """This tensor's value as a new node that carries `guard` (`lazy.Guard`), so that
        every result computed from it checks it when realized."""
        out = self._make("reshape", (self,), None, self.shape)
        out._node.guards = (*out._node.guards, guard)
        return out

    def _take_node(self, new: LazyOp) -> None:
        """Point this tensor at `new` (a user's in-place op: `x[i] = v`, `fill_`,
        `load_state_dict`); a jit replay that read the old node captures again
        (`capture.note_replaced`). Inside a capture, a tensor that holds realized values (a
        KV cache, a parameter) is written in place instead, as `Tensor.assign` writes: a
        replay runs no Python, so it could not point the tensor at a new node, but it redoes
        recorded writes."""
        old = self._node
        recorder = capture.recorder()
        if recorder is not None and old.op == "buffer" and new.shape == old.shape:
            realize(type(self)._from_node(new))
            recorder.on_assign(old, new)
            assert new.buffer is not None
            old.become_buffer(new.buffer)
            return
        capture.note_replaced(old)
        self._node = new

    def _with_gradient(self, src: tuple[TensorBase | None, ...],
                       rule: Callable[[Any], tuple[Any, ...]]) -> Self:
        """This tensor's value as a new tensor whose backward is `rule`: given the output
        gradient, one gradient (or None) per entry of `src`. A composite op builds its value
        under `no_grad()` and returns it through here, so autograd differentiates the op as a
        whole (a convolution's input gradient is a transposed convolution) instead of through
        its decomposition. None entries of `src` (an absent bias) get no gradient."""
        out = type(self)._from_node(self._node)
        sources = tuple(s for s in src if s is not None)
        if is_grad_enabled() and any(s.requires_grad for s in sources):

            def present(g: Any) -> tuple[Any, ...]:
                grads = rule(g)
                assert len(grads) == len(src)
                return tuple(d for d, s in zip(grads, src, strict=True) if s is not None)

            out.requires_grad = True
            out._ctx = Context("custom", present, sources)  # type: ignore[arg-type]
            out._node.traced = weakref.ref(out)
        return out

    def _const(self, value: Scalar, shape: tuple[int, ...], dtype: DType) -> Self:
        """A tensor of `shape` filled with `value` (a pg_tensor.const), on this device."""
        node = LazyOp("const", (), value, shape, dtype, self._node.device)
        return type(self)._from_node(node)

    def _operand_const(self, value: Scalar, shape: tuple[int, ...], dtype: DType) -> Self:
        """A python number operand of an op as a tensor of `shape`: the shared constant node
        of its value (`lazy.shared_const`; the op must not return it as its result)."""
        node = shared_const(value, shape, dtype, self._node.device)
        out = object.__new__(type(self))  # (`_from_node`, inline)
        out._node, out._ctx, out.grad, out.requires_grad = node, None, None, False
        return out

    # ── metadata ────────────────────────────────────────────────────────────

    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.shape

    @property
    def dtype(self) -> DType:
        return self._node.dtype

    @property
    def device(self) -> str:
        """The canonical device name ("CPU:LLVM", "CPU:C", ...)."""
        return self._node.device

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    def numel(self) -> int:
        return prod(self._node.shape)

    def __len__(self) -> int:
        if not self._node.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._node.shape[0]
