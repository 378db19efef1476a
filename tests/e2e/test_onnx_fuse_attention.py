"""Attention that an exporter spelled out as MatMul / scale / mask / Softmax / MatMul runs as
one fused attention (picograd/onnx/fuse_attention.py) where that computes what the nodes
compute, and as the nodes otherwise; always equal to onnxruntime."""

from __future__ import annotations

import io
import warnings

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import picograd as pg
import picograd.nn as pnn
import picograd.nn.functional as PF
import picograd.onnx as pgx
from picograd.frontend.lazy import LazyOp
from picograd.frontend.realize import compiled
from tests.e2e.onnx_helpers import ort_run

rng = np.random.default_rng(7)
B, H, L, S, E = 2, 3, 5, 6, 4


def _fused_count(model: pgx.OnnxModel) -> int:
    return sum(pn.node.op_type == "FusedAttention" for pn in model._main.nodes)


def _model(nodes: list, inputs: dict[str, tuple[int, list]], outputs: list[str],
           constants: dict[str, np.ndarray] | None = None, opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, TP.UNDEFINED, None) for n in outputs],
        [numpy_helper.from_array(a, n) for n, a in (constants or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8  # onnxruntime 1.31 reads IR versions up to 13
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    return model


def _qkv(dtype: int = TP.FLOAT) -> dict[str, tuple[int, list]]:
    return {"q": (dtype, [B, H, L, E]), "kt": (dtype, [B, H, E, S]), "v": (dtype, [B, H, S, E])}


def _feeds(np_dtype: type = np.float32, **more: np.ndarray) -> dict[str, np.ndarray]:
    feeds = {"q": rng.standard_normal((B, H, L, E)), "kt": rng.standard_normal((B, H, E, S)),
             "v": rng.standard_normal((B, H, S, E))}
    return {k: v.astype(np_dtype) for k, v in feeds.items()} | more


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], fused: int,
           rtol: float = 1e-5, atol: float = 1e-6) -> None:
    ours = pgx.load(model)
    assert _fused_count(ours) == fused
    got, want = ours.run(None, feeds), ort_run(model, feeds)
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _scaled_both_sides() -> list:
    """torch's TorchScript export of F.scaled_dot_product_attention: q and k^T each
    multiplied by sqrt(scale)."""
    return [helper.make_node("Mul", ["q", "s"], ["qs"]),
            helper.make_node("Mul", ["kt", "s"], ["ks"]),
            helper.make_node("MatMul", ["qs", "ks"], ["scores"]),
            helper.make_node("Softmax", ["scores"], ["w"], axis=-1),
            helper.make_node("MatMul", ["w", "v"], ["y"])]


def test_the_torch_export_spelling_is_fused_and_matches():
    s = np.array(E ** -0.25, np.float32)
    _check(_model(_scaled_both_sides(), _qkv(), ["y"], {"s": s}), _feeds(), fused=1)


def _divided_then_masked(first: str = "Div") -> list:
    """BERT's spelling: (q @ k^T) / c + mask (or, with first="Add", the mask added before
    the division: not attention's order)."""
    if first == "Div":
        chain = [helper.make_node("Div", ["scores", "c"], ["scaled"]),
                 helper.make_node("Add", ["scaled", "mask"], ["masked"])]
    else:
        chain = [helper.make_node("Add", ["mask", "scores"], ["scaled"]),
                 helper.make_node("Div", ["scaled", "c"], ["masked"])]
    return [helper.make_node("MatMul", ["q", "kt"], ["scores"]), *chain,
            helper.make_node("Softmax", ["masked"], ["w"]),
            helper.make_node("MatMul", ["w", "v"], ["y"])]


def test_a_divided_and_masked_chain_is_fused_and_matches():
    mask = np.where(rng.random((B, 1, 1, S)) < 0.3, -1e9, 0.0).astype(np.float32)
    inputs = _qkv() | {"mask": (TP.FLOAT, [B, 1, 1, S])}
    c = np.array(np.sqrt(E), np.float32)
    _check(_model(_divided_then_masked(), inputs, ["y"], {"c": c}), _feeds(mask=mask),
           fused=1)


def test_a_row_masked_out_everywhere_is_nan_as_onnx_softmax_gives():
    mask = np.zeros((B, 1, L, S), np.float32)
    mask[1, 0, 2, :] = -np.inf  # batch 1, query 2 sees no key
    inputs = _qkv() | {"mask": (TP.FLOAT, [B, 1, L, S])}
    c = np.array(2.0, np.float32)
    model = _model(_divided_then_masked(), inputs, ["y"], {"c": c})
    feeds = _feeds(mask=mask)
    out = pgx.load(model).run(None, feeds)[0]
    assert np.isnan(out[1, :, 2]).all() and not np.isnan(np.delete(out, 2, axis=2)).any()
    _check(model, feeds, fused=1)


def test_a_mask_added_before_the_scale_is_not_fused():
    inputs = _qkv() | {"mask": (TP.FLOAT, [B, 1, 1, S])}
    mask = rng.standard_normal((B, 1, 1, S)).astype(np.float32)
    model = _model(_divided_then_masked("Add"), inputs, ["y"], {"c": np.array(3.0, np.float32)})
    _check(model, _feeds(mask=mask), fused=0)


def test_weights_that_are_a_graph_output_are_not_fused():
    s = np.array(0.5, np.float32)
    _check(_model(_scaled_both_sides(), _qkv(), ["y", "w"], {"s": s}), _feeds(), fused=0)


def test_a_factor_that_is_a_tensor_runs_the_original_nodes():
    """Mul by a (B, H, L, S) tensor is no scale: the fused node falls back at run time."""
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["scores"]),
             helper.make_node("Mul", ["scores", "gate"], ["gated"]),
             helper.make_node("Softmax", ["gated"], ["w"], axis=-1),
             helper.make_node("MatMul", ["w", "v"], ["y"])]
    inputs = _qkv() | {"gate": (TP.FLOAT, [B, H, L, S])}
    gate = rng.standard_normal((B, H, L, S)).astype(np.float32)
    _check(_model(nodes, inputs, ["y"]), _feeds(gate=gate), fused=1)


def test_float16_attention_runs_the_original_nodes():
    s = np.array(E ** -0.25, np.float16)
    _check(_model(_scaled_both_sides(), _qkv(TP.FLOAT16), ["y"], {"s": s}),
           _feeds(np.float16), fused=1, rtol=2e-3, atol=2e-3)


def test_softmax_over_another_axis_is_not_attention():
    nodes = _scaled_both_sides()
    nodes[3] = helper.make_node("Softmax", ["scores"], ["w"], axis=2)
    s = np.array(0.7, np.float32)
    _check(_model(nodes, _qkv(), ["y"], {"s": s}), _feeds(), fused=1)  # falls back


# ── an exported layer reaches the kernels of the same layer written in picograd ──────

D, HEADS = 32, 4


class _TorchLayer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v, self.o = (torch.nn.Linear(D, D) for _ in range(4))
        self.ln = torch.nn.LayerNorm(D)

    def forward(self, x):
        b, n, _ = x.shape

        def heads(t):
            return t.reshape(b, n, HEADS, D // HEADS).transpose(1, 2)

        att = torch.nn.functional.scaled_dot_product_attention(heads(self.q(x)),
                                                               heads(self.k(x)),
                                                               heads(self.v(x)))
        return self.ln(x + self.o(att.transpose(1, 2).reshape(b, n, D)))


class _PgLayer(pnn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v, self.o = (pnn.Linear(D, D) for _ in range(4))
        self.ln = pnn.LayerNorm(D)

    def forward(self, x: pg.Tensor) -> pg.Tensor:
        b, n, _ = x.shape

        def heads(t: pg.Tensor) -> pg.Tensor:
            return t.reshape(b, n, HEADS, D // HEADS).transpose(1, 2)

        att = PF.scaled_dot_product_attention(heads(self.q(x)), heads(self.k(x)),
                                              heads(self.v(x)))
        return self.ln(x + self.o(att.transpose(1, 2).reshape(b, n, D)))


def _ops(node: LazyOp, seen: set[int] | None = None) -> set[str]:
    seen = set() if seen is None else seen
    if id(node) in seen:
        return set()
    seen.add(id(node))
    return {node.op}.union(*(_ops(s, seen) for s in node.src))


@pytest.mark.parametrize("device", ["CPU"])
def test_an_exported_attention_layer_compiles_to_no_more_kernels_than_picograds(device):
    torch.manual_seed(0)
    theirs = _TorchLayer().eval()
    ours = _PgLayer()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    data = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(theirs, (torch.zeros(2, 16, D),), data,  # type: ignore[arg-type]
                          input_names=["x"], output_names=["y"], opset_version=17,
                          dynamo=False)
    model = pgx.load(data.getvalue(), device=device)
    assert _fused_count(model) == 1
    x = rng.standard_normal((2, 16, D)).astype(np.float32)
    with pg.no_grad():
        imported = model._translate([pg.Tensor(x, device=device)])["y"]
        written = ours(pg.Tensor(x, device=device))
        assert "attention" in _ops(imported._node)
        assert compiled(imported)[0].num_kernels <= compiled(written)[0].num_kernels
        np.testing.assert_allclose(imported.numpy(), written.numpy(), rtol=1e-5, atol=1e-5)
