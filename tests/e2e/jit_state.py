"""A module whose attribute a jitted function in test_jit_bindings.py reads (`jit_state.W`),
so that rebinding it from outside is the case of another imported module."""

from __future__ import annotations

import numpy as np

import picograd as pg

W = pg.Tensor(np.eye(2, dtype=np.float32))
