"""picograd's ONNX importer: run `.onnx` models on picograd Tensors.

    import picograd.onnx as pgx
    model = pgx.load("model.onnx", device="CPU")
    outputs = model(x)                          # {output name: numpy array}
    [y] = model.run(None, {"input": x})         # onnxruntime's InferenceSession.run

Every node is translated onto the public Tensor / nn API (one module per op family:
ops_elementwise, ops_nn, ops_shape, ops_reduce, ops_misc); shape computations are folded
on the host. An unsupported op fails at load (`OnnxUnsupportedError`, naming the node).
`Backend` is the `onnx.backend.base.Backend` of the official backend test suite;
`python -m picograd.onnx MODEL.onnx` runs a model from the command line. Needs the
optional packages `onnx` (and `onnxruntime` for `--check-ort`): `pip install picograd[onnx]`.
"""

from picograd.onnx.backend import Backend, BackendRep
from picograd.onnx.errors import OnnxError, OnnxInputError, OnnxModelError, OnnxUnsupportedError
from picograd.onnx.model import OnnxModel, load
from picograd.onnx.registry import OPS

SUPPORTED_OPS = tuple(sorted(OPS))

__all__ = ["SUPPORTED_OPS", "Backend", "BackendRep", "OnnxError", "OnnxInputError",
           "OnnxModel", "OnnxModelError", "OnnxUnsupportedError", "load"]
