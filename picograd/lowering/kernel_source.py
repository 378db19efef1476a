"""What the source printers of flat kernels share: naming values and indenting blocks.

`module_to_c` and `module_to_wgsl` print a kernel by walking its flat block once, one line
per op; the loops (and guards) that open and close in that block become C / WGSL blocks, so
a value is in scope from its declaration to the end of the innermost open block.
`KernelSource` holds that state: the names in scope, the lines printed so far and their
depth.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar

from xdsl.ir import SSAValue

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,23}")


class KernelSource:
    """The names and lines of one kernel being printed; a printer subclasses it."""

    ERROR: ClassVar[type[ValueError]]  # what a malformed kernel raises
    BLOCKS: ClassVar[str]  # what opens a block ("loop", "loop or if"), in that error

    def __init__(self, kernel: str):
        self.kernel = kernel
        self.names: dict[SSAValue, str] = {}  # the values in scope
        self.count = 0
        self.lines: list[str] = []
        self.depth = 1
        self.scopes: list[set[SSAValue]] = [set()]  # what each open block declared

    def name(self, value: SSAValue) -> str:
        if (known := self.names.get(value)) is not None:
            return known
        raise self.ERROR(f"@{self.kernel}: a value is used before its definition or outside "
                         f"the {self.BLOCKS} that defines it ({value.owner})")

    def define(self, value: SSAValue, prefix: str) -> str:
        # `v3_idx`: unique by the counter, readable by the IR's name hint when it has one.
        hint = value.name_hint
        suffix = f"_{hint}" if hint and _IDENTIFIER.fullmatch(hint) else ""
        name = f"{prefix}{self.count}{suffix}"
        self.count += 1
        self.names[value] = name
        return name

    def declare(self, value: SSAValue, prefix: str) -> str:
        """Name a value declared in the innermost open block (it goes out of scope there)."""
        self.scopes[-1].add(value)
        return self.define(value, prefix)

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def open_block(self, line: str, declared: Iterable[SSAValue] = ()) -> None:
        """Emit `line`, which opens a block whose scope holds `declared`."""
        self.emit(line)
        self.depth += 1
        self.scopes.append(set(declared))

    def close_block(self) -> None:
        self.depth -= 1
        self.emit("}")
        for value in self.scopes.pop():  # what the block declared ends with it
            del self.names[value]
