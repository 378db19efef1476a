"""How `uop-gpu-map` rewrites a kernel: the IR half of the pass.

`hoist_out_of_nests` prepares a kernel's block for planning (`gpu_map_plan`): it moves the
pure values used after a global nest before it. `KernelEmitter` then carries out the
`KernelPlan`: it creates the work-item ids, recomputes each nest's indices from them and
guards the work items past the nest's end, spreads group reductions over the work group
(partials in a shared buffer combined by a tree with barriers) and the loops after them,
runs the rest in one work item, and finally hoists the values used after their guard.
`relabel_global_ranges` makes the global ranges nothing maps sequential loops.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_uop as pu
from picograd.dialects.pg import (
    BinaryKind,
    BufferType,
    CmpKind,
    RangeKind,
    RangeKindAttr,
    SpecialKind,
)
from picograd.passes.uop.gpu_map_plan import (
    Epilogue,
    KernelPlan,
    Layout,
    Nest,
    Reduction,
    kernel_error,
)

_INDEX = IndexType()


# ── before planning ──────────────────────────────────────────────────────────


def hoist_out_of_nests(kernel: pu.KernelOp) -> Layout:
    """Move the pure ops that are used after the global nest they sit in before it; the
    layout of the block after.

    In the sequential kernel such a use reads the value of the last iteration; once
    the nest is spread over work items it would read the item's own. A pure op of
    values from before the nest has the same value in every iteration, so it moves;
    anything else fails.
    """
    block = kernel.body.block
    layout = Layout(list(block.ops))
    for _ in range(len(layout.ops) + 1):
        escape = None
        for begin, op in enumerate(layout.ops):
            if layout.depth[begin] == 0 and isinstance(op, pu.RangeOp) \
                    and op.kind.data == RangeKind.GLOBAL:
                escape = _escaping(layout, begin, layout.close[begin])
                if escape is not None:
                    _move_before(kernel, escape, escape, op, layout, begin, set())
                    break
        if escape is None:
            return layout
        layout = Layout(list(block.ops))
    raise AssertionError("hoisting did not settle")


def _escaping(layout: Layout, begin: int, end: int) -> Operation | None:
    """An op inside `(begin, end)` of the block whose value is used after `end`."""
    for op in layout.ops[begin + 1:end]:
        for result in op.results:
            if any(layout.pos.get(use.operation, -1) > end for use in result.uses):
                return op
    return None


def _move_before(kernel: pu.KernelOp, root: Operation, op: Operation, anchor: Operation,
                 layout: Layout, begin: int, moved: set[Operation]) -> None:
    """Move pure `op`, and the ops it needs from position `begin` on, before `anchor`;
    fail naming `root` (the op used after the nest) if one of them is not pure."""
    if op in moved:
        return
    if not isinstance(op, pu.ALU_OPS):
        via = "" if op is root else (
            f" (it depends on '{op.name}' %{op.results[0].name_hint or 'value'})")
        raise kernel_error(
            kernel,
            f"'{root.name}' (%{root.results[0].name_hint or 'value'}) is defined in a "
            f"global nest and used after it, and cannot be hoisted out of it{via}")
    for operand in op.operands:
        owner = operand.owner
        if isinstance(owner, Operation) and layout.pos.get(owner, -1) >= begin:
            _move_before(kernel, root, owner, anchor, layout, begin, moved)
    moved.add(op)
    block = kernel.body.block
    block.detach_op(op)
    block.insert_op_before(op, anchor)


def relabel_global_ranges(ops: Sequence[Operation]) -> None:
    """Global ranges that are not part of a nest run as sequential loops."""
    for op in ops:
        if isinstance(op, pu.RangeOp) and op.kind.data == RangeKind.GLOBAL:
            op.kind = RangeKindAttr(RangeKind.LOOP)


# ── carrying out a plan ──────────────────────────────────────────────────────


class KernelEmitter:
    """Builds the new flat block of one kernel from its plan, and puts it in place."""

    def __init__(self, plan: KernelPlan):
        self.plan = plan
        self.kernel, self.layout = plan.kernel, plan.layout
        self.block_size, self.groups = plan.block_size, plan.groups
        self.out: list[Operation] = []  # the new flat block, in order
        self.prologue = plan.prologue  # ids and constants, placed first
        self.consts = plan.consts
        self.dead: list[Operation] = []  # replaced ranges and ends, erased at the end
        self.fixed: set[Operation] = set()  # ops that stand for a range index: not hoisted
        self.shared: dict[Attribute, SSAValue] = {}
        self.ids: dict[str, SSAValue] = {}
        self.grouped_left = 0  # group-reduced nests not emitted yet (they reuse `shared`)

    def fail(self, message: str) -> PassFailedException:
        return kernel_error(self.kernel, message)

    def run(self) -> None:
        """Replace the kernel's block by its mapped form."""
        self.emit_kernel(self.plan.items)

    # ── building blocks ─────────────────────────────────────────────────────

    def emit(self, op: Operation) -> SSAValue:
        """Append an op with one result; return the result."""
        self.out.append(op)
        return op.results[0]

    def put(self, *ops: Operation) -> None:
        """Append ops without results (or whose results are not needed here)."""
        self.out.extend(ops)

    def const(self, value: int) -> SSAValue:
        if value not in self.consts:
            op = pu.ConstOp(value, _INDEX)
            self.prologue.append(op)
            self.consts[value] = op.result
        return self.consts[value]

    def pro(self, op: Operation) -> SSAValue:
        self.prologue.append(op)
        return op.results[0]

    def special(self, kind: SpecialKind, dim: int, size: int) -> SSAValue:
        key = f"{kind}{dim}"
        if key not in self.ids:
            op = pu.SpecialOp(kind, dim, size)  # placed first in the block by emit_kernel
            op.result.name_hint = f"{'gid' if kind == SpecialKind.GROUP_ID else 'lid'}{dim}"
            self.ids[key] = op.result
        return self.ids[key]

    def group_flat(self) -> SSAValue:
        """The flat work-group id (a constant 0 on a one-group grid)."""
        if "gflat" not in self.ids:
            g0, g1 = self.groups
            if g1 > 1:
                high = self.pro(pu.BinaryOp(BinaryKind.MUL, self.special(
                    SpecialKind.GROUP_ID, 1, g1), self.const(g0)))
                value = self.pro(pu.BinaryOp(
                    BinaryKind.ADD, high, self.special(SpecialKind.GROUP_ID, 0, g0)))
                value.name_hint = "group"
            elif g0 > 1:
                value = self.special(SpecialKind.GROUP_ID, 0, g0)
            else:
                value = self.const(0)
            self.ids["gflat"] = value
        return self.ids["gflat"]

    def local_id(self) -> SSAValue:
        return (self.special(SpecialKind.LOCAL_ID, 0, self.block_size) if self.block_size > 1
                else self.const(0))

    def flat(self) -> SSAValue:
        """The flat work-item id over the whole grid."""
        if "flat" not in self.ids:
            local = self.block_size
            if local == 1:
                value = self.group_flat()
            elif self.groups == (1, 1):
                value = self.local_id()
            else:
                base = self.pro(pu.BinaryOp(BinaryKind.MUL, self.group_flat(), self.const(local)))
                value = self.pro(pu.BinaryOp(BinaryKind.ADD, base, self.local_id()))
                value.name_hint = "flat"
            self.ids["flat"] = value
        return self.ids["flat"]

    def shared_buffer(self, t: Attribute) -> SSAValue:
        if t not in self.shared:
            op = pu.SharedOp(BufferType(self.block_size, t))
            op.result.name_hint = "partials"
            self.prologue.append(op)
            self.shared[t] = op.result
        return self.shared[t]

    def open_guard(self, lhs: SSAValue, kind: CmpKind, bound: int) -> None:
        ok = self.emit(pu.CmpOp(kind, lhs, self.const(bound)))
        self.put(pu.IfOp(ok))

    def binary(self, kind: BinaryKind, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        value = self.emit(pu.BinaryOp(kind, lhs, rhs))
        self.fixed.add(value.owner)  # type: ignore[arg-type]
        return value

    # ── emission ────────────────────────────────────────────────────────────

    def emit_kernel(self, items: Sequence[Nest | Operation | list[Operation]]) -> None:
        serial: list[Operation] = []  # top-level work that one work item does
        self.grouped_left = sum(isinstance(x, Nest) and bool(x.reductions) for x in items)
        for item in items:
            if isinstance(item, Nest):
                self.emit_serial(serial)
                serial = []
                self.emit_nest(item)
            elif isinstance(item, list):
                serial.extend(item)
            elif isinstance(item, (*pu.ALU_OPS, pu.LoadOp)):
                self.emit_serial(serial)
                serial = []
                if item not in self.prologue:
                    self.put(item)
            else:
                serial.append(item)
        self.emit_serial(serial)
        self.hoist_escaping_values()
        relabel_global_ranges(self.out)
        block = self.kernel.body.block
        for op in list(block.ops):
            block.detach_op(op)
        specials = [self.ids[k].owner for k in ("group_id0", "group_id1", "local_id0")
                    if k in self.ids]
        block.add_ops([*specials, *self.prologue, *self.out])  # type: ignore[list-item]
        for op in self.dead:  # ends first: they use the ranges
            op.erase()

    def emit_serial(self, ops: list[Operation]) -> None:
        if not ops:
            return
        guarded = self.groups != (1, 1) or self.block_size > 1
        if guarded:
            self.open_guard(self.flat(), CmpKind.EQ, 0)
        self.out.extend(ops)
        if guarded:
            self.put(pu.EndIfOp())

    def emit_nest(self, nest: Nest) -> None:
        grouped = bool(nest.reductions)
        self.grouped_left -= grouped
        ident = self.group_flat() if grouped else self.flat()
        g0, g1 = self.groups
        items = g0 * g1 * (1 if grouped else self.block_size)
        guarded = items != nest.size
        if guarded:
            self.open_guard(ident, CmpKind.LT, nest.size)
        self.emit_indices(nest, ident)
        self.out.extend(nest.prefix)
        if grouped:
            self.emit_grouped_body(nest)
        else:
            self.out.extend(nest.body)
        if guarded:
            self.put(pu.EndIfOp())
        self.dead.extend([*nest.ends, *nest.ranges])

    def emit_indices(self, nest: Nest, ident: SSAValue) -> None:
        """Recompute the nest's indices from the flat id, innermost by `mod`, outer by `div`."""
        rest = ident
        for depth in range(len(nest.ranges) - 1, -1, -1):
            range_op, extent = nest.ranges[depth], nest.extents[depth]
            if extent <= 1:
                index = self.const(range_op.start.data)
            else:
                index = rest
                if depth > 0:
                    index = self.binary(BinaryKind.MOD, rest, self.const(extent))
                    rest = self.binary(BinaryKind.DIV, rest, self.const(extent))
                if range_op.start.data:
                    index = self.binary(BinaryKind.ADD, index, self.const(range_op.start.data))
                if isinstance(index.owner, pu.BinaryOp) and index.owner in self.out:
                    index.name_hint = range_op.result.name_hint
            range_op.result.replace_all_uses_with(index)

    def emit_grouped_body(self, nest: Nest) -> None:
        pos = {op: i for i, op in enumerate(nest.body)}
        i = 0
        rest = Epilogue.of(nest.body[pos[nest.reductions[-1].end] + 1:], self.layout)
        for n, reduction in enumerate(nest.reductions):
            last = n == len(nest.reductions) - 1
            self.out.extend(nest.body[i:pos[reduction.range]])
            self.emit_strided(reduction.range, reduction.end, reduction.interior,
                              RangeKind.REDUCE)
            self.emit_tree(reduction, last, broadcast=not last or rest is not None)
            i = pos[reduction.end] + 1
        if rest is None:
            self.out.extend(nest.body[i:])
            self.put(pu.EndIfOp())  # closes the `local_id == 0` guard of the last reduction
        else:
            self.emit_epilogue(rest)

    def emit_epilogue(self, rest: Epilogue) -> None:
        """The rest of a body after its broadcast reductions: its independent loops spread
        over the group, its other stores in local_id 0, its pure ops and loads in all."""
        i = 0
        while i < len(rest.ops):
            op = rest.ops[i]
            loop = rest.loops.get(op)
            if loop is not None:
                self.emit_strided(loop.range, loop.end, loop.interior, RangeKind.LOOP)
                i += len(loop.interior) + 2
                continue
            if isinstance(op, pu.StoreOp):
                self.open_guard(self.local_id(), CmpKind.EQ, 0)
                self.put(op, pu.EndIfOp())
            else:
                self.put(op)
            i += 1

    def emit_strided(self, old: pu.RangeOp, old_end: pu.EndOp, interior: list[Operation],
                     kind: RangeKind) -> None:
        """This thread's share of a range's iterations: lid, lid + L, ... (below the end)."""
        local = self.block_size
        extent = old.end.data - old.start.data
        trips = -(-extent // local)
        step = self.emit(pu.RangeOp(0, trips, kind))
        step.name_hint = f"{old.result.name_hint or 'r'}_step"
        lid = self.local_id()
        first = lid if trips == 1 else self.binary(
            BinaryKind.ADD, self.binary(BinaryKind.MUL, step, self.const(local)), lid)
        index = first
        if old.start.data:
            index = self.binary(BinaryKind.ADD, first, self.const(old.start.data))
        if index is not lid:
            index.name_hint = old.result.name_hint
        old.result.replace_all_uses_with(index)
        ragged = extent % local != 0
        if ragged:
            self.open_guard(first, CmpKind.LT, extent)
        self.out.extend(interior)
        if ragged:
            self.put(pu.EndIfOp())
        self.put(pu.EndOp(step))
        self.dead.extend([old_end, old])

    def emit_tree(self, reduction: Reduction, last: bool, broadcast: bool) -> None:
        """Combine the threads' partials in shared memory; leave the result in the register
        of every thread (`broadcast` false: of local_id 0 only, which then runs the rest).
        After the `last` reduction of the last group-reduced nest, shared memory is not
        reused: no barrier follows."""
        shared, lid, local = self.shared_buffer(reduction.dtype), self.local_id(), self.block_size
        partial = self.emit(pu.AccLoadOp(reduction.acc))
        self.put(pu.StoreOp(partial, shared, lid))
        self.put(pu.BarrierOp())
        span = 1 << (local - 1).bit_length()  # the power of two >= L
        stride = span // 2
        while stride >= 1:
            other = self.binary(BinaryKind.ADD, lid, self.const(stride))
            active = self.emit(pu.CmpOp(CmpKind.LT, lid, self.const(stride)))
            if local != span:  # the partner must exist
                inside = self.emit(pu.CmpOp(CmpKind.LT, other, self.const(local)))
                active = self.emit(pu.BinaryOp(BinaryKind.AND, active, inside))
            self.put(pu.IfOp(active))
            mine = self.emit(pu.LoadOp(shared, lid))
            theirs = self.emit(pu.LoadOp(shared, other))
            self.put(pu.StoreOp(self.emit(pu.BinaryOp(reduction.kind, mine, theirs)),
                                shared, lid))
            self.put(pu.EndIfOp())
            if broadcast or stride > 1:
                self.put(pu.BarrierOp())
            stride //= 2
        if not broadcast:
            self.open_guard(lid, CmpKind.EQ, 0)  # closed after the rest of the body
        total = self.emit(pu.LoadOp(shared, self.const(0)))
        self.put(pu.AccStoreOp(reduction.acc, total))
        if not last or (broadcast and self.grouped_left):
            self.put(pu.BarrierOp())  # everyone has read shared[0] before it is reused

    # ── clean-up ────────────────────────────────────────────────────────────

    def hoist_escaping_values(self) -> None:
        """Move pure ops used after the `endif` of their guard before the guard, or fail."""
        for _ in range(len(self.out) + 1):
            escape = self.find_escape()
            if escape is None:
                return
            self.hoist(*escape)
        raise AssertionError("hoisting did not settle")

    def find_escape(self) -> tuple[Operation, pu.IfOp] | None:
        """An op used after the endif of a guard it is under, and the outermost such guard."""
        layout = Layout(self.out)
        open_ifs: list[int] = []
        for i, op in enumerate(self.out):
            if isinstance(op, pu.EndIfOp):
                open_ifs.pop()
            for result in op.results:
                for use in result.uses:
                    where = layout.pos.get(use.operation)
                    for guard in open_ifs:
                        if where is not None and where > layout.close[guard]:
                            return op, self.out[guard]  # type: ignore[return-value]
            if isinstance(op, pu.IfOp):
                open_ifs.append(i)
        return None

    def hoist(self, op: Operation, guard: pu.IfOp) -> None:
        """Move `op` (and the ops it needs from inside the guard) just before the guard."""
        if not isinstance(op, pu.ALU_OPS) or op in self.fixed:
            raise self.fail(
                f"'{op.name}' (%{op.results[0].name_hint or 'value'}) is defined under a "
                "guard and used after its endif, and cannot be hoisted")
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner in self.out \
                    and self.out.index(owner) > self.out.index(guard):
                self.hoist(owner, guard)
        self.out.remove(op)
        self.out.insert(self.out.index(guard), op)
