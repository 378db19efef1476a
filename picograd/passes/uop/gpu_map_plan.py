"""What `uop-gpu-map` decides about a kernel before it rewrites anything.

The planning half of the pass (`uop_gpu_map` describes the mapping; `gpu_map_emit` carries
a plan out). It reads a kernel's flat block (`Layout`) and finds its top level: nests of
`global` ranges (`Nest`) and the ops between them; in a nest of few outputs, the reduce
ranges whose iterations can be spread over a work group (`Reduction`) and the loops after
them that can be spread too (`Epilogue`); then it chooses the launch, the work items per
group and the grid of groups, within the target's limits. The result is a `KernelPlan`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_uop as pu
from picograd.dialects.capabilities import Capabilities
from picograd.dialects.dtypes import is_bool, is_float, to_numpy_dtype
from picograd.dialects.pg import BinaryKind, RangeKind
from picograd.dialects.syntax import scalar_value

PASS = "uop-gpu-map"

# Group reductions pay off when there are few outputs: one work group per output.
SMALL_OUTPUT = 4096


def kernel_error(kernel: pu.KernelOp, message: str) -> PassFailedException:
    """The pass's error about one kernel: `uop-gpu-map: @k: <message>`."""
    return PassFailedException(f"{PASS}: @{kernel.sym_name.data}: {message}")


def in_gpu_form(kernel: pu.KernelOp) -> bool:
    """Whether the kernel already reads a work-item id or holds a guard, a shared buffer
    or a barrier: the pass leaves such a kernel as it is."""
    return any(isinstance(op, pu.SpecialOp | pu.IfOp | pu.SharedOp | pu.BarrierOp)
               for op in kernel.body.block.ops)


def combine_identity(kind: BinaryKind, t: Attribute) -> float | int | bool | None:
    """The identity of the associative, commutative `kind` on `t` (None: not one of them)."""
    if is_bool(t):
        return {BinaryKind.OR: False, BinaryKind.MAX: False, BinaryKind.XOR: False,
                BinaryKind.AND: True, BinaryKind.MIN: True}.get(kind)
    if is_float(t):
        return {BinaryKind.ADD: 0.0, BinaryKind.MUL: 1.0, BinaryKind.MAX: -math.inf,
                BinaryKind.MIN: math.inf}.get(kind)
    try:
        info = np.iinfo(to_numpy_dtype(t))
    except (KeyError, ValueError):
        return None
    all_ones = -1 if info.min < 0 else int(info.max)
    return {BinaryKind.ADD: 0, BinaryKind.OR: 0, BinaryKind.XOR: 0, BinaryKind.MUL: 1,
            BinaryKind.AND: all_ones, BinaryKind.MAX: int(info.min),
            BinaryKind.MIN: int(info.max)}.get(kind)


def shared_bytes(t: Attribute) -> int:
    """Bytes one shared element of type `t` is counted at (bools are 32-bit in WGSL)."""
    return max(to_numpy_dtype(t).itemsize, 4)


# ── the structure of an input kernel ─────────────────────────────────────────


@dataclass
class Reduction:
    """A reduce range that can be spread over the threads of a work group."""

    range: pu.RangeOp
    end: pu.EndOp
    interior: list[Operation]  # the ops between the range and its end
    acc: SSAValue
    kind: BinaryKind

    @property
    def dtype(self) -> Attribute:
        assert isinstance(self.acc.type, pu.AccType)
        return self.acc.type.element_type


@dataclass
class Nest:
    """Perfectly nested global ranges (outermost first) and what they enclose."""

    ranges: list[pu.RangeOp]
    ends: list[pu.EndOp]
    prefix: list[Operation]  # pure ops that sat between the ranges, in order
    body: list[Operation]  # the innermost range's body
    reductions: list[Reduction] = field(default_factory=list)  # to spread over a group

    @property
    def extents(self) -> list[int]:
        return [r.end.data - r.start.data for r in self.ranges]

    @property
    def size(self) -> int:
        return math.prod(self.extents)


class Layout:
    """Positions in a flat block: where each op is and where each range/if closes."""

    def __init__(self, ops: Sequence[Operation]):
        self.ops = list(ops)
        self.pos = {op: i for i, op in enumerate(self.ops)}
        self.close: dict[int, int] = {}  # position of a range or if -> of its end/endif
        self.depth: list[int] = []  # how many ranges and ifs enclose each op
        open_ifs: list[int] = []
        depth = 0
        for i, op in enumerate(self.ops):
            depth -= isinstance(op, pu.EndOp | pu.EndIfOp)
            self.depth.append(depth)
            depth += isinstance(op, pu.RangeOp | pu.IfOp)
            if isinstance(op, pu.EndOp):
                self.close[self.pos[op.range.owner]] = i  # type: ignore[index]
            elif isinstance(op, pu.IfOp):
                open_ifs.append(i)
            elif isinstance(op, pu.EndIfOp):
                self.close[open_ifs.pop()] = i


@dataclass
class IndependentLoop:
    """A range of a body (with its end and the ops between) whose iterations are independent."""

    range: pu.RangeOp
    end: pu.EndOp
    interior: list[Operation]


@dataclass
class Epilogue:
    """What follows a body's last group reduction, when its loops can be spread over the
    work group: pure ops, loads, stores, and at least one independent loop (keyed by its
    range). A loop is independent when its body is pure ops, loads and stores, nothing it
    computes is read after it, and each store's index is `j * c + invariant` (c != 0) of
    its variable j: its iterations write distinct addresses. So that no order of the work
    items changes a result, no buffer is both stored and loaded by the ops, nor stored by
    two stores."""

    ops: list[Operation]
    loops: dict[Operation, IndependentLoop]

    @staticmethod
    def of(ops: list[Operation], layout: Layout) -> Epilogue | None:
        loops: dict[Operation, IndependentLoop] = {}
        i = 0
        while i < len(ops):
            op = ops[i]
            if isinstance(op, pu.RangeOp):
                begin = layout.pos[op]
                end = layout.ops[layout.close[begin]]
                assert isinstance(end, pu.EndOp)
                loop = IndependentLoop(op, end, layout.ops[begin + 1:layout.close[begin]])
                if not _independent(loop):
                    return None
                loops[op] = loop
                i += len(loop.interior) + 2
            elif isinstance(op, (*pu.ALU_OPS, pu.LoadOp, pu.AccLoadOp, pu.StoreOp)):
                i += 1
            else:
                return None
        stored = [x.buffer for x in ops if isinstance(x, pu.StoreOp)]
        loaded = {x.buffer for x in ops if isinstance(x, pu.LoadOp)}
        if not loops or len(set(stored)) != len(stored) or loaded.intersection(stored):
            return None
        return Epilogue(ops, loops)


def _independent(loop: IndependentLoop) -> bool:
    """Whether the loop's iterations may run on different work items (see `Epilogue`)."""
    inside = set(loop.interior)
    if not all(isinstance(x, (*pu.ALU_OPS, pu.LoadOp, pu.StoreOp)) for x in loop.interior):
        return False
    if any(use.operation not in inside for x in loop.interior for r in x.results
           for use in r.uses):
        return False
    stores = [x for x in loop.interior if isinstance(x, pu.StoreOp)]
    memo: dict[SSAValue, int | None] = {}
    return all(_coefficient(x.index, loop.range.result, inside, memo) not in (0, None)
               for x in stores)


def _coefficient(value: SSAValue, var: SSAValue, inside: set[Operation],
                 memo: dict[SSAValue, int | None]) -> int | None:
    """c when `value` is `var * c + (a value that does not change with var)`, else None."""
    if value is var:
        return 1
    owner = value.owner
    if not isinstance(owner, Operation) or owner not in inside:
        return 0  # defined before the loop
    if value in memo:
        return memo[value]
    parts = [_coefficient(x, var, inside, memo) for x in owner.operands]
    coefficient: int | None = None
    if None in parts:
        pass
    elif all(c == 0 for c in parts):
        coefficient = 0
    elif isinstance(owner, pu.BinaryOp) and isinstance(value.type, IndexType):
        a, b = parts
        assert a is not None and b is not None
        kind = owner.kind.data
        if kind == BinaryKind.ADD:
            coefficient = a + b
        elif kind == BinaryKind.SUB:
            coefficient = a - b
        elif kind == BinaryKind.MUL:
            factor = owner.rhs.owner if b == 0 else owner.lhs.owner
            if isinstance(factor, pu.ConstOp):
                coefficient = (a or b) * int(factor.scalar)
    memo[value] = coefficient
    return coefficient


# ── the plan ─────────────────────────────────────────────────────────────────


@dataclass
class KernelPlan:
    """How to map one kernel: its top level in order, and the launch."""

    kernel: pu.KernelOp
    layout: Layout  # of the kernel's block, as planned
    items: Sequence[Nest | Operation | list[Operation]]  # nests, other ranges, single ops
    block_size: int  # work items per group
    groups: tuple[int, int]  # work groups in dimensions 0 and 1
    prologue: list[Operation]  # the kernel's index constants, to be placed first
    consts: dict[int, SSAValue]  # the value of each of those constants


class KernelPlanner:
    """Plans one kernel (whose block `hoist_out_of_nests` has prepared): its top level,
    its group reductions and its launch."""

    def __init__(self, kernel: pu.KernelOp, layout: Layout, caps: Capabilities, local: int,
                 group_reduce: bool, threshold: int):
        self.kernel, self.layout, self.caps, self.local = kernel, layout, caps, local
        self.group_reduce, self.threshold = group_reduce, threshold
        self.prologue: list[Operation] = []  # top-level index constants, to reuse
        self.consts: dict[int, SSAValue] = {}
        # the launch, set by `choose_launch`
        self.block_size = 1
        self.groups = (1, 1)

    def fail(self, message: str) -> PassFailedException:
        return kernel_error(self.kernel, message)

    def plan(self) -> KernelPlan | None:
        """The plan, or None when no work is spread over work items: the kernel runs as
        one work item (its global ranges become loops)."""
        ops = self.layout.ops
        self.adopt_constants()
        items = self.top_level()
        nests = [item for item in items if isinstance(item, Nest)]
        if not nests:
            whole = Nest([], [], [], [op for op in ops if op not in self.prologue])
            self.find_reductions(whole)
            if not whole.reductions:
                return None
            items, nests = [whole], [whole]
        self.choose_launch(nests)
        return KernelPlan(self.kernel, self.layout, items, self.block_size, self.groups,
                          self.prologue, self.consts)

    def adopt_constants(self) -> None:
        """Move the kernel's top-level `index` constants to the prologue, to reuse them."""
        for op in self.top_of(self.layout.ops):
            if isinstance(op, pu.ConstOp) and isinstance(op.result.type, IndexType) \
                    and op.scalar not in self.consts:
                self.prologue.append(op)
                self.consts[int(op.scalar)] = op.result

    def top_level(self) -> list[Nest | Operation | list[Operation]]:
        """The kernel's top level: nests, other ranges (as op lists) and single ops."""
        ops, close = self.layout.ops, self.layout.close
        items: list[Nest | Operation | list[Operation]] = []
        pc = 0
        while pc < len(ops):
            op = ops[pc]
            if isinstance(op, pu.RangeOp):
                end = close[pc]
                items.append(self.nest_at(pc) if op.kind.data == RangeKind.GLOBAL
                             else ops[pc:end + 1])
                pc = end + 1
            else:
                items.append(op)
                pc += 1
        return items

    def nest_at(self, begin: int) -> Nest:
        ops, close = self.layout.ops, self.layout.close
        outer = ops[begin]
        assert isinstance(outer, pu.RangeOp)
        nest = Nest([outer], [ops[close[begin]]], [], [])  # type: ignore[list-item]
        lo, hi = begin + 1, close[begin]  # the body is ops[lo:hi]
        while True:
            j = lo
            while j < hi and isinstance(ops[j], pu.ALU_OPS):
                j += 1
            inner = ops[j] if j < hi else None
            if not (isinstance(inner, pu.RangeOp) and inner.kind.data == RangeKind.GLOBAL
                    and close[j] == hi - 1):
                break
            nest.prefix.extend(ops[lo:j])
            nest.ranges.append(inner)
            nest.ends.append(ops[hi - 1])  # type: ignore[arg-type]
            lo, hi = j + 1, hi - 1
        nest.body = ops[lo:hi]
        for op in ops[begin:close[begin]]:  # iterations must not talk through a register
            owner = op.acc.owner if isinstance(op, pu.AccStoreOp) else None
            if isinstance(owner, Operation) and self.layout.pos[owner] < begin:
                assert isinstance(op, pu.AccStoreOp)
                raise self.fail(
                    f"the global nest of %{outer.result.name_hint or 'index'} writes register "
                    f"%{op.acc.name_hint or 'acc'}, defined before it: its iterations depend on "
                    "each other and cannot run as separate work items")
        return nest

    def find_reductions(self, nest: Nest) -> None:
        """Set `nest.reductions` to the reduce ranges of its body to spread over a group."""
        if not self.group_reduce or self.local == 1 or nest.size > SMALL_OUTPUT:
            return
        found: list[Reduction] = []
        body, close, pos = nest.body, self.layout.close, self.layout.pos
        top = self.top_of(body)  # the body's own ops, outside its inner ranges
        i = 0
        while i < len(body):
            op = body[i]
            if isinstance(op, pu.StoreOp):
                break  # a later reduction could read what this store wrote
            if isinstance(op, pu.RangeOp):
                end = close[pos[op]]
                interior = self.layout.ops[pos[op] + 1:end]
                reduction = self.distributable(op, interior)
                if reduction is not None and reduction.acc.owner in top:
                    found.append(reduction)
                elif any(isinstance(x, pu.StoreOp) for x in interior):
                    break
                i += end - pos[op] + 1
                continue
            i += 1
        dtypes = {r.dtype for r in found}
        if sum(shared_bytes(t) for t in dtypes) * self.local <= (
                self.caps.shared_memory_bytes or 0):
            nest.reductions = found

    @staticmethod
    def accumulation(interior: list[Operation]) -> tuple[SSAValue, BinaryKind] | None:
        """The register and combine of a loop body that only does `acc = acc op value`, with
        the register starting at the identity of `op`; None for any other body."""
        stores = [x for x in interior if isinstance(x, pu.AccStoreOp)]
        loads = [x for x in interior if isinstance(x, pu.AccLoadOp)]
        if len(stores) != 1 or len(loads) != 1:
            return None
        combine, acc, old = stores[0].value.owner, stores[0].acc, loads[0].result
        if not (isinstance(combine, pu.BinaryOp) and isinstance(acc.owner, pu.AccOp)
                and loads[0].acc == acc and combine in interior):
            return None
        if old not in combine.operands or combine.lhs == combine.rhs:
            return None
        if old.uses.get_length() != 1 or combine.result.uses.get_length() != 1:
            return None  # a thread's partial value would leak into other ops
        kind = combine.kind.data
        identity = combine_identity(kind, acc.owner.element_type)
        if identity is None or scalar_value(acc.owner.init) != identity:
            return None
        return acc, kind

    @staticmethod
    def top_of(ops: list[Operation]) -> list[Operation]:
        """The ops of a slice of the block that are not inside a range of the slice."""
        top: list[Operation] = []
        depth = 0
        for op in ops:
            if isinstance(op, pu.EndOp):
                depth -= 1
            elif depth == 0:
                top.append(op)
            if isinstance(op, pu.RangeOp):
                depth += 1
        return top

    def distributable(self, op: pu.RangeOp, interior: list[Operation]) -> Reduction | None:
        """`op` as a `Reduction` if its iterations may run on many threads, else None."""
        if op.kind.data != RangeKind.REDUCE or op.end.data - op.start.data < self.threshold:
            return None
        allowed = (*pu.ALU_OPS, pu.LoadOp, pu.AccLoadOp, pu.AccStoreOp)
        if not all(isinstance(x, allowed) for x in interior):
            return None
        update = self.accumulation(interior)
        if update is None:
            return None
        acc, kind = update
        inside = set(interior)
        for x in interior:  # nothing computed per iteration may be read after the loop
            if any(use.operation not in inside for r in x.results for use in r.uses):
                return None
        end_pos = self.layout.close[self.layout.pos[op]]
        for use in acc.uses:  # the register is only read after the loop, never reset
            user = use.operation
            if user not in inside and not (isinstance(user, pu.AccLoadOp)
                                           and self.layout.pos[user] > end_pos):
                return None
        end = self.layout.ops[end_pos]
        assert isinstance(end, pu.EndOp)
        return Reduction(op, end, interior, acc, kind)

    def choose_launch(self, nests: list[Nest]) -> None:
        """Choose the block size and the grid for all nests of the kernel."""
        for nest in nests:
            if nest.ranges:
                self.find_reductions(nest)
        grouped = any(n.reductions for n in nests)
        local = self.local if grouped else max(1, min(self.local, max(n.size for n in nests)))
        groups = max(n.size if n.reductions else -(-n.size // local) for n in nests)
        groups = max(groups, 1)
        assert self.caps.max_groups is not None
        max0, max1 = self.caps.max_groups[0], self.caps.max_groups[1]
        g1 = -(-groups // max0)
        if g1 > max1:
            raise self.fail(f"{groups} work groups of {local} do not fit a grid of "
                            f"{max0} x {max1} groups (target '{self.caps.target}')")
        self.block_size, self.groups = local, (-(-groups // g1), g1)

