"""Run an ONNX model with picograd: export a small CNN from torch, load the file with
`picograd.onnx`, run it at two batch sizes and compare with onnxruntime.

    pip install -e '.[dev]'           # torch, onnx, onnxruntime
    python examples/run_onnx.py [--device CPU|CPU:C|WEBGPU|CUDA]

With your own file, the same is one command:
    python -m picograd.onnx model.onnx --check-ort
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings

import numpy as np
import onnxruntime
import torch

import picograd.onnx as pgx


class SmallCNN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.head(self.features(x)), dim=-1)


def export(path: str) -> None:
    torch.manual_seed(0)
    model = SmallCNN().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.randn(1, 1, 28, 28),), path, input_names=["image"],
                          output_names=["probs"], opset_version=17, dynamo=False,
                          dynamic_axes={"image": {0: "batch"}, "probs": {0: "batch"}})


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--device", default="CPU")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "cnn.onnx")
        export(path)
        model = pgx.load(path, device=args.device)
        print(f"inputs {model.input_names}, outputs {model.output_names}, "
              f"{len(model.graph.node)} nodes")
        reference = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(0)
        for batch in (8, 3):
            image = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
            for call in range(3):  # call 1 compiles, call 3 replays the compiled programs
                start = time.perf_counter()
                probs = model(image=image)["probs"]
                took = (time.perf_counter() - start) * 1e3
                print(f"batch {batch} call {call + 1}: {took:8.2f} ms")
            theirs = reference.run(None, {"image": image})[0]
            print(f"  probs {probs.shape} {probs.dtype}, argmax {probs.argmax(1).tolist()}, "
                  f"largest difference to onnxruntime {np.abs(probs - theirs).max():.2e}")


if __name__ == "__main__":
    main()
