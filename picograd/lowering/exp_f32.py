"""The constants of the CPU targets' f32 `exp` (the LLVM lowering emits it as LLVM ops,
`llvm/math.py`, where the algorithm is described; the C printer as `pg_exp_*` helpers,
`c/printer.py`): one function, so both targets round alike."""

from __future__ import annotations

LOG2E = 1.44269504088896341
LN2_HI = 0.693359375  # 355 / 512: n * LN2_HI is exact for |n| <= 150
LN2_LO = -2.12194440e-4  # ln(2) - LN2_HI
TAYLOR = [1 / 5040, 1 / 720, 1 / 120, 1 / 24, 1 / 6, 1 / 2, 1.0, 1.0]  # highest power first
LOWEST, HIGHEST = -104.0, 89.0  # exp is 0 below, inf above
ROUNDING_SHIFT, ROUNDING_SHIFT_BITS = 12582912.0, 0x4B400000  # 1.5 * 2^23 and its f32 bits
