"""A graph's kernels lowered in two processes at once (a target with a direct route).

    lower_kernels(module, spec, after_pass, lower) -> list[dict]

After the graph-level passes (fusion, buffers, the schedule), the rest of a pipeline
rewrites each kernel on its own (`pipelines.kernel_local_tail`), and that rest is most of a
cold compile's Python time. With a second CPU this process may use (`host_cpus`) and a
graph of `MIN_KERNELS` kernels or more, the kernels split into two groups of about equal
estimated work (`lowering_work`); a forked child runs the rest of the
pipeline on one group and lowers it to the target's pieces (a direct route's `lower`: each
kernel's text) while this process does the other, and the child sends its pieces back
through a pipe as JSON. The pieces come back in the module's order, so the route assembles
the very source a serial compile prints: a kernel's lowering does not depend on the other
kernels, and both processes keep the whole `@main` (which these passes leave as it is, and
which the LLVM printer reads to mark pointers `noalias`). A child that fails (a pass's
error on one of its kernels, a crash) is not trusted: its kernels are lowered again here,
so that the error is raised in this process, as a serial compile raises it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from picograd.compiler.pipelines import AfterPass, run_pipeline
from picograd.dialects.capabilities import host_cpus
from picograd.runtimes import forked
from picograd.runtimes.parallel import fork_is_safe

# A fork and a second module cost a few milliseconds: a graph of fewer kernels compiles here.
MIN_KERNELS = 8

Lower = Callable[[ModuleOp], list[dict]]  # a lowered module -> its kernels' pieces, in order


def lower_kernels(module: ModuleOp, spec: str, after_pass: AfterPass | None, lower: Lower
                  ) -> list[dict]:
    """Run `spec` (kernel-local passes) on `module` and `lower` its kernels, in one process
    or two (see the module docstring): the pieces of every kernel, in the module's order.
    `after_pass` sees this process's passes only."""
    kernels = [op for op in module.ops if not isinstance(op, func.FuncOp)]
    if (len(kernels) < MIN_KERNELS or host_cpus() < 2 or not hasattr(os, "fork")
            or not fork_is_safe()):
        run_pipeline(module, spec, after_pass=after_pass)
        return lower(module)
    ours, theirs = _halves(kernels)
    order = {id(op): n for n, op in enumerate(kernels)}

    def lower_theirs() -> bytes:  # in the child: leaves `ours` out and prints `theirs`
        for op in ours:
            op.detach()
        run_pipeline(module, spec)
        return json.dumps(lower(module)).encode()

    pid, read_end = forked.start(lower_theirs)
    try:
        for op in theirs:
            op.detach()
        run_pipeline(module, spec, after_pass=after_pass)
        pieces = lower(module)
    finally:
        their_pieces = _collect(pid, read_end)
    if their_pieces is None:  # lower them here: the same error, raised in this process
        main = next(op for op in module.ops if isinstance(op, func.FuncOp))
        rest = ModuleOp([*theirs, main.clone()])
        run_pipeline(rest, spec)
        their_pieces = lower(rest)
    if len(pieces) != len(ours) or len(their_pieces) != len(theirs):
        raise AssertionError("a lowering gave a piece per kernel")
    merged = [*zip((order[id(op)] for op in ours), pieces, strict=True),
              *zip((order[id(op)] for op in theirs), their_pieces, strict=True)]
    return [piece for _, piece in sorted(merged, key=lambda pair: pair[0])]


def _halves(kernels: list[Operation]) -> tuple[list[Operation], list[Operation]]:
    """Two groups of kernels of about equal estimated work (`lowering_work`), in order."""
    sizes = [lowering_work(kernel) for kernel in kernels]
    groups: tuple[list[int], list[int]] = ([], [])
    totals = [0, 0]
    for n in sorted(range(len(kernels)), key=lambda n: -sizes[n]):
        lighter = 0 if totals[0] <= totals[1] else 1
        groups[lighter].append(n)
        totals[lighter] += sizes[n]
    return ([kernels[n] for n in sorted(groups[0])], [kernels[n] for n in sorted(groups[1])])


def lowering_work(kernel: Operation) -> int:
    """An estimate of what the kernel-local passes cost on `kernel` (at the schedule
    stage): its ops, times one more for each reduce in it. A reduce kernel's body is
    emitted once per lane of its register tile or row lanes, so its ops cost several times
    an elementwise kernel's: on the CNN step's 93 kernels (CPU time of each lowered alone,
    measured once on a busy machine) the op count gave the bigger group 59 % of the work,
    this estimate 54 % (the MLP's 37: 55 % and 56 %)."""
    ops = reduces = 0
    for op in kernel.walk():
        ops += 1
        reduces += op.name.endswith(".reduce")
    return ops * (1 + reduces)


def _collect(pid: int, fd: int) -> list[dict] | None:
    """The pieces the child sent, or None when it failed (this process then lowers its
    kernels again and raises the error a serial compile would)."""
    outcome = forked.collect(pid, fd)
    return json.loads(outcome.data) if outcome.ok else None
