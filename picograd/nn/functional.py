"""Functional forms of layers and losses, as compositions of Tensor ops (so autograd and
fusion apply to them unchanged).

    linear(x, w, b)                 x @ w.T + b
    log_softmax(x, dim) / softmax(x, dim) / logsumexp(x, dim)
    cross_entropy(logits, target)   mean negative log-likelihood of integer class targets
    nll_loss(logp, target) / mse_loss(a, b) / dropout(x, p, training)
    one_hot(target, num_classes)
    conv2d / max_pool2d / avg_pool2d     (defined in picograd/nn/conv.py)
    batch_norm / layer_norm / group_norm / rms_norm / embedding   (picograd/nn/norm.py)
    pad(x, pad, mode="constant", value=None)   torch's F.pad (picograd/frontend/ops_shape.py)
"""

from __future__ import annotations

import numpy as np

from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.tensor import Tensor, _generator

_ELSEWHERE = {
    **dict.fromkeys(("conv2d", "max_pool2d", "avg_pool2d"), "picograd.nn.conv"),
    **dict.fromkeys(("batch_norm", "layer_norm", "group_norm", "rms_norm", "embedding"),
                    "picograd.nn.norm"),
    "pad": "picograd.frontend.ops_shape",
}


def __getattr__(name: str):
    # conv.py and norm.py build on this module's siblings: import them on first use, which
    # also avoids an import cycle
    if name in _ELSEWHERE:
        import importlib

        return getattr(importlib.import_module(_ELSEWHERE[name]), name)
    raise AttributeError(f"module 'picograd.nn.functional' has no attribute {name!r}")


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    y = x @ weight.transpose(0, 1)
    return y if bias is None else y + bias


def logsumexp(x: Tensor, dim: int = -1, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) along `dim`, shifted by the (constant) max for stability."""
    m = x.max(dim, keepdim=True).detach()
    out = (x - m).exp().sum(dim, keepdim=True).log() + m
    return out if keepdim else out.squeeze(dim)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    return x - logsumexp(x, dim, keepdim=True)


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    e = (x - x.max(dim, keepdim=True).detach()).exp()
    return e / e.sum(dim, keepdim=True)


def one_hot(target: Tensor, num_classes: int) -> Tensor:
    """Bool tensor of shape target.shape + (num_classes,): True at each target class."""
    if target.dtype.is_float:
        raise dtype_error("one_hot", f"class indices must be integers, got {target.dtype.name}")
    classes = Tensor(np.arange(num_classes, dtype=np.int32), device=target.device)
    return target.unsqueeze(-1) == classes


def nll_loss(log_probs: Tensor, target: Tensor) -> Tensor:
    """Mean of -log_probs[i, target[i]] over the batch."""
    if log_probs.ndim != 2 or target.shape != log_probs.shape[:1]:
        raise shape_error("nll_loss", f"needs log-probabilities (N, C) and targets (N,), got "
                                      f"{log_probs.shape} and {target.shape}")
    picked = one_hot(target, log_probs.shape[1]).where(log_probs, 0.0).sum(1)
    return -picked.mean()


def cross_entropy(logits: Tensor, target: Tensor) -> Tensor:
    """torch's `cross_entropy` for class indices: nll_loss(log_softmax(logits, 1), target)."""
    if logits.ndim != 2 or target.shape != logits.shape[:1]:
        raise shape_error("cross_entropy", f"needs logits (N, C) and targets (N,), got "
                                           f"{logits.shape} and {target.shape}")
    return nll_loss(log_softmax(logits, 1), target)


def mse_loss(a: Tensor, b: Tensor) -> Tensor:
    return ((a - b) * (a - b)).mean()


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """In training, zero each element with probability p and scale the rest by 1/(1-p)."""
    if not 0 <= p <= 1:
        raise shape_error("dropout", f"p must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    keep = _generator().random(x.shape, dtype=np.float32) >= p
    mask = Tensor(keep.astype(np.float32) / np.float32(1 - p) if p < 1 else
                  np.zeros(x.shape, np.float32), device=x.device)
    return x * mask
