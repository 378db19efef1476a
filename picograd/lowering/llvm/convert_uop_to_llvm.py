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
from xdsl.dialects.builtin import IntegerType, ModuleOp, VectorType, i8, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_uop
from picograd.dialects.abi import END_NAME, START_NAME
from picograd.dialects.dtypes import is_bool, lane_type
from picograd.dialects.flat_vectors import lanes_of
from picograd.dialects.pg import BinaryKind, BufferType
from picograd.lowering.kernels import replace_kernels
from picograd.lowering.llvm.alu import const, llvm_type, lower_alu, lower_constant, splat
from picograd.lowering.llvm.builder import BlockRef, LlvmBuilder, Value
from picograd.lowering.llvm.vector_select import declare_vector_selects
from picograd.lowering.llvm.xdsl_builder import XdslBuilder
from picograd.lowering.outer_range import OuterSplit, outer_split


@dataclass
class _Loop:
    body: BlockRef  # its argument is the induction variable (i64)
    exit: BlockRef
    end: Value
    step: Value


class _KernelLowering:
    """Translate one `pg_uop.kernel` into a function through `builder` (an `llvm.func` with
    `XdslBuilder`, LLVM text with the text builder), walking its flat block in order."""

    def __init__(self, kernel: pg_uop.KernelOp, noalias: bool, builder: LlvmBuilder):
        self.kernel = kernel
        self.noalias = noalias
        self.b = builder
        self.split: OuterSplit | None = outer_split(kernel)
        self.values: dict[SSAValue, Value] = {}  # pg_uop value -> the builder's value
        self.loops: dict[SSAValue, _Loop] = {}  # open ranges

    def run(self):
        """The builder's function (`builder.finish(name, noalias)`)."""
        args = self.b.args
        for arg, new in zip(self.kernel.args, args, strict=False):
            self.values[arg] = new
            self.b.name(new, arg.name_hint)
        self.b.name(args[-2], START_NAME)
        self.b.name(args[-1], END_NAME)
        ops = self.kernel.body.block.ops
        if any(isinstance(op, pg_uop.AccOp) for op in ops):
            self.b.allocas()
        for op in ops:
            self._lower(op)
        self.b.ret()
        return self.b.finish(self.kernel.sym_name.data, self.noalias)  # type: ignore[attr-defined]

    # ── dispatch ────────────────────────────────────────────────────────────

    def _lower(self, op: Operation) -> None:
        if (handler := _HANDLERS.get(type(op))) is not None:
            handler(self, op)
        elif isinstance(op, pg_uop.ConstOp):
            self.values[op.result] = lower_constant(self.b, op.value, op.result.type)
        elif isinstance(op, pg_uop.FmaOp):  # llvm.fma: one rounding, as the op says
            a, b, c = (self.values[v] for v in op.operands)
            self.values[op.result] = self.b.fma(a, b, c)
        elif isinstance(op, pg_uop.ALU_OPS):
            operands = [self.values[v] for v in op.operands]
            self.values[op.results[0]] = lower_alu(self.b, op, operands)
        else:
            raise PassFailedException(
                f"convert-uop-to-llvm: @{self.kernel.sym_name.data}: {op.name} has no CPU lowering"
            )
        for result in op.results:  # keep the readable names of the input IR
            self.b.name(self.values[result], result.name_hint)

    def _const(self, value: int, t: Attribute = i64) -> Value:
        return const(self.b, value, t)

    # ── loops ───────────────────────────────────────────────────────────────

    def _range(self, op: pg_uop.RangeOp) -> None:
        body, exit_ = self.b.new_block(True), self.b.new_block(False)
        if self.split is not None and op is self.split.range:
            start, end, step = self._bounds_from_args(op)
            self.b.add_block(body)
            # the chunk may be empty: test before the first iteration
            self.b.cond_br(self.b.icmp("slt", start, end), body, [start], exit_, [])
        else:
            start, end = self._const(op.start.data), self._const(op.end.data)
            step = self._const(1)
            self.b.add_block(body)
            if op.start.data < op.end.data:
                self.b.br(body, [start])
            else:
                self.b.br(exit_)
        self.b.position(body)
        self.loops[op.result] = _Loop(body, exit_, end, step)
        self.values[op.result] = self.b.block_argument(body)

    def _bounds_from_args(self, op: pg_uop.RangeOp) -> tuple[Value, Value, Value]:
        """(first, end, step) of the split outer range: iterations `[start, end)` of it, the
        trailing arguments, shifted by the range's own start."""
        start, end = self.b.args[-2], self.b.args[-1]
        if op.start.data != 0:
            offset = self._const(op.start.data)
            start = self.b.binary("add", start, offset, no_wrap=True)
            end = self.b.binary("add", end, offset, no_wrap=True)
        return start, end, self._const(1)

    def _end(self, op: pg_uop.EndOp) -> None:
        loop = self.loops.pop(op.range)
        iv = self.b.block_argument(loop.body)
        nxt = self.b.binary("add", iv, loop.step, no_wrap=True)
        more = self.b.icmp("slt", nxt, loop.end)
        self.b.cond_br(more, loop.body, [nxt], loop.exit, [])
        self.b.add_block(loop.exit)
        self.b.position(loop.exit)

    # ── accumulators ────────────────────────────────────────────────────────

    def _acc(self, op: pg_uop.AccOp) -> None:
        # allocas go to the entry block (where mem2reg promotes them), after the size constant
        t = llvm_type(op.element_type)
        slot = self.b.alloca(t, _byte_size(llvm_type(lane_type(t))))
        self.values[op.result] = slot
        self.b.store(lower_constant(self.b, op.init, op.element_type), slot)

    def _acc_load(self, op: pg_uop.AccLoadOp) -> None:
        self.values[op.result] = self.b.load(self.values[op.acc], llvm_type(op.result.type))

    def _acc_store(self, op: pg_uop.AccStoreOp) -> None:
        self.b.store(self.values[op.value], self.values[op.acc])

    # ── memory ──────────────────────────────────────────────────────────────

    def _address(self, buffer: SSAValue, index: Value) -> Value:
        assert isinstance(buffer.type, BufferType)
        return self.b.gep(self.values[buffer], index, _storage_type(buffer.type.element_type))

    def _load(self, op: pg_uop.LoadOp) -> None:
        index = self.values[op.index]
        mask = self.values[op.mask] if op.mask is not None else None
        if mask is not None:  # read element 0 where masked off: always in bounds
            index = self.b.select(mask, index, self._const(0))
        dtype = op.result.type
        value = self.b.load(self._address(op.buffer, index), _storage_type(dtype))
        if is_bool(dtype):
            value = self.b.icmp("ne", value, self._const(0, i8))
        if mask is not None and op.other is not None:
            other = lower_constant(self.b, op.other, dtype)
            value = self.b.select(mask, value, other)
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
            later = self.b.binary("add", index, self._const(lanes - 1))
            first, second = self._vector_at(op.buffer, index, t), self._vector_at(
                op.buffer, later, t)
            mask = [2 * n if 2 * n < lanes else 2 * n + 1 for n in range(lanes)]
            self.values[op.result] = self.b.shuffle_vector(first, second, mask, t)
            return
        value = self.b.undef(t)  # any other step: lane by lane
        for n in range(lanes):
            at = self.b.binary("add", index, self._const(op.stride * n))
            element = self.b.load(self._address(op.buffer, at), t.element_type)
            value = self.b.insert_element(value, element, self._const(n, i32))
        self.values[op.result] = value

    def _vector_at(self, buffer: SSAValue, index: Value, t: VectorType) -> Value:
        """`t`'s lanes from `buffer[index]` on, aligned as one element."""
        return self.b.load(self._address(buffer, index), t, _byte_size(t.element_type))

    def _vstore(self, op: pg_uop.VStoreOp) -> None:
        t = op.value.type
        assert isinstance(t, VectorType)
        address = self._address(op.buffer, self.values[op.index])
        self.b.store(self.values[op.value], address, _byte_size(t.element_type))

    def _broadcast(self, op: pg_uop.BroadcastOp) -> None:
        self.values[op.result] = splat(self.b, self.values[op.input], lanes_of(op.result.type))

    def _vreduce(self, op: pg_uop.VReduceOp) -> None:
        # without `reassoc` the intrinsics combine in lane order from the start value, and
        # -0.0 + x and 1.0 * x are x
        add = op.kind.data == BinaryKind.ADD
        first = const(self.b, -0.0 if add else 1.0, op.result.type)
        self.values[op.result] = self.b.vector_reduce("fadd" if add else "fmul", first,
                                                      self.values[op.input])

    def _store(self, op: pg_uop.StoreOp) -> None:
        value = self.values[op.value]
        if is_bool(op.value.type):
            value = self.b.cast("zext", value, i8)
        self.b.store(value, self._address(op.buffer, self.values[op.index]))


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


def lower_kernel_to_llvm_func(kernel: pg_uop.KernelOp, noalias: bool) -> llvm.FuncOp:
    """One kernel as an `llvm.func` (the split outer range recorded on it)."""
    lowering = _KernelLowering(kernel, noalias, XdslBuilder(len(kernel.args)))
    func = lowering.run()
    if lowering.split is not None:
        lowering.split.mark(func)
    return func


@dataclass(frozen=True)
class ConvertUopToLlvmPass(ModulePass):
    """pg_uop kernels -> llvm.func kernels (xDSL llvm dialect); `@main` is kept as it is.

    Input: `pg_uop.kernel` ops and a `func.func @main` schedule. Output: `llvm.func` ops with
    the same symbol names and `@main`. Guarantee: no `pg_uop` op remains.
    """

    name = "convert-uop-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replace_kernels(op, lower_kernel_to_llvm_func)
        declare_vector_selects(op)
