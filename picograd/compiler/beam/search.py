"""BEAM search over one graph's kernels: each kernel's schedule, timed, cached, checked.

    choose_schedules(module, decisions, context) -> list[Choice]

`module` is a graph at the loop stage just before its schedule step (`decisions`: the
pipeline's `loop-optimize` or `loop-upcast` passes). Per kernel:

1. the heuristic: `decisions` run on a copy of the kernel alone; its recorded actions
   (`pg.schedule`) are where the search starts;
2. a stored winner for the kernel's key (`store.py`) is taken when its actions still
   apply: no search;
3. else a beam search: the heuristic's kernel is compiled and timed, then each round
   takes the `width` fastest schedules found so far, makes their neighbours
   (`space.neighbours`; those seen before, those that do not apply and those the cheap
   filter `space.plausible` rejects are dropped, at most `MAX_CANDIDATES` per round),
   compiles them together and times them one by one on the device (`measure.Bench`).
   It stops after a round that beat the best by less than `MARGIN`, after `MAX_ROUNDS`,
   or when the kernel's or the graph's time budget (`PG_BEAM_BUDGET`) is spent;
4. the fastest few and the heuristic's are timed again in turns (the machine's speed
   drifts between the rounds' timings); a winner must beat the heuristic by
   `FINAL_MARGIN` there, and give the heuristic's results on the same inputs within the
   accumulation tolerance (`measure.same_results`), else the heuristic's stays (with a
   warning: a schedule action that changes results is a bug);
5. the chosen actions are applied to the kernel in `module` and recorded as
   `pg.schedule` (what `loop-schedule{kernel=... actions=...}` replays), and the kernel
   gets `pg.schedule_policy`: `heuristic`, `beam` or `beam-cache` (DEBUG=2 prints it).

Kernels that gather (`measure.gathers`) and kernels the heuristic's schedule runs in under
`MIN_SEARCH_SECONDS` keep the heuristic's schedule. A kernel the heuristic leaves with no
action is searched too (from the empty schedule): the 2 x 2 max-pools of a CNN are such
kernels, 1.5-3.6x faster with the schedules found. Kernels of
one structure in a graph are one kernel already (`sched-dedup`); across graphs the store
answers.
"""

from __future__ import annotations

import io
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.printer import Printer

from picograd import flags
from picograd.compiler.beam import store
from picograd.compiler.beam.measure import Bench, Lower, gathers, same_results
from picograd.compiler.beam.space import MIN_EMITTED, emitted, neighbours, plausible
from picograd.compiler.pipelines import run_pipeline
from picograd.dialects import pg_loop as L
from picograd.dialects import pg_sched as S
from picograd.dialects.abi import POLICY_ATTR, SCHEDULE_ATTR
from picograd.passes.loop.loop_simplify import loop_simplify_rules
from picograd.passes.loop.schedule import (
    Action,
    ScheduleError,
    apply_schedule,
    format_schedule,
    parse_schedule,
    recorded_schedule,
)
from picograd.runtimes import Runtime
from picograd.runtimes.base import Kernel

MAX_ROUNDS = 4
MAX_CANDIDATES = 24
MARGIN = 0.02  # a round must beat the best by this share to go on
# A kernel the heuristic's schedule runs in less time is not searched (its result is
# stored all the same): a graph's many small kernels would take most of a search's time
# for microseconds.
MIN_SEARCH_SECONDS = 50e-6
SLOW_CUTOFF = 3.0  # a candidate whose first launch takes this many times the best is not timed on
# The final check of step 4: this many of the fastest schedules beside the heuristic's,
# timed in turns this many times each; a winner must beat the heuristic by the margin.
FINALISTS = 3
FINAL_TURNS = 3
FINAL_MARGIN = 0.03
COMPILE_GROUP = 8  # candidates compiled per group (the budget is checked between groups)
# A candidate whose compile takes longer than this many times the heuristic's kernel's, and
# longer than MIN_COMPILE_LIMIT seconds, is dropped (its child killed).
COMPILE_LIMIT_RATIO = 4
MIN_COMPILE_LIMIT = 2.0


@dataclass
class BeamContext:
    """What a search needs from the compile driver."""

    width: int
    runtime: Runtime
    lower: Lower  # a module of scheduled pg_loop kernels (and @main) -> source text
    key_of: Callable[[str], str]  # a kernel's schedule-free text -> its store key
    vector_lanes: int = 16
    registers: int = 32
    kernel_budget: float = 20.0
    graph_budget: float = 300.0
    started: float = field(default_factory=time.perf_counter)


@dataclass(frozen=True)
class Choice:
    kernel: str
    policy: str  # heuristic | beam | beam-cache
    schedule: str
    heuristic: str
    speedup: float = 1.0


def kernel_text(kernel: L.KernelOp) -> str:
    """`kernel`'s IR without its name: the structure and shapes that key its schedule."""
    copy = kernel.clone()
    copy.properties["sym_name"] = StringAttr("k")
    text = _print(copy)
    copy.erase()
    return text


def _print(op: L.KernelOp) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue()


def _scheduled(original: L.KernelOp, actions: tuple[Action, ...]) -> L.KernelOp | None:
    """A copy of `original` with `actions` applied and its indices simplified; None when an
    action does not apply."""
    copy = original.clone()
    try:
        apply_schedule(copy, actions)
    except ScheduleError:
        copy.erase()
        return None
    loop_simplify_rules.apply(copy)
    return copy


def _launch_args(module: ModuleOp, name: str) -> list | None:
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            for inner in op.body.walk():
                if isinstance(inner, S.LaunchOp) and inner.kernel_name == name:
                    return list(inner.args)
    return None


def _heuristic(kernel: L.KernelOp, decisions: str) -> L.KernelOp:
    alone = ModuleOp([kernel.clone()])
    run_pipeline(alone, decisions)
    chosen = next(op for op in alone.ops if isinstance(op, L.KernelOp))
    chosen.detach()
    return chosen


def choose_schedules(module: ModuleOp, decisions: str, context: BeamContext) -> list[Choice]:
    """Give every kernel of `module` its schedule (see the module docstring)."""
    kernels = [op for op in module.ops if isinstance(op, L.KernelOp)]
    choices: list[Choice] = []
    bar = _progress(len(kernels))
    try:
        for kernel in kernels:
            choice = _choose(module, kernel, decisions, context, bar)
            choices.append(choice)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return choices


def _progress(total: int) -> Any:
    try:
        from tqdm import tqdm  # optional: the `examples` extra
    except ImportError:
        return None
    tqdm.monitor_interval = 0  # no monitor thread: the candidates compile in forked children
    return tqdm(total=total, desc="BEAM", unit="kernel", file=sys.stderr, leave=False,
                disable=None)


def _choose(module: ModuleOp, kernel: L.KernelOp, decisions: str, context: BeamContext,
            bar: Any) -> Choice:
    name = kernel.sym_name.data
    launch_args = _launch_args(module, name)
    spent = time.perf_counter() - context.started
    key = None
    if launch_args is not None and not gathers(kernel) and spent <= context.graph_budget:
        key = context.key_of(kernel_text(kernel))
        tuned = store.load(key)  # first: a stored winner needs no heuristic run either
        chosen = _scheduled(kernel, tuple(parse_schedule(tuned.schedule))) if (
            tuned is not None and _parses(tuned.schedule)) else None
        if tuned is not None and chosen is not None:
            return _take(kernel, chosen, Choice(name, "beam-cache", tuned.schedule,
                                                tuned.heuristic, tuned.speedup))
    heuristic = _heuristic(kernel, decisions)
    h_text = recorded_schedule(heuristic)
    h_actions = tuple(parse_schedule(h_text))
    if key is None:
        return _take(kernel, heuristic, Choice(name, "heuristic", h_text, h_text))
    assert launch_args is not None
    if bar is not None:
        bar.set_postfix_str(name)
    began = time.perf_counter()
    result = _search(kernel, heuristic, h_actions, launch_args, context, bar)
    if result is None:
        return _take(kernel, heuristic, Choice(name, "heuristic", h_text, h_text))
    actions, seconds, h_seconds, tried = result
    text = format_schedule(actions)
    if flags.debug_level() >= 1:
        print(f"BEAM {name}: heuristic {h_seconds * 1e6:.1f} us -> {seconds * 1e6:.1f} us "
              f"(x{h_seconds / seconds:.2f}), {tried} schedules timed in "
              f"{time.perf_counter() - began:.1f} s: {text or '(none)'}", file=sys.stderr)
    store.save(key, store.Tuned(key, name, text, h_text, seconds, h_seconds, tried))
    if actions == h_actions:
        return _take(kernel, heuristic, Choice(name, "beam", h_text, h_text))
    chosen = _scheduled(kernel, actions)
    assert chosen is not None
    heuristic.erase()
    return _take(kernel, chosen, Choice(name, "beam", text, h_text, h_seconds / seconds))


def _parses(text: str) -> bool:
    try:
        parse_schedule(text)
    except ScheduleError:
        return False
    return True


def _take(kernel: L.KernelOp, chosen: L.KernelOp, choice: Choice) -> Choice:
    """Put `chosen` in `kernel`'s place in the module, marked with its policy."""
    chosen.attributes[POLICY_ATTR] = StringAttr(choice.policy)
    if choice.schedule:
        chosen.attributes[SCHEDULE_ATTR] = StringAttr(choice.schedule)
    block = kernel.parent_block()
    assert block is not None
    block.insert_op_before(chosen, kernel)
    kernel.detach()
    kernel.erase()
    return choice


class _Search:
    """One kernel's beam search (the module docstring's step 3 and 4)."""

    def __init__(self, kernel: L.KernelOp, heuristic: L.KernelOp,
                 h_actions: tuple[Action, ...], bench: Bench, context: BeamContext):
        self.kernel, self.heuristic, self.bench, self.context = kernel, heuristic, bench, context
        self.h_actions = h_actions
        self.started = time.perf_counter()
        self.timed: dict[tuple[Action, ...], float] = {}
        self.kernels: dict[tuple[Action, ...], Kernel] = {}
        # every schedule tried, as a kernel (None: its actions did not apply)
        self.scheduled: dict[tuple[Action, ...], L.KernelOp | None] = {h_actions: heuristic}
        self.budget = max(MIN_EMITTED, emitted(heuristic) * 3 // 2)
        self.limit = MIN_COMPILE_LIMIT

    def start(self) -> bool:
        """Compile and time the heuristic's kernel; False when it does not compile here."""
        t0 = time.perf_counter()
        (h_kernel,) = self.bench.compile([self.heuristic])
        if h_kernel is None:
            return False
        self.limit = max(MIN_COMPILE_LIMIT, COMPILE_LIMIT_RATIO * (time.perf_counter() - t0))
        self.timed[self.h_actions] = self.bench.time(h_kernel)
        self.kernels[self.h_actions] = h_kernel
        self.reference = self.bench.outputs(h_kernel)
        return True

    def over(self) -> bool:
        """Whether the kernel's search or the graph's spent its budget."""
        now = time.perf_counter()
        return (now - self.started > self.context.kernel_budget
                or now - self.context.started > self.context.graph_budget)

    def fresh(self) -> list[tuple[tuple[Action, ...], L.KernelOp]]:
        """The untried, plausible neighbours of the beam, at most `MAX_CANDIDATES`."""
        beam = sorted(self.timed, key=self.timed.__getitem__)[:self.context.width]
        out: list[tuple[tuple[Action, ...], L.KernelOp]] = []
        for actions in beam:
            source = self.scheduled[actions]
            assert source is not None
            for candidate in neighbours(actions, source):
                if candidate in self.scheduled:
                    continue
                made = self.scheduled[candidate] = _scheduled(self.kernel, candidate)
                if made is not None and plausible(made, self.context.vector_lanes,
                                                  self.context.registers, self.budget):
                    out.append((candidate, made))
                if len(out) >= MAX_CANDIDATES:
                    return out
        return out

    def round(self, bar: Any) -> bool:
        """Time one round of candidates; whether the search goes on."""
        fresh = self.fresh()
        best = min(self.timed.values())
        for at in range(0, len(fresh), COMPILE_GROUP):
            if at and self.over():
                return False
            group = fresh[at:at + COMPILE_GROUP]
            loaded = self.bench.compile([made for _, made in group], self.limit)
            for (candidate, _), launchable in zip(group, loaded, strict=True):
                if launchable is not None and not self.over():
                    self.timed[candidate] = self.bench.time(launchable, SLOW_CUTOFF * best)
                    self.kernels[candidate] = launchable
            if self.over():
                return False
        now_best = min(self.timed.values())
        if bar is not None:
            h_seconds = self.timed[self.h_actions]
            bar.set_postfix_str(f"{self.kernel.sym_name.data} {now_best * 1e6:.0f} us "
                                f"x{h_seconds / now_best:.2f}")
        return bool(fresh) and now_best < best * (1 - MARGIN)

    def winner(self) -> tuple[Action, ...]:
        """The fastest schedule whose results are the heuristic's (step 4). The search's
        times were taken seconds apart, and a shared machine's speed drifts more than
        the gains it looks for: the `FINALISTS` fastest and the heuristic are timed again,
        in turns (`FINAL_TURNS` each), and a finalist wins only by `FINAL_MARGIN` over the
        heuristic in those medians."""
        ranked = sorted(self.timed, key=self.timed.__getitem__)
        # past the budget, only the fastest one is checked against the heuristic
        count = 1 if self.over() else FINALISTS
        finalists = [self.h_actions, *[a for a in ranked if a != self.h_actions][:count]]
        if len(finalists) == 1:
            return self.h_actions
        turns: dict[tuple[Action, ...], list[float]] = {a: [] for a in finalists}
        for _ in range(FINAL_TURNS):
            for actions in finalists:
                turns[actions].append(self.bench.time(self.kernels[actions]))
        for actions, times in turns.items():
            self.timed[actions] = float(np.median(times))
        h_seconds = self.timed[self.h_actions]
        winner = min(finalists, key=self.timed.__getitem__)
        if self.timed[winner] > h_seconds * (1 - FINAL_MARGIN):
            return self.h_actions
        if not same_results(self.bench.outputs(self.kernels[winner]), self.reference):
            warnings.warn(f"picograd BEAM: the schedule '{format_schedule(winner)}' of kernel "
                          f"{self.kernel.sym_name.data} changed its results beyond the "
                          "accumulation tolerance; kept the heuristic's (please report it)",
                          RuntimeWarning, stacklevel=2)
            return self.h_actions
        return winner

    def erase(self) -> None:
        for made in self.scheduled.values():
            if made is not None and made is not self.heuristic and made.parent is None:
                made.erase()


def _search(kernel: L.KernelOp, heuristic: L.KernelOp, h_actions: tuple[Action, ...],
            launch_args: list, context: BeamContext, bar: Any
            ) -> tuple[tuple[Action, ...], float, float, int] | None:
    """(winning actions, its seconds, the heuristic's seconds, schedules timed), or None
    when the heuristic's own kernel did not compile here."""
    bench = Bench(context.runtime, context.lower, launch_args)
    search = _Search(kernel, heuristic, h_actions, bench, context)
    try:
        if not search.start():
            return None
        if search.timed[h_actions] < MIN_SEARCH_SECONDS:  # nothing worth a search to gain
            return h_actions, search.timed[h_actions], search.timed[h_actions], 1
        for _ in range(MAX_ROUNDS):
            if not search.round(bar) or search.over():
                break
        winner = search.winner()
        return winner, search.timed[winner], search.timed[h_actions], len(search.timed)
    finally:
        bench.close()
        search.erase()
