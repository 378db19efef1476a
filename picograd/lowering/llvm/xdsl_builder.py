"""`XdslBuilder`: a kernel as xDSL `llvm` dialect ops (the target stage; see `builder.py`).

The function is an `llvm.func` whose entry block takes the kernel's arguments; constants
(`llvm.mlir.constant`) and hoisted splats sit at the top of the entry block, the allocas after
the `1 : i32` that each of them counts. `printer.py` prints such functions as LLVM IR.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from picograd.lowering.llvm.builder import LlvmBuilder

_NO_WRAP = llvm.OverflowAttr((llvm.OverflowFlag.NO_SIGNED_WRAP, llvm.OverflowFlag.NO_UNSIGNED_WRAP))

_BINARY: dict[str, type[Operation]] = {
    "add": llvm.AddOp, "sub": llvm.SubOp, "mul": llvm.MulOp, "sdiv": llvm.SDivOp,
    "udiv": llvm.UDivOp, "srem": llvm.SRemOp, "urem": llvm.URemOp, "shl": llvm.ShlOp,
    "ashr": llvm.AShrOp, "lshr": llvm.LShrOp, "and": llvm.AndOp, "or": llvm.OrOp,
    "xor": llvm.XOrOp, "fadd": llvm.FAddOp, "fsub": llvm.FSubOp, "fmul": llvm.FMulOp,
    "fdiv": llvm.FDivOp,
}
_CASTS: dict[str, type[Operation]] = {
    "trunc": llvm.TruncOp, "zext": llvm.ZExtOp, "sext": llvm.SExtOp, "sitofp": llvm.SIToFPOp,
    "fpext": llvm.FPExtOp, "fptrunc": llvm.FPTruncOp, "bitcast": llvm.BitcastOp,
}
_REDUCE: dict[str, type[Operation]] = {"fadd": llvm.VectorReduceFAddOp,
                                       "fmul": llvm.VectorReduceFMulOp}


class XdslBuilder(LlvmBuilder):
    """Builds an `llvm.func` of `num_pointers` pointer arguments and `(start, end)`."""

    def __init__(self, num_pointers: int):
        super().__init__()
        self.num_pointers = num_pointers
        self.entry = Block(arg_types=[llvm.LLVMPointerType()] * num_pointers + [i64, i64])
        self.region = Region(self.entry)
        self.block = self.entry
        self._hoisted: Operation | None = None  # the last op placed at the entry's top
        self._alloca_size: SSAValue | None = None  # the `1 : i32` every alloca counts
        self._alloca_anchor: Operation | None = None  # the last entry-block alloca

    # ── placement ───────────────────────────────────────────────────────────

    def _hoist(self, op: Operation) -> SSAValue:
        """Place `op` (whose operands are hoisted ones) at the top of the entry block."""
        if self._hoisted is not None:
            self.entry.insert_op_after(op, self._hoisted)
        elif self.entry.first_op is not None:
            self.entry.insert_op_before(op, self.entry.first_op)
        else:
            self.entry.add_op(op)
        self._hoisted = op
        return op.results[0]

    def _add(self, op: Operation, hoist: bool = False) -> SSAValue:
        if hoist:
            return self._hoist(op)
        self.block.add_op(op)
        return op.results[0]

    def _append(self, op: Operation) -> None:
        self.block.add_op(op)

    # ── values ──────────────────────────────────────────────────────────────

    @property
    def args(self) -> Sequence[SSAValue]:
        return self.entry.args

    def type_of(self, value: SSAValue) -> Attribute:
        return value.type

    def constant_value(self, value: SSAValue) -> int | float | None:
        owner = value.owner
        if isinstance(owner, llvm.ConstantOp) and isinstance(owner.value,
                                                               IntegerAttr | FloatAttr):
            return owner.value.value.data
        return None

    def _new_constant(self, number: float | int, t: Attribute) -> SSAValue:
        attr = (IntegerAttr(number, t) if isinstance(t, IntegerType)  # type: ignore[arg-type]
                else FloatAttr(number, t))  # type: ignore[arg-type]
        return self._hoist(llvm.ConstantOp(attr, t))

    # ── instructions ────────────────────────────────────────────────────────

    def binary(self, name: str, a: SSAValue, b: SSAValue, no_wrap: bool = False) -> SSAValue:
        if no_wrap:
            return self._add(llvm.AddOp(a, b, overflow=_NO_WRAP))
        return self._add(_BINARY[name](a, b))  # type: ignore[call-arg]

    def fneg(self, x: SSAValue) -> SSAValue:
        return self._add(llvm.FNegOp(x))

    def icmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        flag = IntegerAttr[IntegerType](llvm.ICmpPredicateFlag(predicate).to_int(), i64)
        return self._add(llvm.ICmpOp(a, b, flag))

    def fcmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(llvm.FCmpOp(a, b, predicate))

    def select(self, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(llvm.SelectOp(condition, a, b))

    def cast(self, name: str, x: SSAValue, t: Attribute) -> SSAValue:
        return self._add(_CASTS[name](x, t))  # type: ignore[call-arg]

    def intrinsic(self, name: str, args: Sequence[SSAValue], result: Attribute) -> SSAValue:
        return self._add(llvm.CallIntrinsicOp(name, list(args), [result]))

    def call(self, name: str, args: Sequence[SSAValue], result: Attribute) -> SSAValue:
        return self._add(llvm.CallOp(name, *args, return_type=result))

    def fma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        return self._add(llvm.FMAOp(a, b, c))

    def vector_reduce(self, name: str, start: SSAValue, vector: SSAValue) -> SSAValue:
        return self._add(_REDUCE[name](start, vector))  # type: ignore[call-arg]

    def undef(self, t: Attribute, hoist: bool = False) -> SSAValue:
        return self._add(llvm.UndefOp(t), hoist)

    def insert_element(self, vector: SSAValue, x: SSAValue, index: SSAValue,
                       hoist: bool = False) -> SSAValue:
        return self._add(llvm.InsertElementOp(vector, x, index), hoist)

    def shuffle_vector(self, a: SSAValue, b: SSAValue, mask: Sequence[int], t: Attribute,
                       hoist: bool = False) -> SSAValue:
        return self._add(llvm.ShuffleVectorOp(a, b, DenseArrayBase.from_list(i32, list(mask)),
                                              t), hoist)

    def gep(self, pointer: SSAValue, index: SSAValue, element: Attribute) -> SSAValue:
        return self._add(llvm.GEPOp(pointer, [llvm.GEP_USE_SSA_VAL], element,
                                    ssa_indices=[index], inbounds=True))

    def load(self, pointer: SSAValue, t: Attribute, alignment: int | None = None) -> SSAValue:
        if alignment is None:
            return self._add(llvm.LoadOp(pointer, t))
        return self._add(llvm.LoadOp(pointer, t, alignment=alignment))

    def store(self, value: SSAValue, pointer: SSAValue, alignment: int | None = None) -> None:
        if alignment is None:
            self._append(llvm.StoreOp(value, pointer))
        else:
            self._append(llvm.StoreOp(value, pointer, alignment=alignment))

    def allocas(self) -> None:
        size = llvm.ConstantOp(IntegerAttr(1, i32), i32)
        self._append(size)
        self._alloca_size, self._alloca_anchor = size.results[0], size

    def alloca(self, t: Attribute, alignment: int) -> SSAValue:
        assert self._alloca_size is not None and self._alloca_anchor is not None
        op = llvm.AllocaOp(self._alloca_size, t, alignment=alignment)
        self.entry.insert_op_after(op, self._alloca_anchor)
        self._alloca_anchor = op
        return op.res

    # ── control flow ────────────────────────────────────────────────────────

    def new_block(self, with_argument: bool) -> Block:
        return Block(arg_types=[i64] if with_argument else [])

    def block_argument(self, block: Block) -> SSAValue:
        return block.args[0]

    def add_block(self, block: Block) -> None:
        self.region.add_block(block)

    def position(self, block: Block) -> None:
        self.block = block

    def br(self, block: Block, args: Sequence[SSAValue] = ()) -> None:
        self._append(llvm.BrOp(block, *args))

    def cond_br(self, condition: SSAValue, then: Block, then_args: Sequence[SSAValue],
                else_: Block, else_args: Sequence[SSAValue]) -> None:
        self._append(llvm.CondBrOp(condition, then, list(then_args), else_, list(else_args)))

    def ret(self) -> None:
        self._append(llvm.ReturnOp())

    def name(self, value: SSAValue, hint: str | None) -> None:
        if value.name_hint is None:
            value.name_hint = hint

    # ── the function ────────────────────────────────────────────────────────

    def finish(self, name: str, noalias: bool) -> llvm.FuncOp:
        """The `llvm.func @name` of the built body; `noalias` marks its pointers."""
        pointers = [llvm.LLVMPointerType()] * self.num_pointers
        props: dict[str, Attribute | None] = {}
        if noalias and pointers:
            mark = DictionaryAttr({"llvm.noalias": UnitAttr()})
            props["arg_attrs"] = ArrayAttr([mark] * len(pointers) + [DictionaryAttr({})] * 2)
        return llvm.FuncOp(
            name, llvm.LLVMFunctionType([*pointers, i64, i64], llvm.LLVMVoidType()),
            linkage=llvm.LinkageAttr("external"), body=self.region, other_props=props)
