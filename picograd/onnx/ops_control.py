"""Control flow: If, Loop, Scan.

Their subgraphs (If's then_branch / else_branch, Loop's and Scan's body) are prepared at load
by picograd/onnx/graph.py and run through `ctx.run_graph(attr, inputs)`, over the enclosing
environment (a subgraph reads outer values by name). The loops themselves run on the host:
a condition or trip count on the device is read back (a sync, documented in model.py), the
iteration counter is a host int64 and host loop-carried values stay host values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from picograd.frontend.ops_shape import stack
from picograd.frontend.tensor import Tensor
from picograd.onnx.errors import OnnxModelError
from picograd.onnx.registry import NodeContext, is_host, node_label, op


def _flag(ctx: NodeContext, v: Any, what: str) -> bool:
    """A one-element condition as a Python bool (a device value is read back)."""
    array = ctx.host(v)
    if array.size != 1:
        raise ctx.unsupported(f"the {what} has {array.size} elements, it needs exactly one")
    return bool(array.reshape(-1)[0])


def _run(ctx: NodeContext, attr: str, inputs: list[Any]) -> list[Any]:
    if ctx.run_graph is None:  # the executor gives every node with graph attributes one
        raise ctx.unsupported(f"no prepared {attr} graph")
    return ctx.run_graph(attr, inputs)


def _arity(node: onnx.NodeProto, opset: int, attr: str, graph: onnx.GraphProto, n_in: int,
           n_out: int) -> None:
    """A graph attribute must take and give as many values as its node passes and names:
    checked at load, so a malformed body fails there (naming the node), not at its first
    iteration, and an If branch's extra outputs are never silently dropped."""
    if len(graph.input) != n_in or len(graph.output) != n_out:
        raise OnnxModelError(f"{node_label(node, opset)}: its {attr} graph takes "
                             f"{len(graph.input)} inputs and gives {len(graph.output)} "
                             f"outputs, the node needs {n_in} and {n_out}")


def _check_if(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    for attr in ("then_branch", "else_branch"):
        _arity(node, opset, attr, attrs[attr], 0, len(node.output))
    return None


@op("If", attrs=("then_branch", "else_branch"), check=_check_if)
def _if(ctx: NodeContext, cond: Any) -> tuple[Any, ...]:
    """Only the taken branch is run."""
    taken = "then_branch" if _flag(ctx, cond, "If condition") else "else_branch"
    return tuple(_run(ctx, taken, []))


def _stack(ctx: NodeContext, items: list[Any], axis: int) -> Any:
    if any(isinstance(v, list) or v is None for v in items):
        raise ctx.unsupported("a scan output that is a sequence or an optional")
    if is_host(*items):
        return np.stack([np.asarray(v) for v in items], axis=axis)
    return stack([ctx.t(v) for v in items], dim=axis)


def _empty_stack(ctx: NodeContext, attr: str, index: int, axis: int) -> np.ndarray:
    """The stacked output of zero iterations: empty along `axis`, its other dims from the
    body's declared output, or onnx's inference of it (graph.py; ONNX leaves the shape
    undefined when it is not known, so that is refused rather than guessed)."""
    dtype, dims = ctx.graph_outputs[attr][index]
    if dtype is None or dims is None or any(d is None for d in dims):
        raise ctx.unsupported(f"zero iterations and the body's output {index} has no "
                              f"static shape (declared or inferred) for the empty stacked "
                              f"output")
    shape = list(dims)
    shape.insert(_axis(ctx, axis, len(dims) + 1, "scan output"), 0)
    return np.zeros(shape, dtype)


def _check_loop(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    """Refuses a Loop that names neither a trip count nor a condition (the spec's infinite
    loop); the body takes (i, cond, carried...) and gives (cond, carried..., scans...)."""
    inputs = [*node.input, "", ""]
    if not inputs[0] and not inputs[1]:
        return "a Loop with neither a trip count nor a condition never ends"
    carried = max(len(node.input) - 2, 0)
    if len(node.output) < carried:
        raise OnnxModelError(f"{node_label(node, opset)}: {carried} loop-carried inputs "
                             f"but only {len(node.output)} outputs")
    _arity(node, opset, "body", attrs["body"], 2 + carried, 1 + len(node.output))
    return None


@op("Loop", attrs=("body",), check=_check_loop)
def _loop(ctx: NodeContext, trips: Any = None, cond: Any = None, *initial: Any
          ) -> tuple[Any, ...]:
    """for i in range(M) while cond: (cond, carried..., scans...) = body(i, cond, carried...).
    The body's condition output is read even when the Loop's cond input is omitted (the
    for-loop form): onnxruntime and onnx's reference stop when it is False, although the
    spec's pseudocode calls it ignored."""
    limit = None if trips is None else int(ctx.host(trips).reshape(-1)[0])
    going = True if cond is None else _flag(ctx, cond, "Loop condition")
    carried = list(initial)
    n = len(carried)
    scans: list[list[Any]] = [[] for _ in range(ctx.n_outputs - n)]
    i = 0
    while going and (limit is None or i < limit):
        outs = _run(ctx, "body", [np.array(i, np.int64), np.array(going), *carried])
        carried = outs[1:1 + n]
        for acc, value in zip(scans, outs[1 + n:], strict=True):
            acc.append(value)
        going = _flag(ctx, outs[0], "Loop body's condition")
        i += 1
    stacked = [_stack(ctx, acc, 0) if acc else _empty_stack(ctx, "body", 1 + n + k, 0)
               for k, acc in enumerate(scans)]
    return (*carried, *stacked)


def _scan_lists_why(attrs: dict[str, Any], m: int, k: int) -> str | None:
    """Why Scan's per-input / per-output attribute lists do not fit (None if they do)."""
    for name, count in (("scan_input_axes", m), ("scan_input_directions", m),
                        ("scan_output_axes", k), ("scan_output_directions", k)):
        values = attrs.get(name)
        if values is not None and len(values) != count:
            return f"{name} has {len(values)} entries for {count} scan values"
        if values is not None and "directions" in name and any(d not in (0, 1)
                                                                for d in values):
            return f"{name} {list(values)}: a direction is 0 or 1"
    return None


def _check_scan(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    """The body takes (states..., scan slices...) and gives (states..., scan outputs...);
    the axes and directions lists have one entry per scan input / output."""
    m = int(attrs["num_scan_inputs"])
    n = len(node.input) - m
    k = len(node.output) - n
    why = (f"num_scan_inputs {m} with {len(node.input)} inputs" if not 0 < m <= len(node.input)
           else f"{n} states but only {len(node.output)} outputs" if k < 0
           else _scan_lists_why(attrs, m, k))
    if why is not None:
        raise OnnxModelError(f"{node_label(node, opset)}: {why}")
    _arity(node, opset, "body", attrs["body"], len(node.input), len(node.output))
    return None


@op("Scan", attrs=("body", "num_scan_inputs", "scan_input_axes", "scan_input_directions",
                   "scan_output_axes", "scan_output_directions"), min_opset=9,
    check=_check_scan)
def _scan(ctx: NodeContext, *xs: Any) -> tuple[Any, ...]:
    """(states..., outs...) = body(states..., slices...) along each scan input's axis (in
    its direction); each scan output is the per-step outputs stacked along its axis,
    last-to-first for direction 1."""
    m = int(ctx.attr("num_scan_inputs"))
    n = len(xs) - m
    states, inputs = list(xs[:n]), xs[n:]
    in_axes = [_axis(ctx, a, len(x.shape), "scan input")
               for a, x in zip(ctx.attr("scan_input_axes", [0] * m), inputs, strict=True)]
    in_dirs = list(ctx.attr("scan_input_directions", [0] * m))
    lengths = {int(x.shape[a]) for x, a in zip(inputs, in_axes, strict=True)}
    if len(lengths) != 1:
        raise OnnxModelError(f"{ctx.label}: scan inputs of different lengths "
                             f"{sorted(lengths)} along their scan axes")
    length = lengths.pop()
    k = ctx.n_outputs - n
    per_step: list[list[Any]] = [[] for _ in range(k)]
    for t in range(length):
        slices = [_take(x, a, length - 1 - t if d else t)
                  for x, a, d in zip(inputs, in_axes, in_dirs, strict=True)]
        outs = _run(ctx, "body", [*states, *slices])
        states = outs[:n]
        for acc, value in zip(per_step, outs[n:], strict=True):
            acc.append(value)
    return (*states, *_scan_outputs(ctx, per_step, n))


def _axis(ctx: NodeContext, axis: int, rank: int, what: str) -> int:
    """A scan axis of a value of `rank` dims, from the back if negative."""
    if not -rank <= axis < rank:
        raise OnnxModelError(f"{ctx.label}: {what} axis {axis} is out of range for rank "
                             f"{rank}")
    return axis + rank if axis < 0 else axis


def _take(x: Any, axis: int, index: int) -> Any:
    if isinstance(x, Tensor):
        return x[(slice(None),) * axis + (index,)]
    return np.take(np.asarray(x), index, axis=axis)


def _scan_outputs(ctx: NodeContext, per_step: list[list[Any]], n: int) -> list[Any]:
    """Each scan output's per-step values stacked along its axis (reversed for direction
    1); zero steps give an empty output shaped by the body's declared output."""
    out_axes = list(ctx.attr("scan_output_axes", [0] * len(per_step)))
    out_dirs = list(ctx.attr("scan_output_directions", [0] * len(per_step)))
    stacked = []
    for j, acc in enumerate(per_step):
        if not acc:
            stacked.append(_empty_stack(ctx, "body", n + j, out_axes[j]))
            continue
        axis = _axis(ctx, out_axes[j], len(acc[0].shape) + 1, "scan output")
        stacked.append(_stack(ctx, acc[::-1] if out_dirs[j] else acc, axis))
    return stacked
