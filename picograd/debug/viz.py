"""VIZ=1: one self-contained HTML page per compiled graph.

    write_page(trace, source, launches) -> path of graph-<n>.html

The page needs no server and loads nothing: CSS is inline, the tensor graph is an inline
SVG laid out here (a layered layout: a node's layer is its longest path from a leaf, and
each layer is ordered by the mean position of its sources, which keeps most edges short),
and every IR text sits in a collapsible `<details>`. Sections: the tensor graph, the
schedule (`@main` after scheduling and the launch table), each kernel's IR after every pass,
and the target source. `index.html` in the same directory links every page there.
"""

from __future__ import annotations

import enum
import html
import os
import re
from collections.abc import Sequence
from typing import Protocol

from picograd.debug.launch_timing import LaunchInfo


class CompileTrace(Protocol):
    """What a page shows of one traced compile (`picograd.debug.trace.CompileTrace`)."""

    graph: int
    device: str
    entries: Sequence[tuple]
    outputs: Sequence[int]
    passes: list[tuple[str, float]]
    snapshots: list[tuple[str, dict[str, str]]]

NODE_W, NODE_H, GAP_X, GAP_Y = 170, 40, 24, 46

_STYLE = """
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
h1, h2 { font-weight: 600; } pre { background: #f6f6f4; padding: .6em; overflow: auto; }
details { margin: .3em 0 .3em 1em; } summary { cursor: pointer; }
table { border-collapse: collapse; } td, th { padding: .15em .7em; text-align: right; }
th { border-bottom: 1px solid #999; } td:first-child, th:first-child { text-align: left; }
svg text { font: 11px monospace; } .leaf rect { fill: #e7f0fb; } .out rect { stroke-width: 2.5; }
"""


def _layers(entries: Sequence[tuple]) -> list[list[int]]:
    depth: list[int] = []
    for _, srcs in entries:
        depth.append(1 + max((depth[s] for s in srcs), default=-1))
    layers: list[list[int]] = [[] for _ in range(max(depth, default=-1) + 1)]
    for i, d in enumerate(depth):
        layers[d].append(i)
    position: dict[int, float] = {}
    for layer in layers:
        def mean_src(i: int) -> float:
            srcs = entries[i][1]
            return sum(position[s] for s in srcs) / len(srcs) if srcs else float(i)

        layer.sort(key=mean_src)
        for x, i in enumerate(layer):
            position[i] = float(x)
    return layers


def _arg_text(arg: object) -> str:
    if isinstance(arg, enum.Enum):
        return str(arg.value)
    if isinstance(arg, tuple):
        return "(" + ", ".join(_arg_text(a) for a in arg) + ")"
    return str(arg)


def _label(sig: tuple) -> tuple[str, str]:
    op, arg, shape, dtype = sig
    head = op if arg is None or op == "buffer" else f"{op} {_arg_text(arg)}"
    if len(head) > 24:
        head = head[:23] + "…"
    return head, f"{'x'.join(map(str, shape)) or 'scalar'} {dtype}"


def tensor_graph_svg(entries: Sequence[tuple], outputs: Sequence[int]) -> str:
    """The lazy graph as an inline SVG: boxes per node (op, arg, shape, dtype), source ->
    user edges, leaves shaded and outputs outlined."""
    layers = _layers(entries)
    width = max((len(layer) for layer in layers), default=1) * (NODE_W + GAP_X) + GAP_X
    height = len(layers) * (NODE_H + GAP_Y) + GAP_Y
    centre: dict[int, tuple[float, float]] = {}
    for row, layer in enumerate(layers):
        for col, i in enumerate(layer):
            centre[i] = (GAP_X + col * (NODE_W + GAP_X) + NODE_W / 2,
                         GAP_Y + row * (NODE_H + GAP_Y) + NODE_H / 2)
    # Inline SVG in HTML needs no xmlns, and leaving it out keeps the page free of URLs.
    parts = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}">']
    for i, (_, srcs) in enumerate(entries):
        x2, y2 = centre[i]
        for s in srcs:
            x1, y1 = centre[s]
            parts.append(f'<line x1="{x1:.0f}" y1="{y1 + NODE_H / 2:.0f}" x2="{x2:.0f}" '
                         f'y2="{y2 - NODE_H / 2:.0f}" stroke="#888"/>')
    result = set(outputs)
    for i, (sig, _) in enumerate(entries):
        x, y = centre[i]
        head, tail = _label(sig)
        cls = "leaf" if sig[0] in ("buffer", "var") else ("out" if i in result else "node")
        parts.append(
            f'<g class="{cls}"><title>%{i}: {html.escape(repr(sig))}</title>'
            f'<rect x="{x - NODE_W / 2:.0f}" y="{y - NODE_H / 2:.0f}" width="{NODE_W}" '
            f'height="{NODE_H}" rx="5" fill="#fff" stroke="#456"/>'
            f'<text x="{x:.0f}" y="{y - 4:.0f}" text-anchor="middle">{html.escape(head)}</text>'
            f'<text x="{x:.0f}" y="{y + 11:.0f}" text-anchor="middle">{html.escape(tail)}</text>'
            "</g>")
    parts.append("</svg>")
    return "\n".join(parts)


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def _launch_table(launches: Sequence[LaunchInfo]) -> str:
    rows = ["<table><tr><th>#</th><th>kernel</th><th>est. FLOPs</th><th>bytes</th></tr>"]
    rows += [f"<tr><td>{n}</td><td>@{html.escape(info.name)}</td><td>{info.flops}</td>"
             f"<td>{info.bytes}</td></tr>" for n, info in enumerate(launches)]
    return "\n".join(rows) + "</table>"


def _kernel_section(name: str, snapshots: Sequence[tuple[str, dict[str, str]]]) -> str:
    parts = [f"<details><summary>@{html.escape(name)}</summary>"]
    previous = None
    for n, (pass_name, texts) in enumerate(snapshots):
        text = texts.get(name)
        if text is None:
            continue
        same = " (unchanged)" if text == previous else ""
        previous = text
        parts.append(f"<details><summary>{n:02d} after {html.escape(pass_name)}{same}"
                     f"</summary>{_pre(text)}</details>")
    parts.append("</details>")
    return "\n".join(parts)


def render_page(trace: CompileTrace, source: str, launches: Sequence[LaunchInfo]) -> str:
    """The HTML of one graph's page."""
    names: list[str] = []
    for _, texts in trace.snapshots:
        names += [k for k in texts if k != "main" and k not in names]
    schedule = next((texts["main"] for name, texts in trace.snapshots
                     if name == "convert-tensor-to-sched" and "main" in texts), "")
    title = f"picograd graph {trace.graph} ({trace.device})"
    body = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{len(trace.entries)} tensor nodes, {len(launches)} kernel launches; "
        f"pipeline: {html.escape(', '.join(name for name, _ in trace.passes))}</p>",
        "<h2>Tensor graph</h2>", tensor_graph_svg(trace.entries, trace.outputs),
        "<h2>Schedule</h2>", _launch_table(launches),
        f"<details><summary>@main after scheduling</summary>{_pre(schedule)}</details>",
        "<h2>Kernels: IR after every pass</h2>",
        *[_kernel_section(name, trace.snapshots) for name in names],
        _kernel_section("main", trace.snapshots).replace("<summary>@main", "<summary>@main "
                                                         "(the schedule)", 1),
        "<h2>Target source</h2>", f"<details><summary>source</summary>{_pre(source)}</details>",
    ]
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


_PAGE = re.compile(r"graph-(\d+)\.html")
_NEXT_ID: dict[str, int] = {}


def _page_name(directory: str) -> str:
    """graph-<n>.html, n one past the largest page already in `directory` (a new run adds
    pages instead of overwriting the last run's)."""
    if directory not in _NEXT_ID:
        taken = [int(m.group(1)) for f in os.listdir(directory) if (m := _PAGE.fullmatch(f))]
        _NEXT_ID[directory] = max(taken, default=-1) + 1
    n = _NEXT_ID[directory]
    _NEXT_ID[directory] = n + 1
    return f"graph-{n:04d}.html"


def write_index(directory: str) -> str:
    pages = sorted(f for f in os.listdir(directory) if _PAGE.fullmatch(f))
    links = "\n".join(f'<li><a href="{p}">{p}</a></li>' for p in pages)
    path = os.path.join(directory, "index.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>picograd graphs"
                f"</title><style>{_STYLE}</style></head>\n<body><h1>picograd graphs</h1>"
                f"<ul>\n{links}\n</ul></body></html>\n")
    return path


def write_page(trace: CompileTrace, source: str, launches: Sequence[LaunchInfo],
               directory: str) -> str:
    """Write the page of `trace` under `directory` (VIZ_DIR), refresh index.html; returns the
    page's path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, _page_name(directory))
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_page(trace, source, launches))
    write_index(directory)
    return path
