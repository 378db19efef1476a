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
from picograd.onnx.registry import NodeContext, is_host, op


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


@op("If", attrs=("then_branch", "else_branch"))
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
    body's declared output (ONNX leaves it undefined when that shape is not known)."""
    dtype, dims = ctx.graph_outputs[attr][index]
    if dtype is None or dims is None or any(d is None for d in dims):
        raise ctx.unsupported(f"zero iterations and the body's output {index} has no "
                              f"declared static shape for the empty stacked output")
    shape = list(dims)
    shape.insert(axis + len(dims) + 1 if axis < 0 else axis, 0)
    return np.zeros(shape, dtype)


def _check_loop(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    inputs = [*node.input, "", ""]
    if not inputs[0] and not inputs[1]:
        return "a Loop with neither a trip count nor a condition never ends"
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
        if len(outs) != 1 + n + len(scans):
            raise ctx.unsupported(f"the body gives {len(outs)} outputs, the Loop needs "
                                  f"{1 + n + len(scans)}")
        carried = outs[1:1 + n]
        for acc, value in zip(scans, outs[1 + n:], strict=True):
            acc.append(value)
        going = _flag(ctx, outs[0], "Loop body's condition")
        i += 1
    stacked = [_stack(ctx, acc, 0) if acc else _empty_stack(ctx, "body", 1 + n + k, 0)
               for k, acc in enumerate(scans)]
    return (*carried, *stacked)


def _take(x: Any, axis: int, index: int) -> Any:
    if isinstance(x, Tensor):
        return x[(slice(None),) * axis + (index,)]
    return np.take(np.asarray(x), index, axis=axis)


@op("Scan", attrs=("body", "num_scan_inputs", "scan_input_axes", "scan_input_directions",
                   "scan_output_axes", "scan_output_directions"), min_opset=9)
def _scan(ctx: NodeContext, *xs: Any) -> tuple[Any, ...]:
    """(states..., outs...) = body(states..., slices...) along each scan input's axis (in
    its direction); each scan output is the per-step outputs stacked along its axis,
    last-to-first for direction 1."""
    m = int(ctx.attr("num_scan_inputs"))
    n = len(xs) - m
    states, inputs = list(xs[:n]), xs[n:]
    in_axes = [a + len(x.shape) if a < 0 else a
               for a, x in zip(ctx.attr("scan_input_axes", [0] * m), inputs, strict=True)]
    in_dirs = list(ctx.attr("scan_input_directions", [0] * m))
    lengths = {int(x.shape[a]) for x, a in zip(inputs, in_axes, strict=True)}
    if len(lengths) != 1:
        raise ctx.unsupported(f"scan inputs of different lengths {sorted(lengths)}")
    length = lengths.pop()
    k = ctx.n_outputs - n
    out_axes = list(ctx.attr("scan_output_axes", [0] * k))
    out_dirs = list(ctx.attr("scan_output_directions", [0] * k))
    per_step: list[list[Any]] = [[] for _ in range(k)]
    for t in range(length):
        slices = [_take(x, a, length - 1 - t if d else t)
                  for x, a, d in zip(inputs, in_axes, in_dirs, strict=True)]
        outs = _run(ctx, "body", [*states, *slices])
        states = outs[:n]
        for acc, value in zip(per_step, outs[n:], strict=True):
            acc.append(value)
    stacked = []
    for j, acc in enumerate(per_step):
        if not acc:
            stacked.append(_empty_stack(ctx, "body", n + j, out_axes[j]))
            continue
        rank = len(acc[0].shape)
        axis = out_axes[j] + rank + 1 if out_axes[j] < 0 else out_axes[j]
        stacked.append(_stack(ctx, acc[::-1] if out_dirs[j] else acc, axis))
    return (*states, *stacked)
