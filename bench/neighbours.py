"""Timing picograd alone and right after other libraries' work ("busy neighbours").

numpy's OpenBLAS, torch's OpenMP pool and onnxruntime's intra-op pool keep their worker
threads spinning for a while (up to about a second) after each call. A program that calls
picograd between calls of theirs meets those threads still running: on a 2-core machine a
256x256 picograd matmul measured 0.40 ms alone and 4.00 ms right after one numpy `a @ a`
(a scheduler tick lost). The benchmarks time each picograd row twice, in the same run:

    alone  after `settle()`, a pause that lets the other libraries' threads go to sleep
    busy   with `Neighbours()` called right before each timed call, no pause between: a
           256x256 fp32 matmul in numpy, in torch (`torch.mm`, its OpenMP pool) and in an
           onnxruntime session (a one-node ONNX MatMul built in memory, default intra-op
           threads); a library that is not installed is left out and `note` says so
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable

import numpy as np

# Seconds to wait before an "alone" timing: the other libraries' worker threads spin this
# long at most before they sleep (on a 2-core machine, a 2048^2 matmul measured 114-178
# GFLOP/s without the wait).
SETTLE_S = 0.3

SIZE = 256  # the neighbours' matmuls: small, as the calls between a user's picograd calls


def settle() -> None:
    time.sleep(SETTLE_S)


class Neighbours:
    """One small call of each peer library, run by calling the object."""

    def __init__(self, size: int = SIZE):
        self.size = size
        a = np.random.default_rng(0).standard_normal((size, size), dtype=np.float32)
        self._calls: list[Callable[[], object]] = [lambda: a @ a]
        self.ran = ["numpy"]
        self.missing: list[str] = []
        self._add_torch(a)
        self._add_onnxruntime(a)
        self()  # the first call of each starts its thread pool: not part of any timing

    def _add_torch(self, a: np.ndarray) -> None:
        try:
            import torch
        except ImportError:
            self.missing.append("torch")
            return
        t = torch.from_numpy(a)
        self._calls.append(lambda: torch.mm(t, t))
        self.ran.append("torch")

    def _add_onnxruntime(self, a: np.ndarray) -> None:
        try:
            import onnxruntime
            from onnx import TensorProto, helper
        except ImportError as e:
            self.missing.append(f"onnxruntime ({e.name} not installed)")
            return
        shape = list(a.shape)
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["a", "b"], ["c"])], "matmul",
            [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name in "ab"],
            [helper.make_tensor_value_info("c", TensorProto.FLOAT, shape)])
        # IR version 8 (opset 17's): onnx 1.23 writes 14 by default, which onnxruntime
        # 1.31 refuses ("max supported IR version: 13")
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                  ir_version=8)
        session = onnxruntime.InferenceSession(model.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        feed = {"a": a, "b": a}
        self._calls.append(lambda: session.run(None, feed))
        self.ran.append("onnxruntime")

    def __call__(self) -> None:
        for call in self._calls:
            call()

    @property
    def note(self) -> str:
        """What the busy column ran before each timed call, and what it left out."""
        said = (f"busy: each timed picograd call right after a {self.size}x{self.size} fp32 "
                f"matmul in {', '.join(self.ran)}, no pause between")
        if self.missing:
            said += f"; skipped: {', '.join(self.missing)}"
        return said


@functools.cache
def neighbours() -> Neighbours:
    """The process's one `Neighbours` (its set-up imports torch and builds a session)."""
    return Neighbours()


def busy_median(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds of `fn()` over `repeat` calls, each right after `neighbours()`, after
    one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        neighbours()()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def slowdown(alone: float | None, busy: float | None) -> float | None:
    """busy / alone of two times (> 1: slower beside the neighbours), None without both."""
    return busy / alone if alone and busy else None
