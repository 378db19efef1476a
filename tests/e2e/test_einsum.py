"""`picograd.einsum` against torch.einsum: forward values and every operand's gradient on
every device, over matrix products, diagonals and traces, batch dims, '...', implicit
outputs, sums, broadcasting and three operands; and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg

from .helpers import assert_forward_and_grads_match

torch = pytest.importorskip("torch", reason="torch is the oracle of the einsum tests")

rng = np.random.default_rng(3)


def _random(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


# equation -> operand shapes
CASES = {
    "ij,jk->ik": [(2, 3), (3, 4)],
    "ij,jk": [(2, 3), (3, 4)],  # implicit output: i, k
    "ii->i": [(3, 3)],
    "ii": [(3, 3)],  # trace
    "iij->j": [(2, 2, 3)],
    "ba": [(2, 3)],  # implicit output sorts the labels: a transpose
    "bij,bjk->bik": [(2, 3, 4), (2, 4, 5)],
    "bhqd,bhkd->bhqk": [(2, 2, 3, 4), (2, 2, 5, 4)],
    "...ij->...ji": [(2, 3, 4)],
    "...i,...i->...": [(2, 1, 3), (4, 3)],  # ellipsis dims broadcast
    "a...b,b...->a...": [(2, 3, 4), (4, 3)],
    "i,j->ij": [(3,), (4,)],
    "i,i->i": [(3,), (1,)],  # a size-1 label broadcasts
    "ij->": [(2, 3)],
    "ij,jk,kl->il": [(2, 3), (3, 4), (4, 5)],
    "Ab,ba->A": [(2, 3), (3, 2)],
    "": [()],
}


@pytest.mark.parametrize("equation", list(CASES))
def test_einsum_matches_torch(device: str, equation: str) -> None:
    arrays = [_random(*shape) for shape in CASES[equation]]
    ours = [pg.Tensor(a, device=device, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, want = pg.einsum(equation, *ours), torch.einsum(equation, *theirs)
    assert_forward_and_grads_match(out, want, ours, theirs, _random(*out.shape), device)


def test_operands_may_come_as_a_list() -> None:
    a, b = _random(2, 3), _random(3, 2)
    out = pg.einsum("ij,jk", [pg.Tensor(a), pg.Tensor(b)])
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-5, atol=1e-5)


def test_integer_operands_stay_integers() -> None:
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = pg.einsum("ij,kj->ik", pg.Tensor(a), pg.Tensor(a))
    assert out.dtype == pg.int32
    np.testing.assert_array_equal(out.numpy(), a @ a.T)


A, B = pg.Tensor.zeros(2, 3), pg.Tensor.zeros(4, 5)


@pytest.mark.parametrize("make,words", [
    (lambda: pg.einsum("ij,jk", A, B), ("'j'", "3 and 4", "(2, 3)", "(4, 5)")),
    (lambda: pg.einsum("ij,jk", A), ("2 input term", "1 operand")),
    (lambda: pg.einsum("ijk", A), ("'ijk'", "3 dim", "(2, 3)")),
    (lambda: pg.einsum("i1", A), ("invalid subscript", "'1'")),
    (lambda: pg.einsum("ij->k", A), ("'k'", "no input")),
    (lambda: pg.einsum("ij->ii", A), ("repeats",)),
    (lambda: pg.einsum("ii", A), ("repeated", "2 and 3")),
    (lambda: pg.einsum("ij->i->j", A), ("'->'",)),
    (lambda: pg.einsum("......", A), ("'...'",)),
])
def test_errors_name_the_equation_and_the_shapes(make, words: tuple[str, ...]) -> None:
    with pytest.raises(pg.ShapeError) as info:
        make()
    message = str(info.value)
    assert "einsum" in message
    for word in words:
        assert word in message
    assert __file__ in message  # located at the user's line
