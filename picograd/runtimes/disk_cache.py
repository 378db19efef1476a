"""The on-disk cache of compiled work: graphs (skip xDSL) and kernel binaries (skip the toolchain).

    cache_dir() -> str | None             the cache directory, or None when off or unsafe
    read(kind, key) -> bytes | None       a verified payload; a bad entry is deleted
    write(kind, key, payload)             atomic: temp file in the same directory + os.replace
    key_text(*parts) -> str               one unambiguous text of the parts of a key
    toolchain(target) -> str              the versions a target's output depends on
    picograd_version() -> str             the package version and a fingerprint of its sources
    graph_key(key, spec, target, runtime) -> str | None        the key of a realize graph
    load_program(graph_key, runtime) -> Program | None         a graph hit: no IR is built
    store_program(graph_key, program)                          after compile_module

Two levels, so that a warm process skips both xDSL and the toolchain:

* graph level (`graphs/`): the realize structural key, the pipeline string, the target, its
  `Capabilities`, the toolchain and picograd versions -> JSON holding the rendered target
  source and `@main`'s launch plan (input and allocation slots, launches by kernel name,
  results, GPU launch dims). A hit builds the `Program` from the plan and
  `runtime.compile(source)`, which the second level usually answers.
* kernel level (`kernels/`): the target source, flags, toolchain and picograd versions ->
  the binary (a C shared library, an LLVM object file). The runtimes use it in `compile`.
  WGSL and PTX have no binary worth keeping: their graph entries hold the source.

Payloads are JSON or machine code, never pickles: reading an entry never runs code.

Location: `$PG_CACHE_DIR`, else `$XDG_CACHE_HOME/picograd`, else `~/.cache/picograd`, made
with mode 0700. A directory owned by another user, or writable by group or others, is not
used (a warning says so once); a readable one of ours is narrowed to 0700. `PG_CACHE=0` turns
the cache off: nothing is read or written.

An entry is a header then the payload. The header holds a magic, the format version, the
sha256 of the full key text (a file name collision or a foreign file cannot pass) and the
sha256 and length of the payload (a torn or flipped entry cannot pass). An entry that fails
any check, or that belongs to another user, is deleted (where we may) and rebuilt, never
trusted. Writers race safely: each writes its own temp file and `os.replace`s it over the
entry, so a reader sees a whole old entry, a whole new one, or none.

Since the package version does not change while picograd is edited in place, the "picograd
version" also hashes the size and mtime of every source file of the package: an edit to a
pass or a printer misses every old entry instead of reusing stale output.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import platform
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import warnings
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from picograd.runtimes.base import Runtime
    from picograd.runtimes.program import Program

ENABLE_ENV = "PG_CACHE"
DIR_ENV = "PG_CACHE_DIR"
MAGIC = b"PGCACHE\x00"
FORMAT_VERSION = 1
# magic, format version, sha256(key text), sha256(payload), payload length
HEADER = struct.Struct("<8sI32s32sQ")
GRAPHS, KERNELS = "graphs", "kernels"


# ── where ────────────────────────────────────────────────────────────────────


def enabled() -> bool:
    return os.environ.get(ENABLE_ENV, "1").strip() != "0"


def default_dir() -> str:
    explicit = os.environ.get(DIR_ENV)
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.abspath(base), "picograd")


@functools.cache
def _warn_once(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def _private_dir(path: str) -> bool:
    """Make `path` (mode 0700) or check that an existing one is ours and private."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError as e:
        _warn_once(f"picograd: disk cache off, cannot create {path}: {e}")
        return False
    if not stat.S_ISDIR(info.st_mode):
        _warn_once(f"picograd: disk cache off, {path} is not a directory")
        return False
    if info.st_uid != os.getuid():
        _warn_once(f"picograd: disk cache off, {path} belongs to another user")
        return False
    if info.st_mode & 0o022:
        _warn_once(f"picograd: disk cache off, {path} is writable by group or others")
        return False
    if info.st_mode & 0o777 != 0o700:
        try:
            os.chmod(path, 0o700)
        except OSError:
            return False
    return True


def cache_dir() -> str | None:
    """The cache directory (created, checked), or None when the cache is off or unsafe."""
    if not enabled():
        return None
    path = default_dir()
    return path if _private_dir(path) else None


def _entry_path(kind: str, key: str) -> tuple[str, str] | None:
    root = cache_dir()
    if root is None:
        return None
    folder = os.path.join(root, kind)
    if not _private_dir(folder):
        return None
    return folder, os.path.join(folder, hashlib.sha256(key.encode()).hexdigest())


# ── entries ──────────────────────────────────────────────────────────────────


def key_text(*parts: object) -> str:
    """One text for the parts of a key: each part's repr on its own numbered line, so that
    no two different part lists give the same text."""
    return "\n".join(f"{i}:{part!r}" for i, part in enumerate(parts))


def encode(key: str, payload: bytes) -> bytes:
    """An entry: the header for `key` and `payload`, then `payload`."""
    return HEADER.pack(MAGIC, FORMAT_VERSION, hashlib.sha256(key.encode()).digest(),
                       hashlib.sha256(payload).digest(), len(payload)) + payload


def decode(key: str, entry: bytes) -> bytes | None:
    """The payload of `entry` if every header check passes for `key`, else None."""
    if len(entry) < HEADER.size:
        return None
    magic, version, key_digest, digest, size = HEADER.unpack_from(entry)
    payload = entry[HEADER.size:]
    if (magic != MAGIC or version != FORMAT_VERSION or len(payload) != size
            or key_digest != hashlib.sha256(key.encode()).digest()
            or digest != hashlib.sha256(payload).digest()):
        return None
    return payload


def _discard(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


@dataclasses.dataclass
class CacheStats:
    """Look-ups of this process (graph and kernel entries together); DEBUG=1 prints them."""

    hits: int = 0
    misses: int = 0  # missing, or a bad entry that was deleted


_STATS = CacheStats()


def stats() -> CacheStats:
    """A snapshot of the disk cache's hit and miss counts."""
    return dataclasses.replace(_STATS)


def read(kind: str, key: str) -> bytes | None:
    """The payload stored under `key`, or None (off, missing, or a bad entry, now deleted)."""
    where = _entry_path(kind, key)
    if where is None:
        return None
    payload = _read_entry(where[1], key)
    if payload is None:
        _STATS.misses += 1
    else:
        _STATS.hits += 1
    return payload


def _read_entry(path: str, key: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        ours = stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
        entry = f.read() if ours else b""
    payload = decode(key, entry) if ours else None
    if payload is None:
        _discard(path)
    return payload


def write(kind: str, key: str, payload: bytes) -> None:
    """Store `payload` under `key` atomically; a failure leaves the cache as it was."""
    where = _entry_path(kind, key)
    if where is None:
        return
    folder, path = where
    try:
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(encode(key, payload))
        os.replace(temp, path)
    except OSError:
        _discard(temp)


# ── what a key holds besides the work itself ─────────────────────────────────


@functools.cache
def picograd_version() -> str:
    from importlib import metadata

    try:
        version = metadata.version("picograd")
    except metadata.PackageNotFoundError:
        version = "unknown"
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    fingerprint = hashlib.sha256()
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                info = os.stat(os.path.join(folder, name))
                fingerprint.update(f"{folder}/{name}:{info.st_size}:{info.st_mtime_ns}\n"
                                   .encode())
    return f"{version}+{fingerprint.hexdigest()[:16]} python {sys.version.split()[0]}"


def _version_output(command: list[str]) -> str:
    """The (stripped) output of a `--version` command, or why there is none."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return f"{command[0]}: {e}"
    return " | ".join((done.stdout or done.stderr).strip().splitlines())


def _cpuinfo() -> str:
    """The first CPU's model and flags from /proc/cpuinfo (Linux), else the platform's name."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().split("\n\n")[0].splitlines()
    except OSError:
        return platform.processor()
    keep = ("model name", "flags", "Features", "CPU part")
    return "; ".join(line for line in lines if line.split(":")[0].strip() in keep)


@functools.cache
def _host(target: str) -> str:
    """The host CPU and its features: -march=native / LLVM's host CPU code runs only there."""
    if target == "llvm":
        from picograd.runtimes.cpu_llvm import host_cpu

        cpu, features = host_cpu()
        return f"{platform.machine()} {cpu} {features}"
    return f"{platform.machine()} {_cpuinfo()}"


@functools.cache
def compiler_version(compiler: str) -> str:
    """`<compiler> --version`'s first line, with the compiler's resolved path."""
    text = _version_output([compiler, "--version"]).split(" | ")[0]
    return f"{shutil.which(compiler) or compiler}: {text}"


@functools.cache
def _ptxas_version(ptxas: str) -> str:
    return f"{ptxas}: {_version_output([ptxas, '--version'])}"  # the last line has the release


def toolchain(target: str, compiler: str | None = None) -> str:
    """The versions of the tools that turn `target` source into machine code (for "c", of
    `compiler`, by default `$CC` or cc) and the host CPU they generate code for."""
    if target == "llvm":
        import llvmlite
        import llvmlite.binding as llvm

        return f"llvmlite {llvmlite.__version__} llvm {llvm.llvm_version_info} {_host('llvm')}"
    if target == "c":
        return f"{compiler_version(compiler or os.environ.get('CC', 'cc'))} {_host('c')}"
    if target == "wgsl":
        try:
            import wgpu
        except ImportError:
            return "wgpu missing"
        return f"wgpu {wgpu.__version__}"
    if target == "ptx":
        from picograd.runtimes.ptxas import ptxas_path

        ptxas = ptxas_path()
        return _ptxas_version(ptxas) if ptxas else "no ptxas"
    return "unknown"


# ── graph level ──────────────────────────────────────────────────────────────


def stable_text(value: object) -> str:
    """A text of `value` that is the same in every process: sets are sorted (their order
    follows string hashing, randomised per process) and dataclasses spelled field by field."""
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(stable_text(v) for v in value)) + "}"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(stable_text(v) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(sorted(f"{stable_text(k)}: {stable_text(v)}"
                                      for k, v in value.items())) + "}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ", ".join(f"{f.name}={stable_text(getattr(value, f.name))}"
                           for f in dataclasses.fields(value))
        return f"{type(value).__name__}({fields})"
    return repr(value)


def _capabilities_text(target: str) -> str:
    from picograd.capabilities import capabilities

    table = capabilities(target)
    text = _CAPABILITIES_TEXT.get(id(table))
    if text is None or text[0] is not table:
        text = _CAPABILITIES_TEXT[id(table)] = (table, stable_text(table))
    return text[1]


_CAPABILITIES_TEXT: dict[int, tuple[object, str]] = {}


def graph_key(key: tuple, spec: str, target: str, runtime: Runtime) -> str | None:
    """The disk key of a realize graph, or None when the cache is off or `key` has a part
    whose repr is not stable across processes (an object address)."""
    if not enabled():
        return None
    structure = stable_text(key)
    if " at 0x" in structure:
        return None
    return key_text("graph", structure, spec, target, _capabilities_text(target),
                    getattr(runtime, "arch", None), toolchain(target), picograd_version())


def store_program(key: str | None, program: Program) -> None:
    """Save the source and launch plan of a freshly compiled `program` under `key`."""
    recipe = program.recipe
    if key is None or recipe is None:
        return
    source, kernels, dims = recipe
    names = {id(kernel): name for name, kernel in kernels.items()}
    plan = {
        "source": source,
        "inputs": [[size, dtype.str, str(t)] for size, dtype, t in program._inputs],
        "allocs": [[size, dtype.str] for size, dtype in program._allocs],
        "launches": [[names[id(kernel)], list(slots)] for kernel, slots in program._launches],
        "results": list(program._results),
        "dims": {name: [list(grid), list(block)] for name, (grid, block) in dims.items()},
    }
    write(GRAPHS, key, json.dumps(plan).encode())


def _as_launch(value: Any) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    grid, block = value
    return (int(grid[0]), int(grid[1]), int(grid[2])), (int(block[0]), int(block[1]),
                                                        int(block[2]))


def load_program(key: str | None, runtime: Runtime) -> Program | None:
    """The `Program` saved under `key`, compiled from its source on `runtime`, or None."""
    if key is None:
        return None
    payload = read(GRAPHS, key)
    if payload is None:
        return None
    import numpy as np
    from xdsl.ir import Attribute

    from picograd.runtimes.program import Program, _Slot

    try:
        plan = json.loads(payload)
        dims = {str(name): _as_launch(d) for name, d in plan["dims"].items()}
        source = str(plan["source"])
        # The slot type is only printed in messages: its text stands in for the attribute.
        inputs = [_Slot(int(size), np.dtype(str(dtype)), cast(Attribute, str(text)))
                  for size, dtype, text in plan["inputs"]]
        allocs = [_Slot(int(size), np.dtype(str(dtype)), cast(Attribute, ""))
                  for size, dtype in plan["allocs"]]
        launch_plan = [(str(name), tuple(int(s) for s in slots))
                       for name, slots in plan["launches"]]
        results = [int(s) for s in plan["results"]]
    except (ValueError, TypeError, KeyError) as e:  # valid header, unusable plan: rebuild
        warnings.warn(f"picograd: ignoring a malformed graph cache entry: {e}", RuntimeWarning,
                      stacklevel=2)
        return None
    binary = runtime.compile(source)
    kernels: dict[str, Any] = {}
    launches = []
    for name, slots in launch_plan:
        if name not in kernels:
            kernels[name] = runtime.load(binary, name, len(slots), dims.get(name))
        launches.append((kernels[name], slots))
    program = Program(runtime, binary, inputs, allocs, launches, results)
    program.recipe = (source, kernels, dims)
    return program
