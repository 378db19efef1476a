"""The digits example (examples/train_digits.py) trains to at least 95 % test accuracy,
prints a line per epoch, and resumes from its checkpoint exactly."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("sklearn", reason="the digits come with scikit-learn")

EXAMPLE = Path(__file__).parents[2] / "examples" / "train_digits.py"


@functools.cache
def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks the module up there
    spec.loader.exec_module(module)
    return module


def test_digits_example_reaches_95_percent(capsys: pytest.CaptureFixture[str]) -> None:
    history = _example().train(epochs=10)
    assert history.accuracy[-1] >= 0.95, history.accuracy
    assert history.loss[-1] < history.loss[0] / 5
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 10 and lines[-1].startswith("epoch 10  loss")


def test_digits_example_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    example = _example()
    path = str(tmp_path / "digits.safetensors")
    whole = example.train(epochs=4, log=False)
    example.train(epochs=2, checkpoint=path, log=False)
    resumed = example.train(epochs=4, checkpoint=path, log=False)
    assert resumed.loss == whole.loss[2:] and resumed.accuracy == whole.accuracy[2:]
