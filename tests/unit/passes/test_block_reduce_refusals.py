"""`block_reduce` applies only where blocking keeps every stored element's sum: each case
below breaks one condition and is refused with the reason, the kernel left as it was."""

from __future__ import annotations

import re

import pytest
from xdsl.parser import Parser

from picograd.dialects import make_context
from picograd.dialects import pg_loop as L
from picograd.passes.loop.schedule import ScheduleError, block_reduce

# out[i * 2 + j] = sum_r a[i * 8 + r] * b[r * 2 + j], with hooks for the variants below.
KERNEL = """
pg_loop.kernel @k0(%a: !pg.buffer<32xf32>, %b: !pg.buffer<16xf32>, %out: !pg.buffer<8xf32>) {
  pg_loop.range %j = 0 to 2 global {
    pg_loop.range %i = 0 to 4 OUTER_KIND {
      %s = pg_loop.reduce KIND %r = 0 to 8 : f32 {
        %c8 = pg_loop.const 8
        %row = pg_loop.index mul %i, %c8
        %ai = pg_loop.index add %row, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<32xf32> -> f32
        %c2 = pg_loop.const 2
        %br = pg_loop.index mul %r, %c2
        %bi = pg_loop.index add %br, %j
        %y = pg_loop.load %b[%bi] : !pg.buffer<16xf32> -> f32
        %xy = pg_uop.binary mul %x, %y : f32
        pg_loop.yield %xy : f32
      }
      %c2o = pg_loop.const ROW_STRIDE
      %orow = pg_loop.index mul %i, %c2o
      %oi = pg_loop.index add %orow, %j
      STORE
    }
  }
  TAIL
}
"""
PLAIN = {"OUTER_KIND": "global", "KIND": "sum", "ROW_STRIDE": "2",
         "STORE": "pg_loop.store %s, %out[%oi] : f32, !pg.buffer<8xf32>", "TAIL": ""}


def kernel(**changes: str) -> L.KernelOp:
    text = KERNEL
    for hook, value in {**PLAIN, **changes}.items():
        text = text.replace(hook, value)
    module = Parser(make_context(), text).parse_module()
    return next(op for op in module.walk() if isinstance(op, L.KernelOp))


@pytest.mark.parametrize(("changes", "size", "axis", "reason"), [
    ({}, 3, 0, "size 3 must divide the reduce's 8 iterations, below 8"),
    ({}, 8, 0, "size 8 must divide the reduce's 8 iterations"),
    ({"KIND": "max"}, 4, 0, "only a sum of numbers adds up by blocks"),
    ({"OUTER_KIND": "loop"}, 4, 0, "a loop range between them runs in order"),
    ({"STORE": "%e = pg_uop.unary exp %s : f32\n"
               "pg_loop.store %e, %out[%oi] : f32, !pg.buffer<8xf32>"}, 4, 0,
     "its value is not stored as it is"),
    ({"STORE": "pg_loop.store %s, %out[%oi] : f32, !pg.buffer<8xf32>\n"
               "%x0 = pg_loop.load %a[%j] : !pg.buffer<32xf32> -> f32\n"
               "pg_loop.store %x0, %out[%j] : f32, !pg.buffer<8xf32>"}, 4, 0,
     "the axis holds another store"),
    ({"STORE": "%x0 = pg_loop.load %out[%j] : !pg.buffer<8xf32> -> f32\n"
               "pg_loop.store %s, %out[%oi] : f32, !pg.buffer<8xf32>"}, 4, 0,
     "the axis reads the buffer the reduce is stored to"),
    ({"TAIL": "pg_loop.range %z = 0 to 2 global {\n}"}, 4, 2,
     "the axis does not hold the reduce"),
    # every row writes the same two elements: the blocks of different rows would mix
    ({"ROW_STRIDE": "0"}, 4, 0, "its store's index is not one element per iteration"),
])
def test_block_reduce_refuses_with_the_reason(changes: dict[str, str], size: int, axis: int,
                                              reason: str) -> None:
    k = kernel(**changes)
    before = str(k)
    with pytest.raises(ScheduleError, match=re.escape(reason)):
        block_reduce(k, 0, size, axis)
    assert str(k) == before
