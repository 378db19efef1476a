"""picograd.onnx's com.microsoft contrib ops against onnxruntime: one-node models of every
op, with each optional input and output onnxruntime accepts, in float32 and float16.
onnxruntime's CPU provider runs float16 nodes that have only a float kernel by casting
around them, so it is the reference for float16 too; BiasAdd has no CPU kernel at all and
is compared with its definition in numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import picograd.onnx as pgx
from picograd.onnx.errors import OnnxModelError, OnnxUnsupportedError
from tests.e2e.onnx_helpers import assert_matches_ort, elem_type, ort_run

R = np.random.default_rng(0)
MS = "com.microsoft"
F16 = {"rtol": 2e-3, "atol": 2e-3}
TOL = {np.float32: {"rtol": 1e-5, "atol": 1e-5}, np.float16: F16}

Output = tuple[Any, tuple[int, ...]] | None


def rand(*shape: int, dtype: Any = np.float32, scale: float = 1.0) -> np.ndarray:
    return (R.standard_normal(shape) * scale).astype(dtype)


def ms_model(op: str, inputs: list[tuple[str, np.ndarray | None]], outputs: list[Output],
             attrs: dict[str, Any] | None = None, constants: tuple[str, ...] = (),
             domain: str = MS) -> onnx.ModelProto:
    """A model of one `op` node of `domain`: `inputs` in the node's order (None: omitted),
    graph inputs except the names in `constants` (initializers); `outputs` the node's
    outputs as (numpy dtype, shape), None for one omitted. onnx's shape inference knows no
    contrib op, so the outputs' types are declared here."""
    names = [n if a is not None else "" for n, a in inputs]
    outs = [f"y{i}" if o is not None else "" for i, o in enumerate(outputs)]
    node = helper.make_node(op, names, outs, domain=domain, **(attrs or {}))
    given = [(n, a) for n, a in inputs if a is not None]
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, elem_type(a), a.shape) for n, a in given
         if n not in constants],
        [helper.make_tensor_value_info(name, elem_type(np.empty(0, o[0])), o[1])
         for name, o in zip(outs, outputs, strict=True) if o is not None],
        [numpy_helper.from_array(a, n) for n, a in given if n in constants])
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def feeds_of(inputs: list[tuple[str, np.ndarray | None]], constants: tuple[str, ...] = ()
             ) -> dict[str, np.ndarray]:
    return {n: a for n, a in inputs if a is not None and n not in constants}


def check(op: str, inputs: list[tuple[str, np.ndarray | None]], outputs: list[Output],
          attrs: dict[str, Any] | None = None, constants: tuple[str, ...] = (),
          **tol: float) -> None:
    """The node's outputs from picograd equal onnxruntime's (dtypes, shapes, values)."""
    model = ms_model(op, inputs, outputs, attrs, constants)
    assert_matches_ort(model, feeds_of(inputs, constants), **tol)


def rejected(op: str, inputs: list[tuple[str, np.ndarray | None]], outputs: list[Output],
             attrs: dict[str, Any] | None = None, match: str = "") -> None:
    """Loading the node fails with OnnxUnsupportedError naming the node and `match`."""
    model = ms_model(op, inputs, outputs, attrs)
    model.graph.node[0].name = "the_node"
    with pytest.raises(OnnxUnsupportedError, match=f"the_node.*{match}"):
        pgx.load(model)


# ── the GELU family and BiasAdd ─────────────────────────────────────────────

DTYPES = [np.float32, np.float16]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,attrs", [("Gelu", {}), ("FastGelu", {}), ("QuickGelu", {}),
                                      ("QuickGelu", {"alpha": 1.0})])
def test_gelu_unary(op: str, attrs: dict[str, Any], dtype: Any) -> None:
    x = rand(2, 3, 16, dtype=dtype, scale=3.0)
    check(op, [("x", x)], [(dtype, x.shape)], attrs, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["BiasGelu", "FastGelu"])
def test_gelu_with_bias(op: str, dtype: Any) -> None:
    x, bias = rand(2, 3, 16, dtype=dtype, scale=3.0), rand(16, dtype=dtype)
    check(op, [("x", x), ("bias", bias)], [(dtype, x.shape)], **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_bias_add(dtype: Any) -> None:
    x, bias, skip = rand(2, 3, 8, dtype=dtype), rand(8, dtype=dtype), rand(2, 3, 8, dtype=dtype)
    model = ms_model("BiasAdd", [("x", x), ("bias", bias), ("skip", skip)],
                     [(dtype, x.shape)])
    (got,) = pgx.load(model).run(None, {"x": x, "bias": bias, "skip": skip})
    want = (x.astype(np.float32) + bias.astype(np.float32) + skip.astype(np.float32))
    assert got.dtype == dtype
    np.testing.assert_allclose(got.astype(np.float32), want.astype(dtype).astype(np.float32),
                               **TOL[dtype])


# ── skip layer norms ────────────────────────────────────────────────────────

SKIP_OUTPUTS = [(True, False, False, False), (True, True, True, True),
                (True, False, True, False), (True, False, False, True)]


def _skip_outputs(which: tuple[bool, ...], dtype: Any, shape: tuple[int, ...]
                  ) -> list[Output]:
    stat = (*shape[:-1], 1)
    kinds: list[Output] = [(dtype, shape), (np.float32, stat), (np.float32, stat),
                           (dtype, shape)]
    outs = [k if on else None for k, on in zip(kinds, which, strict=True)]
    while outs[-1] is None:
        outs.pop()
    return outs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("outputs", SKIP_OUTPUTS)
@pytest.mark.parametrize("beta,bias", [(False, False), (True, False), (False, True),
                                       (True, True)])
def test_skip_layer_norm(beta: bool, bias: bool, outputs: tuple[bool, ...], dtype: Any
                         ) -> None:
    x, skip = rand(2, 3, 16, dtype=dtype, scale=2.0), rand(2, 3, 16, dtype=dtype)
    inputs = [("x", x), ("skip", skip), ("gamma", rand(16, dtype=dtype)),
              ("beta", rand(16, dtype=dtype) if beta else None),
              ("bias", rand(16, dtype=dtype) if bias else None)]
    while inputs[-1][1] is None:
        inputs.pop()
    check("SkipLayerNormalization", inputs, _skip_outputs(outputs, dtype, x.shape),
          {"epsilon": 1e-5}, **TOL[dtype])


@pytest.mark.parametrize("skip_shape", [(3, 16), (1, 3, 16)])
def test_skip_layer_norm_broadcast_skip(skip_shape: tuple[int, ...]) -> None:
    x = rand(2, 3, 16)
    inputs = [("x", x), ("skip", rand(*skip_shape)), ("gamma", rand(16)),
              ("beta", rand(16))]
    check("SkipLayerNormalization", inputs, [(np.float32, x.shape)], constants=("gamma",),
          **TOL[np.float32])


def test_skip_layer_norm_2d_default_epsilon() -> None:
    x = rand(5, 16)
    inputs = [("x", x), ("skip", rand(5, 16)), ("gamma", rand(16))]
    check("SkipLayerNormalization", inputs, _skip_outputs((True,) * 4, np.float32, x.shape),
          **TOL[np.float32])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("outputs", [(True, False, False, False), (True, False, True, True),
                                     (True, False, False, True)])
@pytest.mark.parametrize("bias", [False, True])
def test_skip_simplified_layer_norm(bias: bool, outputs: tuple[bool, ...], dtype: Any
                                    ) -> None:
    x = rand(2, 3, 16, dtype=dtype, scale=2.0)
    inputs = [("x", x), ("skip", rand(2, 3, 16, dtype=dtype)),
              ("gamma", rand(16, dtype=dtype)), ("bias", rand(16, dtype=dtype) if bias else None)]
    if not bias:
        inputs.pop()
    check("SkipSimplifiedLayerNormalization", inputs, _skip_outputs(outputs, dtype, x.shape),
          {"epsilon": 1e-6}, **TOL[dtype])


def test_skip_simplified_layer_norm_mean_rejected() -> None:
    x = rand(2, 3, 16)
    rejected("SkipSimplifiedLayerNormalization",
             [("x", x), ("skip", rand(2, 3, 16)), ("gamma", rand(16))],
             _skip_outputs((True, True, False, False), np.float32, x.shape),
             match=r"output\(s\) \[1\]")


def test_simplified_layer_norm_never_reaches_the_importer() -> None:
    """onnxruntime's SimplifiedLayerNormalization lives in the default domain, where onnx
    has no schema: onnx's checker refuses the model, so picograd has no translation."""
    x = rand(2, 3, 16)
    model = ms_model("SimplifiedLayerNormalization", [("x", x), ("gamma", rand(16))],
                     [(np.float32, x.shape)], domain="")
    assert ort_run(model, {"x": x, "gamma": rand(16)})[0].shape == x.shape
    with pytest.raises(OnnxModelError, match="checker"):
        pgx.load(model)
