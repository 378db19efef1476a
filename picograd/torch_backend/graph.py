"""One FX graph (ATen ops, as AOTAutograd hands it) as a picograd function.

`translate(gm, inputs)` walks the graph's nodes in order: placeholders take the inputs,
`call_function` nodes run their ATen translation (`registry.ATEN`) or, in a graph with
dynamic shapes, their size arithmetic on the call's ints (`SIZE_OPS`), `getitem` picks from
a multi-output op, `get_attr` reads a constant of the module, `output` gives the results.
Each node's result is checked against the shape (its static dims: a dynamic dim is the
call's own) and dtype FX recorded for it (`meta["val"]`),
so a translation that disagrees with torch is an error at compile time, not a wrong number
at run time; an integer result of another width (picograd's index dtype) is cast to torch's.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import torch
import torch.fx
from torch.fx.node import map_arg

import picograd as pg
from picograd.frontend.tensor import Tensor
from picograd.torch_backend.convert import Binder
from picograd.torch_backend.registry import (
    ATEN,
    TAKES_NODE,
    TorchUnsupported,
    op_name,
    pg_dtype,
)

# size arithmetic of graphs with dynamic shapes: run on the call's concrete ints
SIZE_OPS: dict[Any, Any] = {
    operator.add: operator.add, operator.sub: operator.sub, operator.mul: operator.mul,
    operator.floordiv: operator.floordiv, operator.mod: operator.mod,
    operator.neg: operator.neg, torch.sym_max: max, torch.sym_min: min,
    # the checks torch adds on a size only the data decides (a nonzero's row count)
    operator.ge: operator.ge, operator.gt: operator.gt, operator.le: operator.le,
    operator.lt: operator.lt, operator.eq: operator.eq, operator.ne: operator.ne,
    torch.ops.aten.sym_size.int: lambda x, dim: x.shape[dim],
    torch.ops.aten.sym_numel.default: lambda x: x.numel(),
}


def has_translation(target: Any) -> bool:
    """Whether picograd translates an FX `call_function` of `target`."""
    return target is operator.getitem or target in ATEN or target in SIZE_OPS


def unsupported_ops(gm: torch.fx.GraphModule) -> list[str]:
    """The names of the graph's ops that have no translation, in graph order, once each."""
    names: list[str] = []
    for node in gm.graph.nodes:
        if node.op == "call_function" and not has_translation(node.target):
            name = op_name(node.target)
            if name not in names:
                names.append(name)
    return names


def translated_ops(gm: torch.fx.GraphModule) -> list[str]:
    """The names of the graph's ATen ops (call_functions but getitem and size arithmetic),
    in order."""
    return [op_name(n.target) for n in gm.graph.nodes if n.op == "call_function"
            and n.target is not operator.getitem and n.target not in SIZE_OPS]


def _check(node: torch.fx.Node, value: Any, expected: Any) -> Any:
    """`value` checked against FX's record `expected` (a tensor, or a sequence of them)."""
    if isinstance(expected, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(expected):
            raise TorchUnsupported(op_name(node.target), "a different number of results")
        return tuple(_check(node, v, e) for v, e in zip(value, expected, strict=True))
    if not isinstance(expected, torch.Tensor) or value is None:
        return value
    if not isinstance(value, Tensor):
        raise TorchUnsupported(op_name(node.target), f"gave {type(value).__name__}")
    if len(value.shape) != len(expected.shape) or any(
            isinstance(e, int) and v != e for v, e in zip(value.shape, expected.shape,
                                                          strict=True)):
        raise TorchUnsupported(op_name(node.target), f"shape {tuple(value.shape)}, torch "
                               f"gives {tuple(expected.shape)} (node {node.name})")
    want = pg_dtype(expected.dtype, op_name(node.target))
    if value.dtype != want:
        if not (value.dtype.is_int and want.is_int):
            raise TorchUnsupported(op_name(node.target), f"dtype {value.dtype.name}, torch "
                                   f"gives {want.name} (node {node.name})")
        value = value.cast(want)
    return value


def _load(arg: Any, env: dict[torch.fx.Node, Any]) -> Any:
    return map_arg(arg, lambda n: env[n])


def _call(node: torch.fx.Node, env: dict[torch.fx.Node, Any]) -> Any:
    args, kwargs = _load(node.args, env), _load(node.kwargs, env)
    if node.target is operator.getitem:
        return args[0][args[1]]
    size_op = SIZE_OPS.get(node.target)
    if size_op is not None:
        return size_op(*args, **kwargs)
    fn = ATEN.get(node.target)
    if fn is None:
        raise TorchUnsupported(op_name(node.target))
    value = fn(node, *args, **kwargs) if node.target in TAKES_NODE else fn(*args, **kwargs)
    return _check(node, value, node.meta.get("val"))


def translate(gm: torch.fx.GraphModule, inputs: Sequence[Tensor],
              binder: Binder) -> list[Any]:
    """The graph's outputs (Tensors, None where the graph returns None) for `inputs`."""
    env: dict[torch.fx.Node, Any] = {}
    pending = list(inputs)
    with pg.no_grad():  # torch's autograd differentiates; picograd records nothing
        for node in gm.graph.nodes:
            if node.op == "placeholder":
                env[node] = pending.pop(0)
            elif node.op == "get_attr":
                env[node] = binder([getattr(gm, str(node.target))])[0]
            elif node.op == "call_function":
                env[node] = _call(node, env)
            elif node.op == "output":
                return list(_load(node.args[0], env))
            else:
                raise TorchUnsupported(node.op, f"an FX {node.op} node")
    raise TorchUnsupported("output", "a graph without an output node")
