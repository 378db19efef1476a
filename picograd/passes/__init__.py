"""picograd's passes and the pass manager.

    registry.py    PICOGRAD_PASSES (name -> lazy getter), all_passes()
    pipelines.py   CPU_LLVM, CPU_C, DEFAULT_PIPELINES, run_pipeline, parse_pipeline,
                   canonical_form, and the pipeline errors
    tensor/, loop/, uop/, convert_*.py   the passes themselves (see docs/design.md)

The names below are re-exported lazily, so importing a pass module does not load the
pass manager.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names, for type checkers; at run time __getattr__ imports them
    from picograd.compiler.pass_registry import PICOGRAD_PASSES, all_passes
    from picograd.compiler.pipelines import (
        CPU_C,
        CPU_LLVM,
        DEFAULT_PIPELINES,
        PassOptionError,
        PipelineError,
        PipelineSyntaxError,
        PipelineVerifyError,
        UnknownPassError,
        canonical_form,
        parse_pipeline,
        run_pipeline,
    )

_EXPORTS = {
    "PICOGRAD_PASSES": "registry",
    "all_passes": "registry",
    "CPU_C": "pipelines",
    "CPU_LLVM": "pipelines",
    "DEFAULT_PIPELINES": "pipelines",
    "PassOptionError": "pipelines",
    "PipelineError": "pipelines",
    "PipelineSyntaxError": "pipelines",
    "PipelineVerifyError": "pipelines",
    "UnknownPassError": "pipelines",
    "canonical_form": "pipelines",
    "parse_pipeline": "pipelines",
    "run_pipeline": "pipelines",
}

__all__ = [  # noqa: RUF022 (grouped by module, as in _EXPORTS)
    "PICOGRAD_PASSES", "all_passes",
    "CPU_C", "CPU_LLVM", "DEFAULT_PIPELINES", "PassOptionError", "PipelineError",
    "PipelineSyntaxError", "PipelineVerifyError", "UnknownPassError", "canonical_form",
    "parse_pipeline", "run_pipeline",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'picograd.passes' has no attribute '{name}'")
    return getattr(importlib.import_module(f"picograd.passes.{module}"), name)
