"""An ONNX graph prepared once and run by one function: the main graph and every subgraph.

`GraphRunner.prepare` checks every node of a graph at load (`check_node`), recursing into
the graph attributes of control-flow nodes (If's branches, Loop's and Scan's body) so an
unsupported op anywhere fails at load naming its node; initializers become values once and
Constant nodes are folded on the host. `GraphRunner.execute` walks a prepared graph over an
environment chained to the enclosing one (a `ChainMap`): a subgraph reads the values of the
graphs around it by name, any depth down, and its own names shadow theirs.

A value in the environment is a host numpy array, a device Tensor, a Python list of those
(an ONNX sequence) or None (an empty ONNX optional).
"""

from __future__ import annotations

import functools
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from picograd.frontend.tensor import Tensor
from picograd.onnx.dtypes import is_host_only, numpy_dtype, onnx_type_name
from picograd.onnx.errors import OnnxModelError, OnnxUnsupportedError
from picograd.onnx.fuse_attention import fuse_attention, reads_of_subgraphs
from picograd.onnx.registry import (
    OPS,
    NodeContext,
    check_node,
    lookup,
    node_attrs,
    node_label,
    node_opset,
)
from picograd.onnx.replay import ReadBacks

# an initializer this small (or an integer one up to _HOST_INT_LIMIT) also stays on the
# host, so a shape input read from it needs no device read-back
_HOST_LIMIT = 64
_HOST_INT_LIMIT = 4096


@dataclass(frozen=True)
class ValueType:
    """A declared graph input or output: kind "tensor", "sequence" (of tensors) or
    "optional" (of a tensor or a sequence); the (element) numpy dtype and dims (int or None
    for a symbolic dim; dims None if unranked or not declared)."""

    kind: str
    dtype: np.dtype | None
    dims: tuple | None


def _tensor_type(tt: onnx.TypeProto.Tensor, what: str) -> tuple[np.dtype | None, tuple | None]:
    dt = None
    if tt.elem_type:
        dt = numpy_dtype(tt.elem_type)
        if dt is None:
            raise OnnxUnsupportedError(f"{what}: element type "
                                       f"{onnx_type_name(tt.elem_type)} is not supported")
    if not tt.HasField("shape"):
        return dt, None
    return dt, tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)


def _value_type(tp: onnx.TypeProto, what: str, kind: str = "tensor") -> ValueType:
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        return ValueType(kind, *_tensor_type(tp.tensor_type, what))
    if which == "sequence_type" and kind == "tensor":
        return _value_type(tp.sequence_type.elem_type, what, "sequence")
    if which == "optional_type" and kind == "tensor":
        inner = _value_type(tp.optional_type.elem_type, what)
        return ValueType("optional", inner.dtype, inner.dims)
    if which is None and kind == "tensor":  # an undeclared type (subgraph values may be)
        return ValueType("tensor", None, None)
    raise OnnxUnsupportedError(f"{what}: only tensors, sequences of tensors and optionals "
                               f"are supported (got {which})")


def declared(vi: onnx.ValueInfoProto, where: str) -> ValueType:
    """The declared type of a graph input or output (`where` names it in messages)."""
    return _value_type(vi.type, f"{where} {vi.name!r}")


@dataclass
class PreparedNode:
    node: onnx.NodeProto
    attrs: dict[str, Any]
    graphs: dict[str, PreparedGraph] = field(default_factory=dict)
    # a node the importer made of several (fuse_attention): the nodes it replaces
    originals: list[PreparedNode] = field(default_factory=list)


@dataclass
class PreparedGraph:
    """A graph checked at load: its formal inputs, outputs (with declared types), values
    known at load (initializers and folded Constants) and the nodes left to run."""

    name: str
    input_names: list[str]
    output_names: list[str]
    output_types: list[ValueType]
    constants: dict[str, Any]
    nodes: list[PreparedNode]


def _scan_outputs(node: onnx.NodeProto, body: onnx.GraphProto) -> Sequence[onnx.ValueInfoProto]:
    """The body outputs a Loop or Scan stacks into its scan outputs (none for other ops)."""
    if node.op_type == "Loop":
        return body.output[1 + max(len(node.input) - 2, 0):]
    if node.op_type == "Scan":
        m = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
        return body.output[len(node.input) - m:]
    return []


def _needs_inference(graph: onnx.GraphProto) -> bool:
    """Whether a Loop or Scan anywhere in `graph` stacks a body output whose declared type
    lacks a dtype or static dims (what an empty, zero-iteration scan output needs)."""
    for n in graph.node:
        for a in n.attribute:
            if a.type != onnx.AttributeProto.GRAPH:
                continue
            if _needs_inference(a.g):
                return True
            for vi in _scan_outputs(n, a.g):
                vt = declared(vi, f"subgraph {a.g.name!r} output")
                if vt.dtype is None or vt.dims is None or None in vt.dims:
                    return True
    return False


class GraphRunner:
    """Prepares and runs the graphs of one model on one device."""

    def __init__(self, opsets: dict[str, int], device: str, base_dir: str = ""):
        # each domain's opset_import version (registry.domain_opsets): a node is read at
        # its own domain's
        self.opsets, self.device, self.base_dir = opsets, device, base_dir
        self._uploads: dict[int, tuple[np.ndarray, Tensor]] = {}
        self.read_backs = ReadBacks()  # device values read to the host by translations

    def _opset(self, node: onnx.NodeProto) -> int:
        return node_opset(node, self.opsets)

    # ── values known at load ───────────────────────────────────────────────

    def keep(self, array: np.ndarray) -> np.ndarray:
        """Register a model-owned host array so its device copy is made only once (a
        host-only type's array stays on the host: dtypes.py)."""
        if not is_host_only(array.dtype):
            self._uploads[id(array)] = (array, Tensor(array, device=self.device))
        return array

    def initializer(self, init: onnx.TensorProto) -> Any:
        if numpy_dtype(init.data_type) is None:
            raise OnnxUnsupportedError(f"initializer {init.name!r}: element type "
                                       f"{onnx_type_name(init.data_type)} is not supported")
        array = numpy_helper.to_array(init, base_dir=self.base_dir)
        array = np.asarray(array, dtype=numpy_dtype(init.data_type))
        small = array.size <= _HOST_LIMIT or (array.dtype.kind in "iub"
                                              and array.size <= _HOST_INT_LIMIT)
        if small or is_host_only(array.dtype):
            return self.keep(array)
        return Tensor(array, device=self.device)

    def to_tensor(self, array: np.ndarray) -> Tensor:
        if is_host_only(array.dtype):  # no picograd dtype: the translation must handle it
            raise OnnxUnsupportedError(
                f"a value of element type {array.dtype} reached an op that computes on the "
                f"device; picograd keeps {array.dtype} values on the host, where Cast, "
                f"CastLike, Identity and the shape ops (Reshape, Transpose, Squeeze, "
                f"Unsqueeze, Flatten, Shape, Size) take them")
        kept = self._uploads.get(id(array))
        if kept is not None and kept[0] is array:
            return kept[1]
        return Tensor(np.asarray(array, order="C"), device=self.device)

    # ── preparing ──────────────────────────────────────────────────────────

    def prepare(self, graph: onnx.GraphProto, main: bool = False) -> PreparedGraph:
        """Check and fold `graph` and, recursively, every graph attribute of its nodes."""
        where = "output" if main else f"subgraph {graph.name!r} output"
        out_types = [declared(vi, where) for vi in graph.output]
        if main:  # the main graph's outputs stay as declared; its loop bodies' are refined
            graph = self._with_inferred_bodies(graph)
        constants = {init.name: self.initializer(init) for init in graph.initializer}
        # IR < 4 lists every initializer as a main-graph input too: those are not fed
        inputs = [vi.name for vi in graph.input if not (main and vi.name in constants)]
        nodes = []
        for node in graph.node:
            check_node(node, self._opset(node))
            attrs = node_attrs(node)
            graphs = {a.name: self.prepare(a.g) for a in node.attribute
                      if a.type == onnx.AttributeProto.GRAPH}
            if node.op_type == "Constant":  # evaluated once, on the host
                value = OPS["Constant"].fn(self._context(PreparedNode(node, attrs), {}))
                constants[node.output[0]] = self.keep(np.asarray(value))
                continue
            nodes.append(PreparedNode(node, attrs, graphs))
        outputs = [vi.name for vi in graph.output]
        return PreparedGraph(graph.name, inputs, outputs, out_types, constants,
                             self._fused(graph, nodes, outputs))

    def _fused(self, graph: onnx.GraphProto, nodes: list[PreparedNode], outputs: list[str]
               ) -> list[PreparedNode]:
        """`nodes` with each attention chain an exporter spelled out as one node."""
        prepared = {id(pn.node): pn for pn in nodes}
        keep = set(outputs) | reads_of_subgraphs(graph)
        out = []
        for node, originals in fuse_attention([pn.node for pn in nodes], keep,
                                              self.opsets.get("", 1)):
            if not originals:
                out.append(prepared[id(node)])
                continue
            out.append(PreparedNode(node, node_attrs(node),
                                    originals=[prepared[id(n)] for n in originals]))
        return out

    def _with_inferred_bodies(self, graph: onnx.GraphProto) -> onnx.GraphProto:
        """`graph` after onnx's shape inference, when a Loop or Scan in it stacks a body
        output declared without static dims: inference gives them where it can, and they
        shape a zero-iteration loop's empty scan output (onnxruntime shapes it from its own
        inference). A graph inference cannot handle (too large to serialize, an op it
        rejects) stays as declared."""
        if not _needs_inference(graph):
            return graph
        proto = helper.make_model(graph, opset_imports=[
            helper.make_opsetid(domain, version) for domain, version in self.opsets.items()])
        try:
            return onnx.shape_inference.infer_shapes(proto).graph
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, ValueError,
                RuntimeError):
            return graph

    # ── running ────────────────────────────────────────────────────────────

    def _context(self, pn: PreparedNode, env: Mapping[str, Any]) -> NodeContext:
        run_graph = functools.partial(self._run_attr, pn, env) if pn.graphs else None
        outputs = {k: [(t.dtype, t.dims) for t in g.output_types] for k, g in pn.graphs.items()}
        fallback = functools.partial(self._originals, pn, env) if pn.originals else None
        return NodeContext(pn.node, pn.attrs, self._opset(pn.node), self.device, self.to_tensor,
                           len(pn.node.output), run_graph, outputs, self.read_backs, fallback)

    def _originals(self, pn: PreparedNode, env: Mapping[str, Any]) -> Any:
        """Run the nodes a fused node replaces; its outputs (one value or a tuple)."""
        local: dict[str, Any] = {}
        self._run_nodes(pn.originals, ChainMap(local, env), local)  # type: ignore[arg-type]
        values = tuple(local[n] for n in pn.node.output)
        return values[0] if len(values) == 1 else values

    def _run_attr(self, pn: PreparedNode, env: Mapping[str, Any], attr: str,
                  inputs: Sequence[Any]) -> list[Any]:
        graph = pn.graphs[attr]
        if len(inputs) != len(graph.input_names):
            label = node_label(pn.node, self._opset(pn.node))
            raise OnnxModelError(f"{label}: its {attr} graph takes "
                                 f"{len(graph.input_names)} inputs, {len(inputs)} given")
        out = self.execute(graph, inputs, env)
        return [out[n] for n in graph.output_names]

    def execute(self, graph: PreparedGraph, inputs: Sequence[Any],
                outer: Mapping[str, Any]) -> ChainMap[str, Any]:
        """Run `graph` with its formal inputs bound to `inputs`, reading other names from
        `outer`; returns the graph's environment (its own values first)."""
        local: dict[str, Any] = dict(graph.constants)
        local.update(zip(graph.input_names, inputs, strict=True))
        env: ChainMap[str, Any] = ChainMap(local, outer)  # type: ignore[arg-type]
        self._run_nodes(graph.nodes, env, local)
        return env

    def _run_nodes(self, nodes: Sequence[PreparedNode], env: Mapping[str, Any],
                   local: dict[str, Any]) -> None:
        """Translate `nodes` in order, reading `env` and writing their outputs to `local`
        (the front of `env`)."""
        for pn in nodes:
            node = pn.node
            try:
                args = [env[n] if n else None for n in node.input]
            except KeyError as e:
                raise OnnxModelError(f"{node_label(node, self._opset(node))}: no value named {e} "
                                     f"in scope") from None
            ctx = self._context(pn, env)
            result = lookup(node).fn(ctx, *args)
            results = result if isinstance(result, tuple) else (result,)
            for out_name, value in zip(node.output, results, strict=False):
                if out_name:  # numpy's 0-d results are scalars: keep them host arrays
                    local[out_name] = np.asarray(value) if isinstance(value, np.generic) else value
            missing = [n for n in node.output[len(results):] if n]
            if missing:
                raise OnnxUnsupportedError(f"{ctx.label}: output(s) {', '.join(missing)} "
                                           f"not supported")
