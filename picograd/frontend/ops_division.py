"""Floor division and remainder (torch's names and semantics), on top of ops_math.py.

    remainder / %, floor_divide / //         floor semantics (the result has the divisor's sign)

Integer `//` and `%` are the IR's C division and remainder, fixed up to floor semantics; a
zero divisor raises `ZeroDivisorError` as torch's "ZeroDivisionError" (`_nonzero_divisor`:
at the op for a constant or realized divisor, when a result is read for a computed one).

Float `%` and `//` are torch's kernels (c10's `div_floor_floating` and the remainder
kernel) on an exact fmod: `%` is fmod(x, y), plus y where it is nonzero and its sign is
not y's (a zero keeps x's sign); `//` is x / y for a zero y, else (x - fmod(x, y)) / y,
less one where that fmod's sign is not y's, rounded to an integer (floor, up above .5), a
zero with the sign of x / y. fmod is computed on the bits in int32 (`_fmod`: exact for every
float32 pair, so every target agrees; float16 through float32), where x - y * floor(x / y)
rounds (1.0 // 0.33333334 would be 3.0, 3e38 % 0.4993 -inf). Gradients: 1 for x and
-floor_divide(x, y) for y for `%`, as torch; zero for `//` (torch defines none).
"""

from __future__ import annotations

import math
from typing import Self

from picograd.dialects.pg import BinaryKind
from picograd.errors import ZeroDivisorError
from picograd.frontend import capture
from picograd.frontend.dtype import float32, int32
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import ZeroDivisorGuard, user_location, view_source
from picograd.frontend.ops_elementwise import Operand
from picograd.frontend.ops_math import MathOps

# float32 fmod in int32 (DivisionOps._fmod): mantissas below 2^24 are doubled _FMOD_SHIFT
# times per step, as (r << 7) mod my < 2^31; exponents differ by at most 253 (254 - 1)
_FMOD_SHIFT = 7
_FMOD_STEPS = -(-253 // _FMOD_SHIFT)
_SIGN_BIT = -(2**31)
_INF_BITS = 0x7F800000



class DivisionOps(MathOps):
    __slots__ = ()

    # ── floor division and remainder ────────────────────────────────────────

    def _nonzero_divisor(self, op: str) -> Self:
        """This integer divisor, refused if it holds a zero (torch raises ZeroDivisionError;
        the device's division would trap or give garbage): a constant or realized divisor
        is checked here, one computed on the device (or any divisor inside a jit capture,
        whose replays get new values) when a result that depends on it is read."""
        if not self.numel():
            return self  # nothing is divided
        node = view_source(self._node)
        if node.op == "const":
            zero = node.arg == 0
        elif node.buffer is not None and capture.recorder() is None:
            zero = bool((node.buffer == 0).any())
        else:
            with no_grad():
                has_zero = (self == 0).max()
            return self._carrying(ZeroDivisorGuard(has_zero._node, op))
        if zero:
            raise ZeroDivisorError(f"{op}: integer division by zero (the divisor holds a "
                                   f"zero)\n  at {user_location()}")
        return self

    def _division_operands(self, op: str, other: Operand) -> tuple[Self, Self]:
        """`op`'s operands (bools as int32), an integer divisor checked for zeros."""
        x, y = self._operands(op, other)
        if x.dtype.is_bool:
            x, y = x.cast(int32), y.cast(int32)
        if not x.dtype.is_float:
            y = y._nonzero_divisor(op)
        return x, y

    def remainder(self, other: Operand) -> Self:
        """x - y * floor(x / y): the result has the sign of the divisor (torch's `%`)."""
        x, y = self._division_operands("remainder", other)
        if not x.dtype.is_float:
            r = x._make("binary", (x, y), BinaryKind.MOD, x.shape)  # C: sign of x
            wrong = (r != 0) & ((r < 0) != (y < 0))
            return wrong.where(r + y, r)
        return x._float_remainder(y)

    def floor_divide(self, other: Operand) -> Self:
        """floor(x / y); for floats (x - fmod(x, y)) / y rounded, as torch. Zero gradient."""
        x, y = self._division_operands("floor_divide", other)
        if not x.dtype.is_float:
            q = x._make("binary", (x, y), BinaryKind.DIV, x.shape)  # C: toward zero
            r = x._make("binary", (x, y), BinaryKind.MOD, x.shape)
            return ((r != 0) & ((r < 0) != (y < 0))).where(q - 1, q)
        return self._zero_grad(x._detached()._float_floor_divide(y._detached()))

    # Float `%` and `//` (torch's c10 kernels, built on an exact fmod).

    def _float_remainder(self, y: Self) -> Self:
        """torch's float remainder of two float tensors of one shape and dtype: fmod(x, y),
        moved by one y where it is not zero and has the other sign (a zero keeps x's sign).
        Gradients: 1 for x, -floor_divide(x, y) for y (torch's)."""
        x = self
        with no_grad():
            xd, yd = x._detached(), y._detached()
            m = xd._fmod(yd)
            m = ((m != 0) & ((yd < 0) != (m < 0))).where(m + yd, m)

        def rule(g: Self) -> tuple[Self | None, Self | None]:
            dy = -g * xd._float_floor_divide(yd) if y.requires_grad else None
            return g, dy

        return m._with_gradient((x, y), rule)

    def _float_floor_divide(self, y: Self) -> Self:
        """torch's `div_floor_floating` (no gradient): x / y for a zero y; else
        div = (x - fmod(x, y)) / y, less one where the fmod has the other sign than y,
        rounded to the nearest integer below or at it (floor, plus one above .5); a zero
        quotient has the sign of x / y."""
        x = self
        m = x._fmod(y)
        div = (x - m) / y
        div = ((m != 0) & ((y < 0) != (m < 0))).where(div - 1, div)
        q = div.floor()
        q = (div - q > 0.5).where(q + 1, q)
        q = (div != 0).where(q, (x / y)._signed_zero())
        return (y == 0).where(x / y, q)

    def _raw(self, kind: BinaryKind, other: Self) -> Self:
        """The raw IR op on two int32 tensors of one shape, with no torch fix-ups (`_fmod`
        keeps the operands positive and the shift amounts it uses below 32)."""
        return self._make("binary", (self, other), kind, self.shape)

    def _mantissa(self) -> tuple[Self, Self]:
        """(integer mantissa, exponent field at least 1) of float32 magnitude bits (int32), so
        that the value is mantissa * 2^(exponent - 150) (subnormals have no implicit bit)."""
        field = self >> 23
        m = self & 0x7FFFFF
        return (field == 0).where(m, m | 0x800000), field.maximum(1)

    def _fmod(self, y: Self) -> Self:
        """C's fmod(x, y) of two float tensors of one shape and dtype, exact as IEEE defines
        it (no gradient); float16 computes in float32 (fmod is exact: the result fits).

        On the bits: |x| = mx * 2^ex and |y| = my * 2^ey with integer mantissas below 2^24,
        so |x| mod |y| = ((mx * 2^(ex - ey)) mod my) * 2^ey, computed in int32 as mx mod my
        doubled 7 times at a time ((r << 7) mod my stays below 2^31) until ex - ey doublings
        are done; then the result's bits are built back, with the sign of x. NaN for a zero
        or NaN y and an infinite or NaN x; x itself where |x| < |y| (an infinite y)."""
        if self.dtype is not float32:
            return self.cast(float32)._fmod(y.cast(float32)).cast(self.dtype)
        ix, iy = self._detached().bitcast(int32), y._detached().bitcast(int32)
        ax, ay = ix & 0x7FFFFFFF, iy & 0x7FFFFFFF
        mx, ex = ax._mantissa()
        my, ey = ay._mantissa()
        my = my.maximum(1)  # y == 0 gives NaN below; a zero divisor never reaches MOD
        e = (ex - ey).maximum(0)
        r = mx._raw(BinaryKind.MOD, my)
        for i in range(_FMOD_STEPS):
            k = (e - _FMOD_SHIFT * i).maximum(0).minimum(_FMOD_SHIFT)
            r = r._raw(BinaryKind.SHL, k)._raw(BinaryKind.MOD, my)
        # r * 2^(ey - 150) as float32 bits: normal when its exponent field is >= 1
        top = (r.cast(float32).bitcast(int32) >> 23) - 127  # floor(log2 r) for r >= 1
        field = top + ey - 23
        normal = r._raw(BinaryKind.SHL, 23 - top) + ((field - 1) << 23)
        subnormal = r._raw(BinaryKind.SHL, ey - 1)
        bits = (r == 0).where(0, (field > 0).where(normal, subnormal))
        fmod = (bits | (ix & _SIGN_BIT)).bitcast(float32)
        nan = (ax >= _INF_BITS) | (ay == 0) | (ay > _INF_BITS)
        return nan.where(math.nan, (ax < ay).where(self._detached(), fmod))

    def __mod__(self, other: Operand) -> Self:
        return self.remainder(other)

    def __rmod__(self, other: Operand) -> Self:
        x, y = self._operands("remainder", other)
        return y.remainder(x)

    def __floordiv__(self, other: Operand) -> Self:
        return self.floor_divide(other)

    def __rfloordiv__(self, other: Operand) -> Self:
        x, y = self._operands("floor_divide", other)
        return y.floor_divide(x)
