"""The character-level language-model example (examples/train_char_lm.py), run tiny: the
loss falls, the checkpoint resumes where the run stopped, the plot and sample are written."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

pytest.importorskip("tqdm")
pytest.importorskip("matplotlib")

EXAMPLE = Path(__file__).parents[2] / "examples" / "train_char_lm.py"


@functools.cache
def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_char_lm", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks the module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("kind", "context"), [("transformer", 16), ("lstm", 8)])
def test_loss_falls_and_the_checkpoint_resumes(tmp_path: Path, kind: str,
                                               context: int) -> None:
    example = _example()
    kw = dict(out_dir=str(tmp_path), batch=8, context=context, lr=1e-2, sample_length=5,
              progress=False)
    first = example.train(kind, steps=12, save_every=6, **kw)
    assert len(first.losses) == 12 and first.resumed_at == 0
    vocab = len(set(example.load_text()[0]))
    assert abs(first.losses[0] - np.log(vocab)) < 1.0  # starts near a uniform guess
    assert np.mean(first.losses[-3:]) < first.losses[0] - 0.5
    assert (tmp_path / f"{kind}.safetensors").exists()
    assert (tmp_path / f"{kind}_loss.png").stat().st_size > 0
    assert len(first.sample) == 5
    resumed = example.train(kind, steps=15, save_every=100, **kw)
    assert resumed.resumed_at == 12 and len(resumed.losses) == 15
    assert resumed.losses[:12] == first.losses
    # the resumed model is the trained one, not a fresh one
    assert np.mean(resumed.losses[12:]) < first.losses[0] - 0.5
    fresh = example.train(kind, steps=1, fresh=True, **kw)
    assert fresh.resumed_at == 0 and len(fresh.losses) == 1
    assert fresh.losses[0] == pytest.approx(first.losses[0], rel=1e-4)


def test_text_falls_back_to_what_ships_with_python(monkeypatch: pytest.MonkeyPatch) -> None:
    example = _example()
    monkeypatch.setattr(example, "TEXT_FILES", ("/nonexistent/GPL-3",))
    text, source = example.load_text()
    assert "Beautiful is better than ugly." in text and "Zen" in source
