"""`convert-loop-to-uop`: linearise each `pg_loop.kernel` into one flat `pg_uop.kernel`.

Input dialects: `pg_loop` kernels (with `pg_uop` ALU ops in their bodies) next to
`func.func @main`. Output dialects: `pg_uop` kernels (same symbols, same arguments) and the
untouched `@main`. Guarantee: no `pg_loop` op remains, and every kernel verifies (its
`range`/`end` pairs nest).

    pg_loop.range %i = 0 to 4 global {                %i = pg_uop.range 0 to 4 global
      %s = pg_loop.reduce sum %j = 0 to 8 : f32 {      %acc = pg_uop.acc 0.0 : f32
        %v = pg_loop.load %a[%j] : ... -> f32          %j = pg_uop.range 0 to 8 reduce
        pg_loop.yield %v : f32                         %v = pg_uop.load %a[%j] : ... -> f32
      }                                                %old = pg_uop.acc_load %acc : f32
      pg_loop.store %s, %out[%i] : ...                 %new = pg_uop.binary add %old, %v : f32
    }                                                  pg_uop.acc_store %acc, %new : f32
                                                       pg_uop.end %j
                                                       %s = pg_uop.acc_load %acc : f32
                                                       pg_uop.store %s, %out[%i] : ...
                                                       pg_uop.end %i

* A reduce starts its accumulator at the kind's identity (sum 0, prod 1, max -inf / the
  smallest integer / false, min +inf / the largest integer / true). On bools sum and prod
  combine with `or` and `and` (a bool accumulator saturates).
* Index ops become `pg_uop` ops on `index`. `pg_loop.index div/mod` are floor division and
  non-negative modulo while `pg_uop.binary` truncates: they agree on the non-negative
  indices that index math produces where it is used (docs/design.md; a negative index only
  occurs under a false mask, whose load is not performed).
* An `unroll` range is emitted once per iteration, in order, its index a constant.
* An `upcast` range nest (see `loop-optimize`) is emitted once per lane with the lane index
  as a constant. When the innermost body is straight-line code with reduces, each reduce
  becomes one loop with one accumulator per lane (lanes are independent, so the lane loop
  moves inside the reduce); otherwise the body is repeated per lane. Option `vectorize`
  (the CPU pipelines) emits the innermost range's lanes as one vector where its body has a
  vector form (`picograd/passes/loop/lane_vectors.py`; emitted by `vector_lanes.py`):
  `vload`/`vstore`, broadcasts, vector ALU ops and accumulators, computing in every lane
  what the scalar copy would.
* A reduce over `upcast` lanes of one inner reduce (`split_reduce`) is one loop with an
  accumulator per lane (a vector one with `vectorize`), whose partial results are then
  combined in lane order from the identity (`vreduce` for vectors). Inside upcast ranges
  (a tile of split reduces, e.g. the (O, C) pairs of a weight gradient's dot products) it
  is still one loop, with those accumulators for every lane of the ranges around it.
* Equal pure ops emitted at one loop level are emitted once (lane copies share their
  uniform index arithmetic).
* With `hoist` (the default), a pure op that depends on no index of an enclosing loop is
  placed before that loop (loop-invariant code motion). Loads, accumulators and ops inside
  a statically empty range stay where they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_loop, pg_uop
from picograd.dialects.dtypes import is_bool, is_float, to_numpy_dtype
from picograd.dialects.flat_vectors import vector_of
from picograd.dialects.pg import BinaryKind, RangeKind, ReduceKind
from picograd.passes.loop.lane_vectors import (
    VECTOR,
    VECTOR_REDUCE,
    Affine,
    LaneForm,
    lane_plan,
)
from picograd.passes.loop.schedule import PURE
from picograd.passes.uop.vector_lanes import VectorLanes

_COMBINE = {ReduceKind.SUM: BinaryKind.ADD, ReduceKind.PROD: BinaryKind.MUL,
            ReduceKind.MAX: BinaryKind.MAX, ReduceKind.MIN: BinaryKind.MIN}
_BOOL_COMBINE = {**_COMBINE, ReduceKind.SUM: BinaryKind.OR, ReduceKind.PROD: BinaryKind.AND}


def reduce_identity(kind: ReduceKind, t: Attribute) -> float | int | bool:
    """The value a `kind` reduction of element type `t` starts from."""
    if kind == ReduceKind.SUM:
        return 0
    if kind == ReduceKind.PROD:
        return 1
    is_max = kind == ReduceKind.MAX
    if is_bool(t):
        return not is_max
    if is_float(t):
        return -np.inf if is_max else np.inf
    info = np.iinfo(to_numpy_dtype(t))
    return int(info.min if is_max else info.max)


class _Linearizer(VectorLanes):
    """Emit the flat body of one kernel, walking the nested `pg_loop` regions in order.

    Loop level 0 is the kernel body, level k the body of the k-th enclosing range. A new value
    is "available at" the shallowest level where it can be computed; with hoisting, a pure op
    goes to the level of its deepest operand, i.e. just before the range that opens the next
    level.
    """

    def __init__(self, kernel: pg_loop.KernelOp, hoist: bool, vectorize: bool = False):
        self.name = kernel.sym_name.data
        self.hoist = hoist
        self.vectorize = vectorize
        # while the lanes of an upcast range are emitted as vectors: their count and forms
        self.vector_lanes = 0
        self.plan: dict[SSAValue, LaneForm] = {}
        self.kernel = pg_uop.KernelOp(self.name, [a.type for a in kernel.args])
        self.block: Block = self.kernel.body.block
        # pg_loop value -> pg_uop value (or, for a lane index of vectors, its affine form)
        self.values: dict[SSAValue, Any] = {}
        self.level: dict[SSAValue, int] = {}  # pg_uop value -> level it is available at
        self.ranges: list[pg_uop.RangeOp] = []  # the open ranges, outermost first
        # per open level: the pure ops placed there, by (name, operands, properties, types)
        self.known: list[dict[tuple, Operation]] = [{}]
        for old, new in zip(kernel.args, self.block.args, strict=True):
            self.values[old], self.level[new] = new, 0
            new.name_hint = old.name_hint

    def _fail(self, message: str) -> PassFailedException:
        return PassFailedException(f"convert-loop-to-uop: @{self.name}: {message}")

    # ── placing ops ─────────────────────────────────────────────────────────

    def _place(self, op: Operation, old: Operation | None = None, pure: bool = False
               ) -> Operation:
        """Insert `op` at its level (the current one unless it is pure and hoisting is on);
        map the results of `old` (the pg_loop op it replaces) to its results. A pure op
        equal to one already at its level (same name, properties and operands) is not
        inserted: the earlier one is used, and returned."""
        level = len(self.ranges)
        if pure and self.hoist:
            level = max([self._floor(), *(self.level[v] for v in op.operands)])
            key = (op.name, tuple(op.operands), tuple(op.properties.items()),
                   tuple(r.type for r in op.results))
            if (earlier := self.known[level].get(key)) is not None:
                op.drop_all_references()
                if old is not None:
                    for before, after in zip(old.results, earlier.results, strict=True):
                        self.values[before] = after
                return earlier
            self.known[level][key] = op
        if level < len(self.ranges):
            self.block.insert_op_before(op, self.ranges[level])
        else:
            self.block.add_op(op)
        for result in op.results:
            self.level[result] = level
        if old is not None:
            for before, after in zip(old.results, op.results, strict=True):
                self.values[before] = after
                after.name_hint = before.name_hint
        return op

    def _open(self, start: int, end: int, kind: RangeKind, index: SSAValue) -> pg_uop.RangeOp:
        op = pg_uop.RangeOp(start, end, kind)
        self._place(op)
        op.result.name_hint = index.name_hint
        self.values[index] = op.result
        self.ranges.append(op)
        self.known.append({})
        self.level[op.result] = len(self.ranges)
        return op

    def _close(self, range_op: pg_uop.RangeOp) -> None:
        self.ranges.pop()
        self.known.pop()  # what the range computed is not known after it (it may not run)
        self._place(pg_uop.EndOp(range_op.result))

    def _floor(self) -> int:
        """The shallowest level an op may be hoisted to: hoisting out of a statically empty
        range would run an op that never runs."""
        empty = [n for n, r in enumerate(self.ranges, 1) if r.end.data <= r.start.data]
        return max(empty, default=0)

    # ── walking ─────────────────────────────────────────────────────────────

    def run(self, body: Block) -> pg_uop.KernelOp:
        self._block(body)
        return self.kernel

    def _block(self, block: Block) -> None:
        for op in list(block.ops):
            self._op(op)

    def _op(self, op: Operation) -> None:
        if self.vector_lanes and self._lane_op(op):
            return
        v = self.values
        match op:
            case pg_loop.RangeOp():
                self._range(op)
            case pg_loop.ReduceOp():
                self._reduce(op)
            case pg_loop.YieldOp():
                pass  # consumed by _reduce
            case pg_loop.ConstOp():
                self._place(pg_uop.ConstOp(op.value.data, IndexType()), op, pure=True)
            case pg_loop.IndexOp():
                self._place(pg_uop.BinaryOp(op.kind.data, v[op.lhs], v[op.rhs]), op, pure=True)
            case pg_loop.CmpOp():
                self._place(pg_uop.CmpOp(op.kind.data, v[op.lhs], v[op.rhs]), op, pure=True)
            case pg_loop.AndOp():
                self._place(pg_uop.BinaryOp(BinaryKind.AND, v[op.lhs], v[op.rhs]), op, pure=True)
            case pg_loop.LoadOp():
                mask = v[op.mask] if op.mask is not None else None
                other = op.other.value.data if op.other is not None else 0
                self._place(pg_uop.LoadOp(v[op.buffer], v[op.index], mask, other), op)
            case pg_loop.StoreOp():
                self._place(pg_uop.StoreOp(v[op.value], v[op.buffer], v[op.index]), op)
            case _ if isinstance(op, pg_uop.ALU_OPS):
                # already a pg_uop op: copy it (an upcast body is emitted once per lane),
                # pointing its operands at the new values
                new = op.clone()
                new.operands = [v[x] for x in op.operands]
                self._place(new, op, pure=True)
            case _:
                raise self._fail(f"{op.name} cannot be linearised")

    def _range(self, op: pg_loop.RangeOp) -> None:
        if op.kind.data == RangeKind.UPCAST:
            self._lanes(op)
        elif op.kind.data == RangeKind.UNROLL:
            self._unrolled(op)
        else:
            range_op = self._open(op.start.data, op.end.data, op.kind.data, op.index)
            self._block(op.body.block)
            self._close(range_op)

    # ── upcast lanes and unrolled ranges ────────────────────────────────────

    def _unrolled(self, op: pg_loop.RangeOp) -> None:
        """An `unroll` range as straight-line code: its body once per iteration, in order,
        with the index as a constant."""
        base = self.values
        for value in range(op.start.data, op.end.data):
            self.values = dict(base)
            self.values[op.index] = self._lane_const(value)
            self._block(op.body.block)
        self.values = base

    def _lane_const(self, value: int) -> SSAValue:
        return self._place(pg_uop.ConstOp(value, IndexType()), pure=True).results[0]

    def _lanes(self, op: pg_loop.RangeOp) -> None:
        """Emit a nest of `upcast` ranges once per lane, the lane indices as constants.

        The nest is `op` and the `upcast` ranges each level holds as its last op, after pure
        ops only (index arithmetic of that level's lane, emitted once per lane of the levels
        so far). Lanes are independent, so when the innermost body is straight-line code and
        reduces, the lane loop is interchanged into each reduce: one loop, one accumulator
        per lane. Otherwise the whole body is simply repeated per lane. With `vectorize`,
        the innermost range's lanes are one vector when its body has a vector form
        (`lane_plan`): emitted once, an accumulator per lane of the outer levels.
        """
        nest, preludes = [op], []
        while True:
            ops = list(nest[-1].body.block.ops)
            last = ops[-1] if ops else None
            if not (isinstance(last, pg_loop.RangeOp) and last.kind.data == RangeKind.UPCAST
                    and all(isinstance(x, PURE) for x in ops[:-1])):
                break
            preludes.append(ops[:-1])
            nest.append(last)
        preludes.append([])
        body = nest[-1].body.block
        base = self.values
        plan = lane_plan(nest[-1]) if self.vectorize and not self.vector_lanes else None
        expanded = nest[:-1] if plan is not None else nest
        envs = self._lane_envs(expanded, preludes, base)
        if plan is not None:  # the innermost lanes as vectors: its index an affine form
            inner = nest[-1]
            for env in envs:
                env[inner.index] = Affine(self._lane_const(inner.start.data), 1)
            self.vector_lanes, self.plan = inner.end.data - inner.start.data, plan
        interleave = (any(isinstance(x, pg_loop.ReduceOp) for x in body.ops)
                      and not any(isinstance(x, pg_loop.RangeOp) for x in body.ops))
        if not interleave:
            for env in envs:
                self.values = env
                self._block(body)
        else:
            for x in body.ops:
                if isinstance(x, pg_loop.ReduceOp) and _is_lane_reduce(x):
                    self._partial_reduces(x, envs)  # a tile of split reduces: one loop
                    continue
                if isinstance(x, pg_loop.ReduceOp):
                    self._reduce_lanes(x, envs)
                    continue
                for env in envs:
                    self.values = env
                    self._op(x)
        self.values = base
        self.vector_lanes, self.plan = 0, {}

    def _lane_envs(self, nest: list[pg_loop.RangeOp], preludes: list[list[Operation]],
                   base: dict[SSAValue, Any]) -> list[dict[SSAValue, Any]]:
        """One environment per lane of `nest` (outermost first), each lane index a constant,
        each level's prelude emitted in it."""
        envs: list[dict[SSAValue, Any]] = [dict(base)]
        for r, prelude in zip(nest, preludes, strict=False):
            deeper = []
            for env in envs:
                for value in range(r.start.data, r.end.data):
                    lane_env = dict(env)
                    lane_env[r.index] = self._lane_const(value)
                    self.values = lane_env
                    for x in prelude:
                        self._op(x)
                    deeper.append(lane_env)
            envs = deeper
        return envs

    def _reduce_lanes(self, op: pg_loop.ReduceOp, envs: list[dict[SSAValue, Any]]
                      ) -> None:
        """One reduce loop for every lane of `envs`, one accumulator each."""
        t = op.result.type
        kind = op.kind.data
        combine = (_BOOL_COMBINE if is_bool(t) else _COMBINE)[kind]
        acc_type = vector_of(t, self.vector_lanes) if self.plan.get(op.result) == VECTOR else t
        accs: list[pg_uop.AccOp] = []
        for lane in range(len(envs)):
            acc = pg_uop.AccOp(reduce_identity(kind, t), acc_type)
            self._place(acc)
            acc.result.name_hint = f"{op.result.name_hint or 'red'}_acc{lane}"
            accs.append(acc)
        range_op = self._open(op.start.data, op.end.data, op.range_kind.data, op.index)
        yielded = op.body.block.last_op
        assert isinstance(yielded, pg_loop.YieldOp)  # the reduce verifier guarantees it
        for env in envs:
            env[op.index] = range_op.result
        self._shared_by_lanes(list(op.body.block.ops), envs)
        for env, acc in zip(envs, accs, strict=True):
            old = pg_uop.AccLoadOp(acc.result)
            new = pg_uop.BinaryOp(combine, old, env[yielded.value])
            for step in (old, new, pg_uop.AccStoreOp(acc.result, new.result)):
                self._place(step)
        self._close(range_op)
        for env, acc in zip(envs, accs, strict=True):
            self.values = env
            self._place(pg_uop.AccLoadOp(acc.result), op)

    def _shared_by_lanes(self, ops: list[Operation], envs: list[dict[SSAValue, Any]]
                         ) -> None:
        """Emit a reduce body for every lane, each op once per group of lanes that give it
        the same operands: what does not depend on a lane index (a row's load in a column
        tile, index arithmetic) is emitted once, not once per lane. A reduce body holds no
        stores, so sharing a load between lanes is exact; it also keeps the IR, and so every
        later pass, from growing with the lane count."""
        if any(x.regions for x in ops):  # nested loops: plain per-lane copies
            for env in envs:
                self.values = env
                for x in ops:
                    self._op(x)
            return
        for x in ops:
            first_of: dict[tuple[Any, ...], dict[SSAValue, Any]] = {}
            for env in envs:
                first = first_of.setdefault(tuple(env[v] for v in x.operands), env)
                if first is env:
                    self.values = env
                    self._op(x)
                else:
                    for r in x.results:
                        env[r] = first[r]

    def _partial_reduces(self, op: pg_loop.ReduceOp,
                         envs: list[dict[SSAValue, Any]] | None = None) -> None:
        """A reduce over `upcast` lanes of one inner reduce each (`split_reduce`), for
        every lane of `envs` (the lanes of the upcast ranges around it; the current values
        when None): the inner reduces of all of them run as one loop with one accumulator
        per lane (a vector accumulator per lane of `envs` when the split lanes have a vector
        form), then each one's split lanes are combined in lane order, from the identity,
        as the reduce over lanes does."""
        inner = op.body.block.first_op
        assert isinstance(inner, pg_loop.ReduceOp)
        t, kind = op.result.type, op.kind.data
        combine = (_BOOL_COMBINE if is_bool(t) else _COMBINE)[kind]
        base = self.values
        outer_envs = [base] if envs is None else envs
        plan = (lane_plan(op) if self.vectorize and not self.vector_lanes
                and kind in VECTOR_REDUCE else None)
        if plan is not None:
            lane_envs = [dict(env) for env in outer_envs]
            for env in lane_envs:
                env[op.index] = Affine(self._lane_const(op.start.data), 1)
            self.vector_lanes, self.plan = op.end.data - op.start.data, plan
            self._reduce_lanes(inner, lane_envs)
            self.vector_lanes, self.plan = 0, {}
            # ((v0 + v1) + ...) is ((identity + v0) + v1) + ...: each lane started from
            # the identity, so no lane holds -0.0 (x + y is -0.0 only when both are), and
            # a product's identity 1 changes nothing
            for env, lanes in zip(outer_envs, lane_envs, strict=True):
                self.values = env
                total = self._place(pg_uop.VReduceOp(combine, lanes[inner.result]), pure=True)
                env[op.result] = total.results[0]
        else:
            width = op.end.data - op.start.data
            lane_envs = []
            for env in outer_envs:
                for lane in range(op.start.data, op.end.data):
                    lane_envs.append(dict(env))
                    lane_envs[-1][op.index] = self._lane_const(lane)
            self._reduce_lanes(inner, lane_envs)
            for n, env in enumerate(outer_envs):
                self.values = env
                total = self._place(pg_uop.ConstOp(reduce_identity(kind, t), t),
                                    pure=True).results[0]
                for partial in lane_envs[n * width:(n + 1) * width]:
                    total = self._place(pg_uop.BinaryOp(combine, total, partial[inner.result]),
                                        pure=True).results[0]
                env[op.result] = total
        self.values = base

    def _reduce(self, op: pg_loop.ReduceOp) -> None:
        if _is_lane_reduce(op):
            self._partial_reduces(op)
            return
        t = op.result.type
        kind = op.kind.data
        acc = pg_uop.AccOp(reduce_identity(kind, t), t)
        self._place(acc)
        acc.result.name_hint = f"{op.result.name_hint or 'red'}_acc"
        range_op = self._open(op.start.data, op.end.data, op.range_kind.data, op.index)
        self._block(op.body.block)
        yielded = op.body.block.last_op
        assert isinstance(yielded, pg_loop.YieldOp)  # the reduce verifier guarantees it
        old = pg_uop.AccLoadOp(acc.result)
        combine = (_BOOL_COMBINE if is_bool(t) else _COMBINE)[kind]
        new = pg_uop.BinaryOp(combine, old, self.values[yielded.value])
        for step in (old, new, pg_uop.AccStoreOp(acc.result, new.result)):
            self._place(step)
        self._close(range_op)
        self._place(pg_uop.AccLoadOp(acc.result), op)


def _is_lane_reduce(op: pg_loop.ReduceOp) -> bool:
    """A reduce over upcast lanes whose body is one inner reduce (what `split_reduce`
    makes)."""
    ops = list(op.body.block.ops)
    return (op.range_kind.data == RangeKind.UPCAST and len(ops) == 2
            and isinstance(ops[0], pg_loop.ReduceOp) and isinstance(ops[1], pg_loop.YieldOp)
            and ops[1].value is ops[0].result)


@dataclass(frozen=True)
class ConvertLoopToUopPass(ModulePass):
    """pg_loop kernels -> flat pg_uop kernels (same symbols and arguments); `@main` is kept.

    Input: `pg_loop.kernel` ops (bodies may hold pg_uop ALU ops). Output: `pg_uop.kernel`
    ops, one flat block each. Guarantee: no `pg_loop` op remains; ranges nest. Option
    `hoist` (default true) moves loop-invariant pure ops out of their loops; `vectorize`
    (default false) emits upcast lanes as vectors where they have a vector form.
    """

    name = "convert-loop-to-uop"

    hoist: bool = True
    vectorize: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in list(op.ops):
            if not isinstance(kernel, pg_loop.KernelOp):
                continue
            lowered = _Linearizer(kernel, self.hoist, self.vectorize).run(kernel.body.block)
            op.body.block.insert_op_before(lowered, kernel)
            op.body.block.detach_op(kernel).erase()
