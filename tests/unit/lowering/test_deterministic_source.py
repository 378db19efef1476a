"""The same graph compiles to the same source text in every process: the text is part of
the disk cache's key, so a source that followed Python's hash seed (LLVM's `add nsw nuw` /
`add nuw nsw`, whose flags xDSL hands over from a set) missed the cache half the time. Each
target's source is rendered in processes with different hash seeds and compared."""

from __future__ import annotations

import os
import subprocess
import sys

_SCRIPT = """
import hashlib, numpy as np, picograd as pg
from picograd.compiler.pipelines import DEFAULT_PIPELINES, run_pipeline
from picograd.frontend.realize import build_module, linearize
from picograd.lowering.render import render
x = pg.Tensor(np.arange(12, dtype=np.int32).reshape(3, 4))
f = pg.Tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
y = ((x * 3 + 1) // 2).sum(1) + x.max()
z = (f.exp() * f + f.sum(0)).softmax(1) @ f.T
nodes, entries, _, outputs = linearize([y._node, z._node])
for target in ("llvm", "c", "ptx", "wgsl"):
    module = run_pipeline(build_module(nodes, entries, outputs), DEFAULT_PIPELINES[target])
    text = render(module, target, "sm_80" if target == "ptx" else None)
    print(target, hashlib.sha256(text.encode()).hexdigest())
"""


def _hashes(seed: int) -> str:
    env = {**os.environ, "PYTHONHASHSEED": str(seed), "PG_CACHE": "0"}
    return subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                          text=True, check=True).stdout


def test_every_target_renders_the_same_text_under_any_hash_seed() -> None:
    first = _hashes(1)
    assert [line.split()[0] for line in first.splitlines()] == ["llvm", "c", "ptx", "wgsl"]
    for seed in (2, 3, 4):
        assert _hashes(seed) == first, seed
