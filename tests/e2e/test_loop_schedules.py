"""Schedules chosen in a pipeline string compile and run on the CPU targets: a range split
into each kind (`local` and `loop` become plain loops, `upcast` vector lanes, `unroll`
straight-line code), with a remainder, and a matmul given another schedule than the
heuristic's — the same results as the default pipeline."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
from picograd.compiler.driver import default_pipeline
from picograd.compiler.pipelines import PipelineError

CPU = ("CPU:LLVM", "CPU:C")


def _with_schedule(device: str, fragment: str) -> str:
    """The device's default pipeline with `fragment` in place of its `loop-optimize`."""
    passes = default_pipeline(device).split(",")
    at = next(i for i, p in enumerate(passes) if p.startswith("loop-optimize"))
    return ",".join([*passes[:at], fragment, *passes[at + 1:]])


@pytest.mark.parametrize("device", CPU)
@pytest.mark.parametrize("kind", ["global", "local", "upcast", "unroll", "loop"])
def test_every_kind_of_split_runs(device: str, kind: str) -> None:
    a = np.arange(20, dtype=np.float32)  # 20 = 6 blocks of 3 + a remainder of 2
    out = pg.Tensor(a, device=device) * 2 + 1
    fragment = f"loop-split{{kernel=k0 axis=0 factor=3 kind={kind}}}"  # strict: k0 must take it
    out.realize(pipeline=_with_schedule(device, fragment))
    np.testing.assert_array_equal(out.numpy(), a * 2 + 1)


@pytest.mark.parametrize("device", CPU)
def test_a_matmul_under_a_hand_written_schedule(device: str) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((12, 40), dtype=np.float32)
    b = rng.standard_normal((40, 20), dtype=np.float32)
    want = (pg.Tensor(a, device=device) @ pg.Tensor(b, device=device)).numpy()
    out = pg.Tensor(a, device=device) @ pg.Tensor(b, device=device)
    # 16 column lanes (a remainder of 4), 3 row lanes, column tiles outermost
    actions = "split(1, 16, upcast); split(0, 3, upcast); interchange(1); interchange(0)"
    out.realize(pipeline=_with_schedule(device, f'loop-schedule{{kernel=k0 actions="{actions}"}}'))
    np.testing.assert_array_equal(out.numpy(), want)  # the same sums in the same order
    np.testing.assert_allclose(want, a @ b, rtol=1e-5, atol=1e-5)


def test_an_action_the_kernel_cannot_take_is_a_pipeline_error() -> None:
    out = pg.Tensor(np.ones((4, 4), np.float32)) @ pg.Tensor(np.ones((4, 4), np.float32))
    fragment = 'loop-schedule{kernel=k0 actions="interchange(9)"}'
    with pytest.raises(PipelineError, match=r"@k0: interchange\(9\): no axis 9"):
        out.realize(pipeline=_with_schedule("CPU:LLVM", fragment))
