"""`matmul-layout`'s stride arithmetic against numpy: the strides of a reshaped view, and
None exactly where numpy's reshape would copy."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from picograd.passes.tensor.matmul_layout import reshaped_strides, row_major


@st.composite
def views(draw: st.DrawFn) -> tuple[np.ndarray, tuple[int, ...]]:
    """A permuted, maybe sliced view of a small array, and a shape of as many elements."""
    shape = draw(st.lists(st.sampled_from([1, 2, 3, 4, 6]), min_size=1, max_size=4))
    view = np.empty(shape, np.float32).transpose(draw(st.permutations(range(len(shape)))))
    if draw(st.booleans()) and view.shape[0] > 1:
        view = view[::2]
    size, new = view.size, []
    for _ in range(draw(st.integers(0, 3))):
        d = draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
        new.append(d)
        size //= d
    new.append(size)
    return view, tuple(draw(st.permutations(new)))


@settings(max_examples=400, deadline=None)
@given(views())
def test_reshaped_strides_match_numpy(case: tuple[np.ndarray, tuple[int, ...]]) -> None:
    view, new = case
    strides = tuple(s // view.itemsize for s in view.strides)
    got = reshaped_strides(view.shape, strides, new)
    try:
        reshaped = view.view()
        reshaped.shape = new  # numpy refuses where the reshape would copy
    except AttributeError:
        assert got is None
        return
    assert got is not None
    want = tuple(s // view.itemsize for s in reshaped.strides)
    assert all(g == w for g, w, d in zip(got, want, new, strict=True) if d != 1)


def test_row_major() -> None:
    assert row_major((2, 3, 4)) == (12, 4, 1)
    assert row_major(()) == ()
