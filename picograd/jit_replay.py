"""`@picograd.jit`: capture the compiled programs a function launches, then replay them.

(This module is `picograd.jit_replay`, so that `picograd.jit` is the decorator alone.)

    @picograd.jit
    def train_step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for x, y in batches:
        loss = train_step(x, y)      # call 1: eager (compiles), call 2: captured, 3+: replayed

Call 1 runs the function as it is (its realizes compile their programs). Call 2 runs it again
while recording every realize: the `Program`, where each of its input buffers comes from (the
function's tensor argument i, an output of an earlier recorded realize, or any other leaf
node — a parameter, optimiser state — whose *current* buffer is read at replay), and where
its outputs go (`Tensor.assign` into a node, inputs of later realizes, the tensors the
function returns: a Tensor or a tuple / list / dict of them; pending returned tensors are
realized inside the capture). Calls 3+ replay: the function is not called, no graph is built
and no cache key computed; the recorded programs run on the new arguments' buffers, the
assigns are redone and the returned arrays come back as new realized tensors.

A replay is never made from stale state: a call after `load_state_dict`, `fill_` or
`x[i] = v` replaced a tensor the capture read, or after `model.train()` / `model.eval()`,
runs the function again under a new capture (so does a call in the other grad mode: it is
part of the capture key, and `no_grad()` replays no optimiser step captured with grads).
So does a call after a name the function reached a tensor through was rebound, to any
shape or back (`picograd.jit_bindings`): a global the function's code names (`W = other`),
an attribute of a module, class or object it names (`mymod.W`, `Cfg.W`, `self.W`), a
closure variable, a default, a list / dict item, a global of a user function it calls, an
object it calls (`model = Net()`). Each call checks those bindings by identity (a dict
lookup each). A function that rebinds a tensor it read captures on every call; a tensor it
only writes to a name (`global last; last = out`) is a Python side effect, not redone.

What a replay does NOT redo (the function's Python does not run):
  - Python side effects: prints, counters, appends, `.numpy()` / `.item()` reads;
  - host values baked into the capture: python scalars, numpy arrays, shapes, and tensors
    made from host data inside the function (`Tensor(np_array)`, `.to(device)`) keep their
    call-2 values; so do tensors only library code reaches (a function of an installed
    package reading its own module's global), objects without a `__dict__`, sets;
  - rebinding a tensor's node other than by the ops above (`t._node = ...`,
    `load_checkpoint` replacing an optimiser's state): only `Tensor.assign` writes are
    replayed, so make a new jit after such a change (or after changing momentum, betas,
    weight decay: they are constants of the captured programs).
  Random tensors made inside the function (`rand`, `randn`, dropout) draw new numbers on
  every replay: their keys are 0-d input buffers, and the frontend reports each draw
  (`on_random_key`), so the replay writes the next keys into them first.
  Objects that must update host state per call register a callback with
  `picograd.frontend.capture.on_host_state(fn)` during the capture (the optimisers do: step
  count, learning rate, bias corrections are refreshed into their 0-d buffers before the
  step's program runs), so an `lr` changed by a scheduler between calls is honoured.

Bound variables (`pg.Variable(...).bind(value)`, picograd/frontend/variable.py) are
arguments like tensors: the capture key holds the variable, and a replay feeds each run the
new values (one capture for every decode position). A variable bound outside the function
and read through a name (`p = start.bind(t)`, a global or closure variable) is a binding:
binding it anew captures again, so pass it as an argument to replay every position.

Non-tensor arguments (hashable) are part of the capture key: a call with new values starts a
new warm-up / capture for them (so a value that changes on every call never replays — pass
it as a tensor instead). Tensor arguments must keep the capture's shape, dtype and device, and
no two may share a node or buffer; otherwise `JitError` names the argument. A jit called while
another jit runs (in the same thread), and a function that realized nothing during the
capture, are JitErrors; calls of one jit from several threads take turns.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from picograd.debug.settings import SETTINGS
from picograd.debug.trace import report_variables
from picograd.errors import JitError
from picograd.frontend import capture
from picograd.frontend.capture import capturing
from picograd.frontend.grad_mode import is_grad_enabled
from picograd.frontend.lazy import Guard, LazyOp
from picograd.frontend.realize import linearize, realize
from picograd.frontend.tensor import Tensor
from picograd.frontend.variable import SymbolicInt, Variable
from picograd.jit_bindings import Bindings, walk
from picograd.runtimes import Program

_TENSOR = object()  # stands for a tensor argument in a capture key
class _Running(threading.local):
    """Per thread, the names of the jitted functions running (nesting is refused)."""

    def __init__(self) -> None:
        self.names: list[str] = []


_running = _Running()


def jit_running() -> bool:
    """True while a jitted function runs in this thread (a jit called now is refused)."""
    return bool(_running.names)


# ── replay steps ─────────────────────────────────────────────────────────────


class _Run:
    """One recorded realize: `program` on inputs (an int is a slot, a LazyOp a node whose
    current buffer is read), outputs (and the intermediates of alloc slots `export`) into
    `out_slots` (reshaped to `shapes`)."""

    __slots__ = ("export", "inputs", "out_slots", "program", "shapes", "variables")

    def __init__(self, program: Program, inputs: list[int | LazyOp], out_slots: list[int],
                 shapes: list[tuple[int, ...]], export: list[int],
                 variables: list[tuple[int, str]]):
        self.program, self.inputs, self.out_slots, self.shapes = (
            program, inputs, out_slots, shapes)
        self.export = tuple(export)
        self.variables = variables  # (input position, name) of the variable inputs

    def replay(self, slots: list[Any], args: list[Tensor]) -> None:
        buffers: list[Any] = [slots[r] if r.__class__ is int else r.buffer  # type: ignore
                              for r in self.inputs]
        if self.variables and SETTINGS.level >= 2:
            report_variables(self.program, [(name, int(buffers[i]))
                                            for i, name in self.variables])
        results = self.program.run(buffers, self.export)
        for slot, flat, shape in zip(self.out_slots, results, self.shapes, strict=True):
            slots[slot] = flat.reshape(shape)


class _Assign:
    """`target.assign(value)`: target is a node, or an argument's index (its node at replay);
    `slot` is the target's slot when later reads look it up by slot, else -1."""

    __slots__ = ("arg", "slot", "source", "target")

    def __init__(self, target: LazyOp | None, arg: int, slot: int, source: int | LazyOp):
        self.target, self.arg, self.slot, self.source = target, arg, slot, source

    def replay(self, slots: list[Any], args: list[Tensor]) -> None:
        source = self.source
        array: Any = slots[source] if source.__class__ is int else source.buffer  # type: ignore
        target = self.target if self.arg < 0 else args[self.arg]._node
        assert target is not None
        target.become_buffer(array)
        if self.slot >= 0:
            slots[self.slot] = array


class _Check:
    """A computed index's range check (`lazy.Guard`) whose (min, max) a recorded run wrote
    into `slot`: a replay raises IndexRangeError where the eager call would."""

    __slots__ = ("guard", "slot")

    def __init__(self, guard: Guard, slot: int):
        self.guard, self.slot = guard, slot

    def replay(self, slots: list[Any], args: list[Tensor]) -> None:
        error = self.guard.failure(slots[self.slot])
        if error is not None:
            raise error


class _Hook:
    __slots__ = ("callback",)

    def __init__(self, callback: Callable[[], None]):
        self.callback = callback

    def replay(self, slots: list[Any], args: list[Tensor]) -> None:
        self.callback()


# ── capture ──────────────────────────────────────────────────────────────────


class _Capture:
    """Records the realizes of one call: the `picograd.frontend.capture.Recorder` that
    `capturing` reports to."""

    def __init__(self, args: list[Tensor], variables: list[Variable]):
        self.slot_of: dict[LazyOp, int] = {}
        for i, t in enumerate(args):
            self.slot_of[t._node] = i
        self.arg_nodes = {t._node: i for i, t in enumerate(args)}
        # a bound variable argument's value: a slot after the tensors', filled per replay
        self.var_slot = {v: len(args) + j for j, v in enumerate(variables)}
        self.num_slots = len(args) + len(variables)
        self.steps: list[_Run | _Assign | _Hook | _Check] = []
        self.checked: set[int] = set()  # the slots of the range checks recorded
        self.launched = False
        self.read: set[LazyOp] = set(self.arg_nodes)  # every node the capture computed with

    def _ref(self, node: LazyOp) -> int | LazyOp:
        return self.slot_of.get(node, node)

    def on_realize(self, program: Program, outputs: list[LazyOp], shared: list[LazyOp],
                   export: list[int]) -> None:
        nodes = linearize(outputs)[0]
        self.read.update(nodes)
        var_slot = self.var_slot
        leaves = [n for n in nodes if n.buffer is not None and n.buffer.size]
        inputs = [var_slot[n.arg] if n.op == "var" and n.arg in var_slot else self._ref(n)
                  for n in leaves]
        variables = [(i, n.arg.name) for i, n in enumerate(leaves) if n.op == "var"]
        out_slots = []
        for node in [*outputs, *shared]:
            self.slot_of[node] = self.num_slots
            out_slots.append(self.num_slots)
            self.num_slots += 1
        self.steps.append(_Run(program, inputs, out_slots,
                               [n.shape for n in [*outputs, *shared]], export, variables))
        self.launched = True

    def on_assign(self, target: LazyOp, value: LazyOp) -> None:
        self.read.update((target, value))
        arg = self.arg_nodes.get(target, -1)
        slot = self.slot_of.get(target, -1)
        self.steps.append(_Assign(None if arg >= 0 else target, arg, slot, self._ref(value)))

    def on_random_key(self, refresh: Callable[[], None]) -> None:
        self.steps.append(_Hook(refresh))

    def on_host_state(self, refresh: Callable[[], None]) -> None:
        self.steps.append(_Hook(refresh))

    def on_guard(self, guard: Guard) -> None:
        slot = self.slot_of.get(guard.node)
        if slot is not None and slot not in self.checked:  # else computed before the capture
            self.checked.add(slot)
            self.steps.append(_Check(guard, slot))


# ── the decorator ────────────────────────────────────────────────────────────


class _Plan:
    """A finished capture: the argument specs, the steps, how to build the return value, and
    after each step the slots no later step nor the return value reads (`drops`): a replay
    lets go of an intermediate at its last use, as the eager call does, so its memory is
    free for the rest of the replay. `leaves` are the nodes (not arguments) whose current
    buffers it reads, `epoch` the frontend's `capture.state_epoch()` when it was last
    checked (`stale`), `bindings` the globals, closure cells and attributes through which
    the function reached its tensors (`picograd.jit_bindings`)."""

    __slots__ = ("bindings", "drops", "epoch", "leaves", "num_slots", "rebuild", "specs",
                 "steps")

    def __init__(self, specs: list[tuple], steps: list, num_slots: int,
                 rebuild: Callable[[list[Any]], Any], returned: set[int], bindings: Bindings):
        self.specs, self.steps, self.num_slots, self.rebuild = specs, steps, num_slots, rebuild
        self.bindings = bindings
        self.drops = _last_uses(steps, returned)
        self.leaves = [r for step in steps if isinstance(step, _Run) for r in step.inputs
                       if isinstance(r, LazyOp)]
        self.epoch = capture.state_epoch()

    def stale(self) -> bool:
        """Whether, since the capture, a name the function reached a tensor through was
        rebound (`W = other`, `mymod.W = other`, a closure variable), a module changed
        between train and eval or a node it reads was taken from its tensor
        (`load_state_dict`, `fill_`, `x[i] = v`): the captured programs would compute with
        the old tensors, mode or values."""
        if self.bindings.changed():
            return True
        now = capture.state_epoch()
        if now == self.epoch:
            return False
        if now[1] != self.epoch[1] or any(capture.was_replaced(n) for n in self.leaves):
            return True
        self.epoch = now  # replaced nodes, none of them ours
        return False


def _last_uses(steps: list, keep: set[int]) -> list[tuple[int, ...]]:
    """Per step, the slots read or written there for the last time (not those in `keep`)."""
    last: dict[int, int] = {}
    for i, step in enumerate(steps):
        if isinstance(step, _Run):
            used = [r for r in step.inputs if r.__class__ is int] + step.out_slots
        elif isinstance(step, _Assign):
            used = [step.source] if step.source.__class__ is int else []
            used += [step.slot] if step.slot >= 0 else []
        elif isinstance(step, _Check):
            used = [step.slot]
        else:
            used = []
        for slot in used:
            last[slot] = i  # type: ignore[index]
    drops: list[list[int]] = [[] for _ in steps]
    for slot, i in last.items():
        if slot not in keep:
            drops[i].append(slot)
    return [tuple(d) for d in drops]


class Jit:
    """A jitted function (see the module docstring); `jit(fn)` makes one."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]
        self._name: str = getattr(fn, "__qualname__", repr(fn))
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            params = []
        self._param_names = [p.name for p in params
                             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._warm: set[tuple] = set()  # keys whose warm-up call ran
        self._plans: dict[tuple, _Plan] = {}
        self._lock = threading.Lock()

    # ── naming arguments in errors ──────────────────────────────────────────

    def _label(self, position: int, keys: tuple[str, ...], num_positional: int) -> str:
        if position >= num_positional:
            return f"argument {keys[position - num_positional]!r}"
        if position < len(self._param_names):
            return f"argument {position} ({self._param_names[position]!r})"
        return f"argument {position}"

    def _error(self, message: str) -> JitError:
        return JitError(f"jit {self._name}: {message}")

    # ── calling ─────────────────────────────────────────────────────────────

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        active = _running.names
        if active:
            raise self._error(f"called while jit {active[0]} runs; nested jit is not "
                              "supported (call the inner function undecorated)")
        with self._lock:  # calls from several threads take turns
            return self._call(active, args, kwargs)

    def _call(self, active: list[str], args: tuple, kwargs: dict) -> Any:
        flat = (*args, *kwargs.values()) if kwargs else args
        tensors: list[Tensor] = []
        positions: list[int] = []
        shape: list[Any] = []
        bound: dict[Variable, int] = {}
        for i, a in enumerate(flat):
            if isinstance(a, Tensor):
                tensors.append(a)
                positions.append(i)
                shape.append(_TENSOR)
            elif a.__class__ is SymbolicInt:
                if bound.setdefault(a.variable, a.bound) != a.bound:
                    raise self._error(f"variable {a.variable.name!r} is bound to two values "
                                      f"({bound[a.variable]} and {a.bound}) in one call")
                shape.append(("var", a.variable, a.offset))
            else:
                shape.append(a)
        key = (tuple(kwargs), tuple(shape), is_grad_enabled())
        try:
            plan = self._plans.get(key)
        except TypeError:
            bad = next(i for i, a in enumerate(flat)
                       if not isinstance(a, Tensor) and not _hashable(a))
            raise self._error(f"{self._label(bad, key[0], len(args))} is a non-tensor "
                              f"argument of type {type(flat[bad]).__name__}, which is not "
                              "hashable (non-tensor arguments are part of the capture key)"
                              ) from None
        for t in tensors:
            if t._node.buffer is None:  # pending arguments: realize them, together
                realize(*tensors)
                break
        if plan is not None and plan.stale():  # capture again, from the current state
            del self._plans[key]
            plan = None
        if plan is not None:
            return self._replay(plan, tensors, positions, key[0], len(args),
                                list(bound.values()))
        self._check_aliasing(tensors, positions, key[0], len(args))
        active.append(self._name)
        try:
            if key not in self._warm:
                out = self.fn(*args, **kwargs)
                self._warm.add(key)
                return out
            return self._capture(key, args, kwargs, tensors, list(bound))
        finally:
            active.pop()

    def _check_aliasing(self, tensors: list[Tensor], positions: list[int],
                        keys: tuple[str, ...], num_positional: int) -> None:
        seen: dict[int, int] = {}
        for t, position in zip(tensors, positions, strict=True):
            for ident in (id(t._node), id(t._node.buffer)):
                if ident in seen:
                    first = self._label(seen[ident], keys, num_positional)
                    raise self._error(f"{self._label(position, keys, num_positional)} aliases "
                                      f"{first} (the same tensor or buffer); pass distinct "
                                      "tensors")
            seen[id(t._node)] = seen[id(t._node.buffer)] = position

    def _capture(self, key: tuple, args: tuple, kwargs: dict, tensors: list[Tensor],
                 variables: list[Variable]) -> Any:
        bindings = walk(self.fn)  # what the function's names lead to now, before it runs
        capture = _Capture(tensors, variables)
        with capturing(capture):
            out = self.fn(*args, **kwargs)
            returned = _returned_tensors(out)
            realize(*returned)  # a pending returned tensor becomes a recorded output
        if not capture.launched:
            raise self._error("nothing was captured: the function realized no tensors")
        bindings.finish(capture.read | {t._node for t in returned})
        specs = [(t._node.shape, t._node.dtype, t._node.device) for t in tensors]
        returned = {capture.slot_of[t._node] for t in _returned_tensors(out)
                    if t._node in capture.slot_of}
        self._plans[key] = _Plan(specs, capture.steps, capture.num_slots,
                                 _rebuilder(out, capture), returned, bindings)
        return out

    def _replay(self, plan: _Plan, tensors: list[Tensor], positions: list[int],
                keys: tuple[str, ...], num_positional: int, values: list[int]) -> Any:
        slots: list[Any] = [None] * plan.num_slots
        for j, value in enumerate(values):  # the variables' slots follow the tensors'
            slots[len(tensors) + j] = np.array(value, np.int32)
        specs = plan.specs
        for i, t in enumerate(tensors):
            node = t._node
            if (node.shape, node.dtype, node.device) != specs[i]:
                raise self._mismatch(self._label(positions[i], keys, num_positional), node,
                                     specs[i])
            slots[i] = node.buffer
        if len({id(b) for b in slots[:len(tensors)]}) != len(tensors):
            self._check_aliasing(tensors, positions, keys, num_positional)
        active = _running.names
        active.append(self._name)
        try:
            for step, drop in zip(plan.steps, plan.drops, strict=True):
                step.replay(slots, tensors)
                for slot in drop:
                    slots[slot] = None
        finally:
            active.pop()
        return plan.rebuild(slots)

    def _mismatch(self, label: str, node: LazyOp, spec: tuple) -> JitError:
        shape, dtype, device = spec
        got, want = [], []
        for what, now, then in (("shape", node.shape, shape), ("dtype", node.dtype.name,
                                dtype.name), ("device", node.device, device)):
            if now != then:
                got.append(f"{what} {now}")
                want.append(f"{what} {then}")
        return self._error(f"{label} has {', '.join(got)}; the capture was made with "
                           f"{', '.join(want)} (use a new jit for other inputs)")


def jit(fn: Callable[..., Any]) -> Jit:
    """Capture the programs `fn` launches on its second call and replay them from the third
    on (see `picograd.jit`'s module docstring for what is and is not replayed)."""
    return Jit(fn)


# ── return values ────────────────────────────────────────────────────────────


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _returned_tensors(out: Any) -> list[Tensor]:
    """The tensors in `out`: a Tensor, or tuples / lists / dicts of them, nested."""
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, tuple | list):
        return [t for v in out for t in _returned_tensors(v)]
    if isinstance(out, dict):
        return [t for v in out.values() for t in _returned_tensors(v)]
    return []


def _rebuilder(out: Any, capture: _Capture) -> Callable[[list[Any]], Any]:
    """A function of the replay's slots that rebuilds `out` with new tensors: a Tensor or
    tuples / lists / dicts of them (other values are returned as they were at the capture)."""
    if isinstance(out, Tensor):
        node = out._node
        ref = capture.slot_of.get(node, node)
        dtype, device = node.dtype, node.device
        if isinstance(ref, LazyOp):  # a node the function did not compute (a parameter)
            return lambda slots: Tensor._from_node(ref)

        def leaf(slots: list[Any]) -> Tensor:  # slots hold arrays of the output's shape
            return Tensor._from_node(LazyOp.leaf(slots[ref], dtype, device))

        return leaf
    if isinstance(out, tuple | list):
        parts = [_rebuilder(v, capture) for v in out]
        kind = type(out)
        return lambda slots: kind([p(slots) for p in parts])
    if isinstance(out, dict):
        items = [(k, _rebuilder(v, capture)) for k, v in out.items()]
        return lambda slots: {k: p(slots) for k, p in items}
    return lambda slots: out


__all__ = ["Jit", "JitError", "jit", "jit_running"]
