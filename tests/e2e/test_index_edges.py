"""Indexing edge cases against torch on every device.

- Ops that index by class (`cross_entropy`, `nll_loss`, `one_hot`, `embedding`): a realized
  class outside [0, C) raises `IndexRangeError` at the call, naming the value and C, as
  torch raises; `ignore_index` is exempt and counts for nothing.
- `scatter` writes, never adds: where an index repeats the last src value along `dim`
  wins (torch's CPU outcome), for tensor and scalar src, and the gradient is torch's; a
  realized index outside the dim raises `IndexRangeError`.
- `max_pool2d` with padding on int tensors pads with the dtype's lowest value (an int
  cannot hold -inf), as torch does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
import picograd.nn.functional as F
from picograd.dialects.capabilities import capabilities
from picograd.errors import IndexRangeError
from picograd.nn.norm import Embedding
from picograd.nn.pool import MaxPool2d
from picograd.runtimes import get_device

torch = pytest.importorskip("torch", reason="torch is the oracle of the index edge tests")
TF = torch.nn.functional

rng = np.random.default_rng(23)
LOGITS = rng.standard_normal((4, 3)).astype(np.float32)


def _holds(device: str, dtype: pg.DType) -> bool:
    return capabilities(get_device(device).renderer).supports(dtype.ir)


# ── class indices ────────────────────────────────────────────────────────────

# name: (op, ours, torch's, keywords); each loss takes (logits, targets, **keywords), the
# targets class indices into dim 1 of size 3
CLASS_LOSSES: dict[str, tuple[str, Callable[..., Any], Callable[..., Any], dict[str, Any]]] = {
    "cross_entropy": ("cross_entropy", F.cross_entropy, TF.cross_entropy, {}),
    "cross_entropy_smoothing": ("cross_entropy", F.cross_entropy, TF.cross_entropy,
                                {"label_smoothing": 0.1}),
    "cross_entropy_none": ("cross_entropy", F.cross_entropy, TF.cross_entropy,
                           {"reduction": "none"}),
    "nll_loss": ("nll_loss", lambda x, y, **kw: F.nll_loss(F.log_softmax(x, 1), y, **kw),
                 lambda x, y, **kw: TF.nll_loss(x.log_softmax(1), y, **kw), {}),
}


@pytest.mark.parametrize("name", list(CLASS_LOSSES))
@pytest.mark.parametrize("bad", [3, 7, -1, -100])
def test_class_loss_raises_on_a_target_out_of_range(device: str, name: str, bad: int) -> None:
    op, ours, theirs, kw = CLASS_LOSSES[name]
    target = np.array([0, 2, bad, 1], np.int32)
    ignore = 5  # not the default -100, so that one is out of range too
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        theirs(torch.tensor(LOGITS), torch.tensor(target, dtype=torch.long),
               ignore_index=ignore, **kw)
    with pytest.raises(IndexRangeError, match=rf"{op}: target {bad} is out of bounds for a "
                                              r"dim of size 3(.|\n)*test_index_edges\.py"):
        ours(pg.Tensor(LOGITS, device=device), pg.Tensor(target, device=device),
             ignore_index=ignore, **kw)


@pytest.mark.parametrize("name", list(CLASS_LOSSES))
@pytest.mark.parametrize("ignore", [-100, 7, 1])
def test_class_loss_ignore_index_is_exempt(device: str, name: str, ignore: int) -> None:
    _, ours, theirs, kw = CLASS_LOSSES[name]
    target = np.array([0, ignore, 2, ignore], np.int32)
    x = pg.Tensor(LOGITS, device=device, requires_grad=True)
    tx = torch.tensor(LOGITS, requires_grad=True)
    loss = ours(x, pg.Tensor(target, device=device), ignore_index=ignore, **kw)
    ref = theirs(tx, torch.tensor(target, dtype=torch.long), ignore_index=ignore, **kw)
    loss.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(loss.numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_a_lazy_target_is_not_read_and_gives_torchs_loss(device: str) -> None:
    # a target still lazy at the call (here: computed) is not read on the host; an
    # in-range one gives torch's loss
    target = np.array([0, 2, 1, 1], np.int32)
    lazy = pg.Tensor(target - 1, device=device) + 1
    got = F.cross_entropy(pg.Tensor(LOGITS, device=device), lazy)
    want = TF.cross_entropy(torch.tensor(LOGITS), torch.tensor(target, dtype=torch.long))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)


@pytest.mark.parametrize("bad", [3, -1])
def test_one_hot_raises_on_a_class_out_of_range(device: str, bad: int) -> None:
    classes = np.array([0, bad, 2], np.int32)
    with pytest.raises(RuntimeError, match="Class values must be"):
        TF.one_hot(torch.tensor(classes, dtype=torch.long), 3)
    for one_hot in (lambda t: F.one_hot(t, 3), lambda t: t.one_hot(3)):
        with pytest.raises(IndexRangeError, match=rf"one_hot: class {bad} is out of bounds "
                                                  r"for a dim of size 3"):
            one_hot(pg.Tensor(classes, device=device))
    ok = np.array([0, 2, 1], np.int32)
    np.testing.assert_array_equal(pg.Tensor(ok, device=device).one_hot(3).numpy(),
                                  TF.one_hot(torch.tensor(ok, dtype=torch.long), 3).numpy())


def test_embedding_raises_on_an_index_past_the_vocabulary(device: str) -> None:
    ids = np.array([[0, 4], [5, 1]], np.int32)
    with pytest.raises(IndexError, match="index out of range"):
        torch.nn.Embedding(5, 2)(torch.tensor(ids, dtype=torch.long))
    layer = Embedding(5, 2, device=device)
    for lookup in (layer, lambda t: F.embedding(t, layer.weight)):
        with pytest.raises(IndexRangeError, match="embedding: index 5 is out of bounds for "
                                                  "a dim of size 5"):
            lookup(pg.Tensor(ids, device=device))


# ── scatter ──────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_scatter_repeated_index_keeps_the_last_value(device: str, dim: int) -> None:
    """Many repeats (more picks than the dim has, from 3 values); src larger than the
    index and self larger than the index off `dim`. torch's gradient: zero for self where
    written, the output's at the index for every src element the index covers, overwritten
    ones included (torch refuses a src larger than the index in backward: its slice is
    compared, which gives the rest of src zero)."""
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    src = rng.standard_normal((8, 8, 8)).astype(np.float32)
    shape = [3, 4, 5]
    shape[dim] = 7
    index = rng.integers(0, 3, shape).astype(np.int32)
    xo = pg.Tensor(x, device=device, requires_grad=True)
    so = pg.Tensor(src, device=device, requires_grad=True)
    xt, st = torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)
    out = xo.scatter(dim, pg.Tensor(index, device=device), so)
    covered = st[tuple(slice(0, n) for n in shape)]
    ref = xt.scatter(dim, torch.tensor(index, dtype=torch.long), covered)
    seed = rng.standard_normal(x.shape).astype(np.float32)
    (out * pg.Tensor(seed, device=device)).sum().backward()
    (ref * torch.tensor(seed)).sum().backward()
    np.testing.assert_array_equal(out.numpy(), ref.detach().numpy())
    assert xo.grad is not None and so.grad is not None
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(so.grad.numpy(), st.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_scatter_writes_one_value_where_the_index_repeats(device: str) -> None:
    # the case as reported: [0, 0] wrote 1 + 2
    got = pg.zeros(4, device=device).scatter(0, pg.Tensor([0, 0], device=device),
                                             pg.Tensor([1.0, 2.0], device=device))
    want = torch.zeros(4).scatter(0, torch.tensor([0, 0]), torch.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_scatter_scalar_and_int_src(device: str) -> None:
    index = np.array([[1, 1, 0], [2, 2, 2]], np.int32)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    xo, xt = pg.Tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = xo.scatter(1, pg.Tensor(index, device=device), 2.5)
    ref = xt.scatter(1, torch.tensor(index, dtype=torch.long), 2.5)
    seed = rng.standard_normal(x.shape).astype(np.float32)
    (out * pg.Tensor(seed, device=device)).sum().backward()
    (ref * torch.tensor(seed)).sum().backward()
    np.testing.assert_array_equal(out.numpy(), ref.detach().numpy())
    assert xo.grad is not None
    np.testing.assert_array_equal(xo.grad.numpy(), xt.grad.numpy())
    ints = np.array([[1, 2, 4], [8, 16, 32]], np.int32)
    got = pg.Tensor(np.zeros((2, 3), np.int32), device=device).scatter(
        1, pg.Tensor(index, device=device), pg.Tensor(ints, device=device))
    want = torch.zeros(2, 3, dtype=torch.int32).scatter(
        1, torch.tensor(index, dtype=torch.long), torch.tensor(ints))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("bad", [4, -1])
def test_scatter_raises_on_an_index_out_of_range(device: str, bad: int) -> None:
    index = np.array([0, bad], np.int32)
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.zeros(4).scatter(0, torch.tensor(index, dtype=torch.long), 1.0)
    x = pg.zeros(4, device=device)
    for src in (1.0, pg.Tensor([1.0, 2.0], device=device)):
        with pytest.raises(IndexRangeError, match=rf"scatter: index {bad} is out of bounds "
                                                  r"for a dim of size 4"):
            x.scatter(0, pg.Tensor(index, device=device), src)


# ── pooling ──────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "float32"])
@pytest.mark.parametrize(("kernel", "stride", "padding"), [(2, None, 1), (3, 1, 1), (3, 2, 1)])
def test_max_pool2d_pads_ints_with_their_lowest_value(device: str, dtype: str, kernel: int,
                                                      stride: int | None, padding: int) -> None:
    pg_dtype = getattr(pg, dtype)
    if not _holds(device, pg_dtype):
        pytest.skip(f"{device} cannot hold {dtype}")
    info = np.iinfo(dtype) if pg_dtype.is_int else np.finfo(dtype)
    # values down to the dtype's lowest (a window of only that and padding keeps it)
    x = rng.integers(-20 if info.min < 0 else 0, 20, (2, 3, 5, 6)).astype(dtype)
    x[0, 0, 0, :] = info.min
    ours = F.max_pool2d(pg.Tensor(x, device=device), kernel, stride, padding)
    want = TF.max_pool2d(torch.from_numpy(x), kernel, stride, padding)
    assert ours.dtype == pg_dtype
    np.testing.assert_array_equal(ours.numpy(), want.numpy())
    layer = MaxPool2d(kernel, stride, padding)(pg.Tensor(x, device=device))
    np.testing.assert_array_equal(layer.numpy(), want.numpy())
