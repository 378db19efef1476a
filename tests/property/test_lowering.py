"""The default CPU pipeline on random pg_tensor programs: after every pass the module
verifies and the interpreter gives stage 1's results bit for bit (NaN equals NaN), and the
programs compiled for the "llvm" and "c" targets give them too. The LLVM target first
contracts sums of products (`uop-contract`: one rounding per step, which an overflowing
product or a cancellation can make differ from stage 1 by more than any tolerance): its
compiled results are compared bit for bit with the interpreter on the contracted IR.

Two things keep the compiled comparison from being bit for bit on every program:

* a float-to-int cast of NaN, inf or an out-of-range value is undefined in C (the CPUs and
  numpy disagree on the result), so programs that make one skip the compiled check;
* `exp`, `log` and `sin` come from numpy in the interpreter and from libm when compiled,
  which may differ in the last ulp: programs using them compare float results with
  rtol 1e-5 and skip non-float results (a 1-ulp difference may flip a comparison).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from strategies import Program, assert_same, tensor_programs
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.passes import ModulePass

from picograd.compiler.driver import compile_module
from picograd.compiler.pipelines import CPU_C, CPU_LLVM, run_pipeline, stage_pipeline
from picograd.dialects import make_context, pg_uop
from picograd.dialects import pg_tensor as pt
from picograd.dialects.dtypes import is_bool, is_float, is_int, to_numpy_dtype
from picograd.dialects.pg import UnaryKind
from picograd.interpreter import run

UOP = stage_pipeline("uop")  # the passes both targets share
assert CPU_LLVM.startswith(UOP + ",") and CPU_C.startswith(UOP + ",")
TO_TARGET = {"llvm": CPU_LLVM[len(UOP) + 1:], "c": CPU_C[len(UOP) + 1:]}
# the LLVM target's first step rounds each step of a sum of products once (uop-contract)
CONTRACT = "uop-contract"
assert TO_TARGET["llvm"].startswith(CONTRACT + ",")
LIBM = (UnaryKind.EXP, UnaryKind.LOG, UnaryKind.SIN, UnaryKind.EXP2, UnaryKind.LOG2)


def interpret(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    with warnings.catch_warnings():  # numpy warns on the inf/nan the inputs are made of
        warnings.simplefilter("ignore", RuntimeWarning)
        return [r.ravel() for r in run(module, inputs)]


def same(expected: list[np.ndarray], got: list[np.ndarray], where: str) -> None:
    """Bit for bit (NaN, inf and the sign of zero included)."""
    try:
        assert_same(expected, got)
    except AssertionError as e:
        raise AssertionError(f"after {where}: {e}") from None


def makes_undefined_cast(program: Program) -> bool:
    """Whether a float-to-int cast of the program gets NaN, inf or a value out of range.

    Runs a copy of `@main` that also returns the input of every such cast.
    """
    module = program.parse()
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    casts = [op for op in main.walk() if isinstance(op, pt.CastOp)
             and is_float(pt.dtype_of(op.input)) and is_int(pt.dtype_of(op.result))
             and not is_bool(pt.dtype_of(op.result))]
    if not casts:
        return False
    ret = main.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    values = [*ret.arguments, *(c.input for c in casts)]
    ret.detach()
    ret.erase()
    main.body.block.add_op(func.ReturnOp(*values))
    main.function_type = FunctionType.from_lists(main.function_type.inputs.data,
                                                 [v.type for v in values])
    seen = interpret(module, program.inputs)[len(values) - len(casts):]
    for cast, x in zip(casts, seen, strict=True):
        info = np.iinfo(to_numpy_dtype(pt.dtype_of(cast.result)))
        x = x.astype(np.float64)
        if not np.all((x > float(info.min) - 1) & (x < float(info.max) + 1)):  # NaN: False
            return True
    return False


def uses_libm(module: ModuleOp) -> bool:
    return any(isinstance(op, pt.UnaryOp) and op.kind.data in LIBM for op in module.walk())


def close(expected: list[np.ndarray], got: list[np.ndarray], where: str) -> None:
    assert len(expected) == len(got)
    for want, have in zip(expected, got, strict=True):
        assert want.dtype == have.dtype and want.shape == have.shape, where
        if want.dtype.kind == "f":
            np.testing.assert_allclose(have, want, rtol=1e-5, equal_nan=True, err_msg=where)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tensor_programs(max_ops=6))
def test_every_pass_and_both_targets_preserve_semantics(program: Program):
    module = program.parse()
    module.verify()
    expected = interpret(module, program.inputs)
    libm = uses_libm(module)

    def check(pass_: ModulePass, after: ModuleOp) -> None:
        after.verify()
        same(expected, interpret(after, program.inputs), pass_.name)

    run_pipeline(module, UOP, after_pass=check)
    if makes_undefined_cast(program):
        event("compiled check skipped: undefined float-to-int cast")
        return
    for target, rest in TO_TARGET.items():
        want, lowered = expected, module.clone()
        if target == "llvm":  # the contracted IR's results are the reference
            run_pipeline(lowered, CONTRACT, ctx=make_context())
            lowered.verify()
            want = interpret(lowered, program.inputs)
            event(f"contracted: {any(isinstance(op, pg_uop.FmaOp) for op in lowered.walk())}")
            rest = rest[len(CONTRACT) + 1:]
        lowered = run_pipeline(lowered, rest, ctx=make_context())
        lowered.verify()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = [r.ravel() for r in compile_module(lowered, target).run(program.inputs)]
        if libm:
            close(want, got, f"compiling for {target}")
        else:
            same(want, got, f"compiling for {target}")
