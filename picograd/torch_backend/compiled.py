"""A compiled FX graph: its picograd translation replayed per input signature, or the
graph itself when picograd cannot run it.

`compile_graph(gm, example_inputs, settings, kind)` decides at compile time: a graph with
ops that have no translation is split around them (split.py), and each part decided as a
graph; a graph with an input picograd cannot read, or a translation that refuses its
arguments (tried on zeros of the example shapes, which builds a lazy graph and runs
nothing) runs in torch as it came, with one log line per reason. Otherwise each call binds
the torch inputs (parameters once, `convert.Binder`), runs the translation through one
`picograd.jit` per input signature (calls 1 and 2 of a signature run it eagerly, 3+ replay
the captured programs) and hands the results back as torch tensors. An output that is a
graph input (AOTAutograd's saved activations) is the torch input itself, not a copy.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

import picograd as pg
import picograd.debug as debug
from picograd.compiler.driver import pipeline_scope
from picograd.frontend.tensor import Tensor
from picograd.jit_replay import Jit, JitError, jit, jit_running
from picograd.torch_backend.convert import Binder, Handout, check_input, hint
from picograd.torch_backend.graph import translate, translated_ops, unsupported_ops
from picograd.torch_backend.registry import TorchUnsupported, pg_dtype
from picograd.torch_backend.split import placeholders, split_graph, torch_ops

LOG = logging.getLogger("picograd.torch_backend")
_logged: set[str] = set()  # the reasons logged so far (once each per process)


@dataclass(frozen=True)
class RunSettings:
    """The backend's options: picograd's device, the pass pipeline its realizes run
    (None: the device's default) and the DEBUG level while its graphs run (None: as set)."""

    device: str = "CPU"
    pipeline: str | None = None
    debug: int | None = None

    def check(self) -> None:
        if not isinstance(self.device, str):
            raise ValueError(f"picograd backend: device must be a string such as 'CPU', "
                             f"got {self.device!r}")
        if self.pipeline is not None and not isinstance(self.pipeline, str):
            raise ValueError(f"picograd backend: pipeline must be a pass pipeline string, "
                             f"got {type(self.pipeline).__name__} {self.pipeline!r}")
        if self.debug is not None and (not isinstance(self.debug, int) or isinstance(
                self.debug, bool) or not 0 <= self.debug <= 5):
            raise ValueError(f"picograd backend: debug must be a DEBUG level 0-5, got "
                             f"{self.debug!r}")

    def scope(self) -> contextlib.ExitStack:
        """The block a graph's calls run in: its pipeline and DEBUG level in force."""
        stack = contextlib.ExitStack()
        stack.enter_context(pipeline_scope(self.pipeline))
        if self.debug is not None:
            stack.enter_context(debug.flags(debug=self.debug))
        return stack


@dataclass
class GraphRecord:
    """What became of one FX graph: its ATen ops and, when it ran in torch, why."""

    kind: str  # "forward", "backward" or "inference"
    ops: list[str]
    fallback: list[str] = field(default_factory=list)  # reasons; empty: ran in picograd


RECORDERS: list[list[GraphRecord]] = []  # explain()'s lists, innermost last


def _log_once(reason: str, consequence: str = "this graph runs in torch") -> None:
    if reason not in _logged:
        _logged.add(reason)
        LOG.warning("%s: %s", reason, consequence)


def _reasons(gm: torch.fx.GraphModule, example_inputs: list[Any], device: str) -> list[str]:
    """Why the graph cannot run in picograd (nothing: it can)."""
    missing = unsupported_ops(gm)
    if missing:
        return [f"{name}: no translation in picograd" for name in missing]
    try:
        for value in example_inputs:
            check_input(value)
        translate(gm, [_example(v, device) for v in example_inputs], Binder(device))
    except TorchUnsupported as e:
        return [str(e)]
    except pg.PicogradError as e:  # picograd refused the arguments: torch will run them
        return [f"{type(e).__name__}: {e}".splitlines()[0]]
    return []


def _example(value: Any, device: str) -> Any:
    """A stand-in for an example input: zeros of its (example) shape, or its size."""
    if not isinstance(value, torch.Tensor):
        return hint(value)
    shape = tuple(hint(n) for n in value.shape)
    return Tensor.zeros(*shape, dtype=pg_dtype(value.dtype, "input"), device=device)


def _signature(values: list[Any]) -> tuple[Any, ...]:
    return tuple((tuple(v.shape), v.dtype.name, v.device) if isinstance(v, Tensor) else v
                 for v in values)


class PicogradGraph:
    """The boxed callable AOTAutograd runs for one graph translated to picograd."""

    def __init__(self, gm: torch.fx.GraphModule, settings: RunSettings):
        # AOTAutograd hands the inputs as one list (and frees them early); an instance
        # attribute, so that the wrappers torch puts around the callable copy it
        self._boxed_call = True
        self.gm, self.binder, self.settings = gm, Binder(settings.device), settings
        inputs = {node: i for i, node in enumerate(placeholders(gm))}
        [out] = [n for n in gm.graph.nodes if n.op == "output"]
        # each result: ("input", i) a graph input as it is, ("none", 0), ("pg", k)
        self.plan: list[tuple[str, int]] = []
        count = 0
        for value in out.args[0]:
            if value is None:
                self.plan.append(("none", 0))
            elif isinstance(value, torch.fx.Node) and value in inputs:
                self.plan.append(("input", inputs[value]))
            elif not isinstance(value, torch.fx.Node) or not isinstance(
                    value.meta.get("val"), torch.Tensor):
                raise TorchUnsupported("output", f"a {type(value).__name__} result")
            else:
                self.plan.append(("pg", count))
                count += 1
        self._replays: dict[tuple[Any, ...], Jit] = {}
        self._eager: set[tuple[Any, ...]] = set()  # signatures that realize nothing
        self.dynamic = dynamic_dims(gm)

    def _computed(self, *tensors: Any) -> tuple[Tensor, ...]:
        results = translate(self.gm, tensors, self.binder)
        return tuple(results[i] for i, (kind, _) in enumerate(self.plan) if kind == "pg")

    def _run(self, tensors: list[Any]) -> tuple[Tensor, ...]:
        key = _signature(tensors)
        if key in self._eager or jit_running():
            return self._computed(*tensors)
        replay = self._replays.get(key)
        if replay is None:
            if self._replays:  # a shape the graph has not seen: picograd compiles anew
                LOG.info("a graph of %d ops compiles for new input sizes %s%s",
                         len(translated_ops(self.gm)), _sizes(key), _static_note(self.dynamic))
            replay = self._replays[key] = jit(self._computed)
        try:
            return replay(*tensors)
        except JitError:  # nothing to capture (no program ran): stay eager for this shape
            self._replays.pop(key, None)
            self._eager.add(key)
            return self._computed(*tensors)

    def __call__(self, *args: Any) -> list[Any]:
        values = _unboxed(args)
        with self.settings.scope():
            computed = self._run(self.binder(values)) if any(
                kind == "pg" for kind, _ in self.plan) else ()
            pg.realize(*computed)
        results: list[Any] = []
        handout = Handout(values)
        for kind, i in self.plan:
            results.append(None if kind == "none" else values[i] if kind == "input"
                           else handout(computed[i]))
        return results


def dynamic_dims(gm: torch.fx.GraphModule) -> list[str]:
    """The graph's sizes that dynamo left symbolic (`dynamic=True`, `mark_dynamic`, or
    sizes it saw change): `input 2 dims [0]` for a tensor input, `size input 1` for a size
    passed on its own."""
    found = []
    for i, node in enumerate(placeholders(gm)):
        value = node.meta.get("val")
        if isinstance(value, torch.SymInt):
            found.append(f"size input {i}")
        elif isinstance(value, torch.Tensor):
            dims = [d for d, n in enumerate(value.shape) if isinstance(n, torch.SymInt)]
            if dims:
                found.append(f"input {i} dims {dims}")
    return found


def _static_note(dynamic: list[str]) -> str:
    """Why a graph with symbolic sizes still compiles per size: picograd's kernels have
    static shapes (its symbolic values, `pg.Variable`, are values, not sizes)."""
    if not dynamic:
        return ""
    return (f" (symbolic in torch: {', '.join(dynamic)}; picograd compiles one program per "
            f"concrete size, its kernels have static shapes)")


def _sizes(key: tuple[Any, ...]) -> list[Any]:
    return [k[0] if isinstance(k, tuple) else k for k in key]


def _unboxed(args: tuple[Any, ...]) -> list[Any]:
    """The inputs of a call made boxed (one list, which the callee empties so that the
    inputs can be freed early) or plain (a wrapper of torch's may drop `_boxed_call`)."""
    if len(args) == 1 and isinstance(args[0], list):
        values = list(args[0])
        args[0].clear()
        return values
    return list(args)


def _torch_graph(gm: torch.fx.GraphModule) -> Callable[[list[Any]], Any]:
    """The graph run by torch, boxed like PicogradGraph."""
    def run(*args: Any) -> Any:
        return gm(*_unboxed(args))
    run._boxed_call = True  # type: ignore[attr-defined]
    return run


def compile_graph(gm: torch.fx.GraphModule, example_inputs: list[Any], *,
                  settings: RunSettings, kind: str) -> Callable[..., Any]:
    """The callable for one of AOTAutograd's graphs: picograd's; where some of its ops
    have no translation, the graph split around them (`split.py`: they run in torch, the
    rest in picograd); or torch's where picograd refuses it (logged)."""
    missing = unsupported_ops(gm)
    if missing:
        split = split_graph(gm, functools.partial(_compile_whole, settings=settings,
                                                  kind=kind))
        if split is not None:
            reasons = [f"{name}: no translation in picograd" for name in missing]
            for recorder in RECORDERS:
                recorder.append(GraphRecord(kind, torch_ops(split), reasons))
            for reason in reasons:
                _log_once(reason, "this op runs in torch, the rest of its graph in picograd")
            return _torch_graph(split)
    return _compile_whole(gm, example_inputs, settings=settings, kind=kind)


def _compile_whole(gm: torch.fx.GraphModule, example_inputs: list[Any], *,
                   settings: RunSettings, kind: str) -> Callable[..., Any]:
    """`gm` compiled by picograd as one graph, or run by torch where it cannot (logged)."""
    reasons = _reasons(gm, example_inputs, settings.device)
    compiled: Callable[..., Any] | None = None
    if not reasons:
        try:
            compiled = PicogradGraph(gm, settings)
        except TorchUnsupported as e:
            reasons = [str(e)]
    for recorder in RECORDERS:
        recorder.append(GraphRecord(kind, translated_ops(gm), reasons))
    for reason in reasons:
        _log_once(reason)
    return compiled if compiled is not None else _torch_graph(gm)
