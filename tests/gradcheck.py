"""`gradcheck`: picograd's backward against central finite differences of its own forward.

    compiles = gradcheck(fn, [x, w, index], eps=1e-3, atol=1e-3, rtol=1e-2)

`fn` takes picograd tensors and returns one float tensor. Float inputs (numpy arrays) are
differentiated; int and bool inputs pass through as constants (indices, targets). The output
is reduced to a scalar with a fixed random projection, so every output element's gradient
counts. The numerical derivative of input element j is (f(x + eps e_j) - f(x - eps e_j)) /
(the float32 step actually taken), accumulated in float64 on the host.

Every evaluation builds the forward on fresh buffer leaves of the same shapes, so the
realize cache key is the same each time: the whole numerical pass compiles one graph, which
the returned count (graphs compiled by the numerical pass) lets a test assert.

Pick inputs away from kinks and ties (max, relu, abs...) by more than eps: the two one-sided
derivatives differ there, and picograd's subgradient need not be their mean.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

import picograd as pg
from picograd.frontend.realize import compile_stats


def _leaves(arrays: Sequence[np.ndarray], device: str, grad: bool) -> list[pg.Tensor]:
    return [pg.Tensor(a, device=device, requires_grad=grad and a.dtype.kind == "f")
            for a in arrays]


def gradcheck(fn: Callable[..., pg.Tensor], inputs: Sequence[np.ndarray], eps: float = 1e-3,
              atol: float = 1e-3, rtol: float = 1e-2, device: str = "CPU:LLVM",
              seed: int = 0) -> int:
    """Assert that picograd's gradients of `fn` at `inputs` match finite differences; return
    how many graphs the numerical pass compiled."""
    arrays = [np.asarray(a, np.float32 if np.asarray(a).dtype.kind == "f" else np.int32)
              for a in inputs]
    leaves = _leaves(arrays, device, grad=True)
    out = fn(*leaves)
    projection = np.asarray(np.random.default_rng(seed).standard_normal(out.shape), np.float32)
    (out * pg.Tensor(projection, device=device)).sum().backward()
    analytic = [t.grad.numpy().astype(np.float64) if t.requires_grad else None
                for t in leaves]
    weights = projection.astype(np.float64)

    def value(perturbed: list[np.ndarray]) -> float:
        with pg.no_grad():
            result = fn(*_leaves(perturbed, device, grad=False)).numpy()
        return float((result.astype(np.float64) * weights).sum())

    before = compile_stats().compiles
    for i, grad in enumerate(analytic):
        if grad is None:
            continue
        numeric = np.zeros(arrays[i].size)
        for j in range(arrays[i].size):
            up, down = [a.copy() for a in arrays], [a.copy() for a in arrays]
            up[i].reshape(-1)[j] += eps
            down[i].reshape(-1)[j] -= eps
            step = float(up[i].reshape(-1)[j]) - float(down[i].reshape(-1)[j])
            numeric[j] = (value(up) - value(down)) / step
        numeric = numeric.reshape(arrays[i].shape)
        np.testing.assert_allclose(grad, numeric, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i} (shape {arrays[i].shape})")
    return compile_stats().compiles - before
