"""Errors as torch's code expects: each common mistake is made in torch and in picograd, and
picograd's error must be an instance of the built-in class torch raised (so `except
RuntimeError:` / `except IndexError:` written for torch catches it) and a PicogradError (with
its typed class and message)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import picograd as pg
import picograd.nn.functional as F

Case = tuple[str, Callable[[Any, Any], Any]]


def _z(lib: Any, *shape: int, dtype: str = "float32") -> Any:
    return lib.tensor(np.zeros(shape, dtype=dtype))


def _functional(lib: Any) -> Any:
    return TF if lib is torch else F


def _nn(lib: Any) -> Any:
    return torch.nn if lib is torch else pg.nn


def _optim(lib: Any) -> Any:
    return torch.optim if lib is torch else pg.optim


def _param(lib: Any) -> Any:
    return (torch.nn.Parameter(torch.zeros(3)) if lib is torch
            else pg.Tensor(np.zeros(3, np.float32), requires_grad=True))


CASES: list[Case] = [
    ("broadcast add", lambda t, f: _z(t, 2, 3) + _z(t, 4)),
    ("broadcast mul", lambda t, f: _z(t, 2, 3) * _z(t, 2, 2)),
    ("matmul inner dims", lambda t, f: _z(t, 2, 3) @ _z(t, 4, 5)),
    ("matmul batch dims", lambda t, f: _z(t, 2, 3, 4) @ _z(t, 3, 4, 2)),
    ("matmul 0-d", lambda t, f: _z(t) @ _z(t, 3)),
    ("matmul a list", lambda t, f: _z(t, 2, 2).matmul([1.0, 2.0])),
    ("reshape count", lambda t, f: _z(t, 2, 3).reshape(4, 2)),
    ("reshape two -1", lambda t, f: _z(t, 2, 3).reshape(-1, -1)),
    ("permute repeat", lambda t, f: _z(t, 2, 3).permute(0, 0)),
    ("permute length", lambda t, f: _z(t, 2, 3).permute(1, 0, 2)),
    ("expand", lambda t, f: _z(t, 2, 3).expand(4, 3, 5)),
    ("expand fewer dims", lambda t, f: _z(t, 2, 3).expand(3)),
    ("sum dim out of range", lambda t, f: _z(t, 2, 3).sum(dim=2)),
    ("sum dim repeated", lambda t, f: _z(t, 2, 3).sum(dim=(0, -2))),
    ("max dim out of range", lambda t, f: _z(t, 2, 3).max(dim=-3)),
    ("max of an empty dim", lambda t, f: _z(t, 0, 3).max(dim=0)),
    ("transpose dim", lambda t, f: _z(t, 2, 3).transpose(0, 3)),
    ("flip dim", lambda t, f: _z(t, 2, 3).flip(3)),
    ("softmax dim", lambda t, f: f.softmax(_z(t, 2, 3), dim=2)),
    ("squeeze dim", lambda t, f: _z(t, 2, 3).squeeze(4)),
    ("unsqueeze dim", lambda t, f: _z(t, 2, 3).unsqueeze(5)),
    ("flatten start_dim", lambda t, f: _z(t, 2, 3).flatten(3)),
    ("cumsum dim", lambda t, f: _z(t, 2, 3).cumsum(2)),
    ("int index out of range", lambda t, f: _z(t, 3, 2)[5]),
    ("negative index out of range", lambda t, f: _z(t, 3, 2)[:, -3]),
    ("too many indices", lambda t, f: _z(t, 3, 2)[0, 0, 0]),
    ("cat shapes", lambda t, f: t.cat([_z(t, 2, 3), _z(t, 2, 4)], dim=0)),
    ("cat dim", lambda t, f: t.cat([_z(t, 2, 3), _z(t, 2, 3)], dim=2)),
    ("stack shapes", lambda t, f: t.stack([_z(t, 2, 3), _z(t, 3, 2)])),
    ("mean of ints", lambda t, f: _z(t, 3, dtype="int32").mean()),
    ("masked_fill float mask", lambda t, f: _z(t, 3).masked_fill(_z(t, 3), 1.0)),
    ("index_select out of range",
     lambda t, f: _z(t, 3).index_select(0, t.tensor(np.array([5]))).sum().item()),
    ("gather float index",
     lambda t, f: _z(t, 3).gather(0, _z(t, 2))),
    ("integer floor-divide by zero",
     lambda t, f: (t.tensor(np.array([1, 2], np.int32))
                   // t.tensor(np.array([0, 1], np.int32))).sum().item()),
    ("linear in_features", lambda t, f: _nn(t).Linear(3, 4)(_z(t, 2, 5))),
    ("linear weight", lambda t, f: f.linear(_z(t, 2, 3), _z(t, 4, 5))),
    ("conv2d channels", lambda t, f: f.conv2d(_z(t, 1, 3, 5, 5), _z(t, 2, 4, 3, 3))),
    ("conv2d 2-D input", lambda t, f: f.conv2d(_z(t, 5, 5), _z(t, 2, 4, 3, 3))),
    ("cross_entropy batch", lambda t, f: f.cross_entropy(
        _z(t, 3, 4), t.tensor(np.array([0, 1], np.int64)))),
    ("binary_cross_entropy sizes",
     lambda t, f: f.binary_cross_entropy(_z(t, 3) + 0.5, _z(t, 4))),
    ("cross_entropy reduction", lambda t, f: f.cross_entropy(
        _z(t, 2, 3), t.tensor(np.array([0, 1], np.int64)), reduction="bogus")),
    ("dropout p", lambda t, f: f.dropout(_z(t, 3), p=1.5)),
    ("layer_norm shape", lambda t, f: f.layer_norm(_z(t, 2, 3), (4,))),
    # torch's NotImplementedError: a rank or dtype it does not implement either
    ("interpolate bilinear of 3-D", lambda t, f: f.interpolate(_z(t, 1, 2, 3), scale_factor=2,
                                                               mode="bilinear")),
    ("grid_sample of integers", lambda t, f: f.grid_sample(
        _z(t, 1, 1, 2, 2, dtype="int32"), _z(t, 1, 1, 1, 2, dtype="int32"),
        align_corners=False)),
    ("interpolate size and scale", lambda t, f: f.interpolate(
        _z(t, 1, 1, 4, 4), size=(8, 8), scale_factor=2.0)),
    ("embedding float indices", lambda t, f: f.embedding(_z(t, 2), _z(t, 4, 3))),
    ("one_hot float classes", lambda t, f: f.one_hot(_z(t, 3), 4)),
    ("sgd negative lr", lambda t, f: _optim(t).SGD([_param(t)], lr=-1.0)),
    ("adam bad beta", lambda t, f: _optim(t).Adam([_param(t)], betas=(1.5, 0.9))),
    ("sgd no parameters", lambda t, f: _optim(t).SGD([], lr=0.1)),
    ("unknown dtype name", lambda t, f: t.zeros(3, dtype="bogus")),
    ("gather out of range",
     lambda t, f: _z(t, 3).gather(0, t.tensor(np.array([5]))).sum().item()),
    ("embedding out of range",
     lambda t, f: f.embedding(t.tensor(np.array([7])), _z(t, 4, 3)).sum().item()),
    ("scatter_add dtypes",
     lambda t, f: _z(t, 3).scatter_add(0, t.tensor(np.array([0])), _z(t, 1, dtype="int32"))),
    ("view count", lambda t, f: _z(t, 2, 3).view(4, 2)),
    ("split dim", lambda t, f: _z(t, 2, 3).split(1, dim=3)),
    ("chunk dim", lambda t, f: _z(t, 2, 3).chunk(2, dim=-4)),
    ("where shapes", lambda t, f: t.where(_z(t, 2, dtype="bool"), _z(t, 3), _z(t, 3))),
    ("argmax dim", lambda t, f: _z(t, 2, 3).argmax(dim=2)),
    ("index_select dim", lambda t, f: _z(t, 3).index_select(1, t.tensor(np.array([0])))),
    ("pad of odd length", lambda t, f: f.pad(_z(t, 2, 3), (1,))),
    ("stack of nothing", lambda t, f: t.stack([])),
    ("batch_norm one value per channel",
     lambda t, f: f.batch_norm(_z(t, 1, 3), None, None, training=True)),
    ("masked_fill shapes", lambda t, f: _z(t, 3).masked_fill(_z(t, 4, dtype="bool"), 1.0)),
    ("log_softmax dim", lambda t, f: f.log_softmax(_z(t, 2, 3), dim=-3)),
    ("mean dim", lambda t, f: _z(t, 2, 3).mean(dim=4)),
    ("max of an empty tensor", lambda t, f: _z(t, 0).max()),
    ("attention shapes", lambda t, f: f.scaled_dot_product_attention(
        _z(t, 1, 2, 4), _z(t, 1, 3, 5), _z(t, 1, 3, 5))),
]


def _torch_error(make: Callable[[Any, Any], Any]) -> type[BaseException]:
    try:
        make(torch, TF)
    except Exception as error:  # the class is what is compared
        return type(error)
    raise AssertionError("torch raised nothing: the case is not a mistake")


@pytest.mark.parametrize("name,make", CASES, ids=[name for name, _ in CASES])
def test_error_is_the_class_torch_raises(name: str, make: Callable[[Any, Any], Any]) -> None:
    expected = _torch_error(make)
    with pytest.raises(pg.PicogradError) as info:
        make(pg, F)
    assert isinstance(info.value, expected), (
        f"{name}: torch raises {expected.__name__}, picograd {type(info.value).__mro__}")


def test_message_still_ends_at_the_users_line() -> None:
    with pytest.raises(IndexError) as info:
        _z(pg, 2, 3).sum(dim=5)
    assert isinstance(info.value, pg.ShapeError)
    assert "test_errors_as_torch.py" in str(info.value).splitlines()[-1]
