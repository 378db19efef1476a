"""Chunked execution of CPU kernels (picograd/runtimes/parallel.py) on random graphs (matmuls,
elementwise chains, row reductions and softmax of random shapes, on CPU:LLVM and CPU:C):
every kernel forced to run its outer range as 1-5 chunks on the thread pool gives the same
bits as the same kernels run as one call (`PG_THREADS=1`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from picograd import Tensor
from picograd.frontend import realize
from picograd.runtimes import parallel

GRAPHS = ("matmul", "elementwise", "row_max", "softmax", "sum")


def _run(graph: str, device: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ta, tb = Tensor(a, device=device), Tensor(b, device=device)
    if graph == "matmul":
        out = ta @ tb
    elif graph == "elementwise":
        out = (ta * 3 - ta.exp()).relu() + 1
    elif graph == "row_max":
        out = ta.max(1) * ta.sum(1)
    elif graph == "softmax":
        out = ta.softmax(1)
    else:
        out = ta.sum()
    return out.numpy()


@pytest.mark.parametrize("device", ["CPU:LLVM", "CPU:C"])
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=st.sampled_from(GRAPHS), m=st.integers(1, 33), k=st.integers(1, 17),
       n=st.integers(1, 9), parts=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_chunks_give_the_bits_of_one_call(device: str, graph: str, m: int, k: int, n: int,
                                          parts: int, seed: int,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    monkeypatch.setattr(parallel, "MIN_WORK", 0)
    results = []
    for threads in ("1", str(parts)):
        monkeypatch.setenv("PG_THREADS", threads)
        realize.clear_cache()  # reload the kernels (from the disk cache) under this policy
        results.append(_run(graph, device, a, b))
    realize.clear_cache()
    np.testing.assert_array_equal(results[0], results[1])
