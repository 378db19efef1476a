"""Exported ONNX models run by picograd.onnx and by onnxruntime, in one process.

    python bench/onnx_models.py [--device CPU:LLVM] [--repeat 5] [--quick]
                                [--models cnn,encoder,lstm]

Each model is written in torch, exported once with `torch.onnx.export` (the TorchScript
exporter, opset 17, dynamic batch / sequence axes) and the same file loaded by both:

    cnn       a CNN of the Fashion-MNIST kind (conv-BN-ReLU x 3, pools, linear head),
              64 x 1 x 28 x 28
    encoder   bench/transformer.py's BERT-style encoder (6 layers, hidden 384), 32 x 128
              and 1 x 128 token ids
    lstm      a 2-layer LSTM (hidden 256) over 16 x 64 x 128 features

Columns: picograd's first call (load + translate + compile: the kernel cache on disk is
as it is, so say whether it was cold), picograd's and onnxruntime's steady time (medians
of `--repeat` calls after a warm-up; picograd's model replays its compiled programs), and
picograd / onnxruntime. onnxruntime runs its CPU provider with as many intra-op threads as
the machine has cores, picograd with its own default; the outputs are compared (1e-3)
before timing. Numbers move with machine load: quote them from an idle machine.
"""

from __future__ import annotations

import argparse
import io
import os
import time
import warnings

import numpy as np
from realize import _median_time
from transformer import torch_encoder


def _cnn():
    import torch
    from torch import nn

    def block(cin: int, cout: int) -> list:
        return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU()]

    return nn.Sequential(*block(1, 32), nn.MaxPool2d(2), *block(32, 64), nn.MaxPool2d(2),
                         *block(64, 64), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(64, 10)).eval(), torch


class _Lstm:
    @staticmethod
    def build():
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = torch.nn.LSTM(128, 256, num_layers=2, batch_first=True)
                self.head = torch.nn.Linear(256, 10)

            def forward(self, x):
                out, _ = self.lstm(x)
                return self.head(out[:, -1])

        return Model().eval()


def _export(module, example, dynamic: dict) -> bytes:
    import torch

    data = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (example,), data,  # type: ignore[arg-type]
                          input_names=["x"], output_names=["y"],
                          dynamic_axes=dynamic, opset_version=17, dynamo=False)
    return data.getvalue()


def _cases(quick: bool) -> dict[str, tuple[bytes, list[np.ndarray]]]:
    """{model name: (ONNX bytes, the inputs to time it on)}."""
    import torch

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    cnn, _ = _cnn()
    batch = 4 if quick else 64
    cnn_bytes = _export(cnn, torch.zeros(1, 1, 28, 28), {"x": {0: "b"}})
    cnn_in = [rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)]
    encoder = torch_encoder(1 if quick else 6)
    enc_bytes = _export(encoder, torch.zeros(1, 8, dtype=torch.int64),
                        {"x": {0: "b", 1: "s"}})
    shapes = [(2, 16)] if quick else [(32, 128), (1, 128)]
    enc_in = [rng.integers(0, 30522, s).astype(np.int64) for s in shapes]
    lstm = _Lstm.build()
    lstm_bytes = _export(lstm, torch.zeros(1, 4, 128), {"x": {0: "b", 1: "s"}})
    lstm_in = [rng.standard_normal((2, 8, 128) if quick else (16, 64, 128)
                                   ).astype(np.float32)]
    return {"cnn": (cnn_bytes, cnn_in), "encoder": (enc_bytes, enc_in),
            "lstm": (lstm_bytes, lstm_in)}


def _row(name: str, data: bytes, x: np.ndarray, device: str, repeat: int, ort) -> str:
    import picograd.onnx as pgx

    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    start = time.perf_counter()
    model = pgx.load(data, device=device)
    got = model(x)["y"]
    first = time.perf_counter() - start
    want = session.run(None, {"x": x})[0]
    err = float(np.abs(got - want).max())
    assert err < 1e-3, f"{name}: picograd differs from onnxruntime by {err}"
    t_pg = _median_time(lambda: model(x), repeat)
    t_ort = _median_time(lambda: session.run(None, {"x": x}), repeat)
    shape = " x ".join(map(str, x.shape))
    return (f"| {name} | {shape} | {first:.2f} | {t_pg * 1e3:.2f} | {t_ort * 1e3:.2f} "
            f"| {t_pg / t_ort:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--device", default="CPU:LLVM")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--models", default="cnn,encoder,lstm")
    parser.add_argument("--quick", action="store_true", help="small shapes: a smoke test")
    args = parser.parse_args()
    import onnxruntime

    cases = _cases(args.quick)
    print(f"picograd.onnx on {args.device} vs onnxruntime {onnxruntime.__version__} "
          f"(CPU provider, {os.cpu_count()} threads)\n")
    print("| model | input | picograd first call s | picograd ms | onnxruntime ms "
          "| picograd / onnxruntime |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.models.split(","):
        data, inputs = cases[name]
        for x in inputs:
            print(_row(name, data, x, args.device, args.repeat, onnxruntime), flush=True)
    print("\n(medians; first call: load + translate + compile with the disk cache as it was)")


if __name__ == "__main__":
    main()
