"""Realizing lazy graphs: the structural cache key, pg_tensor IR, compile, run.

    realize(*tensors)            compute the pending tensors (one compiled graph per device)
    compiled(*tensors)           the compiled Program of pending tensors and its inputs,
                                 without running it (benchmarks time `Program.benchmark`)
    compile_stats() -> CompileStats(compiles, cache_hits, kernels)     counters (a snapshot)
    clear_cache()                forget every compiled graph (the counters are kept)

A realize walks the pending graph once (postorder, iterative) and builds, in the same pass,
the cache key: the device and, per node, its `sig` (op, exact arg, shape, dtype) and the
positions of its sources, plus which positions are results. Buffer leaves are keyed by shape
and dtype only, never by contents, and become `@main`'s arguments in postorder. On a hit the
cached `Program` runs on the leaves' buffers and no IR is built. On a miss the pg_tensor
module is built, the device's default pipeline string (`picograd.passes.pipelines`) runs on
it and `compile_module` compiles it. Afterwards every realized node becomes a buffer leaf.

With `PG_DUMP=<dir>` every compile writes `<dir>/<graph-id>/input.mlir`, `pipeline.txt` and
`NN-<pass>.mlir` (the IR after pass NN), so that
`opt-tool <dir>/<id>/input.mlir --pass-pipeline="$(cat <dir>/<id>/pipeline.txt)"` reproduces
the last dump.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from picograd import debug as _debug
from picograd.frontend.lazy import LazyOp
from picograd.runtimes import Program, compile_module, get_device

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from picograd.frontend.base import TensorBase

DUMP_ENV = "PG_DUMP"


@dataclass
class CompileStats:
    compiles: int = 0  # graphs compiled (cache misses)
    cache_hits: int = 0  # realizes that reused a compiled graph
    kernels: int = 0  # kernels in the compiled graphs


_STATS = CompileStats()
_CACHE: dict[tuple, Program] = {}
_GRAPH_IDS = itertools.count()
# picograd.jit's recorder while it captures: called with each run program and its outputs
capture_hook: Callable[[Program, list[LazyOp]], None] | None = None


def compile_stats() -> CompileStats:
    """A snapshot of how many graphs were compiled and how many realizes hit the cache."""
    return dataclasses.replace(_STATS)


def clear_cache() -> None:
    _CACHE.clear()


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
            if node.buffer is not None:
                buffers.append(node.buffer)
        else:
            stack.append((node, True))
            stack.extend((s, False) for s in reversed(node.src) if s not in index)
    return nodes, entries, buffers, tuple(index[n] for n in outputs)


# ── IR ───────────────────────────────────────────────────────────────────────


@functools.cache
def _builders() -> dict[str, Callable[[LazyOp, list[Any], Any], Any]]:
    """Per lazy op: (node, source values, IR element type of the node) -> the pg_tensor op."""
    from xdsl.dialects.builtin import TensorType

    from picograd.dialects import pg_tensor as pt

    return {
        "const": lambda n, x, t: pt.ConstOp(n.arg, TensorType(t, list(n.shape))),
        "unary": lambda n, x, t: pt.UnaryOp(n.arg, x[0]),
        "binary": lambda n, x, t: pt.BinaryOp(n.arg, x[0], x[1]),
        "cmp": lambda n, x, t: pt.CmpOp(n.arg, x[0], x[1]),
        "where": lambda n, x, t: pt.WhereOp(x[0], x[1], x[2]),
        "cast": lambda n, x, t: pt.CastOp(x[0], t),
        "bitcast": lambda n, x, t: pt.BitcastOp(x[0], t),
        "iota": lambda n, x, t: pt.IotaOp(n.arg, TensorType(t, list(n.shape))),
        "reduce": lambda n, x, t: pt.ReduceOp(n.arg[0], x[0], n.arg[1]),
        "reshape": lambda n, x, t: pt.ReshapeOp(x[0], n.shape),
        "expand": lambda n, x, t: pt.ExpandOp(x[0], n.shape),
        "permute": lambda n, x, t: pt.PermuteOp(x[0], n.arg),
        "pad": lambda n, x, t: pt.PadOp(x[0], n.arg[0], n.arg[1], n.arg[2]),
        "slice": lambda n, x, t: pt.SliceOp(x[0], n.arg[0], n.arg[1], n.shape),
        "flip": lambda n, x, t: pt.FlipOp(x[0], n.arg),
    }


def build_module(nodes: Sequence[LazyOp], entries: Sequence[tuple],
                 outputs: Sequence[int]) -> ModuleOp:
    """The pg_tensor module `func.func @main(leaf buffers...) -> (outputs...)`."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp, TensorType
    from xdsl.ir import Block, Region, SSAValue

    builders = _builders()
    block = Block(arg_types=[TensorType(n.dtype.ir, list(n.shape))
                             for n in nodes if n.op == "buffer"])
    args = iter(block.args)
    values: list[SSAValue] = []
    for node, (_, srcs) in zip(nodes, entries, strict=True):
        if node.op == "buffer":
            values.append(next(args))
            continue
        op = builders[node.op](node, [values[i] for i in srcs], node.dtype.ir)
        block.add_op(op)
        values.append(op.results[0])
    results = [values[i] for i in outputs]
    block.add_op(func.ReturnOp(*results))
    main = func.FuncOp("main", (list(block.arg_types), [r.type for r in results]), Region(block))
    return ModuleOp([main])


# ── compile and run ──────────────────────────────────────────────────────────


def _dumper(directory: str, key: tuple, module: ModuleOp, spec: str):
    digest = hashlib.sha1(repr(key).encode()).hexdigest()[:10]
    path = os.path.join(directory, f"{next(_GRAPH_IDS):04d}-{digest}")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "input.mlir"), "w") as f:
        f.write(str(module) + "\n")
    with open(os.path.join(path, "pipeline.txt"), "w") as f:
        f.write(spec)
    done = itertools.count(1)

    def after_pass(pass_: Any, ir: ModuleOp) -> None:
        with open(os.path.join(path, f"{next(done):02d}-{pass_.name}.mlir"), "w") as f:
            f.write(str(ir) + "\n")

    return after_pass


def _compile(key: tuple, nodes: list[LazyOp], entries: list[tuple],
             outputs: tuple[int, ...], device: str) -> Program:
    from picograd.passes.pipelines import DEFAULT_PIPELINES, run_pipeline
    from picograd.runtimes import disk_cache

    runtime = get_device(device)
    renderer = runtime.renderer
    spec = DEFAULT_PIPELINES[renderer]
    dump_dir = os.environ.get(DUMP_ENV)
    trace = _debug.start_compile(device, entries, outputs)  # None unless DEBUG/VIZ
    # a disk hit builds no IR (so PG_DUMP, which dumps the IR, bypasses the disk cache)
    disk_key = (None if dump_dir or _debug.needs_ir() else
                disk_cache.graph_key(key, spec, renderer, runtime))
    program = disk_cache.load_program(disk_key, runtime)
    if program is not None:
        _debug.finish(trace, None, program)
        return program
    module = build_module(nodes, entries, outputs)
    after_pass = _dumper(dump_dir, key, module, spec) if dump_dir else None
    after_pass = _debug.watch(trace, module, after_pass)
    run_pipeline(module, spec, after_pass=after_pass)
    program = compile_module(module, renderer)
    _debug.finish(trace, module, program)
    disk_cache.store_program(disk_key, program)
    return program


def _program(outputs: list[LazyOp], device: str) -> tuple[Program, list[np.ndarray]]:
    nodes, entries, buffers, out_pos = linearize(outputs)
    key = (device, tuple(entries), out_pos)
    program = _CACHE.get(key)
    if program is None:
        program = _CACHE[key] = _compile(key, nodes, entries, out_pos, device)
        _STATS.compiles += 1
        _STATS.kernels += program.num_kernels
    else:
        _STATS.cache_hits += 1
    return program, buffers


def _realize_nodes(outputs: list[LazyOp], device: str) -> None:
    program, buffers = _program(outputs, device)
    results = program.run(buffers)
    if capture_hook is not None:  # before the outputs become leaves: it reads their graph
        capture_hook(program, outputs)
    for node, flat in zip(outputs, results, strict=True):
        node.become_buffer(flat.reshape(node.shape))


def compiled(*tensors: TensorBase) -> tuple[Program, list[np.ndarray]]:
    """The compiled `Program` that realizing `tensors` (pending, all on one device) runs, and
    the input arrays it runs on; nothing is executed and the tensors stay pending."""
    nodes = [t._node for t in tensors]
    devices = {n.device for n in nodes}
    if len(devices) != 1 or any(n.buffer is not None for n in nodes):
        raise ValueError("compiled() takes pending tensors on one device")
    return _program(nodes, devices.pop())


def realize(*tensors: TensorBase) -> None:
    """Compute every pending tensor of `tensors`, together (one graph per device)."""
    by_device: dict[str, list[LazyOp]] = {}
    seen: set[LazyOp] = set()
    for t in tensors:
        node = t._node
        if node.buffer is not None or node in seen:
            continue
        seen.add(node)
        if 0 in node.shape:  # nothing to compute: no kernel for an empty result
            node.become_buffer(np.empty(node.shape, node.dtype.np))
            continue
        by_device.setdefault(node.device, []).append(node)
    for device, outputs in by_device.items():
        _realize_nodes(outputs, device)
