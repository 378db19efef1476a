"""The debug switches in force: DEBUG's level, VIZ and VIZ_DIR.

They start from the environment (`picograd.flags`, read once, at import) and are changed
with `picograd.debug.set_level` / `set_viz` / `flags(...)`; everything in `picograd.debug`
reads them from `SETTINGS`. A module that must act when the level changes registers a
listener here instead of being imported by whoever changes it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from picograd import flags


@dataclass
class Settings:
    level: int  # DEBUG
    viz: bool  # VIZ
    viz_dir: str  # VIZ_DIR
    # called with the new level by `set_level` (trace.py switches launch timing)
    level_listeners: list[Callable[[int], None]] = field(default_factory=list)

    def set_level(self, level: int) -> None:
        self.level = level
        for listener in self.level_listeners:
            listener(level)


SETTINGS = Settings(flags.debug_level(), flags.viz_enabled(), flags.viz_dir())


def log(message: str) -> None:
    """One line of debug output on stderr, marked `[pg]`."""
    print(f"[pg] {message}", file=sys.stderr, flush=True)
