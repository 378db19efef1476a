"""uop-gpu-map: the launch it picks (within the target's limits), what it spreads over a work
group and what it leaves sequential, the errors it raises, and, through the interpreter,
the same results as the sequential kernels."""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32, i1, i8, i32
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from picograd import interpreter
from picograd.compiler.pipelines import DEFAULT_PIPELINES, run_pipeline
from picograd.dialects import make_context
from picograd.dialects import pg_uop as pu
from picograd.dialects.capabilities import capabilities
from picograd.dialects.dtypes import to_numpy_dtype, ui8
from picograd.dialects.pg import BinaryKind, RangeKind, SpecialKind
from picograd.passes.uop import uop_gpu_map as gpu_map
from picograd.passes.uop.uop_gpu_map import combine_identity


def module_of(kernel: str, outputs: int = 1) -> ModuleOp:
    """`kernel` (named @k, every argument an input, the last `outputs` ones also the
    outputs) under a `@main` that launches it."""
    module = Parser(make_context(), kernel).parse_module()
    k = next(op for op in module.ops if isinstance(op, pu.KernelOp))
    types = [a.type for a in k.args]
    params = ", ".join(f"%a{n}: {t}" for n, t in enumerate(types))
    names = ", ".join(f"%a{n}" for n in range(len(types)))
    outs = range(len(types) - outputs, len(types))
    text = f"""{kernel}
func.func @main({params}) -> ({", ".join(str(types[n]) for n in outs)}) {{
  pg_sched.launch @k({names}) : {", ".join(map(str, types))}
  func.return {", ".join(f"%a{n}" for n in outs)} : {", ".join(str(types[n]) for n in outs)}
}}"""
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def inputs_for(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    rng = np.random.default_rng(seed)
    out = []
    for t in main.function_type.inputs.data:
        dtype = to_numpy_dtype(t.element_type)  # type: ignore[attr-defined]
        values = rng.integers(-9, 10, t.size.data)  # type: ignore[attr-defined]
        out.append(values.astype(dtype))
    return out


def interpret(module: ModuleOp, inputs: list[np.ndarray]) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return interpreter.run(module, inputs)


def mapped(kernel: str, spec: str = "uop-gpu-map{local-size=4}", exact: bool = True,
           outputs: int = 1) -> pu.KernelOp:
    """Map `kernel`, check it against the sequential one, return the mapped kernel."""
    module = module_of(kernel, outputs)
    inputs = inputs_for(module)
    want = interpret(module, inputs)
    run_pipeline(module, spec, verify_each=True)
    got = interpret(module, inputs)
    for w, g in zip(want, got, strict=True):
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5)
    return next(op for op in module.ops if isinstance(op, pu.KernelOp))


def specials(kernel: pu.KernelOp) -> dict[tuple[SpecialKind, int], int]:
    return {(op.kind.data, op.dim.data): op.size.data for op in kernel.body.block.ops
            if isinstance(op, pu.SpecialOp)}


def count(kernel: pu.KernelOp, op_type: type) -> int:
    return sum(isinstance(op, op_type) for op in kernel.body.block.ops)


G0, G1, L0 = (SpecialKind.GROUP_ID, 0), (SpecialKind.GROUP_ID, 1), (SpecialKind.LOCAL_ID, 0)

FILL = """
pg_uop.kernel @k(%out: !pg.buffer<N_xi32>) {
  %i = pg_uop.range 0 to N_ global
  %v = pg_uop.cast %i : index to i32
  pg_uop.store %v, %out[%i] : i32, !pg.buffer<N_xi32>
  pg_uop.end %i
}"""

ROW_SUMS = """
pg_uop.kernel @k(%a: !pg.buffer<36xDT>, %out: !pg.buffer<4xDT>) {
  %c9 = pg_uop.const 9 : index
  %i = pg_uop.range 0 to 4 global
  %acc = pg_uop.acc INIT : DT
  %base = pg_uop.binary mul %i, %c9 : index
  %r = pg_uop.range 0 to 9 reduce
  %idx = pg_uop.binary add %base, %r : index
  %v = pg_uop.load %a[%idx] : !pg.buffer<36xDT> -> DT
  %old = pg_uop.acc_load %acc : DT
  %new = pg_uop.binary KIND %old, %v : DT
  pg_uop.acc_store %acc, %new : DT
  pg_uop.end %r
  %s = pg_uop.acc_load %acc : DT
  pg_uop.store %s, %out[%i] : DT, !pg.buffer<4xDT>
  pg_uop.end %i
}"""


def row_sums(dtype: str = "i32", kind: str = "add", init: str = "0") -> str:
    return ROW_SUMS.replace("DT", dtype).replace("KIND", kind).replace("INIT", init)


# ── launch shapes ────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("n", "spec", "want", "guards"), [
    (8, "uop-gpu-map{local-size=4}", {G0: 2, L0: 4}, 0),
    (10, "uop-gpu-map{local-size=4}", {G0: 3, L0: 4}, 1),
    (3, "uop-gpu-map{local-size=4}", {L0: 3}, 0),  # the block shrinks to the nest
    (1, "uop-gpu-map", {}, 0),  # one work item: no special at all
    (7, "uop-gpu-map{local-size=1}", {G0: 7}, 0),
    (600, "uop-gpu-map", {G0: 3, L0: 256}, 1),  # PTX's default block
    (600, "uop-gpu-map{target=wgsl}", {G0: 10, L0: 64}, 1),  # WGSL's
])
def test_launch_of_one_nest(n: int, spec: str, want: dict, guards: int) -> None:
    kernel = mapped(FILL.replace("N_", str(n)), spec)
    assert specials(kernel) == want
    assert count(kernel, pu.IfOp) == guards
    assert count(kernel, pu.RangeOp) == 0 and count(kernel, pu.EndOp) == 0


def test_more_groups_than_a_grid_dimension_use_the_second(monkeypatch) -> None:
    # A PTX table that allows 3 groups per dimension: 20 items in groups of 2 need 10 groups,
    # 4 rows of 3 (12 groups, the last 2 guarded away).
    small = dataclasses.replace(capabilities("ptx"), max_groups=(3, 4, 1))
    monkeypatch.setattr(gpu_map, "capabilities", lambda target: small)
    kernel = mapped(FILL.replace("N_", "20"), "uop-gpu-map{local-size=2}")
    assert specials(kernel) == {G0: 3, G1: 4, L0: 2}
    with pytest.raises(PassFailedException, match=r"uop-gpu-map: @k: 30 work groups of 1 do "
                       r"not fit a grid of 3 x 4 groups \(target 'ptx'\)"):
        mapped(FILL.replace("N_", "30"), "uop-gpu-map{local-size=1}")


def test_every_size_is_within_the_targets_limits() -> None:
    for target in ("ptx", "wgsl"):
        caps = capabilities(target)
        module = module_of(FILL.replace("N_", str(70000 * 64)))
        run_pipeline(module, f"uop-gpu-map{{target={target}}}", verify_each=True)
        kernel = next(op for op in module.ops if isinstance(op, pu.KernelOp))
        ids = specials(kernel)
        assert caps.max_groups is not None
        assert ids[L0] == caps.default_local_size
        assert ids[G0] <= caps.max_groups[0] and ids.get(G1, 1) <= caps.max_groups[1]
        assert ids[G0] * ids.get(G1, 1) * ids[L0] >= 70000 * 64


def test_two_nests_share_the_ids_and_each_has_its_guard() -> None:
    kernel = mapped("""
    pg_uop.kernel @k(%a: !pg.buffer<8xi32>, %b: !pg.buffer<3xi32>) {
      %one = pg_uop.const 1 : i32
      %i = pg_uop.range 0 to 2 global
      %j = pg_uop.range 0 to 4 global
      %c4 = pg_uop.const 4 : index
      %row = pg_uop.binary mul %i, %c4 : index
      %idx = pg_uop.binary add %row, %j : index
      %v = pg_uop.cast %idx : index to i32
      pg_uop.store %v, %a[%idx] : i32, !pg.buffer<8xi32>
      pg_uop.end %j
      pg_uop.end %i
      %k = pg_uop.range 0 to 3 global
      %w = pg_uop.cast %k : index to i32
      pg_uop.store %w, %b[%k] : i32, !pg.buffer<3xi32>
      pg_uop.end %k
    }""", "uop-gpu-map{local-size=3}")
    assert specials(kernel) == {G0: 3, L0: 3}
    assert count(kernel, pu.IfOp) == 2


def test_an_empty_nest_never_runs() -> None:
    kernel = mapped("""
    pg_uop.kernel @k(%out: !pg.buffer<2xi32>) {
      %i = pg_uop.range 0 to 0 global
      %one = pg_uop.const 1 : i32
      pg_uop.store %one, %out[%i] : i32, !pg.buffer<2xi32>
      pg_uop.end %i
    }""")
    assert count(kernel, pu.IfOp) == 1


def test_an_imperfect_nest_keeps_its_inner_range_as_a_loop() -> None:
    kernel = mapped("""
    pg_uop.kernel @k(%out: !pg.buffer<6xi32>) {
      %c3 = pg_uop.const 3 : index
      %i = pg_uop.range 0 to 2 global
      %row = pg_uop.binary mul %i, %c3 : index
      %z = pg_uop.const 0 : i32
      pg_uop.store %z, %out[%row] : i32, !pg.buffer<6xi32>
      %j = pg_uop.range 0 to 3 global
      %idx = pg_uop.binary add %row, %j : index
      %v = pg_uop.cast %idx : index to i32
      pg_uop.store %v, %out[%idx] : i32, !pg.buffer<6xi32>
      pg_uop.end %j
      pg_uop.end %i
    }""")
    assert specials(kernel) == {L0: 2}
    (loop,) = [op for op in kernel.body.block.ops if isinstance(op, pu.RangeOp)]
    assert loop.kind.data == RangeKind.LOOP


def test_top_level_work_beside_a_nest_runs_in_work_item_0() -> None:
    kernel = mapped("""
    pg_uop.kernel @k(%a: !pg.buffer<6xi32>, %out: !pg.buffer<7xi32>) {
      %c6 = pg_uop.const 6 : index
      %i = pg_uop.range 0 to 6 global
      %v = pg_uop.load %a[%i] : !pg.buffer<6xi32> -> i32
      pg_uop.store %v, %out[%i] : i32, !pg.buffer<7xi32>
      pg_uop.end %i
      %acc = pg_uop.acc 0 : i32
      %r = pg_uop.range 0 to 6 reduce
      %w = pg_uop.load %a[%r] : !pg.buffer<6xi32> -> i32
      %old = pg_uop.acc_load %acc : i32
      %new = pg_uop.binary add %old, %w : i32
      pg_uop.acc_store %acc, %new : i32
      pg_uop.end %r
      %s = pg_uop.acc_load %acc : i32
      pg_uop.store %s, %out[%c6] : i32, !pg.buffer<7xi32>
    }""")
    assert count(kernel, pu.IfOp) == 2  # the nest's guard and `flat == 0`
    assert count(kernel, pu.BarrierOp) == 0  # beside a nest, top-level reductions stay serial


def test_kernels_already_in_gpu_form_are_left_alone() -> None:
    module = module_of(FILL.replace("N_", "10"))
    run_pipeline(module, "uop-gpu-map{local-size=4}")
    once = str(module)
    run_pipeline(module, "uop-gpu-map{local-size=4}")
    assert str(module) == once


# ── group reductions ─────────────────────────────────────────────────────────


@pytest.mark.parametrize(("dtype", "kind", "init"), [
    ("i32", "add", "0"), ("i32", "max", "-2147483648"), ("i32", "min", "2147483647"),
    ("i32", "mul", "1"), ("i32", "xor", "0"), ("i32", "and", "-1"), ("i1", "or", "0"),
    ("i1", "and", "1"), ("i1", "max", "0"), ("f32", "max", "-inf"),
])
def test_group_reductions_are_exact_on_ints_bools_and_max(dtype: str, kind: str,
                                                          init: str) -> None:
    for local in (2, 3, 4, 8, 16):  # 9 iterations: ragged, exact, more threads than work
        kernel = mapped(row_sums(dtype, kind, init),
                        f"uop-gpu-map{{local-size={local} reduce-threshold=9}}")
        assert specials(kernel) == {G0: 4, L0: local}
        assert count(kernel, pu.SharedOp) == 1 and count(kernel, pu.BarrierOp) >= 1


def test_float_group_sums_round_differently_at_most() -> None:
    kernel = mapped(row_sums("f32", "add", "0.0"), "uop-gpu-map{local-size=4 "
                    "reduce-threshold=9}", exact=False)
    assert count(kernel, pu.SharedOp) == 1


def test_short_reductions_and_option_off_stay_sequential() -> None:
    for spec in ("uop-gpu-map{local-size=4}", "uop-gpu-map{local-size=4 group-reduce=false}",
                 "uop-gpu-map{local-size=1 reduce-threshold=2}"):
        kernel = mapped(row_sums(), spec)
        assert count(kernel, pu.SharedOp) == 0 and count(kernel, pu.BarrierOp) == 0
        assert [op.end.data for op in kernel.body.block.ops
                if isinstance(op, pu.RangeOp)] == [9]


@pytest.mark.parametrize("change", [
    ("%acc = pg_uop.acc 0 : i32", "%acc = pg_uop.acc 5 : i32"),  # init is not the identity
    ("binary add %old, %v", "binary sub %old, %v"),  # not associative
    ("pg_uop.acc_store %acc, %new : i32\n",  # the running value leaks out of the loop
     "pg_uop.acc_store %acc, %new : i32\n  pg_uop.store %new, %out[%i] : i32, "
     "!pg.buffer<4xi32>\n"),
    ("%acc = pg_uop.acc 0 : i32\n",  # a store before the reduction
     "%acc = pg_uop.acc 0 : i32\n  %z = pg_uop.const 0 : i32\n  pg_uop.store %z, "
     "%out[%i] : i32, !pg.buffer<4xi32>\n"),
])
def test_reductions_that_cannot_be_spread_stay_sequential(change: tuple[str, str]) -> None:
    text = row_sums()
    assert change[0] in text
    kernel = mapped(text.replace(*change), "uop-gpu-map{local-size=4 reduce-threshold=2}")
    assert count(kernel, pu.SharedOp) == 0


def test_without_enough_shared_memory_reductions_stay_sequential(monkeypatch) -> None:
    tiny = dataclasses.replace(capabilities("ptx"), shared_memory_bytes=12)
    monkeypatch.setattr(gpu_map, "capabilities", lambda target: tiny)
    kernel = mapped(row_sums(), "uop-gpu-map{local-size=4 reduce-threshold=2}")
    assert count(kernel, pu.SharedOp) == 0
    kernel = mapped(row_sums(), "uop-gpu-map{local-size=3 reduce-threshold=2}")  # 12 bytes
    assert count(kernel, pu.SharedOp) == 1


def test_two_reductions_in_one_body_broadcast_the_first() -> None:
    # Per row: m = max(x), then sum(x - m); the second reduction reads the first's result in
    # every thread, so the first one's total goes back to every thread's register.
    kernel = mapped("""
    pg_uop.kernel @k(%a: !pg.buffer<30xi32>, %out: !pg.buffer<3xi32>) {
      %c10 = pg_uop.const 10 : index
      %i = pg_uop.range 0 to 3 global
      %base = pg_uop.binary mul %i, %c10 : index
      %mx = pg_uop.acc -2147483648 : i32
      %r = pg_uop.range 2 to 12 reduce
      %idx = pg_uop.binary add %base, %r : index
      %c2 = pg_uop.const 2 : index
      %at = pg_uop.binary sub %idx, %c2 : index
      %v = pg_uop.load %a[%at] : !pg.buffer<30xi32> -> i32
      %old = pg_uop.acc_load %mx : i32
      %new = pg_uop.binary max %v, %old : i32
      pg_uop.acc_store %mx, %new : i32
      pg_uop.end %r
      %m = pg_uop.acc_load %mx : i32
      %sum = pg_uop.acc 0 : i32
      %s = pg_uop.range 0 to 10 reduce
      %idx2 = pg_uop.binary add %base, %s : index
      %w = pg_uop.load %a[%idx2] : !pg.buffer<30xi32> -> i32
      %d = pg_uop.binary sub %w, %m : i32
      %old2 = pg_uop.acc_load %sum : i32
      %new2 = pg_uop.binary add %old2, %d : i32
      pg_uop.acc_store %sum, %new2 : i32
      pg_uop.end %s
      %t = pg_uop.acc_load %sum : i32
      pg_uop.store %t, %out[%i] : i32, !pg.buffer<3xi32>
      pg_uop.end %i
    }""", "uop-gpu-map{local-size=4 reduce-threshold=8}")
    assert count(kernel, pu.SharedOp) == 1
    # two trees of 2 barriers each, the broadcast's, and none after the last step
    assert count(kernel, pu.BarrierOp) == 1 + 2 + 1 + 1 + 1


def test_a_kernel_without_global_ranges_reduces_in_one_group() -> None:
    kernel = mapped("""
    pg_uop.kernel @k(%a: !pg.buffer<300xf32>, %out: !pg.buffer<1xf32>) {
      %c0 = pg_uop.const 0 : index
      %acc = pg_uop.acc 0.0 : f32
      %r = pg_uop.range 0 to 300 reduce
      %v = pg_uop.load %a[%r] : !pg.buffer<300xf32> -> f32
      %old = pg_uop.acc_load %acc : f32
      %new = pg_uop.binary add %old, %v : f32
      pg_uop.acc_store %acc, %new : f32
      pg_uop.end %r
      %s = pg_uop.acc_load %acc : f32
      pg_uop.store %s, %out[%c0] : f32, !pg.buffer<1xf32>
    }""", "uop-gpu-map{target=wgsl}", exact=False)
    assert specials(kernel) == {L0: 64}  # one group: no group id
    assert count(kernel, pu.BarrierOp) == 6  # log2(64) steps, none after the last


# A fused row kernel (softmax-like): per row, m = max over 10 columns, then a column loop
# that writes x - m for each column (the epilogue).
ROW_EPILOGUE = """
pg_uop.kernel @k(%a: !pg.buffer<30xi32>, %out: !pg.buffer<30xi32>) {
  %c10 = pg_uop.const 10 : index
  %i = pg_uop.range 0 to 3 global
  %base = pg_uop.binary mul %i, %c10 : index
  %mx = pg_uop.acc -2147483648 : i32
  %r = pg_uop.range 0 to 10 reduce
  %idx = pg_uop.binary add %base, %r : index
  %v = pg_uop.load %a[%idx] : !pg.buffer<30xi32> -> i32
  %old = pg_uop.acc_load %mx : i32
  %new = pg_uop.binary max %v, %old : i32
  pg_uop.acc_store %mx, %new : i32
  pg_uop.end %r
  %m = pg_uop.acc_load %mx : i32
  %j = pg_uop.range 0 to 10 global
  %at = pg_uop.binary add %base, %j : index
  %w = pg_uop.load %a[%at] : !pg.buffer<30xi32> -> i32
  %d = pg_uop.binary sub %w, %m : i32
  pg_uop.store %d, %out[%at] : i32, !pg.buffer<30xi32>
  pg_uop.end %j
  pg_uop.end %i
}"""
ROW_SPEC = "uop-gpu-map{local-size=4 reduce-threshold=8}"


def loops(kernel: pu.KernelOp) -> list[tuple[int, RangeKind]]:
    return [(op.end.data, op.kind.data) for op in kernel.body.block.ops
            if isinstance(op, pu.RangeOp)]


def lid0_guards(kernel: pu.KernelOp) -> int:
    """How many `if (local_id == 0)` guards the kernel has."""
    return sum(isinstance(op, pu.IfOp) and isinstance(op.cond.owner, pu.CmpOp)
               and op.cond.owner.kind.data.value == "eq"
               and isinstance(op.cond.owner.lhs.owner, pu.SpecialOp)
               for op in kernel.body.block.ops)


@pytest.mark.parametrize("local", [2, 3, 4, 5, 10, 16])
def test_an_epilogue_loop_after_the_last_group_reduction_is_spread_over_the_group(
        local: int) -> None:
    kernel = mapped(ROW_EPILOGUE, f"uop-gpu-map{{local-size={local} reduce-threshold=8}}")
    trips = -(-10 // local)
    assert loops(kernel) == [(trips, RangeKind.REDUCE), (trips, RangeKind.LOOP)]
    assert lid0_guards(kernel) == 0  # every thread reads the total back and stores a share
    tree = (local - 1).bit_length()
    assert count(kernel, pu.BarrierOp) == 1 + tree  # a barrier after every tree step
    # ragged: a guard skips the columns past the end in the strided reduction and loop
    assert count(kernel, pu.IfOp) == tree + 2 * (10 % local != 0)


def test_an_epilogue_with_other_stores_spreads_the_loop_and_stores_the_rest_in_item_0(
        ) -> None:
    text = ROW_EPILOGUE.replace("%out: !pg.buffer<30xi32>)",
                                "%stats: !pg.buffer<3xi32>, %out: !pg.buffer<30xi32>)")
    text = text.replace("%m = pg_uop.acc_load %mx : i32\n",
                        "%m = pg_uop.acc_load %mx : i32\n"
                        "  pg_uop.store %m, %stats[%i] : i32, !pg.buffer<3xi32>\n")
    kernel = mapped(text, ROW_SPEC, outputs=2)
    assert loops(kernel) == [(3, RangeKind.REDUCE), (3, RangeKind.LOOP)]
    assert lid0_guards(kernel) == 1


def test_a_softmax_like_kernel_with_two_reductions_spreads_its_epilogue() -> None:
    text = ROW_EPILOGUE.replace("%d = pg_uop.binary sub %w, %m : i32", """\
%e = pg_uop.binary sub %w, %m : i32
  %d = pg_uop.binary sub %e, %t : i32""").replace("%j = pg_uop.range", """\
%sum = pg_uop.acc 0 : i32
  %s = pg_uop.range 0 to 10 reduce
  %idx2 = pg_uop.binary add %base, %s : index
  %x = pg_uop.load %a[%idx2] : !pg.buffer<30xi32> -> i32
  %old2 = pg_uop.acc_load %sum : i32
  %new2 = pg_uop.binary add %old2, %x : i32
  pg_uop.acc_store %sum, %new2 : i32
  pg_uop.end %s
  %t = pg_uop.acc_load %sum : i32
  %j = pg_uop.range""")
    kernel = mapped(text, ROW_SPEC)
    assert loops(kernel) == [(3, RangeKind.REDUCE)] * 2 + [(3, RangeKind.LOOP)]
    assert count(kernel, pu.BarrierOp) == 2 * (1 + 2) + 1  # two trees and a broadcast
    assert lid0_guards(kernel) == 0


def test_a_broadcast_before_another_group_reduced_nest_waits_for_every_reader() -> None:
    # two row kernels in one kernel share the shared buffer: everyone must have read the
    # first nest's total before the second nest's partials overwrite it
    lines = ROW_EPILOGUE.strip().splitlines()
    body = "\n".join(lines[1:-1])
    second = re.sub(r"%(\w+)", lambda m: m.group(0) if m.group(1) == "a"
                    else f"%{m.group(1)}_2", body)
    text = (lines[0].replace(")", ", %out_2: !pg.buffer<30xi32>)", 1)
            + f"\n{body}\n{second}\n}}")
    kernel = mapped(text, ROW_SPEC, outputs=2)
    assert lid0_guards(kernel) == 0
    assert count(kernel, pu.BarrierOp) == 2 * (1 + 2) + 1


@pytest.mark.parametrize("change", [
    # every iteration writes one address: the last one must win
    ("pg_uop.store %d, %out[%at]", "pg_uop.store %d, %out[%i]"),
    # an address that is not `j * c + invariant`
    ("pg_uop.store %d, %out[%at]", "%jj = pg_uop.binary mul %j, %j : index\n"
     "  %at2 = pg_uop.binary mod %jj, %c10 : index\n  pg_uop.store %d, %out[%at2]"),
    # reads a buffer the loop writes: an iteration may see another one's store
    ("%a[%at]", "%out[%at]"),
    # two stores to one buffer
    ("pg_uop.end %j", "pg_uop.store %w, %out[%at] : i32, !pg.buffer<30xi32>\n"
     "  pg_uop.end %j"),
    # a register in the loop
    ("%j = pg_uop.range", "%cnt = pg_uop.acc 0 : i32\n  %j = pg_uop.range"),
])
def test_epilogues_that_cannot_be_spread_run_in_item_0(change: tuple[str, str]) -> None:
    text = ROW_EPILOGUE.replace(*change)
    if "%cnt" in text:
        text = text.replace("pg_uop.store %d,", "pg_uop.acc_store %cnt, %d : i32\n"
                            "  pg_uop.store %d,")
    assert text != ROW_EPILOGUE
    kernel = mapped(text, ROW_SPEC)
    assert (10, RangeKind.LOOP) in loops(kernel)
    assert lid0_guards(kernel) == 1


def test_default_gpu_pipeline_prefix_on_a_frontend_graph() -> None:
    # A softmax-like graph: row max and row sum of exp over 300 columns (group reductions
    # with the default threshold), then the elementwise division.
    text = """
    func.func @main(%x: tensor<3x300xf32>) -> tensor<3x300xf32> {
      %m = pg_tensor.reduce max %x {axes = array<i64: 1>} : tensor<3x300xf32> -> tensor<3x1xf32>
      %mb = pg_tensor.expand %m : tensor<3x1xf32> -> tensor<3x300xf32>
      %d = pg_tensor.binary sub %x, %mb : tensor<3x300xf32>
      %e = pg_tensor.unary exp %d : tensor<3x300xf32>
      %s = pg_tensor.reduce sum %e {axes = array<i64: 1>} : tensor<3x300xf32> -> tensor<3x1xf32>
      %sb = pg_tensor.expand %s : tensor<3x1xf32> -> tensor<3x300xf32>
      %y = pg_tensor.binary div %e, %sb : tensor<3x300xf32>
      func.return %y : tensor<3x300xf32>
    }"""
    x = np.random.default_rng(1).standard_normal((3, 300)).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    for target in ("ptx", "wgsl"):
        module = Parser(make_context(), text).parse_module()
        # the target's own pipeline up to the mapping (no CPU `loop-optimize` lanes)
        prefix = DEFAULT_PIPELINES[target].split(",uop-gpu-map")[0]
        run_pipeline(module, f"{prefix},uop-gpu-map{{target={target}}},uop-simplify",
                     verify_each=True)
        assert any(isinstance(op, pu.BarrierOp) for op in module.walk())
        kernel = next(op for op in module.ops if isinstance(op, pu.KernelOp))
        assert lid0_guards(kernel) == 0  # the division loop is spread over the group too
        (y,) = interpret(module, [x])
        np.testing.assert_allclose(y.reshape(3, 300), e / e.sum(axis=1, keepdims=True),
                                   rtol=1e-5)


# ── errors ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("spec", "message"), [
    ("uop-gpu-map{target=metal}", "uop-gpu-map: unknown compile target 'metal'"),
    ("uop-gpu-map{target=llvm}", "uop-gpu-map: target 'llvm' is not a GPU target"),
    ("uop-gpu-map{local-size=2048}", r"local-size 2048 is outside 1\.\.1024 for target 'ptx'"),
    ("uop-gpu-map{target=wgsl local-size=512}", r"outside 1\.\.256 for target 'wgsl'"),
])
def test_bad_options(spec: str, message: str) -> None:
    with pytest.raises(PassFailedException, match=message):
        run_pipeline(module_of(FILL.replace("N_", "4")), spec)


def test_a_value_that_cannot_leave_its_guard_fails_naming_kernel_and_op() -> None:
    # The top-level reduction beside the nests runs in work item 0 only (`if flat == 0`),
    # so the second nest cannot read its result.
    module = module_of("""
    pg_uop.kernel @k(%a: !pg.buffer<6xi32>, %out: !pg.buffer<6xi32>) {
      %i = pg_uop.range 0 to 6 global
      %v = pg_uop.load %a[%i] : !pg.buffer<6xi32> -> i32
      pg_uop.store %v, %out[%i] : i32, !pg.buffer<6xi32>
      pg_uop.end %i
      %acc = pg_uop.acc 0 : i32
      %r = pg_uop.range 0 to 6 reduce
      %w = pg_uop.load %a[%r] : !pg.buffer<6xi32> -> i32
      %old = pg_uop.acc_load %acc : i32
      %new = pg_uop.binary add %old, %w : i32
      pg_uop.acc_store %acc, %new : i32
      pg_uop.end %r
      %s = pg_uop.acc_load %acc : i32
      %j = pg_uop.range 0 to 3 global
      pg_uop.store %s, %out[%j] : i32, !pg.buffer<6xi32>
      pg_uop.end %j
    }""")
    with pytest.raises(PassFailedException, match=r"uop-gpu-map: @k: 'pg_uop.acc_load' \(%s\) "
                       "is defined under a guard and used after its endif"):
        run_pipeline(module, "uop-gpu-map{local-size=4}")


@pytest.mark.parametrize(("kind", "dtype", "want"), [
    (BinaryKind.ADD, f32, 0.0), (BinaryKind.MAX, f32, -np.inf), (BinaryKind.MUL, f32, 1.0),
    (BinaryKind.AND, i8, -1), (BinaryKind.AND, ui8, 255), (BinaryKind.MIN, i8, 127),
    (BinaryKind.OR, i1, False), (BinaryKind.MIN, i1, True), (BinaryKind.SUB, i32, None),
    (BinaryKind.DIV, f32, None),
])
def test_combine_identity(kind: BinaryKind, dtype: Attribute, want: object) -> None:
    assert combine_identity(kind, dtype) == want


def test_a_value_used_after_its_nest_is_hoisted_out_of_it_when_pure() -> None:
    # No guard here (the grid is exact), but the store after the nest must still see the
    # one value of `%k`, not a work item's: `%k` does not depend on `%i` and moves out.
    kernel = mapped("""
    pg_uop.kernel @k(%a: !pg.buffer<4xi32>, %out: !pg.buffer<5xi32>) {
      %c3 = pg_uop.const 3 : i32
      %c4 = pg_uop.const 4 : index
      %i = pg_uop.range 0 to 4 global
      %k = pg_uop.binary mul %c3, %c3 : i32
      %v = pg_uop.load %a[%i] : !pg.buffer<4xi32> -> i32
      %w = pg_uop.binary add %v, %k : i32
      pg_uop.store %w, %out[%i] : i32, !pg.buffer<5xi32>
      pg_uop.end %i
      pg_uop.store %k, %out[%c4] : i32, !pg.buffer<5xi32>
    }""")
    assert specials(kernel) == {L0: 4}
    ops = list(kernel.body.block.ops)
    k = next(op for op in ops if isinstance(op, pu.BinaryOp) and op.kind.data == BinaryKind.MUL)
    first_load = next(n for n, op in enumerate(ops) if isinstance(op, pu.LoadOp))
    assert ops.index(k) < first_load


def test_a_value_of_one_iteration_used_after_its_nest_fails() -> None:
    module = module_of("""
    pg_uop.kernel @k(%a: !pg.buffer<4xi32>, %out: !pg.buffer<5xi32>) {
      %c4 = pg_uop.const 4 : index
      %i = pg_uop.range 0 to 4 global
      %j = pg_uop.binary add %i, %c4 : index
      %v = pg_uop.cast %j : index to i32
      pg_uop.store %v, %out[%i] : i32, !pg.buffer<5xi32>
      pg_uop.end %i
      pg_uop.store %v, %out[%c4] : i32, !pg.buffer<5xi32>
    }""")
    with pytest.raises(PassFailedException, match=r"@k: 'pg_uop.cast' \(%v\) is defined in a "
                       r"global nest and used after it, .* \(it depends on 'pg_uop.range' %i\)"):
        run_pipeline(module, "uop-gpu-map{local-size=4}")


def test_a_pure_value_used_after_its_guard_is_hoisted_before_it() -> None:
    # The top-level loop runs under `if flat == 0`; the constant CSE left inside it is also
    # used by the nest after it, so it moves before that guard.
    kernel = mapped("""
    pg_uop.kernel @k(%a: !pg.buffer<2xi32>, %out: !pg.buffer<3xi32>) {
      %t = pg_uop.range 0 to 2 loop
      %c5 = pg_uop.const 5 : i32
      pg_uop.store %c5, %a[%t] : i32, !pg.buffer<2xi32>
      pg_uop.end %t
      %j = pg_uop.range 0 to 3 global
      pg_uop.store %c5, %out[%j] : i32, !pg.buffer<3xi32>
      pg_uop.end %j
    }""")
    ops = list(kernel.body.block.ops)
    five = next(n for n, op in enumerate(ops) if isinstance(op, pu.ConstOp)
                and op.result.type == i32)
    assert five < next(n for n, op in enumerate(ops) if isinstance(op, pu.IfOp))


def test_a_nest_that_carries_a_register_between_iterations_fails() -> None:
    module = module_of("""
    pg_uop.kernel @k(%a: !pg.buffer<4xi32>, %out: !pg.buffer<1xi32>) {
      %c0 = pg_uop.const 0 : index
      %acc = pg_uop.acc 0 : i32
      %i = pg_uop.range 0 to 4 global
      %v = pg_uop.load %a[%i] : !pg.buffer<4xi32> -> i32
      %old = pg_uop.acc_load %acc : i32
      %new = pg_uop.binary add %old, %v : i32
      pg_uop.acc_store %acc, %new : i32
      pg_uop.end %i
      %s = pg_uop.acc_load %acc : i32
      pg_uop.store %s, %out[%c0] : i32, !pg.buffer<1xi32>
    }""")
    with pytest.raises(PassFailedException, match="@k: the global nest of %i writes register "
                       "%acc, defined before it"):
        run_pipeline(module, "uop-gpu-map")
