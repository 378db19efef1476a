"""Lazy initial parameters and memory-mapped safetensors: building a model computes nothing;
the first realize computes every pending initial value in one graph (the same numbers as
an eager draw), outside any jit capture; a value `load_state_dict` replaces first is never
computed; `load_safetensors` maps the file (read-only views) and loading copies once; a
broken file names the problem."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import picograd as pg
from picograd import nn
from picograd.frontend.realize import compile_stats
from picograd.nn.state import CheckpointError, load_safetensors, save_safetensors


def _model() -> nn.Module:
    return nn.Sequential(nn.Embedding(50, 8), nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def _values(model: nn.Module) -> dict[str, np.ndarray]:
    return {k: v.numpy() for k, v in model.state_dict().items()}


def test_building_a_model_computes_nothing() -> None:
    before = compile_stats()
    model = _model()
    after = compile_stats()
    assert (after.compiles, after.cache_hits) == (before.compiles, before.cache_hits)
    assert not any(p._node.realized for p in model.parameters())


def test_the_first_realize_computes_every_initial_value_in_one_graph() -> None:
    pg.manual_seed(3)
    model = _model()
    pg.manual_seed(3)
    other = _model()
    before = compile_stats()
    ids = pg.Tensor(np.array([[1, 2, 3]], np.int32))
    model(ids).realize()
    runs = compile_stats().compiles + compile_stats().cache_hits
    assert runs - before.compiles - before.cache_hits == 2  # the initial values, the forward
    assert all(p._node.realized for p in model.parameters())
    values = _values(other)  # drawn in the same order from the same seed: the same numbers
    for name, v in _values(model).items():
        np.testing.assert_array_equal(v, values[name], err_msg=name)


def test_a_loaded_parameter_is_never_drawn() -> None:
    source = _model()
    state = _values(source)
    model = _model()
    before = compile_stats()
    model.load_state_dict(state)
    out = model(pg.Tensor(np.array([[4, 5]], np.int32))).numpy()
    runs = compile_stats().compiles + compile_stats().cache_hits
    assert runs - before.compiles - before.cache_hits == 1  # only the forward
    np.testing.assert_array_equal(out, source(pg.Tensor(np.array([[4, 5]], np.int32))).numpy())


def test_initial_values_are_not_replayed_by_a_jit() -> None:
    model = nn.Linear(8, 4)
    forward = pg.jit(lambda x: model(x).realize())
    x = pg.Tensor(np.ones((2, 8), np.float32))
    outs = [forward(x).numpy() for _ in range(4)]  # the first call computes the weights
    weights = model.weight.numpy()
    for out in outs[1:]:
        np.testing.assert_array_equal(out, outs[0])
    np.testing.assert_allclose(outs[0], np.ones((2, 8)) @ weights.T + model.bias.numpy(),
                               rtol=1e-5, atol=1e-6)


def test_safetensors_are_mapped_read_only_and_load_with_one_copy(tmp_path: Path) -> None:
    source = _model()
    path = tmp_path / "m.safetensors"
    save_safetensors(source.state_dict(), path)
    arrays = load_safetensors(path)
    weight = arrays["1.weight"]
    assert not weight.flags.writeable and weight.base is not None  # a view of the mapping
    model = _model()
    model.load_state_dict(arrays)
    for name, v in _values(source).items():
        np.testing.assert_array_equal(model.state_dict()[name].numpy(), v, err_msg=name)
        assert model.state_dict()[name]._node.buffer is not arrays[name]  # its own copy


def _file(header: bytes, data: bytes) -> bytes:
    return len(header).to_bytes(8, "little") + header + data


@pytest.mark.parametrize("content, words", [
    (b"", "not a readable safetensors file"),
    (b"\x10\x00\x00\x00\x00\x00\x00\x00{}", "runs past the end"),
    (_file(b"[]", b""), "not a JSON object"),
    (_file(b'{"t":{"dtype":"F8_E8M0","shape":[1],"data_offsets":[0,1]}}', b"\x00"),
     "'t' has dtype F8_E8M0"),
    (_file(b'{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', b"\x00\x00"),
     "data_offsets"),
])
def test_a_broken_file_names_the_problem(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=words) as info:
        load_safetensors(path)
    assert "bad.safetensors" in str(info.value)
