"""`Backend`: picograd as an `onnx.backend.base.Backend`, the interface the official ONNX
backend test suite drives (`onnx.backend.test.BackendTest(Backend, __name__)`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend as OnnxBackend
from onnx.backend.base import BackendRep as OnnxBackendRep

from picograd.onnx.model import OnnxModel, load
from picograd.runtimes import get_device


class BackendRep(OnnxBackendRep):
    """A prepared model: `run(inputs)` takes the graph's non-initializer inputs in order
    (or a dict by name) and returns the outputs in graph order."""

    def __init__(self, model: OnnxModel):
        self.model = model

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        if isinstance(inputs, dict):
            outputs = self.model(**inputs)
        else:
            if not isinstance(inputs, list | tuple):
                inputs = [inputs]
            outputs = self.model(*inputs)
        return tuple(outputs[name] for name in self.model.output_names)


class Backend(OnnxBackend):
    """picograd's ONNX backend: devices "CPU" and "CUDA" (picograd's device names)."""

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any
                ) -> BackendRep:
        return BackendRep(load(model, device=device))

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU",
                  **kwargs: Any) -> tuple[np.ndarray, ...]:
        return cls.prepare(model, device).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            get_device(device)
        except Exception:
            return False
        return True

