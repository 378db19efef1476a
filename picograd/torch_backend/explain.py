"""`explain(model, *inputs)`: which ATen ops ran in picograd and which fell back to torch.

It compiles `model` with the picograd backend afresh (`torch._dynamo.reset()` first, as
`torch._dynamo.explain` does: other compiled functions compile again on their next call),
runs it once on `inputs` (and, with `backward=True`, the backward of the outputs' sum),
and reports every graph AOTAutograd handed over: its kind, its ops, and when it ran in
torch, why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from picograd.torch_backend.backend import backend
from picograd.torch_backend.compiled import RECORDERS, GraphRecord


@dataclass
class Explanation:
    """The graphs of one run: `picograd` and `torch` count the ops that ran in each."""

    graphs: list[GraphRecord]

    @property
    def picograd(self) -> Counter[str]:
        return Counter(op for g in self.graphs if not g.fallback for op in g.ops)

    @property
    def torch(self) -> Counter[str]:
        return Counter(op for g in self.graphs if g.fallback for op in g.ops)

    def __str__(self) -> str:
        lines = []
        for i, g in enumerate(self.graphs):
            where = "picograd" if not g.fallback else "torch (" + "; ".join(g.fallback) + ")"
            lines.append(f"graph {i} ({g.kind}, {len(g.ops)} ops): {where}")
        total = sum(self.picograd.values()) + sum(self.torch.values())
        lines.append(f"{sum(self.picograd.values())} of {total} ops ran in picograd")
        return "\n".join(lines)


def _backward(out: Any) -> None:
    """The backward of the sum of every output that requires a gradient (outputs in a
    tuple, a list or a mapping such as transformers' ModelOutput)."""
    values = (out.values() if isinstance(out, Mapping) else
              out if isinstance(out, (tuple, list)) else [out])
    tensors = [t for t in values if isinstance(t, torch.Tensor) and t.requires_grad]
    if tensors:
        sum(t.sum() for t in tensors).backward()  # type: ignore[union-attr]


def explain(model: Any, *inputs: Any, backward: bool = False,
            verbose: bool = True) -> Explanation:
    """Run `model(*inputs)` compiled by picograd once and say where each op ran (printed
    unless `verbose=False`)."""
    records: list[GraphRecord] = []
    torch._dynamo.reset()
    RECORDERS.append(records)
    try:
        out = torch.compile(model, backend=backend)(*inputs)
        if backward:
            _backward(out)
    finally:
        RECORDERS.remove(records)
    result = Explanation(records)
    if verbose:
        print(result)
    return result
