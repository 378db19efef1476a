"""Composite ops' gradients against finite differences of picograd's own forward
(tests/gradcheck.py): an oracle independent of torch, for ops built from many primitives,
whose torch twin is missing or computes differently. Gradients do not depend on the device
(other tests cover every device), so these run on CPU:LLVM only."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from gradcheck import gradcheck

from picograd.frontend.ops_shape import pad
from picograd.nn import functional as F
from picograd.nn.conv import conv2d
from picograd.nn.norm import batch_norm, group_norm, layer_norm, rms_norm
from picograd.nn.pool import max_pool2d

rng = np.random.default_rng(17)


def normal(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def distinct(*shape: int, spacing: float = 0.05) -> np.ndarray:
    """Values at least `spacing` apart (no ties for max-like ops within eps)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * spacing - n * spacing / 2).astype(np.float32).reshape(shape)


def ints(high: int, *shape: int) -> np.ndarray:
    return rng.integers(0, high, shape).astype(np.int32)


# name -> (function of picograd tensors, its inputs)
CASES: dict[str, tuple[Callable, list[np.ndarray]]] = {
    "lerp_tensor_weight": (lambda a, b, w: a.lerp(b, w),
                           [normal(3, 4), normal(3, 4), rng.uniform(-1, 2, (3, 4))]),
    "cummax_values": (lambda x: x.cummax(1)[0], [distinct(3, 5)]),
    "erf": (lambda x: x.erf(), [normal(4, 3)]),
    "gelu_tanh": (lambda x: x.gelu(approximate="tanh"), [normal(4, 3) * 2]),
    "logsumexp": (lambda x: x.logsumexp(1), [normal(3, 5) * 3]),
    "var_correction": (lambda x: x.var(1, correction=0).unsqueeze(1) + x.var(0, correction=2),
                       [normal(4, 5)]),
    "std_keepdim": (lambda x: x.std((0, 2), keepdim=True) * x, [normal(3, 2, 4)]),
    "layer_norm_affine": (lambda x, w, b: layer_norm(x, (4,), w, b),
                          [normal(3, 4), normal(4), normal(4)]),
    "group_norm": (lambda x, w, b: group_norm(x, 2, w, b),
                   [normal(2, 4, 3), normal(4), normal(4)]),
    "batch_norm_train": (lambda x, w, b: batch_norm(x, None, None, w, b, training=True),
                         [normal(5, 3), normal(3), normal(3)]),
    "rms_norm": (lambda x, w: rms_norm(x, (5,), w), [normal(2, 5), normal(5)]),
    "cross_entropy_smoothing": (
        lambda x, t: F.cross_entropy(x, t, label_smoothing=0.2), [normal(4, 5), ints(5, 4)]),
    "pad_reflect": (lambda x: pad(x, (2, 1, 1, 2), mode="reflect"), [normal(2, 3, 4)]),
    "roll": (lambda x: x.roll((1, -2), (0, 1)) * x, [normal(3, 4)]),
    "gather": (lambda x, i: x.gather(1, i), [normal(3, 4), ints(4, 3, 6)]),
    "scatter": (lambda x, s, i: x.scatter(1, i, s),
                [normal(3, 5), normal(3, 2), np.array([[0, 3], [4, 1], [2, 0]])]),
    "conv2d_groups_dilation": (
        lambda x, w, b: conv2d(x, w, b, stride=(1, 2), padding=1, dilation=(2, 1), groups=2),
        [normal(1, 4, 5, 5), normal(4, 2, 2, 3), normal(4)]),
    "max_pool2d": (lambda x: max_pool2d(x, 2, stride=1, padding=1), [distinct(1, 2, 3, 4)]),
    "prod": (lambda x: x.prod(1), [rng.uniform(0.5, 1.5, (3, 4)) * np.sign(normal(3, 4))]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradient_matches_finite_differences(name: str) -> None:
    fn, inputs = CASES[name]
    compiles = gradcheck(fn, inputs)
    assert compiles <= 1, f"the numerical pass compiled {compiles} graphs (one is enough)"


def test_gradcheck_catches_a_wrong_gradient() -> None:
    """x * detach(x) has derivative 2x, but its backward gives x."""
    with pytest.raises(AssertionError, match="gradient of input 0"):
        gradcheck(lambda x: x * x.detach(), [normal(3) + 2])
