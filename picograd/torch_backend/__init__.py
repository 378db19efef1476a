"""picograd as a `torch.compile` backend: PyTorch programs compiled by picograd, unchanged.

    model = torch.compile(model, backend="picograd")   # no import of picograd needed
    loss = loss_fn(model(x), y); loss.backward()        # forward and backward in picograd

Installing picograd registers `backend` under the `torch_dynamo_backends` entry point.
AOTAutograd (with torch's core ATen decompositions) hands the forward and the backward of
each captured region as ATen FX graphs; each becomes one picograd function (one translation
per op family module: ops_elementwise, ops_activation, ops_attention, ops_shape,
ops_reduce, ops_nn), replayed through
`picograd.jit` per input signature. A graph with an ATen op picograd has no translation for
runs in torch as it came (the whole graph: splitting it around the op is still to come),
logged once per op on the `picograd.torch_backend` logger; `explain(model, *inputs)` lists
what ran where. A graph dynamo made dynamic (after a call with new sizes) runs in
picograd too, compiled once per set of concrete sizes (logged at INFO); picograd's
symbolic sizes (`pg.Variable`) are not used for them yet.
`options={"device": "CPU"}` picks picograd's device (inputs and outputs are torch CPU
tensors).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch
from torch._decomp import core_aten_decompositions
from torch._dynamo.backends.common import aot_autograd

from picograd.torch_backend import (
    ops_activation,
    ops_attention,
    ops_elementwise,
    ops_nn,
    ops_reduce,
    ops_shape,
)
from picograd.torch_backend.compiled import compile_graph
from picograd.torch_backend.explain import Explanation, explain
from picograd.torch_backend.registry import ATEN, TorchUnsupported

_OPTIONS = frozenset({"device"})
# imported for the translations they register
_FAMILIES = (ops_activation, ops_attention, ops_elementwise, ops_nn, ops_reduce, ops_shape)

SUPPORTED_OPS = tuple(sorted(str(o) for o in ATEN))


def backend(gm: torch.fx.GraphModule, example_inputs: list[Any],
            options: dict[str, Any] | None = None) -> Callable[..., Any]:
    """The `torch.compile` backend: `gm` (a dynamo graph) through AOTAutograd, each of its
    ATen graphs compiled by picograd (or run by torch where picograd cannot)."""
    options = dict(options or {})
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise ValueError(f"picograd backend: unknown options {unknown}; "
                         f"known: {sorted(_OPTIONS)}")
    device = options.get("device", "CPU")
    forward = functools.partial(compile_graph, device=device, kind="forward")
    backward = functools.partial(compile_graph, device=device, kind="backward")
    compiler = aot_autograd(fw_compiler=forward, bw_compiler=backward,
                            inference_compiler=functools.partial(
                                compile_graph, device=device, kind="inference"),
                            decompositions=core_aten_decompositions())
    return compiler(gm, example_inputs)


__all__ = ["SUPPORTED_OPS", "Explanation", "TorchUnsupported", "backend", "explain"]
