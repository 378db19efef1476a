"""`sched-dedup`: one kernel for each group of structurally identical `pg_sched` kernels.

A training step's graph repeats kernels: the Adam update of every parameter of one shape,
the weight-gradient reductions of layers of one shape. Each copy would go through every later
pass, the printer and the target compiler (about a third of a small CNN's kernels, see
../shared/docs/kernel-optimizer.md §3). This pass keeps the first kernel of each group, points
every launch of the others at it, and erases them:

    pg_sched.kernel @k0(%a: !pg.buffer<4xf32>, %out: !pg.buffer<4xf32>) { ...exp... }
    pg_sched.kernel @k1(%a: !pg.buffer<4xf32>, %out: !pg.buffer<4xf32>) { ...exp... }
    func.func @main(...) { pg_sched.launch @k0(%x, %y) ...  pg_sched.launch @k1(%y, %z) ... }
  becomes
    pg_sched.kernel @k0(...) { ...exp... }
    func.func @main(...) { pg_sched.launch @k0(%x, %y) ...  pg_sched.launch @k0(%y, %z) ... }

Two kernels are identical when their bodies are structurally equivalent (the same ops,
attributes, properties and use-def structure; names do not matter) and every op's results
have the same types. xDSL's `is_structurally_equivalent` does not compare result types, and
a `pg_sched.load` of one buffer as `tensor<3x4xf32>` or as `tensor<4x3xf32>` differs only
there. Kernels are bucketed by their argument and result types first, so comparing costs
one walk per candidate pair.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from picograd.dialects import pg_sched as S


def _bucket(kernel: S.KernelOp) -> tuple:
    """A key that identical kernels share: argument types, then every op's name, result
    types (what `is_structurally_equivalent` leaves out), properties and attributes in
    order. The last two are compared by that walk too, but keyed here they keep apart the
    kernels that differ only there (one per time step of a recurrent layer, slicing at its
    own offset): otherwise each of them is compared with every other, O(K^2) walks."""
    block = kernel.body.block
    return (tuple(a.type for a in block.args),
            tuple((op.name, tuple(r.type for r in op.results), _attrs(op.properties),
                   _attrs(op.attributes)) for op in kernel.body.walk()))


def _attrs(attrs: dict[str, Attribute]) -> tuple:
    """`attrs` as a hashable key equal for equal dicts (in key order)."""
    items = tuple(sorted(attrs.items()))
    try:
        hash(items)
    except TypeError:  # an attribute without a hash: its text stands in
        return tuple((k, str(v)) for k, v in items)
    return items


@dataclass(frozen=True)
class SchedDedupPass(ModulePass):
    """Merge structurally identical `pg_sched.kernel`s into the first of each group.

    Input: `pg_sched` kernels and a `func.func @main` of `pg_sched.launch`es (stage 2).
    Output: the same dialects, with no two kernels structurally equivalent.
    Guarantee: every launch runs a kernel whose body is the same as before, on the same
    buffers, in the same order; only kernel symbols change.
    """

    name = "sched-dedup"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kept: dict[tuple, list[S.KernelOp]] = {}
        renamed: dict[str, str] = {}
        for kernel in [o for o in op.ops if isinstance(o, S.KernelOp)]:
            group = kept.setdefault(_bucket(kernel), [])
            twin = next((k for k in group
                         if k.body.is_structurally_equivalent(kernel.body)), None)
            if twin is None:
                group.append(kernel)
                continue
            renamed[kernel.sym_name.data] = twin.sym_name.data
            kernel.detach()
            kernel.erase()
        if not renamed:
            return
        for launch in op.walk():
            if isinstance(launch, S.LaunchOp) and launch.kernel_name in renamed:
                launch.kernel = SymbolRefAttr(renamed[launch.kernel_name])
