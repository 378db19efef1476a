"""Rules, rule sets, and the fixpoint driver that applies them.

    Rule(F.binary(MUL, x, Const(1)), lambda x: x),                  # x*1 -> x
    Rule(Op(IndexOp, x, c, kind=DIV), lambda: ..., where=lambda x, c: ...)

* A rule's replacement and guard are functions of the captures they name (parameter names
  are checked against the pattern when the rule is built). The guard (`where=`) returns a
  bool; the replacement returns an existing `SSAValue`, a new `Operation` (its result
  replaces the match), or None for "no match". New ops may take other new, not yet inserted
  ops as operands: the engine inserts every detached op the result depends on, in order,
  before the matched op. Replacements never mutate the IR themselves.
* Every rule gets a stable id `path:line` of the line that built it; `Rule.identity` is the
  trailing `# ...` comment of that line, for traces.
* A `RuleSet` compiles into one xDSL `RewritePattern` with a dict from op class to the rules
  whose root matches that class, so ops no rule is about cost one dict lookup. Within one op
  class, rules are tried in the order they are listed and the first match wins.
* `RuleSet.apply` runs one `PatternRewriteWalker` walk per iteration (forward, not
  re-walking new ops) until a walk changes nothing, at most `max_iterations` times; the walk
  also erases trivially dead ops (xDSL's DCE). Hitting the limit raises `RewriteLimitError`
  naming the rules that fired in the last iterations: the ones that cycle.
"""

from __future__ import annotations

import inspect
import linecache
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from enum import Enum
from pathlib import Path
from typing import Any

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from picograd.errors import PicogradError
from picograd.passes.rules.pattern import Env, Op

Replacement = SSAValue | Operation | None
Tracer = Callable[["Rule", Operation, SSAValue], None]

_PACKAGE_PARENT = Path(__file__).resolve().parents[3]

REWRITE_TRACER: ContextVar[Tracer | None] = ContextVar("REWRITE_TRACER", default=None)
"""Called as `tracer(rule, matched_op, replacement_value)` before each rewrite."""


@contextmanager
def trace_rewrites(tracer: Tracer) -> Iterator[None]:
    """Report every rewrite of every rule set applied inside the `with` block."""
    token = REWRITE_TRACER.set(tracer)
    try:
        yield
    finally:
        REWRITE_TRACER.reset(token)


class RewriteLimitError(PicogradError):
    """A rule set kept rewriting for `max_iterations` walks (its rules cycle)."""

    def __init__(self, ruleset: str, iterations: int, fired: Counter[str]):
        self.ruleset = ruleset
        self.fired = fired
        rules = ", ".join(f"{rule_id} ({n}x)" for rule_id, n in fired.most_common())
        super().__init__(f"rule set '{ruleset}' still rewriting after {iterations} iterations; "
                         f"rules that fired in the last iterations: {rules}")


class RuleError(RuntimeError):
    """A rule returned something that cannot replace the matched op (an engine user bug)."""


def _location(depth: int) -> tuple[str, int]:
    frame = sys._getframe(depth)
    path = Path(frame.f_code.co_filename).resolve()
    shown = path.relative_to(_PACKAGE_PARENT) if path.is_relative_to(_PACKAGE_PARENT) else path
    return str(shown), frame.f_lineno


def _parameters(fn: Callable[..., Any], pattern: Op, what: str, where: str) -> tuple[str, ...]:
    names = tuple(inspect.signature(fn).parameters)
    unknown = set(names) - set(pattern.names())
    if unknown:
        raise TypeError(f"{where}: {what} takes {sorted(unknown)}, which the pattern "
                        f"{pattern!r} does not capture")
    return names


class Rule:
    """`pattern` -> `rewrite(**captures)`, applied only where `where(**captures)` holds."""

    __slots__ = ("_guard_args", "_rewrite_args", "file", "id", "line", "pattern", "rewrite",
                 "where")

    def __init__(self, pattern: Op, rewrite: Callable[..., Replacement], *,
                 where: Callable[..., bool] | None = None):
        if not isinstance(pattern, Op):
            raise TypeError(f"a rule's root pattern must be an Op pattern, got {pattern!r}")
        self.pattern, self.rewrite, self.where = pattern, rewrite, where
        self.file, self.line = _location(2)
        self.id = f"{self.file}:{self.line}"
        self._rewrite_args = _parameters(rewrite, pattern, "the replacement", self.id)
        self._guard_args = () if where is None else _parameters(where, pattern, "the guard",
                                                                self.id)

    def __repr__(self) -> str:
        return f"Rule({self.id}  # {self.identity})"

    @property
    def identity(self) -> str:
        """The `# ...` comment on the rule's line (or up to two lines below), or ''."""
        for line in range(self.line, self.line + 3):
            text = linecache.getline(self.file if Path(self.file).is_absolute()
                                     else str(_PACKAGE_PARENT / self.file), line)
            if "#" in text:
                return text.rsplit("#", 1)[1].strip()
        return ""

    def apply(self, op: Operation) -> Replacement:
        """The replacement for `op`, or None if the rule does not match it."""
        env: Env = {}
        if not self.pattern.match_op(op, env):
            return None
        if self.where is not None and not self.where(**{k: env[k] for k in self._guard_args}):
            return None
        return self.rewrite(**{k: env[k] for k in self._rewrite_args})


class RuleSet:
    """A named table of rules; see the module docstring for how it is applied."""

    def __init__(self, name: str, rules: Sequence[Rule]):
        self.name = name
        self.rules = tuple(rules)
        table: dict[type[Operation], list[Rule]] = {}
        for rule in self.rules:
            for cls in rule.pattern.op_types:
                table.setdefault(cls, []).append(rule)
        self.table = {cls: tuple(rs) for cls, rs in table.items()}
        # Second level for ops with a `kind`: the rules that can match each kind, in order.
        self.by_kind: dict[type[Operation], dict[Enum | None, tuple[Rule, ...]]] = {}
        for cls, rules in self.table.items():
            kinds = {k for r in rules if r.pattern.kinds is not None for k in r.pattern.kinds}
            self.by_kind[cls] = {k: tuple(r for r in rules if r.pattern.kinds is None
                                          or k in r.pattern.kinds) for k in (*kinds, None)}

    def candidates(self, op: Operation) -> tuple[Rule, ...]:
        """The rules that may match `op`, in the order they are listed."""
        by_kind = self.by_kind.get(type(op))
        if by_kind is None:
            return ()
        kind = getattr(op.properties.get("kind"), "data", None)
        return by_kind.get(kind, by_kind[None])

    def __repr__(self) -> str:
        return f"RuleSet({self.name!r}, {len(self.rules)} rules)"

    def apply(self, root: Operation, *, max_iterations: int = 50) -> int:
        """Rewrite everything nested in `root` to a fixpoint; returns the number of rewrites."""
        pattern = _CompiledRules(self, REWRITE_TRACER.get())
        walker = PatternRewriteWalker(GreedyRewritePatternApplier([pattern], dce_enabled=True),
                                      apply_recursively=False)
        recent: list[Counter[str]] = []
        for _ in range(max_iterations):
            pattern.fired = Counter()
            changed = False
            for region in root.regions:
                changed |= walker.rewrite_region(region)
            if not changed:
                return pattern.total
            recent = [*recent[-2:], pattern.fired]
        raise RewriteLimitError(self.name, max_iterations, sum(recent, Counter()))


class _CompiledRules(RewritePattern):
    """One rewrite pattern for a whole rule set, dispatching on the op's class."""

    def __init__(self, ruleset: RuleSet, tracer: Tracer | None):
        self.candidates = ruleset.candidates
        self.tracer = tracer
        self.fired: Counter[str] = Counter()
        self.total = 0

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        for rule in self.candidates(op):
            result = rule.apply(op)
            value = result.results[0] if isinstance(result, Operation) else result
            if value is None or value is op.results[0]:
                continue
            if value.type != op.results[0].type:
                raise RuleError(f"rule {rule.id} ({rule.identity}) replaced a {op.results[0].type}"
                                f" by a {value.type}")
            if self.tracer is not None:
                self.tracer(rule, op, value)
            operands = tuple(op.operands)
            rewriter.replace(op, _detached_ops(value), [value])
            _erase_dead_producers(operands, rewriter)
            self.fired[rule.id] += 1
            self.total += 1
            return


def _detached_ops(value: SSAValue) -> list[Operation]:
    """The new ops `value` depends on that are in no block yet, producers first."""
    order: list[Operation] = []
    seen: set[int] = set()
    stack: list[tuple[Operation, bool]] = []
    if isinstance(value.owner, Operation) and value.owner.parent is None:
        stack.append((value.owner, False))
    while stack:
        op, expanded = stack.pop()
        if expanded:
            order.append(op)
            continue
        if id(op) in seen:
            continue
        seen.add(id(op))
        stack.append((op, True))
        for operand in reversed(op.operands):  # popped left to right: reads like the source
            owner = operand.owner
            if isinstance(owner, Operation) and owner.parent is None and id(owner) not in seen:
                stack.append((owner, False))
    return order


def _erase_dead_producers(operands: Sequence[SSAValue], rewriter: PatternRewriter) -> None:
    """Erase the producers a rewrite left unused now, so the next walk need not."""
    work = [v.owner for v in operands if isinstance(v.owner, Operation)]
    while work:
        op = work.pop()
        if op.parent is None or not is_trivially_dead(op):
            continue
        work.extend(v.owner for v in op.operands if isinstance(v.owner, Operation))
        rewriter.erase(op)
