"""`StepTemplate`: the lazy graph of one step of a Python loop, built once by the Tensor
methods and replayed over each step's inputs.

    cell = StepTemplate(lambda h, x: ((h @ w + x).tanh(),), h0, xs[0])
    for x in xs:
        (h,) = cell(h, x)           # the nodes `(h @ w + x).tanh()` builds, over h and x

Why: a recurrent layer's loop builds the same few dozen nodes at every step; an LSTM of
100 steps and 2 layers builds ~15,000 of them, forward and backward, at every eager call
(~70 ms through the Tensor methods beside ~150 ms of kernels on a 2-core Zen 4). The
step is recorded once and replayed (`recording.Recording`: ~1 us a node), so what a
replay builds is what the plain loop built, node for node, sharing its realize cache and
compiled programs.

Three things fall back to calling the step function itself: inputs unlike the recorded
ones (another shape, dtype or device), grad mode on with an input that requires grad (a
replay records no autograd context), and a step whose recording made index range checks
of its own (`Recording.replayable`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from picograd.frontend.grad_mode import is_grad_enabled, no_grad
from picograd.frontend.recording import Recording, placeholders
from picograd.frontend.tensor import Tensor


class StepTemplate:
    """`fn(*inputs) -> tuple of Tensors`, recorded on placeholders shaped like `like`
    (module docstring). Calling the template with tensors like those gives what `fn` would
    give, built by replaying the recording."""

    __slots__ = ("_fn", "_inputs", "_recording")

    def __init__(self, fn: Callable[..., Sequence[Tensor]], *like: Tensor):
        self._fn = fn
        self._inputs = tuple((t.shape, t.dtype, t.device) for t in like)
        slots = placeholders(self._inputs)
        with no_grad():
            outs = fn(*[Tensor._from_node(p) for p in slots])
        self._recording = Recording(slots, [o._node for o in outs])

    def __call__(self, *inputs: Tensor) -> tuple[Tensor, ...]:
        if (not self._recording.replayable or len(inputs) != len(self._inputs)
                or any((t.shape, t.dtype, t.device) != want
                       for t, want in zip(inputs, self._inputs, strict=True))
                or (is_grad_enabled() and any(t.requires_grad for t in inputs))):
            return tuple(self._fn(*inputs))
        return tuple(Tensor._from_node(n)
                     for n in self._recording.replay([t._node for t in inputs]))
