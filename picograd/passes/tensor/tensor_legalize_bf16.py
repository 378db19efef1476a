"""`tensor-legalize-bf16`: bfloat16 stored as 16 bits and computed in f32, on every target.

Run by `tensor-simplify` first (every pipeline starts with it), and on its own by name.
Input: `pg_tensor` ops inside `func.func` (stage 1). Output: the same, with no `bf16`
left. Guarantee: every bf16 value is held in an f32 that is exactly a bf16 value (an op's
f32 result is rounded to nearest even, NaN kept a quiet NaN), as torch's CPU computes bf16
ops in float and rounds once; a bf16 argument or result of `@main` is its 16 bits in an
`i16` tensor (the runtime passes the buffer's bytes as they are):

    %0 : tensor<4xbf16>                 %0 : tensor<4xi16>
                                        %w = shl(cast(%0, i32), 16) bitcast to f32   (widen)
    %y = binary add %0, %0 : bf16  ->   %s = binary add %w, %w : f32
                                        %y = round_bf16(%s)           (RNE on the f32 bits)
    return %y : bf16                    return cast(shr(bitcast(%y, i32), 16), i16)

No target has bf16 arithmetic picograd could rely on (LLVM's x86 and C's `__bf16` are not
everywhere; PTX has it from sm_80; WGSL none), so all targets share this one form and the
capability tables list bf16 as storage widened by this pass. A cast into bf16 from f64 or
a wide integer goes through f32 (rounding twice: off by one bf16 ulp only within half an
f32 ulp of a bf16 tie).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import BFloat16Type, FunctionType, ModuleOp, TensorType, f32, i16, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_tensor as T
from picograd.dialects.dtypes import ui16
from picograd.dialects.pg import BinaryKind, CmpKind
from picograd.dialects.pg_tensor import dtype_of, shape_of, tensor
from picograd.dialects.syntax import scalar_value

# ops whose result takes its values from its operands unchanged: retyped, never rounded
_PASS_THROUGH = (T.MovementOp, T.WhereOp, T.ContiguousOp, T.GatherOp)


def _is_bf16(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and isinstance(value.type.element_type,
                                                             BFloat16Type)


def _const(value: float | int, like: SSAValue, dtype) -> T.ConstOp:
    return T.ConstOp(value, tensor(shape_of(like), dtype))


def round_to_bf16(x: SSAValue) -> list[Operation]:
    """Ops that round the f32 tensor `x` to the nearest bf16 (ties to even), as f32: add
    0x7fff plus the lowest kept bit to the bits, clear the low 16; a NaN stays a NaN (its
    payload could round to inf). The last op's result is the rounded value."""
    bits = T.BitcastOp(x, i32)
    sixteen, one = _const(16, x, i32), _const(1, x, i32)
    shifted = T.BinaryOp(BinaryKind.SHR, bits, sixteen)
    lsb = T.BinaryOp(BinaryKind.AND, shifted, one)
    bias = _const(0x7FFF, x, i32)
    biased = T.BinaryOp(BinaryKind.ADD, bits, bias)
    added = T.BinaryOp(BinaryKind.ADD, biased, lsb)
    mask = _const(-65536, x, i32)
    kept = T.BinaryOp(BinaryKind.AND, added, mask)
    rounded = T.BitcastOp(kept, f32)
    is_nan = T.CmpOp(CmpKind.NE, x, x)
    nan = _const(math.nan, x, f32)
    return [bits, sixteen, one, shifted, lsb, bias, biased, added, mask, kept, rounded,
            is_nan, nan, T.WhereOp(is_nan, nan, rounded)]


def widen(bits: SSAValue) -> list[Operation]:
    """Ops that read the i16 tensor `bits` as bf16 values in f32 (exact)."""
    wide = T.CastOp(bits, i32)  # sign-extends; the shift drops the copies of the sign
    sixteen = _const(16, bits, i32)
    shifted = T.BinaryOp(BinaryKind.SHL, wide, sixteen)
    return [wide, sixteen, shifted, T.BitcastOp(shifted, f32)]


def narrow(x: SSAValue) -> list[Operation]:
    """Ops that give the 16 bits (i16) of the f32 tensor `x`, already a bf16 value."""
    bits = T.BitcastOp(x, i32)
    sixteen = _const(16, x, i32)
    shifted = T.BinaryOp(BinaryKind.SHR, bits, sixteen)
    return [bits, sixteen, shifted, T.CastOp(shifted, i16)]


def _retype(value: SSAValue, dtype) -> None:
    value._type = tensor(shape_of(value), dtype)  # pyright: ignore[reportAttributeAccessIssue]


def _legalize_function(fn: func.FuncOp) -> None:
    block = fn.body.blocks[0]
    first = block.first_op
    for arg in block.args:
        if not _is_bf16(arg):
            continue
        _retype(arg, i16)
        uses = list(arg.uses)  # before widen's own use
        ops = widen(arg)
        assert first is not None
        block.insert_ops_before(ops, first)
        for use in uses:
            use.operation.operands[use.index] = ops[-1].results[0]
    for op in list(block.ops):
        if isinstance(op, func.ReturnOp):
            _legalize_return(op)
        elif isinstance(op, T.BitcastOp) and _is_bits_of_bf16(op):
            _replace(block, op, narrow(op.operands[0]))
        elif op.results and _is_bf16(op.results[0]):
            _legalize_op(block, op)
    for op in list(block.ops):
        if isinstance(op, T.CastOp) and op.operands[0].type == op.results[0].type:
            op.results[0].replace_all_uses_with(op.operands[0])
            block.erase_op(op)
    last = block.last_op
    outputs = [v.type for v in last.operands] if isinstance(last, func.ReturnOp) else list(
        fn.function_type.outputs.data)
    fn.function_type = FunctionType.from_lists([a.type for a in block.args], outputs)


def _is_bits_of_bf16(op: T.BitcastOp) -> bool:
    """A bitcast of a bf16 value (now held in f32) to its 16 bits."""
    return dtype_of(op.operands[0]) == f32 and dtype_of(op.results[0]) in (i16, ui16)


def _replace(block, op: Operation, ops: list[Operation]) -> None:
    block.insert_ops_before(ops, op)
    op.results[0].replace_all_uses_with(ops[-1].results[0])
    block.erase_op(op)


def _legalize_op(block, op: Operation) -> None:
    """`op`, of a bf16 result, computed in f32 and (unless it only moves values) rounded."""
    result = op.results[0]
    if isinstance(op, T.ConstOp):
        value = float(np.float32(scalar_value(op.value)))  # already a bf16 value
        _replace(block, op, [_const(value, result, f32)])
        return
    if isinstance(op, T.BitcastOp):  # i16 / ui16 bits read as bf16
        _replace(block, op, widen(op.operands[0]))
        return
    if isinstance(op, T.ScatterAddOp | T.AttentionOp):
        raise PassFailedException(f"tensor-legalize-bf16: {op.name} on bf16 has no lowering; "
                                  "compute it in float32")
    _retype(result, f32)
    if isinstance(op, _PASS_THROUGH):
        return
    uses = list(result.uses)
    ops = round_to_bf16(result)
    block.insert_ops_after(ops, op)
    for use in uses:
        use.operation.operands[use.index] = ops[-1].results[0]


def _legalize_return(ret: func.ReturnOp) -> None:
    block = ret.parent_block()
    assert block is not None
    for n, value in enumerate(list(ret.operands)):
        if not (isinstance(value.type, TensorType) and dtype_of(value) == f32
                and _returns_bf16(ret, n)):
            continue
        ops = narrow(value)
        block.insert_ops_before(ops, ret)
        ret.operands[n] = ops[-1].results[0]


def _returns_bf16(ret: func.ReturnOp, n: int) -> bool:
    fn = ret.parent_op()
    assert isinstance(fn, func.FuncOp)
    out = fn.function_type.outputs.data[n]
    return isinstance(out, TensorType) and isinstance(out.element_type, BFloat16Type)


@dataclass(frozen=True)
class TensorLegalizeBf16Pass(ModulePass):
    """Hold every bf16 value in f32, rounded after each op; bf16 arguments and results as
    their 16 bits (see the module docstring)."""

    name = "tensor-legalize-bf16"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        legalize_bf16(op)


def legalize_bf16(module: ModuleOp) -> None:
    """The pass's rewrite of every function of `module` (`tensor-simplify` runs it first,
    so every pipeline takes bf16 graphs); nothing when no value is bf16."""
    for fn in [o for o in module.walk() if isinstance(o, func.FuncOp)]:
        if any(_is_bf16(a) for a in fn.body.blocks[0].args) or any(
                _is_bf16(r) for o in fn.body.walk() for r in o.results):
            _legalize_function(fn)
