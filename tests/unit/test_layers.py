"""The layers of docs/design.md run one way: checked by import-linter, and here for what it
cannot see, imports deferred into function bodies.

A function-level import hides a dependency from a reader (and, inside picograd, usually
dodges an import cycle). One is allowed only for an optional third-party package (torch,
wgpu, cuda-python, scikit-learn, onnxruntime, tqdm) or with a one-line reason in a `# lazy: ...`
comment on the line above it or above its block of imports.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "picograd"
# optional packages: imported where used
OPTIONAL = {"torch", "wgpu", "cuda", "sklearn", "onnxruntime", "tqdm"}
REASON = "# lazy:"


def _deferred_imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) of every import inside a function body of `path`."""
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom) and in_function:
                names = ([a.name for a in child.names] if isinstance(child, ast.Import)
                         else ["." * child.level + (child.module or "")])
                found.extend((child.lineno, name) for name in names)
            visit(child, in_function or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(tree, False)
    return found


def deferred_imports() -> list[tuple[str, int, str, str]]:
    """Every function-level import in picograd: (file, line, module, reason or "")."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text().splitlines()
        for lineno, module in _deferred_imports(path):
            out.append((str(path.relative_to(ROOT)), lineno, module, _reason(lines, lineno)))
    return out


def _reason(lines: list[str], lineno: int) -> str:
    """The `# lazy:` reason above the import at `lineno`: on the line before it, or before
    the block of imports (and blank lines) it belongs to."""
    for line in reversed(lines[:lineno - 1]):
        text = line.strip()
        if text.startswith(REASON):
            return text[len(REASON):].strip()
        if text and not text.startswith(("from ", "import ", ")")) and not text.endswith(","):
            return ""
    return ""


def test_every_function_level_import_is_optional_or_has_a_reason() -> None:
    listed = deferred_imports()
    unexplained = [f"{file}:{line}: import {module}" for file, line, module, reason in listed
                   if module.split(".")[0] not in OPTIONAL and not reason]
    assert not unexplained, (
        "function-level imports need an optional package or a '# lazy: <reason>' line above "
        "them (or move the import to the top of the module):\n" + "\n".join(unexplained))


def test_the_reasons_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    listed = deferred_imports()
    for file, line, module, reason in listed:
        print(f"{file}:{line}: {module}: {reason or 'optional package'}")
    assert all(module.split(".")[0] in OPTIONAL or reason for _, _, module, reason in listed)
    assert "picograd/" in capsys.readouterr().out or not listed


def test_a_new_unexplained_import_is_caught(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    import json\n    # lazy: a reason\n    import csv\n"
                      "    import torch\n    x = 1\n    import re\n")
    assert _deferred_imports(source) == [(2, "json"), (4, "csv"), (5, "torch"), (7, "re")]
    lines = source.read_text().splitlines()
    assert [_reason(lines, n) for n in (2, 4, 5, 7)] == ["", "a reason", "a reason", ""]


@pytest.mark.skipif(shutil.which("lint-imports") is None, reason="import-linter is not installed")
def test_import_contracts_hold() -> None:
    command = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    done = subprocess.run([sys.executable, "-c", command, "--no-cache"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_circles_are_found() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_among_picograd_modules() -> None:
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter")
    graph = grimp.build_graph("picograd")  # type-only imports count
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert _circles(edges) == []
