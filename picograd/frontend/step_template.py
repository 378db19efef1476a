"""`StepTemplate`: the lazy graph of one step of a Python loop, built once by the Tensor
methods and replayed over each step's inputs.

    cell = StepTemplate(lambda h, x: ((h @ w + x).tanh(),), h0, xs[0])
    for x in xs:
        (h,) = cell(h, x)           # the nodes `(h @ w + x).tanh()` builds, over h and x

Why: a recurrent layer's loop builds the same few dozen nodes at every step, and through
the Tensor methods each node costs ~4 us (broadcasting, dtype promotion, checks); an LSTM
of 100 steps and 2 layers builds ~15,000 of them, forward and backward, at every eager
call (~70 ms beside ~150 ms of kernels on a 2-core Zen 4). A replay clones the recorded
nodes: their signatures were computed and their checks passed when they were recorded, so
a clone only looks up its structure key and collects its sources' guards (~1 us).

What a replay builds is what the recording built over pending inputs of the same shapes,
dtypes and device, node for node, so it shares the realize cache and the compiled programs
with the plain loop. Recorded nodes that depend on no input (a constant, a view of a
weight) are built once and shared by every replay. Two things fall back to calling the
step function itself: inputs unlike the recorded ones (another shape, dtype or device),
and grad mode on with an input that requires grad (a replay records no autograd context).
A step whose recording made index range checks (`Guard`s of its own) is never replayed:
a guard reads a node of the recording, not of the replay.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from picograd.frontend.grad_mode import is_grad_enabled, no_grad
from picograd.frontend.lazy import LazyOp
from picograd.frontend.tensor import Tensor


class StepTemplate:
    """`fn(*inputs) -> tuple of Tensors`, recorded on placeholders shaped like `like`
    (module docstring). Calling the template with tensors like those gives what `fn` would
    give, built by replaying the recording."""

    __slots__ = ("_externals", "_fn", "_inputs", "_ops", "_outputs")

    def __init__(self, fn: Callable[..., Sequence[Tensor]], *like: Tensor):
        self._fn = fn
        self._inputs = tuple((t.shape, t.dtype, t.device) for t in like)
        placeholders = [LazyOp("placeholder", (), i, t.shape, t.dtype, t.device)
                        for i, t in enumerate(like)]
        with no_grad():
            outs = fn(*[Tensor._from_node(p) for p in placeholders])
        self._record(placeholders, [o._node for o in outs])

    def _record(self, placeholders: list[LazyOp], outs: list[LazyOp]) -> None:
        """The recording as a program over slots: the inputs first, then the nodes that
        depend on no input (`_externals`), then one slot per replayed op (`_ops`: the
        recorded node and the slots of its sources), in an order that has sources first."""
        depends: dict[int, bool] = {id(p): True for p in placeholders}
        order: list[LazyOp] = []
        stack: list[tuple[LazyOp, bool]] = [(o, False) for o in reversed(outs)]
        while stack:  # post-order walk: which nodes depend on an input
            node, expanded = stack.pop()
            if id(node) in depends:
                continue
            if not expanded:
                stack.append((node, True))
                stack.extend((s, False) for s in node.src if id(s) not in depends)
                continue
            depends[id(node)] = any(depends[id(s)] for s in node.src)
            if depends[id(node)]:
                order.append(node)
        slot = {id(p): i for i, p in enumerate(placeholders)}
        externals: list[LazyOp] = []
        for node in [*(s for n in order for s in n.src), *outs]:
            if not depends[id(node)] and id(node) not in slot:
                slot[id(node)] = len(placeholders) + len(externals)
                externals.append(node)
        for i, node in enumerate(order):
            slot[id(node)] = len(placeholders) + len(externals) + i
        self._externals = tuple(externals)
        self._outputs = tuple(slot[id(o)] for o in outs)
        # a node's guards are its sources' unless it made an index check of its own
        own_guards = any(g not in {g for s in n.src for g in s.guards}
                         for n in order for g in n.guards)
        self._ops = None if own_guards else tuple(
            (n, tuple(slot[id(s)] for s in n.src)) for n in order)

    def __call__(self, *inputs: Tensor) -> tuple[Tensor, ...]:
        if (self._ops is None or len(inputs) != len(self._inputs)
                or any((t.shape, t.dtype, t.device) != want
                       for t, want in zip(inputs, self._inputs, strict=True))
                or (is_grad_enabled() and any(t.requires_grad for t in inputs))):
            return tuple(self._fn(*inputs))
        env = [t._node for t in inputs]
        env.extend(self._externals)
        append = env.append
        replica = LazyOp.replica
        for model, src in self._ops:
            append(replica(model, tuple([env[i] for i in src])))
        return tuple(Tensor._from_node(env[i]) for i in self._outputs)
