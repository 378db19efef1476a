"""`tensor-split-reduce`: a long reduction becomes two, so that many threads share it.

Input and output: `pg_tensor` ops inside `func.func` (stage 1). Guarantee: every result
reduces the same elements; max and min give the same values, and so do integer sums and
products (they wrap, in any order); a float sum or product rounds differently (partial
results over chunks, then the partials: as accurate as one loop or more).

A reduce of `min-elements` or more elements per output is one long loop per output: with
few outputs, one CPU thread does all the work and one GPU work group does (and on Mesa's
software Vulkan driver, the WebGPU adapter of machines without a GPU, where a work item
stops after 65535 loop iterations in all, the sum is silently short). The pass splits the
longest reduced axis, of size n = q * c, into q partials per output, each reducing about
`work` elements, then reduces the partials:

    %r = pg_tensor.reduce sum %x {axes = array<i64: 0>} : tensor<33554432xf32> -> tensor<1xf32>
becomes
    %v = pg_tensor.reshape %x : tensor<33554432xf32> -> tensor<8192x4096xf32>
    %p = pg_tensor.reduce sum %v {axes = array<i64: 1>} : ... -> tensor<8192x1xf32>
    %s = pg_tensor.reduce sum %p {axes = array<i64: 0>} : ... -> tensor<1x1xf32>
    %r = pg_tensor.reshape %s : tensor<1x1xf32> -> tensor<1xf32>

q is the divisor of n nearest (by ratio) to elements / `work`, with outputs x q at most
`max-partials` (the partials are stored: a matmul with a long K and many outputs is left
alone). Splitting one axis in two is a view of any view, so the input is never copied. A
length with no divisor that fits (a prime) is first padded with the reduce's identity (0 for
a sum, 1 for a product, the lowest value for a max, the highest for a min) up to q equal
chunks of about `work` (a float sum's a multiple of 64, CHUNK_ALIGN).

`chunk-ratio` and `float-work` (0: off; the CPU pipelines pass 2 and 256,
pipelines.CPU_CHUNK_RATIO / CPU_FLOAT_WORK): a float sum or product splits into chunks of
about `float-work` and only at a divisor within that ratio of the wanted count whose both
lengths `loop-optimize` can add up in chunks (a multiple of 64, or a count of partials of
512 at most); else it is padded to such lengths. 2**24 + 3 = 1549 x 10831 left 10831
partials, a prime count that `loop-optimize` can neither split into lanes nor chunk, to one
float32 accumulator: 1677550.75 for 2**24 + 3 values of 0.1 (exact 1677721.9, 1369 ulps;
now 41). Short chunks matter too: a partial inside a register tile of outputs is not
chunked, so its accumulator adds all `work` terms. The GPU pipelines keep the divisor
split: their work groups add a long partial as a tree, and the padded split's many
partials were less accurate there (WebGPU: 514 ulps against 30).
Options: `min-elements`, `work`, `max-partials`, `chunk-ratio`, `float-work`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_tensor as T
from picograd.dialects.dtypes import is_bool, is_float, to_numpy_dtype
from picograd.dialects.pg import ReduceKind
from picograd.dialects.pg_tensor import dtype_of, shape_of

MIN_ELEMENTS = 1 << 16
WORK = 4096
MAX_PARTIALS = 1 << 20
# a padded float sum's chunk is a multiple of this: a length of many divisors, which
# `loop-optimize` splits into lanes and adds up in chunks (a prime length it cannot)
CHUNK_ALIGN = 64
CHUNK_CHAIN = 512  # (loop_optimize.CHUNK_CHAIN: a sum of no more terms is not chunked)


def partials(n: int, elements: int, outputs: int, work: int, max_partials: int,
             ratio: float = 0) -> int:
    """The number of partials q (a divisor of n, 2 <= q < n) for a reduce of `elements`
    per output over an axis of n, nearest to elements / work; 0 when none fits (or, with a
    `ratio`, when the nearest is more than that ratio away)."""
    want = max(elements / work, 2.0)
    fits = [q for d in range(1, math.isqrt(n) + 1) if n % d == 0 for q in (d, n // d)
            if 2 <= q < n and outputs * q <= max_partials]
    if ratio:  # a float sum's: both levels of lengths loop-optimize can chunk, near want
        fits = [q for q in fits if _aligned(n // q) and (_aligned(q) or q <= CHUNK_CHAIN)
                and abs(math.log(q / want)) <= math.log(ratio)]
    return min(fits, key=lambda q: abs(math.log(q / want)), default=0)


def _aligned(length: int) -> bool:
    return length % CHUNK_ALIGN == 0


def identity(kind: ReduceKind, t: Attribute) -> float | int | bool | None:
    """The value a reduce of `kind` over `t` ignores (None: a bool sum or product)."""
    if is_float(t):
        return {ReduceKind.SUM: 0.0, ReduceKind.PROD: 1.0, ReduceKind.MAX: -math.inf,
                ReduceKind.MIN: math.inf}[kind]
    if is_bool(t):
        return {ReduceKind.MAX: False, ReduceKind.MIN: True}.get(kind)
    info = np.iinfo(to_numpy_dtype(t))
    return {ReduceKind.SUM: 0, ReduceKind.PROD: 1, ReduceKind.MAX: int(info.min),
            ReduceKind.MIN: int(info.max)}[kind]


def split(op: T.ReduceOp, min_elements: int, work: int, max_partials: int,
          chunk_ratio: int = 0, float_work: int = 0) -> bool:
    """Split `op` as the module docstring shows; whether it was split."""
    shape, axes = shape_of(op.input), op.axis_list
    elements = math.prod(shape[a] for a in axes)
    if not axes or elements < min_elements:
        return False
    outputs = math.prod(shape) // elements
    axis = max(axes, key=lambda a: shape[a])
    n = shape[axis]
    x = op.input
    rounds = is_float(dtype_of(x)) and op.kind.data in (ReduceKind.SUM, ReduceKind.PROD)
    if rounds and float_work:
        work = float_work
    q = partials(n, elements, outputs, work, max_partials, chunk_ratio if rounds else 0)
    if not q:  # no divisor fits (a prime length): pad with the identity up to chunks
        fill = identity(op.kind.data, dtype_of(x))
        chunk = -(-n // min(n, -(-elements // work)))  # ceil(n / wanted partials)
        if rounds and chunk_ratio and chunk > CHUNK_ALIGN:  # lengths loop-optimize chunks
            chunk = -(-chunk // CHUNK_ALIGN) * CHUNK_ALIGN
        q = -(-n // chunk)
        if rounds and chunk_ratio and q > CHUNK_CHAIN:
            q = -(-q // CHUNK_ALIGN) * CHUNK_ALIGN
        if fill is None or q < 2 or outputs * q > max_partials:
            return False
        high = [q * chunk - n if a == axis else 0 for a in range(len(shape))]
        padded = T.PadOp(x, [0] * len(shape), high, fill)
        block = op.parent_block()
        assert block is not None
        block.insert_op_before(padded, op)
        x, n = padded.result, q * chunk
    view = T.ReshapeOp(x, (*shape[:axis], q, n // q, *shape[axis + 1:]))
    inner = [a + (a > axis) for a in axes if a != axis] + [axis + 1]
    part = T.ReduceOp(op.kind.data, view, inner)
    total = T.ReduceOp(op.kind.data, part, [axis])
    back = T.ReshapeOp(total, shape_of(op.result))
    block = op.parent_block()
    assert block is not None
    block.insert_ops_before([view, part, total, back], op)
    back.result.name_hint = op.result.name_hint
    op.result.replace_all_uses_with(back.result)
    op.detach()
    op.erase()
    return True


@dataclass(frozen=True)
class TensorSplitReducePass(ModulePass):
    """Split every reduce of `min_elements` or more elements per output in two (see the
    module docstring)."""

    name = "tensor-split-reduce"

    min_elements: int = MIN_ELEMENTS
    work: int = WORK
    max_partials: int = MAX_PARTIALS
    chunk_ratio: int = 0
    float_work: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.min_elements < 2 or self.work < 1 or self.max_partials < 2:
            raise PassFailedException("tensor-split-reduce: min-elements and max-partials "
                                      "must be at least 2, work at least 1")
        for reduce in [o for o in op.walk() if isinstance(o, T.ReduceOp)]:
            split(reduce, self.min_elements, self.work, self.max_partials, self.chunk_ratio,
                  self.float_work)
