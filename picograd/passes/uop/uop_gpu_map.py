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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_uop as pu
from picograd.dialects.capabilities import Capabilities, capabilities
from picograd.dialects.dtypes import is_bool, is_float, to_numpy_dtype
from picograd.dialects.pg import (
    BinaryKind,
    BufferType,
    CmpKind,
    RangeKind,
    RangeKindAttr,
    SpecialKind,
)
from picograd.dialects.syntax import scalar_value
from picograd.errors import DeviceError

PASS = "uop-gpu-map"

# Group reductions pay off when there are few outputs: one work group per output.
SMALL_OUTPUT = 4096

_INDEX = IndexType()


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
class _Reduction:
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
class _Nest:
    """Perfectly nested global ranges (outermost first) and what they enclose."""

    ranges: list[pu.RangeOp]
    ends: list[pu.EndOp]
    prefix: list[Operation]  # pure ops that sat between the ranges, in order
    body: list[Operation]  # the innermost range's body
    reductions: list[_Reduction] = field(default_factory=list)  # to spread over a group

    @property
    def extents(self) -> list[int]:
        return [r.end.data - r.start.data for r in self.ranges]

    @property
    def size(self) -> int:
        return math.prod(self.extents)


class _Layout:
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
class _Loop:
    """A range of a body (with its end and the ops between) whose iterations are independent."""

    range: pu.RangeOp
    end: pu.EndOp
    interior: list[Operation]


@dataclass
class _Epilogue:
    """What follows a body's last group reduction, when its loops can be spread over the
    work group: pure ops, loads, stores, and at least one independent loop (keyed by its
    range). A loop is independent when its body is pure ops, loads and stores, nothing it
    computes is read after it, and each store's index is `j * c + invariant` (c != 0) of
    its variable j: its iterations write distinct addresses. So that no order of the work
    items changes a result, no buffer is both stored and loaded by the ops, nor stored by
    two stores."""

    ops: list[Operation]
    loops: dict[Operation, _Loop]

    @staticmethod
    def of(ops: list[Operation], layout: _Layout) -> _Epilogue | None:
        loops: dict[Operation, _Loop] = {}
        i = 0
        while i < len(ops):
            op = ops[i]
            if isinstance(op, pu.RangeOp):
                begin = layout.pos[op]
                end = layout.ops[layout.close[begin]]
                assert isinstance(end, pu.EndOp)
                loop = _Loop(op, end, layout.ops[begin + 1:layout.close[begin]])
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
        return _Epilogue(ops, loops)


def _independent(loop: _Loop) -> bool:
    """Whether the loop's iterations may run on different work items (see `_Epilogue`)."""
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


# ── the pass ─────────────────────────────────────────────────────────────────


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
                _KernelMapper(kernel, caps, local, self.group_reduce,
                              max(1, self.reduce_threshold)).run()


class _KernelMapper:
    """Maps one kernel: analyse its top level, pick the launch, emit the new flat block."""

    def __init__(self, kernel: pu.KernelOp, caps: Capabilities, local: int,
                 group_reduce: bool, threshold: int):
        self.kernel, self.caps, self.local = kernel, caps, local
        self.group_reduce, self.threshold = group_reduce, threshold
        self.name = kernel.sym_name.data
        self.layout = _Layout(list(kernel.body.block.ops))
        self.out: list[Operation] = []  # the new flat block, in order
        self.prologue: list[Operation] = []  # ids and constants, placed first
        self.consts: dict[int, SSAValue] = {}
        self.dead: list[Operation] = []  # replaced ranges and ends, erased at the end
        self.fixed: set[Operation] = set()  # ops that stand for a range index: not hoisted
        self.shared: dict[Attribute, SSAValue] = {}
        self.ids: dict[str, SSAValue] = {}
        self.grouped_left = 0  # group-reduced nests not emitted yet (they reuse `shared`)
        # the launch, set by `plan`
        self.block_size = 1
        self.groups = (1, 1)

    def fail(self, message: str) -> PassFailedException:
        return PassFailedException(f"{PASS}: @{self.name}: {message}")

    # ── analysis ────────────────────────────────────────────────────────────

    def run(self) -> None:
        ops = self.layout.ops
        if any(isinstance(op, pu.SpecialOp | pu.IfOp | pu.SharedOp | pu.BarrierOp)
               for op in ops):
            return  # already in GPU form
        self.hoist_out_of_nests()
        ops = self.layout.ops
        self.adopt_constants()
        items = self.top_level()
        nests = [item for item in items if isinstance(item, _Nest)]
        if not nests:
            whole = _Nest([], [], [], [op for op in ops if op not in self.prologue])
            self.find_reductions(whole)
            if not whole.reductions:
                self.relabel_global_ranges(ops)
                return
            items, nests = [whole], [whole]
        self.plan(nests)
        self.emit_kernel(items)

    def hoist_out_of_nests(self) -> None:
        """Move the pure ops that are used after the global nest they sit in before it.

        In the sequential kernel such a use reads the value of the last iteration; once
        the nest is spread over work items it would read the item's own. A pure op of
        values from before the nest has the same value in every iteration, so it moves;
        anything else fails.
        """
        block = self.kernel.body.block
        for _ in range(len(self.layout.ops) + 1):
            layout = self.layout
            escape = None
            for begin, op in enumerate(layout.ops):
                if layout.depth[begin] == 0 and isinstance(op, pu.RangeOp) \
                        and op.kind.data == RangeKind.GLOBAL:
                    escape = self.escaping(begin, layout.close[begin])
                    if escape is not None:
                        self.move_before(escape, escape, op, layout, begin, set())
                        break
            if escape is None:
                return
            self.layout = _Layout(list(block.ops))
        raise AssertionError("hoisting did not settle")

    def escaping(self, begin: int, end: int) -> Operation | None:
        """An op inside `(begin, end)` of the block whose value is used after `end`."""
        for op in self.layout.ops[begin + 1:end]:
            for result in op.results:
                if any(self.layout.pos.get(use.operation, -1) > end for use in result.uses):
                    return op
        return None

    def move_before(self, root: Operation, op: Operation, anchor: Operation, layout: _Layout,
                    begin: int, moved: set[Operation]) -> None:
        """Move pure `op`, and the ops it needs from position `begin` on, before `anchor`;
        fail naming `root` (the op used after the nest) if one of them is not pure."""
        if op in moved:
            return
        if not isinstance(op, pu.ALU_OPS):
            via = "" if op is root else (
                f" (it depends on '{op.name}' %{op.results[0].name_hint or 'value'})")
            raise self.fail(
                f"'{root.name}' (%{root.results[0].name_hint or 'value'}) is defined in a "
                f"global nest and used after it, and cannot be hoisted out of it{via}")
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and layout.pos.get(owner, -1) >= begin:
                self.move_before(root, owner, anchor, layout, begin, moved)
        moved.add(op)
        block = self.kernel.body.block
        block.detach_op(op)
        block.insert_op_before(op, anchor)

    def adopt_constants(self) -> None:
        """Move the kernel's top-level `index` constants to the prologue, to reuse them."""
        for op in self.top_of(self.layout.ops):
            if isinstance(op, pu.ConstOp) and isinstance(op.result.type, IndexType) \
                    and op.scalar not in self.consts:
                self.prologue.append(op)
                self.consts[int(op.scalar)] = op.result

    def top_level(self) -> list[_Nest | Operation | list[Operation]]:
        """The kernel's top level: nests, other ranges (as op lists) and single ops."""
        ops, close = self.layout.ops, self.layout.close
        items: list[_Nest | Operation | list[Operation]] = []
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

    def nest_at(self, begin: int) -> _Nest:
        ops, close = self.layout.ops, self.layout.close
        outer = ops[begin]
        assert isinstance(outer, pu.RangeOp)
        nest = _Nest([outer], [ops[close[begin]]], [], [])  # type: ignore[list-item]
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

    def find_reductions(self, nest: _Nest) -> None:
        """Set `nest.reductions` to the reduce ranges of its body to spread over a group."""
        if not self.group_reduce or self.local == 1 or nest.size > SMALL_OUTPUT:
            return
        found: list[_Reduction] = []
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

    def distributable(self, op: pu.RangeOp, interior: list[Operation]) -> _Reduction | None:
        """`op` as a `_Reduction` if its iterations may run on many threads, else None."""
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
        return _Reduction(op, end, interior, acc, kind)

    def plan(self, nests: list[_Nest]) -> None:
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

    def emit_kernel(self, items: Sequence[_Nest | Operation | list[Operation]]) -> None:
        serial: list[Operation] = []  # top-level work that one work item does
        self.grouped_left = sum(isinstance(x, _Nest) and bool(x.reductions) for x in items)
        for item in items:
            if isinstance(item, _Nest):
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
        self.relabel_global_ranges(self.out)
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

    def emit_nest(self, nest: _Nest) -> None:
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

    def emit_indices(self, nest: _Nest, ident: SSAValue) -> None:
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

    def emit_grouped_body(self, nest: _Nest) -> None:
        pos = {op: i for i, op in enumerate(nest.body)}
        i = 0
        rest = _Epilogue.of(nest.body[pos[nest.reductions[-1].end] + 1:], self.layout)
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

    def emit_epilogue(self, rest: _Epilogue) -> None:
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

    def emit_tree(self, reduction: _Reduction, last: bool, broadcast: bool) -> None:
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

    @staticmethod
    def relabel_global_ranges(ops: Sequence[Operation]) -> None:
        """Global ranges that are not part of a nest run as sequential loops."""
        for op in ops:
            if isinstance(op, pu.RangeOp) and op.kind.data == RangeKind.GLOBAL:
                op.kind = RangeKindAttr(RangeKind.LOOP)

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
        layout = _Layout(self.out)
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


__all__ = ["SMALL_OUTPUT", "UopGpuMapPass", "combine_identity"]
