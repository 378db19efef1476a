"""`matmul-layout`: give a matmul's B operand the memory order its kernel reads fastest.

Input and output: `pg_tensor` ops inside `func.func` (stage 1). Guarantee: every result is
bit-identical (only a copy is added; no arithmetic changes).

A matmul is, in pg_tensor, `reduce sum` over the last axis of `mul(expand A, expand B)` with
shape (..., n, m, k): A is broadcast along the columns m, B along the rows n. Its kernel
keeps a tile of columns in vector registers and reads a row of B's columns per step of k,
so B wants its columns contiguous in memory. `nn.Linear`'s weight (out, in) read as
`x @ W.T`, and attention's keys in `q @ k.transpose(-1, -2)`, reach the kernel the other
way round: k contiguous, columns k elements apart, so every column of the tile is a load of
its own (a gather; 10 GFLOP/s where the tile runs at 90-160). This pass finds such B
operands and reads them through a transposed copy instead:

    %bt = pg_tensor.permute %b {perm = [..., k axis, m axis]}
    %c  = pg_tensor.contiguous %bt        (a kernel of its own: the copy, k-major)
    %b2 = pg_tensor.permute %c {perm = [..., k axis, m axis]}     (B again, columns stride 1)

The copy costs a read and a write of B; the matmul reads B once per row tile, so the copy is
made only where B is re-read at least `min-reuse` times (the expand's broadcast factor: a
decode step's one row keeps its dot products). B's layout is found by composing the views
between B and the value they start from (a buffer, or a computed value, which a kernel
stores row-major); a chain with a pad or flip, or a reshape that would copy, is left alone.

Aliasing rows (`alias-bytes`, CPU pipelines only): the kernel's column tile reads the same
few cache lines of every row of B, one row per step of k. When rows lie a multiple of 4 KiB
apart (B of 1024 or 2048 f32 columns), all those lines fall into the same sets of the L1 and
L2 caches, which then hold only as many rows as they have ways: the panel of B that should
stay in L2 is fetched again from L3 for every row tile. Measured (one process, 2-core Xeon,
fp32, kernel only): 1024^2 38 GFLOP/s, 155 with B's rows padded by one cache line; 2048^2
43 / 143; 960^2 (no aliasing) 120. So a B whose rows (of at least `ALIAS_ROWS`) are a
multiple of `alias-bytes` apart is read through a padded copy, rows one cache line
(`line-bytes`) longer, seen through a slice with B's shape; a transposed copy whose rows
would alias is padded the same way:

    %bt = pg_tensor.permute %b {perm = [..., k axis, m axis]}
    %p  = pg_tensor.pad %bt low [0, ...] high [0, ..., pad]
    %c  = pg_tensor.contiguous %p
    %s  = pg_tensor.slice %c (the m columns of every row)
    %b2 = pg_tensor.permute %s {perm = [..., k axis, m axis]}

Column panels (`panel-cols`, CPU pipelines only: the register tile's column count, 0
never): the kernel's column tile reads, per step of k, `panel-cols` contiguous elements of
one row of B and then jumps a whole row ahead, so its K x cols panel is strided in memory
(2-12 KiB between the pieces it reads), which the hardware prefetchers follow badly and
which aliases in the caches for many widths. Where B has a multiple of `panel-cols` columns,
at least `MIN_PANELS` panels of them, the copy lays each panel out contiguously instead
(BLIS's packed B), and the kernel reads every panel as one linear stream:

    %r  = pg_tensor.reshape %b    (..., m/P, P, k)
    %pt = pg_tensor.permute %r    (..., m/P, k, P)
    %c  = pg_tensor.contiguous %pt
    %q  = pg_tensor.permute %c    (..., m/P, P, k)
    %b2 = pg_tensor.reshape %q    (..., m, k)

`loop-optimize` takes the panel width as the tile's column count. The panel copy replaces
the transposed or padded one wherever the module would make one (it costs the same), and
it is also made for a plain B that is one of `@main`'s arguments and read at least
`MIN_PANEL_REUSE` times: that copy is kept (below), so it is made once per weight, and it
pays even for a few rows. Measured (one thread, CPU time, a busy 2-core Xeon, A/B in one
process), GFLOP/s strided / panels: 512^2 102 / 116, 1024^2 85 / 103, 8 x 768 @ 768 x 3072
23 / 54 (torch's MKL 48).

A plain B that is not a weight is laid out in panels too where the reduce is long
(`LONG_PANEL_K`): a weight gradient's `dy.T @ x` over a batch of 3200 rows reads each
panel's pieces a whole row of x apart, and they leave the caches between row tiles.

Strided A (`a-min-reuse`, CPU pipelines only): the kernel reads A's rows along k, a few
rows at a time. A weight gradient's A is `dy.T`, stepping through memory a whole row of
`dy` per step of k: each step touches a new cache line, and where those rows are 1 or 4
KiB apart they share a few cache sets, so the lines are fetched again from L3 for every
column panel. Where the product reads such an A `a-min-reuse` times or more (its columns),
with `ALIAS_ROWS` rows and a reduce `MIN_PANEL_K` long or longer, it is read through a
row-major copy (`pg_tensor.contiguous` of A's view), which `loop-optimize` blocks as a
transposing copy. Not where the product is read transposed (`read_transposed`: its kernel
runs over B's columns outermost and takes A's rows as vector lanes). Measured (2-core
Emerald Rapids, fp32, kernels only): `dy.T @ x` with dy (3200, 1024) and x (3200, 256)
19-21 ms (79-89 GFLOP/s) in place, 6.1-6.9 ms with the copy (0.7 ms of it).

A copy of a weight (of `@main`'s arguments only) is kept by the CPU program across runs
(docs/design.md, "Matmul operand layouts and kept copies"), so it is made once per weight.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from math import prod

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_tensor as T
from picograd.dialects.dtypes import to_numpy_dtype
from picograd.dialects.pg import BinaryKind, ReduceKind
from picograd.dialects.pg_tensor import dtype_of, shape_of
from picograd.passes.loop.views import reshape_groups

MIN_REUSE = 32
# A B in column panels has at least this many of them (`loop-optimize` makes the column
# tiles the outer loop from 4 tiles on: MIN_COLUMN_TILES), and a kept panel copy of a plain
# B is made where the matmul reads it this many times (its rows) or more.
MIN_PANELS = 4
MIN_PANEL_REUSE = 4
# ... and a reduce at least this long: a shorter one reads so few rows of each panel that
# they stay in the L1 cache however far apart they lie.
MIN_PANEL_K = 64
# ... and of any B re-read `min_reuse` times whose reduce is at least this long: its
# strided panels are then long enough to leave the caches between row tiles. Measured
# (2-core Emerald Rapids, fp32, `x.T @ y` of computed operands, the copies included, ms
# without / with the copy): 1024 x 3200 @ 3200 x 256 21.0 / 8.2, 512 x 2048 @ 2048 x 512
# 13.3 / 7.2, 2048 x 2048 @ 2048 x 256 23.7 / 13.9, 256 x 1536 @ 1536 x 256 1.9 / 1.4,
# 64 x 4096 @ 4096 x 256 2.1 / 1.7; at K = 1024 and below it did not pay (1024^3 11.3 /
# 12.6, 512^3 1.25 / 1.7).
LONG_PANEL_K = 1536
# Rows of B that alias in the caches are padded only when there are more of them than a
# cache has ways (8 to 16 on the CPUs measured): fewer fit the sets they share.
ALIAS_ROWS = 16
LINE_BYTES = 64


def row_major(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a C-contiguous array of `shape`."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def reshaped_strides(old: Sequence[int], strides: Sequence[int], new: Sequence[int]
                     ) -> tuple[int, ...] | None:
    """The strides of a view of shape `new` over the elements of a view of shape `old`
    with `strides`, or None where the new view has no strides (a reshape that copies, as
    numpy decides it): each group of old dims that multiplies to a group of new dims
    (`reshape_groups`, size-1 dims aside) must be contiguous within itself."""
    result = [0] * len(new)
    for olds, news in reshape_groups(old, new):
        if any(strides[a] != old[b] * strides[b] for a, b in pairwise(olds)):
            return None
        step = strides[olds[-1]]
        for n in reversed(news):
            result[n] = step
            step *= new[n]
    return tuple(result)


def view_chain(value: SSAValue) -> tuple[SSAValue, list[Operation]]:
    """The value the chain of views ending in `value` starts from, and the views, last
    first."""
    chain: list[Operation] = []
    while isinstance(value.owner, T.ReshapeOp | T.PermuteOp | T.ExpandOp | T.SliceOp
                     | T.PadOp | T.FlipOp):
        chain.append(value.owner)
        value = value.owner.operands[0]
    return value, chain


def is_main_argument(value: SSAValue) -> bool:
    """Whether `value` is an argument of `@main` (a buffer the caller passes in: a copy
    computed from it alone is kept across runs)."""
    if not isinstance(value, BlockArgument):
        return False
    owner = value.block.parent_op()
    return isinstance(owner, func.FuncOp) and owner.sym_name.data == "main"


def view_strides(value: SSAValue) -> tuple[int, ...] | None:
    """The element strides of `value` in the row-major layout of the value its chain of
    reshape / permute / expand / slice views starts from; None for other views (pad, flip)
    and for a constant or iota (no memory behind it)."""
    value, chain = view_chain(value)
    if isinstance(value.owner, T.ConstOp | T.IotaOp):
        return None
    strides: tuple[int, ...] | None = row_major(shape_of(value))
    for view in reversed(chain):
        before, after = shape_of(view.operands[0]), shape_of(view.results[0])
        if isinstance(view, T.PermuteOp):
            strides = tuple(strides[p] for p in view.order)
        elif isinstance(view, T.ExpandOp):
            strides = tuple(0 if b == 1 and a != 1 else s
                            for b, a, s in zip(before, after, strides, strict=True))
        elif isinstance(view, T.SliceOp):
            strides = tuple(s * step for s, step in zip(strides, view.steps, strict=True))
        elif isinstance(view, T.ReshapeOp):
            strides = reshaped_strides(before, strides, after)
        else:
            return None
        if strides is None:
            return None
    return strides


@dataclass(frozen=True)
class MatmulOperand:
    """The B operand of a matmul-shaped reduce: the expand that broadcasts it over the rows
    and how many times the product reads each of its elements."""

    expand: T.ExpandOp
    reuse: int


def matmul_operands(reduce: T.ReduceOp) -> tuple[MatmulOperand, MatmulOperand] | None:
    """(A, B) of `reduce` when it is a matmul (see the module docstring), else None: A the
    operand broadcast along the columns, B the one broadcast along the rows."""
    shape = shape_of(reduce.input)
    rank = len(shape)
    mul = reduce.input.owner
    if (reduce.kind.data != ReduceKind.SUM or reduce.axis_list != (rank - 1,) or rank < 3
            or not isinstance(mul, T.BinaryOp) or mul.kind.data != BinaryKind.MUL
            or 0 in shape):  # an empty product has no B to lay out
        return None
    expands = [x.owner for x in mul.operands]
    if not all(isinstance(e, T.ExpandOp) for e in expands):
        return None
    rows, cols = rank - 3, rank - 2
    for b, a in (expands, reversed(expands)):
        assert isinstance(b, T.ExpandOp) and isinstance(a, T.ExpandOp)
        b_shape, a_shape = shape_of(b.input), shape_of(a.input)
        if b_shape[rows] == 1 < shape[rows] and a_shape[cols] == 1 < shape[cols] == b_shape[cols]:
            return (MatmulOperand(a, prod(shape) // prod(a_shape)),
                    MatmulOperand(b, prod(shape) // prod(b_shape)))
    return None


def matmul_b(reduce: T.ReduceOp) -> MatmulOperand | None:
    """B of `reduce` when it is a matmul (see the module docstring), else None."""
    operands = matmul_operands(reduce)
    return operands[1] if operands else None


def read_transposed(reduce: T.ReduceOp) -> bool:
    """Whether the product of `reduce` is read through a permute that moves its columns
    (after reshapes): `(x.T @ dy).T`, whose kernel then runs over B's columns outermost and
    takes A's rows as its vector lanes, which a row-major A would make a gather."""
    values = [reduce.results[0]]
    while values:
        for use in values.pop().uses:
            user = use.operation
            if isinstance(user, T.ReshapeOp):
                values.append(user.results[0])
            elif isinstance(user, T.PermuteOp) and user.order[-1] != len(user.order) - 1:
                return True
    return False


def wants_row_major_a(a: MatmulOperand, reduce: T.ReduceOp, min_reuse: int) -> bool:
    """Whether A is read through a row-major copy (module docstring, "Strided A"): it is
    re-read `min_reuse` times or more (0: never), has `ALIAS_ROWS` rows or more, a reduce
    `MIN_PANEL_K` long or longer, is not contiguous along the reduce, and the product is
    not read transposed (`read_transposed`)."""
    shape = shape_of(a.expand.input)
    strides = view_strides(a.expand.input)
    return (min_reuse > 0 and a.reuse >= min_reuse and strides is not None
            and shape[-1] >= MIN_PANEL_K and shape[-3] >= ALIAS_ROWS and strides[-1] != 1
            and not read_transposed(reduce))


def view_key(value: SSAValue) -> tuple:
    """What `value` is, as the value its views start from and the views themselves: equal
    for two chains of the same views of one value (an LSTM's `dG.T @ x` and `dG.T @ h`
    reshape `dG.T` each on their own)."""
    root, chain = view_chain(value)
    return (root, *((type(op), tuple(sorted(op.properties.items())), op.results[0].type)
                    for op in reversed(chain)))


# A module's copies: (`view_key` of the value copied, how) -> the copy
Copies = dict[tuple[tuple, object], SSAValue]


def shared_copy(copies: Copies | None, value: SSAValue, how: object,
                make: Callable[[], SSAValue], mul: T.BinaryOp) -> SSAValue:
    """The copy of `value` made `how` (a LayoutCopy of a B, "row-major" for an A) that
    `mul` reads: the one an earlier product of the module made of the same views of one
    value (`view_key`), where that copy comes before `mul`, else a new one (`make`)."""
    key = (view_key(value), how)
    made = copies.get(key) if copies is not None else None
    if made is None or not _before(made, mul):
        made = make()
        if copies is not None:
            copies[key] = made
    return made


def row_major_a(a: MatmulOperand, mul: T.BinaryOp, copies: Copies) -> None:
    """Read A through a row-major copy of itself in the product `mul` (another user of
    A's expand keeps reading A), shared as `shared_copy` shares."""
    def make() -> SSAValue:
        contiguous = T.ContiguousOp(a.expand.input)
        block = a.expand.parent_block()
        assert block is not None
        block.insert_op_before(contiguous, a.expand)
        return contiguous.results[0]
    _read_through(a.expand, shared_copy(copies, a.expand.input, "row-major", make, mul), mul)


@dataclass(frozen=True)
class LayoutCopy:
    """The copy B is read through: k-major with `pad` elements after each row, or (`panel`
    > 0) in contiguous panels of `panel` columns, each k-major (no padding)."""

    pad: int = 0
    panel: int = 0


def wanted_copy(b: MatmulOperand, min_reuse: int, alias_bytes: int = 0,
                line_bytes: int = LINE_BYTES, panel_cols: int = 0) -> LayoutCopy | None:
    """The copy B is read through, or None for no copy: B must have more than one column
    and be re-read `min_reuse` times; then it is copied where its columns are not
    contiguous (the copy is their transpose), or where it has `ALIAS_ROWS` rows or more
    and its rows, as the kernel reads them, would lie a multiple of `alias_bytes` apart
    (0: never; the copy's rows are padded by `line_bytes`, at least one element). The copy
    is in panels of `panel_cols` columns (0: never) where they divide B's columns into
    `MIN_PANELS` or more and the reduce is `MIN_PANEL_K` long or longer; such a copy is
    also made of a plain B that is an argument of `@main` and re-read `MIN_PANEL_REUSE`
    times, and of any plain B re-read `min_reuse` times along a reduce `LONG_PANEL_K` long
    or longer (module docstring)."""
    shape = shape_of(b.expand.input)
    if shape[-1] == 1:
        return None
    root, _ = view_chain(b.expand.input)
    strides = view_strides(b.expand.input)
    if strides is None:
        return None
    cols = shape[-2]
    panel = (panel_cols if panel_cols > 0 and cols % panel_cols == 0
             and cols // panel_cols >= MIN_PANELS and shape[-1] >= MIN_PANEL_K else 0)
    if panel and b.reuse >= MIN_PANEL_REUSE and is_main_argument(root):
        return LayoutCopy(panel=panel)
    if panel and b.reuse >= min_reuse and shape[-1] >= LONG_PANEL_K:
        return LayoutCopy(panel=panel)
    if b.reuse < min_reuse:
        return None
    transpose = strides[-2] != 1
    itemsize = to_numpy_dtype(dtype_of(b.expand.input)).itemsize
    row_bytes = (cols if transpose else strides[-1]) * itemsize
    aliased = (alias_bytes > 0 and shape[-1] >= ALIAS_ROWS and cols > 1
               and row_bytes > 0 and row_bytes % alias_bytes == 0)
    if not (transpose or aliased):
        return None
    if panel:
        return LayoutCopy(panel=panel)
    return LayoutCopy(pad=max(1, line_bytes // itemsize) if aliased else 0)


def wants_copy(b: MatmulOperand, min_reuse: int, alias_bytes: int = 0,
               panel_cols: int = 0) -> bool:
    """Whether B is read through a copy (`wanted_copy`)."""
    return wanted_copy(b, min_reuse, alias_bytes, panel_cols=panel_cols) is not None


def layout_copy(b: MatmulOperand, copy: LayoutCopy, mul: T.BinaryOp,
                copies: Copies | None = None) -> None:
    """Read B through the copy of itself that `copy` describes (see the module docstring),
    in the product `mul` only: another user of B's expand (the backward pass's `dy @ W`
    reads `W`, whose columns are contiguous, through the same expand as the forward's
    `x @ W.T`) keeps reading B itself, where the copy would make its columns a gather.
    The matmuls of one module that read one B the same way share one copy
    (`shared_copy`)."""
    made = shared_copy(copies, b.expand.input, copy, lambda: _copy_of(b.expand, copy), mul)
    _read_through(b.expand, made, mul)


def _read_through(old: T.ExpandOp, made: SSAValue, mul: T.BinaryOp) -> None:
    """Make `mul` read `made` (a copy of `old`'s input) broadcast as `old` broadcasts."""
    own = all(use.operation is mul for use in old.result.uses)
    if own and _before(made, old):
        old.operands[0] = made  # the matmul's own expand reads the copy
        return
    expand = T.ExpandOp(made, shape_of(old.result))
    block = mul.parent_block()
    assert block is not None
    block.insert_op_before(expand, mul)
    for n, operand in enumerate(mul.operands):
        if operand is old.result:
            mul.operands[n] = expand.result
    if own:  # no other user: the old expand goes
        old.erase()


def _before(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined before `op` in `op`'s block."""
    owner = value.owner
    return isinstance(owner, Operation) and owner.is_before_in_block(op)


def _copy_of(expand: T.ExpandOp, copy: LayoutCopy) -> SSAValue:
    """`expand`'s input copied as `copy` says, seen with the input's shape again; its ops
    go right before `expand`."""
    src = expand.input
    ops = _panel_ops(src, copy.panel) if copy.panel else _k_major_ops(src, copy.pad)
    block = expand.parent_block()
    assert block is not None
    block.insert_ops_before(ops, expand)
    return ops[-1].results[0]


def _panel_ops(src: SSAValue, panel: int) -> list[Operation]:
    """B (..., m, k) in contiguous panels of `panel` columns, each k-major."""
    shape = shape_of(src)
    rank = len(shape)
    *batch, cols, k = shape
    swap = [*range(rank - 1), rank, rank - 1]
    ops: list[Operation] = [T.ReshapeOp(src, [*batch, cols // panel, panel, k])]
    ops.append(T.PermuteOp(ops[-1], swap))
    ops.append(T.ContiguousOp(ops[-1]))
    ops.append(T.PermuteOp(ops[-1], swap))
    ops.append(T.ReshapeOp(ops[-1], list(shape)))
    return ops


def _k_major_ops(src: SSAValue, pad: int) -> list[Operation]:
    """B (..., m, k) k-major, padded after each row by `pad` elements."""
    shape = shape_of(src)
    rank = len(shape)
    perm = [*range(rank - 2), rank - 1, rank - 2]
    ops: list[Operation] = [T.PermuteOp(src, perm)]
    if pad:
        high = [0] * (rank - 1) + [pad]
        ops.append(T.PadOp(ops[-1], [0] * rank, high))
    ops.append(T.ContiguousOp(ops[-1]))
    if pad:
        k_major = [*shape[:-2], shape[-1], shape[-2]]
        ops.append(T.SliceOp(ops[-1], [0] * rank, [1] * rank, k_major))
    ops.append(T.PermuteOp(ops[-1], perm))
    return ops


@dataclass(frozen=True)
class MatmulLayoutPass(ModulePass):
    """Give a matmul's B operand its columns contiguous and rows that do not alias (see the
    module docstring).

    Input: `pg_tensor` ops inside `func.func` (stage 1). Output: the same dialects, with a
    `pg_tensor.contiguous` copy before every B operand read `min-reuse` or more times whose
    columns are not contiguous (transposed) or whose rows lie a multiple of `alias-bytes`
    apart (padded by `line-bytes`; `alias-bytes=0`, the default, never pads); the copy is
    in column panels of `panel-cols` (0, the default: never), which are also made of
    `@main`'s plain arguments (see `wanted_copy`); and a row-major copy before every A
    operand read `a-min-reuse` or more times that is not contiguous along the reduce (0,
    the default: never; see `wants_row_major_a`). Guarantee: bit-identical results.
    """

    name = "matmul-layout"

    min_reuse: int = MIN_REUSE
    alias_bytes: int = 0
    line_bytes: int = LINE_BYTES
    panel_cols: int = 0
    a_min_reuse: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if (self.alias_bytes < 0 or self.line_bytes < 1 or self.panel_cols < 0
                or self.a_min_reuse < 0):
            raise PassFailedException("matmul-layout: alias-bytes, panel-cols and "
                                      "a-min-reuse must not be negative and line-bytes "
                                      "must be positive")
        copies: Copies = {}
        for reduce in [o for o in op.walk() if isinstance(o, T.ReduceOp)]:
            operands = matmul_operands(reduce)
            if operands is None:
                continue
            a, b = operands
            mul = reduce.input.owner
            assert isinstance(mul, T.BinaryOp)  # matmul_operands checked it
            copy = wanted_copy(b, self.min_reuse, self.alias_bytes, self.line_bytes,
                               self.panel_cols)
            if copy is not None:
                layout_copy(b, copy, mul, copies)
            if wants_row_major_a(a, reduce, self.a_min_reuse):
                row_major_a(a, mul, copies)
