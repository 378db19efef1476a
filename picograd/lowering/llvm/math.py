"""`exp` on f32 (a scalar or a vector) as plain LLVM arithmetic, so that loops of it vectorise.

`llvm.exp.f32` becomes a call of libm's `expf` per element, which no loop vectoriser can
widen (picograd's softmax spent ~90 % of its time there). This is the same function in
ops LLVM has vector forms of, emitted alike for scalars and vectors, so a kernel's vector
body and its scalar remainder give the same bits:

    xc = minimum(maximum(x, -104), 89)          NaN stays NaN; exp(-104) and below is 0,
                                                exp(89) and above inf
    n  = rint(xc * log2(e))                     in [-150, 128]; as an integer, the bits of
                                                n + 1.5 * 2^23 less those of 1.5 * 2^23
    r  = (xc - n * LN2_HI) - n * LN2_LO         Cody-Waite: n * LN2_HI is exact (LN2_HI has
                                                9 significant bits), |r| <= ln(2) / 2 + tiny;
                                                both steps fused multiply-adds
    p  = 1 + r (1 + r (1/2 + ... r / 5040))     Taylor to degree 7: truncation < 0.05 ulp;
                                                Horner's steps fused multiply-adds
    y  = (p * 2^h) * 2^(n - h),  h = n >> 1     both factors are normal floats; the product
                                                rounds once, into the subnormals if it must

Within 2 ulp of the exactly rounded result over all of f32 (tests/unit/lowering/
test_llvm_exp.py checks it against float64 numpy), exactly 0 below -103.97, inf above
88.73, exp(±0) = 1.
"""

from __future__ import annotations

from xdsl.dialects.builtin import VectorType, f32, i32
from xdsl.ir import Attribute

from picograd.lowering.exp_f32 import (
    HIGHEST,
    LN2_HI,
    LN2_LO,
    LOG2E,
    LOWEST,
    ROUNDING_SHIFT,
    ROUNDING_SHIFT_BITS,
    TAYLOR,
)
from picograd.lowering.llvm.builder import LlvmBuilder, Value
from picograd.lowering.llvm.emit import const, splat, suffix


def is_exp_f32(t: Attribute) -> bool:
    """A type whose `exp` this module emits: f32 or a vector of f32."""
    return (t.element_type if isinstance(t, VectorType) else t) == f32


def exp_f32(b: LlvmBuilder, x: Value) -> Value:
    """`exp(x)` for an f32 or vector-of-f32 `x`, as described above."""
    t = b.type_of(x)
    lanes = t.get_shape()[0] if isinstance(t, VectorType) else 0
    int_t: Attribute = VectorType(i32, [lanes]) if lanes else i32

    def c(value: float, of: Attribute = f32) -> Value:
        scalar = const(b, value, of)
        return splat(b, scalar, lanes) if lanes else scalar

    def call(name: str, *args: Value, result: Attribute = t) -> Value:
        return b.intrinsic(f"llvm.{name}.{suffix(result)}", list(args), result)

    xc = call("minimum", call("maximum", x, c(LOWEST)), c(HIGHEST))
    n = call("rint", b.binary("fmul", xc, c(LOG2E)))
    r = b.fma(n, c(-LN2_HI), xc)  # exact: n * LN2_HI is representable
    r = b.fma(n, c(-LN2_LO), r)
    p = c(TAYLOR[0])
    for coefficient in TAYLOR[1:]:  # Horner's steps as fused multiply-adds
        p = b.fma(p, r, c(coefficient))
    # n as an integer: n + 1.5 * 2^23 puts n in the low mantissa bits (exact: |n| <= 150).
    # Not fptosi: that is poison on NaN, and its saturating form runs lane by lane on x86.
    # A NaN x gives some integer here, and p is NaN whatever it scales by.
    shifted = b.cast("bitcast", b.binary("fadd", n, c(ROUNDING_SHIFT)), int_t)
    ni = b.binary("sub", shifted, c(ROUNDING_SHIFT_BITS, i32))
    half = b.binary("ashr", ni, c(1, i32))
    rest = b.binary("sub", ni, half)
    y = b.binary("fmul", p, _power_of_two(b, half, c(127, i32), c(23, i32), t))
    return b.binary("fmul", y, _power_of_two(b, rest, c(127, i32), c(23, i32), t))


def _power_of_two(b: LlvmBuilder, k: Value, bias: Value, shift: Value, t: Attribute
                  ) -> Value:
    """2^k as a float of type `t`, for k in the normal exponent range: its bits built."""
    exponent = b.binary("add", k, bias)
    return b.cast("bitcast", b.binary("shl", exponent, shift), t)
