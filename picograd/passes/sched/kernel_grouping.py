"""Which values of a `pg_tensor` graph are materialised into buffers (kernel boundaries).

`convert-tensor-to-sched` makes one kernel per materialised value: the kernel computes that
value from its *cone*, the ops reachable backwards from it without crossing a buffer (a
function argument or another materialised value). Everything else is fused: recomputed
inside each kernel whose cone reaches it.

A live value (one the graph results depend on) is materialised when it is

* a graph result (unless it is directly a function argument, which is its own buffer);
* a `pg_tensor.scatter_add` result (its kernel writes the base, then adds into it: its
  loops are its own, so it is never fused into a reader);
* a `pg_tensor.contiguous` result (a buffer is what it asks for: a matmul operand in the
  memory order its kernel wants, `matmul-layout`);
* a `pg_tensor.attention` result (its loops are its own: one row of scores at a time, see
  convert-sched-to-loop); it reads each element of q once per key and each of k and v once
  per query, so the reuse rule below stores any computed operand first;
* a `pg_tensor.reduce` result that another op consumes, unless it is fused row-wise (below).
  A chain of bijective views (reshape, permute, flip), each the single user of the one
  before, only re-indexes the reduce's output, so the chain stays in the reduce's kernel
  and its last value is the one materialised (a matmul's final reshape from [M, N, 1] to
  [M, N] costs no kernel);
* shared too widely to recompute: more than `MAX_RECOMPUTED_USERS` distinct consumer ops
  (slices that read pairwise disjoint elements, such as the taps of a pool whose windows
  tile its input, count as one: together they read each element once) and a recompute cost
  above `MAX_RECOMPUTE_COST`. The cost of a value is 1 plus the cost of
  its operands, where function arguments, constants and materialised values cost 0 (it
  over-counts shared sub-cones, which only makes the rule more eager to materialise).
  The rule is decided in program order, before the kernels of the consumers are known;
  afterwards, latest first, a value it stored is fused back when every path from it runs
  through same-shape elementwise ops to one value: the one kernel that computes that value
  evaluates it once per element however many ops read it (erf's input, |x| and
  min(|x|, 4), read by both branches of its piecewise fit: GELU was 4 kernels, now 1).

With a buffer limit (a target's `max_buffers`, e.g. 8 bindings on WebGPU), a kernel may read
at most `limit - 1` buffers besides the one it writes: walking the live ops in program order
with the set of buffers each fused value reads, an op whose operands together read too many
gets its widest-reading fused operand materialised (repeatedly), so every kernel fits.

Row-wise reduction fusion (softmax, log_softmax, layernorm, `sum / n`): a consumed reduce R,
over axes A of an input of shape S (result shape S' = S with A set to 1), that exactly one
kernel K reads, is computed inside K instead when K can evaluate it once per row:

* K's result has shape S' (a reduction epilogue: one output element per row), or shape S
  with every kept axis of size > 1 before every reduced axis of size > 1 and at least one
  kept axis (so the output loops are rows, then columns, and `convert-sched-to-loop` places
  the row's reductions between them, see there);
* every op of K's cone that depends on a fused reduce is an elementwise op of shape S or S',
  a reduce over the same axes A of a shape-S input, or an expand from S' to S. Views of
  anything else are free (they only re-index loads), but a view over a reduced value could
  ask for it at an index that changes in the column loops, i.e. recompute it per element.

Under these rules every fused reduce is evaluated at a row index (its kept axes, the reduced
ones 0), which the lowering hoists to the row loop, so K computes each row's reductions once,
in sequence, followed by the elementwise epilogue: softmax is one kernel (max, sum of exp,
then exp / sum per element). Candidates are tried latest first, so that fusing a later
reduce removes its kernel and leaves an earlier one read by a single kernel; a fusion that
would exceed the buffer limit is not made.

Reuse: fusing a producer into a consumer only pays when the consumer evaluates it about once
per element it produces. A kernel's loops evaluate its root once per element, a reduce's
input once per element of the reduce's input, and every other op's operands as often as the
op (a view passes the count through: `expand` and overlapping `slice`s multiply it). A fused
elementwise value with more than one element that the kernel evaluates more than
`MAX_REUSE` times per element (a relu read once per multiply-add of a matmul, a pooled value
re-read by every tap of a window) and that depends on no reduce of the kernel is
materialised, outermost first, until no kernel has one, unless the reading kernel would then
exceed the target's buffer limit. One-element values are left fused:
the target compilers hoist them out of the loops. Values this rule materialises are new
kernels, so row-wise fusion is tried once more on them: attention's softmax, read per
multiply-add by `probs @ v`, becomes its own kernel and then one kernel (max, sum, divide).

Constants and iotas are never read from a buffer: every kernel that uses one recreates it (a
returned constant still gets a kernel that fills its result buffer). A fused reduce has one
reading kernel, so recomputing a shared value never duplicates a reduction. Dead ops are
ignored.

The analysis is one reverse walk (liveness), one forward walk (costs) and one walk over the
consumed reduces (row-wise fusion, recomputing the cones of the kernels it touches).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from xdsl.dialects import func
from xdsl.ir import BlockArgument, Operation, SSAValue

from picograd.dialects import pg_tensor as T
from picograd.dialects.pg_tensor import shape_of

MAX_RECOMPUTED_USERS = 2
MAX_RECOMPUTE_COST = 4
# A fused value that its kernel evaluates more than this many times per element it produces
# is materialised (see "Reuse" in the module docstring).
MAX_REUSE = 2
BIJECTIVE_VIEWS = (T.ReshapeOp, T.PermuteOp, T.FlipOp)
ELEMENTWISE = (T.UnaryOp, T.BinaryOp, T.CmpOp, T.WhereOp, T.CastOp, T.BitcastOp)
# The smallest `max_buffers` a grouping can keep to (a binary op's two inputs and output).
MIN_BUFFER_LIMIT = 3


@dataclass(frozen=True)
class KernelGroup:
    """One kernel: it computes `root` from the ops in `cone` (program order), reading
    `reads` (function arguments or earlier roots, in order of first use).

    A `scatter_add` root takes two kernels: the first computes its base into the scatter's
    buffer (`into` is the scatter's value), the second adds into that buffer in place
    (`in_place`: the root's base is read from the kernel's own output buffer, not computed;
    its cone and reads are those of the index and src)."""

    root: SSAValue
    cone: tuple[Operation, ...]
    reads: tuple[SSAValue, ...]
    into: SSAValue | None = None
    in_place: bool = False


@dataclass(frozen=True)
class Grouping:
    """The kernels of a graph in launch order, and the values returned by `func.return`."""

    kernels: tuple[KernelGroup, ...]
    results: tuple[SSAValue, ...]


def group_kernels(main: func.FuncOp, max_buffers: int | None = None) -> Grouping:
    """Decide the kernels of `@main` (whose body is `pg_tensor` ops and one `func.return`);
    with `max_buffers`, no kernel uses more buffers (reads plus its output) than that."""
    ops = list(main.body.block.ops)
    ret = ops[-1]
    assert isinstance(ret, func.ReturnOp), "a verified func.func ends in func.return"
    body = ops[:-1]
    live = _live_ops(body, ret.operands)
    decide = _Decider(set(ret.operands), live)
    decided = {op.results[0] for op in body if op in live and decide(op)} | decide.tiled
    fused_back = _shared_within_one_kernel(body, live, decide.shared, decided)
    decided -= fused_back
    decide.is_buffer -= fused_back
    materialised = [op.results[0] for op in body if op.results[0] in decided]
    if max_buffers is not None:
        if max_buffers < MIN_BUFFER_LIMIT:
            raise ValueError(f"a kernel needs up to {MIN_BUFFER_LIMIT} buffers, got a limit "
                             f"of {max_buffers}")
        extra = _split_wide_reads(body, live, decide.is_buffer, max_buffers - 1)
        if extra:
            chosen = set(materialised) | extra
            materialised = [op.results[0] for op in body if op.results[0] in chosen]
    position = {op: n for n, op in enumerate(body)}
    max_reads = None if max_buffers is None else max_buffers - 1
    materialised = _fuse_row_reductions(materialised, set(ret.operands), decide.is_buffer,
                                        position, max_reads)
    split = _split_reused(materialised, decide.is_buffer, position, max_reads)
    if len(split) != len(materialised):
        # a value the reuse rule stored (softmax's probabilities, read per multiply-add by
        # the matmul after them) is a kernel of its own now: its row reductions may fuse
        split = _fuse_row_reductions(split, set(ret.operands), decide.is_buffer, position,
                                     max_reads)
    materialised = split
    kernels = tuple(group for root in materialised
                    for group in _kernels_of(root, decide.is_buffer, position))
    return Grouping(kernels, tuple(ret.operands))


def _kernels_of(root: SSAValue, is_buffer: set[SSAValue], position: dict[Operation, int]
                ) -> tuple[KernelGroup, ...]:
    """The kernel computing `root`; for a scatter_add, its base's kernel and the in-place
    one (see KernelGroup)."""
    scatter = root.owner
    if not isinstance(scatter, T.ScatterAddOp):
        return (_kernel(root, is_buffer, position),)
    base = scatter.base
    if isinstance(base, BlockArgument) or base in is_buffer:
        first = KernelGroup(base, (), (base,), into=root)  # a copy of the base's buffer
    else:
        first = replace(_kernel(base, is_buffer, position), into=root)
    return first, _kernel(root, is_buffer, position, in_place=True)


class _Decider:
    """Called on each live op in program order: whether its result is materialised."""

    def __init__(self, returned: set[SSAValue], live: set[Operation]):
        self.returned, self.live = returned, live
        self.is_buffer: set[SSAValue] = set()
        self.reduced: set[SSAValue] = set()  # a fused reduce, or a fused bijective view of one
        self.cost: dict[SSAValue, int] = {}  # recompute cost of each fused value
        # fused values materialised after all, when one of their disjoint slices would be
        self.tiled: set[SSAValue] = set()
        # values materialised only because several ops read them
        self.shared: set[SSAValue] = set()

    def _tiled_source(self, op: Operation) -> SSAValue | None:
        """The fused value (computed by an op, not a constant) that `op` is a slice of,
        through reshapes and permutes that drop or move its axes, if that value's slices
        read disjoint parts of it; None otherwise."""
        while isinstance(op, T.ReshapeOp | T.PermuteOp):
            inner = op.operands[0]
            if inner in self.is_buffer or not isinstance(inner.owner, Operation) or \
                    len({use.operation for use in inner.uses}) != 1:
                return None
            op = inner.owner
        if not isinstance(op, T.SliceOp):
            return None
        x = op.operands[0]
        if x in self.is_buffer or not isinstance(x.owner, Operation) or \
                isinstance(x.owner, T.ConstOp | T.IotaOp):
            return None
        users = {use.operation for use in x.uses if use.operation in self.live}
        return x if _recomputing_users(users) < len(users) else None

    def __call__(self, op: Operation) -> bool:
        value = op.results[0]
        users = {use.operation for use in value.uses
                 if use.operation in self.live and not isinstance(use.operation, func.ReturnOp)}
        returned = value in self.returned
        if isinstance(op, T.ConstOp | T.IotaOp):  # computed where read: no buffer
            materialise, cost = returned, 0
        elif isinstance(op, T.ScatterAddOp | T.ContiguousOp | T.AttentionOp):
            # a scatter writes its buffer in place; a contiguous op asks for a buffer; an
            # attention's loops are its own
            materialise, cost = True, 0
        elif isinstance(op, T.ReduceOp) or (isinstance(op, BIJECTIVE_VIEWS)
                                            and op.operands[0] in self.reduced):
            only_reindexed = len(users) == 1 and isinstance(next(iter(users)), BIJECTIVE_VIEWS)
            materialise = returned or (bool(users) and not only_reindexed)
            if not materialise:  # its one user is a view that joins this kernel
                self.reduced.add(value)
            cost = 0  # unused: a fused reduce is only read by the view fused with it
        else:
            cost = min(MAX_RECOMPUTE_COST + 1,
                       1 + sum(self.cost.get(x, 0) for x in op.operands))
            materialise = returned or (_recomputing_users(users) > MAX_RECOMPUTED_USERS
                                       and cost > MAX_RECOMPUTE_COST)
            if materialise and not returned and (tiled := self._tiled_source(op)):
                # one buffer for the whole tiled value, not one per slice
                self.tiled.add(tiled)
                self.is_buffer.add(tiled)
                self.cost[tiled] = 0
                materialise, cost = False, 1
            elif materialise and not returned:
                self.shared.add(value)
        # readers recreate a constant; a returned iota is a buffer its kernel fills
        if materialise and not isinstance(op, T.ConstOp):
            self.is_buffer.add(value)
        elif not materialise:
            self.cost[value] = cost
        return materialise


def _shared_within_one_kernel(body: Sequence[Operation], live: set[Operation],
                              shared: set[SSAValue], materialised: set[SSAValue]
                              ) -> set[SSAValue]:
    """The values of `shared` (stored by the sharing rule) to fuse back: every op reading
    one is an elementwise op of its shape or a stored reduce, and all paths through such
    ops end at one value (its `frontier`), so one kernel evaluates it, at the frontier's
    index: once per evaluation of the frontier, however many ops read it. (A frontier that
    its own kernel re-reads too often is stored by the reuse rule later, and the values
    behind it are then computed once per element of it.)

    One walk, latest op first. The frontier of a stored value, of one read by anything
    else (a view, a returned value) and of a non-elementwise op is the value itself; that
    of a fused elementwise value the union of its readers' frontiers."""
    fused_back: set[SSAValue] = set()
    frontier: dict[SSAValue, frozenset[SSAValue]] = {}
    for op in reversed(body):
        if op not in live:
            continue
        value = op.results[0]
        ends: set[SSAValue] | None = set()
        for use in value.uses:
            user = use.operation
            if user not in live:
                continue
            result = user.results[0] if user.results else None
            stored = result in materialised and result not in fused_back
            if result is not None and isinstance(user, ELEMENTWISE) \
                    and shape_of(result) == shape_of(value):
                ends |= {result} if stored else frontier[result]
            elif result is not None and stored and isinstance(user, T.ReduceOp):
                ends.add(result)
            else:  # func.return, a view, anything that may read it at other indices
                ends = None
                break
        if value in shared and ends is not None and len(ends) == 1:
            fused_back.add(value)
        stored = value in materialised and value not in fused_back
        frontier[value] = (frozenset(ends) if not stored and ends is not None
                           and isinstance(op, ELEMENTWISE) else frozenset({value}))
    return fused_back


def _recomputing_users(users: set[Operation]) -> int:
    """How many times `users` evaluate each element of the value they read, at most: one
    per user, except that slices reading pairwise disjoint elements (the windows of a
    pool that tile its input) count once together."""
    slices = [op for op in users if isinstance(op, T.SliceOp)]
    if len(slices) > 1 and all(_disjoint(a, b) for n, a in enumerate(slices)
                               for b in slices[n + 1:]):
        return len(users) - len(slices) + 1
    return len(users)


def _disjoint(a: T.SliceOp, b: T.SliceOp) -> bool:
    """Whether two slices of one value read no element in common: along some axis their
    index progressions `start + k * step` cannot meet (conservative: False if unsure)."""
    for sa, ta, na, sb, tb, nb in zip(a.starts, a.steps, shape_of(a.result), b.starts,
                                      b.steps, shape_of(b.result), strict=True):
        if na == 0 or nb == 0 or sa + (na - 1) * ta < sb or sb + (nb - 1) * tb < sa:
            return True  # empty, or the intervals do not overlap
        if (sa - sb) % math.gcd(ta, tb):
            return True  # no index is both sa + i*ta and sb + j*tb
    return False


def _split_wide_reads(body: Sequence[Operation], live: set[Operation], is_buffer: set[SSAValue],
                      max_reads: int) -> set[SSAValue]:
    """Materialise fused values until no kernel reads more than `max_reads` buffers; returns
    the values added (they are also added to `is_buffer`)."""
    reads: dict[SSAValue, frozenset[SSAValue]] = {}  # buffers a fused value's cone reads
    added: set[SSAValue] = set()

    def read_set(x: SSAValue) -> frozenset[SSAValue]:
        if isinstance(x, BlockArgument) or x in is_buffer:
            return frozenset((x,))
        return reads.get(x, frozenset())  # a constant reads nothing

    for op in body:
        if op not in live:
            continue
        # an attention kernel also takes its scratch buffer
        limit = max_reads - 1 if isinstance(op, T.AttentionOp) else max_reads
        while len(union := frozenset().union(*map(read_set, op.operands))) > limit:
            widest = max((x for x in op.operands if len(read_set(x)) > 1),
                         key=lambda x: len(read_set(x)))
            is_buffer.add(widest)
            added.add(widest)
        reads[op.results[0]] = union
    return added


def _live_ops(body: Sequence[Operation], results: Sequence[SSAValue]) -> set[Operation]:
    needed = set(results)
    live: set[Operation] = set()
    for op in reversed(body):
        if any(r in needed for r in op.results):
            live.add(op)
            needed.update(op.operands)
    return live


def _kernel(root: SSAValue, is_buffer: set[SSAValue], position: dict[Operation, int],
            in_place: bool = False) -> KernelGroup:
    """The cone of `root`: its op and every op reachable through non-buffer values; with
    `in_place` (a scatter_add root), not through the root's base operand."""
    assert isinstance(root.owner, Operation)

    def operands(op: Operation) -> Sequence[SSAValue]:
        return op.operands[1:] if in_place and op is root.owner else op.operands

    cone: set[Operation] = set()
    stack = [root.owner]
    while stack:
        op = stack.pop()
        if op in cone:
            continue
        cone.add(op)
        for x in operands(op):
            if not (isinstance(x, BlockArgument) or x in is_buffer):
                assert isinstance(x.owner, Operation)
                stack.append(x.owner)
    ordered = tuple(sorted(cone, key=position.__getitem__))
    reads: dict[SSAValue, None] = {}  # insertion-ordered set
    for op in ordered:
        for x in operands(op):
            if isinstance(x, BlockArgument) or x in is_buffer:
                reads.setdefault(x)
    return KernelGroup(root, ordered, tuple(reads), in_place=in_place)


def _fuse_row_reductions(roots: Sequence[SSAValue], returned: set[SSAValue],
                         is_buffer: set[SSAValue], position: dict[Operation, int],
                         max_reads: int | None) -> list[SSAValue]:
    """The materialised values left once every consumed reduce that one kernel can compute
    row by row is fused into that kernel (see the module docstring); updates `is_buffer`."""
    readers = _Readers(roots, is_buffer, position)
    kept = dict.fromkeys(roots)  # insertion-ordered set
    for candidate in reversed(roots):
        reduce = candidate.owner
        if candidate in returned or not isinstance(reduce, T.ReduceOp):
            continue
        reading = readers.of(candidate)
        if len(reading) != 1 or isinstance(reading[0].owner, T.ScatterAddOp | T.AttentionOp):
            continue  # their loops are their own (see convert-sched-to-loop)
        is_buffer.discard(candidate)
        fused = _kernel(reading[0], is_buffer, position)
        if _row_wise(fused, reduce) and (max_reads is None or len(fused.reads) <= max_reads):
            del kept[candidate]
            readers.forget(candidate)
            readers.set_reads(reading[0], fused.reads)
        else:
            is_buffer.add(candidate)
    return list(kept)


class _Readers:
    """Which kernels (by root) read each buffer, kept current while reduces are fused.

    Fusing a reduce changes the buffers of exactly one kernel, the one that read it (every
    kernel whose cone reaches a buffer reads it), so each fusion recomputes one cone, not
    the cone of every kernel: a graph of N layers costs N times one layer, not N**2."""

    def __init__(self, roots: Sequence[SSAValue], is_buffer: set[SSAValue],
                 position: dict[Operation, int]):
        self._reads: dict[SSAValue, tuple[SSAValue, ...]] = {}
        self._readers: dict[SSAValue, dict[SSAValue, None]] = {}  # ordered like the roots
        for root in roots:
            self.set_reads(root, _kernel(root, is_buffer, position).reads)

    def of(self, value: SSAValue) -> list[SSAValue]:
        """The roots of the kernels that read `value`."""
        return list(self._readers.get(value, ()))

    def set_reads(self, root: SSAValue, reads: tuple[SSAValue, ...]) -> None:
        self.forget(root)
        self._reads[root] = reads
        for value in reads:
            self._readers.setdefault(value, {})[root] = None

    def forget(self, root: SSAValue) -> None:
        """`root` is no kernel any more."""
        for value in self._reads.pop(root, ()):
            self._readers[value].pop(root, None)


def _row_wise(kernel: KernelGroup, reduce: T.ReduceOp) -> bool:
    """Whether `kernel` evaluates every reduce in its cone only at row indices of `reduce`'s
    shape, so that each runs once per row (the rules in the module docstring)."""
    full, rows = shape_of(reduce.input), shape_of(reduce.result)
    axes = set(reduce.axis_list)
    reduced = [a for a in axes if full[a] > 1]
    kept = [d for d, n in enumerate(full) if d not in axes and n > 1]
    if not reduced:
        return False
    out = shape_of(kernel.root)
    if out == full:
        if not kept or max(kept) > min(reduced):
            return False  # the reductions would sit inside a column loop
    elif out != rows:
        return False
    has_reduce: set[SSAValue] = set()  # cone values computed from a fused reduce
    for op in kernel.cone:
        value = op.results[0]
        if isinstance(op, T.ReduceOp):
            if shape_of(op.input) != full or set(op.axis_list) != axes:
                return False
        elif not any(x in has_reduce for x in op.operands):
            continue  # reads buffers and constants only: any index is fine
        elif isinstance(op, ELEMENTWISE):
            if shape_of(value) not in (full, rows):
                return False
        elif not (isinstance(op, T.ExpandOp) and shape_of(op.input) == rows
                  and shape_of(value) == full):
            return False
        has_reduce.add(value)
    return True


def _split_reused(roots: Sequence[SSAValue], is_buffer: set[SSAValue],
                  position: dict[Operation, int], max_reads: int | None) -> list[SSAValue]:
    """The materialised values once no kernel re-evaluates a fused value more than
    `MAX_REUSE` times per element (see "Reuse" in the module docstring), except where the
    reading kernel would then read more than `max_reads` buffers; updates `is_buffer`."""
    chosen = set(roots)
    pending = list(roots)
    while pending:
        root = pending.pop()
        for value in _over_reused(_kernel(root, is_buffer, position)):
            # every kernel that fused `value` reads it as a buffer now, in place of what
            # its cone read: one more buffer where those were read elsewhere too
            readers = _fusing_kernels(value, chosen, is_buffer) if max_reads is not None else ()
            is_buffer.add(value)
            if max_reads is not None and any(
                    len(_kernel(r, is_buffer, position).reads) > max_reads for r in readers):
                is_buffer.discard(value)  # the target's binding limit comes first
                continue
            chosen.add(value)
            pending.append(value)
    return sorted(chosen, key=lambda v: position[v.owner])  # type: ignore[index]


def _fusing_kernels(value: SSAValue, roots: set[SSAValue], is_buffer: set[SSAValue]
                    ) -> set[SSAValue]:
    """The roots of the kernels whose cones compute the fused `value`: the first roots or
    buffers reached from it through its users."""
    found: set[SSAValue] = set()
    seen: set[SSAValue] = set()
    stack = [value]
    while stack:
        for use in stack.pop().uses:
            if isinstance(use.operation, func.ReturnOp):
                continue
            result = use.operation.results[0]
            if result in roots or result in is_buffer:
                found.add(result)
            elif result not in seen:
                seen.add(result)
                stack.append(result)
    return found


def _attention_reads(op: T.AttentionOp, operand: SSAValue) -> int:
    """How many times the attention kernel reads each element of `operand`: q once per
    key, k and v once per query, the bias once."""
    big_l, big_s = shape_of(op.bias)[-2:]
    if operand is op.bias:
        return 1
    return big_s if operand is op.query else big_l


def _numel(value: SSAValue) -> int:
    n = 1
    for d in shape_of(value):
        n *= d
    return n


def _over_reused(kernel: KernelGroup) -> list[SSAValue]:
    """The outermost fused elementwise values of `kernel` evaluated more than `MAX_REUSE`
    times per element they produce."""
    after_reduce: set[SSAValue] = set()  # values computed from a reduce of this kernel
    for op in kernel.cone:
        if isinstance(op, T.ReduceOp) or any(x in after_reduce for x in op.operands):
            after_reduce.add(op.results[0])
    # Users that read a value at their own index (elementwise ops, a reduce's input) share
    # one evaluation of it (the lowering computes it once per index); each view reads it at
    # indices of its own, so views add up.
    aligned: dict[SSAValue, int] = {kernel.root: _numel(kernel.root)}
    viewed: dict[SSAValue, int] = {}
    found: list[SSAValue] = []
    reads = set(kernel.reads)  # a set: a kernel of a long sequence reads hundreds of buffers
    for op in reversed(kernel.cone):
        value = op.results[0]
        count = aligned.get(value, 0) + viewed.get(value, 0)
        if (value is not kernel.root and isinstance(op, ELEMENTWISE)
                and value not in after_reduce and _numel(value) > 1
                and count > MAX_REUSE * _numel(value)):
            found.append(value)  # its own kernel now: its operands are not evaluated here
            continue
        if isinstance(op, T.ReduceOp):
            count = _numel(op.input)  # hoisted: once per element of its result
        is_view = not isinstance(op, (*ELEMENTWISE, T.ReduceOp))
        for x in dict.fromkeys(op.operands):  # an op reading x twice evaluates it once
            if isinstance(x, BlockArgument) or x in reads:
                continue
            if isinstance(op, T.ScatterAddOp):  # base once per element, index and src once
                own = count if x is op.operands[0] else _numel(x)  # per element of theirs
                aligned[x] = max(aligned.get(x, 0), own)
            elif isinstance(op, T.AttentionOp):  # q once per key, k and v once per query
                viewed[x] = viewed.get(x, 0) + _numel(x) * _attention_reads(op, x)
            elif is_view:
                viewed[x] = viewed.get(x, 0) + count
            else:
                aligned[x] = max(aligned.get(x, 0), count)
    return found
