"""Running a model's graph once per distinct input signature, then replaying it.

A model called again with inputs of the shapes and dtypes it has seen needs neither its
nodes translated again nor a graph built: `ShapeReplays` keeps one `picograd.jit` per input
signature (the shapes, dtypes and device of every input, so a dynamic `batch` or
`sequence` dim compiles once per value it takes), and from the third call of a signature
on the captured programs run on the new inputs' buffers.

What a replay cannot redo is a value that was read back to the host while the graph was
translated (a Reshape whose shape is computed on the device, an If on a device condition,
NonZero's count): the replay would keep the first capture's value. A run that read one
back (`ReadBacks`) marks the model as data-dependent, and such a model is translated on
every call, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from picograd.frontend.tensor import Tensor
from picograd.jit_replay import Jit, JitError, jit, jit_running

Signature = tuple[tuple[tuple[int, ...], str, str], ...]


class ReadBacks:
    """Counts the device values read back to the host while a graph is translated."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


def signature(tensors: Sequence[Tensor]) -> Signature:
    return tuple((tuple(t.shape), t.dtype.name, t.device) for t in tensors)


class ShapeReplays:
    """`run(tensors)` as `translate(tensors)` (a dict of output values: Tensors or host
    arrays), replayed per input signature while no translation read a device value back."""

    def __init__(self, translate: Callable[[list[Tensor]], dict[str, Any]],
                 read_backs: ReadBacks):
        self._translate, self._read_backs = translate, read_backs
        self._replays: dict[Signature, Jit] = {}
        self.data_dependent = False
        self.host_only: set[Signature] = set()  # every output folded on the host

    def __len__(self) -> int:
        """How many signatures have a replay (each compiled once)."""
        return len(self._replays)

    def run(self, tensors: list[Tensor]) -> dict[str, Any]:
        key = signature(tensors)
        if (self.data_dependent or key in self.host_only or _shared(tensors)
                or jit_running()):
            # a jit refuses two arguments of one buffer, and a call inside the user's own
            # pg.jit is captured by that one
            return self._translate(tensors)
        replay = self._replays.get(key)
        if replay is None:
            replay = self._replays[key] = jit(self._translated)
        before = self._read_backs.count
        try:
            out = replay(*tensors)
        except JitError:
            # nothing to capture: every output was folded on the host (no realize ran)
            self._replays.pop(key, None)
            self.host_only.add(key)
            return self._translate(tensors)
        if self._read_backs.count != before:
            self.data_dependent = True
            self._replays.clear()
        return out

    def _translated(self, *tensors: Tensor) -> dict[str, Any]:
        out = self._translate(list(tensors))
        pending = [v for v in out.values() if isinstance(v, Tensor)]
        if not pending:
            raise JitError("every output is a host value")
        return out


def _shared(tensors: Sequence[Tensor]) -> bool:
    nodes = [t._node for t in tensors]
    return len({id(n) for n in nodes}) != len(nodes)
