"""`load`: an ONNX model as a callable over picograd Tensors.

At load the file is parsed and checked, the opset read, every node checked against the
translation table (an unsupported op fails here, not at the first run), initializers
uploaded to the device once and Constant nodes evaluated on the host. A run walks the nodes
in graph order, translating each onto the public Tensor API; nothing in the model is
executed as code.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper

from picograd.frontend.realize import realize
from picograd.frontend.tensor import Tensor
from picograd.onnx import (
    ops_elementwise,
    ops_index,
    ops_misc,
    ops_nn,
    ops_reduce,
    ops_rnn,
    ops_shape,
)
from picograd.onnx.dtypes import numpy_dtype, onnx_type_name
from picograd.onnx.errors import OnnxInputError, OnnxModelError, OnnxUnsupportedError
from picograd.onnx.registry import DOMAINS, OPS, NodeContext, Value, check_node, node_attrs

# the op families register their translations on import
_FAMILIES = (ops_elementwise, ops_index, ops_misc, ops_nn, ops_reduce, ops_shape, ops_rnn)

# an initializer this small (or an integer one up to _HOST_INT_LIMIT) also stays on the
# host, so a shape input read from it needs no device read-back
_HOST_LIMIT = 64
_HOST_INT_LIMIT = 4096


def _read(source: str | os.PathLike | bytes | onnx.ModelProto) -> tuple[onnx.ModelProto, str]:
    if isinstance(source, onnx.ModelProto):
        return source, "<ModelProto>"
    if isinstance(source, bytes):
        name = "<bytes>"
        try:
            return onnx.load_model_from_string(source), name
        except (DecodeError, ValueError, RuntimeError) as e:
            raise OnnxModelError(f"{name}: not a valid ONNX model ({e})") from None
    name = os.fspath(source)
    try:
        return onnx.load(name), name
    except FileNotFoundError:
        raise OnnxModelError(f"{name}: no such file") from None
    except onnx.checker.ValidationError as e:  # onnx's checks of external data files
        raise OnnxModelError(f"{name}: external data refused: {e}") from None
    except (DecodeError, ValueError, RuntimeError, OSError) as e:
        raise OnnxModelError(f"{name}: not a valid ONNX model (truncated or malformed: "
                             f"{type(e).__name__}: {e})") from None


def _declared(vi: onnx.ValueInfoProto, where: str) -> tuple[np.dtype | None, tuple | None]:
    """The numpy dtype and the dims (int or None for a symbolic dim; None if unranked)."""
    tt = vi.type.tensor_type
    if not vi.type.HasField("tensor_type"):
        raise OnnxUnsupportedError(f"{where} {vi.name!r}: only tensor values are supported")
    dt = None
    if tt.elem_type:
        dt = numpy_dtype(tt.elem_type)
        if dt is None:
            raise OnnxUnsupportedError(f"{where} {vi.name!r}: element type "
                                       f"{onnx_type_name(tt.elem_type)} is not supported")
    if not tt.HasField("shape"):
        return dt, None
    return dt, tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)


class OnnxModel:
    """A loaded ONNX model on a device. Call it with arrays or Tensors (by position, in the
    graph's input order, or by input name) for a dict {output name: numpy array}; `run` is
    onnxruntime's `InferenceSession.run`: a list in the order of `output_names`."""

    def __init__(self, proto: onnx.ModelProto, name: str, device: str = "CPU"):
        self.name, self.device = name, device
        try:
            onnx.checker.check_model(proto)
        except onnx.checker.ValidationError as e:
            raise OnnxModelError(f"{name}: fails onnx's checker: {str(e).splitlines()[0]}"
                                 ) from None
        self.opset = next((o.version for o in proto.opset_import if o.domain in DOMAINS), 1)
        graph = proto.graph
        self.graph = graph
        self._uploads: dict[int, tuple[np.ndarray, Tensor]] = {}
        self.weights: dict[str, Value] = {}
        for init in graph.initializer:
            self.weights[init.name] = self._initializer(init)
        inits = {i.name for i in graph.initializer}
        # IR < 4 lists every initializer as a graph input too: those are not fed
        self.inputs = [(vi.name, *_declared(vi, "input")) for vi in graph.input
                       if vi.name not in inits]
        self.outputs = [(vi.name, *_declared(vi, "output")) for vi in graph.output]
        self.input_names = [n for n, _, _ in self.inputs]
        self.output_names = [n for n, _, _ in self.outputs]
        self._nodes: list[tuple[onnx.NodeProto, dict[str, Any]]] = []
        for node in graph.node:
            check_node(node, self.opset)
            attrs = node_attrs(node)
            if node.op_type == "Constant":  # evaluated once, on the host
                ctx = self._context(node, attrs)
                value = OPS["Constant"].fn(ctx)
                self.weights[node.output[0]] = self._keep(np.asarray(value))
                continue
            self._nodes.append((node, attrs))

    # ── weights ────────────────────────────────────────────────────────────

    def _keep(self, array: np.ndarray) -> np.ndarray:
        """Register a model-owned host array so its device copy is made only once."""
        self._uploads[id(array)] = (array, Tensor(array, device=self.device))
        return array

    def _initializer(self, init: onnx.TensorProto) -> Value:
        if numpy_dtype(init.data_type) is None:
            raise OnnxUnsupportedError(f"initializer {init.name!r}: element type "
                                       f"{onnx_type_name(init.data_type)} is not supported")
        array = numpy_helper.to_array(init, base_dir=os.path.dirname(self.name)
                                      if os.path.exists(self.name) else "")
        array = np.asarray(array, dtype=numpy_dtype(init.data_type))
        small = array.size <= _HOST_LIMIT or (array.dtype.kind in "iub"
                                              and array.size <= _HOST_INT_LIMIT)
        if small:
            return self._keep(array)
        return Tensor(array, device=self.device)

    def _to_tensor(self, array: np.ndarray) -> Tensor:
        kept = self._uploads.get(id(array))
        if kept is not None and kept[0] is array:
            return kept[1]
        return Tensor(np.asarray(array, order="C"), device=self.device)

    def _context(self, node: onnx.NodeProto, attrs: dict[str, Any]) -> NodeContext:
        return NodeContext(node, attrs, self.opset, self.device, self._to_tensor,
                           len(node.output))

    # ── running ────────────────────────────────────────────────────────────

    def _feeds(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Tensor]:
        if len(args) > len(self.inputs):
            raise OnnxInputError(f"{self.name}: {len(args)} inputs given, the graph takes "
                                 f"{len(self.inputs)} ({', '.join(self.input_names)})")
        feeds = dict(zip(self.input_names, args, strict=False))
        for key, value in kwargs.items():
            if key not in self.input_names:
                raise OnnxInputError(f"{self.name}: no graph input named {key!r} (inputs: "
                                     f"{', '.join(self.input_names)})")
            if key in feeds:
                raise OnnxInputError(f"input {key!r} given twice")
            feeds[key] = value
        out = {}
        for name, dtype, dims in self.inputs:
            if name not in feeds:
                raise OnnxInputError(f"{self.name}: input {name!r} is missing")
            out[name] = self._check_feed(name, feeds[name], dtype, dims)
        return out

    def _check_feed(self, name: str, value: Any, dtype: np.dtype | None,
                    dims: tuple | None) -> Tensor:
        if isinstance(value, Tensor):
            got_dtype, shape = np.dtype(value.dtype.np), tuple(value.shape)
        else:
            value = np.asarray(value)
            got_dtype, shape = value.dtype, value.shape
        if dtype is not None and got_dtype != dtype:
            raise OnnxInputError(f"input {name!r}: dtype {got_dtype} given, the graph "
                                 f"declares {dtype}")
        if dims is not None:
            if len(shape) != len(dims):
                raise OnnxInputError(f"input {name!r}: shape {shape} given, the graph "
                                     f"declares rank {len(dims)} {_dims_text(dims)}")
            for i, (got, want) in enumerate(zip(shape, dims, strict=True)):
                if want and got != want:
                    raise OnnxInputError(f"input {name!r}: dim {i} is {got}, the graph "
                                         f"declares {_dims_text(dims)}")
        if isinstance(value, Tensor):
            return value if value.device == self.device else value.to(self.device)
        return Tensor(np.asarray(value, order="C"), device=self.device)

    def _execute(self, feeds: dict[str, Tensor]) -> dict[str, Value]:
        env: dict[str, Value] = dict(self.weights)
        env.update(feeds)
        for node, attrs in self._nodes:
            args = [env[n] if n else None for n in node.input]
            result = OPS[node.op_type].fn(self._context(node, attrs), *args)
            results = result if isinstance(result, tuple) else (result,)
            for out_name, value in zip(node.output, results, strict=False):
                if out_name:  # numpy's 0-d results are scalars: keep them host arrays
                    env[out_name] = np.asarray(value) if isinstance(value, np.generic) else value
            missing = [n for n in node.output[len(results):] if n]
            if missing:
                raise OnnxUnsupportedError(f"{self._context(node, attrs).label}: output(s) "
                                           f"{', '.join(missing)} not supported")
        return env

    def _outputs(self, env: dict[str, Value], names: Sequence[str]) -> list[np.ndarray]:
        declared = {n: dt for n, dt, _ in self.outputs}
        for name in names:
            if name not in env:
                raise OnnxInputError(f"{self.name}: no value named {name!r} (outputs: "
                                     f"{', '.join(self.output_names)})")
        pending = [v for v in (env[n] for n in names) if isinstance(v, Tensor)]
        realize(*pending)
        arrays = []
        for name in names:
            v = env[name]
            array = v.numpy() if isinstance(v, Tensor) else np.asarray(v)
            want = declared.get(name)
            if want is not None and array.dtype != want:
                raise OnnxUnsupportedError(f"output {name!r}: the translation gave {array.dtype}"
                                           f", the graph declares {want} (an importer bug)")
            arrays.append(array)
        return arrays

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, np.ndarray]:
        env = self._execute(self._feeds(args, kwargs))
        return dict(zip(self.output_names, self._outputs(env, self.output_names), strict=True))

    def run(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any]
            ) -> list[np.ndarray]:
        """onnxruntime's `InferenceSession.run`: outputs in the order of `output_names`
        (None: every graph output, in graph order)."""
        env = self._execute(self._feeds((), feeds))
        return self._outputs(env, list(output_names or self.output_names))


def _dims_text(dims: tuple) -> str:
    return "(" + ", ".join("?" if d is None or d == 0 else str(d) for d in dims) + ")"


def load(source: str | os.PathLike | bytes | onnx.ModelProto, device: str = "CPU"
         ) -> OnnxModel:
    """Read, check and prepare an ONNX model (a path, serialized bytes or a ModelProto) to
    run on `device`; raises OnnxModelError for a file that cannot be read and
    OnnxUnsupportedError for an op the importer does not translate."""
    proto, name = _read(source)
    return OnnxModel(proto, name, device)
