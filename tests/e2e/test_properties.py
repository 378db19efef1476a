"""Random op chains (elementwise with broadcasting, reductions, movement) vs numpy.

Each example compiles a fresh graph, so the example counts are small; the chains are long
enough to mix every kind of op into one graph.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import picograd as pg

from .helpers import assert_matches

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)


def _array(data: st.DataObject, shape: tuple[int, ...], integer: bool) -> np.ndarray:
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    if integer:
        return rng.integers(-5, 6, shape).astype(np.int32)
    return rng.uniform(-2, 2, shape).astype(np.float32)


def _broadcastable(data: st.DataObject, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts with `shape`: a suffix of it, some dims set to 1."""
    k = data.draw(st.integers(1, len(shape)), label="suffix rank") if shape else 0
    return tuple(d if data.draw(st.booleans(), label="keep dim") else 1 for d in shape[-k:])


Step = tuple[Callable[[pg.Tensor], pg.Tensor], Callable[[np.ndarray], np.ndarray]]


def _binary(data: st.DataObject, shape: tuple[int, ...], device: str, integer: bool) -> Step:
    other = _array(data, _broadcastable(data, shape), integer)
    t = pg.Tensor(other, device=device)
    shape_first = data.draw(st.booleans(), label="chain operand first")
    name = data.draw(st.sampled_from(["add", "sub", "mul", "maximum", "where"]), label="binary")
    ops = {
        "add": (lambda x, y: x + y, lambda x, y: x + y),
        "sub": (lambda x, y: x - y, lambda x, y: x - y),
        "mul": (lambda x, y: x * y, lambda x, y: x * y),
        "maximum": (pg.maximum, np.maximum),
        "where": (lambda x, y: pg.where(x > y, x, y * 2), lambda x, y: np.where(x > y, x, y * 2)),
    }
    f, g = ops[name]
    if shape_first:
        return (lambda x: f(x, t)), (lambda x: g(x, other))
    return (lambda x: f(t, x)), (lambda x: g(other, x))


def _unary(data: st.DataObject, integer: bool) -> Step:
    if integer:
        k = data.draw(st.integers(-3, 3), label="k")
        choices: list[Step] = [(lambda x: -x, lambda x: -x), (lambda x: x.relu(), lambda x:
                                                              np.maximum(x, 0)),
                               (lambda x: x * k, lambda x: x * np.int32(k)),
                               (lambda x: x + k, lambda x: x + np.int32(k))]
    else:
        c = data.draw(st.sampled_from([0.5, -0.75, 1.25]), label="c")
        choices = [(lambda x: -x, lambda x: -x), (lambda x: x.relu(), lambda x: np.maximum(x, 0)),
                   (lambda x: x.sin(), np.sin), (lambda x: (x * c).exp(), lambda x:
                                                  np.exp(x * np.float32(c))),
                   (lambda x: x * c + 1, lambda x: x * np.float32(c) + 1),
                   (lambda x: x / 2, lambda x: x / np.float32(2))]
    return data.draw(st.sampled_from(choices), label="unary")


def _reduce(data: st.DataObject, shape: tuple[int, ...], integer: bool) -> Step:
    axes = tuple(sorted(set(data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1,
                                                max_size=len(shape)), label="axes"))))
    keep = data.draw(st.booleans(), label="keepdim") or len(axes) == len(shape)
    name = data.draw(st.sampled_from(["sum", "max", "mean"] if not integer else ["sum", "max"]),
                     label="reduce")
    np_fn = {"sum": np.sum, "max": np.max, "mean": np.mean}[name]
    return ((lambda x: getattr(x, name)(axis=axes, keepdim=keep)),
            (lambda x: np_fn(x, axis=axes, keepdims=keep).astype(x.dtype)))


def _movement(data: st.DataObject, shape: tuple[int, ...]) -> Step:
    n = len(shape)
    name = data.draw(st.sampled_from(["reshape", "permute", "flip", "pad", "slice", "expand"]),
                     label="movement")
    if name == "reshape":
        new = (int(np.prod(shape)),) if data.draw(st.booleans()) else tuple(reversed(shape))
        return (lambda x: x.reshape(new)), (lambda x: x.reshape(new))
    if name == "permute":
        perm = tuple(data.draw(st.permutations(range(n)), label="perm"))
        return (lambda x: x.permute(perm)), (lambda x: x.transpose(perm))
    if name == "flip":
        axis = data.draw(st.integers(0, n - 1), label="axis")
        return (lambda x: x.flip(axis)), (lambda x: np.flip(x, axis))
    if name == "pad":
        pads = tuple((data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in shape)
        return (lambda x: x.pad(pads, value=1)), (lambda x: np.pad(x, pads, constant_values=1))
    if name == "slice":
        index = tuple(slice(data.draw(st.integers(0, d - 1)), None,
                            data.draw(st.sampled_from([1, 2, -1, -2]))) for d in shape)
        return (lambda x: x[index]), (lambda x: x[index])
    new = tuple(3 if d == 1 else d for d in shape)  # expand every size-1 dim to 3
    new = (2, *new) if data.draw(st.booleans(), label="new dim") else new
    return (lambda x: x.expand(new)), (lambda x: np.broadcast_to(x, new))


def _chain(data: st.DataObject, device: str, integer: bool) -> None:
    shape = data.draw(shapes, label="shape")
    x = _array(data, shape, integer)
    t = pg.Tensor(x, device=device)
    for _ in range(data.draw(st.integers(1, 6), label="length")):
        kind = data.draw(st.sampled_from(["unary", "binary", "reduce", "movement"]), label="kind")
        if kind == "unary":
            f, g = _unary(data, integer)
        elif kind == "binary":
            f, g = _binary(data, x.shape, device, integer)
        elif kind == "reduce" and x.ndim:
            f, g = _reduce(data, x.shape, integer)
        elif kind == "movement" and x.ndim:
            f, g = _movement(data, x.shape)
        else:
            continue
        t, x = f(t), np.ascontiguousarray(g(x))
    assert_matches(t, x, rtol=1e-4, atol=1e-4)


@SETTINGS
@given(data=st.data())
def test_float_chains(device: str, data: st.DataObject) -> None:
    _chain(data, device, integer=False)


@SETTINGS
@given(data=st.data())
def test_int_chains(device: str, data: st.DataObject) -> None:
    _chain(data, device, integer=True)


@settings(SETTINGS, max_examples=15)
@given(a=shapes, k=st.integers(1, 5), m=st.integers(1, 5), batch=st.booleans())
def test_matmul(device: str, a: tuple[int, ...], k: int, m: int, batch: bool) -> None:
    rng = np.random.default_rng(len(a) * 100 + k * 10 + m)
    x = rng.standard_normal((*a, k)).astype(np.float32)
    y = rng.standard_normal((*a[:-1], k, m) if batch else (k, m)).astype(np.float32)
    assert_matches(pg.Tensor(x, device=device) @ pg.Tensor(y, device=device), x @ y,
                   rtol=1e-4, atol=1e-4)
