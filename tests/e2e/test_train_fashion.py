"""The Fashion-MNIST example end to end on a slice of the data: it trains, evaluates, writes
the plot and the checkpoint, and a second run resumes from the checkpoint."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))

pytest.importorskip("tqdm", reason="the example's progress bar needs tqdm (the examples extra)")
pytest.importorskip("matplotlib", reason="the example's plot needs matplotlib")


def test_the_example_trains_saves_and_resumes(tmp_path) -> None:
    import train_fashion_mnist as example

    from picograd.data import DatasetNotFoundError

    out = str(tmp_path / "run")
    try:
        first = example.train(epochs=1, batch_size=64, out=out, limit=256)
    except DatasetNotFoundError as e:
        pytest.skip(f"Fashion-MNIST is not installed: {e}")
    assert len(first["loss"]) == 4 and len(first["accuracy"]) == 1
    assert first["loss"][-1] < first["loss"][0]
    assert os.path.getsize(os.path.join(out, "curves.png")) > 1000
    assert os.path.exists(os.path.join(out, "checkpoint.safetensors"))
    resumed = example.train(epochs=2, batch_size=64, out=out, limit=256)
    assert resumed["loss"][:4] == first["loss"]  # the history came back from the checkpoint
    assert len(resumed["loss"]) == 8 and len(resumed["accuracy"]) == 2


def test_the_plain_torch_cnn_compiled_by_picograd_trains_as_eager() -> None:
    pytest.importorskip("torch", reason="the torch form of the example needs torch")
    import torch_compile_fashion_mnist as example

    from picograd.data import DatasetNotFoundError

    try:
        eager = example.train(epochs=1, backend="eager", batch_size=64, limit=512)
    except DatasetNotFoundError as e:
        pytest.skip(f"Fashion-MNIST is not installed: {e}")
    mine = example.train(epochs=1, backend="picograd", batch_size=64, limit=512)
    assert len(mine["loss"]) == 8 and mine["loss"][-1] < mine["loss"][0]
    assert mine["loss"] == pytest.approx(eager["loss"], abs=2e-3)
    assert mine["accuracy"] == pytest.approx(eager["accuracy"], abs=0.01)
