"""An FX graph with ATen ops picograd has no translation for, split around them: the
translated ops run in picograd, the others in torch, in one graph.

`split_graph(gm, compile_part)` groups the nodes that have a translation into connected
parts with torch's `CapabilityBasedPartitioner` (a part never depends on itself through an
op outside it) and fuses each into a submodule of a copy of `gm`, whose other nodes stay
as they came. `compile_part(submodule, example_inputs)` gives each part its callable (a
picograd graph, or torch's where picograd refuses the part's arguments); the result runs
the whole graph, the untranslated ops by torch between the parts. For

    y = special_bessel_j0(x * 2) + 1

the graph becomes `part_0(x) -> bessel_j0 (torch) -> part_1(.)`: `x * 2` and `+ 1` are
compiled by picograd, and the Bessel function is torch's.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Callable, Mapping
from typing import Any

import torch
import torch.fx
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.fx.passes.utils.fuser_utils import fuse_by_partitions

from picograd.torch_backend.graph import has_translation
from picograd.torch_backend.registry import op_name

PART_PREFIX = "picograd_part_"


class _Translated(OperatorSupportBase):
    """The nodes a part may hold: calls of an op that has a translation."""

    def is_node_supported(self, submodules: Mapping[str, torch.nn.Module],
                          node: torch.fx.Node) -> bool:
        if node.op != "call_function":
            return False
        if node.target is operator.getitem:  # a result of a multi-output op: with the op
            source = node.args[0]
            return isinstance(source, torch.fx.Node) and self.is_node_supported(
                submodules, source)
        return has_translation(node.target)


class _Part(torch.nn.Module):
    """A part's compiled callable in the split graph's place of its submodule; the part's
    graph returns a tuple (`always_return_tuple`), and so does this."""

    def __init__(self, run: Callable[..., Any]):
        super().__init__()
        self.run = run

    def forward(self, *args: Any) -> tuple[Any, ...]:
        return tuple(self.run(*args))


def placeholders(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    return [n for n in gm.graph.nodes if n.op == "placeholder"]


def split_graph(gm: torch.fx.GraphModule,
                compile_part: Callable[[torch.fx.GraphModule, list[Any]], Callable[..., Any]]
                ) -> torch.fx.GraphModule | None:
    """A copy of `gm` whose translated ops run in compiled parts (see the module
    docstring); None when no op of `gm` has a translation."""
    gm = copy.deepcopy(gm)  # fusing rewrites the graph it is given
    partitioner = CapabilityBasedPartitioner(gm, _Translated(),
                                             allows_single_node_partition=True)
    partitions = partitioner.propose_partitions()
    if not partitions:
        return None
    split = fuse_by_partitions(gm, [p.nodes for p in partitions], prefix=PART_PREFIX,
                               always_return_tuple=True)
    for node in split.graph.nodes:
        if node.op == "call_module" and str(node.target).startswith(PART_PREFIX):
            part = getattr(split, str(node.target))
            examples = [p.meta.get("val") for p in placeholders(part)]
            setattr(split, str(node.target), _Part(compile_part(part, examples)))
    split.recompile()
    return split


def torch_ops(split: torch.fx.GraphModule) -> list[str]:
    """The names of the ATen ops of a split graph that run in torch, in order."""
    return [op_name(n.target) for n in split.graph.nodes if n.op == "call_function"
            and n.target is not operator.getitem and not has_translation(n.target)]
