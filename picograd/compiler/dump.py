"""PG_DUMP=<dir>: every compile writes what `opt-tool` needs to reproduce it.

    <dir>/<NNNN>-<digest>/input.mlir      the pg_tensor module before the pipeline
    <dir>/<NNNN>-<digest>/pipeline.txt    the pipeline string that ran
    <dir>/<NNNN>-<digest>/NN-<pass>.mlir  the IR after pass NN

so that `opt-tool <dir>/<id>/input.mlir --pass-pipeline="$(cat <dir>/<id>/pipeline.txt)"`
prints the last dump.
"""

from __future__ import annotations

import hashlib
import itertools
import os

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

_GRAPH_IDS = itertools.count()


class Dump:
    """The dump directory of one compile; `after_pass` is the pipeline's after-pass hook."""

    def __init__(self, directory: str, key: tuple, module: ModuleOp, spec: str):
        digest = hashlib.sha1(repr(key).encode()).hexdigest()[:10]
        self.path = os.path.join(directory, f"{next(_GRAPH_IDS):04d}-{digest}")
        os.makedirs(self.path, exist_ok=True)
        self._write("input.mlir", str(module) + "\n")
        self._write("pipeline.txt", spec)
        self._done = itertools.count(1)

    def _write(self, name: str, text: str) -> None:
        with open(os.path.join(self.path, name), "w") as f:
            f.write(text)

    def after_pass(self, pass_: ModulePass, ir: ModuleOp) -> None:
        self._write(f"{next(self._done):02d}-{pass_.name}.mlir", str(ir) + "\n")
