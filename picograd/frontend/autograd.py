"""Reverse-mode autograd over the lazy graph's primitives.

Every op a user calls is a composition of the pg_tensor primitives that `TensorBase._make`
creates (unary, binary, cmp, where, cast, reduce, reshape, expand, permute, pad, slice,
flip). When grad mode is on and a source requires grad, `_make` records on the new tensor
its `Context`: the primitive, its parameter and its source tensors. `backward()` walks the
recorded graph in reverse topological order and applies each primitive's rule below, so every
composite op (matmul, mean, softmax...) is differentiated through its decomposition. A
composite op whose decomposition differentiates badly (conv2d: its input gradient would be a
sum of one padded tap per kernel position) gives its own rule instead, through
`TensorBase._with_gradient` (recorded as the `custom` context).

Gradients are lazy tensors like any other: nothing computes until they (or something built on
them, like an optimiser's update) are realized, so the forward and backward graphs of a
training step fuse into one compiled program.

    with no_grad(): ...          build graphs that record nothing (optimiser updates, eval;
                                 defined in grad_mode.py, with the Context record)
    t.backward(gradient=None)    accumulate d(t)/d(leaf) into `leaf.grad`
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from picograd.dialects.pg import BinaryKind, ReduceKind, UnaryKind
from picograd.frontend.gc_pause import gc_paused
from picograd.frontend.grad_mode import (
    AutogradError,
    Context,
    enable_grad,
    is_grad_enabled,
    no_grad,
)
from picograd.frontend.lazy import LazyOp, user_location

if TYPE_CHECKING:
    # The rules use only the ops of MathOps' chain; `picograd.frontend.tensor` imports this
    # module, so naming `Tensor` here would make a circle.
    from picograd.frontend.ops_math import MathOps as Tensor

__all__ = ["AutogradError", "Context", "backward", "enable_grad", "is_grad_enabled", "no_grad",
           "pending_roots", "pending_writes"]


# Tensors `backward()` was called on since the last optimiser step: `Optimizer.step`
# realizes them together with the updated parameters, so `loss.item()` after a step costs
# nothing and the forward pass is not computed twice.
pending_roots: list[Any] = []  # picograd Tensors

# Buffers updated lazily by a forward pass (BatchNorm's running statistics), as (leaf node
# the buffer lives in, tensor now pointing at the pending new value): `Optimizer.step`
# realizes the values in its one graph and writes them back into those leaves with
# `assign`, so node identity stays stable and `picograd.jit` replays the update.
pending_writes: list[tuple[LazyOp, Any]] = []  # (leaf, a picograd Tensor)


# ── the rules: (context, output, output gradient) -> one gradient per source ─

Grads = tuple["Tensor | None", ...]


def _unary(ctx: Context, out: Tensor, g: Tensor) -> Grads:
    (x,) = ctx.src
    kind: UnaryKind = ctx.arg
    if kind == UnaryKind.NEG:
        return (-g,)
    if kind == UnaryKind.EXP:
        return (g * out,)
    if kind == UnaryKind.EXP2:
        return (g * out * math.log(2),)
    if kind == UnaryKind.LOG:
        return (g / x,)
    if kind == UnaryKind.LOG2:
        return (g / (x * math.log(2)),)
    if kind == UnaryKind.SQRT:
        return (g / (out * 2),)
    if kind == UnaryKind.SIN:
        # Tensor.cos, 1 - 2 sin(x/2)^2: x/2 is exact, where x + pi/2 rounds (at 1e6 the
        # gradient would be off in the third digit)
        return (g * x.cos(),)
    if kind == UnaryKind.RECIP:
        return (-g * out * out,)
    return (None,)  # not: no gradient


def _tie_share(x: Tensor, y: Tensor) -> Tensor:
    """1 where x wins a max against y, 1/2 on a tie, 0 where it loses (torch's rule), in
    x's dtype (so a float16 gradient stays float16)."""
    return (x > y).where(1.0, (x == y).where(0.5, 0.0)).cast(x.dtype)


def _binary(ctx: Context, out: Tensor, g: Tensor) -> Grads:
    x, y = ctx.src
    kind: BinaryKind = ctx.arg
    if kind == BinaryKind.ADD:
        return g, g
    if kind == BinaryKind.SUB:
        return g, -g
    if kind == BinaryKind.MUL:
        return g * y, g * x
    if kind == BinaryKind.DIV:
        return g / y, -g * x / (y * y)
    if kind == BinaryKind.MAX:
        return g * _tie_share(x, y), g * _tie_share(y, x)
    if kind == BinaryKind.MIN:
        return g * _tie_share(y, x), g * _tie_share(x, y)
    return None, None  # integer / bitwise ops


def _where(ctx: Context, out: Tensor, g: Tensor) -> Grads:
    cond = ctx.src[0]
    return None, cond.where(g, 0.0), cond.where(0.0, g)


def _cast(ctx: Context, out: Tensor, g: Tensor) -> Grads:
    (x,) = ctx.src
    return (g.cast(x.dtype) if x.dtype.is_float else None,)


def _reduce(ctx: Context, out: Tensor, g: Tensor) -> Grads:
    (x,) = ctx.src
    kind, axes = ctx.arg
    spread = g.expand(x.shape)
    if kind == ReduceKind.SUM:
        return (spread,)
    if kind in (ReduceKind.MAX, ReduceKind.MIN):
        # the gradient goes to the elements equal to the result, shared among ties; a
        # reduction of every axis that found a NaN gives it to the NaNs (torch's max() does;
        # its amax(dim), like a partial reduction here, gives NaN to the whole row)
        result = out.expand(x.shape)
        hit = x == result
        if len(axes) == x.ndim:
            hit = hit | (x.isnan() & result.isnan())
        hit = hit.cast(g.dtype)
        return (spread * hit / hit.sum(axes, keepdim=True).expand(x.shape),)
    return (spread * out.expand(x.shape) / x,)  # prod (inputs without zeros)


def _expand(ctx: Context, out: Tensor, g: Tensor) -> Grads:
    (x,) = ctx.src
    axes = tuple(i for i, (a, b) in enumerate(zip(x.shape, out.shape, strict=True)) if a != b)
    return (g.sum(axes, keepdim=True) if axes else g,)


def _permute(ctx: Context, out: Tensor, g: Tensor) -> Grads:
    inverse = sorted(range(len(ctx.arg)), key=lambda i: ctx.arg[i])
    return (g.permute(tuple(inverse)),)


def _pad(ctx: Context, out: Tensor, g: Tensor) -> Grads:
    (x,) = ctx.src
    low, _, _ = ctx.arg
    return (g._slice(tuple(low), (1,) * x.ndim, x.shape),)


def _slice(ctx: Context, out: Tensor, g: Tensor) -> Grads:
    """Scatter `g` back to the strided positions it was read from: per dim of step s, give
    every element s-1 zeros after it, then place the result at the slice's start."""
    (x,) = ctx.src
    start, step = ctx.arg
    for dim, s in enumerate(step):
        if s > 1 and g.shape[dim] > 0:
            shape = g.shape
            g = g.unsqueeze(dim + 1)
            g = g.pad(tuple((0, s - 1) if i == dim + 1 else (0, 0) for i in range(g.ndim)))
            g = g.reshape((*shape[:dim], shape[dim] * s, *shape[dim + 1:]))
    pads = []
    for dim, (n, b) in enumerate(zip(x.shape, start, strict=True)):
        end = b + g.shape[dim]
        if end > n:  # the zeros after the last strided element run past the input
            g = g._slice(tuple(0 for _ in g.shape), (1,) * g.ndim,
                         (*g.shape[:dim], n - b, *g.shape[dim + 1:]))
            end = n
        pads.append((b, n - end))
    return (g.pad(tuple(pads)),)


_RULES: dict[str, Callable[[Context, Any, Any], Grads]] = {
    "unary": _unary,
    "binary": _binary,
    "cmp": lambda ctx, out, g: (None, None),
    "where": _where,
    "cast": _cast,
    "bitcast": lambda ctx, out, g: (None,),  # Tensor.bitcast refuses inputs requiring grad
    "gather": lambda ctx, out, g: (g._scatter_add(ctx.arg, ctx.src[1],
                                                  ctx.src[0].shape[ctx.arg]), None),
    "scatter_add": lambda ctx, out, g: (g, None, g._gather_along(ctx.arg, ctx.src[1])),
    "reduce": _reduce,
    "reshape": lambda ctx, out, g: (g.reshape(ctx.src[0].shape),),
    "expand": _expand,
    "permute": _permute,
    "pad": _pad,
    "slice": _slice,
    "flip": lambda ctx, out, g: (g.flip(ctx.arg),),
    "contiguous": lambda ctx, out, g: (g,),
    "custom": lambda ctx, out, g: ctx.arg(g),  # a composite op's own rule (_with_gradient)
    "freed": lambda ctx, out, g: _freed_graph(out),
}

# What a non-leaf's context becomes once a backward() without retain_graph went through it.
FREED = Context("freed", None, ())


def _freed_graph(out: Tensor) -> Grads:
    raise AutogradError(f"backward: the graph of a tensor of shape {out.shape} was freed by an "
                        "earlier backward() (as torch does); pass retain_graph=True to that "
                        f"first backward to go through the graph again\n  at {user_location()}")


# ── the walk ─────────────────────────────────────────────────────────────────


def _topological(root: Tensor) -> list[Tensor]:
    """Every tensor `root` was computed from (through recorded contexts), sources first."""
    order: list[Tensor] = []
    seen: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(root, False)]
    while stack:
        t, expanded = stack.pop()
        if expanded:
            order.append(t)
            continue
        if id(t) in seen:
            continue
        seen.add(id(t))
        stack.append((t, True))
        if t._ctx is not None:
            stack.extend((s, False) for s in t._ctx.src if s.requires_grad and id(s) not in seen)
    return order


def backward(root: Tensor, gradient: Tensor | None, retain_graph: bool = False) -> None:
    """Accumulate d(root)/d(leaf) into every leaf that requires grad (see Tensor.backward).
    Unless `retain_graph`, the contexts it went through are freed afterwards (as torch frees
    saved tensors): the forward's tensors are no longer kept alive by `root`, so a later
    realize neither holds nor stores them for a second backward, which raises instead."""
    if not root.requires_grad:
        raise AutogradError("backward: the tensor does not require grad and has no grad_fn "
                            f"(shape {root.shape}); set requires_grad=True on an input\n"
                            f"  at {user_location()}")
    if gradient is None:
        if root.numel() != 1:
            raise AutogradError(f"backward: a gradient is needed for a non-scalar tensor of "
                                f"shape {root.shape}\n  at {user_location()}")
        gradient = root._const(1.0, root.shape, root.dtype)
    elif gradient.shape != root.shape:
        raise AutogradError(f"backward: gradient shape {gradient.shape} does not match the "
                            f"tensor's shape {root.shape}\n  at {user_location()}")
    with gc_paused(promote=True):
        order = _accumulate(root, gradient)
        if not retain_graph:
            _free(order)
    pending_roots.append(root)


def _accumulate(root: Tensor, gradient: Tensor) -> list[Tensor]:
    """Walk the graph of `root` backwards from `gradient`, adding each leaf's gradient to
    its `.grad`; the walk's order (sources first)."""
    grads: dict[int, Tensor] = {id(root): gradient}
    order = _topological(root)
    with no_grad():
        for t in reversed(order):
            g = grads.pop(id(t), None)
            if g is None:
                continue
            ctx = t._ctx
            if ctx is None:  # a leaf
                g = g.cast(t.dtype)
                t.grad = g if t.grad is None else t.grad + g
                continue
            for src, sg in zip(ctx.src, _RULES[ctx.op](ctx, t, g), strict=True):
                if sg is None or not src.requires_grad:
                    continue
                previous = grads.get(id(src))
                grads[id(src)] = sg if previous is None else previous + sg
    return order


def _free(order: list[Tensor]) -> None:
    """Free the graph of `order`: each non-leaf's context becomes FREED."""
    for t in order:
        if t._ctx is not None:
            t._ctx = FREED
