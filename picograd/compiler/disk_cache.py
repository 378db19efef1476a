"""The graph level of the disk cache: a warm process skips xDSL for a graph it compiled before.

    graph_key(key, spec, target, runtime) -> str | None        the key of a realize graph
    load_program(graph_key, runtime) -> Program | None         a hit: no IR is built
    store_program(graph_key, program)                          after a compile

A graph entry (`disk_store.GRAPHS`) is keyed by the realize structural key, the pipeline
string, the target, its `Capabilities`, the runtime's toolchain fingerprint (and GPU arch)
and the picograd version; it holds the bytes `Program.to_bytes` made (the rendered source and
`@main`'s launch plan). A hit rebuilds the Program with `Program.from_bytes`, whose
`runtime.compile(source)` the runtimes' own kernel entries (`disk_store.KERNELS`) usually
answer, so a warm process runs neither xDSL nor the toolchain. The bytes are stored as
handed over: what a plan holds is the Program's business, where it lives the store's.
"""

from __future__ import annotations

import warnings

from picograd import disk_store
from picograd.dialects import capabilities as capability_tables
from picograd.runtimes import Program, Runtime

_CAPABILITIES_TEXT: dict[int, tuple[object, str]] = {}


def capabilities_text(target: str) -> str:
    table = capability_tables.capabilities(target)
    text = _CAPABILITIES_TEXT.get(id(table))
    if text is None or text[0] is not table:
        text = _CAPABILITIES_TEXT[id(table)] = (table, disk_store.stable_text(table))
    return text[1]


def graph_key(key: tuple, spec: str, target: str, runtime: Runtime) -> str | None:
    """The disk key of a realize graph, or None when the cache is off or `key` has a part
    whose repr is not stable across processes (an object address)."""
    if not disk_store.enabled():
        return None
    structure = disk_store.stable_text(key)
    if " at 0x" in structure:
        return None
    return disk_store.key_text("graph", structure, spec, target, capabilities_text(target),
                               getattr(runtime, "arch", None), runtime.toolchain_fingerprint(),
                               disk_store.picograd_version())


def store_program(key: str | None, program: Program) -> None:
    """Save a freshly compiled `program` under `key` (nothing when `key` is None)."""
    if key is None:
        return
    data = program.to_bytes()
    if data is not None:
        disk_store.write(disk_store.GRAPHS, key, data)


def load_program(key: str | None, runtime: Runtime) -> Program | None:
    """The `Program` saved under `key`, compiled from its source on `runtime`, or None."""
    if key is None:
        return None
    payload = disk_store.read(disk_store.GRAPHS, key)
    if payload is None:
        return None
    try:
        return Program.from_bytes(runtime, payload)
    except ValueError as e:  # valid header, unusable plan: rebuild
        warnings.warn(f"picograd: ignoring a malformed graph cache entry: {e}", RuntimeWarning,
                      stacklevel=2)
        return None
