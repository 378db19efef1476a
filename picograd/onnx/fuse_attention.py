"""Attention spelled out by an exporter, run as one fused attention.

Exporters write `softmax(q k^T * scale + mask) @ v` as nodes: torch's TorchScript exporter
gives `MatMul(Mul(q, s), Mul(k^T, s)) -> Softmax -> MatMul` for
`F.scaled_dot_product_attention`, and BERT-style code gives `MatMul(q, k^T) -> Div(c) ->
Add(mask) -> Softmax -> MatMul(v)`. Translated node by node, picograd computes the scores,
the softmax and the product as the decomposition does; `F.scaled_dot_product_attention`
instead makes one `pg_tensor.attention` kernel on CPUs (a tile of score rows at a time, the
same kernel as a model written with picograd's API gets).

`fuse_attention(nodes, keep)` finds such chains in a prepared graph and replaces each by one
`PreparedNode` of the internal op `ai.picograd::FusedAttention` whose inputs are q, k^T, v,
the mask ("" for none) and the scale factors, and whose attribute `kinds` says per factor
whether the scores are multiplied ("m") or divided ("d") by it. A chain is fused only when
each of its intermediate values has one reader, is no graph output and is not read by a
subgraph (`keep`); the Softmax is over the last axis; every Mul / Div comes before the Add.
At run time the fused translation checks what only values can tell (float32 operands of at
least 2 dims, one-element host factors, a float32 mask): anything else runs the original
nodes, so the fusion never changes what a model computes beyond float rounding (the scale
applied once to the scores instead of to q and k).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper

from picograd.frontend.dtype import float32
from picograd.frontend.tensor import Tensor
from picograd.nn.attention import scaled_dot_product_attention
from picograd.onnx.registry import INTERNAL, NodeContext, Value, is_host, op


def reads_of_subgraphs(graph: onnx.GraphProto) -> set[str]:
    """Every value name the graph attributes of `graph`'s nodes read, any depth down (an
    outer value a subgraph reads must stay a value of its own)."""
    names: set[str] = set()
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                names |= {n for sub in attr.g.node for n in sub.input}
                names |= reads_of_subgraphs(attr.g)
    return names


_DEFAULT = ("", "ai.onnx")


class _Walk:
    """Finds the attention chain behind a Softmax's input (see the module docstring)."""

    def __init__(self, producer: dict[str, onnx.NodeProto], single: Callable[[str], bool]):
        self.producer, self.single = producer, single

    def node(self, name: str, *kinds: str) -> onnx.NodeProto | None:
        """The default-domain node of one of `kinds` that makes `name`, read only once."""
        node = self.producer.get(name)
        if node is None or node.domain not in _DEFAULT or node.op_type not in kinds \
                or not self.single(name):
            return None
        return node

    def scores(self, name: str, add_allowed: bool
               ) -> tuple[onnx.NodeProto, list[onnx.NodeProto], list[tuple[str, str]], str] | None:
        """(the MatMul of q and k^T, the Add / Mul / Div nodes between, the factors as
        (name, "m" | "d"), the mask name or "") behind `name`; None if there is none.
        Walking back from the Softmax, the Add (at most one) comes first: every scale is
        applied before the mask is added, so once past a Mul / Div no Add may follow."""
        kinds = ("MatMul", "Mul", "Div", "Add") if add_allowed else ("MatMul", "Mul", "Div")
        node = self.node(name, *kinds)
        if node is None:
            return None
        if node.op_type == "MatMul":
            return node, [], [], ""
        sides = (0,) if node.op_type == "Div" else (0, 1)  # c / scores is no attention
        for side in sides:
            found = self.scores(node.input[side], False)
            if found is None:
                continue
            matmul, nodes, factors, mask = found
            other = node.input[1 - side]
            if node.op_type == "Add":
                mask = other
            else:
                factors = [*factors, (other, "d" if node.op_type == "Div" else "m")]
            return matmul, [*nodes, node], factors, mask
        return None

    def operand(self, name: str, nodes: list[onnx.NodeProto], factors: list[tuple[str, str]]
                ) -> str:
        """`name`, or the first input of the `Mul(x, s)` that made it, s then a factor of
        the scores (a product commutes: the run-time check wants s one element)."""
        node = self.node(name, "Mul")
        if node is None:
            return name
        factors.append((node.input[1], "m"))
        nodes.append(node)
        return node.input[0]


def _softmax_axis(softmax: onnx.NodeProto, opset: int) -> int:
    """Softmax's axis as given, or its default at `opset` (1 before opset 13: the input
    read as 2-D, which is the last axis only when the rank is 2)."""
    for a in softmax.attribute:
        if a.name == "axis":
            return int(helper.get_attribute_value(a))
    return -1 if opset >= 13 else 1


def _match(last: onnx.NodeProto, walk: _Walk, opset: int
           ) -> tuple[list[onnx.NodeProto], onnx.NodeProto] | None:
    """The original nodes of the attention that ends in the MatMul `last` and the fused
    node that replaces them, or None."""
    weights, v = last.input
    softmax = walk.node(weights, "Softmax")
    if softmax is None:
        return None
    found = walk.scores(softmax.input[0], True)
    if found is None:
        return None
    scores, nodes, factors, mask = found
    nodes, factors = [*nodes, scores], list(factors)
    q = walk.operand(scores.input[0], nodes, factors)
    kt = walk.operand(scores.input[1], nodes, factors)
    fused = helper.make_node(
        "FusedAttention", [q, kt, v, mask, *(n for n, _ in factors)], list(last.output),
        name=f"{last.name or 'attention'}/fused", domain=INTERNAL,
        kinds="".join(k for _, k in factors), softmax_axis=_softmax_axis(softmax, opset))
    return [*nodes, softmax, last], fused


def fuse_attention(nodes: Sequence[onnx.NodeProto], keep: Iterable[str], opset: int
                   ) -> list[tuple[onnx.NodeProto, list[onnx.NodeProto]]]:
    """Each node of `nodes` as (node, []), except that each fusable attention chain becomes
    (its FusedAttention node, the original nodes it replaces in graph order), placed where
    its last node was. `keep`: value names that must stay values (graph outputs, subgraph
    reads); `opset`: the default domain's."""
    kept = set(keep)
    producer = {out: n for n in nodes for out in n.output if out}
    readers = Counter(name for n in nodes for name in n.input if name)

    def single(name: str) -> bool:
        return readers[name] == 1 and name not in kept

    walk = _Walk(producer, single)
    order = {id(n): i for i, n in enumerate(nodes)}
    replaced: dict[int, tuple[onnx.NodeProto, list[onnx.NodeProto]]] = {}
    dropped: set[int] = set()
    for node in nodes:
        if node.op_type != "MatMul" or node.domain not in _DEFAULT:
            continue
        found = _match(node, walk, opset)
        if found is None or any(id(n) in dropped for n in found[0]):
            continue
        originals, fused = found
        dropped |= {id(n) for n in originals}
        replaced[id(node)] = (fused, sorted(originals, key=lambda n: order[id(n)]))
    out = []
    for node in nodes:
        if id(node) in replaced:
            out.append(replaced[id(node)])
        elif id(node) not in dropped:
            out.append((node, []))
    return out


def _scale(ctx: NodeContext, factors: Sequence[Value]) -> float | None:
    """The product of the scale factors (a divisor as its reciprocal), or None when one is
    not a one-element host value."""
    scale = 1.0
    kinds = ctx.attr("kinds", b"")
    kinds = kinds.decode() if isinstance(kinds, bytes) else kinds  # a string attribute
    for value, kind in zip(factors, kinds, strict=True):
        if not is_host(value) or np.asarray(value).size != 1:
            return None
        f = float(np.asarray(value).reshape(-1)[0])
        if kind == "d" and f == 0.0:
            return None  # the decomposition's inf / NaN
        scale *= f if kind == "m" else 1.0 / f
    return scale


def _fusable(ctx: NodeContext, q: Value, kt: Value, v: Value, mask: Value | None) -> bool:
    tensors = [t for t in (q, kt, v, mask) if t is not None]
    if not all(isinstance(t, Tensor) or is_host(t) for t in tensors):
        return False
    ts = [ctx.t(t) for t in tensors]
    if any(t.dtype is not float32 or t.ndim < 2 for t in ts[:3]):
        return False
    if mask is not None and ts[3].dtype is not float32:
        return False
    axis = ctx.attr("softmax_axis", -1)
    return axis in (-1, max(ts[0].ndim, ts[1].ndim) - 1)


def _nan_where_masked_out(ctx: NodeContext, out: Tensor, mask: Value) -> Tensor:
    """ONNX's Softmax of a row of -inf scores is NaN, where the fused kernel (torch's safe
    softmax) gives zeros: the rows whose mask is -inf everywhere are NaN again. (With
    finite q and k those are the rows of -inf scores.)"""
    if is_host(mask) and not np.isneginf(np.asarray(mask)).any():
        return out
    dead = ctx.t(mask).max(-1, keepdim=True) == -np.inf
    return dead.where(np.nan, out)


@op("FusedAttention", attrs=("kinds", "softmax_axis"), domain=INTERNAL)
def _fused_attention(ctx: NodeContext, q: Value, kt: Value, v: Value, mask: Value | None,
                     *factors: Value) -> Any:
    """softmax(q @ kt * scale + mask) @ v as `F.scaled_dot_product_attention`; anything
    the fused kernel cannot take exactly runs the original nodes (`ctx.fallback`)."""
    scale = _scale(ctx, factors)
    if scale is None or not _fusable(ctx, q, kt, v, mask):
        if ctx.fallback is None:
            raise ctx.unsupported("a fused attention without its original nodes")
        return ctx.fallback()
    k = ctx.t(kt).transpose(-2, -1)
    out = scaled_dot_product_attention(ctx.t(q), k, ctx.t(v),
                                       attn_mask=None if mask is None else ctx.t(mask),
                                       scale=scale)
    return out if mask is None else _nan_where_masked_out(ctx, out, mask)
