"""Statistics and scans (prod, var, std, any, all, argmax, argmin, cumsum, cummax) against
torch on every device: values and, for the float ops, input gradients."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import picograd as pg
from picograd.errors import ShapeError

torch = pytest.importorskip("torch", reason="torch is the oracle of the stats tests")

rng = np.random.default_rng(11)


def _with_zeros(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a[0, 1] = 0  # one zero in row 0, two in row 1: prod's gradient differs in each case
    a[1, 0] = a[1, 2] = 0
    return a


def _distinct(shape: tuple[int, ...]) -> np.ndarray:
    """Values without ties (cummax/max share the gradient among ties, torch does not)."""
    return rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32) / 7 - 3


# name -> (picograd fn, torch fn (None: the same), input)
Fn = Callable[..., object]
GRAD_CASES: dict[str, tuple[Fn, Fn | None, np.ndarray]] = {
    "prod_dim": (lambda a: a.prod(1), None, _with_zeros(rng.standard_normal((3, 4)))),
    "prod_all": (lambda a: a.prod(), None, rng.uniform(0.5, 1.5, (2, 3))),
    "prod_keepdim": (lambda a: a.prod(0, keepdim=True), None, rng.standard_normal((3, 2))),
    "var_dim": (lambda a: a.var(1), None, rng.standard_normal((3, 5))),
    "var_all": (lambda a: a.var(), None, rng.standard_normal((3, 5))),
    "var_tuple_biased": (lambda a: a.var((0, 2), correction=0, keepdim=True), None,
                         rng.standard_normal((2, 3, 4))),
    "var_unbiased_false": (lambda a: a.var(1, False), None, rng.standard_normal((3, 5))),
    "std_dim": (lambda a: a.std(dim=0), None, rng.standard_normal((4, 3))),
    "std_axis_keepdim": (lambda a: a.std(axis=-1, keepdim=True),
                         lambda a: a.std(dim=-1, keepdim=True), rng.standard_normal((2, 5))),
    "cumsum_0": (lambda a: a.cumsum(0), None, rng.standard_normal((4, 3))),
    "cumsum_1": (lambda a: a.cumsum(dim=1), None, rng.standard_normal((2, 3, 5))),
    "cumsum_blocked": (lambda a: a.cumsum(-1), None, rng.standard_normal((2, 100))),
    "cumsum_nested": (lambda a: a.cumsum(0), None, rng.standard_normal((1100,))),
    "cummax_1": (lambda a: a.cummax(1)[0], None, _distinct((3, 6))),
    "cummax_blocked": (lambda a: a.cummax(0)[0], None, _distinct((70, 2))),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_values_and_gradients_match_torch(device: str, name: str) -> None:
    fn, torch_fn, array = GRAD_CASES[name]
    array = array.astype(np.float32)
    ours = pg.Tensor(array, device=device, requires_grad=True)
    theirs = torch.tensor(array, requires_grad=True)
    out, ref = fn(ours), (torch_fn or fn)(theirs)
    seed = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
    (out * pg.Tensor(seed, device=device)).sum().backward()
    (ref * torch.from_numpy(seed)).sum().backward()
    assert out.shape == tuple(ref.shape) and out.dtype == pg.float32
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-4)
    assert ours.grad is not None
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-4)


_TIES = np.array([[1, 3, 3, 0], [2, 2, 1, 2], [0, 0, 0, 0]], np.float32)
_NAN = np.array([[1, np.nan, 5, np.nan], [4, 1, 1, 4]], np.float32)
_INTS = rng.integers(-3, 4, (3, 5)).astype(np.int32)
_BOOLS = rng.random((3, 5)) > 0.5

# name -> (fn on both libraries, input); compared exactly, with torch's int64 read as int32
VALUE_CASES: dict[str, tuple[Fn, np.ndarray]] = {
    "argmax_ties": (lambda a: a.argmax(1), _TIES),
    "argmin_ties": (lambda a: a.argmin(0), _TIES),
    "argmax_all": (lambda a: a.argmax(), _TIES),
    "argmax_all_keepdim": (lambda a: a.argmax(keepdim=True), _TIES),
    "argmin_keepdim": (lambda a: a.argmin(dim=1, keepdim=True), _TIES),
    "argmax_nan": (lambda a: a.argmax(1), _NAN),
    "argmin_nan": (lambda a: a.argmin(1), _NAN),
    "argmax_int": (lambda a: a.argmax(-1), _INTS),
    "argmin_int": (lambda a: a.argmin(0), _INTS),
    "any_float": (lambda a: a.any(1), _TIES),
    "all_float": (lambda a: a.all(dim=0), _TIES),
    "any_all_dims": (lambda a: a.any(), _TIES),
    "all_keepdim": (lambda a: a.all(1, keepdim=True), _INTS),
    "any_bool": (lambda a: a.any(0), _BOOLS),
    "all_bool_tuple": (lambda a: a.all((0, 1)), _BOOLS),
    "prod_int": (lambda a: a.prod(1), _INTS),
    "prod_bool": (lambda a: a.prod(0), _BOOLS),
    "cumsum_int": (lambda a: a.cumsum(1), _INTS),
    "cumsum_bool": (lambda a: a.cumsum(0), _BOOLS),
    "cumsum_int_blocked": (lambda a: a.cumsum(0), rng.integers(-9, 9, (75,)).astype(np.int32)),
    "cummax_int": (lambda a: a.cummax(1)[0], _INTS),
    "cummax_int_blocked": (lambda a: a.cummax(0)[0],
                           rng.integers(-99, 99, (80, 2)).astype(np.int32)),
    "cummax_bool": (lambda a: a.cummax(1)[0], _BOOLS),
}


@pytest.mark.parametrize("name", list(VALUE_CASES))
def test_values_match_torch(device: str, name: str) -> None:
    fn, array = VALUE_CASES[name]
    out, ref = fn(pg.Tensor(array, device=device)), fn(torch.from_numpy(array))
    want = ref.numpy()
    want = want.astype(np.int32) if want.dtype == np.int64 else want
    got = out.numpy()
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    np.testing.assert_array_equal(got, want)


def test_argmax_of_bools_matches_numpy(device: str) -> None:
    x = pg.Tensor(_BOOLS, device=device)  # torch has no argmax/argmin of bools
    np.testing.assert_array_equal(x.argmax(0).numpy(), _BOOLS.argmax(0))
    np.testing.assert_array_equal(x.argmin(1).numpy(), _BOOLS.argmin(1))


def test_empty_dims(device: str) -> None:
    empty = pg.Tensor(np.zeros((2, 0), np.float32), device=device)
    assert empty.any(1).tolist() == [False, False]
    assert empty.all(1).tolist() == [True, True]
    assert empty.cumsum(1).shape == (2, 0)
    with pytest.raises(ShapeError, match="argmax"):
        empty.argmax(1)


def test_scalar_inputs(device: str) -> None:
    x = pg.Tensor(np.float32(2.5), device=device)
    assert x.argmax().item() == 0 and x.argmax(0).shape == ()
    assert x.cumsum(0).item() == 2.5 and x.cumsum(0).shape == ()
    assert x.prod().item() == 2.5


def test_argmax_is_not_differentiated(device: str) -> None:
    x = pg.Tensor(rng.standard_normal((3, 4)).astype(np.float32), device=device,
                  requires_grad=True)
    assert not x.argmax(1).requires_grad
    assert not x.any().requires_grad


def test_errors() -> None:
    x = pg.Tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ShapeError, match="cumsum: needs one int dim"):
        x.cumsum((0, 1))  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match="either axis= or dim="):
        x.argmax(0, dim=1)
    with pytest.raises(ShapeError, match="cummax: axis 2 is out of range"):
        x.cummax(2)
    with pytest.raises(ShapeError, match="var: axis 5"):
        x.var(5)
