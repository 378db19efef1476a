"""IR summaries for debug output: kernels by name, a cheap FLOP count, and what a loop-stage
pass changed (DEBUG=3).

    kernels_of(module) -> {name: op}     kernel_flops(kernel) -> int
    schedule_of(kernel) -> "split(...); ..."  (its `pg.schedule`, "" when it has none)
    policy_of(kernel) -> "heuristic" | "beam" | "beam-cache" | ""  (who chose it)
    converts("convert-loop-to-uop") -> ("loop", "uop")
    loop_shape(kernel) -> LoopShape      loop_change(before, after) -> [note, ...]
    texts(module) -> {name: printed op}
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xdsl.dialects.builtin import IntAttr, ModuleOp, StringAttr
from xdsl.ir import Operation

from picograd.dialects.abi import PANELS_ATTR, POLICY_ATTR, SCHEDULE_ATTR
from picograd.dialects.dtypes import is_float


def converts(pass_name: str) -> tuple[str, str] | None:
    """("loop", "uop") for convert-loop-to-uop; None for a pass that stays in its stage."""
    parts = pass_name.split("-")
    if len(parts) == 4 and parts[0] == "convert" and parts[2] == "to":
        return parts[1], parts[3]
    return None


def _name(op: Operation) -> str | None:
    sym = op.properties.get("sym_name")
    return sym.data if isinstance(sym, StringAttr) else None

def kernels_of(module: ModuleOp) -> dict[str, Operation]:
    """The top-level ops with a symbol name other than @main (the kernels), by name."""
    out: dict[str, Operation] = {}
    for op in module.ops:
        name = _name(op)
        if name is not None and name != "main":
            out[name] = op
    return out


def schedule_of(kernel: Operation) -> str:
    """The loop actions `kernel` went through ("" when none)."""
    attr = kernel.attributes.get(SCHEDULE_ATTR)
    return attr.data if isinstance(attr, StringAttr) else ""


def policy_of(kernel: Operation) -> str:
    """Who chose the kernel's schedule: `pg.schedule_policy` (BEAM's `beam`, `beam-cache`,
    `heuristic`), else "heuristic" for a kernel with a schedule, else ""."""
    attr = kernel.attributes.get(POLICY_ATTR)
    if isinstance(attr, StringAttr):
        return attr.data
    return "heuristic" if schedule_of(kernel) else ""


def layout_of(kernel: Operation) -> str:
    """How the kernel reads its operands, where `loop-optimize` chose it ("" otherwise):
    `B in 64-column panels`."""
    attr = kernel.attributes.get(PANELS_ATTR)
    return f"B in {attr.data}-column panels" if isinstance(attr, IntAttr) else ""


def _trip(op: Operation) -> int:
    start, end = op.properties.get("start"), op.properties.get("end")
    if isinstance(start, IntAttr) and isinstance(end, IntAttr):
        return max(end.data - start.data, 0)
    return 1


def kernel_flops(kernel: Operation) -> int:
    """A cheap estimate of a loop-stage kernel's float operations: every float ALU op (and
    each reduction step) counted once per iteration of the ranges around it."""

    def count(op: Operation, trips: int) -> int:
        total = 0
        is_alu = op.name.startswith("pg_uop.") and not op.name.endswith(".const")
        if (is_alu or op.name == "pg_loop.reduce") and op.results and is_float(
                op.results[0].type):
            total += trips * (_trip(op) if op.name == "pg_loop.reduce" else 1)
        inner = trips * _trip(op) if op.regions else trips
        for region in op.regions:
            for block in region.blocks:
                total += sum(count(child, inner) for child in block.ops)
        return total

    return sum(count(op, 1) for op in kernel.regions[0].ops) if kernel.regions else 0


@dataclass(frozen=True)
class LoopShape:
    """What DEBUG=3 compares between loop-stage passes, per kernel."""

    ranges: str  # `trip kind` per range, outermost first
    ops: Counter[str]  # op name -> count
    text: str
    schedule: str = ""  # the loop actions recorded on the kernel (`pg.schedule`)


def loop_shape(kernel: Operation) -> LoopShape:
    ranges: list[str] = []
    ops: Counter[str] = Counter()
    for op in kernel.walk():
        if op is kernel:
            continue
        ops[op.name] += 1
        if op.name in ("pg_loop.range", "pg_loop.reduce"):
            kind = op.properties.get("kind" if op.name == "pg_loop.range" else "range_kind")
            label = str(getattr(kind, "data", "")).split(".")[-1].lower()
            ranges.append(f"{_trip(op)} {label}".strip())
    return LoopShape("[" + ", ".join(ranges) + "]", ops, str(kernel), schedule_of(kernel))


def loop_change(before: dict[str, LoopShape], after: dict[str, LoopShape]) -> list[str]:
    notes: list[str] = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old is None or new is None:
            notes.append(f"@{name} {'added' if old is None else 'removed'}")
            continue
        changes: list[str] = []
        if old.ranges != new.ranges:
            changes.append(f"ranges {old.ranges} -> {new.ranges}")
        delta = [(op, new.ops[op] - old.ops[op]) for op in sorted(set(old.ops) | set(new.ops))]
        changes += [f"{d:+d} {op}" for op, d in delta if d]
        if not changes and old.text != new.text:
            changes.append("operands rewritten, same ops")
        if new.schedule != old.schedule:
            changes.append(f"schedule \"{new.schedule}\"")
        if changes:
            notes.append(f"@{name} " + ", ".join(changes))
    return notes


def texts(module: ModuleOp) -> dict[str, str]:
    """Every top-level symbol op (the kernels and @main) printed on its own."""
    texts: dict[str, str] = {}
    for op in module.ops:
        name = _name(op)
        if name is not None:
            texts[name] = str(op)
    return texts
