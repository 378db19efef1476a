"""`python -m picograd.onnx MODEL.onnx [--inputs file.npz] [--device D] [--check-ort]`:
load a model, run it twice on the given (or random) inputs and print each output's shape
and dtype, the time of the first run (compiles) and of a later one, and with --check-ort the
largest difference to onnxruntime's outputs. Errors print one line and exit with status 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from picograd.errors import PicogradError
from picograd.onnx.errors import OnnxInputError
from picograd.onnx.model import OnnxModel, load


def random_inputs(model: OnnxModel, seed: int = 0) -> dict[str, np.ndarray]:
    """Random feeds for the graph's inputs; each needs a dtype and static dims."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, vtype in model.inputs:
        dtype, dims = vtype.dtype, vtype.dims
        if vtype.kind != "tensor" or dtype is None or dims is None or any(not d for d in dims):
            raise OnnxInputError(f"input {name!r} is not a tensor of static shape and dtype: "
                                 f"give --inputs file.npz")
        if dtype.kind == "b":
            feeds[name] = rng.random(dims) < 0.5
        elif dtype.kind in "iu":
            feeds[name] = rng.integers(0, 4, dims).astype(dtype)
        else:
            feeds[name] = rng.standard_normal(dims).astype(dtype)
    return feeds


def _ort_outputs(path: str, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime  # optional: only --check-ort needs it

    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    return [np.asarray(out) for out in session.run(None, feeds)]


def _largest_difference(ours: np.ndarray, theirs: np.ndarray) -> float:
    if ours.shape != theirs.shape:
        return float("inf")
    if ours.size == 0:
        return 0.0
    a, b = ours.astype(np.float64), np.asarray(theirs).astype(np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    same = (a == b) | both_nan  # equal infinities differ by 0, not NaN
    return float(np.where(same, 0.0, np.abs(a - b)).max())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m picograd.onnx", description=__doc__)
    parser.add_argument("model", help="an .onnx file")
    parser.add_argument("--inputs", help="an .npz of the graph's inputs by name")
    parser.add_argument("--device", default="CPU", help="picograd device (default CPU)")
    parser.add_argument("--check-ort", action="store_true",
                        help="compare the outputs with onnxruntime's")
    args = parser.parse_args(argv)
    try:
        model = load(args.model, device=args.device)
        if args.inputs:
            with np.load(args.inputs) as data:
                feeds = {k: data[k] for k in data.files}
        else:
            feeds = random_inputs(model)
        start = time.perf_counter()
        outputs = model.run(None, feeds)
        first = time.perf_counter() - start
        start = time.perf_counter()
        model.run(None, feeds)
        later = time.perf_counter() - start
        for name, out in zip(model.output_names, outputs, strict=True):
            print(f"{name}: shape {tuple(out.shape)} dtype {out.dtype}")
        print(f"first run {first * 1e3:.1f} ms, later run {later * 1e3:.1f} ms")
        if args.check_ort:
            reference = _ort_outputs(args.model, feeds)
            worst = max((_largest_difference(o, r) for o, r in
                         zip(outputs, reference, strict=True)), default=0.0)
            print(f"largest difference to onnxruntime: {worst:.3g}")
    except (PicogradError, OSError, ValueError, ImportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except Exception as e:
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
