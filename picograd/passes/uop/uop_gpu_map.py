"""`uop-gpu-map`: map the `global` ranges of `pg_uop` kernels onto GPU work groups and items.

Input: `pg_uop` kernels as `convert-loop-to-uop,uop-simplify,cse` leave them (ranges, no
specials). Output: the GPU form of docs/design.md: work-item ids are `pg_uop.special
group_id|local_id`, guards are `pg_uop.if`/`pg_uop.endif`, group reductions use a
`pg_uop.shared` buffer and `pg_uop.barrier`. Every range left is a sequential loop.

    %i = pg_uop.range 0 to 6 global                %g = pg_uop.special group_id 0 size 2
    %v = pg_uop.load %a[%i] : ... -> f32           %l = pg_uop.special local_id 0 size 4
    pg_uop.store %v, %out[%i] : ...                %c4 = pg_uop.const 4 : index
    pg_uop.end %i                                  %c6 = pg_uop.const 6 : index
                                                   %gl = pg_uop.binary mul %g, %c4 : index
                                                   %flat = pg_uop.binary add %gl, %l : index
                                                   %ok = pg_uop.cmp lt %flat, %c6 : index
                                                   pg_uop.if %ok
                                                   %v = pg_uop.load %a[%flat] : ... -> f32
                                                   pg_uop.store %v, %out[%flat] : ...
                                                   pg_uop.endif

How a kernel is mapped:

* A *nest* is a `global` range at the top level of the kernel and the `global` ranges
  perfectly nested in it (only pure ALU ops, hoisted there, may sit between them). It is
  replaced by one flat work-item id, `flat = (group_id 1 * G0 + group_id 0) * L + local_id
  0`, from which the nest's indices are recomputed with `div`/`mod` by the inner extents;
  its body is wrapped in `pg_uop.if (flat < N)` unless the grid has exactly N work items.
  Several nests of one kernel share the ids (the grid is sized for the largest) and each
  gets its own guard. Specials of size 1 are not emitted: a kernel whose grid is one work
  item reads no special, and a kernel without a `global` range at its top level (and no
  group reduction, below) is left as it is: it runs as one work item (launch grid and block
  1, as the launch-dims contract says for absent specials).
* The block size L is the `local-size` option (0: the target's default), cut down to the
  largest nest when no nest needs whole work groups. When the groups do not fit
  `max_groups[0]`, the grid is split over two dimensions (G1 = ceil(G / max), G0 =
  ceil(G / G1), `group_id 1 * G0 + group_id 0`); a grid that fits in neither fails.
* Group reductions (option `group-reduce`): in a nest of at most `SMALL_OUTPUT` work items
  (or a kernel without global ranges), a `reduce` range directly in the nest's body that
  has at least `reduce-threshold` iterations, no nested range or store in its body, and
  the shape `acc_load / binary combine / acc_store` into an accumulator initialised to the
  combine's identity, is spread over one work group per output: thread `l` accumulates
  iterations `l, l + L, ...` (an `if` skips the iterations past the end, which leaves the
  identity), writes its partial to `shared[l]`, and a tree combines them: for s = P/2 ...
  1 (P the power of two >= L), threads with `l < s` (and `l + s < L`) set `shared[l] =
  shared[l] op shared[l + s]`, a barrier after each step. A reduction followed by another
  distributed one broadcasts its result (every thread reads `shared[0]` back into its
  accumulator, then a barrier). After the last one, when the rest of the body is pure ops,
  loads, stores, and at least one *independent* loop (`_Epilogue`: a range whose body is
  pure ops, loads and stores at an index `j * c + invariant`, c != 0, of its variable j,
  and no buffer of the rest both stored and loaded, nor stored twice), the result is
  broadcast too and each such loop is spread over the group: `for jo < ceil(N / L): j = jo
  * L + local_id; if (j < N) body` (a fused softmax or layernorm writes its row with the
  whole group); the rest's other stores run in `local_id 0`. Otherwise only `local_id 0`
  reads `shared[0]` and runs the rest of the body. Float sums and products may differ from
  the sequential order by rounding; integers and bools are exact. One shared buffer per
  element type, L elements, counted at 4 bytes or more each against
  `shared_memory_bytes` (over it, the kernel keeps sequential reductions). Stores before a
  reduction in the same body keep that reduction sequential. Barriers sit only where
  control flow is uniform over the work group (a group-reduced nest's guard reads group
  ids only), as CUDA and WGSL require.
* Top-level work outside the nests (stores, non-global ranges, accumulators; the frontend
  makes none) is wrapped in `pg_uop.if (flat == 0)`; top-level pure ops and loads run in
  every work item. Global ranges that are not part of a nest become `loop` ranges.
* A value defined in a nest or under a guard and used after it (CSE can make one nest
  use a constant of another) is hoisted before the nest or guard when it is a pure op of
  values defined outside, which has one value in every iteration and work item;
  otherwise the pass fails naming the kernel and the op. So does a nest whose iterations
  write a register declared before it (they are not independent). Kernels that already
  read a `pg_uop.special` or hold an `if`, `shared` or `barrier` are left as they are.

Guarantee: for every input, running the mapped kernel's work items (group by group, in
lockstep between barriers) gives the results of the sequential kernel (float group
reductions up to rounding); every size is within the target's capabilities.

This module holds the pass and the order of its steps; `gpu_map_plan` decides how each
kernel is mapped (nests, group reductions, the launch) and `gpu_map_emit` rewrites it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_uop as pu
from picograd.dialects.capabilities import Capabilities, capabilities
from picograd.errors import DeviceError
from picograd.passes.uop.gpu_map_emit import (
    KernelEmitter,
    hoist_out_of_nests,
    relabel_global_ranges,
)
from picograd.passes.uop.gpu_map_plan import (
    PASS,
    SMALL_OUTPUT,
    KernelPlanner,
    combine_identity,
    in_gpu_form,
)


@dataclass(frozen=True)
class UopGpuMapPass(ModulePass):
    """Global ranges -> work groups and work items; long reductions -> group reductions.

    Input: `pg_uop` kernels without specials (after `convert-loop-to-uop,uop-simplify,cse`).
    Output: `pg_uop` kernels in GPU form (specials, if/endif guards, shared + barrier).
    Options: `target` (its capabilities bound every size), `local-size` (work items per
    group; 0: the target's default), `group-reduce` (spread long reductions of small
    outputs over a work group), `reduce-threshold` (the fewest iterations a reduction needs
    for that). Guarantee: the kernels compute what they computed before (float group
    reductions up to rounding) within the target's limits; see the module docstring.
    """

    name = "uop-gpu-map"

    target: str = "ptx"
    local_size: int = 0
    group_reduce: bool = True
    reduce_threshold: int = 256

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            caps = capabilities(self.target)
        except DeviceError as e:
            raise PassFailedException(f"{PASS}: {e}") from None
        if not caps.gpu:
            raise PassFailedException(f"{PASS}: target '{self.target}' is not a GPU target")
        assert caps.max_local_size is not None and caps.default_local_size is not None
        local = self.local_size or caps.default_local_size
        if not 1 <= local <= caps.max_local_size:
            raise PassFailedException(
                f"{PASS}: local-size {local} is outside 1..{caps.max_local_size} for "
                f"target '{self.target}'")
        for kernel in op.ops:
            if isinstance(kernel, pu.KernelOp):
                _map_kernel(kernel, caps, local, self.group_reduce,
                            max(1, self.reduce_threshold))


def _map_kernel(kernel: pu.KernelOp, caps: Capabilities, local: int, group_reduce: bool,
                threshold: int) -> None:
    """Map one kernel: prepare its block, plan its top level and launch, emit the result."""
    if in_gpu_form(kernel):
        return
    layout = hoist_out_of_nests(kernel)
    plan = KernelPlanner(kernel, layout, caps, local, group_reduce, threshold).plan()
    if plan is None:  # it runs as one work item
        relabel_global_ranges(layout.ops)
        return
    KernelEmitter(plan).run()


__all__ = ["SMALL_OUTPUT", "UopGpuMapPass", "combine_identity"]
