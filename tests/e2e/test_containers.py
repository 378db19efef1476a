"""Containers (ModuleList, ModuleDict, ParameterList, ParameterDict, Sequential) and Module's
traversal methods, against torch's names and behaviour on the same structures."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

import picograd as pg
import picograd.nn as nn


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 2)])
        self.heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Sequential(nn.Linear(2, 2))})
        self.scales = nn.ParameterList([pg.ones(3), pg.ones(2)])
        self.extra = nn.ParameterDict({"w": pg.zeros(4)})


class _TorchNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(3, 3), torch.nn.Linear(3, 2)])
        self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(2, 1),
                                          "b": torch.nn.Sequential(torch.nn.Linear(2, 2))})
        self.scales = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(3)),
                                              torch.nn.Parameter(torch.ones(2))])
        self.extra = torch.nn.ParameterDict({"w": torch.nn.Parameter(torch.zeros(4))})


def test_names_match_torch() -> None:
    ours, theirs = _Net(), _TorchNet()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert ([n for n, _ in ours.named_parameters(recurse=False)]
            == [n for n, _ in theirs.named_parameters(recurse=False)])
    assert ([n for n, _ in ours.scales.named_parameters(recurse=False)]
            == [n for n, _ in theirs.scales.named_parameters(recurse=False)])


def test_torch_state_dict_loads_and_computes_the_same() -> None:
    ours, theirs = _Net(), _TorchNet()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    h, th = pg.Tensor(x), torch.tensor(x)
    for ours_block, their_block in zip(ours.blocks, theirs.blocks, strict=True):
        h, th = ours_block(h), their_block(th)
    np.testing.assert_allclose(ours.heads["b"](h).numpy(),
                               theirs.heads["b"](th).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_tied_weights_are_one_parameter() -> None:
    ours = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
    ours[1].weight = ours[0].weight
    theirs[1].weight = theirs[0].weight
    assert ([n for n, _ in ours.named_parameters()]
            == [n for n, _ in theirs.named_parameters()])
    assert len(ours.parameters()) == len(list(theirs.parameters())) == 3
    assert list(ours.state_dict()) == list(theirs.state_dict())  # state_dict keeps both
    shared = nn.Linear(2, 2)
    twice = nn.ModuleList([shared, shared])
    assert len(list(twice.modules())) == 2 and len(twice.parameters()) == 2


def test_sequential_ordered_dict_indexing_slicing_append() -> None:
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU()),
                                     ("out", nn.Linear(3, 1))]))
    tseq = torch.nn.Sequential(OrderedDict([("fc", torch.nn.Linear(2, 3)),
                                            ("act", torch.nn.ReLU()),
                                            ("out", torch.nn.Linear(3, 1))]))
    assert list(seq.state_dict()) == list(tseq.state_dict())
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2
    assert list(head.state_dict()) == list(tseq[:2].state_dict())
    seq.append(nn.ReLU())
    tseq.append(torch.nn.ReLU())
    assert [n for n, _ in seq.named_children()] == [n for n, _ in tseq.named_children()]
    x = np.ones((4, 2), np.float32)
    assert head(pg.Tensor(x)).shape == (4, 3)
    with pytest.raises(IndexError):
        seq[7]


def test_module_list_operations() -> None:
    layers = nn.ModuleList()
    layers.append(nn.Linear(1, 1)).extend([nn.ReLU(), nn.Linear(1, 2)])
    layers.insert(0, nn.Identity() if hasattr(nn, "Identity") else nn.ReLU())
    assert len(layers) == 4 and isinstance(layers[1], nn.Linear)
    assert [n for n, _ in layers.named_parameters()] == ["1.weight", "1.bias", "3.weight",
                                                         "3.bias"]
    assert len(layers[1:]) == 3
    with pytest.raises(TypeError):
        layers.append(pg.ones(2))  # type: ignore[arg-type]
    with pytest.raises(IndexError):
        layers[4]
    assert isinstance(layers.pop(), nn.Linear) and len(layers) == 3


def test_module_dict_and_parameter_dict() -> None:
    heads = nn.ModuleDict([("x", nn.Linear(1, 1))])
    heads["y"] = nn.Linear(1, 2)
    assert list(heads.keys()) == ["x", "y"] and "y" in heads and len(heads) == 2
    del heads["x"]
    assert list(heads.state_dict()) == ["y.weight", "y.bias"]
    params = nn.ParameterDict()
    params["p"] = pg.ones(2)
    assert params["p"].requires_grad and [n for n, _ in params.named_parameters()] == ["p"]
    with pytest.raises(KeyError):
        heads["missing"]


def test_parameter_list_gradients() -> None:
    scales = nn.ParameterList([pg.Tensor([1.0, 2.0]), pg.Tensor([3.0, 4.0])])
    (scales[0] * scales[1]).sum().backward()
    np.testing.assert_allclose(scales[0].grad.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(scales[1].grad.numpy(), [1.0, 2.0])


def test_apply_children_get_submodule_add_module() -> None:
    net = _Net()
    visited: list[str] = []
    net.apply(lambda m: visited.append(type(m).__name__))
    theirs: list[str] = []
    _TorchNet().apply(lambda m: theirs.append(type(m).__name__.replace("_Torch", "_")))
    assert visited == theirs
    assert net.get_submodule("heads.b.0") is net.heads["b"][0]
    assert net.get_submodule("") is net
    with pytest.raises(AttributeError):
        net.get_submodule("heads.c")
    net.add_module("tail", nn.Linear(2, 2))
    assert [n for n, _ in net.named_children()][-1] == "tail"
    with pytest.raises(KeyError):
        net.add_module("a.b", nn.ReLU())
    assert len(list(net.children())) == 5


def test_requires_grad_freezes_but_keeps_parameters() -> None:
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    net[0].requires_grad_(False)
    assert len(net.parameters()) == 4 and len(net.state_dict()) == 4
    assert [p.requires_grad for p in net.parameters()] == [False, False, True, True]
    net(pg.ones(3, 2)).sum().backward()
    assert net[0].weight.grad is None and net[1].weight.grad is not None
    net.requires_grad_(True)
    assert all(p.requires_grad for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_zero_grad_to_zeros_and_buffers() -> None:
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    net(pg.ones(3, 2)).sum().backward()
    net.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(net[0].weight.grad.numpy(), np.zeros((2, 2), np.float32))
    tnet = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
    assert [n for n, _ in net.named_buffers()] == [n for n, _ in tnet.named_buffers()]


def test_to_device_and_half_keep_the_same_tensors(device: str) -> None:
    net = nn.Linear(2, 2)
    weight = net.weight
    before = weight.numpy()
    opt_params = net.parameters()
    assert net.to(device) is net
    assert net.weight is weight and weight.device == pg.Tensor([1.0], device=device).device
    np.testing.assert_array_equal(weight.numpy(), before)
    assert opt_params[0] is net.weight
    y = net(pg.ones(1, 2, device=device))
    y.sum().backward()
    assert weight.grad is not None and weight.grad.device == weight.device
    net.half()
    assert net.weight.dtype == pg.float16 and net.weight.requires_grad
    net.float()
    assert net.weight.dtype == pg.float32


def test_repr_lists_children() -> None:
    text = repr(nn.ModuleList([nn.Linear(2, 3)]))
    assert "(0): Linear(in_features=2, out_features=3, bias=True)" in text
