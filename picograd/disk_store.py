"""The on-disk store of compiled work: verified byte entries under text keys.

    cache_dir() -> str | None             the store's directory, or None when off or unsafe
    read(kind, key) -> bytes | None       a verified payload; a bad entry is deleted
    write(kind, key, payload)             atomic: temp file in the same directory + os.replace
    scan(kind) -> [(key digest, payload)]  every intact entry of a kind (for listing tools)
    forget(kind) -> int                   delete every entry of a kind
    key_text(*parts) -> str               one unambiguous text of the parts of a key
    stable_text(value) -> str             a repr that is the same in every process
    picograd_version() -> str             a fingerprint of the sources and the Python version
    stats() -> StoreStats                 this process's hits and misses

The store knows nothing of what it holds: the compile driver (`picograd.compiler.disk_cache`)
keeps compiled graphs under `GRAPHS` and BEAM's tuned schedules under `SCHEDULES`, the CPU
runtimes keep machine code under `KERNELS`, each with keys it builds itself. Payloads are
bytes the caller made (JSON, object code), never pickles: reading an entry never runs code.

Location: `$PG_CACHE_DIR`, else `$XDG_CACHE_HOME/picograd`, else `~/.cache/picograd`, made
with mode 0700. A directory owned by another user, or writable by group or others, is not
used (a warning says so once); a readable one of ours is narrowed to 0700. `PG_CACHE=0` turns
the store off: nothing is read or written.

An entry is a header then the payload. The header holds a magic, the format version, the
sha256 of the full key text (a file name collision or a foreign file cannot pass) and the
sha256 and length of the payload (a torn or flipped entry cannot pass). An entry that fails
any check, or that belongs to another user, is deleted (where we may) and rebuilt, never
trusted; so is anything at an entry's path that is not a regular file (a FIFO, a
directory): it is never opened for a blocking read, and it is removed where it can be. Writers
race safely: each writes its own temp file and `os.replace`s it over the
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
import os
import stat
import struct
import sys
import tempfile
import warnings

from picograd import flags

MAGIC = b"PGCACHE\x00"
FORMAT_VERSION = 1
# magic, format version, sha256(key text), sha256(payload), payload length
HEADER = struct.Struct("<8sI32s32sQ")
GRAPHS, KERNELS, SCHEDULES = "graphs", "kernels", "schedules"


# ── where ────────────────────────────────────────────────────────────────────


def enabled() -> bool:
    return flags.cache_enabled()


def default_dir() -> str:
    return flags.cache_dir()


@functools.cache
def _warn_once(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def _private_dir(path: str) -> bool:
    """Make `path` (mode 0700) or check that an existing one is ours and private. A
    symbolic link the user named is followed: the directory it leads to is checked."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        path = os.path.realpath(path)
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
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)  # only an empty one: a full directory stays, and every read misses
        else:
            os.unlink(path)


@dataclasses.dataclass
class StoreStats:
    """Look-ups of this process (graph and kernel entries together); DEBUG=1 prints them."""

    hits: int = 0
    misses: int = 0  # missing, or a bad entry that was deleted


_STATS = StoreStats()


def stats() -> StoreStats:
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


# never follow a link, never wait for a FIFO's writer, never leak the descriptor to a child
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0))


def _read_entry(path: str, key: str) -> bytes | None:
    """The payload of the entry file `path`, or None. Anything but a regular file of ours
    (a FIFO, a directory, a device) is a foreign entry: it is not read, and it is removed
    (an empty directory too) so that the rebuilt entry can take its place."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:  # missing, a symbolic link, a socket: a miss, and `write` replaces it
        return None
    try:
        info = os.fstat(fd)
        ours = stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
        payload = decode(key, _read_all(fd)) if ours else None
    except OSError:
        payload = None
    finally:
        os.close(fd)
    if payload is None:
        _discard(path)
    return payload


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


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


def scan(kind: str) -> list[tuple[bytes, bytes]]:
    """(sha256 of the key text, payload) of every entry of `kind` whose header and payload
    are intact, in file-name order. The key itself is not known here: a caller that lists
    entries stores the key text in its payloads and checks it against the digest."""
    root = cache_dir()
    folder = os.path.join(root, kind) if root is not None else None
    if folder is None or not os.path.isdir(folder) or not _private_dir(folder):
        return []
    found = []
    for name in sorted(os.listdir(folder)):
        if name.startswith("."):
            continue
        try:
            fd = os.open(os.path.join(folder, name), _OPEN_FLAGS)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            entry = _read_all(fd) if stat.S_ISREG(info.st_mode) else b""
        except OSError:
            entry = b""
        finally:
            os.close(fd)
        if len(entry) < HEADER.size:
            continue
        magic, version, key_digest, digest, size = HEADER.unpack_from(entry)
        payload = entry[HEADER.size:]
        if (magic == MAGIC and version == FORMAT_VERSION and len(payload) == size
                and hashlib.sha256(payload).digest() == digest):
            found.append((key_digest, payload))
    return found


def forget(kind: str) -> int:
    """Delete every entry of `kind`; the number deleted."""
    root = cache_dir()
    folder = os.path.join(root, kind) if root is not None else None
    if folder is None or not os.path.isdir(folder):
        return 0
    count = 0
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and not os.path.islink(path):
            _discard(path)
            count += not name.startswith(".")
    return count


# ── what every key holds ──────────────────────────────────────────────────────


@functools.cache
def picograd_version() -> str:
    """picograd's sources as a key part: a fingerprint of every module's path, size and
    mtime (any edit changes it, a new release's too) and the Python version. The installed
    package's metadata is not read: `importlib.metadata` scans `sys.path`, which took 10 to
    40 ms of a warm process's first realize, for a version the fingerprint already covers."""
    version = "src"
    package = os.path.dirname(os.path.abspath(__file__))
    fingerprint = hashlib.sha256()
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                info = os.stat(os.path.join(folder, name))
                fingerprint.update(f"{folder}/{name}:{info.st_size}:{info.st_mtime_ns}\n"
                                   .encode())
    return f"{version}+{fingerprint.hexdigest()[:16]} python {sys.version.split()[0]}"


# Types whose repr is the same in every process: `stable_text` prints them as they are.
_REPR_STABLE = frozenset({str, int, float, bool, type(None), bytes})


def stable_text(value: object) -> str:
    """A text of `value` that is the same in every process: sets are sorted (their order
    follows string hashing, randomised per process) and dataclasses spelled field by field.

    A realize key holds thousands of small tuples of strings and ints, and a warm disk-cache
    hit computes this before anything else: plain values and tuples are tested by exact type
    first (a 6-layer encoder's key took 0.2 s through the `isinstance` chain)."""
    kind = type(value)
    if kind in _REPR_STABLE:
        return repr(value)
    if kind is tuple or kind is list:
        if kind is tuple and len(value) != 1 and _REPR_STABLE.issuperset(map(type, value)):  # type: ignore[arg-type]
            return repr(value)  # the same text, in C: most of a key's tuples hold only these
        texts = [stable_text(v) for v in value]  # type: ignore[union-attr]
        return "(" + ", ".join(texts) + ")"
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
