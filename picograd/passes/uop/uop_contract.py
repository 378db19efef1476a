"""`uop-contract`: a reduction's multiply and add become one fused multiply-add.

Input and output: `pg_uop` kernels. Rewrites, for f16 and f32 (scalars and vectors),

    %p = pg_uop.binary mul %a, %b : T                 %l = pg_uop.acc_load %acc : T
    %l = pg_uop.acc_load %acc : T                ->   %s = pg_uop.fma %a, %b, %l : T
    %s = pg_uop.binary add %l, %p : T                 pg_uop.acc_store %acc, %s : T
    pg_uop.acc_store %acc, %s : T

when the product has no other use: the accumulation step of a sum of products (a matmul's,
a convolution's, a dot product's). Guarantee: each rewritten step rounds once instead of
twice (`a * b + c` exactly, then rounded), as BLAS and torch's CPU matmul compute it; every
other op is unchanged. Elementwise `a * b + c` is not contracted: torch rounds it twice.
f64 is not contracted (its exact interpreter is slow; no kernel picograd emits needs it).

In the CPU:LLVM pipeline, after `cse`; `llvm.fma` then costs one instruction where the
multiply and the add cost two (a register-tiled matmul is bound by them).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float16Type, Float32Type, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from picograd.dialects import pg_uop
from picograd.dialects.dtypes import lane_type
from picograd.dialects.pg import BinaryKind
from picograd.passes.rules import Op, Rule, RuleSet, Var

a, b = Var("a"), Var("b")


def _one_use(value: SSAValue) -> Operation | None:
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def _accumulates(product: pg_uop.BinaryOp, step: pg_uop.BinaryOp,
                 load: pg_uop.AccLoadOp) -> bool:
    """A narrow float product that only this add reads, the add only stored back into the
    accumulator it loaded: one step of a sum of products."""
    store = _one_use(step.result)
    return (isinstance(lane_type(product.result.type), Float16Type | Float32Type)
            and _one_use(product.result) is step
            and isinstance(store, pg_uop.AccStoreOp) and store.acc == load.acc)


uop_contract_rules = RuleSet("uop-contract", [
    Rule(Op(pg_uop.BinaryOp, Op(pg_uop.AccLoadOp, Var("acc"), name="load"),        # acc + a*b
            Op(pg_uop.BinaryOp, a, b, kind=BinaryKind.MUL, name="product"),        #  -> fma
            kind=BinaryKind.ADD, commutative=True, name="step"),
         lambda a, b, load: pg_uop.FmaOp(a, b, load.result),
         where=_accumulates),
])


@dataclass(frozen=True)
class UopContractPass(ModulePass):
    """Contract each accumulation `acc + a * b` of f16/f32 into `pg_uop.fma`."""

    name = "uop-contract"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        uop_contract_rules.apply(op)
