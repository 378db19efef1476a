"""Optimisers refuse the arguments torch refuses (ValueError there; `OptimizerError`, also
a ValueError, here), naming the hyper-parameter and value at the user's line: the same
rules a checkpoint's hyper-parameters meet when loaded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import picograd as pg
from picograd.errors import OptimizerError

torch = pytest.importorskip("torch", reason="torch is the oracle of what is refused")

# (picograd's optimiser, torch's, keyword arguments, the message picograd gives)
BAD: dict[str, tuple[Callable[..., Any], Callable[..., Any], dict[str, Any], str]] = {
    "negative-lr": (pg.optim.SGD, torch.optim.SGD, {"lr": -0.1}, "lr is -0.1"),
    "negative-momentum": (pg.optim.SGD, torch.optim.SGD, {"lr": 0.1, "momentum": -0.5},
                          "momentum is -0.5"),
    "nesterov-without-momentum": (pg.optim.SGD, torch.optim.SGD,
                                  {"lr": 0.1, "nesterov": True}, "nesterov needs a momentum"),
    "negative-weight-decay": (pg.optim.SGD, torch.optim.SGD,
                              {"lr": 0.1, "weight_decay": -1.0}, "weight_decay is -1.0"),
    "adam-beta-one": (pg.optim.Adam, torch.optim.Adam, {"betas": (0.9, 1.0)},
                      r"betas is \(0.9, 1.0\)"),
    "adam-negative-beta": (pg.optim.Adam, torch.optim.Adam, {"betas": (-0.1, 0.9)},
                           r"betas is \(-0.1, 0.9\)"),
    "adam-negative-eps": (pg.optim.Adam, torch.optim.Adam, {"eps": -1e-8}, "eps is -1e-08"),
    "adamw-negative-lr": (pg.optim.AdamW, torch.optim.AdamW, {"lr": -1.0}, "lr is -1.0"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_refused_as_torch_refuses(case: str) -> None:
    ours, theirs, kwargs, message = BAD[case]
    with pytest.raises(ValueError):
        theirs([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(OptimizerError, match=message) as info:
        ours([pg.zeros(2)], **kwargs)
    assert "test_optimizer_arguments.py" in str(info.value)


def test_an_empty_parameter_list_is_refused() -> None:
    with pytest.raises(ValueError):
        torch.optim.SGD([], lr=0.1)
    with pytest.raises(OptimizerError, match="SGD: got an empty parameter list"):
        pg.optim.SGD([], lr=0.1)


def test_valid_arguments_are_taken() -> None:
    p = [pg.zeros(2)]
    assert pg.optim.SGD(p, lr=0.0, momentum=0.9, nesterov=True).lr == 0.0
    assert pg.optim.Adam(p, betas=(0.0, 0.0), eps=0.0).param_groups[0]["betas"] == (0.0, 0.0)
