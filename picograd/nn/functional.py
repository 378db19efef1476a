"""Functional forms of layers and losses, as compositions of Tensor ops (so autograd and
fusion apply to them unchanged).

    linear(x, w, b)                 x @ w.T + b                (defined in picograd/nn/basic.py)
    log_softmax(x, dim) / softmax(x, dim) / logsumexp(x, dim)
    cross_entropy / nll_loss / mse_loss / ... every torch loss   (picograd/nn/losses.py)
    ctc_loss / multilabel_margin_loss / triplet_margin_with_distance_loss   (losses_more.py)
    dropout(x, p, training)                    (defined in picograd/nn/basic.py)
    one_hot(target, num_classes)
    conv{1,2,3}d / conv_transpose{1,2,3}d      (defined in picograd/nn/conv_nd.py)
    max_pool{1,2,3}d / avg_pool{1,2,3}d / lp_pool{1,2,3}d   (defined in picograd/nn/pool.py)
    unfold / fold (im2col and its adjoint)     (defined in picograd/nn/fold.py)
    adaptive_{avg,max}_pool{1,2,3}d / max_unpool{1,2,3}d   (picograd/nn/pool_adaptive.py)
    interpolate(x, size, scale_factor, mode, align_corners)  (picograd/nn/resize.py)
    pixel_shuffle / pixel_unshuffle                           (picograd/nn/resize.py)
    scaled_dot_product_attention(q, k, v, attn_mask, ...)   (picograd/nn/attention.py)
    batch_norm / layer_norm / group_norm / rms_norm / embedding   (picograd/nn/norm.py)
    instance_norm / local_response_norm                  (picograd/nn/norm_instance.py)
    pad(x, pad, mode="constant", value=None)   torch's F.pad (picograd/frontend/ops_shape.py)
    relu / gelu / silu / sigmoid / tanh / leaky_relu / elu / softplus   the Tensor methods
    pairwise_distance / pdist                 (picograd/nn/distance.py)
    dropout{1,2,3}d / alpha_dropout / feature_alpha_dropout   (picograd/nn/dropout_more.py)
    bilinear / channel_shuffle / upsample{,_nearest,_bilinear}  (picograd/nn/layers_more.py)
    embedding_bag                             (picograd/nn/embedding_bag.py)
    grid_sample / affine_grid                 (picograd/nn/grid_sample.py)
    relu_ / elu_ / ... in place, max_pool*_with_indices   (picograd/nn/functional_aliases.py)
"""

from __future__ import annotations

import numpy as np

from picograd.frontend.autocast import full_precision
from picograd.frontend.lazy import dtype_error
from picograd.frontend.ops_shape import pad
from picograd.frontend.tensor import Tensor
from picograd.nn.activation_functions import (
    celu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    logsigmoid,
    mish,
    normalize,
    prelu,
    relu6,
    rrelu,
    selu,
    softmin,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
)
from picograd.nn.attention import scaled_dot_product_attention
from picograd.nn.basic import dropout, linear
from picograd.nn.conv_nd import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from picograd.nn.distance import cosine_similarity, pairwise_distance, pdist
from picograd.nn.dropout_more import (
    alpha_dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from picograd.nn.embedding_bag import embedding_bag
from picograd.nn.fold import fold, unfold
from picograd.nn.functional_aliases import (
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d_with_indices,
    celu_,
    elu_,
    hardtanh_,
    leaky_relu_,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    max_pool3d_with_indices,
    relu_,
    rrelu_,
    selu_,
    threshold_,
)
from picograd.nn.grid_sample import affine_grid, grid_sample
from picograd.nn.layers_more import (
    bilinear,
    channel_shuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from picograd.nn.losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    multi_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from picograd.nn.losses_more import (
    ctc_loss,
    multilabel_margin_loss,
    triplet_margin_with_distance_loss,
)
from picograd.nn.norm import batch_norm, embedding, group_norm, layer_norm, rms_norm
from picograd.nn.norm_instance import instance_norm, local_response_norm
from picograd.nn.pool import (
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from picograd.nn.pool_adaptive import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from picograd.nn.resize import interpolate, pixel_shuffle, pixel_unshuffle

__all__ = [
    "avg_pool2d", "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "conv2d", "conv_transpose2d", "cross_entropy", "dropout", "elu", "embedding", "gelu",
    "group_norm", "interpolate", "layer_norm", "leaky_relu", "linear", "log_softmax",
    "logsumexp", "max_pool2d", "mse_loss", "nll_loss", "one_hot", "pad", "relu", "rms_norm",
    "scaled_dot_product_attention", "sigmoid", "silu", "softmax", "softplus", "tanh",
]
__all__ += ["cosine_embedding_loss", "cosine_similarity", "gaussian_nll_loss",
            "hinge_embedding_loss", "huber_loss", "kl_div", "l1_loss", "margin_ranking_loss",
            "multi_margin_loss", "multilabel_soft_margin_loss", "pairwise_distance",
            "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss", "triplet_margin_loss"]
__all__ += ["pixel_shuffle", "pixel_unshuffle"]
__all__ += ["instance_norm", "local_response_norm"]
__all__ += ["conv1d", "conv3d", "conv_transpose1d", "conv_transpose3d"]
__all__ += ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
            "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "max_unpool1d",
            "max_unpool2d", "max_unpool3d"]
__all__ += ["avg_pool1d", "avg_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d",
            "max_pool3d"]
__all__ += ["fold", "unfold"]
__all__ += ["ctc_loss", "multilabel_margin_loss", "triplet_margin_with_distance_loss"]
# activation_functions.py
__all__ += ["celu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "logsigmoid",
            "mish", "normalize", "prelu", "relu6", "rrelu", "selu", "softmin", "softshrink",
            "softsign", "tanhshrink", "threshold"]
# distance.py, dropout_more.py, embedding_bag.py, layers_more.py, functional_aliases.py
__all__ += ["alpha_dropout", "bilinear", "channel_shuffle", "dropout1d", "dropout2d",
            "dropout3d", "embedding_bag", "feature_alpha_dropout", "pdist", "upsample",
            "upsample_bilinear", "upsample_nearest"]
__all__ += ["affine_grid", "grid_sample"]  # grid_sample.py
__all__ += ["adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
            "adaptive_max_pool3d_with_indices", "celu_", "elu_", "hardtanh_", "leaky_relu_",
            "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
            "relu_", "rrelu_", "selu_", "threshold_"]

# ── activations: torch's F names for the Tensor methods ─────────────────────


def relu(x: Tensor) -> Tensor:
    return x.relu()


def gelu(x: Tensor, *, approximate: str = "none") -> Tensor:
    """x * Phi(x), exact (erf) or torch's tanh form (`approximate="tanh"`)."""
    return x.gelu(approximate)


def silu(x: Tensor) -> Tensor:
    return x.silu()


def sigmoid(x: Tensor) -> Tensor:
    return x.sigmoid()


def tanh(x: Tensor) -> Tensor:
    return x.tanh()


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    return x.leaky_relu(negative_slope)


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    return x.elu(alpha)


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return x.softplus(beta, threshold)


def logsumexp(x: Tensor, dim: int = -1, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) along `dim` (`Tensor.logsumexp`)."""
    return x.logsumexp(dim, keepdim)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    (x,) = full_precision("log_softmax", x)  # float32 inside a "cuda" pg.autocast
    return x.log_softmax(dim)


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    (x,) = full_precision("softmax", x)  # float32 inside a "cuda" pg.autocast
    return x.softmax(dim)


def one_hot(target: Tensor, num_classes: int) -> Tensor:
    """Bool tensor of shape target.shape + (num_classes,): True at each target class. A
    target holding a class outside [0, num_classes) raises IndexRangeError (torch raises
    too): a realized one here, a lazy one when the result is read."""
    if target.dtype.is_float:
        raise dtype_error("one_hot", f"class indices must be integers, got {target.dtype.name}")
    checked = target._checked_index("one_hot", target, num_classes, negative=False,
                                    noun="class")
    return _class_mask(checked, num_classes)


def _class_mask(target: Tensor, num_classes: int) -> Tensor:
    classes = Tensor(np.arange(num_classes, dtype=np.int32), device=target.device)
    return target.unsqueeze(-1) == classes
