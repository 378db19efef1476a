"""On x86 the LLVM target machine is told not to pick vector gathers and scatters itself
(`cpu_llvm.X86_TUNING`): a loop of indexed loads compiles to scalar loads, and a max-pool
whose schedule leaves its rows scalar (LLVM used to vectorise it across rows with
`vgatherqps` / `vscatterqps`, 3x slower on a Zen 4) gives torch's values."""

from __future__ import annotations

import platform

import numpy as np
import pytest

import picograd as pg
import picograd.nn.functional as F
from picograd.runtimes import cpu_llvm

_INDEXED_LOADS = """
define void @k(ptr noalias %a, ptr noalias %idx, ptr noalias %out, i64 %start, i64 %end) {
entry:
  %empty = icmp sge i64 %start, %end
  br i1 %empty, label %done, label %loop
loop:
  %k = phi i64 [%start, %entry], [%next, %loop]
  %ip = getelementptr inbounds i64, ptr %idx, i64 %k
  %i = load i64, ptr %ip
  %ap = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %ap
  %op = getelementptr inbounds float, ptr %out, i64 %k
  store float %v, ptr %op
  %next = add nsw nuw i64 %k, 1
  %more = icmp slt i64 %next, %end
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""

x86 = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 tuning")


@x86
def test_the_host_features_ask_for_no_gathers_or_scatters() -> None:
    _, features = cpu_llvm.host_cpu()
    assert {"+prefer-no-gather", "+prefer-no-scatter"} <= set(features.split(","))


@x86
def test_indexed_loads_compile_without_vector_gathers() -> None:
    binary = cpu_llvm.CpuLlvmRuntime().compile(_INDEXED_LOADS)
    assembly = binary.assembly()
    assert "\tk:" in assembly or "k:" in assembly
    assert "gather" not in assembly and "scatter" not in assembly


def test_a_max_pool_over_rows_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((8, 16, 14, 14)).astype(np.float32)
    got = F.max_pool2d(pg.Tensor(x, device="CPU:LLVM").relu(), 2).numpy()
    want = torch.nn.functional.max_pool2d(torch.tensor(x).relu(), 2).numpy()
    np.testing.assert_array_equal(got, want)
