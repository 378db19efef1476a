"""Which `upcast` lane ranges `convert-loop-to-uop{vectorize=true}` emits as vectors.

The innermost range of an upcast nest is emitted once, on vectors of its lane count, when
every op of its body has a vector form (`lane_plan`); otherwise once per lane, as scalars.
The plan gives each value of the body that depends on the lane index its form:

* an index `base + stride * lane` (`int`, the stride): sums and differences of such indices
  and products with a constant stay affine;
* `VECTOR`: one value per lane, in one vector register: a float load whose index has
  stride 1 (`pg_uop.vload`) or 2 (`vload ... step(2)`: a 2 x 2 pool's taps), and float
  `add`/`sub`/`mul`/`div`/`max`/`min`/`neg`/`exp` of such values (the uniform operands
  broadcast), and `sum`/`prod` reduces of them (a vector accumulator).

A value not in the plan is uniform: the same in every lane (a load whose index has stride 0
is one). Stores take a stride-1 index (`pg_uop.vstore`, a uniform value broadcast) or a
uniform one. Anything else — a comparison, a mask, a cast of a varying value, a max reduce, a
gather (another stride), a nested range, an integer or bool lane — keeps the scalar lanes.
Each lane of a vector computes exactly the ops its scalar lane would, in the same order, so
both forms give bit-identical results.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import f32, f64
from xdsl.ir import Attribute, Block, Operation, SSAValue

from picograd.dialects import pg_loop, pg_uop
from picograd.dialects.pg import BinaryKind, ReduceKind, UnaryKind

VECTOR = "vector"
LaneForm = int | str  # a stride, or VECTOR
MAX_LANES = 64
VECTOR_LANE_TYPES = (f32, f64)
VECTOR_BINARY = (BinaryKind.ADD, BinaryKind.SUB, BinaryKind.MUL, BinaryKind.DIV, BinaryKind.MAX,
                 BinaryKind.MIN)
VECTOR_UNARY = (UnaryKind.NEG, UnaryKind.EXP)
VECTOR_REDUCE = (ReduceKind.SUM, ReduceKind.PROD)


@dataclass(frozen=True)
class Affine:
    """A lane-dependent index as emitted: `base + stride * lane` (`base` a pg_uop index)."""

    base: SSAValue
    stride: int


class _NoVectorForm(Exception):
    """Some op of the body has no vector form."""


def lane_plan(lanes: pg_loop.RangeOp | pg_loop.ReduceOp) -> dict[SSAValue, LaneForm] | None:
    """The form of each lane-dependent value of `lanes`'s body (an upcast range, or a reduce
    over upcast lanes), or None when the body must keep scalar lanes."""
    count = lanes.end.data - lanes.start.data
    if not 2 <= count <= MAX_LANES or count & (count - 1):
        return None
    plan: dict[SSAValue, LaneForm] = {lanes.index: 1}
    try:
        _plan_block(lanes.body.block, plan, in_reduce=False)
    except _NoVectorForm:
        return None
    return plan


def body_vector_form(r: pg_loop.RangeOp) -> bool:
    """Whether the body of range `r` has a vector form with `r`'s index as the lane index
    (whatever its trip count): what splitting `r` into upcast lanes would vectorise."""
    try:
        _plan_block(r.body.block, {r.index: 1}, in_reduce=False)
    except _NoVectorForm:
        return False
    return True


def reduce_vector_form(red: pg_loop.ReduceOp) -> bool:
    """Whether `red` split into lanes (`split_reduce`) would have a vector form: its body
    has one with its own index as the lane index (after the split, the lane index enters
    every index with the stride the reduce index had), and it yields a lane value to a sum
    or product of f32 or f64."""
    plan: dict[SSAValue, LaneForm] = {red.index: 1}
    try:
        _plan_block(red.body.block, plan, in_reduce=True)
    except _NoVectorForm:
        return False
    yielded = red.body.block.last_op
    assert isinstance(yielded, pg_loop.YieldOp)
    return (plan.get(yielded.value) == VECTOR and red.kind.data in VECTOR_REDUCE
            and _lane_type(red.result.type))


def _plan_block(block: Block, plan: dict[SSAValue, LaneForm], in_reduce: bool) -> None:
    for op in block.ops:
        form = _form(op, plan, in_reduce)
        if form is not None:
            plan[op.results[0]] = form


def _require(condition: bool) -> None:
    if not condition:
        raise _NoVectorForm


def _lane_type(t: Attribute) -> bool:
    return t in VECTOR_LANE_TYPES


def _form(op: Operation, plan: dict[SSAValue, LaneForm], in_reduce: bool) -> LaneForm | None:
    """The form of `op`'s result (None: uniform, or no result)."""
    forms = [plan.get(v) for v in op.operands]
    if all(f is None for f in forms) and not op.regions:
        return None
    match op:
        case pg_loop.IndexOp():
            return _index_form(op, forms)
        case pg_loop.LoadOp():
            stride = plan.get(op.index)
            _require(op.mask is None and stride in (0, 1, 2))
            if stride == 0:
                return None
            _require(_lane_type(op.result.type))
            return VECTOR
        case pg_loop.StoreOp():
            value, _, index = forms
            _require(value in (None, VECTOR) and index in (None, 0, 1))
            _require(index == 1 or value is None)  # a varying value needs its own places
            _require(_lane_type(op.value.type) or index != 1)
            return None
        case pg_loop.ReduceOp():
            _require(not in_reduce)
            _plan_block(op.body.block, plan, in_reduce=True)
            yielded = op.body.block.last_op
            assert isinstance(yielded, pg_loop.YieldOp)
            form = plan.get(yielded.value)
            if form is None:
                return None
            _require(form == VECTOR and op.kind.data in VECTOR_REDUCE
                     and _lane_type(op.result.type))
            return VECTOR
        case pg_loop.YieldOp():
            return None
        case pg_uop.BinaryOp():
            _require(all(f in (None, VECTOR) for f in forms) and op.kind.data in VECTOR_BINARY
                     and _lane_type(op.lhs.type))
            return VECTOR
        case pg_uop.UnaryOp():
            _require(forms == [VECTOR] and op.kind.data in VECTOR_UNARY)
            return VECTOR
        case _:
            raise _NoVectorForm


def _index_form(op: pg_loop.IndexOp, forms: list[LaneForm | None]) -> LaneForm:
    a, b = (0 if f is None else f for f in forms)
    _require(isinstance(a, int) and isinstance(b, int))
    assert isinstance(a, int) and isinstance(b, int)
    kind = op.kind.data
    if kind == BinaryKind.ADD:
        return a + b
    if kind == BinaryKind.SUB:
        return a - b
    _require(kind == BinaryKind.MUL)
    uniform = op.rhs if forms[1] is None else op.lhs if forms[0] is None else None
    _require(uniform is not None and isinstance(uniform.owner, pg_loop.ConstOp))
    assert uniform is not None and isinstance(uniform.owner, pg_loop.ConstOp)
    return (a + b) * uniform.owner.value.data
