"""Elementwise ops: arithmetic, math functions, comparisons, `where`, casts.

Operands broadcast with numpy's rules (reshape + expand) and convert to one dtype, torch's
`result_type` (dtype.py): tensors with dimensions decide; a 0-d tensor or a python scalar
counts only where its category (bool < integer < float) is higher. So `int8_tensor * 2`
stays int8, `int8_tensor * 2.5` is float32, `float16_tensor * 2.5` float16, `int8 + uint8`
int16. A python scalar becomes a pg_tensor.const of the result dtype (an int wrapped into
its range). Integer arithmetic wraps around (int8 100 + 100 is -56). A bound variable
(`picograd.frontend.variable.SymbolicInt`) is a 0-d int32 tensor read at run time.

True division and the float functions (exp, log, sqrt, sin, ...) compute in the operands'
float dtype, float16 included, and in float32 (the default float) for integers and bools.
On bools, `+` is `or` and `*` is `and` (as numpy); `-` and negation of bools are DTypeErrors.
Casts: a nonzero to bool is True; int to int wraps around (keeps the low bits). Float to
int is defined for every value, the same on every device and in the interpreter (C leaves
most of it undefined; docs/design.md, "Float to int casts"): it truncates toward zero and
saturates at the int32 range (int64's for int64), NaN gives 0; a narrower integer type then
takes the low bits of that int32, as an int32 -> int8 cast does. So 2.9 -> 2, -1.0 -> uint8
is 255 (as torch and numpy), 300.0 -> int8 is 44, 3e9 -> int32 is 2147483647, inf -> int8
is -1 (the low byte of 2147483647), NaN -> 0 everywhere. torch on x86 gives INT_MIN (0 for
narrower types) for NaN, inf and values beyond the range; within the int32 range both agree.
"""

from __future__ import annotations

from typing import Self, cast

from picograd.dialects.pg import BinaryKind, CmpKind, UnaryKind
from picograd.errors import DeviceError
from picograd.frontend.base import Scalar, TensorBase, broadcast_shape
from picograd.frontend.dtype import (
    DEFAULT_FLOAT,
    DType,
    bool_,
    dtype_of_scalar,
    float32,
    result_type,
    to_dtype,
)
from picograd.frontend.float8 import decode_float8, encode_float8
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.lazy import dtype_error, user_location
from picograd.frontend.ops_movement import MovementOps
from picograd.frontend.variable import SymbolicInt

Operand = TensorBase | Scalar | SymbolicInt


class ElementwiseOps(MovementOps):
    __slots__ = ()

    # ── helpers ─────────────────────────────────────────────────────────────

    def _check_device(self, op: str, other: TensorBase) -> None:
        if other.device != self.device:
            raise DeviceError(f"{op}: operands are on different devices ({self.device} and "
                              f"{other.device}); move one with .to(device)\n"
                              f"  at {user_location()}")

    def _operands(self, op: str, *others: Operand, dtype: DType | None = None) -> list[Self]:
        """`self` and `others` broadcast to one shape and cast to one dtype: `dtype`, or
        `result_type` of the operands (dimensioned tensors, 0-d tensors, python scalars).
        A python number becomes the shared constant node of its value (`_operand_const`):
        a caller builds its result over the operands and never returns one of them."""
        node = self._node
        if dtype is None and all(isinstance(o, TensorBase) and o._node.shape == node.shape
                                 and o._node.dtype is node.dtype
                                 and o._node.device == node.device for o in others):
            return [self, *others]  # type: ignore[list-item]  # nothing to broadcast or cast
        if dtype is None and len(others) == 1:
            o = others[0]
            if isinstance(o, TensorBase) and o._node.dtype is node.dtype and (
                    o._node.device == node.device):  # one dtype: only shapes to broadcast
                shape = broadcast_shape(op, node.shape, o._node.shape)
                return [self._broadcast_to(shape), o._broadcast_to(shape)]  # type: ignore[list-item]
            # a python number: weak, it keeps a float tensor's dtype, and an
            kind = o.__class__  # int tensor's when it is an int (`result_type`)
            if (kind is float or kind is int) and (node.dtype.is_float or (
                    kind is int and node.dtype.is_int)):
                return [self, self._operand_const(o, node.shape, node.dtype)]  # type: ignore[arg-type]
        if any(o.__class__ is SymbolicInt for o in others):
            others = tuple(self._symbolic(o) if isinstance(o, SymbolicInt) else o
                           for o in others)
        tensors = [o for o in (self, *others) if isinstance(o, TensorBase)]
        for t in tensors:
            self._check_device(op, t)
        shape = self.shape
        for t in tensors[1:]:
            shape = broadcast_shape(op, shape, t.shape)
        scalars = [dtype_of_scalar(o) for o in others if not isinstance(o, TensorBase)]
        if dtype is None:
            dtype = result_type([t.dtype for t in tensors if t.ndim],
                                [t.dtype for t in tensors if not t.ndim], scalars)
        out: list[Self] = []
        for o in (self, *others):
            if isinstance(o, TensorBase):
                same_class = cast("Self", o)  # every tensor of a graph is of one class
                out.append(same_class._broadcast_to(shape).cast(dtype))
            else:
                out.append(self._operand_const(cast("Scalar", o), shape, dtype))
        return out

    def _symbolic(self, value: SymbolicInt) -> Self:
        """A bound variable as a 0-d int32 tensor on this device, its offset added."""
        t = type(self)._from_node(value.node(self.device))
        return t.add(value.offset) if value.offset else t

    def _binary(self, kind: BinaryKind, other: Operand, reverse: bool = False,
                dtype: DType | None = None) -> Self:
        x, y = self._operands(str(kind), other, dtype=dtype)
        if reverse:
            x, y = y, x
        return x._make("binary", (x, y), kind, x.shape)

    def _unary(self, kind: UnaryKind) -> Self:
        x = self if kind == UnaryKind.NEG or self.dtype.is_float else self.cast(DEFAULT_FLOAT)
        return x._make("unary", (x,), kind, x.shape)

    def _cmp(self, kind: CmpKind, other: Operand) -> Self:
        x, y = self._operands(str(kind), other)
        if x.dtype.storage_only and kind in (CmpKind.EQ, CmpKind.NE):
            # float8 == and != as torch has them: by value (-0.0 == 0.0, NaN != NaN)
            x, y = decode_float8(x), decode_float8(y)
        return x._make("cmp", (x, y), kind, x.shape, bool_)

    # ── arithmetic ──────────────────────────────────────────────────────────

    def add(self, other: Operand, reverse: bool = False) -> Self:
        x, y = self._operands("add", other)
        kind = BinaryKind.OR if x.dtype.is_bool else BinaryKind.ADD
        x, y = (y, x) if reverse else (x, y)
        return x._make("binary", (x, y), kind, x.shape)

    def sub(self, other: Operand, reverse: bool = False) -> Self:
        x, y = self._operands("sub", other)
        if x.dtype.is_bool:
            raise dtype_error("sub", "subtracting bool tensors is not defined; cast with .int()")
        x, y = (y, x) if reverse else (x, y)
        return x._make("binary", (x, y), BinaryKind.SUB, x.shape)

    def mul(self, other: Operand, reverse: bool = False) -> Self:
        x, y = self._operands("mul", other)
        if x.dtype.storage_only and isinstance(other, TensorBase):
            # float8 * float8 as torch has it (not with a python number): the float32
            # product of two float8 values is exact, so one rounding gives torch's result
            return encode_float8(decode_float8(x) * decode_float8(y), x.dtype)
        kind = BinaryKind.AND if x.dtype.is_bool else BinaryKind.MUL
        x, y = (y, x) if reverse else (x, y)
        return x._make("binary", (x, y), kind, x.shape)

    def div(self, other: Operand, reverse: bool = False) -> Self:
        """True division: in the operands' float dtype, float32 for ints and bools."""
        x, y = self._operands("div", other)
        if not x.dtype.is_float:
            x, y = x.cast(DEFAULT_FLOAT), y.cast(DEFAULT_FLOAT)
        x, y = (y, x) if reverse else (x, y)
        return x._make("binary", (x, y), BinaryKind.DIV, x.shape)

    def maximum(self, other: Operand) -> Self:
        return self._binary(BinaryKind.MAX, other)

    def minimum(self, other: Operand) -> Self:
        return self._binary(BinaryKind.MIN, other)

    def __add__(self, other: Operand) -> Self:
        return self.add(other)

    def __radd__(self, other: Operand) -> Self:
        return self.add(other, reverse=True)

    def __sub__(self, other: Operand) -> Self:
        return self.sub(other)

    def __rsub__(self, other: Operand) -> Self:
        return self.sub(other, reverse=True)

    def __mul__(self, other: Operand) -> Self:
        return self.mul(other)

    def __rmul__(self, other: Operand) -> Self:
        return self.mul(other, reverse=True)

    def __truediv__(self, other: Operand) -> Self:
        return self.div(other)

    def __rtruediv__(self, other: Operand) -> Self:
        return self.div(other, reverse=True)

    def neg(self) -> Self:
        if self.dtype.is_bool:
            raise dtype_error("neg", "negating a bool tensor is not defined; use logical_not()")
        return self._unary(UnaryKind.NEG)

    def __neg__(self) -> Self:
        return self.neg()

    # ── functions ───────────────────────────────────────────────────────────

    def exp(self) -> Self:
        return self._unary(UnaryKind.EXP)

    def log(self) -> Self:
        return self._unary(UnaryKind.LOG)

    def sqrt(self) -> Self:
        return self._unary(UnaryKind.SQRT)

    def sin(self) -> Self:
        return self._unary(UnaryKind.SIN)

    def relu(self) -> Self:
        """max(0, x), in the tensor's dtype: -0.0 and NaN pass as they are (torch's
        clamp_min; `maximum` keeps the second of two equal zeros, and NaN wins), and the
        kernels keep their vector max. Its gradient is torch's (threshold_backward): the
        output gradient where x > 0 or x is NaN, 0 where x <= 0 — not `maximum`'s rule,
        which gives a tie at x == 0 half the gradient."""
        with no_grad():
            y = self._const(0, self.shape, self.dtype).maximum(self)
        return y._with_gradient((self,), lambda g: ((self <= 0).where(0, g),))

    def logical_not(self) -> Self:
        x = self.cast(bool_)
        return x._make("unary", (x,), UnaryKind.NOT, x.shape)

    # ── comparisons (bool results) ──────────────────────────────────────────

    def __lt__(self, other: Operand) -> Self:
        return self._cmp(CmpKind.LT, other)

    def __le__(self, other: Operand) -> Self:
        return self._cmp(CmpKind.LE, other)

    def __gt__(self, other: Operand) -> Self:
        return self._cmp(CmpKind.GT, other)

    def __ge__(self, other: Operand) -> Self:
        return self._cmp(CmpKind.GE, other)

    def __eq__(self, other: object) -> Self:  # type: ignore[override]
        return self._cmp(CmpKind.EQ, other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> Self:  # type: ignore[override]
        return self._cmp(CmpKind.NE, other)  # type: ignore[arg-type]

    __hash__ = object.__hash__  # tensors are hashed by identity, as torch's

    # ── select and casts ────────────────────────────────────────────────────

    def where(self, x: Operand, y: Operand) -> Self:
        """`self ? x : y` elementwise, with `self` (cast to bool) as the condition."""
        cond = self.cast(bool_)
        if isinstance(x, TensorBase):
            a, b = x._operands("where", y)  # type: ignore[attr-defined]
        elif isinstance(y, TensorBase):
            b, a = y._operands("where", x)  # type: ignore[attr-defined]
        else:  # two scalars: their own dtype, not the condition's
            dt = result_type((), (), (dtype_of_scalar(x), dtype_of_scalar(y)))
            a, b = self._operands("where", x, y, dtype=dt)[1:]
        shape = broadcast_shape("where", cond.shape, a.shape)
        cond, a, b = cond._broadcast_to(shape), a._broadcast_to(shape), b._broadcast_to(shape)
        return a._make("where", (cond, a, b), None, shape)

    def cast(self, dtype: object) -> Self:
        """Convert elements to `dtype` (see the module docstring for float to int). A cast to
        an integer or bool dtype cuts the gradient, as torch's: its result does not require
        grad, so a backward from it raises; casts between float dtypes keep the gradient."""
        dt = to_dtype(dtype)
        if dt is self.dtype:
            return self
        if dt.storage_only or self.dtype.storage_only:  # float8: through float32's bits
            with no_grad():
                out = (decode_float8(self).cast(dt) if self.dtype.storage_only
                       else encode_float8(self.cast(float32), dt))
            # a float-to-float cast passes the gradient on (cast back), as torch's
            return self._view_node(out._node, "cast", None) if dt.is_float else out
        if dt.is_float:
            return self._make("cast", (self,), None, self.shape, dt)
        with no_grad():  # integers have no gradient
            return self._make("cast", (self,), None, self.shape, dt)

    def float(self) -> Self:
        return self.cast("float32")

    def half(self) -> Self:
        return self.cast("float16")

    def int(self) -> Self:
        return self.cast("int32")

    def long(self) -> Self:
        return self.cast("int64")

    def short(self) -> Self:
        return self.cast("int16")

    def char(self) -> Self:
        return self.cast("int8")

    def byte(self) -> Self:
        return self.cast("uint8")

    def bool(self) -> Self:
        return self.cast(bool_)
