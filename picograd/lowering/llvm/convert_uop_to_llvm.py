"""`convert-uop-to-llvm`: every `pg_uop.kernel` becomes an `llvm.func` (xDSL's llvm dialect).

Input dialects: `pg_uop` kernels next to `func.func @main` (a `pg_sched` schedule).
Output dialects: `llvm.func` kernels (same symbol names) next to the untouched `@main`.
Guarantee: no `pg_uop` op remains; `@main` is left as it is.

The function follows the kernel ABI of docs/design.md: `void kN(ptr p0, ptr p1, ..., i64
start, i64 end)`, one generic (address space 0) pointer per buffer argument, `index` is
`i64`, a bool buffer holds one byte per element (load `i8` then `!= 0`; store `zext i1 ->
i8`). `start`/`end` bound the outermost global range of a kernel that may run in chunks on
several threads (`picograd/lowering/outer_range.py`: its `pg.outer` / `pg.work` attributes
record the trip count and the work); other kernels ignore them.

    pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
      %i = pg_uop.range 0 to 4 global
      ...
      pg_uop.end %i
    }
->
    llvm.func @k(%a: !llvm.ptr {llvm.noalias}, %start: i64, %end: i64)
        attributes {pg.outer = 4 : i64, pg.work = ...} {
      %any = llvm.icmp "slt" %start, %end : i64
      llvm.cond_br %any, ^body(%start : i64), ^exit
    ^body(%i: i64):
      ...
      %n = llvm.add %i, %c1 overflow<nsw,nuw> : i64
      %more = llvm.icmp "slt" %n, %end : i64
      llvm.cond_br %more, ^body(%n : i64), ^exit
    ^exit:
      llvm.return
    }

* A range is a rotated loop: the body block takes the induction variable as a block argument
  (a phi), the latch at `end` increments it and branches back while it is below the bound.
  The bounds are constants, except for the split outer range (`start`/`end`, which may be
  an empty chunk: it is tested before the first iteration).
  Rotated rather than header-first because the kernel is one flat block: any value defined
  before a use in that block (CSE merges equal pure ops across `end`) must dominate the
  use, and here every block dominates all blocks after it. Ranges are never empty (buffers
  are not); a statically empty range jumps over its (then unreachable) body.
* `pg_uop.acc` is an entry-block `alloca` plus a store of the init where the acc op stands;
  LLVM's mem2reg turns it into a register.
* Masked loads read index 0 where the mask is false (a branch-free, always in-bounds read,
  since buffers are never empty) and select `other`.
* Kernel arguments get `noalias` when every launch in `@main` passes distinct buffers
  (distinct buffers never overlap; equal inputs are read-only, which noalias allows).

Scalar semantics are in `picograd/lowering/llvm/alu.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    UnitAttr,
    VectorType,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_uop
from picograd.dialects.abi import END_NAME, START_NAME
from picograd.dialects.dtypes import is_bool, lane_type
from picograd.dialects.flat_vectors import lanes_of
from picograd.dialects.pg import BinaryKind, BufferType
from picograd.lowering.kernels import replace_kernels
from picograd.lowering.llvm.alu import (
    Emitter,
    const,
    icmp,
    llvm_type,
    lower_alu,
    lower_constant,
    splat,
)
from picograd.lowering.llvm.vector_select import declare_vector_selects
from picograd.lowering.outer_range import outer_split

_NO_WRAP = llvm.OverflowAttr((llvm.OverflowFlag.NO_SIGNED_WRAP, llvm.OverflowFlag.NO_UNSIGNED_WRAP))


@dataclass
class _Loop:
    body: Block  # its argument is the induction variable (i64)
    exit: Block
    end: SSAValue
    step: SSAValue


class _KernelLowering:
    """Translate one `pg_uop.kernel` into a new `llvm.func`, walking its flat block in order."""

    def __init__(self, kernel: pg_uop.KernelOp, noalias: bool):
        self.kernel = kernel
        self.noalias = noalias
        self.arg_types: list[Attribute] = [llvm.LLVMPointerType()] * len(kernel.args)
        self.entry = Block(arg_types=[*self.arg_types, i64, i64])  # + (start, end)
        self.split = outer_split(kernel)
        self.region = Region(self.entry)
        self.emit = Emitter(self.entry)
        self.values: dict[SSAValue, SSAValue] = {}  # pg_uop value -> llvm value
        self.loops: dict[SSAValue, _Loop] = {}  # open ranges
        self.alloca_size: Operation | None = None  # the `1 : i32` every alloca counts
        self.alloca_anchor: Operation | None = None  # the last entry-block alloca

    def run(self) -> llvm.FuncOp:
        for arg, new in zip(self.kernel.args, self.entry.args, strict=False):
            self.values[arg] = new
            new.name_hint = arg.name_hint
        self.entry.args[-2].name_hint, self.entry.args[-1].name_hint = START_NAME, END_NAME
        if any(isinstance(op, pg_uop.AccOp) for op in self.kernel.body.block.ops):
            self.alloca_size = self.alloca_anchor = self.emit(
                llvm.ConstantOp(IntegerAttr(1, i32), i32))
        for op in self.kernel.body.block.ops:
            self._lower(op)
        self.emit(llvm.ReturnOp())
        props: dict[str, Attribute | None] = {}
        if self.noalias and self.arg_types:
            noalias = DictionaryAttr({"llvm.noalias": UnitAttr()})
            props["arg_attrs"] = ArrayAttr([noalias] * len(self.arg_types)
                                           + [DictionaryAttr({})] * 2)
        func = llvm.FuncOp(
            self.kernel.sym_name.data,
            llvm.LLVMFunctionType([*self.arg_types, i64, i64], llvm.LLVMVoidType()),
            linkage=llvm.LinkageAttr("external"),
            body=self.region,
            other_props=props,
        )
        if self.split is not None:
            self.split.mark(func)
        return func

    # ── dispatch ────────────────────────────────────────────────────────────

    def _lower(self, op: Operation) -> None:
        if (handler := _HANDLERS.get(type(op))) is not None:
            handler(self, op)
        elif isinstance(op, pg_uop.ConstOp):
            self.values[op.result] = lower_constant(self.emit, op.value, op.result.type)
        elif isinstance(op, pg_uop.FmaOp):  # llvm.fma: one rounding, as the op says
            a, b, c = (self.values[v] for v in op.operands)
            self.values[op.result] = self.emit.value(llvm.FMAOp(a, b, c))
        elif isinstance(op, pg_uop.ALU_OPS):
            operands = [self.values[v] for v in op.operands]
            self.values[op.results[0]] = lower_alu(self.emit, op, operands)
        else:
            raise PassFailedException(
                f"convert-uop-to-llvm: @{self.kernel.sym_name.data}: {op.name} has no CPU lowering"
            )
        for result in op.results:  # keep the readable names of the input IR
            new = self.values[result]
            if new.name_hint is None:
                new.name_hint = result.name_hint

    def _const(self, value: int, t: Attribute = i64) -> SSAValue:
        return const(self.emit, value, t)

    # ── loops ───────────────────────────────────────────────────────────────

    def _range(self, op: pg_uop.RangeOp) -> None:
        body, exit_ = Block(arg_types=[i64]), Block()
        if self.split is not None and op is self.split.range:
            start, end, step = self._bounds_from_args(op)
            self.region.add_block(body)
            # the chunk may be empty: test before the first iteration
            self.emit(llvm.CondBrOp(icmp(self.emit, "slt", start, end), body, [start], exit_, []))
        else:
            start, end = self._const(op.start.data), self._const(op.end.data)
            step = self._const(1)
            self.region.add_block(body)
            self.emit(llvm.BrOp(body, start) if op.start.data < op.end.data
                      else llvm.BrOp(exit_))
        self.emit.block = body
        self.loops[op.result] = _Loop(body, exit_, end, step)
        self.values[op.result] = body.args[0]

    def _bounds_from_args(self, op: pg_uop.RangeOp) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(first, end, step) of the split outer range: iterations `[start, end)` of it, the
        trailing arguments, shifted by the range's own start."""
        start, end = self.entry.args[-2], self.entry.args[-1]
        if op.start.data != 0:
            offset = self._const(op.start.data)
            start = self.emit.value(llvm.AddOp(start, offset, overflow=_NO_WRAP))
            end = self.emit.value(llvm.AddOp(end, offset, overflow=_NO_WRAP))
        return start, end, self._const(1)

    def _end(self, op: pg_uop.EndOp) -> None:
        loop = self.loops.pop(op.range)
        iv = loop.body.args[0]
        nxt = self.emit.value(llvm.AddOp(iv, loop.step, overflow=_NO_WRAP))
        more = icmp(self.emit, "slt", nxt, loop.end)
        self.emit(llvm.CondBrOp(more, loop.body, [nxt], loop.exit, []))
        self.region.add_block(loop.exit)
        self.emit.block = loop.exit

    # ── accumulators ────────────────────────────────────────────────────────

    def _acc(self, op: pg_uop.AccOp) -> None:
        # allocas go to the entry block (where mem2reg promotes them), after the size constant
        assert self.alloca_size is not None and self.alloca_anchor is not None
        t = llvm_type(op.element_type)
        alloca = llvm.AllocaOp(self.alloca_size.results[0], t,
                               alignment=_byte_size(llvm_type(lane_type(t))))
        self.entry.insert_op_after(alloca, self.alloca_anchor)
        self.alloca_anchor = alloca
        self.values[op.result] = alloca.res
        self.emit(llvm.StoreOp(lower_constant(self.emit, op.init, op.element_type), alloca.res))

    def _acc_load(self, op: pg_uop.AccLoadOp) -> None:
        load = llvm.LoadOp(self.values[op.acc], llvm_type(op.result.type))
        self.values[op.result] = self.emit.value(load)

    def _acc_store(self, op: pg_uop.AccStoreOp) -> None:
        self.emit(llvm.StoreOp(self.values[op.value], self.values[op.acc]))

    # ── memory ──────────────────────────────────────────────────────────────

    def _address(self, buffer: SSAValue, index: SSAValue) -> SSAValue:
        assert isinstance(buffer.type, BufferType)
        storage = _storage_type(buffer.type.element_type)
        gep = llvm.GEPOp(self.values[buffer], [llvm.GEP_USE_SSA_VAL], storage,
                         ssa_indices=[index], inbounds=True)
        return self.emit.value(gep)

    def _load(self, op: pg_uop.LoadOp) -> None:
        index = self.values[op.index]
        mask = self.values[op.mask] if op.mask is not None else None
        if mask is not None:  # read element 0 where masked off: always in bounds
            index = self.emit.value(llvm.SelectOp(mask, index, self._const(0)))
        dtype = op.result.type
        value = self.emit.value(llvm.LoadOp(self._address(op.buffer, index), _storage_type(dtype)))
        if is_bool(dtype):
            value = icmp(self.emit, "ne", value, self._const(0, i8))
        if mask is not None and op.other is not None:
            other = lower_constant(self.emit, op.other, dtype)
            value = self.emit.value(llvm.SelectOp(mask, value, other))
        self.values[op.result] = value

    def _vload(self, op: pg_uop.VLoadOp) -> None:
        t = op.result.type
        assert isinstance(t, VectorType)
        index = self.values[op.index]
        if op.stride == 1:
            self.values[op.result] = self._vector_at(op.buffer, index, t)
            return
        lanes = lanes_of(t)
        if op.stride == 2:
            # two vector loads, the second ending on the last element the lanes read (none
            # past it), and one shuffle of the even elements: lane l is element 2l, which
            # the second vector (from element lanes - 1) holds from 2l >= lanes on
            later = self.emit.value(llvm.AddOp(index, self._const(lanes - 1)))
            first, second = self._vector_at(op.buffer, index, t), self._vector_at(
                op.buffer, later, t)
            mask = [2 * n if 2 * n < lanes else 2 * n + 1 for n in range(lanes)]
            self.values[op.result] = self.emit.value(llvm.ShuffleVectorOp(
                first, second, DenseArrayBase.from_list(i32, mask), t))
            return
        value = self.emit.value(llvm.UndefOp(t))  # any other step: lane by lane
        for n in range(lanes):
            at = self.emit.value(llvm.AddOp(index, self._const(op.stride * n)))
            element = self.emit.value(llvm.LoadOp(self._address(op.buffer, at),
                                                  t.element_type))
            value = self.emit.value(llvm.InsertElementOp(value, element, self._const(n, i32)))
        self.values[op.result] = value

    def _vector_at(self, buffer: SSAValue, index: SSAValue, t: VectorType) -> SSAValue:
        """`t`'s lanes from `buffer[index]` on, aligned as one element."""
        return self.emit.value(llvm.LoadOp(self._address(buffer, index), t,
                                           alignment=_byte_size(t.element_type)))

    def _vstore(self, op: pg_uop.VStoreOp) -> None:
        t = op.value.type
        assert isinstance(t, VectorType)
        address = self._address(op.buffer, self.values[op.index])
        self.emit(llvm.StoreOp(self.values[op.value], address,
                               alignment=_byte_size(t.element_type)))

    def _broadcast(self, op: pg_uop.BroadcastOp) -> None:
        self.values[op.result] = splat(self.emit, self.values[op.input],
                                       lanes_of(op.result.type))

    def _vreduce(self, op: pg_uop.VReduceOp) -> None:
        # without `reassoc` the intrinsics combine in lane order from the start value, and
        # -0.0 + x and 1.0 * x are x
        start = -0.0 if op.kind.data == BinaryKind.ADD else 1.0
        cls = llvm.VectorReduceFAddOp if op.kind.data == BinaryKind.ADD else llvm.VectorReduceFMulOp
        first = const(self.emit, start, op.result.type)
        self.values[op.result] = self.emit.value(cls(first, self.values[op.input]))

    def _store(self, op: pg_uop.StoreOp) -> None:
        value = self.values[op.value]
        if is_bool(op.value.type):
            value = self.emit.value(llvm.ZExtOp(value, i8))
        self.emit(llvm.StoreOp(value, self._address(op.buffer, self.values[op.index])))


_HANDLERS = {
    pg_uop.RangeOp: _KernelLowering._range,
    pg_uop.EndOp: _KernelLowering._end,
    pg_uop.AccOp: _KernelLowering._acc,
    pg_uop.AccLoadOp: _KernelLowering._acc_load,
    pg_uop.AccStoreOp: _KernelLowering._acc_store,
    pg_uop.LoadOp: _KernelLowering._load,
    pg_uop.StoreOp: _KernelLowering._store,
    pg_uop.VLoadOp: _KernelLowering._vload,
    pg_uop.VStoreOp: _KernelLowering._vstore,
    pg_uop.BroadcastOp: _KernelLowering._broadcast,
    pg_uop.VReduceOp: _KernelLowering._vreduce,
}


def _storage_type(t: Attribute) -> Attribute:
    """The in-memory type of a buffer element: bools are bytes."""
    return i8 if is_bool(t) else llvm_type(t)


def _byte_size(t: Attribute) -> int:
    bits = t.width.data if isinstance(t, IntegerType) else t.bitwidth  # type: ignore[attr-defined]
    return max(1, bits // 8)


@dataclass(frozen=True)
class ConvertUopToLlvmPass(ModulePass):
    """pg_uop kernels -> llvm.func kernels (xDSL llvm dialect); `@main` is kept as it is.

    Input: `pg_uop.kernel` ops and a `func.func @main` schedule. Output: `llvm.func` ops with
    the same symbol names and `@main`. Guarantee: no `pg_uop` op remains.
    """

    name = "convert-uop-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replace_kernels(op, lambda kernel, distinct: _KernelLowering(kernel, distinct).run())
        declare_vector_selects(op)
