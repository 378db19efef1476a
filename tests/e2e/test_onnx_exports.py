"""Models as users bring them: exported by `torch.onnx.export` (the TorchScript exporter,
`dynamo=False`, offline) from a `transformers` BERT with a small random config, an LSTM
tagger and a scripted module with data-dependent `If` / `Loop`; each run by picograd.onnx
and compared with onnxruntime on the same file, outputs and dtypes, at two batch sizes."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import onnx
import pytest
import torch

import picograd.onnx as pgx
from tests.e2e.onnx_helpers import ort_run


def _export(module: Any, example: tuple, path: str, inputs: list[str], outputs: list[str],
            dynamic: dict[str, dict[int, str]]) -> onnx.ModelProto:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's tracer warnings
        torch.onnx.export(module, example, path, input_names=inputs, output_names=outputs,
                          dynamic_axes=dynamic, opset_version=17, dynamo=False)
    return onnx.load(path)


def _check(path: str, feeds: dict[str, np.ndarray], rtol: float = 1e-4,
           atol: float = 1e-5) -> None:
    model = pgx.load(path)
    ours = model.run(None, feeds)
    theirs = ort_run(onnx.load(path), feeds)
    for name, a, b in zip(model.output_names, ours, theirs, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=name)


class _Bert(torch.nn.Module):
    """transformers' BertModel called by keyword (its positional signature changed)."""

    def __init__(self) -> None:
        super().__init__()
        transformers = pytest.importorskip("transformers")
        config = transformers.BertConfig(
            vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=64, attn_implementation="eager")
        torch.manual_seed(0)
        self.bert = transformers.BertModel(config)

    def forward(self, ids, mask):
        out = self.bert(input_ids=ids, attention_mask=mask)
        return out.last_hidden_state, out.pooler_output


def test_a_transformers_bert_export_matches_onnxruntime(tmp_path):
    path = str(tmp_path / "bert.onnx")
    ids = torch.randint(0, 120, (2, 10))
    mask = torch.ones(2, 10, dtype=torch.int64)
    dyn = {"ids": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"}}
    _export(_Bert().eval(), (ids, mask), path, ["ids", "mask"], ["hidden", "pooled"], dyn)
    rng = np.random.default_rng(0)
    for batch, seq in ((2, 10), (3, 7)):
        mask = np.ones((batch, seq), np.int64)
        mask[-1, seq // 2:] = 0  # a padded sequence: the additive mask matters
        _check(path, {"ids": rng.integers(0, 120, (batch, seq)), "mask": mask})


class _Tagger(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.embed = torch.nn.Embedding(50, 12)
        self.lstm = torch.nn.LSTM(12, 16, num_layers=2, batch_first=True,
                                  bidirectional=True)
        self.head = torch.nn.Linear(32, 5)

    def forward(self, ids):
        out, _ = self.lstm(self.embed(ids))
        return torch.log_softmax(self.head(out), dim=-1)


def test_an_lstm_tagger_export_matches_onnxruntime(tmp_path):
    path = str(tmp_path / "tagger.onnx")
    _export(_Tagger().eval(), (torch.randint(0, 50, (2, 9)),), path, ["ids"], ["logp"],
            {"ids": {0: "batch", 1: "seq"}, "logp": {0: "batch", 1: "seq"}})
    proto = onnx.load(path)
    assert "LSTM" in {n.op_type for n in proto.graph.node}
    rng = np.random.default_rng(1)
    for batch, seq in ((2, 9), (4, 5)):
        _check(path, {"ids": rng.integers(0, 50, (batch, seq))})


class _Loops(torch.nn.Module):
    """Data-dependent control flow survives only in a scripted module: a loop whose trip
    count is an input's length and an `if` on a computed value."""

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        acc = torch.zeros_like(x[0])
        for i in range(int(n)):
            acc = acc + x[i] * float(i + 1)
        if bool(acc.sum() > 0):  # noqa: SIM108 (a statement: the exporter's If)
            acc = acc * 2.0
        else:
            acc = acc - 1.0
        return acc


def test_a_scripted_module_with_if_and_loop_matches_onnxruntime(tmp_path):
    path = str(tmp_path / "loops.onnx")
    scripted = torch.jit.script(_Loops())
    x = torch.randn(6, 4)
    proto = _export(scripted, (x, torch.tensor(3)), path, ["x", "n"], ["y"],
                    {"x": {0: "rows"}})
    kinds = {n.op_type for n in proto.graph.node}
    assert {"Loop", "If"} <= kinds, kinds
    rng = np.random.default_rng(2)
    for rows, n in ((6, 3), (5, 5), (4, 0)):
        x = rng.standard_normal((rows, 4)).astype(np.float32)
        _check(path, {"x": x, "n": np.array(n, np.int64)})
        _check(path, {"x": -np.abs(x), "n": np.array(n, np.int64)})  # the other branch
