"""Shape and indexing ops (picograd/frontend/ops_shape.py) against torch on every device:
forward values, and input gradients for the float cases; int/bool forms; errors."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from ptx_sim import simulate

import picograd as pg
from picograd.compiler.pipelines import GPU_PTX, run_pipeline
from picograd.errors import ShapeError
from picograd.frontend.autograd import AutogradError
from picograd.frontend.ops_shape import cat, pad, stack
from picograd.frontend.realize import build_module, linearize

torch = pytest.importorskip("torch", reason="torch is the oracle of the shape-op tests")
F = torch.nn.functional

rng = np.random.default_rng(11)


def _libs(device: str) -> tuple[Any, Any]:
    """The same small API over picograd and torch, so one case body serves both."""
    ours = SimpleNamespace(
        idx=lambda a: pg.Tensor(np.asarray(a, np.int32), device=device),
        mask=lambda a: pg.Tensor(np.asarray(a, bool), device=device),
        cat=cat, stack=stack, pad=pad,
        split=lambda x, s, d: x.split(s, d), chunk=lambda x, c, d: x.chunk(c, d))
    theirs = SimpleNamespace(
        idx=lambda a: torch.tensor(np.asarray(a, np.int64)),
        mask=lambda a: torch.tensor(np.asarray(a, bool)),
        cat=torch.cat, stack=torch.stack, pad=F.pad,
        split=lambda x, s, d: x.split(s, d), chunk=lambda x, c, d: x.chunk(c, d))
    return ours, theirs


GATHER_IDX = [[0, 2, 1, 0], [2, 2, 0, 1]]
SCATTER_IDX = [[3, 0], [1, 2], [0, 3]]  # no repeats along dim 1, so torch is deterministic

# name -> (function of (lib, *tensors) -> tensor or tuple of tensors, input shapes)
CASES: dict[str, tuple[Callable, tuple[tuple[int, ...], ...]]] = {
    "cat": (lambda L, a, b: L.cat([a, b * 2, a], 1), ((2, 3), (2, 2))),
    "cat_dim0": (lambda L, a, b: L.cat([a, b], -3), ((1, 2, 3), (2, 2, 3))),
    "stack": (lambda L, a, b: L.stack([a, b], 1), ((2, 3), (2, 3))),
    # past 16 pieces and 2**20 masked loads a cat is joined in groups
    # (ops_shape._cat_value): uneven and empty pieces, a stack
    "cat_many": (lambda L, a: L.cat([a[:, k % 3:k % 3 + k % 4] + k for k in range(40)],
                                    1), ((600, 5),)),
    "stack_many": (lambda L, a, b: L.stack([a * k + b for k in range(20)], 1),
                   ((100, 30), (100, 30))),
    "stack_last": (lambda L, a, b: L.stack([a * b, b], -1), ((4,), (4,))),
    "split": (lambda L, a: L.split(a, 2, 1), ((2, 5),)),
    "split_sections": (lambda L, a: L.split(a, [1, 3, 1], 1), ((2, 5),)),
    "chunk": (lambda L, a: L.chunk(a, 3, 0), ((5, 2),)),
    "gather": (lambda L, a: a.gather(0, L.idx(GATHER_IDX)), ((3, 4),)),
    "gather_dim1_small": (lambda L, a: a.gather(1, L.idx([[2], [0]])), ((3, 4),)),
    "scatter_src": (lambda L, a, s: a.scatter(1, L.idx(SCATTER_IDX), s), ((3, 4), (3, 2))),
    "roll": (lambda L, a: a.roll((1, -2), (0, 1)), ((3, 4),)),
    "roll_flat": (lambda L, a: a.roll(5), ((3, 4),)),
    "repeat": (lambda L, a: a.repeat(2, 1, 3), ((2, 3),)),
    "tril": (lambda L, a: a.tril(), ((2, 3, 4),)),
    "triu_offset": (lambda L, a: a.triu(1) + a.tril(-2), ((4, 3),)),
    "masked_fill": (lambda L, a: a.masked_fill(L.mask([True, False, True, False]), -1.5),
                    ((3, 4),)),
    "pad_constant": (lambda L, a: L.pad(a, (1, 2, 0, 1), value=0.5), ((2, 3),)),
    "pad_crop": (lambda L, a: L.pad(a, (-1, 2)), ((2, 4),)),
    "pad_reflect": (lambda L, a: L.pad(a, (2, 1, 1, 2), mode="reflect"), ((1, 4, 5),)),
    "pad_replicate": (lambda L, a: L.pad(a, (2, 1, 1, 3), mode="replicate"), ((1, 3, 4),)),
    "pad_circular": (lambda L, a: L.pad(a, (2, 1), mode="circular"), ((1, 2, 4),)),
    "getitem_tensor": (lambda L, a: a[L.idx([2, 0, -1, 2])], ((3, 4),)),
    "getitem_tensor_2d": (lambda L, a: a[L.idx([[1, 0], [1, 1]])], ((2, 3),)),
    "getitem_tensor_mid": (lambda L, a: a[None, 1:, L.idx([3, 0])], ((3, 4),)),
    "getitem_list": (lambda L, a: a[..., [0, 0, 2]], ((2, 3),)),
    "flatten_unflatten": (lambda L, a: a.flatten(1).unflatten(1, (3, -1)) * 2, ((2, 3, 4),)),
    "movedim_swapaxes": (lambda L, a: a.movedim(0, -1).swapaxes(0, 1), ((2, 3, 4),)),
    "view_expand_as": (lambda L, a, b: a.view(6).view_as(b).expand_as(b) + b,
                       ((2, 3), (2, 3))),
    "squeeze_dims": (lambda L, a: a.squeeze((0, 2, 3)).unsqueeze(-1), ((1, 3, 1, 2),)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch_with_gradients(device: str, name: str) -> None:
    fn, shapes = CASES[name]
    ours_lib, theirs_lib = _libs(device)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ours = [pg.Tensor(a, device=device, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, ref = fn(ours_lib, *ours), fn(theirs_lib, *theirs)
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    assert len(outs) == len(refs)
    loss, ref_loss = None, None
    for o, r in zip(outs, refs, strict=True):
        assert o.shape == tuple(r.shape)
        np.testing.assert_allclose(o.numpy(), r.detach().numpy(), rtol=1e-6, atol=1e-6)
        seed = rng.standard_normal(tuple(r.shape)).astype(np.float32)
        term = (o * pg.Tensor(seed, device=device)).sum()
        ref_term = (r * torch.from_numpy(seed)).sum()
        loss = term if loss is None else loss + term
        ref_loss = ref_term if ref_loss is None else ref_loss + ref_term
    assert loss is not None and ref_loss is not None
    loss.backward()
    ref_loss.backward()
    for o, t in zip(ours, theirs, strict=True):
        assert o.grad is not None and o.grad.shape == o.shape
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_int_and_bool_forms(device: str) -> None:
    ours, theirs = _libs(device)
    a = rng.integers(-5, 5, (3, 4)).astype(np.int32)
    x, t = pg.Tensor(a, device=device), torch.tensor(a)
    pairs = [
        ((x + 5).one_hot(), F.one_hot((t + 5).long()).int()),
        ((x + 5).one_hot(12), F.one_hot((t + 5).long(), 12).int()),
        (x.gather(1, ours.idx([[1], [3], [0]])), t.gather(1, theirs.idx([[1], [3], [0]]))),
        (x.scatter(0, ours.idx([[2, 0]]), 9), t.scatter(0, theirs.idx([[2, 0]]), 9)),
        (cat([x, x > 0], 0), torch.cat([t, t > 0], 0)),
        ((x > 0).roll(1, 1), (t > 0).roll(1, 1)),
        ((x > 0).tril(), (t > 0).tril()),
        (x.masked_fill(x < 0, 7), t.masked_fill(t < 0, 7)),
        ((x > 0)[ours.idx([1, 1])], (t > 0)[theirs.idx([1, 1])]),
        (pad(x, (1, 1), mode="reflect"), F.pad(t[None].float(), (1, 1), mode="reflect")[0]),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(got.numpy(), want.numpy().astype(got.dtype.np))
    assert (x + 5).one_hot().dtype == pg.int32


def test_cat_and_stack_keep_every_bit(device: str) -> None:
    # each piece is padded and the pieces added: -0.0, NaN and infinities come through as
    # torch.cat gives them
    a = np.array([-0.0, np.nan, -np.inf, 0.0], np.float32)
    b = np.array([np.inf, -0.0, 1.5], np.float32)
    x, y = pg.Tensor(a, device=device), pg.Tensor(b, device=device)
    for got, want in ((cat([x, y]), torch.cat([torch.tensor(a), torch.tensor(b)])),
                      (stack([x, x]), torch.stack([torch.tensor(a)] * 2))):
        assert got.numpy().tobytes() == want.numpy().tobytes()


@pytest.mark.parametrize("pieces", [2, 5, 16, 17])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_cat_of_many_pieces_along_every_dim(device: str, pieces: int, dim: int) -> None:
    # on CPUs `loop-unswitch` gives each piece (up to 16) a range of its own; past that a
    # cat is made in two levels: each piece must still land where numpy puts it, an empty
    # one included, with arithmetic fused into the pieces
    sizes = [(k % 3) for k in range(pieces)]  # 0, 1, 2, 0, ...: empty pieces among them
    arrays = []
    for n in sizes:
        shape = [3, 4, 5]
        shape[dim] = n
        arrays.append(rng.standard_normal(shape).astype(np.float32))
    ts = [pg.Tensor(a, device=device) for a in arrays]
    got = cat([t * 2 + 1 for t in ts], dim).numpy()
    np.testing.assert_array_equal(got, np.concatenate([a * 2 + 1 for a in arrays], dim))
    same = [rng.standard_normal((3, 4, 5)).astype(np.float32) for _ in range(pieces)]
    got = stack([pg.Tensor(a, device=device) for a in same], dim).numpy()
    np.testing.assert_array_equal(got, np.stack(same, dim))


def test_cat_keeps_nan_payloads_through_the_ptx_pipeline() -> None:
    """A GPU's float add gives its canonical NaN (the simulator does too): cat must select
    its pieces, not add zero-padded ones (a sum turned torch's NaN 0x7fc00000 into
    0x7fffffff on an H200)."""
    bits = np.array([0x7FC00000, 0xFFC00001, 0x80000000, 0x7F800000], np.uint32)
    x = bits.view(np.float32)
    t = pg.Tensor(x)
    out = cat([t, t * 2])  # the doubled piece is arithmetic
    nodes, entries, _, positions = linearize([out._node])
    module = run_pipeline(build_module(nodes, entries, positions), GPU_PTX)
    (got,) = simulate(module, [x])
    doubled = [0x7FFFFFFF, 0x7FFFFFFF, 0x80000000, 0x7F800000]  # NaN * 2: canonical
    assert got.view(np.uint32).tolist() == bits.tolist() + doubled


def test_scatter_repeated_index_writes_the_last_value(device: str) -> None:
    """As torch on the CPU: where an index repeats, the last src value along dim wins."""
    x = pg.Tensor(np.zeros((2, 3), np.float32), device=device)
    src = pg.Tensor(np.array([[1, 2, 4], [8, 16, 32]], np.float32), device=device)
    index = pg.Tensor(np.array([[1, 1, 0], [2, 2, 2]], np.int32), device=device)
    np.testing.assert_array_equal(x.scatter(1, index, src).numpy(), [[4, 2, 0], [0, 0, 32]])


def test_setitem_matches_numpy_and_torch_gradients(device: str) -> None:
    a = rng.standard_normal((3, 5)).astype(np.float32)
    v = rng.standard_normal(3).astype(np.float32)
    x = pg.Tensor(a, device=device)
    x[1, ::2] = 7.0
    x[..., ::-2] = pg.Tensor(v, device=device).reshape(3, 1)
    x[None, 0] = 1
    want = a.copy()
    want[1, ::2] = 7.0
    want[..., ::-2] = v.reshape(3, 1)
    want[None, 0] = 1
    np.testing.assert_allclose(x.numpy(), want)
    # autograd: through a non-leaf, with a value that requires grad
    leaf, val = (pg.Tensor(a, device=device, requires_grad=True),
                 pg.Tensor(v, device=device, requires_grad=True))
    tleaf, tval = torch.tensor(a, requires_grad=True), torch.tensor(v, requires_grad=True)
    y, ty = leaf * 2, tleaf * 2
    y[:, 1:4:2] = val.reshape(3, 1) * 3
    ty[:, 1:4:2] = tval.reshape(3, 1) * 3
    y[2] = 0.0
    ty[2] = 0.0
    seed = rng.standard_normal((3, 5)).astype(np.float32)
    (y * y * pg.Tensor(seed, device=device)).sum().backward()
    (ty * ty * torch.from_numpy(seed)).sum().backward()
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-6)
    for o, t in ((leaf, tleaf), (val, tval)):
        assert o.grad is not None
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_setitem_on_a_leaf_that_requires_grad() -> None:
    w = pg.Tensor(np.ones((2, 2), np.float32), requires_grad=True)
    with pytest.raises(AutogradError, match="leaf Variable that requires grad"):
        w[0] = 2.0
    with pg.no_grad():
        w[0] = 2.0  # allowed without grad, as torch (an optimiser-style update)
    assert w.requires_grad and w._ctx is None
    np.testing.assert_array_equal(w.numpy(), [[2, 2], [1, 1]])


def test_errors() -> None:
    x = pg.Tensor(np.zeros((2, 3), np.float32))
    cases: list[Callable[[], object]] = [
        lambda: x[pg.Tensor(np.array([True, False, True]))],  # a mask must fit the dims
        lambda: x[[True, False, True]],
        lambda: cat([x, pg.Tensor(np.zeros((3, 3), np.float32))], 1),
        lambda: stack([x, x.T]),
        lambda: x.split([1, 1], 1),
        lambda: x.gather(0, pg.Tensor(np.zeros((3, 4), np.int32))),
        lambda: pad(x, (3, 0), mode="reflect"),
        lambda: pad(x, (1,)),
        lambda: x.repeat(2),
        lambda: x.unflatten(1, (2, 2)),
        lambda: x.tril()[0].tril(),
        lambda: x.movedim((0, 1), (1, 1)),
    ]
    for case in cases:
        with pytest.raises(ShapeError):
            case()
    with pytest.raises(pg.DTypeError):
        x.one_hot(3)
    with pytest.raises(pg.DTypeError, match="int tensor"):
        x.gather(0, x)
    with pytest.raises(pg.DTypeError, match="bool"):
        x.masked_fill(pg.Tensor(np.zeros((2, 3), np.int32)), 1.0)
