"""Interval bounds of pg_loop index values (the guards of loop-simplify)."""

from __future__ import annotations

import pytest
from xdsl.ir import SSAValue
from xdsl.parser import Parser

from picograd.dialects import make_context
from picograd.passes.loop.bounds import bounds


def value_of(expr: str) -> SSAValue:
    """`%e` defined by `expr` inside `range %i = 2 to 6` and `reduce %j = 0 to 4`."""
    text = f"""pg_loop.kernel @k(%out: !pg.buffer<1xi64>) {{
      pg_loop.range %i = 2 to 6 global {{
        %s = pg_loop.reduce sum %j = 0 to 4 : i64 {{
          %c3 = pg_loop.const 3
          %cm = pg_loop.const -5
          %e = {expr}
          %x = pg_uop.cast %e : index to i64
          pg_loop.yield %x : i64
        }}
      }}
    }}"""
    module = Parser(make_context(), text).parse_module()
    return next(op.results[0] for op in module.walk() if op.results and
                op.results[0].name_hint == "e")


@pytest.mark.parametrize(("expr", "want"), [
    ("pg_loop.index add %i, %j", (2, 8)),
    ("pg_loop.index sub %i, %j", (-1, 5)),
    ("pg_loop.index mul %i, %cm", (-25, -10)),
    ("pg_loop.index div %i, %c3", (0, 1)),
    ("pg_loop.index mod %j, %c3", (0, 2)),
    ("pg_loop.index mod %cm, %c3", (0, 2)),  # sound, not tight: -5 mod 3 is 1
    ("pg_loop.index max %i, %j", (2, 5)),
    ("pg_loop.index min %i, %j", (0, 3)),
    ("pg_loop.index div %i, %j", None),  # a divisor that is not a positive constant
])
def test_bounds_follow_interval_arithmetic(expr: str, want: tuple[int, int] | None):
    assert bounds(value_of(expr)) == want
