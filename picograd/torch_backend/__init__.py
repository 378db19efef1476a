"""picograd as a `torch.compile` backend: PyTorch programs compiled by picograd, unchanged.

    model = torch.compile(model, backend="picograd")   # no import of picograd needed
    loss = loss_fn(model(x), y); loss.backward()        # forward and backward in picograd

Installing picograd registers `backend` under the `torch_dynamo_backends` entry point.
AOTAutograd (with torch's core ATen decompositions) hands the forward and the backward of
each captured region as ATen FX graphs; each becomes one picograd function (one translation
per op family module: ops_elementwise, ops_activation, ops_attention, ops_shape,
ops_reduce, ops_nn), replayed through
`picograd.jit` per input signature. An ATen op picograd has no translation for runs in
torch, its graph split around it (split.py: the ops around it run in picograd), logged
once per op on the `picograd.torch_backend` logger; `explain(model, *inputs)` lists what
ran where. A graph dynamo made dynamic (after a call with new sizes) runs in
picograd too, compiled once per set of concrete sizes (logged at INFO); picograd's
symbolic sizes (`pg.Variable`) are not used for them yet.
`options={"device": "CPU", "pipeline": "...", "debug": 2}` pick picograd's device (inputs
and outputs are torch CPU tensors), the pass pipeline its realizes run (instead of the
device's default) and the DEBUG level while its graphs run.
"""

from __future__ import annotations

from picograd.torch_backend.backend import SUPPORTED_OPS, backend
from picograd.torch_backend.explain import Explanation, explain
from picograd.torch_backend.registry import TorchUnsupported

__all__ = ["SUPPORTED_OPS", "Explanation", "TorchUnsupported", "backend", "explain"]
