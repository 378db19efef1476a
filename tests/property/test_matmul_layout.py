"""`matmul-layout` on random matmuls as the frontend builds them (B stored (m, k) and read
transposed as `nn.Linear` does, stored (k, m), computed, batched, attention's keys): the
interpreter gives the same bits before and after; afterwards no matmul reads a B whose
columns are strided, or whose rows alias (`alias-bytes`), `min-reuse` or more times, nor a
B that `panel-cols` lays out in column panels, nor an A strided along the reduce that
`a-min-reuse` copies row-major; the output verifies and round-trips; and the compiled
program matches numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import assert_same, round_trip

import picograd as pg
from picograd.dialects import make_context, pg_tensor
from picograd.frontend.realize import build_module, linearize
from picograd.interpreter import run
from picograd.passes.tensor.matmul_layout import (
    MatmulLayoutPass,
    matmul_operands,
    wants_copy,
    wants_row_major_a,
)


@st.composite
def matmuls(draw: st.DrawFn) -> tuple[pg.Tensor, np.ndarray]:
    """A picograd matmul with a B of a random layout, and numpy's result."""
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    # from ALIAS_ROWS = 16 rows, aliasing rows are padded and a strided A is copied
    n, m = draw(st.one_of(st.integers(1, 9), st.integers(16, 18))), draw(st.integers(1, 12))
    # from MIN_PANEL_K = 64, panels; from LONG_PANEL_K = 1536, panels of any plain B
    k = draw(st.one_of(st.integers(1, 20), st.integers(64, 70), st.just(1536)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    a = rng.standard_normal((*batch, n, k)).astype(np.float32)
    # A read along the reduce with a stride (a weight gradient's dy.T), or in place
    a_tensor = (pg.Tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
                if draw(st.booleans()) else pg.Tensor(a))
    layout = draw(st.sampled_from(["transposed", "plain", "computed", "batched_keys",
                                   "sliced"]))
    if layout == "transposed":  # nn.Linear: W (m, k), x @ W.T
        w = rng.standard_normal((m, k)).astype(np.float32)
        b, want_b = pg.Tensor(w).T, w.T
    elif layout == "plain":
        w = rng.standard_normal((k, m)).astype(np.float32)
        b, want_b = pg.Tensor(w), w
    elif layout == "computed":  # a value computed in the graph, then transposed
        w = rng.standard_normal((m, k)).astype(np.float32)
        b, want_b = (pg.Tensor(w) * 2).T, (w * 2).T
    elif layout == "batched_keys":  # q @ keys.transpose(-1, -2)
        w = rng.standard_normal((*batch, m, k)).astype(np.float32)
        b, want_b = pg.Tensor(w).transpose(-1, -2), np.swapaxes(w, -1, -2)
    else:  # every other row of a larger table, transposed
        w = rng.standard_normal((2 * m, k)).astype(np.float32)
        b, want_b = pg.Tensor(w)[::2].T, w[::2].T
    return a_tensor @ b, a @ want_b


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matmuls(), st.sampled_from([1, 4, 32]), st.sampled_from([0, 8, 16]),
       st.sampled_from([0, 2, 3]), st.sampled_from([0, 1, 4]))
def test_matmul_layout_preserves_results_and_leaves_no_strided_b(case, min_reuse: int,
                                                                  alias_bytes: int,
                                                                  panel_cols: int,
                                                                  a_min_reuse: int):
    product, want = case
    nodes, entries, buffers, outputs = linearize([product._node])
    before = build_module(nodes, entries, outputs)
    after = build_module(nodes, entries, outputs)
    # rows a multiple of 8 or 16 bytes apart (2 or 4 f32) alias: padded by one element
    MatmulLayoutPass(min_reuse=min_reuse, alias_bytes=alias_bytes, line_bytes=4,
                     panel_cols=panel_cols, a_min_reuse=a_min_reuse).apply(make_context(),
                                                                            after)
    after.verify()
    round_trip(after)
    assert_same(run(before, buffers), run(after, buffers))
    for op in after.walk():
        if isinstance(op, pg_tensor.ReduceOp) and (ab := matmul_operands(op)) is not None:
            assert not wants_copy(ab[1], min_reuse, alias_bytes, panel_cols)
            assert not wants_row_major_a(ab[0], op, a_min_reuse)
    np.testing.assert_allclose(product.numpy(), want, rtol=1e-4, atol=1e-4)
