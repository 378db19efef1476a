"""Hypothesis strategies for random picograd IR, and helpers to compare runs of it.

Every strategy draws a `Program`: the IR as text (so a failing example prints readably and
every test parses it fresh) and input arrays for `@main`. Values are biased toward the
edges where rewrites go wrong: 0, -0.0, 1, -1, inf, nan and the integer limits.

    tensor_programs()   stage 1: pg_tensor ops in func.func @main
    loop_programs()     stage 3: index expressions over pg_loop ranges, masked loads
    reduce_programs()   stage 3: matmul-like and row-reduction kernels, any sizes and kinds
    uop_programs()      stage 4: a flat pg_uop kernel of ALU ops over loaded values

`assert_same(before, after)` compares interpreter results bit for bit (NaN equals NaN);
`round_trip(module)` checks print -> parse -> print.
"""

from strategies.base import (
    Program,
    arrays,
    assert_same,
    round_trip,
    scalars,
)
from strategies.kernels import loop_programs, reduce_programs, uop_programs
from strategies.tensor import tensor_programs

__all__ = ["Program", "arrays", "assert_same", "loop_programs", "reduce_programs",
           "round_trip", "scalars", "tensor_programs", "uop_programs"]
