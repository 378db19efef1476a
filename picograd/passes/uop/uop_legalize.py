"""`uop-legalize{target=...}`: rewrite what a target lacks in terms of what it has, or fail.

Input: `pg_uop` kernels (GPU form or not). Output: the same dialects.
Guarantee: every kernel uses only the element types and math functions that
`capabilities(target)` lists (`index` is always allowed) and has at most `max_buffers`
buffer arguments; where the rules below cannot get there, the pass fails with a
`PassFailedException` naming the pass, the kernel, the dtype or op, and the target:

    uop-legalize{target=wgsl}: @k0: f64 is not supported by WGSL (it has f32, i1, i32;
    emulates f16, i8, ui8, i16); argument 0 has type !pg.buffer<4xf64>

The rules, one table per target, applied to each kernel to a fixpoint (`RuleSet`); each
guard reads the table, so a rule fires only where the target lacks the function it removes:

    exp x -> exp2(x * log2(e))                 the type has exp2 but not exp (PTX f32)
    log x -> log2(x) * ln(2)                   the type has log2 but not log (PTX f32)
    f(x:f16) -> cast(f(cast(x, f32)), f16)     f16 lacks f, f32 has it or the rule above
    op(x:T, ...) -> cast(op(cast(x, W), ...), T)   T is emulated in W (WGSL: f16 in f32;
                                               i8, ui8, i16 in i32); shift amounts are
                                               taken modulo T's width first

    %y = pg_uop.unary exp %x : f32          %c = pg_uop.const 1.4426950216293335 : f32
                                      ->    %s = pg_uop.binary mul %x, %c : f32
                                            %y = pg_uop.unary exp2 %s : f32

The CPU tables ("llvm", "c") lack nothing, so there the pass changes nothing.

Emulated types (`Capabilities.emulated`) keep only loads, stores, constants, registers,
comparisons, `where` and casts; every unary and binary op on one is computed in the wide
type and cast back. The cast back is what makes the result the narrow type's: it wraps an
integer (two's complement, as C and numpy do) and rounds a float to nearest even, so the
pg_uop interpreter gives the same results before and after. For f16 that is exact: numpy
computes f16 arithmetic in f32 and rounds, and f32 holds an f16 sum, product or quotient
closely enough that rounding twice never differs from rounding once. Integer division of
the widened values truncates exactly as the narrow one (`-128 / -1` wraps back to -128).

Accuracy (against the exact result; measured over every 7th or 13th f32). `log2(x) * ln(2)`
is within 3 ulp of `log x`. The exp rewrite rounds `x * log2(e)` before exp2 magnifies that
error: relative error below (|x| + 2) * 2^-23, at most about 65 * 2^-24 = 3.9e-6 (|x| near
87); the usual GPU trade (CUDA's `__expf` is the same computation). Both map inf, -inf,
NaN, 0 and -0.0 to the same results as before, and overflow where exp does. f16 promotion
gives f32's result rounded to f16: exact for sqrt, exp2 and log2; numpy's own f16 exp, log
and sin (the interpreter's reference) differ from it by one f16 ulp on a handful of the
65536 inputs.

Integer division is left alone. PTX's 32-bit `div`/`rem` are slow, but the fast forms need
shifts or a multiply-high, which `pg_uop` does not have, and for `index` div/mod by a power
of two `convert-uop-to-ptx` already emits shifts. A rewrite here could only move the
problem, so there is none.

On GPU targets the rule engine's walk also erases dead pure ops, as in `uop-simplify`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp, bf16, f16, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_uop
from picograd.dialects.capabilities import TRANSCENDENTALS, Capabilities, capabilities
from picograd.dialects.dtypes import ELEMENT_TYPES, is_float
from picograd.dialects.pg import BinaryKind, BufferType, UnaryKind
from picograd.passes.rules import Op, Rule, RuleSet, Var
from picograd.passes.uop.uop_simplify import U

EXP, LOG, EXP2, LOG2 = UnaryKind.EXP, UnaryKind.LOG, UnaryKind.EXP2, UnaryKind.LOG2
MATH = tuple(UnaryKind(f) for f in TRANSCENDENTALS)  # the functions a table may lack
LOG2_E = 1 / math.log(2)
LN_2 = math.log(2)
# The function each rewrite rule computes another one with (for the f16 guard to know).
VIA = {"exp": "exp2", "log": "log2"}

# ── replacements ─────────────────────────────────────────────────────────────


def exp_via_exp2(x: SSAValue) -> Operation:
    scale = pg_uop.ConstOp(LOG2_E, x.type)
    return pg_uop.UnaryOp(EXP2, pg_uop.BinaryOp(BinaryKind.MUL, x, scale))


def log_via_log2(x: SSAValue) -> Operation:
    return pg_uop.BinaryOp(BinaryKind.MUL, pg_uop.UnaryOp(LOG2, x), pg_uop.ConstOp(LN_2, x.type))


def in_f32(op: pg_uop.UnaryOp, x: SSAValue) -> Operation:
    return pg_uop.CastOp(pg_uop.UnaryOp(op.kind.data, pg_uop.CastOp(x, f32)), f16)


def unary_in(wide: Attribute, op: pg_uop.UnaryOp, x: SSAValue) -> Operation:
    """`op` computed in `wide`, cast back to its own type."""
    return pg_uop.CastOp(pg_uop.UnaryOp(op.kind.data, pg_uop.CastOp(x, wide)), op.result.type)


def binary_in(wide: Attribute, op: pg_uop.BinaryOp, x: SSAValue, y: SSAValue) -> Operation:
    """`op` computed in `wide`, cast back to its own type. A shift amount is reduced modulo
    the narrow width first (`pg.BinaryKind.SHL`/`SHR`): in `wide` it would be modulo 32."""
    t, kind = op.result.type, op.kind.data
    a, b = pg_uop.CastOp(x, wide), pg_uop.CastOp(y, wide)
    if kind in (BinaryKind.SHL, BinaryKind.SHR):
        assert isinstance(t, IntegerType)
        b = pg_uop.BinaryOp(BinaryKind.AND, b, pg_uop.ConstOp(t.width.data - 1, wide))
    return pg_uop.CastOp(pg_uop.BinaryOp(kind, a, b), t)


# ── guards: questions to one target's table ──────────────────────────────────


@dataclass(frozen=True)
class Table:
    """The guards of one target's rules, each a question to its capability table."""

    caps: Capabilities

    def computes(self, function: str, dtype: Attribute) -> bool:
        """The target has `function` on `dtype`, natively or through one rewrite rule."""
        via = VIA.get(function)
        return self.caps.has_math(function, dtype) or (
            via is not None and self.caps.has_math(via, dtype))

    def lacks(self, function: str) -> Callable[[SSAValue], bool]:
        """Guard: `x`'s type lacks `function` but has the one its rule computes it with."""
        native = VIA[function]
        return lambda x: (not self.caps.has_math(function, x.type)
                          and self.caps.has_math(native, x.type))

    def emulates(self, op: Operation) -> bool:
        """Guard: `op`'s result type is one the target emulates in a wider type."""
        return self.caps.wide_type(op.results[0].type) is not None

    def unary_in_wide(self, op: pg_uop.UnaryOp, x: SSAValue) -> Operation:
        wide = self.caps.wide_type(op.result.type)
        assert wide is not None
        return unary_in(wide, op, x)

    def binary_in_wide(self, op: pg_uop.BinaryOp, x: SSAValue, y: SSAValue) -> Operation:
        wide = self.caps.wide_type(op.result.type)
        assert wide is not None
        return binary_in(wide, op, x, y)

    def f16_lacks(self, op: pg_uop.UnaryOp) -> bool:
        """Guard: `op` is f16 math the target lacks but computes on f32."""
        function = str(op.kind.data)
        return (op.result.type == f16 and not self.caps.has_math(function, f16)
                and self.caps.supports(f32) and self.computes(function, f32))


@functools.cache
def legalize_rules(target: str) -> RuleSet:
    """The rule table of `target` (each guard reads `capabilities(target)`)."""
    x, y, g = Var("x"), Var("y"), Table(capabilities(target))
    return RuleSet(f"uop-legalize{{target={target}}}", [
        Rule(U.unary(EXP, x), exp_via_exp2, where=g.lacks("exp")),      # exp x -> exp2(x * log2(e))
        Rule(U.unary(LOG, x), log_via_log2, where=g.lacks("log")),      # log x -> log2(x) * ln(2)
        Rule(Op(pg_uop.UnaryOp, x, kind=MATH, name="op"), in_f32,
             where=g.f16_lacks),                       # f(x:f16) -> cast(f(cast(x, f32)), f16)
        Rule(Op(pg_uop.UnaryOp, x, name="op"), g.unary_in_wide,
             where=g.emulates),                        # f(x:T) -> cast(f(cast(x, W)), T)
        Rule(Op(pg_uop.BinaryOp, x, y, name="op", commutative=False), g.binary_in_wide,
             where=g.emulates),                        # x op y : T -> cast(x:W op y:W, T)
    ])


# ── what must hold afterwards ────────────────────────────────────────────────


def _listed(things: Iterator[str]) -> str:
    return ", ".join(things)


def _dtypes_of(caps: Capabilities) -> str:
    # (bf16 is not named: no kernel holds it, tensor-legalize-bf16 stores it as i16)
    native = _listed(str(t) for t in ELEMENT_TYPES
                     if caps.supports(t) and caps.wide_type(t) is None and t != bf16)
    emulated = _listed(str(t) for t in ELEMENT_TYPES if caps.wide_type(t) is not None)
    return f"{native}; emulates {emulated}" if emulated else native


def _element(t: Attribute) -> Attribute | None:
    """The element type a value of type `t` holds (None for `index`, always allowed)."""
    if isinstance(t, BufferType | pg_uop.AccType):
        return t.element_type
    return None if isinstance(t, IndexType) else t


@dataclass(frozen=True)
class _KernelCheck:
    """The checks of one kernel against one table; each raises on the first violation."""

    pass_name: str
    caps: Capabilities
    kernel: pg_uop.KernelOp

    def fail(self, message: str) -> PassFailedException:
        return PassFailedException(f"{self.pass_name}: @{self.kernel.sym_name.data}: {message}")

    @property
    def target(self) -> str:
        return self.caps.target.upper()

    def buffers(self) -> None:
        limit = self.caps.max_buffers
        count = sum(isinstance(a.type, BufferType) for a in self.kernel.args)
        if limit is not None and count > limit:
            raise self.fail(f"{count} buffer arguments, but {self.target} binds at most {limit} "
                            "per kernel")

    def dtypes(self) -> None:
        for n, arg in enumerate(self.kernel.args):
            self._dtype(arg.type, f"argument {n} has type {arg.type}")
        for op in self.kernel.body.block.ops:
            for result in op.results:
                self._dtype(result.type, f"'{op.name}' has result type {result.type}")

    def _dtype(self, t: Attribute, where: str) -> None:
        element = _element(t)
        if element is not None and not self.caps.supports(element):
            raise self.fail(f"{element} is not supported by {self.target} (it has "
                            f"{_dtypes_of(self.caps)}); {where}")

    def math(self) -> None:
        for op in self.kernel.body.block.ops:
            if not isinstance(op, pg_uop.UnaryOp) or op.kind.data not in MATH:
                continue
            function, t = str(op.kind.data), op.result.type
            if not self.caps.has_math(function, t):
                native = _listed(f for f in TRANSCENDENTALS if self.caps.has_math(f, t))
                has = f"its {t} math: {native}" if native else f"it has no {t} math"
                raise self.fail(f"'{op.name} {function}' on {t} is not supported by "
                                f"{self.target} ({has})")


def _lacks_nothing(caps: Capabilities) -> bool:
    floats = [t for t in ELEMENT_TYPES if is_float(t)]
    return (caps.max_buffers is None and all(caps.supports(t) for t in ELEMENT_TYPES)
            and all(caps.has_math(f, t) for f in TRANSCENDENTALS for t in floats))


@dataclass(frozen=True)
class UopLegalizePass(ModulePass):
    """Rewrite the math a target lacks in terms of what it has; reject what it cannot run.

    Input: `pg_uop` kernels (GPU form or not). Output: the same dialects.
    Options: `target` (a name `capabilities` knows: "ptx", "wgsl", "llvm", "c").
    Guarantee: each kernel uses only the dtypes and math functions of the target's table and
    at most its `max_buffers` buffer arguments, or the pass raises `PassFailedException`
    naming the kernel, the op or dtype and the target; results are the input's up to the
    rounding described in the module docstring. A no-op for "llvm" and "c".
    """

    name = "uop-legalize"

    target: str = "ptx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        caps = capabilities(self.target)
        if _lacks_nothing(caps):
            return
        rules = legalize_rules(self.target)
        for kernel in op.ops:
            if not isinstance(kernel, pg_uop.KernelOp):
                continue
            check = _KernelCheck(f"uop-legalize{{target={self.target}}}", caps, kernel)
            check.buffers()
            check.dtypes()  # before rewriting, so the error names the input's own ops
            rules.apply(kernel)
            check.math()
