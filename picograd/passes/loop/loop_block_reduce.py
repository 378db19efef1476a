"""`loop-block-reduce`: one sum of a kernel is computed in blocks, for the cache.

Input and output: `pg_loop` kernels. Guarantee: each stored element gets the same values
summed, block by block: the sum over each block of `size` iterations, added in block order
to what the earlier blocks stored. A float sum rounds differently (as any blocked sum
does); an integer sum gives the same value. The loop over blocks holds the whole body of
range `axis`, so a block of what the reduce reads stays in cache while the ranges inside
pass over it (a matmul's K blocked around its row tiles). See
`reduce_actions.block_reduce`; the action applies to a sum whose value is stored as it is
and whose stores are one element per iteration of the ranges around it.

    opt-tool -p 'loop-block-reduce{kernel=k0 reduce=0 size=4 axis=0}':
    pg_loop.range %j = 0 to 2 global {         pg_loop.range %j = 0 to 2 global {
      pg_loop.range %i = 0 to 4 global {         pg_loop.range %r_block = 0 to 2 loop {
        %s = pg_loop.reduce sum %r = 0 to 8          pg_loop.range %i = 0 to 4 global {
        pg_loop.store %s, %out[%i * 2 + %j]            %s = pg_loop.reduce sum %r_in = 0 to 4
      }                                                %p = pg_loop.load %out[..] if %r_block > 0
    }                                                  pg_loop.store %p + %s, %out[..]

Options: `kernel` (a symbol; empty: every kernel where it applies), `reduce` (the reduce's
pre-order number in the kernel), `size` (the block's iterations, dividing the reduce's)
and `axis` (the range whose body the block loop takes).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from picograd.passes.loop.kernel_select import schedule_kernels
from picograd.passes.loop.schedule import Action


@dataclass(frozen=True)
class LoopBlockReducePass(ModulePass):
    """Compute reduce `reduce` of the selected kernels in blocks of `size` iterations.

    The loop over the blocks goes directly in range `axis`, around its whole body."""

    name = "loop-block-reduce"

    kernel: str = ""
    reduce: int = 0
    size: int = 64
    axis: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        schedule_kernels(op, self.kernel, self.name,
                         [Action("block_reduce", self.reduce, self.size, at=self.axis)])
