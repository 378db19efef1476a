"""`Recording`: lazy nodes built once over placeholder leaves, replayed over real inputs.

    slots = placeholders([(h.shape, h.dtype, h.device), (x.shape, x.dtype, x.device)])
    outs = <nodes built over the slots by the Tensor methods>
    rec = Recording(slots, outs)
    rec.replay([h._node, x._node])  # the same nodes over h and x: [LazyOp, ...]

Why: through the Tensor methods a node costs ~4 us (broadcasting, dtype promotion,
checks), and code that builds the same few dozen nodes many times over inputs of the same
shapes (a recurrent layer's steps, a cat of 100 states) pays it every time. A replay
clones the recorded nodes (`LazyOp.replica`): their signatures were computed and their
checks passed when they were recorded, so a clone only looks up its structure key and
collects its sources' guards (~1 us). What a replay builds is what the recording built,
node for node, so it shares the realize cache and the compiled programs with the code it
stands for.

Recorded nodes that depend on no placeholder (a constant, a view of a weight) are built
once and shared by every replay when `share_constants` (a recording that lives for one
graph, as a recurrent layer's step); a recording kept across graphs replays them too and
shares only leaves that hold data: a shared pending node is referenced from outside each
graph that uses it, so a realize would hand it a buffer of its own, which later graphs
would then read as an input. A recording whose nodes made index range checks
(`Guard`s of their own) cannot be replayed (`replayable` is False): a guard reads a node
of the recording, not of the replay.
"""

from __future__ import annotations

from collections.abc import Sequence

from picograd.frontend.dtype import DType
from picograd.frontend.lazy import LazyOp


class Recording:
    """The nodes between `placeholders` and `outs` as a program over slots: the inputs
    first, then the shared nodes (`_externals`: those that depend on no input, or only the
    leaves holding data without `share_constants`), then one slot per replayed op (`_ops`:
    the recorded node and the slots of its sources), sources first."""

    __slots__ = ("_externals", "_ops", "_outputs")

    def __init__(self, placeholders: Sequence[LazyOp], outs: Sequence[LazyOp],
                 share_constants: bool = True):
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
            depends[id(node)] = any(depends[id(s)] for s in node.src) or (
                not share_constants and node.buffer is None and node.op != "var")
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

    @property
    def replayable(self) -> bool:
        return self._ops is not None

    def replay(self, inputs: Sequence[LazyOp]) -> list[LazyOp]:
        """The recorded outputs built over `inputs` (nodes of the placeholders' shapes,
        dtypes and devices, in their order; the caller checks that)."""
        assert self._ops is not None, "a recording with guards of its own is not replayed"
        env = list(inputs)
        env.extend(self._externals)
        append = env.append
        replica = LazyOp.replica
        for model, src in self._ops:
            append(replica(model, tuple([env[i] for i in src])))
        return [env[i] for i in self._outputs]


def placeholders(like: Sequence[tuple[tuple[int, ...], DType, str]]) -> list[LazyOp]:
    """One placeholder leaf per (shape, dtype, device), numbered by position."""
    return [LazyOp("placeholder", (), i, shape, dtype, device)
            for i, (shape, dtype, device) in enumerate(like)]
