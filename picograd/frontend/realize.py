"""Realizing lazy graphs: the structural key and the pg_tensor module; the compiler does the rest.

    realize(*tensors, pipeline=None)   compute the pending tensors (one graph per device)
    compiled(*tensors, pipeline=None)  the compiled Program of pending tensors and its inputs,
                                       without running it (benchmarks time `Program.benchmark`)
    compile_stats() -> CompileStats(compiles, cache_hits, kernels)     counters (a snapshot)
    clear_cache()                      forget every compiled graph (the counters are kept)
    realize_later(*tensors)            compute these at the next realize, unless replaced first

A realize walks the pending graph once (postorder, iterative) and builds, in the same pass,
the cache key: the device and, per node, its `sig` (op, exact arg, shape, dtype) and the
positions of its sources, plus which positions are results. Buffer leaves are keyed by shape
and dtype only, never by contents, variable leaves (`picograd.frontend.variable`) by their
variable, never by its value, and both become `@main`'s arguments in postorder (an empty
one, which no element of a result can read, is a zero constant instead: a buffer holds at
least one element). It hands the key and a builder of the pg_tensor module to the compile
driver (`picograd.compiler.program_for`), which chooses the pipeline (`pipeline=`, else
`$PG_PIPELINE`, else the device's default), looks in its caches (a hit builds no IR) and
otherwise compiles. The Program runs on the leaves' buffers; afterwards every realized node
becomes a buffer leaf. A capture in progress (`picograd.frontend.capture`) is told of every
Program run.

Initial values (a module's random parameters, `realize_later`) are computed by the first
realize or compile after they were made, all of them in one graph per device, before the
graph asked for, and outside any capture (a jit replay must not draw them again). A tensor
whose node was replaced before then (`load_state_dict`) is never computed: the registry
holds its node weakly.
"""

from __future__ import annotations

import itertools
import math
import operator
import sys
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Region, SSAValue

from picograd import flags
from picograd.compiler.driver import (
    CompileStats,
    beam_scope,
    beam_width,
    compile_mode,
    compile_stats,
    pipeline_for,
    program_for,
    touch,
)
from picograd.compiler.driver import clear_cache as driver_clear_cache
from picograd.compiler.pipelines import PipelineError
from picograd.debug.settings import SETTINGS
from picograd.debug.trace import report_variables
from picograd.dialects import pg_tensor as pt
from picograd.dialects.pg_sched import node_hint
from picograd.errors import OutOfMemoryError
from picograd.frontend import capture
from picograd.frontend.dtype import cast_scalar
from picograd.frontend.gc_pause import gc_paused
from picograd.frontend.lazy import LazyOp, user_location
from picograd.runtimes import Program
from picograd.runtimes.program import tuple_getter

__all__ = ["CompileStats", "build_module", "clear_cache", "compile_stats", "compiled",
           "linearize", "realize", "realize_later"]


class HasNode(Protocol):
    """What a realize needs of a tensor: its node (as `picograd.frontend.base.TensorBase`
    has; base.py imports this module, so this one does not import it back)."""

    _node: LazyOp


# ── the key ──────────────────────────────────────────────────────────────────


def linearize(outputs: Sequence[LazyOp]
              ) -> tuple[list[LazyOp], list[tuple], list[np.ndarray], tuple[int, ...]]:
    """The nodes reachable from `outputs` in postorder, their key entries
    `(sig, source positions)`, the leaf buffers in argument order, and the outputs'
    positions."""
    index: dict[LazyOp, int] = {}
    nodes: list[LazyOp] = []
    entries: list[tuple] = []
    buffers: list[np.ndarray] = []
    stack: list[tuple[LazyOp, bool]] = [(n, False) for n in reversed(outputs)]
    while stack:
        node, expanded = stack.pop()
        if node in index:
            continue
        if expanded or not node.src:
            index[node] = len(nodes)
            nodes.append(node)
            entries.append((node.sig, tuple([index[s] for s in node.src])))
            if node.buffer is not None and node.buffer.size:  # an empty one is a constant
                buffers.append(node.buffer)
        else:
            stack.append((node, True))
            stack.extend((s, False) for s in reversed(node.src) if s not in index)
    return nodes, entries, buffers, tuple(index[n] for n in outputs)


# ── IR ───────────────────────────────────────────────────────────────────────


# Per lazy op: (node, source values, IR element type of the node) -> the pg_tensor op.
_BUILDERS: dict[str, Callable[[LazyOp, list[Any], Any], Any]] = {
    "const": lambda n, x, t: pt.ConstOp(n.arg, TensorType(t, list(n.shape))),
    "unary": lambda n, x, t: pt.UnaryOp(n.arg, x[0]),
    "binary": lambda n, x, t: pt.BinaryOp(n.arg, x[0], x[1]),
    "cmp": lambda n, x, t: pt.CmpOp(n.arg, x[0], x[1]),
    "where": lambda n, x, t: pt.WhereOp(x[0], x[1], x[2]),
    "cast": lambda n, x, t: pt.CastOp(x[0], t),
    "bitcast": lambda n, x, t: pt.BitcastOp(x[0], t),
    "iota": lambda n, x, t: pt.IotaOp(n.arg, TensorType(t, list(n.shape))),
    "gather": lambda n, x, t: pt.GatherOp(x[0], x[1], n.arg),
    "scatter_add": lambda n, x, t: pt.ScatterAddOp(x[0], x[1], x[2], n.arg),
    "attention": lambda n, x, t: pt.AttentionOp(x[0], x[1], x[2], x[3], n.arg),
    "reduce": lambda n, x, t: pt.ReduceOp(n.arg[0], x[0], n.arg[1]),
    "reshape": lambda n, x, t: pt.ReshapeOp(x[0], n.shape),
    "expand": lambda n, x, t: pt.ExpandOp(x[0], n.shape),
    "permute": lambda n, x, t: pt.PermuteOp(x[0], n.arg),
    "pad": lambda n, x, t: pt.PadOp(x[0], n.arg[0], n.arg[1], n.arg[2]),
    "slice": lambda n, x, t: pt.SliceOp(x[0], n.arg[0], n.arg[1], n.shape),
    "flip": lambda n, x, t: pt.FlipOp(x[0], n.arg),
    "contiguous": lambda n, x, t: pt.ContiguousOp(x[0]),
}


def build_module(nodes: Sequence[LazyOp], entries: Sequence[tuple],
                 outputs: Sequence[int]) -> ModuleOp:
    """The pg_tensor module `func.func @main(leaf buffers...) -> (outputs...)`; the value of
    node i is named `%pg.n<i>` (`pg_sched.node_hint`), which a stored value's buffer keeps."""
    builders = _BUILDERS
    leaves = [n for n in nodes if n.buffer is not None and 0 not in n.shape]
    block = Block(arg_types=[TensorType(n.dtype.ir, list(n.shape)) for n in leaves])
    for leaf, arg in zip(leaves, block.args, strict=True):
        if leaf.op == "var":  # the IR names a symbolic input after its variable
            arg.name_hint = leaf.arg.name
    args = iter(block.args)
    values: list[SSAValue] = []
    for node, (_, srcs) in zip(nodes, entries, strict=True):
        if 0 in node.shape:
            # no elements (a buffer holds at least one): whatever computed it, its value is
            # nothing to read, so a reduce over it sees only its identity (x.sum(1).sum()
            # of a (0, 5) x is 0, as torch's)
            empty = pt.ConstOp(cast_scalar(0, node.dtype), TensorType(node.dtype.ir,
                                                                   list(node.shape)))
            block.add_op(empty)
            values.append(empty.results[0])
            continue
        if node.buffer is not None:
            values.append(next(args))
            continue
        op = builders[node.op](node, [values[i] for i in srcs], node.dtype.ir)
        op.results[0].name_hint = node_hint(len(values))
        block.add_op(op)
        values.append(op.results[0])
    results = [values[i] for i in outputs]
    block.add_op(func.ReturnOp(*results))
    main = func.FuncOp("main", (list(block.arg_types), [r.type for r in results]), Region(block))
    return ModuleOp([main])


# ── compile and run ──────────────────────────────────────────────────────────


class GraphKey(tuple):
    """A graph's structural key (a tuple, as the compile driver and the disk cache read it)
    with its hash computed once: the driver's cache, looked up by this very object again, costs
    no walk of the key (a hit compares it by identity first)."""

    _hash: int

    def __new__(cls, parts: tuple) -> GraphKey:
        key = super().__new__(cls, parts)
        key._hash = tuple.__hash__(key)
        return key

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or tuple.__eq__(self, other)  # type: ignore[operator]

    def __ne__(self, other: object) -> bool:
        return not self == other


class _Plan:
    """A graph realized before, as `linearize` saw it: per node position its `key`
    (`LazyOp.key`) and the positions of its sources; the positions of the leaves whose
    buffers are the inputs and of the outputs; the graph's key for the compile driver; and,
    for the program it last ran (`stored_for`), the intermediates that program stores
    (`_stored`)."""

    __slots__ = ("blank", "entries", "graph_key", "hit", "keys", "leaf_nodes", "leaves",
                 "outputs", "sources", "steps", "stored", "stored_for")

    def __init__(self, nodes: Sequence[LazyOp], entries: Sequence[tuple],
                 outputs: tuple[int, ...], graph_key: GraphKey):
        self.keys = [n.key for n in nodes]
        self.sources = [srcs for _, srcs in entries]
        # what `_match` walks, from the last position down: (position, key, first source's
        # position, second's, all of them) with -1 for a source a node of that arity lacks
        # and the tuple only for three sources or more (one or two: checked without a loop)
        steps = []
        for i in range(len(self.keys) - 1, -1, -1):
            srcs = self.sources[i]
            pair = 1 <= len(srcs) <= 2
            steps.append((i, self.keys[i], srcs[0] if pair else -1,
                          srcs[1] if len(srcs) == 2 else -1, srcs if len(srcs) > 2 else None))
        self.steps = tuple(steps)
        self.blank: list[Any] = [None] * len(self.keys)
        self.leaves = [i for i, n in enumerate(nodes)
                       if n.buffer is not None and n.buffer.size]
        # the leaves' nodes of a matched graph, as a tuple (`_leaf_buffers`)
        self.leaf_nodes: Callable[[list[LazyOp]], Any] = tuple_getter(self.leaves)
        self.outputs, self.entries, self.graph_key = outputs, entries, graph_key
        # (pipeline, the driver's key, the Program) of the last realize, held weakly: the
        # next realize under that pipeline asks the driver whether it still holds that very
        # Program (`touch`) instead of looking it up by key
        self.hit: tuple[str | tuple[str, int], tuple, weakref.ref[Program]] | None = None
        self.stored: list[tuple[int, int, int]] = []
        self.stored_for: weakref.ref[Program] | None = None


_buffer_of = operator.attrgetter("buffer")


# Plans by (device, the outputs' keys), the most recently used last (the pipeline is the
# compile driver's part of its key).
_PLANS: dict[tuple, _Plan] = {}


def _match(plan: _Plan, outputs: Sequence[LazyOp]) -> list[LazyOp] | None:
    """The nodes of the graph of `outputs` in `plan`'s positions, when that graph is the
    plan's: every node has the plan's key at its position, its sources are the nodes at the
    plan's source positions, and no node stands at two positions; else None. (Keys alone
    would not do: they leave out which nodes are shared, and a consumer's key is its sources'
    as they were built, not as they are after a realize made one of them a buffer.)"""
    nodes = plan.blank.copy()
    for position, node in zip(plan.outputs, outputs, strict=False):  # (lengths: the key's)
        nodes[position] = node
    # postorder: a node's sources come before it. (Equal keys mean equal arity: a key
    # counts the node's sources.) One and two sources, the common arities, are spelt out.
    for i, key, first, second, more in plan.steps:
        node = nodes[i]
        if node is None or node.key != key:
            return None
        if first >= 0:
            src = node.src
            s = src[0]
            placed = nodes[first]
            if placed is None:
                nodes[first] = s
            elif placed is not s:
                return None
            if second >= 0:
                s = src[1]
                placed = nodes[second]
                if placed is None:
                    nodes[second] = s
                elif placed is not s:
                    return None
        elif more is not None and not _place(nodes, more, node.src):
            return None
    if len(set(nodes)) != len(nodes):
        return None
    return nodes


def _place(nodes: list[Any], positions: tuple[int, ...], src: tuple[LazyOp, ...]) -> bool:
    """Put `src` at `positions` of `nodes` (`_match`, a node of three sources or more);
    False when a position holds another node already."""
    for position, s in zip(positions, src, strict=False):
        placed = nodes[position]
        if placed is None:
            nodes[position] = s
        elif placed is not s:
            return False
    return True


def _program(outputs: list[LazyOp], device: str, pipeline: str | None
             ) -> tuple[Program, list[np.ndarray], list[LazyOp], _Plan]:
    """The program of the graph of `outputs`, its input buffers, the graph's nodes in
    postorder and its plan: a graph that matches the plan of its outputs' keys is neither
    walked nor keyed again."""
    if pipeline is not None and not isinstance(pipeline, str):
        raise PipelineError(f"realize: pipeline must be a pass pipeline string, got "
                            f"{type(pipeline).__name__} {pipeline!r}\n  at {user_location()}")
    plan_key = (device, outputs[0].key) if len(outputs) == 1 else (
        device, *[n.key for n in outputs])
    plan = _PLANS.pop(plan_key, None)
    nodes = _match(plan, outputs) if plan is not None else None
    if plan is None or nodes is None:
        nodes, entries, buffers, out_pos = linearize(outputs)
        plan = _Plan(nodes, entries, out_pos, GraphKey((device, tuple(entries), out_pos)))
        while len(_PLANS) >= flags.cache_graphs():  # the least recently used goes
            del _PLANS[next(iter(_PLANS))]
    else:  # (the plan's leaves hold buffers)
        buffers = list(map(_buffer_of, plan.leaf_nodes(nodes)))
    _PLANS[plan_key] = plan
    spec = pipeline_for(device, pipeline)
    mode = compile_mode(spec, beam_width())
    hit = plan.hit
    program = hit[2]() if hit is not None and hit[0] == mode else None
    if program is None or not touch(hit[1], program):  # type: ignore[index]
        found, chosen = nodes, plan
        program = program_for(plan.graph_key,
                              lambda: build_module(found, chosen.entries, chosen.outputs),
                              device, spec, plan.entries, plan.outputs)
        plan.hit = (mode, (mode, plan.graph_key), weakref.ref(program))
    return program, buffers, nodes, plan


def clear_cache() -> None:
    """Forget every compiled graph (the counters are kept)."""
    _PLANS.clear()
    driver_clear_cache()


def _stored(plan: _Plan, program: Program, nodes: list[LazyOp]
            ) -> list[tuple[int, int, int]]:
    """(position, alloc slot, uses as a source inside the graph) of every pending non-output
    node of the graph that `program` stores in a buffer (`program.holds`) of its size and
    dtype: a function of the graph's structure and the program, so the plan keeps it."""
    if plan.stored_for is not None and plan.stored_for() is program:
        return plan.stored
    finals = set(plan.outputs)
    # uses of each position as a source, counted in one pass (a count per held node over
    # every node's sources was quadratic: minutes for an LSTM of 100 steps)
    uses = Counter(position for srcs in plan.sources for position in srcs)
    stored = []
    for position, slot in program.holds.items():
        if position < len(nodes) and position not in finals:
            node = nodes[position]
            size, dtype = program.alloc_spec(slot)
            if (node.buffer is None and dtype == node.dtype.np
                    and size == math.prod(node.shape)):
                stored.append((position, slot, uses[position]))
    plan.stored, plan.stored_for = stored, weakref.ref(program)
    return stored


# References to a node of the graph while the graph alone holds it, besides its uses as a
# source: the `nodes` list, `_referenced_elsewhere`'s loop variable and `sys.getrefcount`'s
# argument.
_GRAPH_REFS = 3


def _referenced_elsewhere(program: Program, nodes: list[LazyOp], plan: _Plan
                          ) -> tuple[list[LazyOp], list[int]]:
    """The intermediates of the graph that `program` stores in a buffer (`program.holds`)
    and that something outside the graph still references (a tensor, a pending node of
    another graph), with their alloc slots: the realize hands them their buffers, so no
    later graph computes them again.

    "Outside the graph" is counted, not searched: references beyond the node's uses as a
    source inside the graph and `_GRAPH_REFS`; a node whose only such reference is its
    autograd tensor, itself held only by its consumers' contexts, does not count
    (`_autograd_only`). A reference that is not a tensor (a list the caller keeps) counts
    too; the price of a wrong count is a buffer kept or a value recomputed, never a wrong
    value."""
    if not program.holds:
        return [], []
    found: list[LazyOp] = []
    slots: list[int] = []
    for position, slot, uses in _stored(plan, program, nodes):
        node = nodes[position]
        outside = sys.getrefcount(node) - _GRAPH_REFS - uses
        if outside > 0 and not (outside == 1 and _autograd_only(node, uses)):
            found.append(node)
            slots.append(slot)
    return found, slots


def _autograd_only(node: LazyOp, uses: int) -> bool:
    """Whether the one reference to `node` from outside the graph is the tensor whose
    autograd context made it, and that tensor is held only by the contexts of its `uses`
    consumers (a forward's intermediate, which a grad-mode forward would otherwise keep: the
    output's autograd graph references every tensor of the forward)."""
    tensor = node.traced() if node.traced is not None else None
    if tensor is None or tensor._node is not node:
        return False
    # references: the contexts of its consumers, `tensor` here and getrefcount's argument
    return sys.getrefcount(tensor) - 2 <= uses


def _realize_nodes(outputs: list[LazyOp], device: str, pipeline: str | None) -> None:
    with gc_paused():
        _realize_on(outputs, device, pipeline)


def _realize_on(outputs: list[LazyOp], device: str, pipeline: str | None) -> None:
    program, buffers, nodes, plan = _program(outputs, device, pipeline)
    if SETTINGS.level >= 2:
        report_variables(program, [(n.arg.name, int(n.buffer))  # type: ignore[arg-type]
                                   for n in nodes if n.op == "var"])
    if program.holds:
        shared, export = _referenced_elsewhere(program, nodes, plan)
    else:
        shared, export = [], []
    del nodes
    try:
        results = program.run(buffers, export)
    except OutOfMemoryError as e:  # the runtime cannot know the user's line
        raise OutOfMemoryError(f"{e}\n  at {user_location()}") from None
    recorder = capture.recorder()
    if recorder is not None:  # before the outputs become leaves: it reads their graph
        recorder.on_realize(program, outputs, shared, export)
    for node, flat in zip([*outputs, *shared] if shared else outputs, results, strict=True):
        shape = node.shape
        node.become_buffer(flat if flat.shape == shape else flat.reshape(shape))


# Pending initial values by registration number (so they are computed in a stable order):
# weak, so that a value replaced before the next realize is dropped, never computed.
_initial: weakref.WeakValueDictionary[int, LazyOp] = weakref.WeakValueDictionary()
_numbers = itertools.count()


def realize_later(*tensors: HasNode) -> None:
    """Compute `tensors` (pending) at the next realize or compile of anything, in one graph
    with every other tensor given here since, unless a tensor's node is replaced before
    (as `load_state_dict` does): a module's initial parameters cost nothing when a
    checkpoint overwrites them. Inside a jit capture nothing is deferred (the flush runs
    outside the capture, so a replay would not compute them): they are computed where read."""
    if capture.recorder() is not None:
        return
    for t in tensors:
        if t._node.buffer is None:
            _initial[next(_numbers)] = t._node


def _compute_initial_values() -> None:
    nodes = [n for n in _initial.values() if n.buffer is None]
    _initial.clear()
    if nodes:
        with capture.paused():
            _realize_all(nodes, None)


def _realize_all(nodes: Sequence[LazyOp], pipeline: str | None) -> None:
    """Realize the pending `nodes`: one graph per device, no kernel for an empty one. The
    pending range checks they depend on (`LazyOp.guards`) are computed in the same graphs."""
    by_device: dict[str, list[LazyOp]] = {}
    seen: set[LazyOp] = set()
    checks = [g.node for n in nodes for g in n.guards if g.node.buffer is None]
    for node in [*nodes, *checks]:
        if node.buffer is not None or node in seen:
            continue
        seen.add(node)
        if 0 in node.shape:  # nothing to compute: no kernel for an empty result
            node.become_buffer(np.empty(node.shape, node.dtype.np))
            continue
        by_device.setdefault(node.device, []).append(node)
    for device, outputs in by_device.items():
        _realize_nodes(outputs, device, pipeline)


def compiled(*tensors: HasNode, pipeline: str | None = None
             ) -> tuple[Program, list[np.ndarray]]:
    """The compiled `Program` that realizing `tensors` (pending, all on one device) runs, and
    the input arrays it runs on; nothing is executed and the tensors stay pending."""
    if _initial:
        _compute_initial_values()
    nodes = [t._node for t in tensors]
    devices = {n.device for n in nodes}
    if len(devices) != 1 or any(n.buffer is not None for n in nodes):
        raise ValueError("compiled() takes pending tensors on one device")
    return _program(nodes, devices.pop(), pipeline)[:2]


def realize(*tensors: HasNode, pipeline: str | None = None, beam: int | None = None) -> None:
    """Compute every pending tensor of `tensors`, together (one graph per device), through
    `pipeline` (a pass pipeline string; default: `$PG_PIPELINE`, else the device's default
    pipeline), searching the kernels' schedules with BEAM width `beam` when given (default:
    `pg.Context(beam=...)`'s, else `$BEAM`). Both are part of the compile cache key."""
    if beam is not None:
        with beam_scope(beam):
            realize(*tensors, pipeline=pipeline)
        return
    if _initial:
        _compute_initial_values()
    if len(tensors) == 1:  # the common call, without the bookkeeping of several outputs
        node = tensors[0]._node
        if node.buffer is None and not node.guards and 0 not in node.shape:
            _realize_nodes([node], node.device, pipeline)
            return
    nodes = [t._node for t in tensors]
    _realize_all(nodes, pipeline)
    _check_guards(nodes)


def _check_guards(nodes: Sequence[LazyOp]) -> None:
    """Raise the first failed range check that realized `nodes` depend on (a computed
    index out of range); nodes whose checks all passed forget them, nodes with a failed
    one keep it, so that a later read raises too. A capture in progress is told of every
    check, for its replays to repeat."""
    recorder = capture.recorder()
    failure = None
    for node in nodes:
        if not node.guards:
            continue
        failed = []
        for guard in node.guards:
            if recorder is not None:
                recorder.on_guard(guard)
            error = guard.failure()
            if error is not None:
                failed.append(guard)
                failure = failure or error
        node.guards = tuple(failed)
    if failure is not None:
        raise failure
