"""`tensor-simplify`: algebra, constant folding and view folding on `pg_tensor` graphs.

Constants are splats (`pg_tensor.const 1.5 : tensor<4x4xf32>`), so folding an elementwise op
of constants gives a splat of the result type, and any view of a splat (reshape, permute,
expand, flip, slice; pad with the same value) is a splat of the view's shape. Chains of one
view kind collapse into one (`reshape(reshape x)`, `permute(permute x)`, `flip(flip x)`,
`expand(expand x)`), and views that change nothing disappear.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from picograd.dialects import pg_tensor as T
from picograd.dialects.dtypes import is_int
from picograd.dialects.pg import ReduceKind
from picograd.dialects.pg_tensor import dtype_of, shape_of
from picograd.passes.rules import Const, Op, OpFamily, Rule, RuleSet, Var, same_number
from picograd.passes.rules.algebra import algebra_rules, const_like
from picograd.passes.rules.scalar import normalize
from picograd.passes.tensor.tensor_legalize_bf16 import legalize_bf16

F = OpFamily(unary=T.UnaryOp, binary=T.BinaryOp, cmp=T.CmpOp, where=T.WhereOp, cast=T.CastOp)
SPLAT_VIEWS = (T.ReshapeOp, T.PermuteOp, T.ExpandOp, T.FlipOp, T.SliceOp)


# ── guards ───────────────────────────────────────────────────────────────────


def keeps_type(op: Operation) -> bool:
    return op.results[0].type == op.operands[0].type


def identity_perm(op: T.PermuteOp) -> bool:
    return op.order == tuple(range(len(op.order)))


def no_flip(op: T.FlipOp) -> bool:
    return not op.axis_list


def no_pad(op: T.PadOp) -> bool:
    return all(lo == hi == 0 for lo, hi in op.pads)


def whole_slice(op: T.SliceOp) -> bool:
    return keeps_type(op) and all(s == 0 for s in op.starts) and all(s == 1 for s in op.steps)


def pads_with(op: T.PadOp, a: float | int) -> bool:
    dtype = dtype_of(op.input)
    return same_number(normalize(op.scalar, dtype), normalize(a, dtype))


def nonempty_max_min(op: T.ReduceOp) -> bool:
    return op.kind.data in (ReduceKind.MAX, ReduceKind.MIN) and 0 not in shape_of(op.input)


def exact_single(op: T.ReduceOp) -> bool:
    """Reducing size-1 axes returns the element, except float sums (acc 0.0 + -0.0 = 0.0)."""
    exact = op.kind.data != ReduceKind.SUM or is_int(dtype_of(op.input))
    return exact and keeps_type(op)


# ── replacements ─────────────────────────────────────────────────────────────


def reshaped(op: T.ReshapeOp, x: SSAValue) -> SSAValue | Operation:
    return x if x.type == op.result.type else T.ReshapeOp(x, shape_of(op.result))


def expanded(op: T.ExpandOp, x: SSAValue) -> SSAValue | Operation:
    return x if x.type == op.result.type else T.ExpandOp(x, shape_of(op.result))


def compose_permutes(op: T.PermuteOp, inner: T.PermuteOp, x: SSAValue) -> SSAValue | Operation:
    # result dim i = inner-result dim op[i] = x dim inner[op[i]]
    order = tuple(inner.order[p] for p in op.order)
    return x if order == tuple(range(len(order))) else T.PermuteOp(x, order)


def merge_flips(op: T.FlipOp, inner: T.FlipOp, x: SSAValue) -> SSAValue | Operation:
    axes = set(op.axis_list) ^ set(inner.axis_list)  # flipping an axis twice undoes it
    return T.FlipOp(x, sorted(axes)) if axes else x


def splat(op: Operation, a: float | int) -> Operation:
    return const_like(op.results[0], a)


# ── the rule table ───────────────────────────────────────────────────────────

x, a = Var("x"), Const(name="a")
Reshape, Expand, Permute, Flip = T.ReshapeOp, T.ExpandOp, T.PermuteOp, T.FlipOp

tensor_view_rules = [
    Rule(Op(Reshape, x, name="op"), lambda x: x, where=keeps_type),     # reshape(x, shape x) -> x
    Rule(Op(Reshape, Op(Reshape, x), name="op"), reshaped),             # reshape(reshape x) -> x'
    Rule(Op(Expand, x, name="op"), lambda x: x, where=keeps_type),      # expand(x, shape x) -> x
    Rule(Op(Expand, Op(Expand, x), name="op"), expanded),               # expand(expand x) -> x'
    Rule(Op(Permute, x, name="op"), lambda x: x, where=identity_perm),  # permute(x, id) -> x
    Rule(Op(Permute, Op(Permute, x, name="inner"), name="op"),          # permute(permute x) -> x'
         compose_permutes),
    Rule(Op(Flip, x, name="op"), lambda x: x, where=no_flip),           # flip(x, []) -> x
    Rule(Op(Flip, Op(Flip, x, name="inner"), name="op"), merge_flips),  # flip(flip x) -> x'
    Rule(Op(T.PadOp, x, name="op"), lambda x: x, where=no_pad),         # pad(x, 0, 0) -> x
    Rule(Op(T.SliceOp, x, name="op"), lambda x: x, where=whole_slice),  # x[0::1] -> x
    Rule(Op(SPLAT_VIEWS, a, name="op"), splat),                         # view(splat a) -> splat a
    Rule(Op(T.PadOp, a, name="op"), splat, where=pads_with),            # pad(splat a, a) -> splat a
]

tensor_reduce_rules = [
    Rule(Op(T.ReduceOp, a, name="op"), splat, where=nonempty_max_min),  # max(splat a) -> splat a
    Rule(Op(T.ReduceOp, x, name="op"), lambda x: x, where=exact_single),  # reduce 1-axes -> x
]

tensor_simplify_rules = RuleSet(
    "tensor-simplify", [*algebra_rules(F), *tensor_view_rules, *tensor_reduce_rules])


@dataclass(frozen=True)
class TensorSimplifyPass(ModulePass):
    """Simplify `pg_tensor` graphs: algebra, constant folding, view folding, to a fixpoint.

    Input: `pg_tensor` ops inside `func.func` (stage 1). Output: the same dialects.
    Options: `max_iterations` (walks before `RewriteLimitError`).
    Guarantee: every result is bit-identical for every input (NaN, inf and -0.0 included);
    no elementwise op or view of splat constants remains unless folding it is undefined in C;
    no chain of two views of one kind remains; dead pure ops are erased.
    """

    name = "tensor-simplify"

    max_iterations: int = 50

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # bf16 first (held in f32, stored as i16: tensor_legalize_bf16.py), so that every
        # pipeline, which all start here, takes bf16 graphs; a no-op without bf16
        legalize_bf16(op)
        tensor_simplify_rules.apply(op, max_iterations=self.max_iterations)
