"""Memory planning (picograd/runtimes/memory_plan.py): the planner's invariants on random
lifetimes, planned programs on random launch schedules against numpy, and a frontend chain
whose intermediates share memory on every device with unchanged values."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import picograd as pg
from picograd.frontend.realize import compiled
from picograd.runtimes.memory_plan import (
    ALIGNMENT,
    Lifetime,
    MemoryPlan,
    distinct,
    lifetimes,
    plan_groups,
    plan_offsets,
)

# ── the planner alone ────────────────────────────────────────────────────────


def test_lifetimes_span_first_to_last_touching_launch():
    lives = lifetimes([2, 3, 4], [(0, 2), (2, 3), (3, 1), (1, 1)])
    assert lives == {2: Lifetime(0, 1), 3: Lifetime(1, 2), 4: Lifetime(-1, -1)}


def test_touching_lifetimes_do_not_share_but_disjoint_ones_do():
    # a launch that reads one buffer and writes another needs both at once
    sizes = {0: 100, 1: 100, 2: 100}
    lives = {0: Lifetime(0, 1), 1: Lifetime(1, 2), 2: Lifetime(2, 3)}
    offsets, arena = plan_offsets(sizes, lives)
    assert offsets[0] == offsets[2] != offsets[1]
    assert arena == 2 * 128 and all(o % ALIGNMENT == 0 for o in offsets.values())


def test_groups_reuse_dead_buffers_of_the_same_width_only():
    f32, i32, u8 = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint8)
    slots = {0: (10, f32), 1: (10, f32), 2: (20, i32), 3: (30, u8)}
    lives = {0: Lifetime(0, 1), 1: Lifetime(1, 1), 2: Lifetime(2, 2), 3: Lifetime(3, 3)}
    member, groups = plan_groups(slots, lives)
    assert member[1] != member[0]  # both live at launch 1
    assert member[0] == member[2]  # f32 and i32 share (4-byte elements); the group grew
    assert groups[member[0]] == (20, i32)
    assert member[3] not in (member[0], member[1])  # 1-byte elements: a group of their own


def test_distinct_keeps_first_of_each_identity():
    a, b = object(), object()
    assert distinct([a, b, a, b, a]) == [a, b]


@st.composite
def _buffers(draw):
    n = draw(st.integers(0, 12))
    sizes, lives = {}, {}
    for s in range(n):
        sizes[s] = draw(st.integers(0, 5000))
        first = draw(st.integers(-1, 15))
        lives[s] = Lifetime(first, first + draw(st.integers(0, 6)) if first >= 0 else -1)
    return sizes, lives


@settings(max_examples=300, deadline=None)
@given(_buffers())
def test_planned_offsets_never_overlap_live_buffers(case):
    sizes, lives = case
    offsets, arena = plan_offsets(sizes, lives)
    assert arena <= sum(-(-n // ALIGNMENT) * ALIGNMENT for n in sizes.values())
    for s, offset in offsets.items():
        assert offset % ALIGNMENT == 0 and offset + sizes[s] <= arena
        for t in offsets:
            if s < t and lives[s].overlaps(lives[t]) and sizes[s] and sizes[t]:
                assert offset + sizes[s] <= offsets[t] or offsets[t] + sizes[t] <= offset


@settings(max_examples=300, deadline=None)
@given(_buffers(), st.lists(st.sampled_from([np.float32, np.int32, np.uint8, np.float64]),
                            min_size=12, max_size=12))
def test_grouped_buffers_are_never_shared_while_live(case, dtypes):
    sizes, lives = case
    slots = {s: (n, np.dtype(dtypes[s])) for s, n in sizes.items()}
    member, groups = plan_groups(slots, lives)
    for s in slots:
        size, dtype = groups[member[s]]
        assert size >= slots[s][0] and dtype.itemsize == slots[s][1].itemsize
        for t in slots:
            if s < t and member[s] == member[t]:
                assert not lives[s].overlaps(lives[t])


def test_results_and_inputs_are_never_planned():
    f32 = np.dtype(np.float32)
    # slots: 0 input; 1, 2, 3 allocs; 3 is a result
    plan = MemoryPlan(1, [(16, f32), (16, f32), (16, f32)], [(0, 1), (1, 2), (2, 3)], [3],
                      enabled=True)
    host = plan.host_buffers()
    assert plan.peak_bytes == (128, 128)  # slots 1 and 2 overlap at launch 1
    raw = host[0].base
    assert raw is not None and host[1].base is raw and host[2].base is None
    off = MemoryPlan(1, [(16, f32)] * 3, [(0, 1), (1, 2), (2, 3)], [3], enabled=False)
    assert off.peak_bytes == (0, 0) and all(b.base is None for b in off.host_buffers())


# ── planned programs on random launch schedules ──────────────────────────────

_KERNELS = """
pg_uop.kernel @mix(%a: !pg.buffer<{n}xf32>, %b: !pg.buffer<{n}xf32>, %out: !pg.buffer<{n}xf32>) {{
  %i = pg_uop.range 0 to {n} global
  %x = pg_uop.load %a[%i] : !pg.buffer<{n}xf32> -> f32
  %y = pg_uop.load %b[%i] : !pg.buffer<{n}xf32> -> f32
  %h = pg_uop.const 0.5 : f32
  %p = pg_uop.binary mul %x, %h : f32
  %s = pg_uop.binary add %p, %y : f32
  pg_uop.store %s, %out[%i] : f32, !pg.buffer<{n}xf32>
  pg_uop.end %i
}}
pg_uop.kernel @neg(%a: !pg.buffer<{n}xf32>, %out: !pg.buffer<{n}xf32>) {{
  %i = pg_uop.range 0 to {n} global
  %x = pg_uop.load %a[%i] : !pg.buffer<{n}xf32> -> f32
  %y = pg_uop.unary neg %x : f32
  pg_uop.store %y, %out[%i] : f32, !pg.buffer<{n}xf32>
  pg_uop.end %i
}}
"""


@st.composite
def _schedules(draw):
    """(n, inputs, launches, results): each launch writes a new value from earlier ones."""
    n = draw(st.integers(1, 40))
    num_inputs = draw(st.integers(1, 3))
    launches = []
    for k in range(draw(st.integers(1, 8))):
        values = num_inputs + k
        if draw(st.booleans()):
            launches.append(("mix", draw(st.integers(0, values - 1)),
                             draw(st.integers(0, values - 1))))
        else:
            launches.append(("neg", draw(st.integers(0, values - 1))))
    last = num_inputs + len(launches) - 1
    extra = draw(st.lists(st.integers(num_inputs, last), max_size=2, unique=True))
    return n, num_inputs, launches, sorted({last, *extra})


def _module(n: int, num_inputs: int, launches, results) -> str:
    buf = f"!pg.buffer<{n}xf32>"
    lines = [f"  %v{num_inputs + k} = pg_sched.alloc : {buf}" for k in range(len(launches))]
    for k, (name, *args) in enumerate(launches):
        names = ", ".join(f"%v{a}" for a in (*args, num_inputs + k))
        lines.append(f"  pg_sched.launch @{name}({names}) : {', '.join([buf] * (len(args) + 1))}")
    lines.append(f"  func.return {', '.join(f'%v{r}' for r in results)} : "
                 f"{', '.join([buf] * len(results))}")
    params = ", ".join(f"%v{i}: {buf}" for i in range(num_inputs))
    rtypes = ", ".join([buf] * len(results))
    return (_KERNELS.format(n=n) + f"func.func @main({params}) -> ({rtypes}) {{\n"
            + "\n".join(lines) + "\n}\n")


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=_schedules())
def test_planned_schedules_match_numpy(build_llvm, case):
    n, num_inputs, launches, results = case
    program = build_llvm(_module(n, num_inputs, launches, results))
    rng = np.random.default_rng(n)
    values = [rng.standard_normal(n).astype(np.float32) for _ in range(num_inputs)]
    for name, *args in launches:
        values.append(values[args[0]] * np.float32(0.5) + values[args[1]] if name == "mix"
                      else -values[args[0]])
    before, after = program.peak_bytes
    assert after <= -(-before // ALIGNMENT) * ALIGNMENT + ALIGNMENT * len(launches)
    for _ in range(2):  # a second run gets a fresh arena and the same values
        got = program.run(values[:num_inputs])
        for r, out in zip(results, got, strict=True):
            np.testing.assert_array_equal(out, values[r])
    outs = program.run(values[:num_inputs])
    assert len({id(o) for o in outs}) == len(outs)  # results never share memory


# ── a frontend chain that cannot fuse, on every device ───────────────────────


def _chain(device: str, a: np.ndarray, w: np.ndarray):
    x, wt = pg.Tensor(a, device=device), pg.Tensor(w, device=device)
    for _ in range(4):  # each matmul reads the previous one's result: no fusion
        x = (x @ wt).relu()
    return x


def test_unfusable_chain_shares_memory_and_keeps_values(device):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 16)) / 4).astype(np.float32)
    x = _chain(device, a, w)
    program, _ = compiled(x)
    before, after = program.peak_bytes
    assert 0 < after < before
    want = a
    for _ in range(4):
        want = np.maximum(want @ w, 0)
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("enabled", [True, False])
def test_planning_switch(enabled, monkeypatch):
    monkeypatch.setenv("PG_MEMORY_PLAN", "1" if enabled else "0")
    f32 = np.dtype(np.float32)
    plan = MemoryPlan(0, [(8, f32)] * 3, [(0,), (0, 1), (1, 2)], [2])
    assert plan.enabled is enabled
    assert plan.peak_bytes == ((64, 128) if enabled else (0, 0))


# ── random frontend graphs: planned and unplanned runs agree ─────────────────

_STEPS = ("matmul", "rownorm", "exp", "mix")


def _graph(x: pg.Tensor, w: pg.Tensor, steps: list[str]) -> pg.Tensor:
    keep = [x]
    for step in steps:
        if step == "matmul":
            x = (x @ w).relu()
        elif step == "rownorm":  # a reduction: its consumers start a new kernel
            x = x / (x.abs().sum(axis=1, keepdim=True) + 1.0)
        elif step == "exp":
            x = (x * 0.1).exp()
        else:  # reuse an older value: a longer lifetime
            x = x + keep[len(keep) // 2]
        keep.append(x)
    return x


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_STEPS), min_size=1, max_size=7))
def test_random_graphs_planned_equals_unplanned(steps):
    rng = np.random.default_rng(len(steps))
    a = rng.standard_normal((8, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 8)) / 3).astype(np.float32)
    out = _graph(pg.Tensor(a, device="CPU:LLVM"), pg.Tensor(w, device="CPU:LLVM"), steps)
    program, inputs = compiled(out)
    planned = program.run(inputs)
    unplanned = copy.copy(program)
    plan = program._memory  # pyright: ignore[reportPrivateUsage]
    unplanned._memory = MemoryPlan(  # pyright: ignore[reportPrivateUsage]
        len(inputs), plan.allocs, [s for _, s in program._launches],  # pyright: ignore
        program._results, enabled=False)  # pyright: ignore[reportPrivateUsage]
    for got, want in zip(planned, unplanned.run(inputs), strict=True):
        np.testing.assert_array_equal(got, want)
