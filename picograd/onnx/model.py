"""`load`: an ONNX model as a callable over picograd Tensors.

At load the file is parsed and checked, the opset read, every node checked against the
translation table (an unsupported op fails here, not at the first run), initializers
uploaded to the device once and Constant nodes evaluated on the host — in the main graph
and in every subgraph of If / Loop / Scan (picograd/onnx/graph.py prepares them all). A run
walks the nodes in graph order, translating each onto the public Tensor API; nothing in the
model is executed as code.

Control flow is run on the host, so a condition computed on the device is read back: an
`If` whose condition is a device Tensor, and a `Loop` whose trip count or per-iteration
condition is a device Tensor, synchronize with the device there (the lazy work queued so far
is realized to read the boolean). Host conditions (from shapes, constants, the loop counter)
cost nothing, and host values stay on the host across loop iterations.

Runs are replayed (picograd/onnx/replay.py): the graph is translated on the first two calls
of an input signature (warm-up, then a `pg.jit` capture) and later calls of it run the
captured programs on the new inputs, unless a translation read a device value back.

Graph inputs and outputs may be tensors, sequences of tensors (given and returned as lists
of arrays) or optionals (None when empty).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError

from picograd.frontend.realize import realize
from picograd.frontend.tensor import Tensor
from picograd.onnx import (
    ops_attention,
    ops_bits,
    ops_control,
    ops_elementwise,
    ops_image,
    ops_index,
    ops_loss,
    ops_microsoft,
    ops_misc,
    ops_nn,
    ops_norm_extra,
    ops_quant,
    ops_reduce,
    ops_resize,
    ops_rnn,
    ops_scatter,
    ops_sequence,
    ops_shape,
    ops_signal,
)
from picograd.onnx.dtypes import is_host_only
from picograd.onnx.errors import OnnxInputError, OnnxModelError, OnnxUnsupportedError
from picograd.onnx.graph import GraphRunner, ValueType, declared
from picograd.onnx.registry import DOMAINS, domain_opsets
from picograd.onnx.replay import ShapeReplays

# the op families register their translations on import
_FAMILIES = (ops_attention, ops_bits, ops_control, ops_elementwise, ops_image, ops_index,
             ops_loss, ops_microsoft, ops_misc, ops_nn, ops_norm_extra, ops_quant,
             ops_reduce, ops_resize, ops_rnn, ops_scatter, ops_sequence, ops_shape,
             ops_signal)


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
        base_dir = os.path.dirname(name) if os.path.exists(name) else ""
        self.opsets = domain_opsets(proto)  # each domain's (registry.node_opset)
        self._runner = GraphRunner(self.opsets, device, base_dir)
        self.graph = proto.graph
        self._main = self._runner.prepare(proto.graph, main=True)
        self.weights = self._main.constants
        self.inputs = [(vi.name, declared(vi, "input")) for vi in proto.graph.input
                       if vi.name in self._main.input_names]
        self.outputs = list(zip(self._main.output_names, self._main.output_types,
                                strict=True))
        self.input_names = [n for n, _ in self.inputs]
        self.output_names = [n for n, _ in self.outputs]
        self.replays = ShapeReplays(self._translate, self._runner.read_backs)

    # ── running ────────────────────────────────────────────────────────────

    def _feeds(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
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
        for name, vtype in self.inputs:
            if name not in feeds:
                raise OnnxInputError(f"{self.name}: input {name!r} is missing")
            out[name] = self._check_value(name, feeds[name], vtype)
        return out

    def _check_value(self, name: str, value: Any, vtype: ValueType) -> Any:
        if vtype.kind == "optional" and value is None:
            return None
        if isinstance(value, list | tuple) and vtype.kind in ("sequence", "optional"):
            return [self._check_feed(f"{name}[{i}]", v, vtype.dtype, None)
                    for i, v in enumerate(value)]
        if vtype.kind == "sequence":
            raise OnnxInputError(f"input {name!r}: the graph declares a sequence, give a list")
        return self._check_feed(name, value, vtype.dtype, vtype.dims)

    def _check_feed(self, name: str, value: Any, dtype: np.dtype | None,
                    dims: tuple | None) -> Tensor | np.ndarray:
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
        if is_host_only(got_dtype):  # INT4, FLOAT4E2M1, ...: host values (dtypes.py)
            return np.array(value, order="C")
        return Tensor(np.asarray(value, order="C"), device=self.device)

    def _execute(self, feeds: dict[str, Any], names: Sequence[str]) -> Mapping[str, Any]:
        """The values `names` after a run on `feeds`: replayed (ShapeReplays) when they are
        graph outputs and every input is a tensor, else translated node by node."""
        values = [feeds[n] for n in self._main.input_names]
        if set(names) <= set(self.output_names) and all(isinstance(v, Tensor)
                                                         for v in values):
            return self.replays.run(values)
        return self._runner.execute(self._main, values, {})

    def _translate(self, tensors: list[Tensor]) -> dict[str, Any]:
        env = self._runner.execute(self._main, tensors, {})
        return {n: env[n] for n in self.output_names if n in env}

    def _outputs(self, env: Mapping[str, Any], names: Sequence[str]) -> list[Any]:
        """The values `names` as numpy arrays (a sequence: a list of arrays; an empty
        optional: None), the device ones read back together."""
        declared_types = dict(self.outputs)
        for name in names:
            if name not in env:
                raise OnnxInputError(f"{self.name}: no value named {name!r} (outputs: "
                                     f"{', '.join(self.output_names)})")
        values = [env[n] for n in names]
        pending = [t for v in values for t in (v if isinstance(v, list) else [v])
                   if isinstance(t, Tensor)]
        realize(*pending)
        arrays: list[Any] = []
        for name, v in zip(names, values, strict=True):
            want = declared_types.get(name)
            if v is None:
                arrays.append(None)
            elif isinstance(v, list):
                arrays.append([self._array(f"{name}[{i}]", e, want) for i, e in enumerate(v)])
            else:
                arrays.append(self._array(name, v, want))
        return arrays

    @staticmethod
    def _array(name: str, v: Any, want: ValueType | None) -> np.ndarray:
        array = v.numpy() if isinstance(v, Tensor) else np.asarray(v)
        if want is not None and want.dtype is not None and array.dtype != want.dtype:
            raise OnnxUnsupportedError(f"output {name!r}: the translation gave {array.dtype}, "
                                       f"the graph declares {want.dtype} (an importer bug)")
        return array

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        env = self._execute(self._feeds(args, kwargs), self.output_names)
        return dict(zip(self.output_names, self._outputs(env, self.output_names), strict=True))

    def run(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any]
            ) -> list[Any]:
        """onnxruntime's `InferenceSession.run`: outputs in the order of `output_names`
        (None: every graph output, in graph order)."""
        names = list(output_names or self.output_names)
        return self._outputs(self._execute(self._feeds((), feeds), names), names)


def _dims_text(dims: tuple) -> str:
    return "(" + ", ".join("?" if d is None or d == 0 else str(d) for d in dims) + ")"


def load(source: str | os.PathLike | bytes | onnx.ModelProto, device: str = "CPU"
         ) -> OnnxModel:
    """Read, check and prepare an ONNX model (a path, serialized bytes or a ModelProto) to
    run on `device`; raises OnnxModelError for a file that cannot be read and
    OnnxUnsupportedError for an op the importer does not translate."""
    proto, name = _read(source)
    return OnnxModel(proto, name, device)
