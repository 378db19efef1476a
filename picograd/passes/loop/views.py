"""Index arithmetic of views: which input element a `pg_tensor` movement op reads.

`IndexMath` emits `pg_loop.const` / `pg_loop.index` / `pg_loop.cmp` / `pg_loop.and` into
the innermost block of a `Scopes` stack, reusing an identical expression already emitted in
an enclosing scope and folding only the trivial cases (`x+0`, `x*1`, `x*0`, `x/1`, `x%1`,
constant operands); the rest is `loop-simplify`'s job. `source_index(view, idx, math)` gives
the index into a movement op's input for the element at `idx` of its result, plus the mask
under which that element exists (only `pad` has one).

    reshape   re-linearise within each group of dims whose sizes multiply to the same count
    permute   result dim i reads input dim perm[i]
    expand    a broadcast (size-1) input dim reads index 0
    pad       i - low, valid where low <= i < low + n
    slice     start + step * i
    flip      (n - 1) - i
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from math import prod

from xdsl.ir import Block, Operation, SSAValue

from picograd.dialects import pg_loop as L
from picograd.dialects import pg_tensor as T
from picograd.dialects.pg import BinaryKind, CmpKind
from picograd.dialects.pg_tensor import shape_of

Index = tuple[SSAValue, ...]


class Scopes:
    """A stack of blocks being filled (a kernel body, range bodies, reduce bodies), each with
    a table of the values already emitted into it.

    A value emitted in an enclosing block dominates every block nested in it, so `lookup`
    searches from the innermost scope outwards, and `remember` records in the innermost.
    """

    def __init__(self, block: Block):
        self._stack: list[tuple[Block, dict[Hashable, SSAValue]]] = [(block, {})]

    def push(self, block: Block) -> None:
        self._stack.append((block, {}))

    def pop(self) -> None:
        self._stack.pop()

    def add(self, op: Operation) -> Operation:
        self._stack[-1][0].add_op(op)
        return op

    def lookup(self, key: Hashable) -> SSAValue | None:
        for _, table in reversed(self._stack):
            if key in table:
                return table[key]
        return None

    def remember(self, key: Hashable, value: SSAValue) -> SSAValue:
        self._stack[-1][1][key] = value
        return value


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    return owner.value.data if isinstance(owner, L.ConstOp) else None


def _index_op(value: SSAValue, kind: BinaryKind) -> L.IndexOp | None:
    owner = value.owner
    return owner if isinstance(owner, L.IndexOp) and owner.kind.data == kind else None


_FOLD = {
    BinaryKind.ADD: lambda a, b: a + b,
    BinaryKind.SUB: lambda a, b: a - b,
    BinaryKind.MUL: lambda a, b: a * b,
    BinaryKind.DIV: lambda a, b: a // b,  # pg_loop div/mod are floor / non-negative
    BinaryKind.MOD: lambda a, b: a % b,
}


class IndexMath:
    """Emits index expressions into the innermost scope of `scopes`."""

    def __init__(self, scopes: Scopes):
        self.scopes = scopes

    def const(self, value: int) -> SSAValue:
        key = ("index.const", value)
        found = self.scopes.lookup(key)
        if found is not None:
            return found
        return self.scopes.remember(key, self.scopes.add(L.ConstOp(value)).results[0])

    def binary(self, kind: BinaryKind, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = _constant(a), _constant(b)
        if ca is not None and cb is not None and (kind not in (BinaryKind.DIV, BinaryKind.MOD)
                                                  or cb > 0):
            return self.const(_FOLD[kind](ca, cb))
        if cb == 0 and kind in (BinaryKind.ADD, BinaryKind.SUB):
            return a
        if ca == 0 and kind == BinaryKind.ADD:
            return b
        if cb == 1 and kind in (BinaryKind.MUL, BinaryKind.DIV):
            return a
        if ca == 1 and kind == BinaryKind.MUL:
            return b
        if (0 in (ca, cb) and kind == BinaryKind.MUL) or (cb == 1 and kind == BinaryKind.MOD):
            return self.const(0)
        key = ("index", kind, a, b)
        found = self.scopes.lookup(key)
        if found is not None:
            return found
        return self.scopes.remember(key, self.scopes.add(L.IndexOp(kind, a, b)).results[0])

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._merge_split(a, b) or self.binary(BinaryKind.ADD, a, b)

    def _merge_split(self, a: SSAValue, b: SSAValue) -> SSAValue | None:
        """`[A +] (x div n) * (n*k) + (x mod n) * k` is `[A +] x * k`: re-linearising an index
        that `delinear` split (a multi-axis reduce, a reshape back and forth) gives the
        offset back, instead of leaving a div and a mod per element to `loop-simplify`."""
        low = _index_op(b, BinaryKind.MUL)
        mod, k = (low.lhs, _constant(low.rhs)) if low is not None else (b, 1)
        mod_op = _index_op(mod, BinaryKind.MOD)
        if mod_op is None or k is None or (n := _constant(mod_op.rhs)) is None:
            return None
        rest: SSAValue | None = None
        high = _index_op(a, BinaryKind.MUL)
        if high is None and (outer := _index_op(a, BinaryKind.ADD)) is not None:
            rest, high = outer.lhs, _index_op(outer.rhs, BinaryKind.MUL)
        if high is None or _constant(high.rhs) != n * k:
            return None
        div_op = _index_op(high.lhs, BinaryKind.DIV)
        if div_op is None or div_op.lhs != mod_op.lhs or _constant(div_op.rhs) != n:
            return None
        scaled = self.mul(mod_op.lhs, k)
        return scaled if rest is None else self.binary(BinaryKind.ADD, rest, scaled)

    def mul(self, a: SSAValue, k: int) -> SSAValue:
        return a if k == 1 else self.binary(BinaryKind.MUL, a, self.const(k))

    def cmp(self, kind: CmpKind, a: SSAValue, b: SSAValue) -> SSAValue:
        key = ("index.cmp", kind, a, b)
        found = self.scopes.lookup(key)
        if found is not None:
            return found
        return self.scopes.remember(key, self.scopes.add(L.CmpOp(kind, a, b)).results[0])

    def both(self, a: SSAValue | None, b: SSAValue | None) -> SSAValue | None:
        """The conjunction of two masks, where None means "always"."""
        if a is None or b is None:
            return b if a is None else a
        key = ("index.and", a, b)
        found = self.scopes.lookup(key)
        if found is not None:
            return found
        return self.scopes.remember(key, self.scopes.add(L.AndOp(a, b)).results[0])

    def linear(self, idx: Sequence[SSAValue], shape: Sequence[int]) -> SSAValue:
        """The row-major offset of `idx` in `shape` (size-1 dims contribute nothing)."""
        total = self.const(0)
        for d in range(len(shape)):
            if shape[d] != 1:
                total = self.add(total, self.mul(idx[d], prod(shape[d + 1:])))
        return total

    def delinear(self, flat: SSAValue, shape: Sequence[int]) -> list[SSAValue]:
        """The index in `shape` of row-major offset `flat` (0 <= flat < numel(shape))."""
        out: list[SSAValue] = []
        first = True
        for d in range(len(shape)):
            if shape[d] == 1:
                out.append(self.const(0))
                continue
            q = self.binary(BinaryKind.DIV, flat, self.const(prod(shape[d + 1:])))
            # The leading dim needs no modulo: the offset is below the element count.
            out.append(q if first else self.binary(BinaryKind.MOD, q, self.const(shape[d])))
            first = False
        return out


def reshape_groups(src: Sequence[int], dst: Sequence[int]
                   ) -> list[tuple[list[int], list[int]]]:
    """Pairs (source dims, result dims) of non-1 dims whose sizes have equal products, in
    order: a reshape only re-linearises inside each pair."""
    a = [d for d in range(len(src)) if src[d] != 1]
    b = [d for d in range(len(dst)) if dst[d] != 1]
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(a) or j < len(b):
        ga, gb = [a[i]], [b[j]]
        pa, pb = src[a[i]], dst[b[j]]
        i, j = i + 1, j + 1
        while pa != pb:
            if pa < pb:
                ga.append(a[i])
                pa, i = pa * src[a[i]], i + 1
            else:
                gb.append(b[j])
                pb, j = pb * dst[b[j]], j + 1
        groups.append((ga, gb))
    return groups


def source_index(view: Operation, idx: Index, m: IndexMath) -> tuple[Index, SSAValue | None]:
    """The index into `view`'s input read for element `idx` of its result, and the mask
    (None: always) outside which the element is the pad value instead."""
    src, dst = shape_of(view.operands[0]), shape_of(view.results[0])
    if isinstance(view, T.PadOp):
        return _pad(view, src, idx, m)
    if isinstance(view, T.ReshapeOp):
        return _reshape(src, dst, idx, m), None
    if isinstance(view, T.PermuteOp):
        out = [m.const(0)] * len(src)
        for i, p in enumerate(view.order):
            out[p] = idx[i]
        return tuple(out), None
    if isinstance(view, T.ExpandOp):
        return tuple(m.const(0) if s == 1 else i for s, i in zip(src, idx, strict=True)), None
    if isinstance(view, T.SliceOp):
        return tuple(m.add(m.const(s), m.mul(i, k)) for s, k, i
                     in zip(view.starts, view.steps, idx, strict=True)), None
    if isinstance(view, T.FlipOp):
        return tuple(m.binary(BinaryKind.SUB, m.const(n - 1), i) if d in view.axis_list else i
                     for d, (n, i) in enumerate(zip(src, idx, strict=True))), None
    raise TypeError(f"{view.name} is not a view")


def _reshape(src: tuple[int, ...], dst: tuple[int, ...], idx: Index, m: IndexMath) -> Index:
    out = [m.const(0)] * len(src)
    for src_dims, dst_dims in reshape_groups(src, dst):
        if len(src_dims) == 1 and len(dst_dims) == 1:
            out[src_dims[0]] = idx[dst_dims[0]]
            continue
        flat = m.linear([idx[d] for d in dst_dims], [dst[d] for d in dst_dims])
        for d, i in zip(src_dims, m.delinear(flat, [src[d] for d in src_dims]), strict=True):
            out[d] = i
    return tuple(out)


def _pad(view: T.PadOp, src: tuple[int, ...], idx: Index, m: IndexMath
         ) -> tuple[Index, SSAValue | None]:
    out: list[SSAValue] = []
    mask: SSAValue | None = None
    for (low, high), n, i in zip(view.pads, src, idx, strict=True):
        out.append(m.binary(BinaryKind.SUB, i, m.const(low)))
        if low > 0:
            mask = m.both(mask, m.cmp(CmpKind.GE, i, m.const(low)))
        if high > 0:
            mask = m.both(mask, m.cmp(CmpKind.LT, i, m.const(low + n)))
    return tuple(out), mask
