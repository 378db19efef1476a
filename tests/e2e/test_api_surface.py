"""The size of the public API that issue 35 set as a floor: torch code uses these names, so
losing one is a regression a user meets as an AttributeError. Only names are looked at
(nothing compiles); the ops themselves are tested against torch in tests/e2e."""

from __future__ import annotations

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F
from picograd.nn.state import load_torch


def _public(obj: object) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def test_tensor_has_at_least_260_public_names() -> None:
    assert len(_public(pg.Tensor)) >= 260


def test_at_least_13_dtypes_each_with_its_numpy_twin() -> None:
    assert len(pg.DTYPES) >= 13
    assert len({t.name for t in pg.DTYPES}) == len(pg.DTYPES)
    for t in pg.DTYPES:
        assert getattr(pg, t.name) is t
        assert t.np.itemsize == t.itemsize


def test_torch_names_models_are_made_of() -> None:
    """A sample of the names torch code reaches for first, by namespace."""
    tensor = {"sort", "topk", "unique", "cumprod", "masked_select", "nonzero", "unfold",
              "diagonal", "repeat_interleave", "atan2", "logaddexp", "isclose", "amax",
              "scatter_reduce", "index_add", "bucketize", "t", "mm", "bmm", "unbind"}
    layers = {"Conv1d", "Conv3d", "ConvTranspose3d", "MaxPool3d", "AdaptiveAvgPool2d",
              "InstanceNorm2d", "LocalResponseNorm", "PixelShuffle", "LSTM", "GRU", "RNN",
              "LSTMCell", "TransformerEncoderLayer", "Transformer", "ModuleList",
              "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Unflatten",
              "CrossEntropyLoss", "SELU", "GLU"}
    functions = {"conv1d", "conv3d", "max_unpool2d", "adaptive_max_pool1d", "smooth_l1_loss",
                 "huber_loss", "kl_div", "cosine_similarity", "triplet_margin_loss", "unfold",
                 "fold", "selu", "glu", "normalize", "pixel_shuffle", "instance_norm"}
    optimizers = {"RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "LAMB",
                  "GradScaler"}
    assert tensor <= _public(pg.Tensor)
    assert layers <= _public(nn)
    assert functions <= _public(F)
    assert optimizers <= _public(pg.optim)
    assert {"clip_grad_norm_", "clip_grad_value_"} <= _public(nn.utils)
    assert callable(load_torch) and callable(pg.autocast)
