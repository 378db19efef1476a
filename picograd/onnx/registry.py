"""The table of translated ops and what a translation sees.

Each op family module registers its translations with `@op(name, attrs=...)`: a function
`(ctx, *inputs) -> value or tuple of values`. A value is either a numpy array — a *host
value*, known without running a kernel (constants, small integer initializers, `Shape` and
arithmetic on such values) — or a picograd `Tensor`. Shape inputs (Reshape's shape, Slice's
starts, ...) are read with `ctx.ints`, which takes a host value as it is, so shape
computations are folded on the host instead of being launched as kernels.

`attrs` lists the attributes a translation understands: a node with any other attribute is
unsupported at load (`check_node`), as is one whose optional `check` rejects it.

Ops are keyed by domain: `OPS` holds the default (ai.onnx) domain, `DOMAIN_OPS` every
domain (`com.microsoft`: onnxruntime's contrib ops that transformer exports emit). A node is
read at its own domain's opset_import version (`node_opset`) and found with `lookup`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper

from picograd.frontend.tensor import Tensor
from picograd.onnx.errors import OnnxUnsupportedError

Value = np.ndarray | Tensor
Translation = Callable[..., Any]


@dataclass(frozen=True)
class OpSpec:
    """One op's translation, the attributes it reads and its load-time check."""

    fn: Translation
    attrs: frozenset[str]
    min_opset: int = 1
    check: Callable[[onnx.NodeProto, dict[str, Any], int], str | None] | None = None


OPS: dict[str, OpSpec] = {}
DOMAINS = ("", "ai.onnx")  # the default domain's two spellings
MICROSOFT = "com.microsoft"
# the importer's own ops (fuse_attention.py's FusedAttention): made at load, never read
# from a file (onnx's checker rejects a model that imports this domain's ops undeclared,
# and check_node refuses the domain in a model)
INTERNAL = "ai.picograd.internal"
DOMAIN_OPS: dict[str, dict[str, OpSpec]] = {"": OPS, MICROSOFT: {}, INTERNAL: {}}


def _domain_key(domain: str) -> str:
    return "" if domain in DOMAINS else domain


def op(*names: str, attrs: Sequence[str] = (), min_opset: int = 1,
       check: Callable[[onnx.NodeProto, dict[str, Any], int], str | None] | None = None,
       domain: str = "") -> Callable[[Translation], Translation]:
    """Register `fn` as the translation of the ONNX ops `names` of `domain`."""
    def register(fn: Translation) -> Translation:
        for name in names:
            DOMAIN_OPS[_domain_key(domain)][name] = OpSpec(fn, frozenset(attrs), min_opset,
                                                           check)
        return fn
    return register


def domain_opsets(proto: onnx.ModelProto) -> dict[str, int]:
    """{domain: opset version} of the model's opset_import (ai.onnx under "")."""
    return {_domain_key(o.domain): o.version for o in proto.opset_import}


def node_opset(node: onnx.NodeProto, opsets: dict[str, int]) -> int:
    """The opset `node` is read at: its own domain's opset_import version (1 if the model
    does not import the domain; onnx's checker rejects such a model first)."""
    return opsets.get(_domain_key(node.domain), 1)


def lookup(node: onnx.NodeProto) -> OpSpec:
    """The translation of `node` (by its domain and op type); check_node passed it."""
    return DOMAIN_OPS[_domain_key(node.domain)][node.op_type]


def node_label(node: onnx.NodeProto, opset: int) -> str:
    """How messages name a node: its name, op type, domain and opset."""
    domain = node.domain or "ai.onnx"
    return f"node {node.name or '<unnamed>'!r} ({domain}::{node.op_type}, opset {opset})"


def node_attrs(node: onnx.NodeProto) -> dict[str, Any]:
    """The node's attributes as Python values (TensorProto and GraphProto stay protos)."""
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def check_node(node: onnx.NodeProto, opset: int) -> None:
    """Raise OnnxUnsupportedError unless the importer translates `node` at `opset`."""
    label = node_label(node, opset)
    table = DOMAIN_OPS.get(_domain_key(node.domain))
    if table is None or node.domain == INTERNAL:
        raise OnnxUnsupportedError(f"{label}: the domain {node.domain!r} is not supported")
    spec = table.get(node.op_type)
    if spec is None:
        raise OnnxUnsupportedError(f"{label}: the op {node.op_type!r} is not supported in "
                                   f"the domain {node.domain or 'ai.onnx'!r}")
    if opset < spec.min_opset:
        raise OnnxUnsupportedError(f"{label}: {node.op_type} is translated from opset "
                                   f"{spec.min_opset}")
    attrs = node_attrs(node)
    unknown = sorted(set(attrs) - spec.attrs)
    if unknown:
        raise OnnxUnsupportedError(f"{label}: attribute(s) {', '.join(unknown)} not supported")
    if any(a.ref_attr_name for a in node.attribute):
        raise OnnxUnsupportedError(f"{label}: attribute references (functions) not supported")
    if spec.check is not None:
        why = spec.check(node, attrs, opset)
        if why is not None:
            raise OnnxUnsupportedError(f"{label}: {why}")


@dataclass
class NodeContext:
    """What a translation needs besides its inputs: the node's attributes, the opset it is
    read at, the device and a way to make device tensors of host values."""

    node: onnx.NodeProto
    attrs: dict[str, Any]
    opset: int
    device: str
    to_tensor: Callable[[np.ndarray], Tensor]
    n_outputs: int = field(default=1)
    # control flow (If, Loop, Scan): run_graph(attr, inputs) runs the node's prepared graph
    # attribute `attr` over the enclosing environment and returns its outputs in order;
    # graph_outputs[attr] is that graph's declared outputs as (numpy dtype, dims) pairs
    run_graph: Callable[[str, Sequence[Any]], list[Any]] | None = None
    graph_outputs: dict[str, list[tuple[np.dtype | None, tuple | None]]] = field(
        default_factory=dict)
    # called whenever a device value is read back to the host (replay.ReadBacks): a run
    # that reads one back is data-dependent and is not replayed
    on_read_back: Callable[[], None] | None = None
    # a node the importer made of several (fuse_attention.py): runs those original nodes
    # and returns its outputs, for inputs the fused translation cannot take
    fallback: Callable[[], Any] | None = None

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    @property
    def label(self) -> str:
        return node_label(self.node, self.opset)

    def unsupported(self, why: str) -> OnnxUnsupportedError:
        return OnnxUnsupportedError(f"{self.label}: {why}")

    def t(self, v: Value) -> Tensor:
        """`v` as a device Tensor (a host value is uploaded, once for constants)."""
        return v if isinstance(v, Tensor) else self.to_tensor(np.asarray(v))

    def host(self, v: Value) -> np.ndarray:
        """`v` as a numpy array; a Tensor computed on the device is read back (a shape input
        that depends on data, e.g. a Reshape whose shape is a computed tensor)."""
        if not isinstance(v, Tensor):
            return np.asarray(v)
        if self.on_read_back is not None:
            self.on_read_back()
        return v.numpy()

    def ints(self, v: Value) -> list[int]:
        """A 1-D (or 0-d) integer shape input as a list of Python ints."""
        return [int(i) for i in self.host(v).reshape(-1)]


def is_host(*values: Value | None) -> bool:
    """True when every given value is known on the host (None: an omitted optional input)."""
    return all(v is None or isinstance(v, np.ndarray) for v in values)
