"""`loop-optimize`: pick each kernel's schedule from its shape and the target's registers.

Input and output: `pg_loop` kernels. Guarantee: that of the actions it applies (`split`,
`interchange`: the same stores of the same values); each kernel's choice is recorded as its
`pg.schedule`, replayable with `loop-schedule`.

First, a range whose index the kernel divides by a constant that divides its size is
`unflatten`ed into two where that removes divisions (a 2 x 2 pool's windows); then nested
ranges whose indices only meet as `outer * inner_size + inner` (an (h, w) grid a kernel
reads and writes as h * w consecutive elements) `collapse` into one range; then every
reduce whose values the range after it computes again is `stash`ed (softmax's exps).
Then the heuristic, per reduce kernel that `loop-upcast` would tile (a reduce in its
innermost global range, stored contiguously along that range):

* matmul-like (a second global range around it): a register tile of `rows` x `cols`
  accumulators, lanes innermost (`convert-loop-to-uop{vectorize=true}` makes the columns
  vectors). Rows are 4, or 2, or none: never a remainder (see `tile_rows`). `cols` comes
  from the vector unit: half the vector registers hold accumulators, the rest the loaded
  row of B and broadcasts of A, so on AVX-512 (32 x 64-byte registers) f32 gets 4 x 64 (16
  zmm accumulators), on AVX2 (16 x 32 bytes) 4 x 16 — narrowed to 2 or 1 vectors where
  that leaves 4 column tiles and 4 vectors would not (128 columns: 4 x 32). When the tiles
  cover the columns exactly and there are 4 or more, the column tiles become the outer loop
  (BLIS's order: a K x cols panel of B stays in cache while the row tiles pass), with 6
  rows where 12 or more do (`panel_rows`); the rows 6 leave, when 2 or more, are a tile of
  their own (`remainder_tile`: 16 rows are 6 + 6 + 4). When that
  panel is more than a quarter of the cache (`cache-bytes`: one core's L2), K is blocked
  (`block_reduce`) into the longest blocks whose part of the panel fits an eighth of it,
  if a divisor of K of at least `MIN_BLOCK` does. Measured on a 2-core Zen 4 (1 MiB L2),
  schedules A/B in one process: 2048^2 fp32 160 ms unblocked, 138 with blocks of 256, 128
  with 512 (128 KiB of panel); at 1024^2 (a 256 KiB panel) blocking lost (12.3 -> 13.0-14.2
  ms), at 512^2 too (1.31 -> 1.54). Where `matmul-layout{panel-cols}` laid B out in
  column panels (the kernel divides the column index by their width, `panel_width`), the
  tile takes that width as its columns, the column range is not `unflatten`ed first, and
  the kernel's indices are simplified after the tiling (`loop_simplify_rules`), so each
  step of k reads one contiguous piece of a panel; the kernel records the width as
  `pg.b_panels` (DEBUG=2 shows it). Columns
  fewer than one vector get 8 lanes. Measured on a 2-core Zen 4, 1024^2 fp32: 4 x 8 tiles
  41 GFLOP/s, 4 x 64 with column tiles outermost 166. When the columns have no vector form
  (B transposed: `x @ w.T`, a gather along the columns) but the reduce reads both operands
  along itself, its reduce computes in vector lanes (dot products, below), and the rows
  move inside the columns with a tile of up to 8 x 4 dot products (`dot_tile`: each row of
  W is read once, each load of x or W serves several products).
* vector-matrix products (`x @ B` of one row) and column sums: a reduce with no row range
  around it whose columns have a vector form gets one accumulator per column, as many
  columns as half the registers hold (`wide_cols`), so each reduce step reads a long piece
  of a row.
* convolution-like: a matmul-like reduce that loads several column vectors per step (the
  kernel taps of a convolution, `column_loads`) gets one vector of columns and up to 8
  rows (`tap_tile`), row tiles outermost: the matmul's 4 x 4 vectors would hold 4 vectors
  per tap, 36 for a 3 x 3 kernel, more than there are registers.
* row reductions (no range around it): 8 rows at once, each its own accumulator (when 8
  divides the rows of a kernel's outermost range: no remainder beside it) — unless the
  reduce computes in vector lanes itself:
* every reduce not already in lanes, at least 4 vectors long and a multiple of the lane
  count, that has a vector form when split (`reduce_vector_form`: a contiguous float sum
  or product of vectorisable ops, e.g. softmax's sum of exp) or is a float max/min: its
  lanes compute partial reductions side by side (`split_reduce(n, lanes)`), then combine.
  The rows then run on the threads. This reorders a float sum (as any vectorised sum does).
  Before that, every float sum outside register tiles whose accumulators (one per lane
  where it splits) would each add more than `CHUNK_CHAIN` terms is added up in chunks
  (`chunk_reduce(n, size)`, `size` the divisor nearest the square root of its length, at
  least 64 per lane, a multiple of 64 where one is), and the lanes then split each chunk:
  for accuracy, not speed (docs/design.md, "Float sums").

A reduce kernel's short row around a pooling window (8 to 16 outputs, a reduce shorter
than `min-reduce`, no vector form along the row) is unrolled whole (`window_rows.py`: the
row's outputs side by side). A transposing copy (an elementwise kernel that stores along
its innermost range and loads along the range around it, lines apart per step) is walked
in 16 x 16 blocks
(`transpose_tiles.py`: 4-7x faster on the copies measured). Other elementwise kernels get
vector lanes on their innermost range where its body has a vector form
(`elementwise_lanes`), the rest is left to LLVM's and GCC's loop vectorisers. Options:
`vector-bytes` and `registers` (the target's vector register width and count; `realize()`
passes the host's, `picograd.dialects.capabilities.host_vector_registers`), `cache-bytes`
(one core's L2 cache, `host_cache_bytes`; 0: no cache blocking), `min-reduce`
(the shortest reduce worth tiling), `big-work` (the multiply-adds below which a kernel
gets 8 columns instead; 0 by default) and `min-work` (the iterations, reduce included,
below which a candidate whose sum a tile would not reorder stays untiled, `small_untiled`:
0 by default; the CPU pipelines pass `pipelines.MIN_TILE_WORK`).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntAttr, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_loop as L
from picograd.dialects.abi import PANELS_ATTR
from picograd.dialects.dtypes import is_float, to_numpy_dtype
from picograd.dialects.pg import BinaryKind, RangeKind, ReduceKind
from picograd.passes.loop.lane_vectors import body_vector_form, reduce_vector_form
from picograd.passes.loop.loop_simplify import loop_simplify_rules
from picograd.passes.loop.loop_upcast import is_candidate, splittable_outer, tile_actions
from picograd.passes.loop.schedule import (
    Action,
    ScheduleError,
    apply_schedule,
    axes,
    collapse_problem,
    collapse_range,
    record_schedule,
    reduces,
    stash_problem,
    unflatten_problem,
)
from picograd.passes.loop.transpose_tiles import transpose_tiles
from picograd.passes.loop.window_rows import window_rows

ROW_LANES = 8  # rows a row reduction computes at once
MAX_TAP_ROWS = 8  # row lanes of a reduce that loads several column vectors (`tap_tile`)
# Below this many multiply-adds a kernel gets SMALL_COLS columns (by default none does: with
# the lanes as vectors, a 4 x 64 tile compiles about as fast as a 4 x 8 one).
BIG_TILE_WORK = 0
SMALL_COLS = 8
# The shortest reduce, in vectors, worth computing as partial reductions in vector lanes.
MIN_SPLIT_VECTORS = 4
# The narrowest vector worth its lanes (an SSE register of f32).
MIN_LANES = 4
# Column tiles a matmul needs before they become its outer loop (and what its threads share);
# the tile narrows (4, 2, 1 vectors) to leave that many where it can. A wider tile does more
# multiply-adds per load; more tiles leave the threads more chunks to share. Measured (fp32,
# AVX-512, one thread, CPU time on a busy 2-core Xeon), GFLOP/s of 6-row tiles 16 / 32 / 64
# columns wide: 128^2 35 / 55 / 61, 256^2 - / 64 / 78-104.
MIN_COLUMN_TILES = 4
# ... and the column tiles of a vector-matrix product (`wide_cols`), a memory-bound loop
MIN_WIDE_TILES = 8
# Rows of a matmul tile whose column tiles are the outer loop (`panel_rows`).
PANEL_ROWS = 6
# A matmul's B panel is blocked when it takes more than 1/PANEL_SHARE of the cache, into
# blocks of 1/BLOCK_SHARE of it, each at least MIN_BLOCK rows.
PANEL_SHARE = 4
BLOCK_SHARE = 8
MIN_BLOCK = 64


@dataclass(frozen=True)
class VectorUnit:
    """What a register tile is sized by."""

    vector_bytes: int
    registers: int

    def lanes(self, element_bytes: int) -> int:
        # narrower elements (f16, i8, bool) are computed in 32-bit registers
        return max(1, self.vector_bytes // max(element_bytes, 4))


def tile_rows(m: int) -> int:
    """Row lanes for `m` rows: 4, or 2 when 4 does not divide `m`, or none. Rows never leave
    a remainder: the row range is usually the kernel's outermost, and a remainder range
    beside it would keep the kernel from running in chunks on several threads."""
    return 4 if m % 4 == 0 else 2 if m % 2 == 0 else 1


def big_tile_cols(unit: VectorUnit, element_bytes: int, rows: int, n: int) -> int:
    """The widest column count (4, 2 or 1 vectors) whose `rows` x `cols` accumulators fit in
    half the vector registers and that leaves `MIN_COLUMN_TILES` column tiles (else the
    widest that fits `n` columns); 0 when not even one vector fits."""
    lanes = unit.lanes(element_bytes)
    budget = max(1, unit.registers // 2)
    fitting = [c for c in (4 * lanes, 2 * lanes, lanes)
               if c <= n and max(rows, 1) * (c // lanes) <= budget]
    return next((c for c in fitting if n // c >= MIN_COLUMN_TILES), fitting[0] if fitting else 0)


def column_loads(reduce: L.ReduceOp, column: SSAValue) -> int:
    """Loads in `reduce`'s body whose index depends on `column`: a vector each per column
    tile and reduce step (a matmul's B once, a convolution's B once per kernel tap)."""
    memo: dict[SSAValue, bool] = {}

    def depends(value: SSAValue) -> bool:
        if value is column:
            return True
        if value not in memo:
            op = value.owner
            memo[value] = isinstance(op, L.IndexOp) and (depends(op.lhs) or depends(op.rhs))
        return memo[value]

    return sum(1 for op in reduce.body.walk() if isinstance(op, L.LoadOp) and depends(op.index))


def tap_tile(unit: VectorUnit, element_bytes: int, taps: int, m: int, n: int
             ) -> tuple[int, int] | None:
    """Rows and columns of a register tile for a reduce that loads `taps` column vectors
    per step (a convolution's kernel taps, `column_loads`), over `m` rows and `n` columns:
    one vector of columns (each more costs `taps` registers) and the most rows, up to
    `MAX_TAP_ROWS` and dividing `m`, whose accumulators fit the vector registers beside the
    tap vectors and a broadcast. None when less than a vector of columns or nothing fits.

    Measured on a 2-core Zen 4 (32 zmm), the reduce kernels of 3 x 3 convolutions, A/B in
    one process (ms; rows x columns): conv2d (32,16,32,32) x (32,16,3,3): 4 x 64 (the
    matmul's tile, 36 tap vectors: spilled) 2.05, 4 x 32 1.82, 4 x 16 1.40, 8 x 16 1.35,
    16 x 16 1.30; the example CNN's second convolution forward: 4 x 16 1.35, 8 x 16 1.39,
    16 x 16 1.59; its input gradient: 4 x 16 1.32, 8 x 16 1.25, 16 x 16 1.36."""
    lanes = unit.lanes(element_bytes)
    if n < lanes:
        return None
    rows = next((r for r in (16, 8, 4, 2, 1) if r <= MAX_TAP_ROWS and m % r == 0
                 and r + taps + 1 <= unit.registers), 0)
    return (rows, lanes) if rows else None


def kernel_actions(kernel: L.KernelOp, unit: VectorUnit, inner: L.RangeOp,
                   big_work: int = BIG_TILE_WORK, cache_bytes: int = 0) -> list[Action]:
    """The actions that tile one candidate range of `kernel`; a last `block_reduce` may not
    apply (`optimize_kernel` tries it)."""
    reduce = next(op for op in inner.body.block.ops if isinstance(op, L.ReduceOp))
    outer = splittable_outer(inner, 2)
    n = inner.end.data - inner.start.data
    element_bytes = to_numpy_dtype(reduce.result.type).itemsize
    if outer is None:
        if splits_into_lanes(reduce, unit):
            return []  # the reduce computes in vector lanes itself (`reduce_splits`)
        top_level = isinstance(inner.parent_op(), L.KernelOp)
        if body_vector_form(inner) and (cols := wide_cols(unit, element_bytes, n, top_level)):
            return tile_actions(kernel, inner, 1, cols)  # a vector-matrix product's columns
        if top_level and n % ROW_LANES:  # see tile_rows: no remainder beside the top range
            return []
        return tile_actions(kernel, inner, 1, ROW_LANES)
    if not body_vector_form(inner) and splits_into_lanes(reduce, unit):
        # columns are a gather (B transposed) but the reduce reads along: dot products
        return dot_tile(kernel, unit, inner, outer, reduce)
    m = outer.end.data - outer.start.data
    rows = tile_rows(m)
    work = _work(inner) * (reduce.end.data - reduce.start.data)
    panel = panel_width(kernel, inner, unit)
    cols = panel or big_tile_cols(unit, element_bytes, rows, n)
    taps = column_loads(reduce, inner.index)
    if taps > 1 and work >= big_work and (tile := tap_tile(unit, element_bytes, taps, m, n)):
        return tile_actions(kernel, inner, *tile)  # row tiles outermost: see tap_tile
    if work < big_work or not cols:
        return tile_actions(kernel, inner, rows, SMALL_COLS)
    if n % cols or n // cols < MIN_COLUMN_TILES:
        return tile_actions(kernel, inner, rows, cols)
    # column tiles outermost: a tile's K x cols panel of B stays in cache while every row
    # tile streams by (BLIS's loop order). The rows move inside the column tiles before they
    # are split, so a remainder of rows stays inside them too (the kernel keeps one top-level
    # range, which the threads share); the column tiles take the outer range's axis.
    panel_row = cols * element_bytes
    # a contiguous panel (B in `panel_width` panels) streams from L3 with the prefetchers:
    # blocking K for it only adds passes over the output. Measured (one thread, CPU time,
    # a busy 2-core Xeon, GFLOP/s blocked / not): 64 x 4096 @ 4096 x 256 31 / 63, 384 x
    # 4096 @ 4096 x 512 32 / 76, 64 x 8192 @ 8192 x 256 28 / 41
    size = 0 if panel else block_size(reduce.end.data - reduce.start.data, panel_row,
                                      cache_bytes)
    rows = panel_rows(unit, element_bytes, m, cols, rows, remainder=not size)
    at = axes(kernel).index(outer)
    actions = [Action("split", at + 1, cols, RangeKind.UPCAST)] if cols > 1 else []
    actions.append(Action("interchange", at))
    if rows > 1:
        actions.append(Action("split", at + 1, rows, RangeKind.UPCAST))
        actions += remainder_tile(kernel, actions, m, rows)
    if size:
        actions.append(Action("block_reduce", reduces(kernel).index(reduce), size, at=at))
    return actions


def remainder_tile(kernel: L.KernelOp, actions: list[Action], m: int, rows: int
                   ) -> list[Action]:
    """The rows a `rows`-row tile leaves of `m` (`split` runs them in a copy of the row
    range after the tiles) as one tile of their own, of `tile_rows` of them, when that is
    more than one row: untiled, each of them loaded every vector of the B panel for one
    row's multiply-adds. Measured (DEBUG=2 kernel sums, 2-core Zen 4, alternating runs):
    the ONNX LSTM's 126 per-step (16 x 256) @ (256 x 1024), two 6-row tiles and 4 rows
    left, 10.7-14.3 -> 7.8-9.7 ms; with 2 rows left (32 rows) no change showed."""
    rest = m % rows
    if rest < 2 or tile_rows(rest) < 2:
        return []
    probe = kernel.clone()
    apply_schedule(probe, actions)
    tails = [i for i, r in enumerate(axes(probe)) if (r.start.data, r.end.data) == (m - rest, m)]
    if len(tails) != 1:
        return []
    return [Action("split", tails[0], tile_rows(rest), RangeKind.UPCAST)]


def panel_width(kernel: L.KernelOp, inner: L.RangeOp, unit: VectorUnit) -> int:
    """The width of the column panels B is laid out in (`matmul-layout{panel-cols}`) when
    `inner` is a matmul's column range that the tile can take in panels: the reduce
    divides `inner`'s index by a constant and takes the remainder by it (the panel and the
    column in it), and the constant divides the range into `MIN_COLUMN_TILES` or more
    pieces, is a whole number of vectors and, in `tile_rows` rows, fits half the vector
    registers; else 0. The tile then has that many columns, so the split of the column
    range turns B's `j // width` and `j % width` into the tile's index and its lanes (after
    `loop_simplify_rules`): each step of k reads the next `width` elements of the panel."""
    outer = splittable_outer(inner, 2)
    reduce = next((op for op in inner.body.block.ops if isinstance(op, L.ReduceOp)), None)
    if outer is None or reduce is None:
        return 0
    n, m = inner.end.data - inner.start.data, outer.end.data - outer.start.data
    lanes = unit.lanes(to_numpy_dtype(reduce.result.type).itemsize)
    budget = max(1, unit.registers // 2)
    body = reduce.body

    def divisors(kind: BinaryKind) -> set[int]:
        return {op.rhs.owner.value.data for op in body.walk()
                if isinstance(op, L.IndexOp) and op.kind.data == kind
                and op.lhs is inner.index and isinstance(op.rhs.owner, L.ConstOp)}

    # the panel form: the column index is split into panel (//) and column in it (%)
    widths = divisors(BinaryKind.DIV) & divisors(BinaryKind.MOD)
    fitting = [w for w in widths if w > 0 and n % w == 0 and n // w >= MIN_COLUMN_TILES
               and w % lanes == 0 and tile_rows(m) * (w // lanes) <= budget]
    return max(fitting, default=0)


def panel_rows(unit: VectorUnit, element_bytes: int, m: int, cols: int, rows: int,
               remainder: bool) -> int:
    """Rows of a tile whose column tiles are the outer loop: `PANEL_ROWS` (BLIS's 6 x NR
    micro-tile: more multiply-adds per load of the B panel) where its accumulators, a row
    of B and a broadcast fit the vector registers, there are two tiles of rows or more, and
    it divides `m` unless a `remainder` of rows may stay beside the tiles (not in a
    cache-blocked reduce: `block_reduce` takes one reduce per block loop); else `rows`.
    Measured (fp32, AVX-512, one process, a busy 2-core Xeon), GFLOP/s: 256^2 4 x 32 46-70,
    6 x 32 57-83; 1024^2 4 x 64 16-17, 6 x 64 20-23."""
    vectors = max(1, cols // unit.lanes(element_bytes))
    fits = PANEL_ROWS * vectors + vectors + 1 <= unit.registers
    divides = remainder or m % PANEL_ROWS == 0
    return PANEL_ROWS if fits and divides and m >= 2 * PANEL_ROWS else rows


def wide_cols(unit: VectorUnit, element_bytes: int, n: int, top_level: bool) -> int:
    """Columns for a reduce over rows with no range of rows around it (a vector-matrix
    product `x @ B` of one row, a column sum): one accumulator per column, so the widest
    count of vectors that fits half the registers and leaves `MIN_WIDE_TILES` tiles (else
    the widest that fits), dividing `n` when the range is the kernel's top one; 0 when not
    even a vector fits. Each step of the reduce then reads `cols` contiguous elements of a
    row: measured (1 x 4096 @ 4096 x 4096 fp32, one process, a busy 2-core Xeon) 8 columns
    0.3 GFLOP/s, 64 0.6, 256 1.3 (numpy 1.25: a memory-bound product)."""
    lanes = unit.lanes(element_bytes)
    widths = [lanes * v for v in narrower_counts(max(1, unit.registers // 2))]
    fitting = [c for c in widths if c <= n and not (top_level and n % c)]
    return next((c for c in fitting if n // c >= MIN_WIDE_TILES), fitting[0] if fitting else 0)


def narrower_counts(count: int) -> list[int]:
    """`count`, then its halves down to 1."""
    counts = [count]
    while counts[-1] > 1:
        counts.append(counts[-1] // 2)
    return counts


def dot_tile(kernel: L.KernelOp, unit: VectorUnit, inner: L.RangeOp, outer: L.RangeOp,
             reduce: L.ReduceOp) -> list[Action]:
    """The actions for dot products (`x @ W.T` with fewer rows than `matmul-layout` copies
    W for): the rows' range moves inside the columns', so each row of W is read once while
    the few rows of x stay in the L1 cache, instead of all of W once per row; then a tile of
    `rows` x `cols` dot products (each a vector of partial sums: the reduce in lanes) shares
    each load of x among `cols` columns and each load of W among `rows` rows. Rows and
    columns are split only where the tile divides them (the columns' range may be the
    kernel's top one, which the threads share). None (the plain dot products) where the
    reduce's lanes would each add more than `CHUNK_CHAIN` terms (a sum in a register tile is
    not added up in chunks). Measured (8 x 384 @ (1536 x 384).T fp32, one process, a busy
    2-core Xeon): dot products 11.6-12.3 GFLOP/s, rows inside 17-18.5, 8 x 2 tile 21-23.5."""
    lanes = reduce_lanes(reduce, unit)
    k = reduce.end.data - reduce.start.data
    if not lanes or k // lanes > CHUNK_CHAIN:
        return []
    m, n = outer.end.data - outer.start.data, inner.end.data - inner.start.data
    budget = max(1, unit.registers // 2)
    rows = next((r for r in (8, 4, 2) if m % r == 0 and r <= budget), 1)
    cols = next((c for c in (4, 2) if n % c == 0 and rows * c <= budget), 1)
    at = axes(kernel).index(outer)
    actions = [Action("interchange", at)]  # [.., columns (at), rows (at + 1)]
    if rows > 1:
        actions.append(Action("split", at + 1, rows, RangeKind.UPCAST))
    if cols > 1:  # the column lanes move inside the row blocks, next to the row lanes
        actions += [Action("split", at, cols, RangeKind.UPCAST), Action("interchange", at + 1)]
    actions.append(Action("split_reduce", reduces(kernel).index(reduce), lanes))
    return actions


def block_size(k: int, panel_row: int, cache_bytes: int) -> int:
    """The block length for a reduce of `k` iterations that reads `panel_row` bytes of a
    panel each: 0 when the panel fits `cache_bytes // PANEL_SHARE`, else the longest divisor
    of `k` of at least `MIN_BLOCK` whose rows fit `cache_bytes // BLOCK_SHARE` (0 if none
    does)."""
    if k * panel_row <= cache_bytes // PANEL_SHARE:
        return 0
    budget = cache_bytes // BLOCK_SHARE
    return next((d for d in range(min(k - 1, budget // panel_row), MIN_BLOCK - 1, -1)
                 if k % d == 0), 0)


def _work(inner: L.RangeOp) -> int:
    """Iterations of `inner` and every range around it."""
    work, op = 1, inner
    while isinstance(op, L.RangeOp):
        work *= op.end.data - op.start.data
        op = op.parent_op()
    return work


def splits_into_lanes(red: L.ReduceOp, unit: VectorUnit) -> bool:
    """Whether reduce `red` should compute as partial reductions in vector lanes: not
    already in lanes, some vector width fits it (`reduce_lanes`), and then either vector
    code (`reduce_vector_form`) or a max/min (independent lanes of compare-and-select,
    which LLVM's SLP vectoriser packs)."""
    if red.range_kind.data != RangeKind.REDUCE or not reduce_lanes(red, unit) or _in_lanes(red):
        return False
    return reduce_vector_form(red) or (
        red.kind.data in (ReduceKind.MAX, ReduceKind.MIN) and is_float(red.result.type))


def narrower_lanes(lanes: int) -> list[int]:
    """The vector widths to try, widest first: the full register, then halves down to 4
    lanes (a 28-wide row takes 16 + 8 + 4 lanes, a reduce of 840 = 8 x 105 takes 8)."""
    widths = [lanes]
    while widths[-1] // 2 >= MIN_LANES:
        widths.append(widths[-1] // 2)
    return widths


def reduce_lanes(red: L.ReduceOp, unit: VectorUnit) -> int:
    """For a reduce at least `MIN_SPLIT_VECTORS` full vectors long, the widest vector (of
    `narrower_lanes`) whose lane count divides it; else 0."""
    size = red.end.data - red.start.data
    lanes = unit.lanes(to_numpy_dtype(red.result.type).itemsize)
    if size < MIN_SPLIT_VECTORS * lanes:
        return 0
    return next((w for w in narrower_lanes(lanes) if size % w == 0), 0)


def _in_lanes(op: L.ReduceOp) -> bool:
    """Whether `op` is inside an upcast range or a reduce over upcast lanes."""
    parent = op.parent_op()
    while isinstance(parent, L.RangeOp | L.ReduceOp):
        kind = parent.kind.data if isinstance(parent, L.RangeOp) else parent.range_kind.data
        if kind == RangeKind.UPCAST:
            return True
        parent = parent.parent_op()
    return False


def reduce_splits(kernel: L.KernelOp, unit: VectorUnit) -> list[Action]:
    """`split_reduce` into vector lanes for every reduce `splits_into_lanes` takes, the last
    first (splitting one renumbers only the reduces after it)."""
    return [Action("split_reduce", n, reduce_lanes(red, unit))
            for n, red in reversed(list(enumerate(reduces(kernel))))
            if splits_into_lanes(red, unit)]


# A float sum whose accumulators would each add more than this many terms is added up in
# chunks (`chunk_reduce`): one accumulator's error grows with the number of terms it has
# added (docs/design.md, "Float sums"). A sum that splits into vector lanes gets chunks of
# at least 64 iterations per lane (shorter vector loops cost more than they save).
CHUNK_CHAIN = 512
CHUNK_OUTER = 128  # ... and a sum over chunks longer than this, in chunks again


def chunk_size(length: int, least: int = 8) -> int:
    """The divisor of `length` nearest (by ratio) to its square root, or to `least` when
    that is larger, leaving 2 chunks or more; a multiple of 64 where one is (so each chunk
    still splits into vector lanes); 0 when there is none."""
    want = max(math.sqrt(length), least)
    sizes = [s for d in range(1, math.isqrt(length) + 1) if length % d == 0
             for s in (d, length // d) if 8 <= s <= length // 2]
    aligned = [s for s in sizes if s % 64 == 0]
    return min(aligned or sizes, key=lambda s: abs(math.log(s / want)), default=0)


def _chunkable(red: L.ReduceOp) -> bool:
    """A float sum over plain iterations, with no ranges inside it nor a register tile
    around it (the tiles' reduces are matmul-like K loops, summed in lanes and tiles)."""
    if (red.kind.data != ReduceKind.SUM or red.range_kind.data != RangeKind.REDUCE
            or not is_float(red.result.type)):
        return False
    if any(isinstance(op, L.RangeOp | L.ReduceOp) for op in red.body.walk()):
        return False
    parent = red.parent_op()
    while isinstance(parent, L.RangeOp | L.ReduceOp):
        if isinstance(parent, L.RangeOp) and parent.kind.data == RangeKind.UPCAST:
            return False
        parent = parent.parent_op()
    return True


def reduce_chunks(kernel: L.KernelOp, unit: VectorUnit) -> list[Action]:
    """`chunk_reduce` for every float sum `_chunkable` takes whose accumulators (one, or
    one per vector lane where it will split into lanes) would add more than `CHUNK_CHAIN`
    terms, the last first; the reduce over the chunks is chunked again while it is longer
    than `CHUNK_OUTER`, since its partials are the largest numbers the sum adds to."""
    actions = []
    for n, red in reversed(list(enumerate(reduces(kernel)))):
        if not _chunkable(red):
            continue
        lanes = reduce_lanes(red, unit) if splits_into_lanes(red, unit) else 1
        length = red.end.data - red.start.data
        limit, least = CHUNK_CHAIN * lanes, 64 * lanes if lanes > 1 else 8
        while length > limit and (size := chunk_size(length, least)):
            actions.append(Action("chunk_reduce", n, size))
            length, limit, least = length // size, CHUNK_OUTER, 8
    return actions


def collapse_ranges(kernel: L.KernelOp) -> None:
    """`collapse` each range with the one range it holds, innermost pairs first, where that
    leaves no more index divisions and remainders than there were (the two indices only
    ever met as `outer * inner_size + inner`): a matmul over an (h, w) grid of columns
    becomes one over h * w columns, which the register tile then takes. Each collapse is
    tried on a copy of the range beside it (the rest of the kernel does not change), which
    takes its place when it is taken."""
    while True:
        ranges = axes(kernel)
        for axis in reversed(range(len(ranges))):
            r = ranges[axis]
            if collapse_problem(r) is not None:
                continue
            parent = r.parent_block()
            assert parent is not None
            trial = r.clone()
            parent.insert_op_before(trial, r)
            merged = collapse_range(trial)
            if _div_mods(merged) <= _div_mods(r):
                r.detach()
                r.erase()
                record_schedule(kernel, [Action("collapse", axis)])
                break
            merged.detach()
            merged.erase()
        else:
            return


def unflatten_ranges(kernel: L.KernelOp, unit: VectorUnit, min_reduce: int) -> None:
    """`unflatten` each range whose index the kernel divides (or takes the remainder of) by
    a constant that divides its size, where that leaves fewer index divisions and remainders:
    a kernel over (H, W) that reads a 2 x 2 pool's (H/2, 2, W/2, 2) windows loops over them
    instead. Each is tried on a copy, which replaces the kernel's body when it is taken;
    after a taken one the candidates are read afresh. A matmul's column range divided by
    the width of B's panels (`panel_width`) stays whole: the register tile splits it."""
    def panel(axis: int, size: int) -> bool:
        r = axes(kernel)[axis]
        return is_candidate(r, min_reduce) and panel_width(kernel, r, unit) == size

    while any(_unflattened(kernel, axis, size) for axis, size in _divisors(kernel)
              if not panel(axis, size)):
        pass


def _divisors(kernel: L.KernelOp) -> list[tuple[int, int]]:
    """(axis, size) for each range index the kernel divides by a constant `size` that
    `unflatten` can take, axes in order, sizes ascending."""
    ranges = axes(kernel)
    axis_of = {r.index: axis for axis, r in enumerate(ranges)}
    found = {(axis_of[op.lhs], op.rhs.owner.value.data) for op in kernel.walk()
             if isinstance(op, L.IndexOp) and op.kind.data in (BinaryKind.DIV, BinaryKind.MOD)
             and op.lhs in axis_of and isinstance(op.rhs.owner, L.ConstOp)}
    return sorted((axis, size) for axis, size in found
                  if unflatten_problem(ranges[axis], size) is None)


def _unflattened(kernel: L.KernelOp, axis: int, size: int) -> bool:
    """Unflatten range `axis` by `size` if that removes index divisions (tried on a copy)."""
    trial = kernel.clone()
    apply_schedule(trial, [Action("unflatten", axis, size)])
    if _div_mods(trial) < _div_mods(kernel):
        _take_body(kernel, trial)
        return True
    trial.erase()
    return False


def _take_body(kernel: L.KernelOp, trial: L.KernelOp) -> None:
    """Give `kernel` the body and attributes (its recorded schedule) of its copy `trial`."""
    old, new = kernel.body.block, trial.body.block
    trial.body.detach_block(new)
    kernel.body.insert_block_before(new, old)
    kernel.body.detach_block(old)
    old.erase()
    kernel.attributes.update(trial.attributes)
    trial.erase()


def _div_mods(root: L.KernelOp | L.RangeOp) -> int:
    return sum(1 for op in root.walk() if isinstance(op, L.IndexOp)
               and op.kind.data in (BinaryKind.DIV, BinaryKind.MOD))


def elementwise_lanes(kernel: L.KernelOp, unit: VectorUnit) -> list[Action]:
    """`split(axis, lanes, upcast)` of each innermost range with stores and no reduce in
    its body (an elementwise kernel's, a softmax's output loop; the kernel has no lanes yet)
    when its body has a vector form and the range holds a vector (a narrower one, down to
    `MIN_LANES`, when the register's is longer than the range): the lanes become vector
    ops. LLVM's loop vectoriser would otherwise first unroll a short
    innermost range (a conv's 32 columns) and vectorise the range around it, with gathers and
    scatters (a 6x slower bias + relu). A remainder stays scalar; the kernel's top-level
    range is split only when the lanes divide it (a remainder beside it would keep the
    kernel from running in chunks on the threads)."""
    if any(isinstance(op, L.RangeOp) and op.kind.data != RangeKind.GLOBAL
           for op in kernel.walk()):
        return []  # tiled already
    actions = []
    for axis, r in reversed(list(enumerate(axes(kernel)))):  # the last first: axes stay valid
        body = list(r.body.block.ops)
        stores = [op for op in body if isinstance(op, L.StoreOp)]
        if not stores or any(isinstance(op, L.RangeOp | L.ReduceOp) for op in body):
            continue
        size = r.end.data - r.start.data
        top_level = isinstance(r.parent_op(), L.KernelOp)
        full = unit.lanes(to_numpy_dtype(stores[0].value.type).itemsize)
        # a narrower vector only for a row shorter than a register (LLVM's own vectoriser
        # takes a long top-level range whole, remainder and all)
        widths = narrower_lanes(full) if size < full else [full]
        lanes = next((w for w in widths if size >= w and not (top_level and size % w)), 0)
        if not lanes or not body_vector_form(r):
            continue
        actions.append(Action("split", axis, lanes, RangeKind.UPCAST))
    return actions


def small_untiled(inner: L.RangeOp, unit: VectorUnit, min_work: int) -> bool:
    """Whether candidate `inner` stays untiled as a small kernel's: its reduce and the
    ranges around it take fewer than `min_work` iterations, and a tile would not change
    how its sum adds (it splits into no vector lanes and is too short for chunks: in a tile
    or not, it adds its terms in order). Such a kernel runs in microseconds either way,
    while a tile's lanes, unrolled, cost milliseconds of compile: the MLP step's four
    (128, 10) row reductions of the loss, 8 row lanes each, took 0.15-0.2 s of CPU time
    of its cold compile (the passes and LLVM)."""
    reduce = next(op for op in inner.body.block.ops if isinstance(op, L.ReduceOp))
    length = reduce.end.data - reduce.start.data
    return (_work(inner) * length < min_work and length <= CHUNK_CHAIN
            and not splits_into_lanes(reduce, unit))


def optimize_kernel(kernel: L.KernelOp, unit: VectorUnit, min_reduce: int,
                    big_work: int = BIG_TILE_WORK, cache_bytes: int = 0,
                    min_work: int = 0) -> None:
    unflatten_ranges(kernel, unit, min_reduce)
    collapse_ranges(kernel)
    apply_schedule(kernel, [Action("stash", n) for n, red in enumerate(reduces(kernel))
                            if stash_problem(red) is None])
    candidates = [r for r in axes(kernel) if is_candidate(r, min_reduce)
                  and not small_untiled(r, unit, min_work)]
    panels = max((panel_width(kernel, r, unit) for r in candidates), default=0)
    for inner in reversed(candidates):  # the last first: the others' axes stay valid
        actions = kernel_actions(kernel, unit, inner, big_work, cache_bytes)
        blocking = actions[-1:] if actions and actions[-1].op == "block_reduce" else []
        apply_schedule(kernel, actions[:len(actions) - len(blocking)])
        with contextlib.suppress(ScheduleError):  # checked before anything changes
            apply_schedule(kernel, blocking)  # a tile with an epilogue is not blocked
    if panels:  # B's `j // width`, `j % width` become the tile's index and lanes
        loop_simplify_rules.apply(kernel)
        kernel.attributes[PANELS_ATTR] = IntAttr(panels)
    apply_schedule(kernel, reduce_chunks(kernel, unit))  # before lanes: each chunk in lanes
    apply_schedule(kernel, reduce_splits(kernel, unit))
    apply_schedule(kernel, transpose_tiles(kernel))
    apply_schedule(kernel, window_rows(kernel, min_reduce))
    apply_schedule(kernel, elementwise_lanes(kernel, unit))


@dataclass(frozen=True)
class LoopOptimizePass(ModulePass):
    """Give every kernel the schedule the heuristic picks for the given vector unit."""

    name = "loop-optimize"

    vector_bytes: int = 32
    registers: int = 16
    min_reduce: int = 8
    big_work: int = BIG_TILE_WORK
    cache_bytes: int = 0
    min_work: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # a vector register holds at least one 32-bit lane (narrower elements are computed
        # in 32 bits), else every lane count is 1 and the schedules split by 1
        if self.vector_bytes < 4 or self.registers < 1 or self.cache_bytes < 0:
            raise PassFailedException("loop-optimize: vector-bytes must be at least 4, "
                                      "registers positive, cache-bytes not negative")
        unit = VectorUnit(self.vector_bytes, self.registers)
        for kernel in op.ops:
            if isinstance(kernel, L.KernelOp):
                optimize_kernel(kernel, unit, self.min_reduce, self.big_work,
                                self.cache_bytes, self.min_work)
