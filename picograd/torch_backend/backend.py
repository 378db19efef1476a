"""The `torch.compile` backend callable (the package docstring says what it does)."""

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
    ops_distance,
    ops_elementwise,
    ops_functional,
    ops_layout,
    ops_nn,
    ops_norm_image,
    ops_reduce,
    ops_shape,
    ops_window,
)
from picograd.torch_backend.compiled import RunSettings, compile_graph
from picograd.torch_backend.registry import ATEN

_OPTIONS = frozenset({"device", "pipeline", "debug"})
# imported for the translations they register
_FAMILIES = (ops_activation, ops_attention, ops_distance, ops_elementwise, ops_functional,
             ops_layout, ops_nn, ops_norm_image, ops_reduce, ops_shape, ops_window)

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
    settings = RunSettings(options.get("device", "CPU"), options.get("pipeline"),
                           options.get("debug"))
    settings.check()
    compilers = {kind: functools.partial(compile_graph, settings=settings, kind=kind)
                 for kind in ("forward", "backward", "inference")}
    compiler = aot_autograd(fw_compiler=compilers["forward"],
                            bw_compiler=compilers["backward"],
                            inference_compiler=compilers["inference"],
                            decompositions=core_aten_decompositions())
    return compiler(gm, example_inputs)
