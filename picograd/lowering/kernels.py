"""What every `pg_uop` -> target lowering shares: which kernels may assume their buffers do
not alias, swapping each `pg_uop.kernel` for its lowered twin in place, and (GPU targets)
the launch dimensions of a kernel.

A target lowering supplies `lower(kernel, distinct) -> Operation`; `distinct` tells it that
every launch of the kernel passes pairwise distinct buffers, so pointers may be marked
`noalias` (LLVM) or `restrict` (C).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from picograd.dialects import pg_uop
from picograd.dialects.pg import SpecialKind
from picograd.dialects.pg_sched import LaunchOp

KernelLowering = Callable[[pg_uop.KernelOp, bool], Operation]


def kernels_with_distinct_buffers(module: ModuleOp) -> set[str]:
    """Kernels whose every launch passes pairwise distinct buffers (and that are launched)."""
    launched: set[str] = set()
    aliased: set[str] = set()
    for op in module.walk():
        if isinstance(op, LaunchOp):
            launched.add(op.kernel_name)
            if len(set(op.args)) != len(op.args):
                aliased.add(op.kernel_name)
    return launched - aliased


def replace_kernels(module: ModuleOp, lower: KernelLowering) -> None:
    """Replace every `pg_uop.kernel` of `module` by `lower(kernel, distinct)`, in place (the
    symbol keeps its position, so the module's order of kernels is kept)."""
    distinct = kernels_with_distinct_buffers(module)
    block = module.body.block
    for kernel in list(block.ops):
        if isinstance(kernel, pg_uop.KernelOp):
            block.insert_op_before(lower(kernel, kernel.sym_name.data in distinct), kernel)
            block.detach_op(kernel).erase()


def gpu_launch(kernel: pg_uop.KernelOp, fail: Callable[[str], Exception],
               unsupported: str) -> tuple[list[int], list[int]]:
    """(grid, block) of a kernel in GPU form: `grid[d]` is the size of `special group_id d`,
    `block[d]` that of `special local_id d` (1 where absent). A special of another kind
    raises `fail(unsupported)` (`{kind}` in it names the kind), one with two sizes
    `fail(...)` naming them."""
    dims = {SpecialKind.GROUP_ID: [1, 1, 1], SpecialKind.LOCAL_ID: [1, 1, 1]}
    seen: dict[tuple[SpecialKind, int], int] = {}
    for op in kernel.body.block.ops:
        if not isinstance(op, pg_uop.SpecialOp):
            continue
        kind, dim, size = op.kind.data, op.dim.data, op.size.data
        if kind not in dims:
            raise fail(unsupported.format(kind=kind))
        if seen.setdefault((kind, dim), size) != size:
            raise fail(f"pg_uop.special {kind} {dim} has two sizes, {seen[(kind, dim)]} and "
                       f"{size}")
        dims[kind][dim] = size
    return dims[SpecialKind.GROUP_ID], dims[SpecialKind.LOCAL_ID]
