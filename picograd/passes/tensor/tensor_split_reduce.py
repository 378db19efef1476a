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
chunks of about `work`.
Options: `min-elements`, `work`, `max-partials`.
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


def partials(n: int, elements: int, outputs: int, work: int, max_partials: int) -> int:
    """The number of partials q (a divisor of n, 2 <= q < n) for a reduce of `elements`
    per output over an axis of n, nearest to elements / work; 0 when none fits."""
    want = max(elements / work, 2.0)
    fits = [q for d in range(1, math.isqrt(n) + 1) if n % d == 0 for q in (d, n // d)
            if 2 <= q < n and outputs * q <= max_partials]
    return min(fits, key=lambda q: abs(math.log(q / want)), default=0)


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


def split(op: T.ReduceOp, min_elements: int, work: int, max_partials: int) -> bool:
    """Split `op` as the module docstring shows; whether it was split."""
    shape, axes = shape_of(op.input), op.axis_list
    elements = math.prod(shape[a] for a in axes)
    if not axes or elements < min_elements:
        return False
    outputs = math.prod(shape) // elements
    axis = max(axes, key=lambda a: shape[a])
    n = shape[axis]
    q = partials(n, elements, outputs, work, max_partials)
    x = op.input
    if not q:  # no divisor fits (a prime length): pad with the identity up to chunks
        fill = identity(op.kind.data, dtype_of(x))
        chunk = -(-n // min(n, -(-elements // work)))  # ceil(n / wanted partials)
        q = -(-n // chunk)
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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.min_elements < 2 or self.work < 1 or self.max_partials < 2:
            raise PassFailedException("tensor-split-reduce: min-elements and max-partials "
                                      "must be at least 2, work at least 1")
        for reduce in [o for o in op.walk() if isinstance(o, T.ReduceOp)]:
            split(reduce, self.min_elements, self.work, self.max_partials)
