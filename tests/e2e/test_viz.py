"""VIZ=1: a self-contained HTML page per compiled graph, plus an index."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import picograd as pg
from picograd import debug
from picograd.compiler.pipelines import DEFAULT_PIPELINES, pass_names
from picograd.runtimes import get_device


class _Page(HTMLParser):
    """Collects tags, attribute values and text; fails on markup html.parser rejects."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.open: list[str] = []
        self.attrs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [v for _, v in attrs if v]
        if tag not in ("meta", "rect", "line", "br"):
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [v for _, v in attrs if v]

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    assert page.open == []
    return page


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PG_CACHE", "0")
    pg.frontend.clear_cache()
    with debug.flags(debug=0, viz=False):
        yield


def test_viz_page(device: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with debug.flags(debug=1, viz=True, viz_dir=str(tmp_path)):
        x = pg.Tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, device=device)
        y = x.exp().sum(axis=1) / x.sum()
        y.realize()
    path = Path(re.findall(r"viz: (\S+)", capsys.readouterr().err)[-1])
    assert path.parent == tmp_path and path.name == "graph-0000.html"
    raw = path.read_text(encoding="utf-8")
    assert not re.search(r"https?://", raw)
    assert "<script src" not in raw and "<link" not in raw  # nothing loaded from outside
    page = _parse(path)
    assert "svg" in page.tags and page.tags.count("rect") >= 5  # the tensor graph
    text = "".join(page.text)
    kernels = sorted(set(re.findall(r"pg_sched\.kernel @(\w+)", text)))
    assert kernels, "the schedule's kernels"
    for name in kernels:
        assert f"@{name}" in text
        assert f"pg_loop.kernel @{name}" in text and f"pg_uop.kernel @{name}" in text
    for pass_name in pass_names(DEFAULT_PIPELINES[get_device(device).renderer]):
        assert f"after {pass_name}" in text, pass_name
    assert "pg_tensor.reduce" in text  # the input stage
    assert "func.func @main" in text
    index = _parse(tmp_path / "index.html")
    assert "graph-0000.html" in index.attrs


def test_viz_numbering_continues(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "graph-0007.html").write_text("<html></html>")
    with debug.flags(viz=True, viz_dir=str(tmp_path)):
        (pg.Tensor(np.ones(4, np.float32)) + 1).realize()
        (pg.Tensor(np.ones(5, np.float32)) * 2).realize()
    assert capsys.readouterr().err == ""  # VIZ alone prints nothing
    pages = sorted(p.name for p in tmp_path.glob("graph-*.html"))
    assert pages == ["graph-0007.html", "graph-0008.html", "graph-0009.html"]
    index = _parse(tmp_path / "index.html")
    assert [a for a in index.attrs if a.endswith(".html")] == pages
