"""BEAM's tuned schedules on disk: a search's winner, reused by every later compile.

    schedule_key(kernel_text, pipeline, device, capabilities, toolchain) -> str
    load(key) -> Tuned | None            a stored winner (None: off, missing or corrupt)
    save(key, tuned)
    entries() -> list[Tuned]             every stored winner (`python -m picograd.tools.schedules`)
    export(path) / import_file(path)     share them as one JSON file
    clear() -> int                       forget them

The key is the kernel's loop-stage IR before any schedule (its name left out, so the same
kernel in any graph shares it: its structure and shapes), the pipeline that lowers it,
the device, the target's capability table and the toolchain's fingerprint: what decides
which schedule is fastest. The picograd version is not part of it: a schedule is a list
of legal actions, so an entry left by another version can at worst be slow, and it is
checked like any candidate when it is applied (an action that no longer applies is a miss).
The entries live in the disk store (`picograd.disk_store`, kind `schedules`: atomic, checked
headers, never unpickled); the payload is JSON holding the key text, so a listing can check
each entry against its header. `PG_BEAM_CACHE=0` (or `PG_CACHE=0`) neither reads nor
writes them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from picograd import disk_store, flags


@dataclass(frozen=True)
class Tuned:
    """A search's result for one kernel."""

    key: str
    kernel: str  # the kernel's name where it was found, for listings
    schedule: str  # the winning actions, as `loop-schedule{actions=...}` takes them
    heuristic: str  # the heuristic's actions
    seconds: float  # the winner's time per launch
    heuristic_seconds: float
    candidates: int  # how many schedules were timed

    @property
    def speedup(self) -> float:
        return self.heuristic_seconds / self.seconds if self.seconds > 0 else 1.0


def schedule_key(kernel_text: str, pipeline: str, device: str, capabilities: str,
                 toolchain: str) -> str:
    return disk_store.key_text("schedule", kernel_text, pipeline, device, capabilities,
                               toolchain)


def _enabled() -> bool:
    return flags.beam_cache_enabled() and disk_store.enabled()


def _decode(payload: bytes, key_digest: bytes | None = None) -> Tuned | None:
    try:
        data = json.loads(payload)
        tuned = Tuned(**data)
    except (ValueError, TypeError):
        return None
    if not isinstance(tuned.schedule, str) or not isinstance(tuned.key, str):
        return None
    if key_digest is not None and hashlib.sha256(tuned.key.encode()).digest() != key_digest:
        return None
    return tuned


def load(key: str) -> Tuned | None:
    """The winner stored under `key`; None when off, missing, or not a whole entry of ours
    (a corrupt entry is deleted by the store and searched again)."""
    if not _enabled():
        return None
    payload = disk_store.read(disk_store.SCHEDULES, key)
    tuned = _decode(payload) if payload is not None else None
    return tuned if tuned is not None and tuned.key == key else None


def save(key: str, tuned: Tuned) -> None:
    if _enabled():
        disk_store.write(disk_store.SCHEDULES, key, json.dumps(asdict(tuned)).encode())


def entries() -> list[Tuned]:
    """Every intact stored winner."""
    if not disk_store.enabled():
        return []
    found = (_decode(payload, digest) for digest, payload in
             disk_store.scan(disk_store.SCHEDULES))
    return [t for t in found if t is not None]


def export(path: str) -> int:
    """Write every stored winner to `path` (a JSON list); how many."""
    tuned = entries()
    with open(path, "w") as f:
        json.dump([asdict(t) for t in tuned], f, indent=1)
    return len(tuned)


class ScheduleFileError(ValueError):
    """A file given to `import_file` that is not a list of tuned schedules."""


def import_file(path: str) -> int:
    """Store every winner of a file `export` wrote; how many. Raises `ScheduleFileError`
    for a file that is not such a list (nothing is stored then)."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ScheduleFileError(f"{path}: not a tuned-schedule file: {e}") from None
    if not isinstance(data, list):
        raise ScheduleFileError(f"{path}: not a tuned-schedule file: expected a JSON list")
    tuned = [_decode(json.dumps(item).encode()) for item in data]
    if any(t is None for t in tuned):
        raise ScheduleFileError(f"{path}: entry {tuned.index(None)} is not a tuned schedule")
    for t in tuned:
        assert t is not None
        disk_store.write(disk_store.SCHEDULES, t.key, json.dumps(asdict(t)).encode())
    return len(tuned)


def clear() -> int:
    """Forget every stored winner; how many there were."""
    return disk_store.forget(disk_store.SCHEDULES) if disk_store.enabled() else 0
